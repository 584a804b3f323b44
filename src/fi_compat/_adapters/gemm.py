"""Adapter tables for FlashInfer's GEMMs (``flashinfer.bmm_fp8``, ``mm_fp8``, ``mm_fp4``,
``mm_bf16``; top-level names in every release, defined in ``flashinfer.gemm`` and, from
0.5.3, ``flashinfer.gemm.gemm_base``).

Read from the released sources (``_snapshots/flashinfer.*.json``, ``gemm_base.py``,
``csrc/bmm_fp8.cu``):

* ``bmm_fp8(A, B, A_scale, B_scale, dtype)``: ``A [b, m, k]`` and ``B [b, k, n]`` fp8,
  ``B`` column-major (a ``[b, n, k]`` tensor transposed): cuBLASLt reads ``B`` as TN
  with ``ld = k`` without a stride check, so a row-major ``B`` gives wrong numbers
  silently on every release -- fi_compat refuses it.  ``A_scale`` / ``B_scale`` are
  one-element float32 dequantisation scales; ``dtype`` bf16 or fp16.  ``backend``
  arrived in 0.2.9 (``cublas`` default, the only kernel before), ``cutlass`` 0.2.11,
  ``auto`` 0.2.12, ``cute-dsl`` 0.6.18.  cuBLAS/cuDNN run on SM89+.
* ``mm_fp8`` (0.4.1): ``trtllm_low_latency`` (SM100 family) until 0.7.2.post1, which adds
  ``cublas`` / ``cudnn`` / ``cutlass`` / ``auto`` on an unprepared ``(n, k)`` weight;
  older releases cannot serve SM90.
* ``mm_fp4`` (0.2.9): default ``cudnn`` until 0.5.3, ``auto`` from 0.6.0 (fi_compat sends
  ``cudnn`` for ``auto`` before, the release's own default); no backend lists SM90 in
  any release.  ``backend`` is always passed by keyword (0.5.0's backend check reads
  ``kwargs`` without defaults and fails for a left-out backend).
* ``mm_bf16`` (0.6.1): default ``tgv`` (SM100 family) in 0.6.1-0.6.4, ``cudnn`` from
  0.6.5; cuDNN is in 0.6.3+ and lists SM90 from 0.6.8.  fi_compat serves it from 0.6.3
  (the stable default, cudnn, is not in 0.6.1-0.6.2) and sends the backend explicitly.

* ``mm_mxfp8`` (0.6.4, ``gemm/gemm_base.py``): 0.6.7 inserted ``use_8x4_sf_layout``
  before ``backend`` (positional slot 6: ``backend`` in 0.6.4-0.6.6), so the stable
  positional prefix ends at ``out_dtype``.  Backends: cutlass 0.6.4, cute-dsl 0.6.6,
  trtllm 0.6.7, cudnn 0.6.13, b12x 0.6.18, cutedsl_low_latency 0.7.0; none lists SM90.
  Every backend reads 1-D swizzled block scales only: 0.6.4-0.6.15 document and accept
  2-D linear scales and compute wrong numbers from them (FlashInfer PR 3882: "the
  kernels only ever read 1D 128x4-swizzled scales"), 0.6.16 made cutlass and trtllm
  raise; fi_compat refuses 2-D scales on every release.
* ``fp8_blockscale_gemm_sm90`` (0.6.0, unchanged to 0.7.4): SM90 only (``_match_sm_version
  (["90", "90a"])``); ``csrc/fp8_blockscale_gemm_sm90_binding.cu`` reads every tensor
  through ``data_ptr()`` without a stride check, so non-contiguous tensors would be
  misread: refused.
* ``gemm_fp8_nt_groupwise`` (0.2.6 ``gemm.py``; ``backend`` 0.2.9 with cutlass / trtllm,
  cutile 0.6.14, cute-dsl and auto 0.7.4): ``scale_major_mode`` defaulted to ``"MN"`` in
  0.2.6-0.2.8 and to ``None`` from 0.2.9, which the cutlass path refuses (0.2.9
  ``assert scale_major_mode is not None``, 0.6.0 ``ValueError("scale_major_mode is
  required in CUTLASS")``): the stable default is 0.7.4's ``None``, sent explicitly, and
  ``None`` with cutlass is refused before the call on every release.
  ``csrc/gemm_groupwise_sm100.cu`` reads ``A``, ``B``, the float32 scales and ``C``
  through ``data_ptr()``: ``a``, ``b`` and ``out`` must be contiguous.  SM100 family
  (SM120 later); no release has an SM90 path.
* ``tinygemm_bf16`` (0.6.5, ``gemm/routergemm.py``): SM90+; 0.6.5-0.6.7.post3 also refuse
  ``input_features % 64 != 0`` (the TMA swizzle), lifted in 0.6.8.
* ``mm_bf16_fp4`` / ``prepare_bf16_fp4_weights`` (0.6.14, ``gemm/gemm_bf16_fp4.py``):
  ``backend`` required and keyword-only; cudnn and cute-dsl 0.6.14, cute-dsl-native,
  blackwell-native and blackwell-tiled 0.7.1; SM100 and newer.

FlashInfer's own ``fn.is_backend_supported(backend, cc)`` (``@backend_requirement``,
0.5.3 ``bmm_fp8``, 0.5.0 ``mm_fp4``, 0.6.1 ``mm_bf16``, 0.7.0 ``mm_fp8``, 0.6.4
``mm_mxfp8``, 0.6.0 ``gemm_fp8_nt_groupwise``, 0.6.14 ``mm_bf16_fp4``) is the facade's
own ``is_backend_supported`` where the release has it (``EntryPoint(backend_query=)``,
:mod:`fi_compat._core.backends`), fi_compat's answer before.
"""

from __future__ import annotations

from .._core import OMIT, EntryPoint, Normalizer, Param
from .._core.adapter import short
from .._core.contract import FP16, Tensor
from ..errors import InvalidArgumentError
from ..registry import at_least
from . import _elementwise as ew
from ._backend import BackendAuto, sm100_only

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement

_FP8: frozenset[Any] = frozenset()
_E4M3: Any = None  # the dtypes, bound at the first call (torch not imported here)
_E5M2: Any = None
_F32: Any = None


def _prepare() -> None:
    global _FP8, _E4M3, _E5M2, _F32
    import torch

    ew.prepare()
    _FP8 = frozenset((torch.float8_e4m3fn, torch.float8_e5m2))
    _E4M3, _E5M2, _F32 = torch.float8_e4m3fn, torch.float8_e5m2, torch.float32


def _validate_bmm_fp8(A: Any, B: Any, A_scale: Any, B_scale: Any, out: Any) -> int:
    """``A [b, m, k]``, ``B [b, k, n]`` column-major, fp8; one-element float32 scales;
    ``out [b, m, n]``; one device.  Each attribute is read once (``stride()[1]``: one
    read, half of ``stride(-2)``'s cost; B is 3-D here)."""
    try:
        d = A.get_device()
        b, m, k = A.shape
        bb, bk, n = B.shape
        ok = (
            ((dt := A.dtype) is _E4M3 or dt is _E5M2)
            and ((dt := B.dtype) is _E4M3 or dt is _E5M2)
            and bb == b
            and bk == k
            and B.stride()[1] == 1
            and A_scale.dtype is _F32
            and B_scale.dtype is _F32
            and A_scale.numel() == 1
            and B_scale.numel() == 1
            and B.get_device() == d
            and A_scale.get_device() == d
            and B_scale.get_device() == d
        )
        if out is not None:
            ok = ok and out.shape == (b, m, n) and out.get_device() == d
    except (AttributeError, TypeError, ValueError):
        ok = False
    if not ok:
        _diagnose_bmm(A, B, A_scale, B_scale, out)
    return d  # type: ignore[no-any-return]


def _diagnose_bmm(A: Any, B: Any, A_scale: Any, B_scale: Any, out: Any) -> None:
    import torch

    where = "fi_compat.gemm.bmm_fp8"
    for n, t in (("A", A), ("B", B), ("A_scale", A_scale), ("B_scale", B_scale)):
        ew.tensor(where, n, t)
    ew.tensor(where, "out", out, optional=True)
    if A.dim() != 3 or B.dim() != 3 or A.shape[0] != B.shape[0] or A.shape[2] != B.shape[1]:
        raise InvalidArgumentError(
            f"{where}: A must be [b, m, k] and B [b, k, n]; got A {short(A)}, B {short(B)}"
        )
    if A.dtype not in _FP8 or B.dtype not in _FP8:
        raise InvalidArgumentError(
            f"{where}: A and B must be float8_e4m3fn or float8_e5m2, got {A.dtype}, {B.dtype}"
        )
    if B.stride(-2) != 1:
        raise InvalidArgumentError(
            f"{where}: B must be column-major ([b, n, k] contiguous, then .transpose(-2, -1)); "
            f"got strides {tuple(B.stride())}. cuBLASLt reads B as k-major without a check, "
            f"so a row-major B gives wrong numbers on every release"
        )
    for n, t in (("A_scale", A_scale), ("B_scale", B_scale)):
        if t.dtype != torch.float32 or t.numel() != 1:
            raise InvalidArgumentError(
                f"{where}: {n} must be a one-element float32 tensor (a dequantisation scale), "
                f"got {short(t)}"
            )
    if out is not None and tuple(out.shape) != (A.shape[0], A.shape[1], B.shape[2]):
        raise InvalidArgumentError(
            f"{where}: out must be {(A.shape[0], A.shape[1], B.shape[2])}, got {short(out)}"
        )
    ew.check_device(where, "A", A, {"B": B, "A_scale": A_scale, "B_scale": B_scale, "out": out})
    raise InvalidArgumentError(f"{where}: invalid arguments")  # pragma: no cover


def _sm89(pl: Placement, cc: tuple[int, int]) -> str | None:
    if cc >= (8, 9):
        return None
    return "FP8 GEMMs need SM89 or newer"


def _validate_2d(name: str, first: str, second: str) -> Any:
    where = f"fi_compat.gemm.{name}"

    def validate(a: Any, b: Any) -> int:
        try:
            d = a.get_device()
            ok = a.dim() == 2 and b.dim() in (2, 3) and b.get_device() == d
        except (AttributeError, TypeError):
            ok = False
        if not ok:
            ew.tensor(where, first, a)
            ew.tensor(where, second, b)
            if a.dim() != 2 or b.dim() not in (2, 3):
                raise InvalidArgumentError(
                    f"{where}: {first} must be 2-D [m, k] and {second} 2-D (or 3-D prepared), "
                    f"got {short(a)}, {short(b)}"
                )
            ew.check_device(where, first, a, {second: b})
        return d  # type: ignore[no-any-return]

    return validate


def _bmm_fp8() -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.gemm",
        name="bmm_fp8",
        module="flashinfer",
        params=(
            Param("A"),
            Param("B"),
            Param("A_scale"),
            Param("B_scale"),
            Param(
                "backend",
                value_since={"cutlass": "0.2.11", "auto": "0.2.12", "cute-dsl": "0.6.18"},
                note="GEMM library",
                ref="0.2.9 cublas/cudnn; 0.2.11 cutlass; 0.2.12 auto; 0.6.18 cute-dsl",
            ),
            Param("batch_invariant", note="deterministic kernel (SM100/103/107)", ref="0.7.4"),
        ),
        validate=_validate_bmm_fp8,
        validate_args=("A", "B", "A_scale", "B_scale", "out"),
        prepare=_prepare,
        devices=_sm89,
        feature="gemm",
        matrix_note="cuBLAS / cuDNN: SM89 and newer; cutlass: SM100 family",
        backend_query="backend",
    )


def _mm_fp8() -> EntryPoint:
    late = "0.7.2.post1"
    return EntryPoint(
        facade="fi_compat.gemm",
        name="mm_fp8",
        module="flashinfer",
        params=(
            Param(
                "backend",
                value_since={
                    "cutedsl_low_latency": "0.7.0",
                    **{n: late for n in ("cublas", "cudnn", "cutlass", "auto")},
                },
                note="GEMM library",
                ref="0.4.1 trtllm_low_latency; 0.7.0 cutedsl; 0.7.2.post1 cublas/cudnn/cutlass",
            ),
        ),
        validate=_validate_2d("mm_fp8", "a", "b"),
        validate_args=("a", "b"),
        prepare=_prepare,
        devices=sm100_only("mm_fp8 has only SM100-family kernels before 0.7.2.post1", late),
        feature="gemm",
        matrix_note="SM100 family; SM89+ through cublas/cudnn from 0.7.2.post1",
        backend_query="backend",
    )


class Fp4Defaults(Normalizer):
    """``mm_fp4``'s ``alpha`` and ``out_dtype`` are required in 0.2.9-0.3.1.post1 (0.4.0
    gives them the defaults ``None`` = 1.0 and bfloat16): those values are passed."""

    args = ("a", "alpha", "out_dtype")
    out = ("alpha", "out_dtype")
    boundaries = ("0.4.0",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.4.0"):
            return None

        def resolved(a: Any, alpha: Any, out_dtype: Any) -> tuple[Any, ...]:
            import torch

            if alpha is None:
                alpha = torch.ones(1, dtype=torch.float32, device=a.device)
            return alpha, torch.bfloat16 if out_dtype is OMIT else out_dtype

        return resolved

    def describe(self, p: Placement) -> str | None:
        if at_least(p, "0.4.0"):
            return None
        return "`alpha=None` passed as 1.0 and `out_dtype` as bfloat16 (required there)"


def _mm_fp4() -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.gemm",
        name="mm_fp4",
        module="flashinfer",
        params=(
            Param(
                "backend",
                explicit=True,
                value_since={
                    "cute-dsl": "0.6.5",
                    "b12x": "0.6.9",
                    "cutedsl_low_latency": "0.7.0",
                    "cake": "0.7.2",
                },
                note="GEMM library",
                ref="0.6.0 default cudnn -> auto",
            ),
            Param("use_nvfp4", note="NVFP4 (else MXFP4)", ref="0.4.0"),
            Param("enable_pdl", hint=True, note="programmatic dependent launch", ref="0.6.5"),
            Param("batch_invariant", note="deterministic kernel (SM100/103/107)", ref="0.7.4"),
        ),
        validate=_validate_2d("mm_fp4", "a", "b"),
        validate_args=("a", "b"),
        prepare=_prepare,
        normalizers=(
            Fp4Defaults(),
            BackendAuto("cudnn", "0.6.0", "the release's default; auto is 0.6.0+"),
        ),
        devices=sm100_only("no mm_fp4 backend lists SM90 in any release"),
        feature="gemm",
        matrix_note="SM100 and newer",
        backend_query="backend",
    )


def _mm_bf16() -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.gemm",
        name="mm_bf16",
        module="flashinfer",
        params=(
            Param("pdl", note="programmatic dependent launch"),
            Param(
                "backend",
                explicit=True,
                value_since={
                    "cublaslt": "0.6.11",
                    "tinygemm": "0.6.11",
                    "cutile": "0.6.14",
                    "cute-dsl": "0.6.18",
                },
                note="GEMM library",
                ref="0.6.1-0.6.4 default tgv; 0.6.5 cudnn",
            ),
            Param("batch_invariant", note="deterministic kernel (SM100/103/107)", ref="0.7.4"),
        ),
        validate=_validate_2d("mm_bf16", "a", "b"),
        validate_args=("a", "b"),
        prepare=_prepare,
        devices=_bf16_devices,
        feature="gemm",
        floor="0.6.3",
        matrix_note="served from 0.6.3 (cudnn, the stable default); SM90 from 0.6.8",
        backend_query="backend",
    )


def _bf16_devices(pl: Placement, cc: tuple[int, int]) -> str | None:
    if cc[0] >= 10 or at_least(pl, "0.6.8"):
        return None
    return "no mm_bf16 backend lists SM90 before 0.6.8 (cuDNN's)"


# -- mm_mxfp8 -----------------------------------------------------------------------------

_SWIZZLED = (
    "the 1-D swizzled block scales mxfp8_quantize(..., is_sf_swizzled_layout=True) returns: "
    "no backend reads 2-D linear scales (0.6.4-0.6.15 accept them and compute wrong "
    "numbers, FlashInfer PR 3882; 0.6.16+ raise)"
)


def _check_mxfp8_scales(a: Any, b: Any, a_descale: Any, b_descale: Any, out: Any) -> None:
    """After the contract: 1-D scales (the swizzled layout), on every release."""
    for name, t in (("a_descale", a_descale), ("b_descale", b_descale)):
        if t.dim() != 1:
            raise InvalidArgumentError(
                f"fi_compat.gemm.mm_mxfp8: {name} must be 1-D, the swizzled block scales "
                f"mxfp8_quantize(..., is_sf_swizzled_layout=True) returns; got {short(t)}. "
                f"No backend reads 2-D linear scales: flashinfer-python 0.6.4-0.6.15 take "
                f"them and compute wrong numbers (FlashInfer PR 3882), 0.6.16+ raise. Fix: "
                f"quantise with is_sf_swizzled_layout=True"
            )


def _mm_mxfp8() -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.gemm",
        name="mm_mxfp8",
        module="flashinfer.gemm",
        params=(
            Param(
                "use_8x4_sf_layout",
                note="a's scales in the 8x4 layout (trtllm)",
                ref="0.6.7 inserted before backend",
            ),
            Param(
                "backend",
                value_since={
                    "cute-dsl": "0.6.6",
                    "trtllm": "0.6.7",
                    "cudnn": "0.6.13",
                    "b12x": "0.6.18",
                    "cutedsl_low_latency": "0.7.0",
                },
                note="GEMM library",
                ref="0.6.4 cutlass; 0.6.6 cute-dsl; 0.6.7 trtllm; 0.6.13 cudnn; 0.6.18 b12x",
            ),
            Param("batch_invariant", note="deterministic kernel (SM100/103/107)", ref="0.7.4"),
        ),
        contracts={
            "a": Tensor("m k", dtypes="float8_e4m3fn"),
            "b": Tensor("k n", dtypes="float8_e4m3fn"),
            "a_descale": Tensor(dtypes="uint8", why=_SWIZZLED),
            "b_descale": Tensor(dtypes="uint8", why=_SWIZZLED),
            "out": Tensor("m n", dtypes=FP16),
        },
        validate=_check_mxfp8_scales,
        prepare=_prepare,
        devices=sm100_only("no mm_mxfp8 backend lists SM90 in any release"),
        feature="gemm",
        matrix_note="SM100 and newer; 1-D swizzled scales only (2-D refused on every release)",
        backend_query="backend",
    )


# -- fp8_blockscale_gemm_sm90 -------------------------------------------------------------

_RAW = "the kernel reads it through its data pointer, without a stride check (every release)"
_BF16_OR_FP8 = ("bfloat16", "float8_e4m3fn")


def _sm90_exactly(pl: Placement, cc: tuple[int, int]) -> str | None:
    if cc == (9, 0):
        return None
    return (
        "fp8_blockscale_gemm_sm90 is a Hopper (SM90) kernel: every release refuses other "
        "GPUs (_match_sm_version(['90', '90a']))"
    )


def _fp8_blockscale_gemm_sm90() -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.gemm",
        name="fp8_blockscale_gemm_sm90",
        module="flashinfer.gemm",
        params=(),
        contracts={
            "input": Tensor("m k", dtypes=_BF16_OR_FP8, contiguous=True, why=_RAW),
            "weight": Tensor("n k", dtypes=_BF16_OR_FP8, contiguous=True, why=_RAW),
            "input_scale": Tensor(dtypes="float32", contiguous=True, why=_RAW),
            "weight_scale": Tensor("_ _", dtypes="float32", contiguous=True, why=_RAW),
            "out": Tensor("m n", dtypes=FP16, contiguous=True, why=_RAW),
        },
        devices=_sm90_exactly,
        feature="gemm",
        matrix_note="SM90 only (DeepGEMM); every tensor contiguous",
    )


# -- gemm_fp8_nt_groupwise ------------------------------------------------------------------

_FP8_NAMES = ("float8_e4m3fn", "float8_e5m2")


def _check_groupwise(
    a: Any, b: Any, a_scale: Any, b_scale: Any, out: Any, scale_major_mode: Any, backend: Any
) -> None:
    """After the contract: the cutlass path needs ``scale_major_mode`` on every release."""
    if scale_major_mode is None and backend == "cutlass":
        raise InvalidArgumentError(
            "fi_compat.gemm.gemm_fp8_nt_groupwise: backend='cutlass' needs scale_major_mode "
            "('MN': scales [k / 128, m] and [k / 128, n / 128]; 'K': [m, k / 128] and "
            "[n / 128, k / 128]); None is refused by every release's cutlass path "
            "(0.2.9 assert, 0.6.0+ ValueError; 0.2.6-0.2.8 defaulted to 'MN'). Fix: pass "
            "scale_major_mode='MN' (0.2.6's default) or 'K'"
        )


def _gemm_fp8_nt_groupwise() -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.gemm",
        name="gemm_fp8_nt_groupwise",
        module="flashinfer.gemm",
        params=(
            Param(
                "scale_major_mode",
                explicit=True,
                note="layout of the scales (MN- or K-major)",
                ref="0.2.6 default 'MN'; 0.2.9 default None (cutlass refuses None)",
            ),
            Param(
                "backend",
                value_since={"cutile": "0.6.14", "cute-dsl": "0.7.4", "auto": "0.7.4"},
                note="GEMM library",
                ref="0.2.9 cutlass/trtllm; 0.6.14 cutile; 0.7.4 cute-dsl, auto",
            ),
        ),
        contracts={
            "a": Tensor("m k", dtypes=_FP8_NAMES, contiguous=True, why=_RAW),
            "b": Tensor("n k", dtype="a", contiguous=True, why=_RAW),
            "a_scale": Tensor(dtypes="float32", why="read as float32 (static_cast<float*>)"),
            "b_scale": Tensor(dtypes="float32", why="read as float32 (static_cast<float*>)"),
            "out": Tensor("m n", dtypes=FP16, contiguous=True, why=_RAW),
        },
        validate=_check_groupwise,
        validate_args=("scale_major_mode", "backend"),
        devices=sm100_only("no gemm_fp8_nt_groupwise backend has an SM90 kernel in any release"),
        feature="gemm",
        matrix_note="SM100 family (SM120 later); scale_major_mode required with cutlass",
        backend_query="backend",
    )


# -- tinygemm_bf16 ------------------------------------------------------------------------


class TinyGemmK64(Normalizer):
    """0.6.5-0.6.7.post3 refuse ``input_features % 64 != 0`` (``_tinygemm_bf16_shape_checks``:
    "TMA swizzle constraint"); 0.6.8 lifted it.  Refused there before the call, naming
    0.6.8, with the newer releases' meaning in the message."""

    args = ("input",)
    out = ()
    boundaries = ("0.6.8",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.6.8"):
            return None
        release = adapter.release

        def check(x: Any) -> tuple[Any, ...]:
            if x.shape[1] % 64:
                raise InvalidArgumentError(
                    f"fi_compat.gemm.tinygemm_bf16: flashinfer-python {release} needs "
                    f"input_features (input.shape[1] = {x.shape[1]}) to be a multiple of 64; "
                    f"0.6.8+ take any. Fix: pip install 'flashinfer-python>=0.6.8', or pad "
                    f"the input features (and the weight's) to a multiple of 64"
                )
            return ()

        return check

    def describe(self, p: Placement) -> str | None:
        return None if at_least(p, "0.6.8") else "`input` features a multiple of 64 (0.6.8+: any)"


def _sm90_or_newer(pl: Placement, cc: tuple[int, int]) -> str | None:
    return None if cc >= (9, 0) else "tinygemm_bf16 needs SM90 or newer (TMA) on every release"


def _tinygemm_bf16() -> EntryPoint:
    why = "every release checks it (contiguous, row-major)"
    return EntryPoint(
        facade="fi_compat.gemm",
        name="tinygemm_bf16",
        module="flashinfer.gemm",
        params=(Param("use_pdl", note="programmatic dependent launch"),),
        contracts={
            "input": Tensor("batch k", dtypes="bfloat16", contiguous=True, why=why),
            "weight": Tensor("16*nt k", dtypes="bfloat16", contiguous=True, why=why),
            "out": Tensor("batch 16*nt", dtypes="bfloat16", contiguous=True, why=why),
            "bias": Tensor("16*nt", dtypes="bfloat16", contiguous=True, why=why),
        },
        normalizers=(TinyGemmK64(),),
        devices=_sm90_or_newer,
        feature="gemm",
        matrix_note="SM90 and newer; bf16, n a multiple of 16",
    )


# -- mm_bf16_fp4 / prepare_bf16_fp4_weights --------------------------------------------

_BF16_FP4_BACKENDS: dict[object, str] = {
    n: "0.7.1" for n in ("cute-dsl-native", "blackwell-native", "blackwell-tiled")
}


def _backend_row() -> Param:
    return Param(
        "backend",
        value_since=_BF16_FP4_BACKENDS,
        note="the backend (and weight layout)",
        ref="0.6.14 cudnn/cute-dsl; 0.7.1 cute-dsl-native, blackwell-native/-tiled",
    )


def _mm_bf16_fp4() -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.gemm",
        name="mm_bf16_fp4",
        module="flashinfer.gemm",
        params=(_backend_row(),),
        contracts={
            "a": Tensor("m k", dtypes="bfloat16", why="the only activation dtype (0.6.14-0.7.4)"),
            "b": Tensor(),  # the backend's prepared layout
            "b_descale": Tensor(),
            "alpha": Tensor(dtypes="float32"),
            "out": Tensor("m _", dtypes=FP16),
        },
        devices=sm100_only("no mm_bf16_fp4 backend lists SM90 in any release"),
        feature="gemm",
        matrix_note="SM100 and newer",
        backend_query="backend",
    )


def _prepare_bf16_fp4_weights() -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.gemm",
        name="prepare_bf16_fp4_weights",
        module="flashinfer.gemm",
        params=(_backend_row(),),
        contracts={
            "b": Tensor("n half_k", dtypes="uint8", why="two e2m1 values per byte"),
            "b_descale": Tensor(),
            "alpha": Tensor("1", dtypes="float32"),
        },
        feature="gemm",
        matrix_note="weight preparation (host or GPU tensors)",
    )


SPECS: dict[str, EntryPoint] = {
    "bmm_fp8": _bmm_fp8(),
    "mm_fp8": _mm_fp8(),
    "mm_fp4": _mm_fp4(),
    "mm_bf16": _mm_bf16(),
    "mm_mxfp8": _mm_mxfp8(),
    "fp8_blockscale_gemm_sm90": _fp8_blockscale_gemm_sm90(),
    "gemm_fp8_nt_groupwise": _gemm_fp8_nt_groupwise(),
    "tinygemm_bf16": _tinygemm_bf16(),
    "mm_bf16_fp4": _mm_bf16_fp4(),
    "prepare_bf16_fp4_weights": _prepare_bf16_fp4_weights(),
}
ENTRIES = list(SPECS.values())
