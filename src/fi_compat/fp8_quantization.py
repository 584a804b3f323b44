"""``fi_compat.quantization.mxfp8_quantize`` under FlashInfer's module name
(``flashinfer.fp8_quantization``, ``flashinfer.quantization.fp8_quantization``); the same
object, built on first access."""

from __future__ import annotations

from typing import Any

from . import quantization

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .quantization import (
        mxfp8_quantize,
    )

__all__ = ["mxfp8_quantize"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(quantization, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
