"""Stable facade of FlashInfer's GEMMs: ``bmm_fp8`` (0.2.0.post1+), ``mm_fp8`` (0.4.1+),
``mm_fp4`` (0.2.9+), ``mm_bf16`` (served from 0.6.3), one frozen signature each
(0.7.4's).

``bmm_fp8``'s ``B`` must be column-major on every release (checked: cuBLASLt reads it
k-major without a check, so a row-major ``B`` silently gives wrong numbers).  Defaults
are 0.7.4's and are sent explicitly where a release's own default differs (``mm_fp4``:
``auto``, which 0.2.9-0.5.3 lack and run as their default ``cudnn``; ``mm_bf16``:
``cudnn``).  GPUs a release has no kernel for are refused before the launch (``mm_fp4``
and the quantisers: SM100+; ``mm_fp8`` on SM90 from 0.7.2.post1 with
``backend="cublas"``; ``mm_bf16`` on SM90 from 0.6.8).  FlashInfer's own backend query
is ``gemm.bmm_fp8.raw().is_backend_supported(backend, cc)`` where the release has it.
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


lazy_facades(globals(), SPECS.values())


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
