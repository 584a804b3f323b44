"""``fi_compat.decode`` / ``fi_compat.prefill`` on every release 0.2.0.post1-0.7.4, against
each release's real signature (the snapshot read from its wheel or sdist; for 0.6.15+
decode ``plan`` the ``_plan_impl`` its public forwarder passes ``**kwargs`` to)."""

from __future__ import annotations

import ast

import pytest
import torch

import fi_compat
from fi_compat import _snapshot_io as snapshots
from fi_compat import errors
from fi_compat._core import OMIT
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES, at_least, place
from support.attention_cases import CELLS, DEC, ENTRIES, PAGED, RAGGED, Receiver, args, facade, same
from support.spy import stub

LN2 = 0.6931471805599453094  # flashinfer/utils.py ln2


@pytest.mark.parametrize(("key", "release"), CELLS)
def test_the_adapter_forwards_exactly_the_release_parameters(key: str, release: str) -> None:
    entry, _ = ENTRIES[key]
    params = snapshots.params(entry, release)
    assert params is not None
    named = [p for p in params if p[1] in ("po", "pk", "ko") and p[0] != "self"]
    a = entry.select(Distribution("flashinfer-python", release, "<test>", ""))
    sent = {a.spelling[n] for n in a.present}
    # every stable parameter the release has goes by its name there; a parameter of the
    # release that no stable one maps to (0.2.0.post1's ``jit_module``, replaced by
    # ``jit_args``) is optional, left at the release's default
    assert sent <= {p[0] for p in named}, (key, release)
    assert all(p[2] is not None for p in named if p[0] not in sent), (key, release)
    assert all(p[1] in ("pk", "ko") for p in named)  # every one can go by keyword
    for name, _kind, default, _ann in named:
        stable = next((n for n in a.present if a.spelling[n] == name), None)
        if stable is None:
            continue
        p = entry.params[stable]
        normalized = {n for _, outs, _ in a.normalizers for n in outs}
        if default is None or p.explicit or p.default is OMIT or stable in normalized:
            continue  # required, always forwarded, or left out unless given
        try:
            value = ast.literal_eval(default)
        except ValueError:
            continue  # an expression (torch.float16 ...): compared by the live suite
        # left at the stable default, the parameter means what the release's default means
        assert p.default == value or p.hint, (key, release, name, default, p.default)


@pytest.mark.parametrize(("key", "release"), CELLS)
def test_keyword_and_positional_calls_forward_each_value_by_its_name(
    key: str, release: str
) -> None:
    entry, _ = ENTRIES[key]
    kw = args(key)
    recv = (Receiver(),) if entry.receiver else ()
    f, spy = facade(key, release)
    a = f.adapter
    res = f(*recv, **kw)
    for n, v in kw.items():
        assert same(spy.last[a.spelling[n]], v), (key, release, n)
    if entry.receiver:
        assert spy.receivers == list(recv)
    # the stable positional order, as far as the call's parameters allow
    pos = [n for n in entry.order if not entry.params[n].keyword_only]
    lead = []
    for n in pos:
        if n not in kw:
            break
        lead.append(n)
    f2, spy2 = facade(key, release)
    f2(*recv, *(kw[n] for n in lead), **{k: v for k, v in kw.items() if k not in lead})
    assert spy2.calls[-1].keys() == spy.calls[-1].keys()
    for n, v in kw.items():
        assert same(spy2.last[a.spelling[n]], v), (key, release, n)
    if key.endswith(".run") and kw.get("return_lse"):
        _out, lse = res
        q = kw["q_nope"] if "q_nope" in kw else kw["q"]
        assert lse.dtype == torch.float32 and tuple(lse.shape) == tuple(q.shape[:2])


@pytest.mark.parametrize("release", KNOWN_RELEASES)
def test_plan_written_positionally_for_0_5_3_keeps_sm_scale_on_every_release(
    release: str,
) -> None:
    """0.6.0 inserted ``o_data_type`` before ``data_type`` in decode ``plan``: a 0.5.x
    positional call would put its ``sm_scale`` into ``rope_scale`` (vLLM moved every call
    to keywords; FlashInfer 0.6.15's forwarder still maps extras in 0.6.0's order).
    Through ``written_for("0.5.3")`` it means what it meant on 0.5.3, everywhere; the
    stable ``plan`` refuses it."""
    f, spy = facade(f"{DEC}.plan", release)
    w = fi_compat.written_for("0.5.3")
    from fi_compat._core.written import binder

    plan = binder(f, "0.5.3")
    kw = args(f"{DEC}.plan")
    head = [kw[n] for n in ("indptr", "indices", "last_page_len")] + [8, 2, 64, 16]
    # 0.5.3: pos_encoding_mode, window_left, logits_soft_cap, q_data_type, kv_data_type,
    # data_type, sm_scale, rope_scale, rope_theta, non_blocking
    tail = ["NONE", -1, None, torch.bfloat16, torch.bfloat16, None, 0.125, None, None, True]
    plan(Receiver(), *head, *tail)
    a = f.adapter
    assert spy.last["sm_scale"] == 0.125 and spy.last["rope_scale"] is None
    if "o_data_type" in a.present:
        assert spy.last["o_data_type"] is None
    with pytest.raises(errors.PositionalMismatchError, match="written_for"):
        f(Receiver(), *head, *tail)
    assert repr(w).startswith("fi_compat.written_for")


@pytest.mark.parametrize("release", [r for r in KNOWN_RELEASES if at_least(place(r), "0.2.1")])
def test_prefill_plan_in_0_5_order_fails_by_the_positional_rule(release: str) -> None:
    """A 0.5.x positional prefill ``plan`` passes ``non_blocking`` (a bool) where 0.6.0+
    have ``o_data_type``.  Slot 8 itself moved (``custom_mask`` before 0.2.1), so
    ``plan`` takes 8 positional arguments: the same typed error on every release,
    naming written_for, before any kind is looked at."""
    f, spy = facade(f"{PAGED}.plan", release)
    kw = args(f"{PAGED}.plan")
    head = [kw[n] for n in list(kw)[:8]]
    # 0.5.3 order from head_dim_vo: ..., rope_theta, q_data_type, kv_data_type, non_blocking
    tail = [None, None, None, True, "NONE", False, 0.125, -1, None, None, None]
    tail += [torch.bfloat16, torch.bfloat16, True]
    with pytest.raises(errors.PositionalMismatchError, match=r"at most 8 .*written_for"):
        f(Receiver(), *head, *tail)
    assert spy.calls == []


@pytest.mark.parametrize("release", KNOWN_RELEASES)
def test_lse_base_and_layout_mean_0_7_4s_forms_on_every_release(release: str) -> None:
    for key in (f"{PAGED}.run", f"{RAGGED}.run"):
        kw = args(key)
        f, spy = facade(key, release)
        kw["return_lse"] = True
        _out, lse = f(Receiver(), **kw)
        base = torch.arange(lse.numel(), dtype=torch.float32).reshape(lse.shape)
        assert torch.equal(lse, base)
        _, ln = f(Receiver(), **kw, lse_base="ln")
        assert torch.equal(ln, base * LN2)
        _, hn = f(Receiver(), **kw, lse_layout="HN")
        assert torch.equal(hn, base.t().contiguous()) and hn.is_contiguous()
        buf = torch.empty(lse.shape[1], lse.shape[0])
        _, hn2 = f(Receiver(), **kw, lse_layout="HN", lse_base="ln", lse=buf)
        assert hn2 is buf and torch.equal(buf, base.t() * LN2)  # copied in before 0.2.1.post2
        if not at_least(place(release), "0.7.1"):
            assert "lse_base" not in spy.last and "lse_layout" not in spy.last


@pytest.mark.parametrize("release", KNOWN_RELEASES)
def test_multi_token_decode_needs_0_7_0(release: str) -> None:
    f, spy = facade(f"{DEC}.plan", release)
    kw = args(f"{DEC}.plan")
    if at_least(place(release), "0.7.0"):
        f(Receiver(), **kw, q_len_per_req=4)
        assert spy.last["q_len_per_req"] == 4
        return
    with pytest.raises(errors.UnsupportedParameterError, match=r">=0\.7\.0"):
        f(Receiver(), **kw, q_len_per_req=4)
    assert spy.calls == []
    f(Receiver(), **kw, q_len_per_req=1)  # the default everywhere


@pytest.mark.parametrize(
    ("key", "param", "value", "first"),
    [
        (f"{DEC}.run", "sinks", "tensor", "0.2.10"),
        (f"{DEC}.run", "skip_softmax_threshold_scale_factor", 0.5, "0.6.4"),
        (f"{DEC}.plan", "o_data_type", torch.float16, "0.6.0"),
        (f"{DEC}.plan", "window_right", 4, "0.6.15"),
        (f"{PAGED}.run", "sinks", "tensor", "0.2.10"),
        (f"{PAGED}.plan", "uniform_q_len", 3, "0.7.2.post1"),
        (f"{RAGGED}.run", "o_scale", 2.0, "0.6.0"),
        ("single_prefill_with_kv_cache", "o_dtype", torch.float16, "0.2.6"),
    ],
)
def test_a_parameter_the_release_lacks_is_refused_naming_its_first_release(
    key: str, param: str, value: object, first: str
) -> None:
    entry, _ = ENTRIES[key]
    recv = (Receiver(),) if entry.receiver else ()
    v = torch.zeros(8) if value == "tensor" else value
    for release in KNOWN_RELEASES:
        f, spy = facade(key, release)
        if at_least(place(release), first):
            f(*recv, **args(key), **{param: v})
            assert same(spy.last[param], v)
            continue
        with pytest.raises(errors.UnsupportedParameterError, match=first.replace(".", r"\.")):
            f(*recv, **args(key), **{param: v})
        assert spy.calls == []


def test_renamed_parameters_reach_the_release_under_its_name() -> None:
    f, spy = facade(f"{DEC}.run", "0.6.7")
    sf = torch.zeros(4)
    f(Receiver(), **args(f"{DEC}.run"), kv_cache_sf=sf)
    assert spy.last["kv_block_scales"] is sf  # 0.6.7's name; 0.6.8 renamed it
    f, spy = facade(f"{PAGED}.plan", "0.2.0.post1")
    f(Receiver(), **args(f"{PAGED}.plan"), use_fp16_qk_reduction=True)
    assert spy.last["head_dim"] == 64 and spy.last["allow_fp16_qk_reduction"] is True


def test_run_takes_no_extra_positional_arguments() -> None:
    """From 0.2.0.post2 FlashInfer hands a third positional argument to a custom JIT
    module only (0.2.0.post1's ``q_scale`` slot): the stable ``run`` refuses it."""
    for release in ("0.2.0.post1", "0.2.0.post2", "0.7.4"):
        f, spy = facade(f"{DEC}.run", release)
        kw = args(f"{DEC}.run")
        with pytest.raises(errors.PositionalMismatchError):
            f(Receiver(), kw["q"], kw["paged_kv_cache"], 0.5)
        assert spy.calls == []


def test_non_blocking_is_forwarded_explicitly_where_the_default_was_false() -> None:
    f, spy = facade(f"{DEC}.plan", "0.2.3")
    f(Receiver(), **args(f"{DEC}.plan"))
    assert spy.raw_kwargs[-1]["non_blocking"] is True  # 0.2.3's own default: False
    f, spy = facade(f"{RAGGED}.plan", "0.2.3")  # no non_blocking before 0.2.6: a hint
    f(Receiver(), **args(f"{RAGGED}.plan"), non_blocking=False)
    assert "non_blocking" not in spy.raw_kwargs[-1]


@pytest.mark.parametrize("release", KNOWN_RELEASES)
def test_caller_buffers_are_written_on_every_release(release: str) -> None:
    key = f"{DEC}.run"
    kw = args(key)
    f, spy = facade(key, release)
    out = torch.full((2, 8, 64), 7.0, dtype=torch.bfloat16)
    lse = torch.full((2, 8), 7.0)
    o, got = f(Receiver(), **kw | {"return_lse": True}, out=out, lse=lse)
    assert o is out and got is lse and torch.equal(out, torch.zeros_like(out))
    assert torch.equal(lse, torch.arange(16, dtype=torch.float32).reshape(2, 8))
    lse.fill_(7.0)
    o = f(Receiver(), **kw | {"return_lse": False}, lse=lse)  # written, not returned
    assert isinstance(o, torch.Tensor) and float(lse[1, 0]) == 8.0
    if not at_least(place(release), "0.2.1.post2"):
        assert "out" not in spy.last and "lse" not in spy.last


@pytest.mark.parametrize("release", ["0.2.0.post1", "0.5.3", "0.6.15", "0.7.4"])
def test_bad_input_gives_the_same_typed_error_before_any_call(release: str) -> None:
    run, spy = facade(f"{DEC}.run", release)
    kw = args(f"{DEC}.run")
    with pytest.raises(errors.InvalidArgumentError, match="q must be 3-D"):
        run(Receiver(), kw["q"][0], kw["paged_kv_cache"])
    with pytest.raises(errors.InvalidArgumentError, match="paged_kv_cache"):
        run(Receiver(), kw["q"], kw["paged_kv_cache"][0, 0])
    with pytest.raises(errors.InvalidArgumentError, match="return_lse"):
        run(Receiver(), kw["q"], kw["paged_kv_cache"], return_lse="yes")
    with pytest.raises(errors.InvalidArgumentError, match="sinks"):
        run(Receiver(), kw["q"], kw["paged_kv_cache"], sinks=3)
    plan, spy2 = facade(f"{DEC}.plan", release)
    pk = args(f"{DEC}.plan") | {"num_qo_heads": None}
    with pytest.raises(errors.MissingArgumentError, match="num_qo_heads"):
        plan(Receiver(), **pk)
    with pytest.raises(errors.InvalidArgumentError, match="pos_encoding_mode='ROPE'"):
        plan(Receiver(), **args(f"{DEC}.plan"), pos_encoding_mode="ROPE")
    assert spy.calls == [] and spy2.calls == []


@pytest.mark.parametrize("release", [r for r in KNOWN_RELEASES if not at_least(place(r), "0.4.0")])
def test_fast_decode_plan_before_0_4_0_is_the_full_plan(release: str) -> None:
    """No ``fast_decode_plan`` before 0.4.0: the wrapper's stable ``plan`` computes the
    same plan, with ``fast_decode_plan``'s dtype defaults (``data_type`` sets q's)."""
    from fi_compat import decode
    from fi_compat._adapters.decode import FAST_PLAN

    plan, spy = facade(f"{DEC}.plan", release)

    class Wrapper:  # stands in for the stable subclass of the release's wrapper
        _fi_compat_base = object

    Wrapper.plan = plan  # type: ignore[attr-defined]
    a = FAST_PLAN.select(Distribution("flashinfer-python", release, "<test>", ""))
    assert a.problem == "fallback"
    fast = a.build(stub(decode, "fast_decode_plan"))
    kw = args("fast_decode_plan")
    del kw["q_data_type"], kw["kv_data_type"]
    w = Wrapper()
    fast(w, **kw, data_type=torch.bfloat16)
    assert spy.receivers == [w]
    assert spy.last["q_data_type"] is torch.bfloat16 and spy.last["kv_data_type"] is torch.bfloat16
    assert spy.last["sm_scale"] == 0.125 and spy.last["window_left"] == 100
    plan(w, **kw, data_type=torch.bfloat16)  # plan's own defaults differ: q float16
    assert spy.last["q_data_type"] == "float16"
    with pytest.raises(errors.UnsupportedParameterError, match=r">=0\.7\.0"):
        fast(w, **kw, q_len_per_req=4)
    with pytest.raises(errors.InvalidArgumentError, match="num_qo_heads"):
        fast(w, **kw | {"num_qo_heads": "8"})
