"""Properties of every facade on every release, generated with hypothesis.

(a) A valid stable call (any release, any entry point, int32 or int64 index tensors,
    optional parameters at their default or a neutral value, any positional/keyword
    split of the positional prefix) reaches FlashInfer (a spy bound to the release's
    real signature) with the same values: the same tensor objects, or equal contents
    after the documented dtype normalisation.
(b) Replacing one checked argument with a wrongly typed value (None, a numpy-like
    object, a list, a str, a float, a tensor of the wrong rank) raises a FiCompatError
    before the spy is reached.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fi_compat import enums, errors
from fi_compat._core.table import OMIT, is_default
from fi_compat.registry import KNOWN_RELEASES, at_least, place
from support.bad_inputs import ArrayLike
from support.helpers import facade_for, inputs
from support.moe_helpers import ENTRIES, args, moe_facade
from support.spy import Spy, snapshot_signature

NAMES = ["gdn", *ENTRIES]
# derandomized (the same examples every CI run); FI_COMPAT_HYPOTHESIS_RANDOM=1 explores,
# FI_COMPAT_HYPOTHESIS_EXAMPLES sets how many
SETTINGS = settings(
    derandomize=os.environ.get("FI_COMPAT_HYPOTHESIS_RANDOM") is None,
    max_examples=int(os.environ.get("FI_COMPAT_HYPOTHESIS_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# optional parameters and the values that mean "as if not given" on every release
# (the default, a neutral value, or a hint); values here must be valid everywhere
OPTIONAL: dict[str, dict[str, list[Any]]] = {
    "gdn": {
        "scale": [None, 0.25],
        "output_final_state": [False, True],
        "use_qk_l2norm_in_kernel": [False, True],
        "use_cp": ["auto", False],
        "backend": ["auto", "flashinfer"],
        "max_seqlen": [None, 7],
        "checkpoint_every_n_tokens": [0],
        "gate_domain": ["linear"],
        "beta_is_logit": [False],
        "cu_seqlens_cpu": [None, [0, 5, 12]],
    },
    "trtllm": {
        "do_finalize": [True],
        "norm_topk_prob": [True],
        "num_fused_shared_experts": [None, 0],
        "tune_max_num_tokens": [8192, 4096],
        "enable_pdl": [None, False],
        "routing_method_type": [enums.RoutingMethodType.Renormalize],
        "activation_type": [enums.ActivationType.Swiglu],
    },
    "cutlass_fused_moe": {
        "backend": ["cutlass"],
        "swizzled_input_sf": [True],
        "tune_max_num_tokens": [8192, 4096],
        "activation_type": [enums.ActivationType.Swiglu],
    },
}
# index tensors whose integer dtype the caller chooses
INDEX = {"cu_seqlens", "topk_ids", "token_selected_experts"}


def build(name: str, release: str) -> tuple[Any, Any, Any]:
    """(facade, spy, adapter) for ``name`` on ``release``."""
    if name == "gdn":
        spy = Spy(snapshot_signature(release))
        fn, adapter = facade_for(release, spy)
        return fn, spy, adapter
    return moe_facade(name, release)


def entry_of(name: str) -> Any:
    return build(name, "0.7.4")[2].entry


ENTRY = {n: entry_of(n) for n in NAMES}


def base_args(name: str, index_dtype: torch.dtype) -> dict[str, Any]:
    kw = inputs(cu_dtype=index_dtype) if name == "gdn" else args(name)
    for n in INDEX & kw.keys():
        kw[n] = kw[n].to(index_dtype)
    return kw


def releases_of(name: str) -> list[str]:
    return [r for r in KNOWN_RELEASES if at_least(place(r), ENTRY[name].since)]


def optional_of(name: str) -> dict[str, list[Any]]:
    table = OPTIONAL.get("trtllm" if name.startswith("trtllm_") else name, {})
    params = ENTRY[name].params
    out = {}
    for n, values in table.items():
        p = params.get(n)
        if p is None:
            continue
        # only values this entry point's stable signature accepts (kinds differ per entry)
        ok = [v for v in values if p.enum or is_default(v, p.default) or _accepts(p, v)]
        if ok:
            out[n] = ok
    return out


def _accepts(p: Any, v: Any) -> bool:
    return p.kind is not None and p.kind.accepts(v, torch.Tensor)


@st.composite
def valid_calls(draw: Any) -> tuple[str, str, dict[str, Any], int]:
    name = draw(st.sampled_from(NAMES))
    release = draw(st.sampled_from(releases_of(name)))
    kw = base_args(name, draw(st.sampled_from([torch.int32, torch.int64])))
    for n, values in optional_of(name).items():
        if draw(st.booleans()):
            kw[n] = draw(st.sampled_from(values))
    positional = [n for n, p in ENTRY[name].params.items() if not p.keyword_only]
    return name, release, kw, draw(st.integers(0, len(positional)))


def split(name: str, kw: dict[str, Any], k: int) -> tuple[list[Any], dict[str, Any]]:
    """The first ``k`` positional slots positionally (defaults fill the gaps)."""
    entry = ENTRY[name]
    slots = [n for n, p in entry.params.items() if not p.keyword_only][:k]
    pos = [kw.get(n, entry.params[n].default) for n in slots]
    return pos, {n: v for n, v in kw.items() if n not in slots}


def same(adapter: Any, name: str, given: Any, sent: Any) -> bool:
    """``sent`` carries ``given``'s value as the release reads it."""
    p = adapter.entry.params[name]
    if p.enum is not None:
        stable = getattr(enums, p.enum)
        member = given if type(given) is stable else adapter.stable_member(name, given)
        return bool(sent == adapter.ns["_E_" + name][member])
    if isinstance(given, torch.Tensor):
        native = adapter.native_dtypes.get(name)
        if native is not None and given.dtype is not getattr(torch, native):
            want = getattr(torch, native)  # documented cast to the release's index dtype
            return sent.dtype is want and torch.equal(sent.long(), given.long())
        if name == "routing_logits" and sent is not given:  # documented dtype rule
            return sent.dtype in (torch.float32, torch.bfloat16) and torch.equal(
                sent.float(), given.float()
            )
        return sent is given
    if name == "_cache_permute_indices" and type(sent) is not dict:
        # documented: releases before 0.6.18 get a view of the caller's dict keyed as
        # 0.7.4 keys it (fi_compat._adapters.fused_moe.PermuteCache)
        return getattr(sent, "_d", None) is given
    return type(sent) is type(given) and bool(sent == given)


@SETTINGS
@given(valid_calls())
def test_valid_calls_reach_flashinfer_with_equal_values(
    call: tuple[str, str, dict[str, Any], int],
) -> None:
    name, release, kw, k = call
    f, spy, adapter = build(name, release)
    pos, rest = split(name, kw, k)
    f(*pos, **rest)
    assert len(spy.calls) == 1  # the spy bound the call to the release's signature
    sent = spy.raw_kwargs[-1]
    spelled = set(adapter.spelling.values())
    rewritten: set[str] = set()
    qk = adapter.entry.emulations.get("qk_l2norm")
    if (
        qk is not None
        and qk.needed(adapter, {**kw, "use_qk_l2norm_in_kernel": True})
        and kw.get("use_qk_l2norm_in_kernel")
    ):
        # documented: q and k normalised by fi_compat, the flag sent as False
        assert sent["use_qk_l2norm_in_kernel"] is False, (name, release)
        rewritten = {"q", "k", "use_qk_l2norm_in_kernel"}
    for n, v in kw.items():
        if n in rewritten:
            continue
        if n in adapter.absent:
            assert n not in sent or n in spelled, (name, release, n)
            continue
        rname = adapter.spelling[n]
        if rname in sent:
            assert same(adapter, n, v, sent[rname]), (name, release, n, v, sent[rname])
        else:  # left out only at its default (the release's default is the same)
            p = adapter.entry.params[n]
            assert v is p.default or v is OMIT or is_default(v, p.default), (name, release, n)


# -- (b) invalid calls ----------------------------------------------------------------

# tensors whose rank the metadata checks pin
RANKED = {
    "q": 3,
    "k": 3,
    "v": 3,
    "cu_seqlens": 1,
    "g": 2,
    "beta": 2,
    "routing_logits": 2,
    "topk_ids": 2,
    "hidden_states": 2,
    "input": 2,
    "token_selected_experts": 2,
    "token_final_scales": 2,
}
POOL: list[Any] = [None, ArrayLike(4, 8), [[1, 2]], "x", 1.5, "tensor of the wrong rank"]


def checked_params(name: str) -> list[str]:
    """The parameters fi_compat checks on every path: the metadata checks' tensors and
    every parameter of a checkable kind (scalars, enums, literals and tensors)."""
    e = ENTRY[name]
    out = list(e.validate_args)
    for n, p in e.params.items():
        if n not in out and p.kind is not None and not p.own:
            out.append(n)
    return out


def invalid(name: str, param: str, bad: Any) -> bool:
    """Whether ``bad`` is outside what ``param`` accepts."""
    p = ENTRY[name].params[param]
    if bad is None:
        return p.default is not None and not (p.kind is not None and p.kind.nullable)
    if isinstance(bad, torch.Tensor):
        return param in RANKED or p.kind is None or not p.kind.tensor
    if p.kind is None:  # topk_ids: a tensor or an (ids, weights) pair
        return True
    if p.kind.enum is not None:
        return True
    return not p.kind.accepts(bad, torch.Tensor)


@st.composite
def invalid_calls(draw: Any) -> tuple[str, str, str, Any]:
    name = draw(st.sampled_from([n for n in NAMES if checked_params(n)]))
    release = draw(st.sampled_from(releases_of(name)))
    param = draw(st.sampled_from(checked_params(name)))
    bad = draw(st.sampled_from(POOL))
    if bad == "tensor of the wrong rank":
        bad = torch.zeros((2,) * (RANKED.get(param, 1) + 1))
    if not invalid(name, param, bad):
        from hypothesis import reject

        reject()
    return name, release, param, bad


@SETTINGS
@given(invalid_calls(), st.sampled_from([torch.int32, torch.int64]))
def test_invalid_calls_are_refused_before_flashinfer(
    call: tuple[str, str, str, Any], index_dtype: torch.dtype
) -> None:
    name, release, param, bad = call
    f, spy, _ = build(name, release)
    kw = {**base_args(name, index_dtype), param: bad}
    with pytest.raises(errors.FiCompatError):
        f(**kw)
    assert spy.calls == [] and spy.raw_kwargs == []
