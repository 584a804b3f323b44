"""Adapter tables for ``flashinfer.norm`` (RMSNorm, Gemma RMSNorm, fused add, LayerNorm).

Read from the released sources (``_snapshots/norm.*.json`` has every signature):

* ``rmsnorm``, ``fused_add_rmsnorm``, ``gemma_rmsnorm``, ``gemma_fused_add_rmsnorm``:
  unchanged from 0.2.0.post1 but for ``enable_pdl`` (0.2.3, default ``None`` from 0.2.7,
  ``True`` clamped to the device from 0.6.8: see :mod:`._elementwise`).
* ``rmsnorm`` takes 3-D ``[batch, heads, head_size]`` input from 0.4.0 (``csrc/norm.cu``:
  ``CHECK_DIM(2, input)`` before, a per-head kernel after); before 0.4.0 fi_compat runs
  it as the 2-D ``[batch * heads, head_size]`` problem, the same rows.
* ``layernorm`` from 0.5.0 (bf16 input, float32 ``gemma`` / ``beta``).
* every kernel dispatches on fp16/bf16 input only, and reads ``weight`` as the input's
  type (``static_cast<c_type*>(weight.data_ptr())``; 0.2.x-0.3.x never check it), so a
  weight of another dtype is refused before the call on every release.

``rmsnorm_quant`` / ``fused_add_rmsnorm_quant`` (0.6.0, ``flashinfer/norm.py``, then
``norm/__init__.py``; ``csrc/norm.cu``): the signature never changed, but ``scale``
did: a host ``double`` in 0.6.0-0.6.6 (``static_cast<float>(scale)``), a float or a
one-element tensor from 0.6.7 (``_normalize_scale_tensor``: a float is made a device
tensor, with a FutureWarning); the kernel divides by it on every release
(``scale_inv = 1.0f / scale``).  A tensor ``scale`` before 0.6.7 is refused naming
0.6.7 (reading it would sync the host).  The kernel reads ``weight`` as the input's type
(``static_cast<c_type*>``), checks last-dimension contiguity only, dispatches on
fp16/bf16 input and an fp8 ``out``; ``enable_pdl`` as the other norms (clamped to the
device from 0.6.8).

``qk_rmsnorm_cute`` (0.6.7, ``flashinfer/norm/kernels/rmsnorm.py``, re-exported by
``flashinfer.norm`` when the CuTe DSL imports): unchanged to 0.7.4 (0.6.8 passes the
device's SM to the compile cache); 3-D input of any strides with a unit last stride,
``weight`` ``[head_dim]`` compiled as the input's dtype; needs nvidia-cutlass-dsl.

``rmsnorm_fp4quant`` (RMSNorm fused with FP4 quantisation, a CuTe-DSL kernel defined in
``flashinfer/cute_dsl/rmsnorm_fp4quant.py`` from 0.6.0; 0.7.4 also re-exports it from
``flashinfer.norm``).  Read from the wrappers of 0.6.0 (l. 1800), 0.6.7 (l. 761), 0.6.8
(l. 775), 0.6.16 and 0.7.4 (l. 800) and their kernels (``fp4_common.py``):

* the same on every release: ``y_fp4`` allocated as ``torch.float4_e2m1fn_x2`` (packed
  e2m1 pairs), ``block_scale`` as float8_e4m3fn (e4m3) or uint8 (ue8m0), ``[M, H/bs]``
  or flat 128x4-swizzled (``ceil(M/128) * ceil(H/bs/4) * 512`` bytes); 3-D input as its
  ``[B*S, H]`` rows; ``scale_format=None`` = e4m3 for ``block_size=16``, ue8m0 for 32;
  ``global_scale`` (float32 ``(1,)``, default 1.0) is the encode scale: the stored
  block scale is ``global_scale * amax / 6`` (ignored with ue8m0); the asserts ``hidden %
  block_size == 0``, ``hidden >= 64``, ``block_size in (16, 32)``.  fi_compat checks them
  (and the tensors' metadata) before the call, so ``python -O`` changes nothing;
* ``scale_format="ue8m0"`` with ``block_size=16``: every release's 16-element path
  writes e4m3 scales whatever the format (0.7.4 l. 536-544), into the uint8 buffer it
  allocates for ue8m0: refused;
* every release indexes the input with 32-bit offsets (``row * H + col``, 0.6.0 l. 1240,
  ``fp4_common.load_8_half2``): input of 2**31 elements or more is refused;
* ``enable_pdl``: 0.6.8+ (``None``/``True``: PDL where the device has it, as 0.7.4);
  0.6.0-0.6.7.post3 have no PDL: a hint, dropped (same values);
* caller-provided ``y_fp4`` / ``block_scale`` must be contiguous: 0.7.4 asserts it; before,
  a strided ``block_scale`` is written through a temporary ``.contiguous()`` copy and
  left unchanged (0.6.16 ``tensor_api``): refused on every release;
* the padding of a swizzled ``block_scale`` (rows ``M..ceil(M/128)*128``, k-blocks past
  ``H/bs`` up to a multiple of 4) is zeroed by 0.7.4's kernel (``zero_swizzled_sf_padding``,
  "fp4_quantize writes zeros there"); 0.6.0-0.7.2.post1 leave it as it was (allocated
  with ``torch.empty``): fi_compat zeroes it before the call there (:class:`SfPadding`);
* numerics fixed inside the kernel, which fi_compat cannot reproduce: 0.6.17 decodes
  subnormal e4m3 block scales exactly (``fp8_e4m3_to_f32_and_rcp``: before, a block scale
  below 2**-6 was decoded as a normal and its values quantised with the wrong
  reciprocal); 0.7.4 no longer rounds ``x * weight`` to bf16 before normalising bf16 input
  (FP4 codes near a rounding midpoint can differ).
* GPUs: SM100 and newer (FP4 conversion instructions); 0.6.16+ also ask the installed
  CuTe DSL whether it targets the device (``require_cute_dsl_arch``).  Every release
  imports ``cutlass`` (nvidia-cutlass-dsl) at the top of the module.
"""

from __future__ import annotations

from .._core import Emulation, EntryPoint, OptionalDependency, Param
from .._core.contract import FP16, Tensor
from ..errors import InvalidArgumentError
from ..registry import VersionRange, at_least
from . import _elementwise as ew
from ._backend import sm100_only
from ._elementwise import EnablePdl
from .trtllm_attention import KindSince

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, cast

    from .._core import Adapter
else:

    def cast(_t: object, v: object) -> object:  # typing.cast without importing typing
        return v


_PDL_REF = "0.2.3 enable_pdl; 0.2.7 None = device_support_pdl; 0.6.8 True clamped too"


def _where(name: str) -> str:
    return f"fi_compat.norm.{name}"


_HALF = "every release's kernels dispatch on those two only"
_WEIGHT = "the kernel reads it as that type"


def _norm_contract(dims: str, rank: tuple[int, ...] = ()) -> dict[str, Tensor]:
    """``input`` fp16/bf16 rows, ``weight`` ``[hidden_size]`` of its dtype, the optional
    ``out`` like ``input``, one device."""
    return {
        "input": Tensor(dims, rank=rank or None, dtypes=FP16, why=_HALF),
        "weight": Tensor("hidden_size", dtype="input", why=_WEIGHT),
        "out": Tensor(like="input"),
    }


def _fused_contract() -> dict[str, Tensor]:
    return {
        "input": Tensor("batch_size hidden_size", dtypes=FP16, why=_HALF),
        "residual": Tensor(like="input"),
        "weight": Tensor("hidden_size", dtype="input", why=_WEIGHT),
    }


_LAYERNORM = {
    "input": Tensor("batch_size hidden_size", dtypes="bfloat16"),
    "gemma": Tensor("hidden_size", dtypes="float32"),
    "beta": Tensor("hidden_size", dtypes="float32"),
}


class Rows3D(Emulation):
    """``rmsnorm`` of 3-D input before 0.4.0: the ``[batch * heads, head_size]`` rows
    (a view where the heads are contiguous, else a copy), written into ``out``."""

    name = "rows_3d"
    reads = ("input",)
    params = ("input",)
    boundaries = ("0.4.0",)

    def may_apply(self, p: Any) -> bool:
        return not at_least(p, "0.4.0")

    def fast_test(self, name: str) -> str | None:
        return "{n}.dim() == 2"

    def describe(self, p: Any) -> str | None:
        return "3-D input run as 2-D rows" if self.may_apply(p) else None

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        pl = adapter.placement
        return pl is not None and self.may_apply(pl) and kw["input"].dim() == 3

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        x, out = kw["input"], kw["out"]
        h = x.shape[-1]
        kw["input"] = x.reshape(-1, h)
        rows = None
        if out is not None:
            try:
                rows = out.view(-1, h)
            except RuntimeError:  # not viewable as rows: a buffer, copied back after
                rows = None
            kw["out"] = rows
        return (x.shape, out, rows)

    def after(self, adapter: Adapter, kw: dict[str, Any], result: Any, state: object) -> Any:
        shape, out, rows = cast("tuple[Any, Any, Any]", state)
        if out is None:
            return result.view(shape)
        if rows is None:
            out.copy_(result.view(shape))
        return out


def _entry(name: str, contracts: dict[str, Tensor], **kw: Any) -> EntryPoint:
    """An RMSNorm-family entry point: the ``contracts`` tensors, ``eps``, the optional
    ``out`` (where the contract has it) and ``enable_pdl``."""
    params = [*(Param(n) for n in contracts if n != "out"), Param("eps")]
    if "out" in contracts:
        params.append(Param("out"))
    params.append(
        Param("enable_pdl", hint=True, note="programmatic dependent launch", ref=_PDL_REF)
    )
    return EntryPoint(
        facade="fi_compat.norm",
        name=name,
        module="flashinfer.norm",
        params=params,
        contracts=contracts,
        prepare=ew.prepare,
        normalizers=(EnablePdl("input", clamp_from="0.6.8"),),
        devices=ew.any_cuda_device,
        feature="norm",
        **kw,
    )


# -- rmsnorm_fp4quant -------------------------------------------------------------------

_FP4Q = "rmsnorm_fp4quant"
_FP4_OUT: frozenset[Any] = frozenset()  # uint8, float4_e2m1fn_x2 (what the kernel writes)
_F32: list[Any] = [None]
_FP4Q_MAX_NUMEL = 2**31  # 32-bit element offsets into the input on every release


def _prepare_fp4q() -> None:
    global _FP4_OUT
    import torch

    ew.prepare()
    _FP4_OUT = frozenset(
        d for d in (torch.uint8, getattr(torch, "float4_e2m1fn_x2", None)) if d is not None
    )
    _F32[0] = torch.float32


def swizzled_sf_size(rows: int, hidden: int, block_size: int) -> int:
    """Bytes of the 128x4-swizzled scale buffer every release allocates (and the kernel
    addresses): ``ceil(rows / 128) * ceil(hidden / block_size / 4) * 512``."""
    return (rows + 127) // 128 * ((hidden // block_size + 3) // 4) * 512


def _rows_of(t: Any, shape: Any, n: int, cols: int) -> bool:
    """``t`` holds one row of ``cols`` per input row: the input's leading shape, or for
    3-D input any ``[..., cols]`` of as many rows (every release views it as
    ``[B * S, cols]``; 2-D input's outputs go to the kernel as they are)."""
    return bool(
        t.shape[-1] == cols
        and t.numel() * shape[-1] == n * cols
        and (t.dim() == 2 or (t.dim() == 3 and len(shape) == 3))
    )


_FP4Q_TENSORS = {
    "input": Tensor("... hidden_size", rank=(2, 3), dtypes=FP16, why=_HALF),
    "weight": Tensor("hidden_size", dtype="input", why=_WEIGHT),
    # the outputs' dtypes and shapes follow from block_size / the layout: the hook
    "y_fp4": Tensor(contiguous=True, why="the kernel writes it row-major in place"),
    "block_scale": Tensor(
        contiguous=True,
        why="the kernel writes it in place (0.7.4 asserts it; before, a strided "
        "block_scale is written through a temporary copy and left unchanged)",
    ),
    "global_scale": Tensor(),
}


def _check_fp4q(
    input: Any,
    weight: Any,
    y_fp4: Any,
    block_scale: Any,
    global_scale: Any,
    block_size: Any,
    scale_format: Any,
    is_sf_swizzled_layout: Any,
) -> None:
    """The hook after the contract (ranks, input/weight dtypes, contiguity, one device):
    the scalar values and what follows from them (metadata only, never values)."""
    try:
        shape = input.shape
        h = shape[-1]
        n = input.numel()
        ok = (
            type(block_size) is int
            and (block_size == 16 or block_size == 32)
            and (
                scale_format is None
                or (
                    type(scale_format) is str
                    and (scale_format == "e4m3" or (scale_format == "ue8m0" and block_size == 32))
                )
            )
            and (is_sf_swizzled_layout is False or is_sf_swizzled_layout is True)
            and h >= 64
            and h % block_size == 0
            and n < _FP4Q_MAX_NUMEL
        )
        if ok and y_fp4 is not None:
            ok = y_fp4.dtype in _FP4_OUT and _rows_of(y_fp4, shape, n, h // 2)
        if ok and block_scale is not None:
            ok = block_scale.element_size() == 1 and (
                block_scale.numel() >= swizzled_sf_size(n // h, h, block_size)
                if is_sf_swizzled_layout
                else _rows_of(block_scale, shape, n, h // block_size)
            )
        if ok and global_scale is not None:
            ok = global_scale.dtype is _F32[0] and global_scale.shape == (1,)
    except (AttributeError, TypeError, IndexError, ZeroDivisionError):
        ok = False
    if not ok:
        _diagnose_fp4q(
            input, y_fp4, block_scale, global_scale, block_size, scale_format, is_sf_swizzled_layout
        )


def _diagnose_fp4q(
    x: Any,
    y_fp4: Any,
    block_scale: Any,
    global_scale: Any,
    block_size: Any,
    scale_format: Any,
    swizzled: Any,
) -> None:
    """Slow path of :func:`_check_fp4q`: the first problem, named."""
    from .._core.adapter import short

    where = _where(_FP4Q)
    if type(block_size) is bool or not isinstance(block_size, int) or block_size not in (16, 32):
        raise InvalidArgumentError(
            f"{where}: block_size must be 16 (NVFP4) or 32 (MXFP4), got {block_size!r}"
        )
    if scale_format is not None and scale_format not in ("e4m3", "ue8m0"):
        raise InvalidArgumentError(
            f"{where}: scale_format must be None, 'e4m3' or 'ue8m0', got {scale_format!r}"
        )
    if scale_format == "ue8m0" and block_size == 16:
        raise InvalidArgumentError(
            f"{where}: scale_format='ue8m0' needs block_size=32: with block_size=16 every "
            f"release (0.6.0-0.7.4) writes e4m3 scales whatever the format, into the uint8 "
            f"buffer it allocates for ue8m0. Fix: block_size=32, or scale_format='e4m3'/None"
        )
    if swizzled is not True and swizzled is not False:
        raise InvalidArgumentError(
            f"{where}: is_sf_swizzled_layout must be a bool, got {short(swizzled)}"
        )
    h = x.shape[-1]
    if h < 64 or h % block_size:
        raise InvalidArgumentError(
            f"{where}: the hidden size (input.shape[-1] = {h}) must be a multiple of "
            f"block_size = {block_size} and at least 64 (every release asserts both)"
        )
    if x.numel() >= _FP4Q_MAX_NUMEL:
        raise InvalidArgumentError(
            f"{where}: input has {x.numel()} elements; every release addresses it with "
            f"32-bit offsets (row * hidden + column), so it must have fewer than 2**31. "
            f"Fix: split the rows into several calls"
        )
    rows = x.numel() // h
    if y_fp4 is not None:
        want = (*x.shape[:-1], h // 2)
        if y_fp4.dtype not in _FP4_OUT or not _rows_of(y_fp4, x.shape, x.numel(), h // 2):
            raise InvalidArgumentError(
                f"{where}: y_fp4 must be uint8 or float4_e2m1fn_x2 {want} (two e2m1 values "
                f"per byte), got {short(y_fp4)}"
            )
    if block_scale is not None:
        if block_scale.element_size() != 1:
            raise InvalidArgumentError(
                f"{where}: block_scale must have a 1-byte dtype (float8_e4m3fn for e4m3, "
                f"uint8 for ue8m0; the kernel writes raw bytes), got {short(block_scale)}"
            )
        if swizzled:
            need = swizzled_sf_size(rows, h, block_size)
            if block_scale.numel() < need:
                raise InvalidArgumentError(
                    f"{where}: a swizzled block_scale must hold ceil(rows / 128) * "
                    f"ceil(hidden / block_size / 4) * 512 = {need} bytes (rows padded to "
                    f"128, scale columns to 4), got {short(block_scale)}"
                )
        else:
            want = (*x.shape[:-1], h // block_size)
            if not _rows_of(block_scale, x.shape, x.numel(), h // block_size):
                raise InvalidArgumentError(
                    f"{where}: block_scale must have shape {want} (one scale per "
                    f"{block_size} values; is_sf_swizzled_layout=False), got "
                    f"{short(block_scale)}"
                )
    if global_scale is not None and (
        global_scale.dtype is not _F32[0] or tuple(global_scale.shape) != (1,)
    ):
        raise InvalidArgumentError(
            f"{where}: global_scale must be a float32 tensor of shape (1,) (the encode "
            f"scale, read on the device), got {short(global_scale)}"
            + (". Fix: global_scale.reshape(1)" if global_scale.numel() == 1 else "")
        )
    raise InvalidArgumentError(f"{where}: invalid arguments")  # pragma: no cover


class SfPadding(Emulation):
    """0.7.4's kernel zeroes the padding of a 128x4-swizzled ``block_scale`` (the rows
    past ``M`` up to a multiple of 128, the scale columns past ``hidden / block_size`` up
    to a multiple of 4: ``zero_swizzled_sf_padding``, "GEMMs that consume it read the
    entries ... and fp4_quantize writes zeros there").  0.6.0-0.7.2.post1 write only the
    real scales.  There fi_compat zeroes the padding before the launch (one memset on the
    call's stream, of the last row tile, or of the whole buffer where the columns are
    padded; a zeroed buffer where fi_compat allocates it): the kernel then writes the
    same bytes as 0.7.4's.  Nothing runs when nothing is padded."""

    name = "sf_padding"
    reads = ("block_size", "input", "is_sf_swizzled_layout")
    params = ("is_sf_swizzled_layout",)
    boundaries = ("0.7.4",)

    def may_apply(self, p: Any) -> bool:
        return not at_least(p, "0.7.4")

    def describe(self, p: Any) -> str | None:
        if not self.may_apply(p):
            return None
        return "swizzled `block_scale` padding zeroed before the call, as 0.7.4's kernel does"

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        pl = adapter.placement
        if pl is None or not self.may_apply(pl) or not kw["is_sf_swizzled_layout"]:
            return False
        x = kw["input"]
        h: int = x.shape[-1]
        rows: int = x.numel() // h
        cols: int = h // kw["block_size"]
        return rows > 0 and (rows % 128 != 0 or cols % 4 != 0)

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        import torch

        x, bs = kw["input"], kw["block_size"]
        h = x.shape[-1]
        rows = x.numel() // h
        size = swizzled_sf_size(rows, h, bs)
        sf = kw["block_scale"]
        if sf is None:  # the buffer the release would allocate, zeroed
            fmt = kw["scale_format"] or ("ue8m0" if bs == 32 else "e4m3")
            dt = torch.uint8 if fmt == "ue8m0" else torch.float8_e4m3fn
            kw["block_scale"] = torch.zeros((size,), dtype=dt, device=x.device)
            return None
        flat = sf.view(-1).view(torch.uint8)  # contiguous (validated): views
        if (h // bs) % 4:
            flat[:size].zero_()  # padded columns in every row tile
        else:
            flat[size - ((h // bs + 3) // 4) * 512 : size].zero_()  # the last row tile
        return None


def _fp4quant() -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.norm",
        name=_FP4Q,
        module="flashinfer.cute_dsl.rmsnorm_fp4quant",
        params=(
            Param("y_fp4", note="preallocated packed-e2m1 output"),
            Param("block_scale", note="preallocated scale output"),
            Param("global_scale", note="encode scale (float32, shape (1,))"),
            Param(
                "is_sf_swizzled_layout",
                emulation="sf_padding",
                note="128x4-swizzled scales; padding zeroed as 0.7.4 does",
                ref="0.7.4 zero_swizzled_sf_padding (rmsnorm_fp4quant kernel)",
            ),
            Param(
                "enable_pdl",
                hint=True,
                note="programmatic dependent launch",
                ref="0.6.8 enable_pdl (None/True = device_support_pdl); no PDL before",
            ),
        ),
        contracts=_FP4Q_TENSORS,
        validate=_check_fp4q,
        validate_args=("block_size", "scale_format", "is_sf_swizzled_layout"),
        prepare=_prepare_fp4q,
        emulations=(SfPadding(),),
        devices=sm100_only(
            "rmsnorm_fp4quant is a CuTe-DSL kernel for Blackwell (SM100 and newer): its FP4 "
            "conversion instructions exist there only"
        ),
        feature="norm.fp4quant",
        matrix_note="CuTe-DSL kernel, SM100+; needs nvidia-cutlass-dsl",
        optional_deps=(
            OptionalDependency(
                VersionRange("0.6.0", "0.6.8"),
                "cutlass",
                "nvidia-cutlass-dsl",
                (),  # a plain dependency of 0.6.0-0.6.7.post3 (no extras in the metadata)
                "flashinfer.cute_dsl.rmsnorm_fp4quant imports cutlass at module scope",
            ),
            OptionalDependency(
                VersionRange("0.6.8"),
                "cutlass",
                "nvidia-cutlass-dsl",
                ("cu12", "cu13"),
                "flashinfer.cute_dsl.rmsnorm_fp4quant imports cutlass at module scope",
            ),
        ),
    )


# -- rmsnorm_quant / fused_add_rmsnorm_quant / qk_rmsnorm_cute ---------------------------

_FP8 = ("float8_e4m3fn", "float8_e5m2")
_LAST = "the kernel checks last-dimension contiguity only"


def _quant_contract(fused: bool) -> dict[str, Tensor]:
    """As the other norms': dims and dtypes (every release's kernel checks the unit last
    stride itself, ``CHECK_LAST_DIM_CONTIGUOUS_INPUT``, before the launch)."""
    out = {
        "out": Tensor("batch_size hidden_size", dtypes=_FP8, why="the quantised output"),
        "input": Tensor("batch_size hidden_size", dtypes=FP16, why=_HALF),
    }
    if fused:
        out["residual"] = Tensor("batch_size hidden_size", match="input")
    out["weight"] = Tensor("hidden_size", dtype="input", why=_WEIGHT)
    return out


def _is_tensor(v: Any) -> bool:
    return hasattr(v, "dim") and hasattr(v, "get_device")


def _quant(name: str, fused: bool) -> EntryPoint:
    contracts = _quant_contract(fused)
    return EntryPoint(
        facade="fi_compat.norm",
        name=name,
        module="flashinfer.norm",
        params=(
            Param("scale", note="quantisation scale (divides)", ref="0.6.7 tensor or float"),
            Param("enable_pdl", hint=True, note="programmatic dependent launch", ref=_PDL_REF),
        ),
        contracts=contracts,
        prepare=ew.prepare,
        normalizers=(
            EnablePdl("input", clamp_from="0.6.8"),
            KindSince("scale", "0.6.7", _is_tensor, "a tensor"),
        ),
        devices=ew.any_cuda_device,
        feature="norm",
    )


_CUTE_DSL = "flashinfer.norm.kernels imports cutlass (the CuTe DSL) at module scope"


def _qk_rmsnorm_cute() -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.norm",
        name="qk_rmsnorm_cute",
        module="flashinfer.norm.kernels.rmsnorm",
        params=(
            Param("weight_bias", note="added to weight (1.0: Gemma)"),
            Param("enable_pdl", note="programmatic dependent launch (passed as it is)"),
        ),
        contracts={
            "input": Tensor("batch heads head_dim", contiguous="last", why=_LAST),
            "weight": Tensor("head_dim", dtype="input", contiguous=True, why=_WEIGHT),
            "output": Tensor("batch heads head_dim", match="input", contiguous="last", why=_LAST),
        },
        devices=ew.any_cuda_device,
        feature="norm",
        matrix_note="CuTe-DSL kernel; needs nvidia-cutlass-dsl",
        optional_deps=(
            OptionalDependency(
                VersionRange("0.6.7", "0.6.8"), "cutlass", "nvidia-cutlass-dsl", (), _CUTE_DSL
            ),
            OptionalDependency(
                VersionRange("0.6.8"), "cutlass", "nvidia-cutlass-dsl", ("cu12", "cu13"), _CUTE_DSL
            ),
        ),
    )


SPECS: dict[str, EntryPoint] = {
    "rmsnorm": _entry("rmsnorm", _norm_contract("... hidden_size", (2, 3)), emulations=(Rows3D(),)),
    "fused_add_rmsnorm": _entry("fused_add_rmsnorm", _fused_contract()),
    "gemma_rmsnorm": _entry("gemma_rmsnorm", _norm_contract("batch_size hidden_size")),
    "gemma_fused_add_rmsnorm": _entry("gemma_fused_add_rmsnorm", _fused_contract()),
    "layernorm": EntryPoint(
        facade="fi_compat.norm",
        name="layernorm",
        module="flashinfer.norm",
        params=(Param("input"), Param("gemma"), Param("beta"), Param("eps")),
        contracts=_LAYERNORM,
        devices=ew.any_cuda_device,
        feature="norm",
    ),
    "rmsnorm_fp4quant": _fp4quant(),
    "rmsnorm_quant": _quant("rmsnorm_quant", fused=False),
    "fused_add_rmsnorm_quant": _quant("fused_add_rmsnorm_quant", fused=True),
    "qk_rmsnorm_cute": _qk_rmsnorm_cute(),
}
ENTRIES = list(SPECS.values())
