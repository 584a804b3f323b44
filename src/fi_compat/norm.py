"""Stable facade of ``flashinfer.norm``: RMSNorm, Gemma RMSNorm, their fused residual
add, LayerNorm, RMSNorm fused with FP4 quantisation, RMSNorm fused with FP8 quantisation
(with and without the residual add), the CuTe-DSL QK RMSNorm; one frozen signature each
over every release 0.2.0.post1-0.7.4 that has the function (``layernorm``: 0.5.0+;
``rmsnorm_fp4quant``: 0.6.0+, from ``flashinfer.cute_dsl.rmsnorm_fp4quant``, SM100+ and
the optional package nvidia-cutlass-dsl; ``rmsnorm_quant`` and
``fused_add_rmsnorm_quant``: 0.6.0+; ``qk_rmsnorm_cute``: 0.6.7+, from
``flashinfer.norm.kernels.rmsnorm``, nvidia-cutlass-dsl).

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
    from typing import Any, Literal

    from torch import Tensor

__all__: list[str] = []  # every entry point joins it (lazy_facades)


def rmsnorm(
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


def fused_add_rmsnorm(
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


def gemma_rmsnorm(
    input: Tensor,
    weight: Tensor,
    eps: float = 1e-6,
    out: Tensor | None = None,
    enable_pdl: bool | None = None,
    **kwargs: Any,
) -> Tensor:
    """Gemma's RMSNorm, ``input / rms(input) * (1 + weight)``, 2-D ``[batch, hidden]``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def gemma_fused_add_rmsnorm(
    input: Tensor,
    residual: Tensor,
    weight: Tensor,
    eps: float = 1e-6,
    enable_pdl: bool | None = None,
    **kwargs: Any,
) -> None:
    """In place: ``residual += input``, then ``input = gemma_rmsnorm(residual)``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def layernorm(
    input: Tensor, gemma: Tensor, beta: Tensor, eps: float = 1e-6, **kwargs: Any
) -> Tensor:
    """LayerNorm of bf16 ``[batch, hidden]`` input with float32 ``gemma`` (scale) and
    ``beta`` (shift), flashinfer>=0.5.0; older releases raise
    ``UnsupportedFlashInferVersionError`` at the first call."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def rmsnorm_fp4quant(
    input: Tensor,
    weight: Tensor,
    y_fp4: Tensor | None = None,
    block_scale: Tensor | None = None,
    global_scale: Tensor | None = None,
    eps: float = 1e-6,
    block_size: int = 16,
    scale_format: Literal["e4m3", "ue8m0"] | None = None,
    is_sf_swizzled_layout: bool = False,
    enable_pdl: bool | None = None,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """RMSNorm (``input / rms(input) * weight``) quantised to FP4 in one kernel; returns
    ``(y_fp4, block_scale)`` (allocated when None, else written in place).

    ``input`` is fp16/bf16 ``[batch, hidden]`` or ``[batch, seq, hidden]``, ``hidden`` a
    multiple of ``block_size`` and >= 64; ``weight`` ``[hidden]`` of the input's dtype.
    ``y_fp4``: packed e2m1 pairs ``[..., hidden / 2]``, ``torch.float4_e2m1fn_x2`` when
    allocated (uint8 accepted).  ``block_size=16`` (NVFP4, e4m3 scales, ``float8_e4m3fn``)
    or 32 (MXFP4, ue8m0 scales, uint8, unless ``scale_format="e4m3"``); ``block_scale`` is
    ``[..., hidden / block_size]``, or with ``is_sf_swizzled_layout`` the flat 128x4
    layout of ``ceil(rows / 128) * ceil(hidden / block_size / 4) * 512`` bytes, padding
    zeroed on every release (as 0.7.4).  ``global_scale``: float32 ``(1,)`` encode scale
    folded into the e4m3 block scales (``block_scale = global_scale * amax / 6``; ignored
    with ue8m0), 1.0 when None.  ``enable_pdl``: None/True launch with PDL (0.6.8+; a
    hint before).  Blackwell GPUs (SM100+) only; outputs must be contiguous.
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def rmsnorm_quant(
    out: Tensor,
    input: Tensor,
    weight: Tensor,
    scale: float | Tensor,
    eps: float = 1e-6,
    enable_pdl: bool | None = None,
    **kwargs: Any,
) -> None:
    """RMSNorm quantised to FP8 in one kernel, in place: ``out = (input / rms(input) *
    weight / scale).to(out.dtype)``.

    ``input`` fp16/bf16 ``[batch, hidden]``, ``weight`` ``[hidden]`` of its dtype, ``out``
    float8_e4m3fn or float8_e5m2 of the input's shape.  ``scale``: the quantisation
    scale (the kernel divides by it), a float on every release, or a float32 tensor of
    one element on the device (0.6.7+; before, refused naming 0.6.7: those releases take
    a host float, and reading a tensor there would sync the host).  ``enable_pdl`` as
    in :func:`rmsnorm`."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def fused_add_rmsnorm_quant(
    out: Tensor,
    input: Tensor,
    residual: Tensor,
    weight: Tensor,
    scale: float | Tensor,
    eps: float = 1e-6,
    enable_pdl: bool | None = None,
    **kwargs: Any,
) -> None:
    """In place: ``residual += input``, then ``out = rmsnorm_quant(residual)`` (FP8,
    divided by ``scale``); ``scale`` as in :func:`rmsnorm_quant`."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def qk_rmsnorm_cute(
    input: Tensor,
    weight: Tensor,
    output: Tensor,
    eps: float = 1e-6,
    weight_bias: float = 0.0,
    enable_pdl: bool = False,
    **kwargs: Any,
) -> None:
    """Per-head RMSNorm of a 3-D ``[batch, heads, head_dim]`` tensor (QK-norm), CuTe DSL,
    into ``output``: ``input / rms(input) * (weight_bias + weight)``.  Any strides with
    a unit last stride (``q`` sliced out of a fused QKV); ``weight`` ``[head_dim]`` of the
    input's dtype.  ``enable_pdl`` is passed as it is (no release clamps it to the
    device)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values())


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
