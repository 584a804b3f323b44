"""``fi_compat.quantization``'s FP4 functions under FlashInfer's module name
(``flashinfer.fp4_quantization``, ``flashinfer.quantization.fp4_quantization``); each is
the same object as in :mod:`fi_compat.quantization`, built on first access."""

from __future__ import annotations

from typing import Any

from . import quantization

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .quantization import (
        SfLayout,
        block_scale_interleave,
        e2m1_and_ufp8sf_scale_to_float,
        fp4_quantize,
        mxfp4_quantize,
        nvfp4_block_scale_interleave,
        nvfp4_quantize,
    )

__all__ = [
    "SfLayout",
    "block_scale_interleave",
    "e2m1_and_ufp8sf_scale_to_float",
    "fp4_quantize",
    "mxfp4_quantize",
    "nvfp4_block_scale_interleave",
    "nvfp4_quantize",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(quantization, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
