"""Stable facade of ``flashinfer.activation``: fused gated activations ``act(x1) * x2``
over ``input = [x1, x2]`` (last dimension ``2 * d``), one frozen signature each over
every release 0.2.0.post1-0.7.4.

``out`` (optional) is ``[..., d]`` in the input's dtype; inputs are fp16/bf16 (checked
before the launch, from metadata only).  ``enable_pdl``: ``None`` lets the GPU decide
(SM90+), ``True`` / ``False`` force it, as 0.2.7+ read it; 0.2.3-0.2.6 get the
device's answer for ``None``, releases before 0.2.3 (no PDL) drop it.
"""

from __future__ import annotations

from ._adapters.activation import SPECS
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from torch import Tensor

__all__: list[str] = []  # every entry point joins it (lazy_facades)


def silu_and_mul(
    input: Tensor, out: Tensor | None = None, enable_pdl: bool | None = None, **kwargs: Any
) -> Tensor:
    """``silu(input[..., :d]) * input[..., d:]``; returns ``out`` (allocated when None)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def gelu_and_mul(
    input: Tensor, out: Tensor | None = None, enable_pdl: bool | None = None, **kwargs: Any
) -> Tensor:
    """``gelu(input[..., :d]) * input[..., d:]`` (exact erf GELU)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def gelu_tanh_and_mul(
    input: Tensor, out: Tensor | None = None, enable_pdl: bool | None = None, **kwargs: Any
) -> Tensor:
    """``gelu_tanh(input[..., :d]) * input[..., d:]`` (tanh-approximated GELU)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values())


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate):
# flashinfer.activation.silu_and_mul_scaled_nvfp4_experts_quantize (0.5.0+)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
