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

FlashInfer's own ``fn.is_backend_supported(backend, cc)`` (``@backend_requirement``,
0.5.3 ``bmm_fp8``, 0.5.0 ``mm_fp4``, 0.6.1 ``mm_bf16``, 0.7.0 ``mm_fp8``) is reachable
as ``<facade>.raw().is_backend_supported``.
"""

from __future__ import annotations

from .._core import OMIT, EntryPoint, Normalizer, Param
from .._core.adapter import short
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


def _prepare() -> None:
    global _FP8
    import torch

    ew.prepare()
    _FP8 = frozenset((torch.float8_e4m3fn, torch.float8_e5m2))


def _validate_bmm_fp8(A: Any, B: Any, A_scale: Any, B_scale: Any, out: Any) -> int:
    """``A [b, m, k]``, ``B [b, k, n]`` column-major, fp8; one-element float32 scales;
    ``out [b, m, n]``; one device."""
    import torch

    try:
        d = A.get_device()
        b, m, k = A.shape
        ok = (
            A.dtype in _FP8
            and B.dtype in _FP8
            and B.dim() == 3
            and B.shape[0] == b
            and B.shape[1] == k
            and B.stride(-2) == 1
            and A_scale.dtype is torch.float32
            and B_scale.dtype is torch.float32
            and A_scale.numel() == 1
            and B_scale.numel() == 1
            and B.get_device() == d
            and A_scale.get_device() == d
            and B_scale.get_device() == d
        )
        if out is not None:
            ok = ok and tuple(out.shape) == (b, m, B.shape[2]) and out.get_device() == d
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
    )


def _bf16_devices(pl: Placement, cc: tuple[int, int]) -> str | None:
    if cc[0] >= 10 or at_least(pl, "0.6.8"):
        return None
    return "no mm_bf16 backend lists SM90 before 0.6.8 (cuDNN's)"


SPECS: dict[str, EntryPoint] = {
    "bmm_fp8": _bmm_fp8(),
    "mm_fp8": _mm_fp8(),
    "mm_fp4": _mm_fp4(),
    "mm_bf16": _mm_bf16(),
}
ENTRIES = list(SPECS.values())
