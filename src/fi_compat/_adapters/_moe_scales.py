"""Metadata checks and input normalisation shared by the fused-MoE adapters.

Read from the released sources (``flashinfer/fused_moe/core.py`` and
``csrc/trtllm_fused_moe_kernel_launcher.cu`` of 0.5.0, 0.6.7, 0.6.8, 0.7.4):

* **FP4-path activation scales** (``trtllm_fp4_block_scale_*``: NVFP4 activations
  packed two per ``uint8`` with one scale per 16 elements, or MXFP8 activations with one
  ``ue8m0`` scale per 32): every release's Python runner asserts
  ``hidden_states_scale.dim() == 2 and shape[0] == num_tokens`` (0.5.0 ``core.py``
  l. 1016, 0.6.7 l. 968, 0.6.8 autotuner); callers who kept the flat 1-D buffer of
  0.6.7-era code (e.g. an MXFP4 MoE test written for 0.6.7) get it viewed as
  ``[tokens, hidden // block]`` (a view, never a copy).
* **FP8 block scales, DeepSeek FP8** (``trtllm_fp8_block_scale_*``, the default
  ``fp8_quantization_type``): every release reads float32 ``[hidden // 128, tokens]``
  (launcher ICHECKs, 0.5.0 l. 587-593, 0.6.7 l. 994-1000, 0.7.4 l. 2788-2795; the
  0.7.4 docstring: "``[hidden_size // 128, seq_len]``"), and so does fi_compat: the
  dimensions are taken by position, never inferred from the sizes (a token-major
  ``[tokens, hidden // 128]`` or flat tensor is refused, naming the fix, ``.t()``;
  at ``tokens == hidden // 128`` a tensor means what it means at any other size).
  vLLM and SGLang pass ``a_sf.t().contiguous()``: native.  A strided tensor of the
  native shape (``a_sf.t()`` alone) is made contiguous, since the kernels read its
  memory row by row.  ``Fp8QuantizationType.MxFp8`` (0.6.4+) is token-major like FP4
  (its only layout; the launcher checks the dtype only).
* ``hidden_states_scale_layout`` (0.7.0+) is validation only: linear is the only layout
  any release reads.  fi_compat passes ``SfLayout.layout_linear`` when a scale is given
  and the layout was left at ``None`` (0.7.x warns ``DeprecationWarning`` on the
  inferred default), drops it on older releases, and refuses swizzled layouts.
* **routing_logits dtype**: ``trtllm_fp8_per_tensor_scale_moe`` and
  ``trtllm_fp8_block_scale_moe`` before 0.6.8 demand float32 for ``DeepSeekV3``
  routing and bfloat16 for every other method (and for routing scales on input);
  the FP4/BF16/MxInt4 launchers and every 0.6.8+ launcher accept float32 or bfloat16
  (0.6.x before 0.6.8: float32 for DeepSeekV3); 0.7.4 still demands bfloat16 with
  ``use_routing_scales_on_input``.  fi_compat casts only when the release would reject
  the dtype given (bfloat16 -> float32 is exact; float32 -> bfloat16 is what those
  releases demand).
* **DeepSeekV3 routing in ``trtllm_bf16_moe`` on 0.5.3** (the only release before
  0.6.0 with that function): its launcher never sets ``args->routed_scaling_factor``
  (0.5.3 ``csrc/trtllm_fused_moe_kernel_launcher.cu``, ``trtllm_bf16_moe`` l. 1252-1320,
  unlike the FP8/FP4 launchers, l. 1383/1467/1601), so ``MoERunnerArgs`` keeps its
  default ``routed_scaling_factor{0.0f}`` (``trtllm/fused_moe/runner.h`` l. 274), which
  becomes the routing kernel's ``mRouteScale`` (``trtllm_fused_moe_runner.cu`` l. 98);
  the DeepSeekV3 routing kernel, the only one that reads it, multiplies every expert
  weight by it (``trtllm_fused_moe_routing_deepseek.cu`` l. 236): a zero output, with
  no error.  0.6.0 added the parameter (``value_or(1.0)``).  fi_compat refuses that
  routing method there before the launch, naming 0.6.0 (:class:`Bf16RouteScale`);
  the other methods never read the scale.
"""

from __future__ import annotations

from .. import enums
from .._core import Normalizer
from ..errors import InvalidArgumentError, MissingArgumentError, UnsupportedParameterError
from ..registry import at_least

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, ClassVar

    from .._core import Adapter
    from ..registry import Placement

_DT: dict[str, Any] = {}  # torch dtypes, bound on first use (no torch import at import)
# the hot-path ones as globals (one lookup each); None until the first call binds them
_F32: Any = None
_BF16: Any = None
_U8: Any = None
_E4M3: Any = None
_ONE_BYTE: Any = frozenset()
_LINEAR = enums.SfLayout.layout_linear
_DEEPSEEK = enums.Fp8QuantizationType.DeepSeekFp8
_RMT = enums.RoutingMethodType
_DSV3 = enums.RoutingMethodType.DeepSeekV3


def _dtypes() -> dict[str, Any]:
    global _F32, _BF16, _U8, _E4M3, _ONE_BYTE
    if not _DT:
        import torch

        _DT.update(
            f32=torch.float32,
            bf16=torch.bfloat16,
            u8=torch.uint8,
            e4m3=torch.float8_e4m3fn,
            floats=frozenset((torch.float32, torch.bfloat16, torch.float16)),
            one_byte=frozenset(
                d
                for d in (
                    torch.uint8,
                    torch.int8,
                    torch.float8_e4m3fn,
                    getattr(torch, "float8_e8m0fnu", None),
                )
                if d is not None
            ),
        )
        _F32, _BF16, _U8, _E4M3 = _DT["f32"], _DT["bf16"], _DT["u8"], _DT["e4m3"]
        _ONE_BYTE = _DT["one_byte"]
    return _DT


def bind_dtypes() -> None:
    """The entry points' ``prepare`` (first call): the torch dtypes, bound once."""
    _dtypes()


# -- metadata checks -----------------------------------------------------------------


def validate_cutlass() -> Callable[..., Any]:
    """The metadata check of ``cutlass_fused_moe`` (input, expert ids, expert scales)."""
    where = "fi_compat.fused_moe.cutlass_fused_moe"

    def check_cutlass(x: Any, experts: Any, scales: Any) -> int:
        try:
            xs = x.shape
            es = experts.shape
            dev = x.get_device()
            ok = (
                len(xs) == 2
                and len(es) == 2
                and es[0] == xs[0]
                and scales.shape == es
                and experts.get_device() == dev
                and scales.get_device() == dev
            )
        except (AttributeError, TypeError):
            ok = False
        if not ok:
            _diagnose_cutlass(where, x, experts, scales)
        return dev  # type: ignore[no-any-return]

    return check_cutlass


def validate_trtllm(where: str, *, routed: bool) -> Callable[..., Any]:
    """The checks of a TRTLLM-gen entry point that its tensor contract cannot say (the
    routing input against ``num_experts`` / ``top_k``), run after the contract
    (``hidden_states`` 2-D, ``output``); ``where`` names the facade in error messages."""

    def check(hidden: Any, output: Any, first: Any, num_experts: Any, top_k: Any) -> None:
        try:
            ok = type(top_k) is int and type(num_experts) is int and 0 < top_k <= num_experts
            if ok:
                t = hidden.shape[0]
                dev = hidden.get_device()
                if routed:
                    ok = _routed_ok(first, t, top_k, dev)
                else:
                    fs = first.shape
                    ok = len(fs) == 2 and fs[0] == t and fs[1] == num_experts
                    ok = ok and first.get_device() == dev
        except (AttributeError, TypeError):
            ok = False
        if not ok:
            _diagnose(where, routed, first, hidden, num_experts, top_k)

    return check


def _routed_ok(topk: Any, tokens: int, top_k: int, dev: int, ids: bool = True) -> bool:
    """``topk_ids``: integer ``[tokens, top_k]`` ids (one packed int32 tensor), or a pair
    of ids and float weights of that shape."""
    if type(topk) is tuple:  # (topk_ids, topk_weights)
        return (
            len(topk) == 2
            and _routed_ok(topk[0], tokens, top_k, dev)
            and _routed_ok(topk[1], tokens, top_k, dev, ids=False)
        )
    s = topk.shape
    return (
        len(s) == 2
        and s[0] == tokens
        and s[1] == top_k
        and topk.get_device() == dev
        and (not ids or not topk.dtype.is_floating_point)
    )


def _shape(x: Any) -> str:
    if _is_tensor(x):
        return f"{tuple(x.shape)} {x.dtype}"
    return f"a {type(x).__name__}" + (" (not a torch.Tensor)" if hasattr(x, "shape") else "")


def _need_tensor(where: str, name: str, x: Any) -> None:
    if not _is_tensor(x):
        raise InvalidArgumentError(f"{where}: {name} must be a torch.Tensor, got {_shape(x)}")


def _is_tensor(x: Any) -> bool:
    import torch

    return isinstance(x, torch.Tensor)


def _diagnose(where: str, routed: bool, first: Any, hidden: Any, ne: Any, k: Any) -> None:
    fname = "topk_ids" if routed else "routing_logits"
    if first is None:
        raise MissingArgumentError(f"{where}: {fname} is required")
    if not _is_tensor(hidden) or hidden.dim() != 2:
        raise InvalidArgumentError(
            f"{where}: hidden_states must be a 2-D tensor [num_tokens, hidden] (FP4: "
            f"[num_tokens, hidden // 2] uint8), got {_shape(hidden)}"
        )
    if type(ne) is not int or type(k) is not int or not 0 < k <= ne:
        raise InvalidArgumentError(
            f"{where}: num_experts and top_k must be ints with 0 < top_k <= num_experts, "
            f"got num_experts={ne!r}, top_k={k!r}"
        )
    t = hidden.shape[0]
    parts = first if routed and type(first) is tuple else (first,)
    want = (t, k) if routed else (t, ne)
    for i, x in enumerate(parts):
        label = f"{fname}[{i}]" if len(parts) > 1 else fname
        if not _is_tensor(x) or tuple(x.shape) != want:
            dims = "[num_tokens, top_k]" if routed else "[num_tokens, num_experts]"
            raise InvalidArgumentError(
                f"{where}: {label} must have shape {dims} = {want}, got {_shape(x)}"
            )
        if routed and i == 0 and x.dtype.is_floating_point:
            raise InvalidArgumentError(
                f"{where}: {label} holds expert ids: an integer dtype (int32; one tensor packs "
                f"(expert_id << 16) | bf16(weight)), got {x.dtype}"
            )
        if x.get_device() != hidden.get_device() or x.device != hidden.device:
            raise InvalidArgumentError(
                f"{where}: {label} is on {x.device}, hidden_states on {hidden.device}; every "
                f"tensor must be on one device"
            )
    if routed and len(parts) not in (1, 2):  # pragma: no cover - caught above
        raise InvalidArgumentError(f"{where}: topk_ids must be a tensor or (ids, weights)")
    raise InvalidArgumentError(f"{where}: invalid arguments")  # pragma: no cover


def _diagnose_cutlass(where: str, x: Any, experts: Any, scales: Any) -> None:
    for n, v in (("input", x), ("token_selected_experts", experts), ("token_final_scales", scales)):
        if not _is_tensor(v) or v.dim() != 2:
            raise InvalidArgumentError(f"{where}: {n} must be a 2-D tensor, got {_shape(v)}")
    t, k = x.shape[0], experts.shape[1]
    for n, v in (("token_selected_experts", experts), ("token_final_scales", scales)):
        if tuple(v.shape) != (t, k):
            raise InvalidArgumentError(
                f"{where}: {n} must have shape [num_tokens, top_k] = {(t, k)} (num_tokens "
                f"from input), got {_shape(v)}"
            )
        if v.device != x.device:
            raise InvalidArgumentError(
                f"{where}: {n} is on {v.device}, input on {x.device}; every tensor must be "
                f"on one device"
            )
    raise InvalidArgumentError(f"{where}: invalid arguments")  # pragma: no cover


# -- normalisation -------------------------------------------------------------------


class RoutingLogits(Normalizer):
    """``routing_logits`` in the dtype the release's launcher accepts for the routing
    method (see the module docstring).  ``strict``: the FP8 launchers, which before
    0.6.8 pin float32 for DeepSeekV3 and bfloat16 otherwise; ``on_input``: the entry
    point has ``use_routing_scales_on_input`` (bfloat16 then, on every release)."""

    boundaries = ("0.6.8",)

    def __init__(self, *, strict: bool, on_input: bool = False) -> None:
        self.strict = strict
        self.args = ("routing_logits", "routing_method_type") + (
            ("use_routing_scales_on_input",) if on_input else ()
        )
        self.out = ("routing_logits",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        assert pl is not None
        rule = _logits_rule(adapter, self.strict and not at_least(pl, "0.6.8"))
        if len(self.args) == 3:

            def logits_on_input(rl: Any, rmt: Any, on_input: Any) -> tuple[Any, ...]:
                if on_input is not True and on_input is not False:  # never bool(tensor)
                    raise InvalidArgumentError(
                        f"{adapter.entry.dotted}: use_routing_scales_on_input must be a "
                        f"bool, got {_shape(on_input)}"
                    )
                return (rule(rl, rmt, on_input),)

            return logits_on_input

        def logits(rl: Any, rmt: Any) -> tuple[Any, ...]:
            return (rule(rl, rmt, False),)

        return logits


class Fp4Scales(Normalizer):
    """FP4-path activation scales as ``[tokens, hidden // block]`` (flat ones viewed),
    and ``hidden_states_scale_layout`` as the only layout any release reads."""

    args = ("hidden_states", "hidden_states_scale", "hidden_states_scale_layout")
    out = ("hidden_states_scale", "hidden_states_scale_layout")

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        where = adapter.entry.dotted
        has_layout = "hidden_states_scale_layout" in adapter.present

        linear = _LINEAR if has_layout else None

        def fp4_scales(hidden: Any, scale: Any, layout: Any) -> tuple[Any, ...]:
            if scale is None:
                return None, _layout(adapter, where, None, layout, has_layout)
            s: Any = getattr(scale, "shape", ())  # the conforming case inline: 2-D, one-byte
            if layout is None and len(s) == 2 and scale.dtype in _ONE_BYTE:
                hs = hidden.shape
                hd = hidden.dtype
                blocks = s[1] * 8 if hd is _U8 else s[1] * 32 if hd is _E4M3 else -1
                if s[0] == hs[0] and blocks == hs[1]:
                    return scale, linear
            scale = _fp4_scale(where, hidden, scale)
            return scale, _layout(adapter, where, scale, layout, has_layout)

        return fp4_scales


class Fp8BlockScales(Normalizer):
    """DeepSeek-FP8 block scales as float32 ``[hidden // 128, tokens]`` (the one layout
    every release reads; strided ones made contiguous); MxFp8 scales (0.6.4+)
    token-major like the FP4 path."""

    args = ("hidden_states", "hidden_states_scale", "fp8_quantization_type")
    out = ("hidden_states_scale",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        where = adapter.entry.dotted
        has_q = "fp8_quantization_type" in adapter.present

        def fp8_block_scales(hidden: Any, scale: Any, qtype: Any) -> tuple[Any, ...]:
            q = "DeepSeekFp8" if qtype is _DEEPSEEK else _fp8_kind(adapter, qtype)
            if q == "DeepSeekFp8":
                return (_fp8_block_scale(where, hidden, scale),)
            if q == "MxFp8" and has_q:
                return (_fp4_scale(where, hidden, scale),)
            return (scale,)  # anything else: left to the release (or its policy)

        return fp8_block_scales


class OutputWidth(Normalizer):
    """The width of ``output`` where the contract leaves it open (the entry points with
    ``valid_hidden_size``): ``valid_hidden_size`` when given (0.7.0+, which require it,
    ``core.py``: "output.shape[1] must equal valid_hidden_size"), else ``hidden``
    (unpacked: two values per ``uint8`` byte, as FlashInfer counts it).  ``narrow``:
    the FP4 entry points, whose launcher writes ``output.size(1)`` columns from 0.6.0
    (``hidden_size_output = output.size(1)``; ``core.py`` asserts
    ``output.shape[1] <= hidden_size``), so a narrower buffer is theirs too; 0.5.x
    writes ``hidden`` columns into any buffer, so a narrower one is refused there.
    A check only: it rewrites nothing, and runs only when ``output`` is given."""

    args = ("hidden_states", "output", "valid_hidden_size")
    out = ()
    only_if_given = ("output",)
    boundaries = ("0.6.0",)

    def __init__(self, *, narrow: bool = False) -> None:
        self.narrow = narrow

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        assert pl is not None
        where = adapter.entry.dotted
        narrow = self.narrow and at_least(pl, "0.6.0")
        older = self.narrow and not narrow

        def output_width(hidden: Any, output: Any, valid: Any) -> tuple[()]:
            w, h = output.shape[1], hidden.shape[1]
            if hidden.dtype is _U8:
                h *= 2
            if valid is None and (w == h or (narrow and w <= h)):
                return ()
            if valid is not None and w == valid:
                return ()
            _output_width_error(adapter, where, output, h, valid, narrow, older)
            return ()  # pragma: no cover - raised above

        return output_width

    def describe(self, p: Any) -> str | None:
        if self.narrow and not at_least(p, "0.6.0"):
            return "a narrower `output` than `hidden` refused (0.6.0+ write only its columns)"
        return None


def _output_width_error(
    adapter: Adapter, where: str, output: Any, h: int, valid: Any, narrow: bool, older: bool
) -> None:
    t, w = output.shape[0], output.shape[1]
    got = f"got shape {tuple(output.shape)}"
    if valid is not None:
        raise InvalidArgumentError(
            f"{where}: output must be [num_tokens, valid_hidden_size] = ({t}, {valid}) when "
            f"valid_hidden_size is given (the kernels finalise that many columns), {got}"
        )
    if older and w < h:
        raise UnsupportedParameterError(
            f"{where}: output narrower than hidden ({w} < {h}) needs flashinfer-python>=0.6.0 "
            f"(installed {adapter.release} writes {h} columns per token into any buffer). "
            f"Fix: pass output of shape ({t}, {h}), or upgrade",
            parameter="output",
            installed=str(adapter.release),
            minimum="0.6.0",
        )
    most = f" (or narrower: at most {h} columns)" if narrow else ""
    raise InvalidArgumentError(
        f"{where}: output must be [num_tokens, hidden] = ({t}, {h}){most}, {got}"
    )


class FusedFinalize(Normalizer):
    """``use_fused_finalize=None`` means what 0.7.4 makes of it on 0.6.15-0.7.3 too:
    fused unless ``torch.use_deterministic_algorithms(True)`` (0.7.4 ``core.py``
    l. 1811; 0.6.15-0.7.3 take a bool, default True)."""

    args = out = ("use_fused_finalize",)
    boundaries = ("0.7.4",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        assert pl is not None
        if "use_fused_finalize" not in adapter.present or at_least(pl, "0.7.4"):
            return None

        def fused_finalize(fused: Any) -> tuple[Any, ...]:
            if fused is None:
                import torch

                fused = not torch.are_deterministic_algorithms_enabled()
            return (fused,)

        return fused_finalize


class PackedRouting(Normalizer):
    """A ``(topk_ids, topk_weights)`` pair packed into the one int32 tensor releases
    before ``since`` read: ``(expert_id << 16) | bf16(weight)`` (high 16 bits the expert
    id, low 16 bits the bfloat16 weight's bits; ``PackedScoreIdx`` in
    ``include/flashinfer/trtllm/fused_moe/RoutingKernel.h``, the format of 0.6.11's
    ``_init_packed_topk_ids`` and 0.6.13's ``RoutingInputMode.PackedPrecomputed``).
    The weight bits are masked to 16 so a negative weight cannot clobber the id (the
    sign extension of ``int16 -> int32``).  Weights round to bfloat16, as in every
    packed call.  From ``since`` on the pair is passed as given
    (``RoutingInputMode.UnpackedPrecomputed``)."""

    args = out = ("topk_ids",)

    def __init__(self, since: str) -> None:
        self.since = since
        self.boundaries = (since,)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        assert pl is not None
        if at_least(pl, self.since):
            return None
        where = adapter.entry.dotted

        def packed_routing(topk: Any) -> tuple[Any, ...]:
            if type(topk) is not tuple:
                return (topk,)
            return (_pack(where, topk),)

        return packed_routing

    def describe(self, p: Any) -> str | None:
        if at_least(p, self.since):
            return None
        return f"`(topk_ids, topk_weights)` packed into one int32 tensor (pairs from {self.since})"


def _pack(where: str, pair: tuple[Any, ...]) -> Any:
    d = _dtypes()
    import torch

    if len(pair) != 2 or not all(isinstance(t, torch.Tensor) for t in pair):
        raise InvalidArgumentError(
            f"{where}: topk_ids must be a tensor or a (topk_ids, topk_weights) pair of "
            f"tensors, got a tuple of {len(pair)}"
        )
    ids, weights = pair
    if ids.dtype.is_floating_point or ids.shape != weights.shape:
        raise InvalidArgumentError(
            f"{where}: (topk_ids, topk_weights) must be integer ids and weights of one shape "
            f"[num_tokens, top_k], got {ids.dtype} {tuple(ids.shape)} and {weights.dtype} "
            f"{tuple(weights.shape)}"
        )
    bits = weights.to(d["bf16"]).view(torch.int16).to(torch.int32) & 0xFFFF
    return (ids.to(torch.int32) << 16) | bits


def _logits_rule(adapter: Adapter, strict: bool) -> Callable[..., Any]:
    """routing_logits -> the dtype the release accepts for this routing method."""
    where = adapter.entry.dotted
    ds_strict = strict or not at_least(adapter.placement, "0.6.8")  # type: ignore[arg-type]

    def rule(rl: Any, rmt: Any, on_input: bool) -> Any:
        if rl is None:
            return rl
        if _F32 is None:
            _dtypes()
        dt = rl.dtype
        if not on_input:  # the conforming cases, decided without the routing method
            if dt is _F32 and not strict:
                return rl
            if dt is _BF16 and not ds_strict:
                return rl
        d = _DT
        if dt not in d["floats"]:
            raise InvalidArgumentError(
                f"{where}: routing_logits must be float32 or bfloat16, got {dt}"
            )
        m = rmt if type(rmt) is _RMT else adapter.stable_member("routing_method_type", rmt)
        if on_input:
            want = _BF16
        elif m is _DSV3 and ds_strict:
            want = _F32
        elif strict:
            want = _BF16
        elif dt is _F32 or dt is _BF16:
            return rl
        else:
            want = _F32  # float16: exact in float32
        return rl if dt is want else rl.to(want)

    return rule


def _fp4_scale(where: str, hidden: Any, scale: Any) -> Any:
    """FP4-path activation scales as ``[tokens, hidden // block]`` (a view)."""
    if scale is None:
        return None
    s: Any = getattr(scale, "shape", ())
    if len(s) == 2:  # the conforming case in a few attribute reads
        hs = hidden.shape
        hd = hidden.dtype
        blocks = s[1] * 8 if hd is _U8 else s[1] * 32 if hd is _E4M3 else -1
        if s[0] == hs[0] and blocks == hs[1] and scale.dtype in _ONE_BYTE:
            return scale
    return _fp4_scale_slow(where, hidden, scale)


def _fp4_scale_slow(where: str, hidden: Any, scale: Any) -> Any:
    d = _dtypes()
    _need_tensor(where, "hidden_states_scale", scale)
    hd = hidden.dtype
    t, cols = hidden.shape[0], hidden.shape[1]
    if hd is d["u8"]:
        block, h, what = 16, 2 * cols, "NVFP4 (hidden_states uint8, two values per byte)"
    elif hd is d["e4m3"]:
        block, h, what = 32, cols, "MXFP8 (hidden_states float8_e4m3fn)"
    else:
        raise InvalidArgumentError(
            f"{where}: hidden_states_scale given with {hd} hidden_states; block scales go with "
            f"uint8 (NVFP4) or float8_e4m3fn (MXFP8) activations, pass None for {hd}"
        )
    k = h // block
    s = scale.shape
    if scale.dtype not in d["one_byte"]:
        raise InvalidArgumentError(
            f"{where}: hidden_states_scale for {what} holds one-byte scales (float8_e4m3fn / "
            f"uint8 / float8_e8m0fnu), got {scale.dtype}"
        )
    if len(s) == 2 and s[0] == t and s[1] == k:
        return scale
    if len(s) == 1 and s[0] == t * k:
        return scale.view(t, k)
    raise InvalidArgumentError(
        f"{where}: hidden_states_scale for {what} must be [num_tokens, hidden // {block}] = "
        f"[{t}, {k}] (or flat [{t * k}]), got {tuple(s)}"
    )


def _fp8_block_scale(where: str, hidden: Any, scale: Any) -> Any:
    """DeepSeek-FP8 activation scales as every release reads them: float32
    ``[hidden // 128, num_tokens]``, the dimensions taken by position (never inferred
    from the sizes).  A strided tensor of that shape is made contiguous (the kernels
    read the memory row by row); a conforming one passes as it is."""
    if getattr(scale, "dtype", None) is _F32:
        s, hs = scale.shape, hidden.shape
        if len(s) == 2 and s[1] == hs[0] and s[0] == hs[1] // 128:
            return scale if scale.is_contiguous() else scale.contiguous()
    if scale is None:
        raise MissingArgumentError(
            f"{where}: hidden_states_scale is required (float32 [hidden // 128, num_tokens])"
        )
    d = _dtypes()
    _need_tensor(where, "hidden_states_scale", scale)
    t, h = hidden.shape[0], hidden.shape[1]
    k = h // 128
    s = tuple(scale.shape)
    want = f"float32 [hidden // 128, num_tokens] = [{k}, {t}]"
    read = (
        "every FlashInfer release reads DeepSeek FP8 block scales as "
        "[hidden // 128, num_tokens] (its docs and launcher checks)"
    )
    if scale.dtype is not d["f32"]:
        raise InvalidArgumentError(
            f"{where}: hidden_states_scale (DeepSeek FP8 block scales) must be {want}, got "
            f"{scale.dtype}"
        )
    if s == (t, k):
        raise InvalidArgumentError(
            f"{where}: hidden_states_scale is token-major {list(s)} = [num_tokens, hidden // "
            f"128]; {read}. Fix: pass hidden_states_scale.t() (fi_compat makes the view "
            f"contiguous, as vLLM's and SGLang's .t().contiguous())"
        )
    if len(s) == 1 and s[0] == t * k:
        raise InvalidArgumentError(
            f"{where}: hidden_states_scale is flat [{t * k}]; {read}, and a flat buffer leaves the "
            f"order of its two dimensions unsaid. Fix: .view({k}, {t}) for hidden-major "
            f"memory, .view({t}, {k}).t() for token-major memory"
        )
    raise InvalidArgumentError(
        f"{where}: hidden_states_scale (DeepSeek FP8 block scales) must be {want}, got {list(s)}"
    )


def _fp8_kind(adapter: Adapter, qtype: Any) -> str:
    """The member name of an ``fp8_quantization_type`` value (any accepted spelling)."""
    m = qtype if type(qtype) is enums.Fp8QuantizationType else None
    if m is None:
        m = adapter.stable_member("fp8_quantization_type", qtype)
    return str(m.name)


def _layout(adapter: Adapter, where: str, scale: Any, layout: Any, present: bool) -> Any:
    """``hidden_states_scale_layout``: linear is the only layout any release reads."""
    if layout is None:
        return _LINEAR if present and scale is not None else None
    m = (
        layout
        if type(layout) is enums.SfLayout
        else adapter.stable_member("hidden_states_scale_layout", layout)
    )
    if m is not _LINEAR:
        raise InvalidArgumentError(
            f"{where}: hidden_states_scale_layout={m!r}: every FlashInfer release's TRTLLM-gen "
            f"MoE reads activation scales in the linear layout only; pass the linear "
            f"[num_tokens, hidden // block] scales (SfLayout.layout_linear or None)"
        )
    return _LINEAR if present else None


# -- debug mode: value checks (host syncs) ---------------------------------------------


def debug_routed(adapter: Adapter, kw: dict[str, Any]) -> None:
    """``FI_COMPAT_DEBUG=1``: precomputed expert ids lie in ``[0, num_experts)`` (packed
    ids in the high 16 bits)."""
    import torch

    topk = kw["topk_ids"]
    # a pair holds the ids; one tensor is packed (expert_id << 16) | bf16(weight) on
    # every release (RoutingInputMode.PackedPrecomputed)
    ids = topk[0] if type(topk) is tuple else topk
    if not isinstance(ids, torch.Tensor) or not ids.numel():
        return
    if type(topk) is not tuple:
        ids = ids >> 16
    _ids_in_range(adapter.entry.dotted, "topk_ids", ids, kw["num_experts"])


def debug_cutlass(adapter: Adapter, kw: dict[str, Any]) -> None:
    """``FI_COMPAT_DEBUG=1``: ``token_selected_experts`` lie in ``[0, experts * ep_size)``."""
    w = kw["fc1_expert_weights"]
    total = int(w.shape[0]) * int(kw["ep_size"])
    _ids_in_range(
        adapter.entry.dotted, "token_selected_experts", kw["token_selected_experts"], total
    )


def _ids_in_range(where: str, name: str, ids: Any, n: int) -> None:
    import torch

    v = ids.detach().to("cpu", torch.int64)
    lo, hi = int(v.min()), int(v.max())
    if lo < 0 or hi >= n:
        raise InvalidArgumentError(
            f"{where}: {name} must hold expert ids in [0, {n}), got values in [{lo}, {hi}]"
        )


class Bf16RouteScale(Normalizer):
    """``trtllm_bf16_moe`` with DeepSeekV3 routing on 0.5.3, whose launcher leaves the
    routed scaling factor at 0 (a zero output; see the module docstring): refused before
    the launch, naming 0.6.0.  Other routing methods cost one identity test inline."""

    args = ("routing_method_type",)
    out = ()
    boundaries = ("0.6.0",)
    # a stable member other than DeepSeekV3 passes inline; integers go to the check
    passes = "type(routing_method_type) is _RMT and routing_method_type is not _DSV3"
    passes_ns: ClassVar[Mapping[str, object]] = {"_RMT": _RMT, "_DSV3": _DSV3}

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.6.0"):
            return None
        where, release = adapter.entry.dotted, str(adapter.release)

        def check(rmt: Any) -> tuple[Any, ...]:
            m = rmt if type(rmt) is _RMT else adapter.stable_member("routing_method_type", rmt)
            if m is not _DSV3:
                return ()
            raise UnsupportedParameterError(
                f"{where}(routing_method_type=RoutingMethodType.DeepSeekV3) needs "
                f"flashinfer-python>=0.6.0; installed: {release}, whose trtllm_bf16_moe "
                f"launcher never sets the routed scaling factor, so DeepSeekV3 routing "
                f"weighs every expert by 0 and the output is all zeros (0.6.0 added "
                f"routed_scaling_factor, default 1.0). Fix: pip install "
                f"'flashinfer-python>=0.6.0', or the FP8/FP4 TRTLLM-gen MoE on {release}",
                parameter="routing_method_type",
                installed=release,
                minimum="0.6.0",
            )

        return check

    def describe(self, p: Placement) -> str | None:
        if at_least(p, "0.6.0"):
            return None
        return "`routing_method_type=DeepSeekV3` refused (0.5.3 leaves the route scale at 0)"
