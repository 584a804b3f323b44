"""Stable facade of ``flashinfer.norm``: RMSNorm, Gemma RMSNorm, their fused residual
add, LayerNorm; one frozen signature each over every release 0.2.0.post1-0.7.4 that has
the function (``layernorm``: 0.5.0+).

Importing this module reads the installed ``flashinfer-python`` version from package
metadata (FlashInfer itself is imported on the first call); each function is built on
first access.  Every call is checked before the launch, from metadata only: fp16/bf16
input, ``weight`` 1-D of the hidden size *and of the input's dtype* (the kernels read
it as that type; 0.2.x-0.3.x never check), ``out`` / ``residual`` of the input's shape
and dtype, one device.

``enable_pdl`` means what 0.7.4 makes of it on every release: ``None`` or ``True``:
programmatic dependent launch where the GPU has it (SM90+), ``False``: off.  It is a
launch attribute (same values either way); before 0.2.3, which has no PDL, it is dropped.
"""

from __future__ import annotations

from ._adapters.norm import SPECS
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from torch import Tensor

__all__ = [
    "fused_add_rmsnorm",
    "gemma_fused_add_rmsnorm",
    "gemma_rmsnorm",
    "layernorm",
    "rmsnorm",
]


def _rmsnorm(
    input: Tensor,
    weight: Tensor,
    eps: float = 1e-6,
    out: Tensor | None = None,
    enable_pdl: bool | None = None,
    **kwargs: Any,
) -> Tensor:
    """``out = input / sqrt(mean(input**2, -1) + eps) * weight``, per row.

    ``input`` is ``[batch, hidden]`` or ``[batch, heads, head_size]`` (per-head norm, e.g.
    QK-norm) on every release: FlashInfer takes 3-D input from 0.4.0; before, fi_compat
    runs the same rows as ``[batch * heads, head_size]`` (a view when the heads are
    contiguous) and writes them into ``out``.  Returns ``out`` (allocated when None).
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def _fused_add_rmsnorm(
    input: Tensor,
    residual: Tensor,
    weight: Tensor,
    eps: float = 1e-6,
    enable_pdl: bool | None = None,
    **kwargs: Any,
) -> None:
    """In place: ``residual += input``, then ``input = rmsnorm(residual) * weight``.
    2-D ``[batch, hidden]``; returns None on every release."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def _gemma_rmsnorm(
    input: Tensor,
    weight: Tensor,
    eps: float = 1e-6,
    out: Tensor | None = None,
    enable_pdl: bool | None = None,
    **kwargs: Any,
) -> Tensor:
    """Gemma's RMSNorm, ``input / rms(input) * (1 + weight)``, 2-D ``[batch, hidden]``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def _gemma_fused_add_rmsnorm(
    input: Tensor,
    residual: Tensor,
    weight: Tensor,
    eps: float = 1e-6,
    enable_pdl: bool | None = None,
    **kwargs: Any,
) -> None:
    """In place: ``residual += input``, then ``input = gemma_rmsnorm(residual)``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def _layernorm(
    input: Tensor, gemma: Tensor, beta: Tensor, eps: float = 1e-6, **kwargs: Any
) -> Tensor:
    """LayerNorm of bf16 ``[batch, hidden]`` input with float32 ``gemma`` (scale) and
    ``beta`` (shift), flashinfer>=0.5.0; older releases raise
    ``UnsupportedFlashInferVersionError`` at the first call."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(
    globals(),
    {
        "rmsnorm": (_rmsnorm, SPECS["rmsnorm"]),
        "fused_add_rmsnorm": (_fused_add_rmsnorm, SPECS["fused_add_rmsnorm"]),
        "gemma_rmsnorm": (_gemma_rmsnorm, SPECS["gemma_rmsnorm"]),
        "gemma_fused_add_rmsnorm": (_gemma_fused_add_rmsnorm, SPECS["gemma_fused_add_rmsnorm"]),
        "layernorm": (_layernorm, SPECS["layernorm"]),
    },
)

if TYPE_CHECKING:  # what the generated functions look like, for type checkers
    rmsnorm = _rmsnorm
    fused_add_rmsnorm = _fused_add_rmsnorm
    gemma_rmsnorm = _gemma_rmsnorm
    gemma_fused_add_rmsnorm = _gemma_fused_add_rmsnorm
    layernorm = _layernorm
