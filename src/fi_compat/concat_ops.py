"""Stable facade of ``flashinfer.concat_ops``: ``concat_mla_k``, the MLA key
``[k_nope | k_rope]`` written in place (``k_rope`` broadcast over the heads), one frozen
signature over every release that has it (0.6.0-0.7.4).

The kernel serves DeepSeek's MLA shape only (128 heads, nope 128, rope 64) on every
release; float16 / bfloat16 everywhere, fp8 (e4m3fn / e5m2) from 0.6.11, refused before
it naming that release; ``backend="cake"`` needs 0.7.0.
"""

from __future__ import annotations

from ._adapters.concat_ops import SPECS
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from torch import Tensor

__all__: list[str] = []  # every entry point joins it (lazy_facades)


def concat_mla_k(
    k: Tensor,
    k_nope: Tensor,
    k_rope: Tensor,
    *,
    backend: Literal["default", "cake"] = "default",
    **kwargs: Any,
) -> None:
    """Write ``k[:, :, :128] = k_nope`` and ``k[:, :, 128:] = k_rope`` (broadcast over the
    heads), in place.

    Parameters
    ----------
    k : Tensor
        ``[tokens, 128, 192]`` output, float16, bfloat16 or (0.6.11+) fp8.
    k_nope : Tensor
        ``[tokens, 128, 128]``, ``k``'s dtype.
    k_rope : Tensor
        ``[tokens, 1, 64]``, ``k``'s dtype.
    backend : {"default", "cake"}
        ``"cake"`` (0.7.0+): the generated kernel of sm_100a / sm_103a / sm_107a.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values())


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
