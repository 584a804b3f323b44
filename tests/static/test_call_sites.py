"""Call sites as engines write them: engine-side IntEnum members, None or wrongly typed
scalars, positional calls in an older release's order, routed (ids, weights) pairs.

Every facade is built for the release under test and calls a spy bound to that
release's real signature (read statically from its wheel), on all 43 releases from 0.5.0 where
the entry point exists.
"""

from __future__ import annotations

import enum
from typing import Any

import pytest
import torch

from fi_compat import errors
from fi_compat._core import facts
from fi_compat._core.written import binder
from fi_compat.enums import ActivationType, GatedActType, RoutingMethodType
from fi_compat.registry import KNOWN_RELEASES, at_least, place
from support.moe_helpers import ENTRIES, MOE_RELEASES, E, K, T, args, moe_facade, release_value


class RoutingMethodTypeOfAnEngine(enum.IntEnum):
    """An engine's own copy of RoutingMethodType, frozen at 0.6.7's integers (vLLM
    defines one in ``vllm/model_executor/layers/fused_moe/config.py``)."""

    Default = 0
    Renormalize = 1
    DeepSeekV3 = 2
    Llama4 = 3
    RenormalizeNaive = 4
    TopK = 5
    Unspecified = 6  # 8 in 0.6.8, 9 in 0.6.11, 10 in 0.6.18


class PlainInt(int):
    """An int subclass with no member name (e.g. a config system's typed int)."""


FP4 = "trtllm_fp4_block_scale_moe"
ROUTERS = [n for n in ENTRIES if n.startswith("trtllm_") and "routed" not in n]


@pytest.mark.parametrize("release", MOE_RELEASES)
def test_engine_intenum_members_mean_their_name(release: str) -> None:
    f, spy, adapter = moe_facade(FP4, release)
    for member in RoutingMethodTypeOfAnEngine:
        if member.name == "Unspecified" and release == "0.5.0":
            continue
        f(**args(FP4), routing_method_type=member)
        got = spy.raw_kwargs[-1]["routing_method_type"]
        assert got == release_value(adapter, "routing_method_type", member.name), member


@pytest.mark.parametrize("release", ["0.5.0", "0.6.8", "0.7.4"])
def test_int_subclass_is_taken_by_value_where_the_integer_is_stable(release: str) -> None:
    f, spy, adapter = moe_facade(FP4, release)
    f(**args(FP4), routing_method_type=PlainInt(1))
    got = spy.raw_kwargs[-1]["routing_method_type"]
    assert got == release_value(adapter, "routing_method_type", "Renormalize")
    with pytest.raises(errors.InvalidArgumentError, match="meant different members"):
        f(**args(FP4), routing_method_type=PlainInt(6))  # Unspecified, later Sigmoid...
    assert len(spy.calls) == 1


@pytest.mark.parametrize("release", MOE_RELEASES)
@pytest.mark.parametrize(
    ("param", "value", "error"),
    [
        ("routing_method_type", None, errors.InvalidArgumentError),
        ("activation_type", None, errors.InvalidArgumentError),
        ("num_experts", None, errors.InvalidArgumentError),
        ("top_k", 2.0, errors.InvalidArgumentError),
        ("do_finalize", None, errors.MissingArgumentError),
        ("do_finalize", 1, errors.InvalidArgumentError),
        ("tune_max_num_tokens", "8192", errors.InvalidArgumentError),
        ("local_expert_offset", torch.zeros(1), errors.InvalidArgumentError),
    ],
)
def test_wrongly_typed_scalars_are_typed_errors_before_the_call(
    release: str, param: str, value: Any, error: type[Exception]
) -> None:
    for name in ROUTERS:
        if not at_least(place(release), ENTRIES[name].since) or param not in ENTRIES[name].params:
            continue
        f, spy, _ = moe_facade(name, release)
        with pytest.raises(error, match=param):
            f(**{**args(name), param: value})
        assert spy.calls == [], (name, release)


def _positional(
    name: str, release: str, base: dict[str, Any], upto: str | None = None
) -> list[Any]:
    """A positional call in ``release``'s order up to the last test input: the inputs
    where the release has the parameter, the release's own default (as model code
    written for it passes it to reach a later slot) in between."""
    from fi_compat._core import OMIT
    from support.spy import UNSET, default_value

    sig = facts.signature(ENTRIES[name], release)
    assert sig is not None
    out = []
    names = [q[0] for q in sig if q[1] in ("po", "pk")]
    last = names.index(upto) if upto else max(i for i, n in enumerate(names) if n in base)
    for pname, kind, default, _ in sig:
        if kind not in ("po", "pk") or names.index(pname) > last:
            continue
        if pname in base:
            out.append(base[pname])
        elif pname == "gated_act_type":
            out.append(GatedActType.SwiGlu)
        elif pname == "tile_tokens_dim":
            out.append(8)
        elif pname == "routing_method_type":
            out.append(RoutingMethodType.Renormalize)
        elif default is None:
            raise AssertionError((name, release, pname))
        else:
            value = default_value(default, release)
            p = ENTRIES[name].params.get(pname)
            out.append(OMIT if value is UNSET else p.default if p is not None and p.enum else value)
    return out


def test_a_positional_call_in_another_release_order_fails_loudly() -> None:
    """0.5.3-order fp4 call (tile_tokens_dim slot after routed_scaling_factor): the
    stable facade refuses it on every release instead of binding it silently."""
    for target in ("0.6.9", "0.6.13", "0.7.4"):
        f, spy, _ = moe_facade(FP4, target)
        pos = _positional(FP4, "0.5.3", args(FP4), upto="do_finalize")
        with pytest.raises((errors.InvalidArgumentError, errors.PositionalMismatchError)):
            f(*pos)
        assert spy.calls == []


def _releases(name: str) -> list[str]:
    e = ENTRIES[name]
    return [r for r in KNOWN_RELEASES if at_least(place(r), e.since)]


TARGETS = ["0.5.0", "0.6.0", "0.6.7", "0.6.11", "0.6.13", "0.6.16", "0.6.18", "0.7.0", "0.7.4"]


@pytest.mark.parametrize("name", list(ENTRIES))
def test_written_for_binds_each_release_order_on_every_target(name: str) -> None:
    """For every release X of the entry point, a positional call in X's order through
    ``written_for(X)`` reaches each target release with the inputs on the right
    parameters (the spy binds against the target's real signature)."""
    base = args(name)
    for target in TARGETS:
        if not at_least(place(target), ENTRIES[name].since):
            continue
        f, spy, adapter = moe_facade(name, target)
        for x in _releases(name):
            bound = binder(f, x)
            bound(*_positional(name, x, base))
            sent = spy.raw_kwargs[-1]
            for n, v in base.items():
                rname = adapter.spelling[n]
                if isinstance(v, torch.Tensor):
                    assert sent[rname] is v, (name, x, target, n)
                else:
                    assert sent[rname] == v, (name, x, target, n)


def test_written_for_keeps_the_old_names_and_defaults() -> None:
    f, spy, adapter = moe_facade(FP4, "0.7.4")
    old = binder(f, "0.5.3")
    old(**args(FP4), gated_act_type=GatedActType.GeGlu, tile_tokens_dim=8)
    sent = spy.raw_kwargs[-1]
    assert sent["activation_type"] == release_value(adapter, "activation_type", "Geglu")
    with pytest.raises(errors.PositionalMismatchError, match=r"0\.5\.3"):
        old(*_positional(FP4, "0.5.3", args(FP4), upto="tune_max_num_tokens"), None)


def test_written_for_maps_gated_act_type_integers_by_its_old_meaning() -> None:
    """0.5.x code passes gated_act_type=0 (SwiGlu); on 0.7.4 that is Swiglu, not Gelu."""
    f, spy, adapter = moe_facade(FP4, "0.7.4")
    binder(f, "0.5.3")(**args(FP4), gated_act_type=0)
    assert spy.raw_kwargs[-1]["activation_type"] == release_value(
        adapter, "activation_type", ActivationType.Swiglu.name
    )


EMITTED, EMITTED_024 = "maybe_output_emitted_draft_token_num", "maybe_output_emitted_token_num"


@pytest.mark.parametrize("installed", ["0.2.3", "0.2.5", "0.7.4"])
def test_written_for_refuses_one_parameter_given_twice(installed: str) -> None:
    """0.2.4's ``maybe_output_emitted_token_num`` is the stable
    ``maybe_output_emitted_draft_token_num`` (renamed in 0.2.5): code written for 0.2.4
    that passes both, or a keyword beside the same positional slot, would lose one
    buffer; both spellings are named, nothing is called."""
    from support.sampling_cases import args as sampling_args
    from support.sampling_cases import facade as sampling_facade

    f, spy = sampling_facade("chain_speculative_sampling", installed)
    kw = sampling_args("chain_speculative_sampling")
    a, b = torch.zeros(4, dtype=torch.int32), torch.zeros(4, dtype=torch.int32)
    old = binder(f, "0.2.4")
    with pytest.raises(errors.InvalidArgumentError) as ei:
        old(**kw, **{EMITTED_024: a, EMITTED: b})
    assert f"keywords {EMITTED_024!r} and {EMITTED!r} are one parameter" in str(ei.value)
    pos = [*kw.values(), None, a]  # slot 5: 0.2.4's maybe_output_emitted_token_num
    for k in (EMITTED, EMITTED_024):
        with pytest.raises(errors.InvalidArgumentError) as ei:
            old(*pos, **{k: b})
        msg = str(ei.value)
        assert f"keyword {k!r} and positional argument 5 ({EMITTED_024!r} in " in msg
        assert f"are one parameter ({EMITTED!r})" in msg
    assert spy.calls == []
    old(*pos)  # once is fine: the buffer reaches the release under its name
    assert spy.raw_kwargs[-1][EMITTED if installed != "0.2.3" else EMITTED_024] is a


def test_the_release_name_of_a_stable_parameter_beside_it_is_refused() -> None:
    """On 0.2.3/0.2.4 the stable facade forwards ``maybe_output_emitted_token_num`` as an
    extra keyword (the release's own name); beside the stable name one buffer would be
    dropped."""
    from support.sampling_cases import args as sampling_args
    from support.sampling_cases import facade as sampling_facade

    f, spy = sampling_facade("chain_speculative_sampling", "0.2.4")
    kw = sampling_args("chain_speculative_sampling")
    a, b = torch.zeros(4, dtype=torch.int32), torch.zeros(4, dtype=torch.int32)
    with pytest.raises(errors.InvalidArgumentError, match=f"{EMITTED!r} and {EMITTED_024!r}"):
        f(**kw, **{EMITTED: a, EMITTED_024: b})
    assert spy.calls == []
    f(**kw, **{EMITTED_024: b})  # alone: the release's name, as it is
    assert spy.raw_kwargs[-1][EMITTED_024] is b


def test_written_for_rejects_unknown_releases() -> None:
    import fi_compat

    with pytest.raises(errors.InvalidArgumentError, match=r"0\.9\.9"):
        fi_compat.written_for("0.9.9")
    f, _, _ = moe_facade("trtllm_bf16_routed_moe", "0.7.4")
    with pytest.raises(errors.UnsupportedFlashInferVersionError, match=r"0\.6\.5"):
        binder(f, "0.6.0")


ROUTED_PAIRS = {
    "trtllm_fp4_block_scale_routed_moe": "0.6.12",
    "trtllm_fp8_block_scale_routed_moe": "0.6.18",
    "trtllm_fp8_per_tensor_scale_routed_moe": "0.6.18",
    "trtllm_bf16_routed_moe": "0.6.18",
}


@pytest.mark.parametrize("name", list(ROUTED_PAIRS))
def test_routed_pairs_are_packed_where_the_release_takes_one_tensor(name: str) -> None:
    ids = torch.randint(0, E, (T, K), dtype=torch.int32)
    weights = torch.rand(T, K) * 2 - 1  # negative weights must not clobber the ids
    for release in _releases(name):
        f, spy, _ = moe_facade(name, release)
        f(**{**args(name), "topk_ids": (ids, weights)})
        got = spy.raw_kwargs[-1]["topk_ids"]
        if at_least(place(release), ROUTED_PAIRS[name]):
            assert type(got) is tuple and got[0] is ids and got[1] is weights, release
            continue
        assert isinstance(got, torch.Tensor) and got.dtype == torch.int32, release
        assert torch.equal(got >> 16, ids), release  # high 16 bits: the expert id
        low = (got & 0xFFFF).to(torch.int16).view(torch.bfloat16)
        assert torch.equal(low, weights.to(torch.bfloat16)), release


def test_pair_annotations_agree_with_the_packing_table() -> None:
    """The first release taking a pair is the first whose snapshot annotates one."""
    for name, since in ROUTED_PAIRS.items():
        first = next(
            r
            for r in _releases(name)
            if "Tuple"
            in next(q[3] for q in facts.signature(ENTRIES[name], r) or [] if q[0] == "topk_ids")
        )
        assert first == since, name


def test_enum_default_is_not_compared_by_eq() -> None:
    """A tensor where the default is a number goes to the general path and is refused
    with a typed error, never evaluated as a boolean (no host sync)."""
    f, spy, _ = moe_facade(FP4, "0.7.4")
    with pytest.raises(errors.InvalidArgumentError, match="tune_max_num_tokens"):
        f(**args(FP4), tune_max_num_tokens=torch.tensor([8192, 1]))
    assert spy.calls == []


def test_routing_method_none_on_releases_whose_default_is_an_enum() -> None:
    for release in ("0.6.8", "0.6.9", "0.7.4"):
        f, spy, _ = moe_facade(FP4, release)
        with pytest.raises(errors.InvalidArgumentError, match="routing_method_type"):
            f(**args(FP4), routing_method_type=None)
        assert spy.calls == []


def test_stable_enum_is_what_the_fast_path_takes() -> None:
    f, spy, adapter = moe_facade(FP4, "0.7.4")
    f(**args(FP4), routing_method_type=RoutingMethodType.TopK)
    assert spy.raw_kwargs[-1]["routing_method_type"] == release_value(
        adapter, "routing_method_type", "TopK"
    )


def test_written_for_keeps_a_default_whose_meaning_changed() -> None:
    """``use_fused_finalize`` defaults to True in 0.6.15-0.7.3 and to None ("fused unless
    deterministic") in 0.7.4: code written for 0.6.15 keeps True on 0.7.4, the stable
    call gets 0.7.4's choice; a default the target lacks is not carried (0.6.7)."""
    name = "cutlass_fused_moe"
    f, spy, _ = moe_facade(name, "0.7.4")
    torch.use_deterministic_algorithms(True)
    try:
        f(**args(name))
        assert spy.raw_kwargs[-1].get("use_fused_finalize") is None  # 0.7.4 decides
        binder(f, "0.6.15")(**args(name))
        assert spy.raw_kwargs[-1]["use_fused_finalize"] is True
    finally:
        torch.use_deterministic_algorithms(False)
    old, spy_old, _ = moe_facade(name, "0.6.7")
    binder(old, "0.6.15")(**args(name))
    assert "use_fused_finalize" not in spy_old.raw_kwargs[-1]
    pt, spy_pt, _ = moe_facade("trtllm_fp8_per_tensor_scale_moe", "0.5.0")
    binder(pt, "0.5.0")(**args("trtllm_fp8_per_tensor_scale_moe"))
    assert spy_pt.raw_kwargs[-1]["tile_tokens_dim"] == 8  # 0.5.0's default, as written
    pt(**args("trtllm_fp8_per_tensor_scale_moe"))
    assert spy_pt.raw_kwargs[-1]["tile_tokens_dim"] is None


def test_a_pool_without_output_state_is_one_error_on_every_release() -> None:
    """``state_indices`` with ``output_final_state=True`` and no ``output_state``: the same
    ``MissingArgumentError`` before the call where fi_compat emulates pools (CPU here,
    every release) and where the release serves them natively (SM90 on 0.7.x)."""
    from fi_compat._device import assume_capability
    from support.helpers import facade_for, inputs
    from support.spy import Spy, snapshot_signature

    for release in ("0.6.7", "0.6.16", "0.7.0", "0.7.4"):
        for cc in ((8, 0), (9, 0), (10, 0)):
            spy = Spy(snapshot_signature(release))
            fn, _ = facade_for(release, spy)
            x = inputs()
            with assume_capability(cc), pytest.raises(errors.MissingArgumentError, match="pool"):
                fn(
                    x["q"],
                    x["k"],
                    x["v"],
                    x["g"],
                    x["beta"],
                    None,
                    torch.zeros(4, 4, 16, 16),
                    True,
                    x["cu_seqlens"],
                    state_indices=torch.tensor([0, 1], dtype=torch.int32),
                )
            assert spy.calls == [], (release, cc)
