"""Stable facade of FlashInfer's GEMMs: ``bmm_fp8`` (0.2.0.post1+), ``mm_fp8`` (0.4.1+),
``mm_fp4`` (0.2.9+), ``mm_bf16`` (served from 0.6.3), ``mm_mxfp8`` (0.6.4+),
``fp8_blockscale_gemm_sm90`` (0.6.0+), ``gemm_fp8_nt_groupwise`` (0.2.6+),
``tinygemm_bf16`` (0.6.5+), ``mm_bf16_fp4`` and ``prepare_bf16_fp4_weights`` (0.6.14+),
one frozen signature each (0.7.4's).  ``flashinfer.gemm.<name>`` resolves here too.

``bmm_fp8``'s ``B`` must be column-major on every release (checked: cuBLASLt reads it
k-major without a check, so a row-major ``B`` silently gives wrong numbers).  Defaults
are 0.7.4's and are sent explicitly where a release's own default differs (``mm_fp4``:
``auto``, which 0.2.9-0.5.3 lack and run as their default ``cudnn``; ``mm_bf16``:
``cudnn``).  GPUs a release has no kernel for are refused before the launch (``mm_fp4``
and the quantisers: SM100+; ``mm_fp8`` on SM90 from 0.7.2.post1 with
``backend="cublas"``; ``mm_bf16`` on SM90 from 0.6.8).  FlashInfer's own backend query
is the facade's own ``is_backend_supported(backend, cc)`` (and
``is_compute_capability_supported(cc)``) on every GEMM with a ``backend``: FlashInfer's
answer where the installed release's function has the query, fi_compat's (the names the
release takes, the GPUs its device policy admits) before (``fi_compat._core.backends``).
"""

from __future__ import annotations

from ._adapters.gemm import SPECS
from ._core import OMIT, lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    import torch
    from torch import Tensor

__all__: list[str] = []  # every entry point joins it (lazy_facades)


def bmm_fp8(
    A: Tensor,
    B: Tensor,
    A_scale: Tensor,
    B_scale: Tensor,
    dtype: torch.dtype,
    out: Tensor | None = None,
    backend: Literal["cudnn", "cublas", "cutlass", "cute-dsl", "auto"] = "cublas",
    *,
    batch_invariant: bool = False,
    **kwargs: Any,
) -> Tensor:
    """``out [b, m, n] = (A [b, m, k] * A_scale) @ (B [b, k, n] * B_scale)`` in ``dtype``
    (bf16 / fp16); ``B`` column-major."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def mm_fp8(
    a: Tensor,
    b: Tensor,
    alpha: Tensor | None = None,
    out_dtype: Any = OMIT,
    out: Tensor | None = None,
    backend: Literal[
        "trtllm_low_latency", "cutedsl_low_latency", "cublas", "cudnn", "cutlass", "auto"
    ] = "trtllm_low_latency",
    **kwargs: Any,
) -> Tensor:
    """``out [m, n] = alpha * a [m, k] @ b`` (fp8 in, bf16 out); ``b`` prepared by
    ``prepare_low_latency_gemm_weights`` for the low-latency backends, ``(n, k)``
    otherwise.  ``out_dtype`` left out: the release's default, bfloat16."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def mm_fp4(
    a: Tensor,
    b: Tensor,
    a_descale: Tensor,
    b_descale: Tensor,
    alpha: Tensor | None = None,
    out_dtype: Any = OMIT,
    out: Tensor | None = None,
    block_size: int = 16,
    use_8x4_sf_layout: bool = False,
    backend: Literal[
        "cudnn", "trtllm", "cutlass", "cute-dsl", "cutedsl_low_latency", "b12x", "cake", "auto"
    ] = "auto",
    use_nvfp4: bool = True,
    enable_pdl: bool = True,
    *,
    batch_invariant: bool = False,
    **kwargs: Any,
) -> Tensor:
    """An FP4 GEMM with block scales (NVFP4, or MXFP4 with ``use_nvfp4=False``)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def mm_bf16(
    a: Tensor,
    b: Tensor,
    bias: Tensor | None = None,
    pdl: bool | None = False,
    out: Tensor | None = None,
    out_dtype: Any = OMIT,
    backend: Literal[
        "cudnn", "cutlass", "tgv", "cublaslt", "tinygemm", "cutile", "cute-dsl", "auto"
    ] = "cudnn",
    *,
    batch_invariant: bool = False,
    **kwargs: Any,
) -> Tensor:
    """``a [m, k] @ b [k, n]`` (``b`` column-major) in bf16, plus ``bias``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def mm_mxfp8(
    a: Tensor,
    b: Tensor,
    a_descale: Tensor,
    b_descale: Tensor,
    out: Tensor | None = None,
    out_dtype: Any = OMIT,
    *,
    use_8x4_sf_layout: bool = False,
    backend: Literal[
        "cutlass", "cute-dsl", "cutedsl_low_latency", "trtllm", "cudnn", "b12x", "auto"
    ] = "auto",
    batch_invariant: bool = False,
    **kwargs: Any,
) -> Tensor:
    """MXFP8 GEMM (block size 32): ``out [m, n] = a [m, k] @ b [k, n]`` with e8m0 block
    scales, bf16 (default) or fp16 out.

    ``a`` and ``b`` float8_e4m3fn (``b`` column-major: a ``[n, k]`` weight transposed);
    ``a_descale`` / ``b_descale`` the 1-D uint8 swizzled scales ``mxfp8_quantize(...,
    is_sf_swizzled_layout=True)`` returns (128x4; ``use_8x4_sf_layout=True``: ``a``'s
    in 8x4, trtllm only).  2-D linear scales are refused on every release: no backend
    reads them (0.6.4-0.6.15 accept them and compute wrong numbers, FlashInfer PR 3882;
    0.6.16+ raise).  ``out_dtype`` left out: bfloat16.

    {positional}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def fp8_blockscale_gemm_sm90(
    input: Tensor,
    weight: Tensor,
    input_scale: Tensor | None = None,
    weight_scale: Tensor | None = None,
    out: Tensor | None = None,
    out_dtype: torch.dtype | None = None,
    **kwargs: Any,
) -> Tensor:
    """Block-scaled FP8 GEMM on Hopper (SM90 only, DeepGEMM): ``out [m, n] = input [m,
    k] @ weight [n, k].T``, bf16 (default) or fp16 out.

    ``input`` bf16 (quantised inside) or float8_e4m3fn with float32 ``input_scale`` (1x128
    per token); ``weight`` bf16 or float8_e4m3fn with float32 ``weight_scale`` ``[n, k /
    128]`` or ``[ceil(n / 128), k / 128]``.  Every tensor contiguous: the kernel reads them
    through their data pointers without a stride check (every release)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def gemm_fp8_nt_groupwise(
    a: Tensor,
    b: Tensor,
    a_scale: Tensor,
    b_scale: Tensor,
    scale_major_mode: Literal["MN", "K"] | None = None,
    mma_sm: int = 1,
    scale_granularity_mnk: tuple[int, int, int] = (1, 128, 128),
    out: Tensor | None = None,
    out_dtype: torch.dtype | None = None,
    backend: Literal["cutlass", "trtllm", "cutile", "cute-dsl", "auto"] = "cutlass",
    **kwargs: Any,
) -> Tensor:
    """FP8 GEMM with groupwise scales: ``out [m, n] = a [m, k] @ b [n, k].T`` (a
    row-major, b ``[n, k]`` k-contiguous), float32 scales of granularity
    ``scale_granularity_mnk``, bf16 (default) or fp16 out.

    ``scale_major_mode`` (``"MN"`` or ``"K"``) is required by the cutlass backend on
    every release (0.2.9+ assert it, 0.6.0+ raise; 0.2.6-0.2.8 defaulted it to ``"MN"``):
    ``None`` with ``backend="cutlass"`` is refused before the call, and the value is
    always sent explicitly."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def tinygemm_bf16(
    input: Tensor,
    weight: Tensor,
    out: Tensor,
    bias: Tensor | None = None,
    use_pdl: bool = False,
    **kwargs: Any,
) -> None:
    """Latency-optimised small bf16 GEMM (SM90+): ``out [b, n] = input [b, k] @ weight
    [n, k].T + bias [n]`` in place (``F.linear``); every tensor bf16 and contiguous, ``n``
    a multiple of 16.  0.6.5-0.6.7.post3 also need ``k`` a multiple of 64 (refused
    there before the call, naming 0.6.8)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def mm_bf16_fp4(
    a: Tensor,
    b: Tensor,
    b_descale: Tensor,
    alpha: Tensor | None = None,
    *,
    backend: Literal["cudnn", "cute-dsl", "cute-dsl-native", "blackwell-native", "blackwell-tiled"],
    out_dtype: torch.dtype | None = None,
    out: Tensor | None = None,
    block_size: int = 16,
    enable_pdl: bool = True,
    **kwargs: Any,
) -> Tensor:
    """BF16 x FP4 GEMM (W4A16): ``out [m, n] = (a [m, k] @ dequant(b).T) * alpha``; ``a``
    bf16, ``b`` / ``b_descale`` / ``alpha`` as ``prepare_bf16_fp4_weights`` returned
    them for the same ``backend`` (required, keyword-only)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def prepare_bf16_fp4_weights(
    b: Tensor,
    b_descale: Tensor,
    alpha: Tensor | None = None,
    *,
    backend: Literal["cudnn", "cute-dsl", "cute-dsl-native", "blackwell-native", "blackwell-tiled"],
    block_size: int = 16,
    **kwargs: Any,
) -> tuple[Tensor, Tensor, Tensor | None]:
    """The weights of ``mm_bf16_fp4`` in ``backend``'s layout, from the canonical NVFP4
    ones (``b`` ``[n, k / 2]`` uint8, ``b_descale`` 128x4-swizzled e4m3 scales, ``alpha``
    float32 ``(1,)`` or None): ``(b, b_descale, alpha)`` to pass on unchanged."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values())


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
