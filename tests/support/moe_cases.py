"""Call-policy cases of fi_compat.fused_moe, shared by the static suite (all 43 releases,
spy bound to the snapshot signature) and the live contract suite (installed releases,
spy bound to ``inspect.signature`` of the real function, FlashInfer's own enum members).

Each case takes ``(release, make)``; ``make(name)`` returns ``(facade, spy, adapter)``
for entry point ``name`` freshly pointed at a spy.  Cases skip entry points the release
does not have.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from fi_compat import enums, errors
from fi_compat.enums import (
    ActivationType,
    Fp8QuantizationType,
    GatedActType,
    RoutingMethodType,
    SfLayout,
)
from fi_compat.registry import at_least, place
from support.moe_helpers import ENTRIES, F8, H, K, T, args, release_value

Make = Callable[[str], tuple[Any, Any, Any]]
TRTLLM = [n for n in ENTRIES if n.startswith("trtllm_")]
ROUTER = [n for n in TRTLLM if "routed" not in n]


def exists(release: str, name: str) -> bool:
    return at_least(place(release), ENTRIES[name].since)


def has(release: str, name: str, param: str) -> bool:
    return ENTRIES[name].params[param].present_in(place(release))


def zero_route_scale(release: str, name: str) -> bool:
    """0.5.3's ``trtllm_bf16_moe`` leaves the routed scaling factor at 0, which only
    DeepSeekV3 routing reads (a zero output): fi_compat refuses that method there."""
    return name == "trtllm_bf16_moe" and not at_least(place(release), "0.6.0")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        if not (isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape):
            return False
        return a is b or torch.equal(a.view(torch.uint8), b.view(torch.uint8))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b)


def case_positional_and_keyword_agree(release: str, make: Make) -> None:
    for name in ENTRIES:
        if not exists(release, name):
            continue
        f, spy, _ = make(name)
        a = args(name)
        f(*a.values())
        pos = spy.last
        f(**a)
        kw = spy.last
        assert pos.keys() == kw.keys(), name
        assert all(_same(pos[n], kw[n]) for n in pos), name
        sent = spy.raw_kwargs[-1]  # all by keyword (the spy rejects positional calls)
        for n, v in a.items():
            rname = next(r for s, r in f.adapter.spelling.items() if s == n)
            if isinstance(v, torch.Tensor):
                assert sent[rname] is v, (name, n)  # conforming inputs reach FI unchanged
            else:
                assert _same(sent[rname], v), (name, n)


def case_explicit_defaults_always_forwarded(release: str, make: Make) -> None:
    for name in ENTRIES:
        if not exists(release, name):
            continue
        f, spy, adapter = make(name)
        f(**args(name))
        sent = spy.raw_kwargs[-1]
        for n in adapter.present:
            p = ENTRIES[name].params[n]
            if p.explicit:
                assert adapter.spelling[n] in sent, (name, n)
        if "tile_tokens_dim" in adapter.present:  # 0.5.x: required in fp4, only logged
            assert sent["tile_tokens_dim"] is None, name


def case_routing_method_by_name(release: str, make: Make) -> None:
    for name in TRTLLM:
        if not exists(release, name):
            continue
        f, spy, adapter = make(name)
        values = enums.RoutingMethodType.values_in(adapter.placement.treated_as or release)
        for m in RoutingMethodType:
            a = args(name)
            if m.name == "DeepSeekV3" and "routing_logits" in a:
                a["routing_logits"] = a["routing_logits"].float()
            if (
                values is not None
                and m.name in values
                and not (m.name == "DeepSeekV3" and zero_route_scale(release, name))
            ):
                f(**a, routing_method_type=m)
                got = spy.raw_kwargs[-1]["routing_method_type"]
                assert int(got) == values[m.name], (name, m)
                assert _member_or_int(got, m.name), (name, m)
            else:
                n_calls = len(spy.calls)
                with pytest.raises(errors.UnsupportedParameterError) as ei:
                    f(**a, routing_method_type=m)
                first = enums.RoutingMethodType.first_release(m.name)
                if m.name == "DeepSeekV3" and zero_route_scale(release, name):
                    first = "0.6.0"
                assert ei.value.minimum == first and len(spy.calls) == n_calls, (name, m)


def _member_or_int(got: Any, name: str) -> bool:
    return type(got) is int or getattr(got, "name", None) == name


def case_raw_ints(release: str, make: Make) -> None:
    for name in TRTLLM:
        if not exists(release, name):
            continue
        f, spy, adapter = make(name)
        a = args(name)
        f(**a, routing_method_type=1)  # 1 was Renormalize in every release
        assert spy.raw_kwargs[-1]["routing_method_type"] == release_value(
            adapter, "routing_method_type", "Renormalize"
        )
        with pytest.raises(errors.InvalidArgumentError, match="will not guess"):
            f(**a, routing_method_type=6)  # Unspecified to 0.6.7, SigmoidRenorm from 0.6.8


def case_activation_never_gelu_from_legacy_zero(release: str, make: Make) -> None:
    for name in ("trtllm_fp4_block_scale_moe", "trtllm_fp4_block_scale_routed_moe"):
        if not exists(release, name):
            continue
        f, spy, adapter = make(name)
        rname = adapter.spelling["activation_type"]
        old = not at_least(place(release), "0.6.3")
        assert rname == ("gated_act_type" if old else "activation_type")
        for legacy, member in ((GatedActType.SwiGlu, "Swiglu"), (GatedActType.GeGlu, "Geglu")):
            for spelled in (legacy, ActivationType._members_[member]):
                key = "gated_act_type" if spelled is legacy else "activation_type"
                f(**args(name), **{key: spelled})
                got = spy.raw_kwargs[-1][rname]
                want = release_value(adapter, "activation_type", member)
                assert got == want, (name, spelled)
        f(**args(name), gated_act_type=0)  # the legacy integer, unambiguous by name
        assert spy.raw_kwargs[-1][rname] == release_value(adapter, "activation_type", "Swiglu")
        for ambiguous in (0, 1):  # SwiGlu/GeGlu before 0.6.3, Gelu/Relu after: refused
            with pytest.raises(errors.InvalidArgumentError, match="ambiguous"):
                f(**args(name), activation_type=ambiguous)
        with pytest.raises(errors.InvalidArgumentError, match="disagree"):
            f(**args(name), gated_act_type=GatedActType.GeGlu, activation_type=ActivationType.Relu2)
        if old:  # activations the legacy domain cannot express
            with pytest.raises(errors.UnsupportedParameterError) as ei:
                f(**args(name), activation_type=ActivationType.Relu2)
            assert ei.value.minimum == "0.6.3"


# (entry, parameter, value needing it, the release adding it)
NON_DEFAULT: list[tuple[str, str, Any]] = [
    ("trtllm_fp4_block_scale_moe", "per_token_scale", torch.ones(T)),
    ("trtllm_fp4_block_scale_moe", "norm_topk_prob", False),
    ("trtllm_fp4_block_scale_moe", "num_fused_shared_experts", 1),
    ("trtllm_fp4_block_scale_moe", "valid_hidden_size", 200),
    ("trtllm_fp8_block_scale_moe", "do_finalize", False),
    ("trtllm_fp8_block_scale_moe", "fp8_quantization_type", Fp8QuantizationType.MxFp8),
    ("trtllm_fp8_per_tensor_scale_moe", "activation_type", ActivationType.Relu2),
    ("trtllm_bf16_moe", "routed_scaling_factor", 2.5),
    ("trtllm_bf16_moe", "routing_replay_out", torch.zeros(T, K, dtype=torch.int32)),
    ("cutlass_fused_moe", "use_fused_finalize", False),
    ("cutlass_fused_moe", "backend", "cake"),
    ("cutlass_fused_moe", "use_packed_weights", True),
]
NEUTRAL: list[tuple[str, str, Any]] = [
    ("trtllm_fp4_block_scale_moe", "norm_topk_prob", True),
    ("trtllm_fp4_block_scale_moe", "num_fused_shared_experts", 0),
    ("trtllm_fp8_block_scale_moe", "do_finalize", True),
    ("trtllm_fp8_block_scale_moe", "fp8_quantization_type", Fp8QuantizationType.DeepSeekFp8),
    ("cutlass_fused_moe", "backend", "cutlass"),
    ("cutlass_fused_moe", "swizzled_input_sf", True),
]
HINTS: list[tuple[str, str, Any]] = [
    ("trtllm_fp4_block_scale_moe", "workspace_buffer", torch.zeros(16, dtype=torch.uint8)),
    ("trtllm_fp4_block_scale_moe", "tile_tokens_dim", 16),
    ("cutlass_fused_moe", "profile_ids", [0, 1]),
]


# arguments that go with a value (e.g. MxFp8 takes token-major uint8 scales)
WITH: dict[str, dict[str, Any]] = {
    "fp8_quantization_type": {"hidden_states_scale": torch.zeros(T, H // 32, dtype=torch.uint8)}
}


def case_parameters_the_release_lacks(release: str, make: Make) -> None:
    for name, param, value in NON_DEFAULT:
        if not exists(release, name):
            continue
        f, spy, adapter = make(name)
        p = ENTRIES[name].params[param]
        base = {**args(name), **WITH.get(param, {})}
        if p.present_in(place(release)):
            f(**base, **{param: value})
            assert param in spy.raw_kwargs[-1], (name, param)
            continue
        n_calls = len(spy.calls)
        with pytest.raises(errors.UnsupportedParameterError) as ei:
            f(**base, **{param: value})
        e = ei.value
        want = p.value_since.get(value) if isinstance(value, str) else None
        if p.enum:  # a member newer than the parameter's older domain
            want = None
        assert e.parameter == param and e.installed == release, (name, param)
        if want is not None or not p.enum:
            assert e.minimum == (want or p.since or p.until), (name, param)
        assert f"flashinfer-python>={e.minimum}" in str(e)
        assert isinstance(e, TypeError) and len(spy.calls) == n_calls  # before any launch
    for name, param, value in NEUTRAL + HINTS:
        if not exists(release, name):
            continue
        f, spy, adapter = make(name)
        f(**args(name), **{param: value})
        p = ENTRIES[name].params[param]
        sent = spy.raw_kwargs[-1]
        if param in adapter.present:  # forwarded where the release has it (or its default)
            if p.enum and param in sent:
                assert sent[param] == release_value(adapter, param, value.name), (name, param)
            elif param in sent:
                assert _same(sent[param], value), (name, param)
            else:
                assert value is p.default or value == p.default, (name, param)
        else:  # dropped (neutral value or a hint) where it does not
            assert param not in spy.raw_kwargs[-1], (name, param)


def case_fp4_scale_layouts(release: str, make: Make) -> None:
    for name in ("trtllm_fp4_block_scale_moe", "trtllm_fp4_block_scale_routed_moe"):
        if not exists(release, name):
            continue
        f, spy, adapter = make(name)
        layout = has(release, name, "hidden_states_scale_layout")
        for mxfp8 in (False, True):
            a = args(name, mxfp8=mxfp8)
            s2 = a["hidden_states_scale"]
            for given in (s2, s2.reshape(-1)):
                f(**{**a, "hidden_states_scale": given})
                got = spy.raw_kwargs[-1]["hidden_states_scale"]
                assert got.shape == s2.shape and got.dtype == s2.dtype, (name, given.shape)
                assert got.data_ptr() == s2.data_ptr()  # a view, never a copy
                if given is s2:
                    assert got is s2
                sent = spy.raw_kwargs[-1]
                if layout:
                    assert sent["hidden_states_scale_layout"] == release_value(
                        adapter, "hidden_states_scale_layout", "layout_linear"
                    )
                else:
                    assert "hidden_states_scale_layout" not in sent
            bad = s2[:, :-1]
            n_calls = len(spy.calls)
            with pytest.raises(errors.InvalidArgumentError, match=r"\[4, \d+\]"):
                f(**{**a, "hidden_states_scale": bad})
            assert len(spy.calls) == n_calls
        with pytest.raises(errors.InvalidArgumentError, match="linear"):
            f(**args(name), hidden_states_scale_layout=SfLayout.layout_128x4)
        bf16 = {**args(name), "hidden_states": torch.zeros(T, H, dtype=torch.bfloat16)}
        f(**{**bf16, "hidden_states_scale": None})
        assert spy.raw_kwargs[-1]["hidden_states_scale"] is None
        if layout:
            assert spy.raw_kwargs[-1].get("hidden_states_scale_layout") is None


def _tokens(name: str, t: int) -> dict[str, Any]:
    """``args(name)`` cut to the first ``t`` tokens (routing inputs and hidden states)."""
    a = args(name)
    for n in ("routing_logits", "topk_ids", "hidden_states"):
        if n in a:
            a[n] = a[n][:t]
    return a


def case_fp8_block_scale_layouts(release: str, make: Make) -> None:
    """DeepSeek FP8 block scales mean what every release reads: float32
    ``[hidden // 128, num_tokens]``, the dimensions taken by position.  Nothing is
    inferred from the sizes: a token-major ``[num_tokens, hidden // 128]`` tensor is
    refused (fix: ``.t()``) at every size where it is not also a native shape, and at
    ``num_tokens == hidden // 128`` (the square case, 56 tokens at hidden 7168) a tensor
    means what it means at any other size.  A strided tensor with the native dimensions
    (``token_major.t()``, as vLLM and SGLang pass before their ``.contiguous()``) is
    handed over contiguous, because the kernels read the memory row by row."""
    k = H // 128
    for name in ("trtllm_fp8_block_scale_moe", "trtllm_fp8_block_scale_routed_moe"):
        if not exists(release, name):
            continue
        f, spy, adapter = make(name)
        for t in (T, k):  # T = 4 tokens, and the square case (2 tokens at hidden 256)
            a = _tokens(name, t)
            native = torch.rand(k, t, generator=torch.Generator().manual_seed(t))
            f(**{**a, "hidden_states_scale": native})
            assert spy.raw_kwargs[-1]["hidden_states_scale"] is native, (name, t)  # no copy
            token_major = native.t().contiguous()  # [t, k] in memory
            f(**{**a, "hidden_states_scale": token_major.t()})  # native dims, strided
            got = spy.raw_kwargs[-1]["hidden_states_scale"]
            assert got.is_contiguous() and torch.equal(got, native), (name, t)
            if t == k:  # [k, k]: the native shape, read as [hidden // 128, num_tokens]
                f(**{**a, "hidden_states_scale": token_major})
                assert spy.raw_kwargs[-1]["hidden_states_scale"] is token_major, name
                continue
            for bad, match in (
                (token_major, r"token-major .*\.t\(\)"),
                (token_major.reshape(-1), r"flat"),
                (native[:1], rf"\[{k}, {t}\]"),
                (native.half(), "float32"),
            ):
                n_calls = len(spy.calls)
                with pytest.raises(errors.InvalidArgumentError, match=match):
                    f(**{**a, "hidden_states_scale": bad})
                assert len(spy.calls) == n_calls, (name, bad.shape)
        a = args(name)
        if has(release, name, "fp8_quantization_type"):  # 0.6.4+: MxFp8 is token-major
            mx = torch.zeros(T, H // 32, dtype=torch.uint8)
            f(
                **{**a, "hidden_states_scale": mx.reshape(-1)},
                fp8_quantization_type=Fp8QuantizationType.MxFp8,
            )
            got = spy.raw_kwargs[-1]
            assert got["hidden_states_scale"].shape == (T, H // 32)
            assert got["fp8_quantization_type"] == release_value(
                adapter, "fp8_quantization_type", "MxFp8"
            )


def case_routing_logits_dtype(release: str, make: Make) -> None:
    strict_fp8 = not at_least(place(release), "0.6.8")
    for name in ROUTER:
        if not exists(release, name):
            continue
        f, spy, _ = make(name)
        a = args(name)
        lf = a["routing_logits"].float()
        lb = a["routing_logits"]
        strict = strict_fp8 and name.startswith("trtllm_fp8")
        # DeepSeekV3: float32 everywhere before 0.6.8; bf16 is cast up exactly
        # (not on 0.5.3's trtllm_bf16_moe: DeepSeekV3 refused there, see
        # case_deepseek_routing_needs_a_route_scale)
        ds = {"routing_method_type": RoutingMethodType.DeepSeekV3}
        if not zero_route_scale(release, name):
            f(**{**a, "routing_logits": lb}, **ds)
            got = spy.raw_kwargs[-1]["routing_logits"]
            if strict_fp8:
                assert got.dtype == torch.float32 and torch.equal(got, lb.float())
            else:
                assert got is lb
            f(**{**a, "routing_logits": lf}, **ds)
            assert spy.raw_kwargs[-1]["routing_logits"] is lf  # conforming: not copied
        # other methods: bf16 where the release demands it, otherwise as given
        f(**{**a, "routing_logits": lf})
        got = spy.raw_kwargs[-1]["routing_logits"]
        if strict:
            assert got.dtype == torch.bfloat16 and torch.equal(got, lf.to(torch.bfloat16))
        else:
            assert got is lf
        f(**a)
        assert spy.raw_kwargs[-1]["routing_logits"] is lb
        with pytest.raises(errors.InvalidArgumentError, match="float32 or bfloat16"):
            f(**{**a, "routing_logits": lb.to(torch.int32)})
    name = "trtllm_fp8_per_tensor_scale_moe"
    f, spy, _ = make(name)
    a = args(name)
    f(**{**a, "routing_logits": a["routing_logits"].float(), "use_routing_scales_on_input": True})
    assert spy.raw_kwargs[-1]["routing_logits"].dtype == torch.bfloat16


def case_metadata_errors_before_launch(release: str, make: Make) -> None:
    for name in [*TRTLLM, "cutlass_fused_moe"]:
        if not exists(release, name):
            continue
        f, spy, _ = make(name)
        a = args(name)
        first = "input" if name == "cutlass_fused_moe" else "hidden_states"
        bad_first = {first: a[first][:-1]}  # one token fewer than the routing inputs
        for bad in (bad_first, {"top_k": 99} if name != "cutlass_fused_moe" else {}):
            if not bad:
                continue
            n_calls = len(spy.calls)
            with pytest.raises(errors.InvalidArgumentError):
                f(**{**a, **bad})
            assert len(spy.calls) == n_calls, (name, bad.keys())


def case_output_buffer(release: str, make: Make) -> None:
    for name in (
        "trtllm_bf16_moe",
        "trtllm_bf16_routed_moe",
        "trtllm_fp8_block_scale_moe",
        "trtllm_fp8_per_tensor_scale_moe",
        "block_scale_interleave",
    ):
        if not exists(release, name):
            continue
        f, spy, adapter = make(name)
        key = "out" if name == "block_scale_interleave" else "output"
        a = args(name)
        if name == "block_scale_interleave":  # the spy returns a copy of the input
            buf, want = torch.empty(128, 4, dtype=torch.uint8), a["unswizzled_sf"]
        else:  # the spy's MoE output is all 2
            buf, want = torch.empty(T, H, dtype=torch.bfloat16), torch.full((T, H), 2.0)
        res = f(**a, **{key: buf})
        assert res is buf or (isinstance(res, list) and res[0] is buf), name
        native = key in adapter.present
        assert (key in spy.raw_kwargs[-1]) == native, name
        if not native:  # emulated: the result copied into the caller's buffer
            assert torch.equal(buf.to(want.dtype), want), name


def _intermediates(spy: Any, lora: bool = False) -> list[torch.Tensor]:
    """Make ``spy`` return what an unfinalised (or LoRA) call returns: tensors that are
    not ``[num_tokens, hidden]`` (gemm2 rows per expanded token, weights, indices)."""
    out = [
        torch.full((T * K, H), 3.0, dtype=torch.bfloat16),
        torch.ones(T, K, dtype=torch.bfloat16),
        torch.arange(T * K, dtype=torch.int32),
    ]
    if lora:  # do_finalize=True with gemm1_lora_delta: [output, indices, gemm1 output]
        out = [torch.full((T, H), 2.0, dtype=torch.bfloat16), out[2], out[0]]
    spy.result = lambda a: list(out)
    return out


def case_output_emulated_unfinalized(release: str, make: Make) -> None:
    """Where ``output=`` is emulated (bf16 / fp8 entry points before 0.6.14): with
    ``do_finalize=False`` the call returns the release's intermediates and leaves the
    buffer alone (0.7.4 does not read ``output`` then); with ``gemm1_lora_delta`` the
    finalised result goes into the buffer and the extra results are kept."""
    for name in ("trtllm_bf16_moe", "trtllm_bf16_routed_moe", "trtllm_fp8_block_scale_moe"):
        if not exists(release, name) or has(release, name, "output"):
            continue
        f, spy, _ = make(name)
        a = args(name)
        if has(release, name, "do_finalize"):
            inter = _intermediates(spy)
            buf = torch.zeros(T, H, dtype=torch.bfloat16)
            res = f(**a, output=buf, do_finalize=False)
            assert len(res) == 3 and all(r is i for r, i in zip(res, inter, strict=True)), name
            assert not buf.any(), name  # untouched
        if "gemm1_lora_delta" in ENTRIES[name].params and has(release, name, "gemm1_lora_delta"):
            inter = _intermediates(spy, lora=True)
            buf = torch.zeros(T, H, dtype=torch.bfloat16)
            delta = torch.zeros(T * K, 2 * 128, dtype=torch.bfloat16)
            res = f(**a, output=buf, gemm1_lora_delta=delta)
            assert res[0] is buf and torch.equal(buf, inter[0]), name
            assert len(res) == 3 and res[1] is inter[1] and res[2] is inter[2], name


def case_output_buffer_checked(release: str, make: Make) -> None:
    """A wrong ``output=`` buffer is a typed error before any launch, on every release
    of every TRTLLM-gen entry point, whether the release has ``output`` or fi_compat
    emulates it (copying into it): 0.6.14's rule, where bf16/fp8 gained it
    (``check_shape_dtype_device(output, (num_tokens, hidden_size), torch.bfloat16,
    hidden_states.device)``), plus a contiguous buffer (the kernels write its rows)."""
    bad: list[tuple[Any, str]] = [
        (torch.empty(T, H, dtype=torch.float32), "output must be bfloat16"),
        (torch.empty(2, T, H, dtype=torch.bfloat16), "output must be 2-D"),
        (torch.empty(T + 1, H, dtype=torch.bfloat16), r"output must be 2-D .*got shape \(5, "),
        (torch.empty(H, T, dtype=torch.bfloat16).t(), "output must be contiguous"),
        (torch.empty(T, H, 2, dtype=torch.bfloat16)[..., 0], "output must be contiguous"),
        ([[0.0] * H] * T, "output must be a torch.Tensor or None"),
    ]
    for name in TRTLLM:
        if not exists(release, name):
            continue
        f, spy, _ = make(name)
        a = args(name)
        wrong = [*bad]
        if not name.startswith("trtllm_fp4"):  # FP4 writes a narrower output (0.6.0+)
            wrong.append((torch.empty(T, 1, dtype=torch.bfloat16), r"output must be .*\(4, 256\)"))
        wrong.append((torch.empty(T, H + 1, dtype=torch.bfloat16), r"\(4, 256\)|<= 256"))
        for buf, match in wrong:
            n_calls = len(spy.calls)
            with pytest.raises(errors.InvalidArgumentError, match=match):
                f(**a, output=buf)
            assert len(spy.calls) == n_calls, (name, match)
        good = torch.empty(T, H, dtype=torch.bfloat16)
        res = f(**a, output=good)
        assert res is good or res[0] is good, name


def case_output_width(release: str, make: Make) -> None:
    """The width of ``output``: ``hidden`` (unpacked), or ``valid_hidden_size`` where
    given (0.7.0+); FP4 entry points also write a narrower buffer from 0.6.0 (their
    launcher takes ``output.size(1)``; 0.5.x writes ``hidden`` columns, so a narrower
    buffer is refused there, naming 0.6.0)."""
    narrow = torch.empty(T, H // 2, dtype=torch.bfloat16)
    for name in TRTLLM:
        if not exists(release, name):
            continue
        f, spy, _ = make(name)
        a = args(name)
        if name.startswith("trtllm_fp4"):
            if at_least(place(release), "0.6.0"):
                assert f(**a, output=narrow)[0] is narrow, name
            else:
                with pytest.raises(errors.UnsupportedParameterError) as ei:
                    f(**a, output=narrow)
                assert ei.value.minimum == "0.6.0" and ei.value.parameter == "output"
        if "valid_hidden_size" not in ENTRIES[name].params:
            continue
        if has(release, name, "valid_hidden_size"):
            f(**a, output=narrow, valid_hidden_size=H // 2)
            assert spy.raw_kwargs[-1]["output"] is narrow, name
        else:
            with pytest.raises(errors.UnsupportedParameterError):
                f(**a, output=narrow, valid_hidden_size=H // 2)
        n_calls = len(spy.calls)
        with pytest.raises(errors.InvalidArgumentError, match="valid_hidden_size"):
            f(**a, output=torch.empty(T, H, dtype=torch.bfloat16), valid_hidden_size=H // 2)
        assert len(spy.calls) == n_calls, name


def case_cutlass_fused_finalize(release: str, make: Make) -> None:
    f, spy, adapter = make("cutlass_fused_moe")
    a = args("cutlass_fused_moe")
    present = "use_fused_finalize" in adapter.present
    f(**a)
    sent = spy.raw_kwargs[-1]
    if not present:
        assert "use_fused_finalize" not in sent
        return
    resolved = not at_least(place(release), "0.7.4")
    assert sent.get("use_fused_finalize", None) == (True if resolved else None)
    torch.use_deterministic_algorithms(True)
    try:
        f(**a)
    finally:
        torch.use_deterministic_algorithms(False)
    assert spy.raw_kwargs[-1].get("use_fused_finalize") == (False if resolved else None)
    f(**a, use_fused_finalize=False)
    assert spy.raw_kwargs[-1]["use_fused_finalize"] is False


def case_seed_mxfp4_call_shape(release: str, make: Make) -> None:
    """vLLM's test_trtllm_gen_mxfp4_fused_moe before its FlashInfer 0.6.8.post1 upgrade:
    keywords incl. ``tile_tokens_dim``, ``routing_method_type=1``, mxfp8 activations
    with the flat 1-D scale, ``[0]`` of the result; must mean the same on every release."""
    name = "trtllm_fp4_block_scale_moe"
    f, spy, adapter = make(name)
    a = args(name, mxfp8=True)
    flat = a["hidden_states_scale"].view(F8).reshape(-1)
    a["hidden_states_scale"] = flat
    a["routing_logits"] = a["routing_logits"].to(torch.bfloat16)
    alpha = torch.full((8,), 1.702)
    out = f(
        **{**a, "gemm1_alpha": alpha, "gemm1_beta": torch.ones(8), "gemm1_clamp_limit": None},
        tile_tokens_dim=8,
        routing_method_type=1,  # renormalize
        do_finalize=True,
    )[0]
    assert out.shape == (T, H)
    sent = spy.raw_kwargs[-1]
    assert sent["hidden_states_scale"].shape == (T, H // 32)
    assert sent["hidden_states_scale"].data_ptr() == flat.data_ptr()
    assert sent["routing_method_type"] == release_value(
        adapter, "routing_method_type", "Renormalize"
    )
    assert sent["gemm1_alpha"] is alpha and sent["do_finalize"] is True
    assert ("tile_tokens_dim" in sent) == (not at_least(place(release), "0.6.0"))
    act = adapter.spelling["activation_type"]
    assert sent[act] == release_value(adapter, "activation_type", "Swiglu")


# arguments an enum member needs besides itself (its natural companions)
def _companions(name: str, param: str, member: str, a: dict[str, Any]) -> dict[str, Any]:
    if member == "DeepSeekV3" and "routing_logits" in a:
        return {"routing_logits": a["routing_logits"].float()}
    if member == "MxFp8":
        return {"hidden_states_scale": torch.zeros(T, H // 32, dtype=torch.uint8)}
    return {}


def case_every_enum_member_by_name(release: str, make: Make) -> None:
    """Every member of every enum parameter, on every entry point that has one: the
    release's own value for that name, or a typed error naming a newer release."""
    for name, entry in ENTRIES.items():
        if not exists(release, name):
            continue
        f, spy, adapter = make(name)
        base = args(name)
        for param, (stable_cls, _) in adapter.enums.items():
            if param == "hidden_states_scale_layout":
                continue  # linear only (case_fp4_scale_layouts)
            table = adapter.ns["_E_" + param]
            for m in getattr(enums, stable_cls):
                a = {**base, **_companions(name, param, m.name, base)}
                refused = m.name == "DeepSeekV3" and zero_route_scale(release, name)
                if m in table and not refused:
                    f(**a, **{param: m})
                    sent = spy.raw_kwargs[-1]
                    if adapter.spelling[param] not in sent:  # at its default: omitted
                        assert m is entry.params[param].default, (name, m)
                        continue
                    got, want = sent[adapter.spelling[param]], table[m]
                    assert got == want and (type(got) is int or got.name == want.name), (name, m)
                    continue
                n_calls = len(spy.calls)
                with pytest.raises(errors.UnsupportedParameterError) as ei:
                    f(**a, **{param: m})
                e = ei.value
                assert e.parameter == param and len(spy.calls) == n_calls, (name, m)
                assert not at_least(place(release), e.minimum), (name, m, e.minimum)


def case_deepseek_routing_needs_a_route_scale(release: str, make: Make) -> None:
    """``trtllm_bf16_moe`` with DeepSeekV3 routing on 0.5.3 (launcher leaves
    ``routed_scaling_factor`` at 0: zero output) is refused before the launch, as the
    stable member and as FlashInfer's integer; other methods and other releases run."""
    name = "trtllm_bf16_moe"
    if not exists(release, name):
        return
    f, spy, adapter = make(name)
    a = {**args(name), "routing_logits": args(name)["routing_logits"].float()}
    dsv3 = release_value(adapter, "routing_method_type", "DeepSeekV3")
    for given in (RoutingMethodType.DeepSeekV3, int(dsv3)):
        n_calls = len(spy.calls)
        if zero_route_scale(release, name):
            with pytest.raises(errors.UnsupportedParameterError, match="zeros") as ei:
                f(**a, routing_method_type=given)
            assert ei.value.minimum == "0.6.0" and len(spy.calls) == n_calls, given
            assert ei.value.parameter == "routing_method_type"
        else:
            f(**a, routing_method_type=given)
            assert int(spy.raw_kwargs[-1]["routing_method_type"]) == int(dsv3)
    f(**a, routing_method_type=RoutingMethodType.Renormalize)  # never reads the scale
    assert spy.raw_kwargs[-1]["routing_method_type"] == release_value(
        adapter, "routing_method_type", "Renormalize"
    )


CASES = [
    case_deepseek_routing_needs_a_route_scale,
    case_every_enum_member_by_name,
    case_positional_and_keyword_agree,
    case_explicit_defaults_always_forwarded,
    case_routing_method_by_name,
    case_raw_ints,
    case_activation_never_gelu_from_legacy_zero,
    case_parameters_the_release_lacks,
    case_fp4_scale_layouts,
    case_fp8_block_scale_layouts,
    case_routing_logits_dtype,
    case_metadata_errors_before_launch,
    case_output_buffer,
    case_output_emulated_unfinalized,
    case_output_buffer_checked,
    case_output_width,
    case_cutlass_fused_finalize,
    case_seed_mxfp4_call_shape,
]
