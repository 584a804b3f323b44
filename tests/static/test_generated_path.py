"""Valid calls run the generated code: never :meth:`Adapter.translate` by way of
:meth:`Adapter.call_general`.

The policy suites' tests (every case they run, errors included) run here again with the
general path instrumented: a call that ``call_general`` translates *successfully* is a
valid call that missed the generated fast path, and fails the test.  ``translate``
stays what ``plan()`` / ``explain()`` run, what refuses bad input (a call it refuses
is not counted), serves the debug mode, a facade's first call (which binds torch into
the generated code) and enum parameters given as plain ints or another class's members
(looked up by value): none of those is counted.  A sample of
releases per suite runs by default; ``FI_COMPAT_ALL_CELLS=1`` runs every cell.

A second check compares the two paths directly: the same arguments through the
generated function and through ``call_general`` reach a :class:`Spy` bound to the
release's snapshot signature with the same arguments (bound, defaults applied) and give
the same result.
"""

from __future__ import annotations

import importlib
import itertools
import os
from typing import Any, ClassVar

import pytest
import torch

from fi_compat._core import Adapter
from fi_compat._core.facade import debug_enabled
from fi_compat._device import assume_capability
from support.helpers import facade_for, inputs
from support.spy import Spy, snapshot_signature

SUITES = (
    "test_policies_all_releases",
    "test_moe_policies_all_releases",
    "test_sampling_policies_all_releases",
    "test_gdn_decode_policies_all_releases",
    "test_rope_policies_all_releases",
    "test_quant_gemm_policies_all_releases",
    "test_elementwise_policies_all_releases",
    "test_attention_policies_all_releases",
    "test_mla_policies_all_releases",
    "test_trtllm_attention_policies_all_releases",
)
# releases sampled by default: the boundaries most tables change at, oldest to newest
SAMPLE = {
    "0.2.0.post1",
    "0.2.3",
    "0.2.9",
    "0.4.0",
    "0.5.3",
    "0.6.0",
    "0.6.4",
    "0.6.7",
    "0.6.8",
    "0.6.14",
    "0.6.16",
    "0.6.18",
    "0.7.0",
    "0.7.1",
    "0.7.4",
}
ALL = os.environ.get("FI_COMPAT_ALL_CELLS", "") == "1"


def _cells(fn: Any) -> list[dict[str, Any]]:
    """The parameter sets pytest would run ``fn`` with (its parametrize marks)."""
    axes = []
    for mark in getattr(fn, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names, values = mark.args[0], mark.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        rows = [dict(zip(names, v if len(names) > 1 else (v,), strict=True)) for v in values]
        axes.append(rows)
    out = []
    for combo in itertools.product(*axes):
        cell: dict[str, Any] = {}
        for part in combo:
            cell.update(part)
        if ALL or cell.get("release", "0.7.4") in SAMPLE:
            out.append(cell)
    return out


def _tests() -> list[Any]:
    out = []
    for mod_name in SUITES:
        mod = importlib.import_module(mod_name)
        for name in sorted(vars(mod)):
            fn = getattr(mod, name)
            if not name.startswith("test_") or not callable(fn):
                continue
            wanted = fn.__code__.co_varnames[: fn.__code__.co_argcount]
            for i, cell in enumerate(_cells(fn)):
                if set(wanted) - set(cell) - {"monkeypatch"}:
                    continue  # another fixture: not run here
                out.append(pytest.param(fn, cell, id=f"{mod_name[5:]}::{name}[{i}]"))
    return out


class Counter:
    def __init__(self) -> None:
        self.general: list[str] = []


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> Counter:
    c = Counter()
    translate = Adapter.translate
    call_general = Adapter.call_general
    inside: list[bool] = []

    def counting_translate(self: Adapter, kw: dict[str, Any], *a: Any, **k: Any) -> Any:
        # an enum parameter given as a plain int or another class's member is looked up
        # by value on the general path (the generated tables hold fi_compat's members)
        by_value = any(
            kw[n] is not None and type(kw[n]).__module__ != "fi_compat.enums" for n in self.enums
        )
        out = translate(self, kw, *a, **k)  # a refusal raises: not counted
        if inside and inside[-1] and not by_value and not debug_enabled():
            c.general.append(f"{self.entry.dotted} on {self.release}")
        return out

    def marking_call_general(self: Adapter, *a: Any, **kw: Any) -> Any:
        # a facade's first call binds torch into the generated code (prepare) on the
        # general path, once per process: not a per-call cost
        inside.append(self._prepared)
        try:
            return call_general(self, *a, **kw)
        finally:
            inside.pop()

    monkeypatch.setattr(Adapter, "translate", counting_translate)
    monkeypatch.setattr(Adapter, "call_general", marking_call_general)
    return c


@pytest.mark.parametrize(("test", "cell"), _tests())
def test_policy_suites_run_the_generated_code(test: Any, cell: dict[str, Any], counter: Counter):
    with pytest.MonkeyPatch.context() as mp:
        extra = {"monkeypatch": mp} if "monkeypatch" in test.__code__.co_varnames else {}
        test(**cell, **extra)
    assert counter.general == [], "valid calls took the general path"


# -- the generated and the general path forward the same call ---------------------------


def _pool(release: str) -> tuple[dict[str, Any], dict[str, Any]]:
    x = inputs(cu_dtype=torch.int32)
    pool = torch.randn(6, *x["initial_state"].shape[1:])
    idx = torch.tensor([4, 1], dtype=torch.int32)
    args = {k: v for k, v in x.items() if k != "initial_state"}
    return args, {
        "initial_state": pool,
        "output_final_state": True,
        "output_state": pool.clone(),
        "state_indices": idx,
    }


CALLS = {
    "plain": lambda r: (inputs(), {}),
    "plain_int64_cu": lambda r: (inputs(cu_dtype=torch.int64), {}),
    "pool": _pool,
    "pool_use_cp_false": lambda r: (_pool(r)[0], {**_pool(r)[1], "use_cp": False}),
    "hints": lambda r: (inputs(), {"max_seqlen": 7, "cu_seqlens_cpu": [0, 5, 12]}),
    "neutral": lambda r: (inputs(), {"use_cp": False, "backend": "flashinfer"}),
    "gate_log": lambda r: ({**inputs(), "g": inputs()["g"].log()}, {"gate_domain": "log"}),
    "bf16_state": lambda r: (
        {**inputs(), "initial_state": inputs()["initial_state"].bfloat16()},
        {"output_final_state": True},
    ),
    "qk_l2norm": lambda r: (inputs(), {"use_qk_l2norm_in_kernel": True}),
}
RELEASES = ["0.6.0", "0.6.7", "0.6.16", "0.6.18", "0.7.0", "0.7.4"]


def _clone(x: Any) -> Any:
    return x.clone() if isinstance(x, torch.Tensor) else x


@pytest.mark.parametrize("cc", [(9, 0), (10, 0)])
@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("release", RELEASES)
def test_generated_and_general_paths_forward_the_same_call(
    release: str, call: str, cc: tuple[int, int], counter: Counter
) -> None:
    sig = snapshot_signature(release)
    a, kw = CALLS[call](release)
    with assume_capability(cc):
        spies, results, states = [], [], []
        for general in (False, True):
            spy = Spy(sig)
            fn, adapter = facade_for(release, spy)
            args = {k: _clone(v) for k, v in a.items()}
            kws = {k: _clone(v) for k, v in kw.items()}
            state = kws.get("output_state")
            if state is not None and state.shape == getattr(kws.get("initial_state"), "shape", 0):
                kws["output_state"] = kws["initial_state"]  # one pool, read and written
            if general:
                full = {n: adapter.entry.params[n].default for n in adapter.entry.order}
                full.update(args, **kws)
                out = adapter.call_general(full, {})
            else:
                out = fn(**args, **kws)
            spies.append(spy)
            results.append(out)
            states.append(kws.get("output_state"))
    fast, slow = spies
    # the facade's call took the generated code (the explicit call_general is a fresh
    # adapter's first call, which the counter leaves out)
    assert counter.general == []
    # bound against the release's signature, defaults applied: the tiers for the common
    # call leave later parameters at their (equal) defaults out of the call
    assert len(fast.calls) == len(slow.calls) == 1
    assert fast.calls[0].keys() == slow.calls[0].keys()
    for k in fast.calls[0]:
        x, y = fast.calls[0][k], slow.calls[0][k]
        if isinstance(x, torch.Tensor):
            assert x.dtype == y.dtype and torch.equal(x, y), k
        else:
            assert x == y, k
    r1, r2 = results
    flat1 = r1 if isinstance(r1, tuple) else (r1,)
    flat2 = r2 if isinstance(r2, tuple) else (r2,)
    assert len(flat1) == len(flat2)
    for x, y in zip(flat1, flat2, strict=True):
        assert torch.equal(x, y)
    if states[0] is not None:
        assert torch.equal(states[0], states[1])


def test_a_check_with_passes_is_called_only_where_its_inline_test_fails() -> None:
    """``Normalizer.passes``: the generated code tests the expression inline and calls
    the check only where it is false; translate() always calls it; a rewriting
    normaliser (``out``) cannot have one."""
    from fi_compat._core import EntryPoint, Normalizer
    from fi_compat._core.contract import Tensor
    from fi_compat.detection import Distribution
    from fi_compat.errors import InvalidArgumentError

    seen: list[int] = []

    class Even(Normalizer):
        args = ("x",)
        out = ()
        passes = "x.shape[0] in _EVEN_ROWS"
        passes_ns: ClassVar[dict[str, object]] = {"_EVEN_ROWS": frozenset({2, 4})}

        def build(self, adapter: Any) -> Any:
            def check(x: Any) -> tuple[Any, ...]:
                seen.append(x.shape[0])
                if x.shape[0] % 2:
                    raise InvalidArgumentError("odd rows")
                return ()

            return check

    def reorder_rows_for_gated_act_gemm(x: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def entry(nm: Normalizer) -> EntryPoint:
        return EntryPoint(
            facade="fi_compat.example",
            name="reorder_rows_for_gated_act_gemm",
            module="flashinfer",
            params=(),
            contracts={"x": Tensor("rows cols")},
            normalizers=(nm,),
        )

    e = entry(Even())
    e.bind_stub(reorder_rows_for_gated_act_gemm)
    a = e.select(Distribution("flashinfer-python", "0.6.7", "<t>", ""))
    fn = a.build(reorder_rows_for_gated_act_gemm)
    a._publish(lambda *_a, **kw: "called")
    assert "if not (x.shape[0] in _EVEN_ROWS):" in a.source
    assert fn(torch.zeros(4, 2)) == "called"  # the first call (translate) calls it
    seen.clear()
    assert fn(torch.zeros(4, 2)) == "called" and fn(torch.zeros(2, 2)) == "called"
    assert seen == []  # the generated code: the inline test only
    assert fn(torch.zeros(6, 2)) == "called" and seen[-1] == 6  # not in the set: called
    with pytest.raises(InvalidArgumentError, match="odd rows"):
        fn(torch.zeros(3, 2))

    class Rewrites(Even):
        out = ("x",)

    e2 = entry(Rewrites())
    e2.bind_stub(reorder_rows_for_gated_act_gemm)
    with pytest.raises(ValueError, match="passes= is for a check"):
        e2.select(Distribution("flashinfer-python", "0.6.7", "<t>", ""))
