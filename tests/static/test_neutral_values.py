"""Neutral values (``Param(neutral=..., neutral_ref=...)``, ``docs/neutral-values.md``):
one test per row, over every release that lacks the parameter.

On each such release, through the generated facade function (its FlashInfer target a
spy bound to the release's snapshot signature) and through the reference
:meth:`Adapter.translate` (``plan()``), which must agree:

* each neutral value is accepted and reaches FlashInfer as nothing: the spy receives
  exactly what it receives for the same call without the parameter;
* a value of the stable kind that is neither the default nor neutral is still refused
  with ``UnsupportedParameterError`` naming the first release that takes it.

The rows of "Considered and left refused" are checked to stay refused the same way.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

import pytest
import torch
from test_property_paths import (
    ENTRIES,
    Call,
    Outcome,
    base_args,
    built,
    check,
    run_generated,
    same_value,
)

from conftest import ROOT
from fi_compat._core.adapter import Adapter
from fi_compat.errors import InvalidArgumentError, UnsupportedParameterError

sys.path.insert(0, str(ROOT / "tools"))
import docs_model  # tools/docs_model.py: the rows and the releases lacking each

ROWS = [(e.dotted, n) for e, n in docs_model.neutral_rows()]
RELEASE = re.compile(r"\b0\.\d+\.\d+")


def _other(dotted: str, name: str) -> Any:
    """A value of the stable kind that is neither the default nor a neutral value."""
    p = ENTRIES[dotted].params[name]
    k = p.kind
    assert k is not None and k.enum is None and not k.tensor, (dotted, name)
    taken = [p.default, *p.neutral]
    for v in (*k.literals, True, False, 7, 2.5, "other"):
        if k.accepts(v, type(None)) and not any(type(v) is type(t) and v == t for t in taken):
            return v
    raise AssertionError(f"{dotted}.{name}: no other value of its kind")


def _sent(dotted: str, release: str, kw: dict[str, Any]) -> Outcome:
    out = run_generated(dotted, release, Call((), kw))
    assert out.error is None and out.reached and out.sent is not None, (
        f"{dotted} on {release}: {kw.keys()}: {out.error!r}"
    )
    return out


def test_the_table_has_its_rows() -> None:
    names = {(d.rpartition(".")[2], n) for d, n in ROWS}
    for row in [  # the values vLLM's and SGLang's attention code pass on every release
        ("plan", "fixed_split_size"),
        ("__init__", "backend"),
    ]:
        assert row in names, row
    page = (ROOT / "docs" / "neutral-values.md").read_text()
    assert page == docs_model.neutral_values_page()  # rendered from these rows
    assert page.count("\n| [`fi_compat.") == len(ROWS)


@pytest.mark.parametrize(("dotted", "name"), ROWS, ids=[f"{d}.{n}" for d, n in ROWS])
def test_a_neutral_value_cites_a_release_and_is_not_the_default(dotted: str, name: str) -> None:
    p = ENTRIES[dotted].params[name]
    assert RELEASE.search(p.neutral_ref), f"{dotted}.{name}: neutral_ref cites no release"
    for v in p.neutral:
        assert not (type(v) is type(p.default) and v == p.default), (dotted, name, v)


@pytest.mark.parametrize(("dotted", "name"), ROWS, ids=[f"{d}.{n}" for d, n in ROWS])
def test_neutral_values_are_dropped_and_others_refused_where_the_release_lacks_it(
    dotted: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    general: list[dict[str, Any]] = []
    call_general = Adapter.call_general

    def counting(self: Adapter, kw: dict[str, Any], *a: Any, **k: Any) -> Any:
        general.append(kw)
        return call_general(self, kw, *a, **k)

    monkeypatch.setattr(Adapter, "call_general", counting)
    e = ENTRIES[dotted]
    p = e.params[name]
    lacking = docs_model.lacking(e, name)
    assert lacking, f"{dotted}.{name}: no release lacks it (the row is moot)"
    other = _other(dotted, name)
    for release in lacking:
        base = base_args(e)
        base.pop(name, None)
        plain = _sent(dotted, release, base)
        for v in p.neutral:
            call = {**base, name: v}
            general.clear()  # the plain call above bound torch (the first call's general path)
            got = _sent(dotted, release, call)
            assert not general, f"{release}: {name}={v!r} took the general path"
            assert plain.sent is not None and got.sent is not None
            assert got.sent.keys() == plain.sent.keys(), (release, v)
            assert all(same_value(got.sent[k], plain.sent[k]) for k in got.sent), (release, v)
            check(dotted, release, Call((), call))  # translate() agrees
        ref = check(dotted, release, Call((), {**base, name: other}))
        err = ref.error
        assert isinstance(err, UnsupportedParameterError), (release, other, err)
        _fn, a, _sig = built(dotted, release)
        first = p.value_since.get(other) or p.first_release_after(a.placement) or e.since
        assert (err.parameter, err.minimum) == (name, first), (release, other, str(err))
        assert f">={first}" in str(err)


NOT_NEUTRAL = [(d, n, v) for d, n, v, _why in docs_model.NOT_NEUTRAL]


@pytest.mark.parametrize(
    ("dotted", "name", "shown"), NOT_NEUTRAL, ids=[f"{d}.{n}" for d, n, _v in NOT_NEUTRAL]
)
def test_values_left_refused_stay_refused(dotted: str, name: str, shown: str) -> None:
    e = ENTRIES[dotted]
    lacking = docs_model.lacking(e, name)
    assert lacking, f"{dotted}.{name}: no release lacks it (drop the row)"
    base = base_args(e)
    # "= q_data_type": equal to another argument of the call
    other = shown.removeprefix("= ")
    value = base[other] if shown.startswith("= ") else ast.literal_eval(shown)
    assert value not in e.params[name].neutral
    for release in (lacking[0], lacking[-1]):
        ref = check(dotted, release, Call((), {**base, name: value}))
        assert isinstance(ref.error, UnsupportedParameterError), (release, ref.error)
        assert ref.error.parameter == name


# -- decode plan(fixed_split_size=-1) without tensor cores ------------------------------

PLAN = "fi_compat.decode.BatchDecodeWithPagedKVCacheWrapper.plan"


class Wrapper:
    """The receiver, with the attribute every release's ``__init__`` sets."""

    def __init__(self, tensor_cores: bool) -> None:
        self._use_tensor_cores = tensor_cores


@pytest.mark.parametrize("release", ["0.2.0.post1", "0.2.9", "0.3.1.post1"])
def test_fixed_split_size_is_refused_without_tensor_cores_as_newer_releases_do(
    release: str,
) -> None:
    """0.4.0+ raise ValueError for any ``fixed_split_size`` but None on a CUDA-core
    wrapper; where -1 is dropped (before 0.4.0) the same call is refused here."""
    fn, a, sig = built(PLAN, release)
    seen: list[dict[str, Any]] = []
    a._publish(recorder(sig, seen))
    kw = {**base_args(ENTRIES[PLAN]), "fixed_split_size": -1}
    fn(Wrapper(True), **kw)
    assert seen and "fixed_split_size" not in seen[-1]
    with pytest.raises(InvalidArgumentError, match="tensor-core"):
        fn(Wrapper(False), **kw)
    assert len(seen) == 1
    kw["fixed_split_size"] = None
    fn(Wrapper(False), **kw)  # the default: nothing to refuse
    assert len(seen) == 2
    translate = Adapter.translate  # the reference, with this receiver (as run_reference)
    a.translate = lambda kw, extra, receiver=None: translate(a, kw, extra, Wrapper(False))  # type: ignore[method-assign]
    try:
        with pytest.raises(InvalidArgumentError, match="tensor-core"):
            a.plan(**{**kw, "fixed_split_size": -1})
    finally:
        del a.translate


def recorder(sig: Any, seen: list[dict[str, Any]]) -> Any:
    """A stand-in method recording what it was passed by name (positional arguments by the
    release's own parameter names: fi_compat passes them positionally where it can)."""
    slots = list(sig.parameters)[1:]

    def record(_self: Any, *args: Any, **kw: Any) -> None:
        seen.append({**dict(zip(slots, args, strict=False)), **kw})

    return record


def test_fixed_split_size_reaches_releases_that_check_it_themselves() -> None:
    fn, a, sig = built(PLAN, "0.4.0")
    seen: list[dict[str, Any]] = []
    a._publish(recorder(sig, seen))
    fn(Wrapper(False), **{**base_args(ENTRIES[PLAN]), "fixed_split_size": -1})
    assert seen[-1]["fixed_split_size"] == -1  # FlashInfer's own ValueError follows


# -- the engines' calls -------------------------------------------------------------------


@pytest.mark.parametrize("release", ["0.2.5", "0.3.1", "0.5.2"])
def test_vllm_and_sglang_attention_calls_run_on_older_releases(release: str) -> None:
    """vLLM's ``plan(..., fixed_split_size=-1, disable_split_kv=False)`` and SGLang's
    ``BatchDecodeWithPagedKVCacheWrapper(ws, "NHD", backend="fa2",
    use_tensor_cores=True)`` (refused on 0.2.5-0.5.2 before)."""
    fn, a, sig = built(PLAN, release)
    seen: list[dict[str, Any]] = []
    a._publish(recorder(sig, seen))
    kw = {**base_args(ENTRIES[PLAN]), "fixed_split_size": -1, "disable_split_kv": False}
    fn(Wrapper(True), **kw)
    assert "fixed_split_size" not in seen[-1] or seen[-1]["fixed_split_size"] == -1

    init = "fi_compat.decode.BatchDecodeWithPagedKVCacheWrapper.__init__"
    fn, a, sig = built(init, release)
    a._publish(recorder(sig, seen))
    ws = torch.empty(64, dtype=torch.uint8)
    fn(Wrapper(True), ws, "NHD", backend="fa2", use_tensor_cores=True)
    sent = seen[-1]
    assert sent.get("backend", "fa2") == "fa2" and sent["use_tensor_cores"] is True
    assert ("backend" in sent) == (release != "0.2.5")  # 0.2.9 took the parameter
