"""FlashInfer's own methods on the stable wrapper subclasses, against the release of the
cell: the installed ``forward`` / ``forward_return_lse`` (FlashInfer's code, not a
reconstruction) on the real stable subclass, with the stable ``run``'s FlashInfer target
replaced by a spy bound to ``inspect.signature`` of the installed ``run``; the spy must
get what the installed ``run`` gets from the same method called on FlashInfer's own
terms (the oracle: the installed method run on a recorder, its call bound against the
installed signature).  Also: the methods the subclass runs in the release view are
exactly the audited ones (``docs/wrappers.md``) and the installed methods' parameters
are the audited ones."""

from __future__ import annotations

import importlib
import inspect
import os
from typing import Any

import pytest

from support.attention_cases import PAGED, AttnSpy, args
from support.inherited import (
    DATA,
    ROWS,
    assert_release_meaning,
    call_for,
    callers,
    record,
    release_call,
)

CELL = os.environ.get("FI_COMPAT_CELL")
EXPECT = os.environ.get("FI_COMPAT_CELL_EXPECT")
pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(CELL is None, reason="no FlashInfer release cell (run tools/matrix.py)"),
    pytest.mark.skipif(EXPECT == "import-crash", reason="import flashinfer fails here"),
]
FACADE = {name: row.facade for name, row in ROWS.items()}


def _stable(name: str) -> type:
    assert CELL is not None
    if record(name, CELL) is None:
        pytest.skip(f"{name} is not in flashinfer-python {CELL}")
    mod = DATA["modules"][name]
    try:
        importlib.import_module(mod)
    except Exception as exc:  # the cell's documented import outcome
        assert EXPECT != "live", exc
        pytest.skip(f"{mod} does not import here: {type(exc).__name__}")
    cls: type = getattr(importlib.import_module(FACADE[name]), name)
    return cls


@pytest.mark.parametrize("name", list(ROWS))
def test_inherited_methods_in_the_release_view_are_the_audited_ones(name: str) -> None:
    assert CELL is not None
    cls = _stable(name)
    base = cls._fi_compat_base  # type: ignore[attr-defined]
    assert set(cls._fi_compat_inside) == callers(name, CELL)  # type: ignore[attr-defined]
    rec = record(name, CELL)
    assert rec is not None
    for method in callers(name, CELL):
        want = inspect.signature(_compile(rec[method]["params"]))
        got = inspect.signature(getattr(base, method))
        assert [(p.name, p.kind, p.default) for p in got.parameters.values()] == [
            (p.name, p.kind, p.default) for p in want.parameters.values()
        ], (name, method)


def _compile(params: str) -> Any:
    ns: dict[str, Any] = {}
    exec(f"def f({params}): pass", ns)
    return ns["f"]


def _cases() -> list[tuple[str, str]]:
    return sorted({(c, m) for c, by in DATA["classes"].items() for r in by for m in callers(c, r)})


@pytest.mark.parametrize(("name", "method"), _cases())
def test_inherited_method_binds_by_the_installed_release(name: str, method: str) -> None:
    assert CELL is not None
    cls = _stable(name)
    if method not in callers(name, CELL):
        pytest.skip(f"{name}.{method} calls no stable name in {CELL}")
    base = cls._fi_compat_base  # type: ignore[attr-defined]
    rec = record(name, CELL)
    assert rec is not None
    call_args, call_kw = call_for(name, method, rec[method]["params"])
    run_sig = inspect.signature(base.run)
    target, want, state = release_call(
        name, CELL, getattr(base, method), call_args, call_kw, signature=run_sig
    )
    assert target == "run"
    run = cls.run  # type: ignore[attr-defined]
    spy = AttnSpy(run_sig, True)
    run.adapter._set_target(spy)
    try:
        w = object.__new__(cls)
        res = getattr(w, method)(*call_args, **call_kw)
        assert type(w) is cls
    finally:
        run.adapter._set_target(None)  # re-armed: the next call resolves FlashInfer's run
    assert_release_meaning(name, CELL, w, spy, want, state, res, call_args[0])


def test_inherited_sglang_extend_forward_return_lse() -> None:
    """SGLang's extend path: ``forward_return_lse(q, kv, causal=False, sm_scale=s,
    window_left=w, logits_soft_cap=c)`` on the installed paged prefill wrapper gives
    ``(out, lse)`` (``PositionalMismatchError`` before on 0.2.0.post1-0.2.8, whose
    ``forward_return_lse`` passes four positional arguments to ``run_return_lse``)."""
    cls = _stable(PAGED)
    run = cls.run  # type: ignore[attr-defined]
    spy = AttnSpy(inspect.signature(cls._fi_compat_base.run), True)  # type: ignore[attr-defined]
    kw = args(f"{PAGED}.run")
    q, kv = kw["q"], kw["paged_kv_cache"]
    run.adapter._set_target(spy)
    try:
        w = object.__new__(cls)
        out, lse = w.forward_return_lse(
            q, kv, causal=False, sm_scale=0.0883, window_left=-1, logits_soft_cap=30.0
        )
    finally:
        run.adapter._set_target(None)
    got = spy.last
    assert got["return_lse"] is True and got["q"] is q and got["paged_kv_cache"] is kv
    assert got["k_scale"] is None and got["v_scale"] is None
    assert (w._causal, w._sm_scale, w._window_left, w._logits_soft_cap) == (
        False,
        0.0883,
        -1,
        30.0,
    )
    assert tuple(out.shape[:2]) == tuple(q.shape[:2]) and tuple(lse.shape) == tuple(q.shape[:2])
