"""``torch.compile(fullgraph=True)`` through facades, cold and warm, in a fresh interpreter.

Cold: the facade's first call ever is the one Dynamo traces (resolution under a lock, the
contract checks compiled with ``compile``/``exec``, the ``linecache`` registration: none
of it traceable; fi_compat runs it at trace time, :mod:`fi_compat._core.compiled`).  Warm:
traced after eager calls, or again after ``torch._dynamo.reset()``.  FlashInfer's
innermost function is a spy bound to the release's snapshot signature, put in the graph
with ``torch._dynamo.allow_in_graph`` (as FlashInfer's custom ops are); resolution itself
is real except for the import.  Every compiled result equals the eager result, one
compilation serves every later call (no recompile), and no graph breaks.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import ROOT, run_python

SCRIPT = r"""
import json, os, sys
import torch
import fi_compat
from fi_compat._core import resolve
from support.elementwise_cases import KernelSpy, _args
from support.helpers import inputs
from support.moe_helpers import MoeSpy, args as moe_args, H
from support.spy import Spy, snapshot_signature
from fi_compat._adapters.fused_moe import SPECS as MOE

REL = os.environ["FI_COMPAT_FLASHINFER_VERSION"]
SPIES = {
    "rmsnorm": KernelSpy("rmsnorm", REL),
    "silu_and_mul": KernelSpy("silu_and_mul", REL),
    "chunk_gated_delta_rule": Spy(snapshot_signature(REL)),
    "trtllm_bf16_moe": MoeSpy(snapshot_signature(REL, MOE["trtllm_bf16_moe"]),
                              "trtllm_bf16_moe", H),
}
imported = []

def import_target(a):  # resolution as ever, FlashInfer's function a spy in the graph
    spy = SPIES[a.entry.name]
    imported.append(a.entry.name)
    def innermost(*args, **kw):
        return spy(*args, **kw)
    return torch._dynamo.allow_in_graph(innermost)

resolve.import_target = import_target
out = {}

def run(label, model, *a):
    compiles = []
    def backend(gm, example_inputs):
        compiles.append(str(gm.graph))
        return gm.forward
    explained = torch._dynamo.explain(model)(*a) if label.endswith("explain") else None
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, backend=backend)
    got = [compiled(*a) for _ in range(3)]
    want = model(*a)  # eager (the facade is warm by now)
    same = all(torch.equal(g, want) for g in got)
    out[label] = {"compiles": len(compiles), "same": same,
                  "spy_in_graph": "innermost" in compiles[0] if compiles else False,
                  "breaks": explained.graph_break_count if explained else None}

import fi_compat.norm as norm  # rmsnorm: built during the trace (module __getattr__)
x = _args("rmsnorm")
run("rmsnorm cold", lambda i, w: norm.rmsnorm(i, w) * 2, x["input"], x["weight"])
run("rmsnorm warm", lambda i, w: norm.rmsnorm(i, w) * 2, x["input"], x["weight"])

from fi_compat.activation import silu_and_mul  # built before, never called
y = _args("silu_and_mul")["input"]
fi_compat.set_validation(False)
run("silu_and_mul cold, checks off", lambda i: silu_and_mul(i) + 1, y)
fi_compat.set_validation(True)
run("silu_and_mul warm, checks on", lambda i: silu_and_mul(i) + 1, y)

from fi_compat import gdn_prefill
g = inputs()
g.pop("initial_state")
def gdn(q, k, v, gate, beta, cu):
    return gdn_prefill.chunk_gated_delta_rule(q, k, v, gate, beta, cu_seqlens=cu) + 1
run("chunk_gated_delta_rule cold", gdn, *g.values())
gdn_prefill.chunk_gated_delta_rule(*list(g.values())[:5], cu_seqlens=g["cu_seqlens"])
run("chunk_gated_delta_rule warm, explain", gdn, *g.values())

import fi_compat.fused_moe as moe
m = moe_args("trtllm_bf16_moe")
def bf16_moe(*t):
    return moe.trtllm_bf16_moe(**dict(zip(m, t))).float() + 1
run("trtllm_bf16_moe cold", bf16_moe, *m.values())

out["imported"] = imported
print(json.dumps(out))
"""

RELEASES = ["0.6.3", "0.7.4"]


def _run_on(release: str, script: str) -> Any:
    """``script`` in a fresh interpreter treating ``release`` as installed; its last
    stdout line, parsed as JSON."""
    r = run_python(
        script,
        env={"FI_COMPAT_FLASHINFER_VERSION": release, "FI_COMPAT_ALLOW_CPU": "1"},
        path=[str(ROOT / "tests")],
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("release", RELEASES)
def test_fullgraph_compile_of_cold_and_warm_facades(release: str) -> None:
    out = _run_on(release, SCRIPT)
    imported = out.pop("imported")
    # each facade resolved once, at its cold trace
    assert imported == ["rmsnorm", "silu_and_mul", "chunk_gated_delta_rule", "trtllm_bf16_moe"]
    for label, o in out.items():
        assert o["same"], (release, label, o)
        assert o["compiles"] == 1, (release, label, o)  # no recompile on calls 2 and 3
        assert o["spy_in_graph"], (release, label, o)
        assert o["breaks"] in (None, 0), (release, label, o)


ERRORS = r"""
import json, os
import torch
from fi_compat._core import resolve
import fi_compat.norm as norm

def doubled(*args, **kw):  # FlashInfer's rmsnorm: input first (positionally, or by keyword)
    return (args[0] if args else kw["input"]) * 2


resolve.import_target = lambda a: torch._dynamo.allow_in_graph(doubled)

x = torch.randn(4, 16, dtype=torch.bfloat16)
w = torch.rand(16, dtype=torch.bfloat16)
out = {}
for fullgraph in (True, False):
    torch._dynamo.reset()
    compiled = torch.compile(lambda i, w: norm.rmsnorm(i, w) + 1, fullgraph=fullgraph,
                             backend="eager")
    try:
        compiled(x, w)
    except Exception as exc:
        text = str(exc) + " " + repr(exc.__cause__)
        out[str(fullgraph)] = [type(exc).__name__, text]
print(json.dumps(out))
"""


@pytest.mark.parametrize(
    ("env", "error", "says"),
    [
        ({}, "FlashInferNotInstalledError", "no flashinfer-python distribution is installed"),
        ({"FI_COMPAT_FLASHINFER_VERSION": "0.7.4"}, "UnsupportedDeviceError", "CUDA devices"),
    ],
)
def test_an_error_of_the_first_call_under_compile(
    env: dict[str, str], error: str, says: str
) -> None:
    """The first call's typed error (FlashInfer missing: at warm-up; a CPU tensor: the
    device check) is raised in the trace: ``fullgraph=True`` reports it with its message;
    without, the graph breaks and the eager call raises the typed error itself.  (The
    import of FlashInfer's function, a stand-in here, comes first in a trace.)"""
    r = run_python(ERRORS, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    kind, text = out["True"]
    assert kind == "Unsupported" and error in text and says in text, out
    kind, text = out["False"]
    assert kind == error and says in text, out


def test_the_device_check_hands_dynamo_constants_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a trace the per-device check calls :func:`device_verdict` (Dynamo's
    ``assume_constant_result``) with the adapter's int key, the device index and a
    ``torch.device``: values Dynamo takes as constants.  With the adapter itself, every
    traced call on a CUDA tensor failed on torch 2.11 (``InternalTorchDynamoError:
    AsPythonConstantNotImplementedError: UserDefinedObjectVariable(Adapter) is not a
    constant``, seen on an H100 with 0.6.7 and 0.7.4; torch 2.13 tolerates it)."""
    import torch

    import fi_compat.norm  # noqa: F401  (binds the stub's parameter list)
    from fi_compat._adapters.norm import SPECS
    from fi_compat._core import compiled
    from fi_compat.detection import Distribution

    a = SPECS["rmsnorm"].select(Distribution("flashinfer-python", "0.7.4", "<test>", ""))
    seen: list[tuple[object, ...]] = []
    monkeypatch.setattr(compiled, "compiling", lambda: True)
    monkeypatch.setattr(compiled, "device_verdict", lambda *args: seen.append(args))
    compiled.check_device(a, 0, torch.ones(3))
    assert len(seen) == 1
    key, index, device = seen[0]
    assert type(key) is int and compiled._ADAPTERS[key] is a
    assert index == 0 and isinstance(device, torch.device)


GUARDS = r"""
import json, os
import torch
from fi_compat._core import resolve
from support.elementwise_cases import KernelSpy, _args
from support.helpers import inputs
from support.spy import Spy, snapshot_signature

REL = os.environ["FI_COMPAT_FLASHINFER_VERSION"]
SPIES = {"rmsnorm": KernelSpy("rmsnorm", REL), "silu_and_mul": KernelSpy("silu_and_mul", REL),
         "chunk_gated_delta_rule": Spy(snapshot_signature(REL))}

def import_target(a):  # FlashInfer's function: a spy in the graph
    spy = SPIES[a.entry.name]
    def innermost(*args, **kw):
        return spy(*args, **kw)
    return torch._dynamo.allow_in_graph(innermost)

resolve.import_target = import_target

import fi_compat.norm as norm
from fi_compat.activation import silu_and_mul
from fi_compat import gdn_prefill
x = _args("rmsnorm")
g = inputs()
g.pop("initial_state")
native = gdn_prefill.chunk_gated_delta_rule.adapter.native_dtypes  # as engines pass it
g["cu_seqlens"] = g["cu_seqlens"].to(getattr(torch, native.get("cu_seqlens", "int32")))
calls = {
    "rmsnorm": (lambda i, w: norm.rmsnorm(i, w) * 2, [x["input"], x["weight"]]),
    "silu_and_mul": (lambda i: silu_and_mul(i) + 1, [_args("silu_and_mul")["input"]]),
    "chunk_gated_delta_rule": (
        lambda q, k, v, gate, beta, cu: gdn_prefill.chunk_gated_delta_rule(
            q, k, v, gate, beta, cu_seqlens=cu) + 1,
        list(g.values()),
    ),
}
out = {}
for name, (model, args) in calls.items():
    model(*args)  # warm, eagerly
    torch._dynamo.reset()
    ex = torch._dynamo.explain(model)(*args)
    compiles = []
    def backend(gm, example_inputs):
        compiles.append(1)
        return gm.forward
    torch._dynamo.reset()
    c = torch.compile(model, fullgraph=True, backend=backend)
    c(*args)
    c(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])  # same shapes
    out[name] = {"guards": [g.name for g in ex.out_guards], "compiles": len(compiles),
                 "breaks": ex.graph_break_count}
print(json.dumps(out))
"""


@pytest.mark.parametrize("release", RELEASES)
def test_compiled_facade_guards_no_fixed_value(release: str) -> None:
    """A warm facade's fixed values (the release's defaults as the generated code tests
    them, literal sets, dtypes, the devices found to serve, the contract's dtypes) are
    constants of its code: a compiled call has no guard on them.  New tensors of the
    same shapes reuse the compiled graph."""
    out = _run_on(release, GUARDS)
    fixed = ("['_DEV']", "['_d_", "['_dt_", "['_DT_", "['_L_")
    for name, o in out.items():
        assert o["breaks"] == 0 and o["compiles"] == 1, (release, name, o)
        on_fixed = [g for g in o["guards"] if any(f in g for f in fixed)]
        assert not on_fixed, (release, name, on_fixed)
