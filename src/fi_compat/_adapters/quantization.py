"""Adapter tables for FlashInfer's block-scale quantisation (``flashinfer.fp4_quantize``,
``nvfp4_quantize``, ``mxfp4_quantize``, ``mxfp8_quantize``,
``e2m1_and_ufp8sf_scale_to_float``; top-level names in every release, defined in
``flashinfer.fp4_quantization`` / ``fp8_quantization`` until 0.6.6 and in
``flashinfer.quantization.*`` from 0.6.7).

Read from the released sources (``_snapshots/flashinfer.*.json``, ``csrc/nv_internal``):

* GPUs: the quantisation kernel (``quantize_with_block_size``) has its whole body under
  ``#if __CUDA_ARCH__ >= 1000``.  On SM90, 0.2.6-0.2.14 have no kernel image, 0.2.14.post1
  -0.7.2.post1 launch an empty kernel and return uninitialised memory without an error,
  and 0.7.4 refuses FP4 (``_check_block_scale_quantization_support``) but still returns
  garbage for ``mxfp8_quantize``.  fi_compat refuses GPUs older than SM100 for these four
  on every release, before the launch.
* ``fp4_quantize``: ``global_scale`` (the encode scale, float32) is required by every
  release for NVFP4 (``sf_use_ue8m0=False``); with UE8M0 the kernel ignores it, and
  0.2.6-0.2.12 still require a tensor, so fi_compat passes ``1.0`` there.
  ``sf_vec_size=32`` needs 0.2.9.  ``is_global_scale_inversed`` (0.6.11, inserted at
  slot 6: a positional ``enable_pdl`` written for 0.6.10 lands in it) means the scale is
  the decode scale ``1/x``; before 0.6.11, and on the ``cute-dsl`` backend, which ignores
  it (0.6.11-0.7.4), fi_compat passes the reciprocal instead.
* ``backend``: ``"cuda"`` from 0.6.8 (``fp4_quantize``, ``nvfp4_quantize``) and 0.6.7
  (``mxfp4_quantize``, ``mxfp8_quantize``), ``"auto"`` (= ``"cuda"``) from 0.7.4.
* ``nvfp4_quantize(sfLayout=layout_linear)`` is ignored by 0.2.9-0.6.6 unless
  ``do_shuffle`` (they return 128x4 scales): refused there, naming 0.6.7.
* ``block_scale_interleave`` (the 128x4 swizzle of uint8 block scales, a CUDA kernel;
  the C++ op also has a host loop for CPU tensors): called
  ``nvfp4_block_scale_interleave`` in 0.2.9-0.2.12, renamed in 0.2.13 (the old name
  stays an alias); 0.2.9-0.2.12 build its CUDA module for SM100 only
  (``gen_fp4_quantization_sm100_module``), 0.2.13+ for the device's own arch, so a CUDA
  tensor on an older GPU is refused there.  CPU tensors reach the host loop on
  0.2.9-0.3.1.post1 (which still need a CUDA device for the JIT build); from 0.4.0 the
  Python function first calls ``get_compute_capability(unswizzled_sf.device)``, which
  raises ``ValueError("device must be a cuda device")`` for them, so fi_compat refuses
  them before the call (``UnsupportedDeviceError``).  ``out=`` is 0.7.2.post1's (copied
  into before).
* ``e2m1_and_ufp8sf_scale_to_float`` is a host loop (it moves its inputs to the CPU and
  returns a CPU float32 tensor); ``global_scale_tensor=None`` fails in every release
  (``None.cpu()``): fi_compat passes ``1.0``, the identity of the multiplication.
"""

from __future__ import annotations

from .._core import Emulation, EntryPoint, Normalizer, Param
from .._core.adapter import short
from .._core.contract import Tensor
from ..errors import InvalidArgumentError
from ..registry import at_least
from . import _elementwise as ew
from ._backend import BackendAuto, sm100_only
from ._elementwise import OutputCopy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement

_SM100 = sm100_only(
    "the block-scale quantisation kernel is built for SM100 and newer (older GPUs get "
    "uninitialised memory on 0.2.14.post1-0.7.2.post1, an error or no image elsewhere)"
)
_QUANT_IN: frozenset[Any] = frozenset()


def _prepare() -> None:
    global _QUANT_IN
    import torch

    ew.prepare()
    _QUANT_IN = frozenset((torch.float16, torch.bfloat16, torch.float8_e4m3fn))


def _where(name: str) -> str:
    return f"fi_compat.quantization.{name}"


def _validator(name: str, first: str, scale: str | None) -> Any:
    """``first`` a CUDA fp16/bf16 (fp8 e4m3 for FP4) tensor of at least 2 dims;
    ``scale`` (when given) a float32 tensor on its device."""
    where = _where(name)

    def validate(x: Any, *rest: Any) -> int:
        import torch

        s = rest[0] if rest else None
        try:
            d = x.get_device()
            ok = x.dim() >= 2 and x.dtype in _QUANT_IN
            if s is not None:
                ok = ok and s.dtype is torch.float32 and s.get_device() == d
        except (AttributeError, TypeError):
            ok = False
        if not ok:
            ew.tensor(where, first, x)
            if x.dim() < 2 or x.dtype not in _QUANT_IN:
                raise InvalidArgumentError(
                    f"{where}: {first} must be [..., K] float16, bfloat16 or float8_e4m3fn "
                    f"with at least 2 dims, got {short(x)}"
                )
            ew.tensor(where, str(scale), s)
            assert s is not None
            if s.dtype != torch.float32:
                raise InvalidArgumentError(
                    f"{where}: {scale} must be a float32 tensor (the encode scale), got {short(s)}"
                )
            ew.check_device(where, first, x, {str(scale): s})
        return d  # type: ignore[no-any-return]

    return validate


class GlobalScale(Normalizer):
    """``fp4_quantize(global_scale=None)``: required for NVFP4 on every release; with
    UE8M0 (ignored by the kernel) a 1.0 tensor for the releases that require one."""

    args = ("input", "global_scale", "sf_use_ue8m0")
    out = ("global_scale",)
    boundaries = ("0.2.13",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None:
            return None
        fill = not at_least(pl, "0.2.13")
        where = adapter.entry.dotted

        def resolved(x: Any, gs: Any, ue8m0: Any) -> tuple[Any, ...]:
            if gs is not None:
                return (gs,)
            if not ue8m0:
                raise InvalidArgumentError(
                    f"{where}: global_scale is required for NVFP4 (sf_use_ue8m0=False) on every "
                    f"release: a float32 tensor, typically (448 * 6) / amax"
                )
            if fill:
                import torch

                return (torch.ones(1, dtype=torch.float32, device=x.device),)
            return (None,)

        return resolved

    def describe(self, p: Placement) -> str | None:
        if at_least(p, "0.2.13"):
            return None
        return "UE8M0 without `global_scale`: 1.0 passed (the kernel ignores it)"


class InverseScale(Emulation):
    """``is_global_scale_inversed=True``: the reciprocal of ``global_scale`` as the encode
    scale where the release lacks the flag (before 0.6.11) or ignores it (``cute-dsl``)."""

    name = "inverse_scale"
    reads = ("backend", "global_scale", "is_global_scale_inversed")
    params = ("is_global_scale_inversed",)
    boundaries = ("0.6.11",)

    def may_apply(self, p: Placement) -> bool:
        return True

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        if kw["is_global_scale_inversed"] is not True:
            return False
        pl = adapter.placement
        assert pl is not None
        return not at_least(pl, "0.6.11") or kw["backend"] == "cute-dsl"

    def check(self, adapter: Adapter, kw: dict[str, Any]) -> None:
        if kw["global_scale"] is None:
            raise InvalidArgumentError(
                f"{adapter.entry.dotted}: is_global_scale_inversed=True needs global_scale"
            )

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        import torch

        self.check(adapter, kw)
        kw["global_scale"] = torch.reciprocal(kw["global_scale"])
        kw["is_global_scale_inversed"] = False
        return None

    def describe(self, p: Placement) -> str | None:
        if at_least(p, "0.6.11"):
            return "`is_global_scale_inversed` with `cute-dsl` (ignored there): the reciprocal"
        return "`is_global_scale_inversed`: the reciprocal of `global_scale` is passed"


class LinearLayout(Emulation):
    """``nvfp4_quantize(sfLayout=layout_linear, do_shuffle=False)``: 0.2.9-0.6.6 return
    128x4 scales regardless (``is_sf_swizzled_layout=True`` hard-coded); refused there."""

    name = "linear_layout"
    reads = ("do_shuffle", "sfLayout")
    params = ("sfLayout",)
    boundaries = ("0.6.7",)

    def may_apply(self, p: Placement) -> bool:
        return not at_least(p, "0.6.7")

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        pl = adapter.placement
        assert pl is not None
        layout = getattr(kw["sfLayout"], "name", None)
        return layout == "layout_linear" and not kw["do_shuffle"] and not at_least(pl, "0.6.7")

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        raise adapter.unsupported(adapter.entry.params["sfLayout"], kw["sfLayout"], "0.6.7", True)


def _pdl(since: str) -> Param:
    return Param("enable_pdl", hint=True, note="programmatic dependent launch", ref=since)


def _backend(cute: str, until_auto: str = "0.7.4") -> tuple[Param, BackendAuto]:
    p = Param(
        "backend",
        neutral=("cuda",),
        # the releases' own default when the parameter arrives: the CUDA kernels, the
        # only ones before
        neutral_ref=(
            "backend: str = 'cuda' in 0.6.8 quantization/fp4_quantization.py:660 "
            "(fp4_quantize), 934 (nvfp4_quantize), and 0.6.7 fp4_quantization.py:892 "
            "(mxfp4_quantize), fp8_quantization.py:167, 230 (mxfp8_quantize)"
        ),
        value_since={"cute-dsl": cute},
        note="kernel family",
        ref=f"{cute} cuda/cute-dsl; 0.7.4 auto (= cuda)",
    )
    return p, BackendAuto("cuda", until_auto, "0.7.4's auto resolves to cuda")


def _fp4() -> EntryPoint:
    name = "fp4_quantize"
    backend, auto = _backend("0.6.8")
    return EntryPoint(
        facade="fi_compat.quantization",
        name=name,
        module="flashinfer",
        params=(
            Param("global_scale", note="encode scale (float32)"),
            Param("sf_vec_size", value_since={32: "0.2.9"}, ref="0.2.9 sf_vec_size 32"),
            Param("is_sf_8x4_layout", note="8x4 scale layout", ref="0.2.9"),
            Param(
                "is_global_scale_inversed",
                emulation="inverse_scale",
                note="global_scale is the decode scale",
                ref="0.6.11 (slot 6)",
            ),
            _pdl("0.2.11.post2"),
            backend,
            Param("nvfp4_4over6", note="NVFP4 4-over-6 recipe", ref="0.7.1"),
            Param("batch_invariant", note="deterministic kernel (SM100/103/107)", ref="0.7.4"),
        ),
        validate=_validator(name, "input", "global_scale"),
        validate_args=("input", "global_scale"),
        prepare=_prepare,
        emulations=(InverseScale(),),
        normalizers=(GlobalScale(), auto),
        devices=_SM100,
        feature="quantization",
        matrix_note="SM100 and newer",
    )


def _nvfp4() -> EntryPoint:
    name = "nvfp4_quantize"
    backend, auto = _backend("0.6.8")
    return EntryPoint(
        facade="fi_compat.quantization",
        name=name,
        module="flashinfer",
        params=(
            Param("a_global_sf", note="encode scale (float32)"),
            Param("sfLayout", enum="SfLayout", emulation="linear_layout"),
            _pdl("0.2.11.post2"),
            backend,
            Param("per_token_activation", note="per-token scales", ref="0.6.11"),
            Param("expanded_idx_to_permuted_idx", ref="0.6.11"),
            Param("out_scale", ref="0.7.1"),
            Param("nvfp4_4over6", note="NVFP4 4-over-6 recipe", ref="0.7.1"),
            Param("batch_invariant", note="deterministic kernel (SM100/103/107)", ref="0.7.4"),
        ),
        validate=_validator(name, "a", "a_global_sf"),
        validate_args=("a", "a_global_sf"),
        prepare=_prepare,
        emulations=(LinearLayout(),),
        normalizers=(auto,),
        devices=_SM100,
        feature="quantization",
        matrix_note="SM100 and newer",
    )


def _mxfp4() -> EntryPoint:
    name = "mxfp4_quantize"
    backend, auto = _backend("0.6.7")
    return EntryPoint(
        facade="fi_compat.quantization",
        name=name,
        module="flashinfer",
        params=(
            backend,
            _pdl("0.6.7"),
            Param("sfLayout", enum="SfLayout", ref="0.6.16"),
            Param("batch_invariant", note="deterministic kernel (SM100/103/107)", ref="0.7.4"),
        ),
        validate=_validator(name, "a", None),
        validate_args=("a",),
        prepare=_prepare,
        normalizers=(auto,),
        devices=_SM100,
        feature="quantization",
        matrix_note="SM100 and newer",
    )


def _mxfp8() -> EntryPoint:
    name = "mxfp8_quantize"
    backend, auto = _backend("0.6.7")
    return EntryPoint(
        facade="fi_compat.quantization",
        name=name,
        module="flashinfer",
        params=(
            Param("alignment", note="K padding", ref="0.2.11"),
            _pdl("0.2.11.post2"),
            backend,
            Param("sf_swizzle_layout", enum="SfLayout", ref="0.6.7"),
            Param("batch_invariant", note="deterministic kernel (SM100/103/107)", ref="0.7.4"),
        ),
        validate=_validator(name, "input", None),
        validate_args=("input",),
        prepare=_prepare,
        normalizers=(auto,),
        devices=_SM100,
        feature="quantization",
        matrix_note="SM100 and newer (0.7.4 still returns garbage on SM90: refused)",
    )


class DecodeScale(Normalizer):
    """``global_scale_tensor=None``: a 1.0 tensor (every release calls ``.cpu()`` on it)."""

    args = ("global_scale_tensor",)
    out = ("global_scale_tensor",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        def resolved(gs: Any) -> tuple[Any, ...]:
            if gs is not None:
                return (gs,)
            import torch

            return (torch.ones(1, dtype=torch.float32),)

        return resolved

    def describe(self, p: Placement) -> str | None:
        return "`global_scale_tensor=None` passed as 1.0 (None fails in every release)"


def _e2m1() -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.quantization",
        name="e2m1_and_ufp8sf_scale_to_float",
        module="flashinfer",
        params=(
            Param("global_scale_tensor", note="decode scale, multiplied in"),
            Param("is_sf_8x4_layout", note="8x4 scale layout", ref="0.6.16"),
        ),
        prepare=_prepare,
        normalizers=(DecodeScale(),),
        feature="quantization",
        matrix_note="host code (inputs copied to the CPU); needs a CUDA device for its JIT",
    )


def _validate_interleave(unswizzled_sf: Any) -> int:
    """A uint8 tensor (every release asserts it); its CUDA index, -1 on the host."""
    if not (hasattr(unswizzled_sf, "dtype") and unswizzled_sf.dtype is _UINT8[0]):
        ew.tensor(_where("block_scale_interleave"), "unswizzled_sf", unswizzled_sf)
        raise InvalidArgumentError(
            f"{_where('block_scale_interleave')}: unswizzled_sf must be a uint8 tensor "
            f"(e4m3 / ue8m0 scales viewed as uint8: .view(torch.uint8)), got "
            f"{short(unswizzled_sf)}"
        )
    return unswizzled_sf.get_device()  # type: ignore[no-any-return]


_UINT8: list[Any] = [None]


def _prepare_interleave() -> None:
    import torch

    _UINT8[0] = torch.uint8


# 0.4.0 fp4_quantization.py block_scale_interleave: get_compute_capability(device) first
HOST_SWIZZLE = (
    "0.4.0",
    "it reads the input device's compute capability first: ValueError 'device must be a "
    "cuda device'",
)


def _interleave() -> EntryPoint:
    copy = OutputCopy("out")
    e = EntryPoint(
        facade="fi_compat.quantization",
        name="block_scale_interleave",
        module="flashinfer",
        attr_spelled=(("0.2.13", "nvfp4_block_scale_interleave"),),
        params=(
            Param("out", emulation="output_copy", note="preallocated output", ref="0.7.2.post1"),
        ),
        validate=_validate_interleave,
        validate_args=("unswizzled_sf",),
        prepare=_prepare_interleave,
        emulations=(copy,),
        devices=sm100_only(
            "0.2.9-0.2.12 build the swizzle's CUDA module for SM100 only (a host tensor works)",
            since="0.2.13",
        ),
        host_tensors=HOST_SWIZZLE,
        feature="quantization",
        matrix_note="a CUDA kernel (CPU tensors: host code before 0.4.0)",
    )
    copy.entry = e
    return e


# nvfp4_kv_quantize / nvfp4_kv_dequantize (0.6.7, exported from flashinfer and
# flashinfer.quantization; defined in quantization/fp4_quantization.py): one signature each
# on every release 0.6.7-0.7.4 (snapshots flashinfer.nvfp4_kv_*), bodies unchanged.  Linear
# (unswizzled) NVFP4 KV-cache layout: input [M, K] float16 / bfloat16, K a multiple of 16
# (ValueError otherwise), global_scale [1] float32; packed data [M, K/2] uint8, e4m3 block
# scales [M, K/16] uint8 (0.7.4 fp4_quantization.py:2599-2640, 2755-2790).
# GPUs: FlashInfer's own @supported_compute_capability, every release 0.6.7-0.7.4: quantize
# SM100+ (the cvt.rn.satfinite.e2m1x2.f32 PTX), dequantize SM80+.
def _kv(name: str, contracts: dict[str, Tensor], devices: Any) -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.quantization",
        name=name,
        module="flashinfer",
        params=(),
        contracts=contracts,
        devices=devices,
        feature="quantization.nvfp4_kv",
    )


_GLOBAL = Tensor(
    "one",
    dtypes="float32",
    sizes={"one": (1,)},
    sizes_why=("one global scale ([1] float32, every release 0.6.7-0.7.4). Fix: pass a [1] tensor"),
)

SPECS: dict[str, EntryPoint] = {
    "fp4_quantize": _fp4(),
    "nvfp4_quantize": _nvfp4(),
    "mxfp4_quantize": _mxfp4(),
    "mxfp8_quantize": _mxfp8(),
    "e2m1_and_ufp8sf_scale_to_float": _e2m1(),
    "block_scale_interleave": _interleave(),
    "nvfp4_kv_quantize": _kv(
        "nvfp4_kv_quantize",
        {"input": Tensor("m 16*blocks", dtypes=("float16", "bfloat16")), "global_scale": _GLOBAL},
        sm100_only(
            "nvfp4_kv_quantize needs SM100 or newer (the cvt.rn.satfinite.e2m1x2.f32 PTX; "
            "FlashInfer 0.6.7-0.7.4 @supported_compute_capability)"
        ),
    ),
    "nvfp4_kv_dequantize": _kv(
        "nvfp4_kv_dequantize",
        {
            "fp4_data": Tensor("m 8*blocks", dtypes="uint8"),
            "block_scales": Tensor("m blocks", dtypes="uint8"),
            "global_scale": _GLOBAL,
        },
        ew.any_cuda_device,  # SM80+ (0.6.7-0.7.4 @supported_compute_capability)
    ),
}
ENTRIES = list(SPECS.values())
