"""``torch.compile(fullgraph=True)`` over a cold facade, with the release of the cell.

A fresh interpreter compiles a model whose first call of ``fi_compat.norm.rmsnorm`` is
the traced one: resolution really imports ``flashinfer.norm`` of the cell (under its
lock, with the imported-release check) at trace time; only the function it returns is
replaced by a spy bound to its ``inspect.signature``, put in the graph with
``allow_in_graph`` (the CPU host cannot run FlashInfer's kernel, nor trace FlashInfer's
own CUDA-only code).  Then the warm facade is traced again after ``torch._dynamo.reset()``.
One fresh interpreter (~15 s on 2 cores): the live cells that run the doctor contract.
"""

from __future__ import annotations

import json
import os

import pytest

from conftest import run_python

CELL = os.environ.get("FI_COMPAT_CELL")
pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(CELL is None, reason="no FlashInfer release cell (run tools/matrix.py)"),
    pytest.mark.skipif(
        os.environ.get("FI_COMPAT_CELL_EXPECT") != "live"
        or os.environ.get("FI_COMPAT_CELL_DOCTOR") != "1",
        reason="one fresh interpreter in the live cells that run the doctor contract",
    ),
]

SCRIPT = r"""
import inspect, json
import torch
from fi_compat._core import resolve
import fi_compat.norm as norm

real_import = resolve.import_target
seen = {}

def import_target(a):
    real = real_import(a)  # the cell's flashinfer.norm.rmsnorm
    sig = inspect.signature(real)
    seen["target"] = f"{real.__module__}.{real.__qualname__}"
    def innermost(*args, **kw):
        b = sig.bind(*args, **kw)  # a name the release lacks is a TypeError, as in FlashInfer
        b.apply_defaults()
        x, w, eps = b.arguments["input"], b.arguments["weight"], b.arguments["eps"]
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)
    return torch._dynamo.allow_in_graph(innermost)

resolve.import_target = import_target
x = torch.randn(5, 64, dtype=torch.bfloat16)
w = torch.rand(64, dtype=torch.bfloat16) + 0.5
def model(x, w):
    return norm.rmsnorm(x, w) * 2
out = {}
for label in ("cold", "warm"):
    compiles = []
    def backend(gm, example_inputs):
        compiles.append(str(gm.graph))
        return gm.forward
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, backend=backend)
    got = [compiled(x, w) for _ in range(3)]
    out[label] = {"compiles": len(compiles), "same": all(torch.equal(g, model(x, w)) for g in got),
                  "spy_in_graph": "innermost" in compiles[0]}
out["target"] = seen.get("target")
out["resolved"] = norm.rmsnorm.adapter.describe()["resolved"]
print(json.dumps(out))
"""


def test_fullgraph_compile_of_a_cold_facade_resolves_the_real_release() -> None:
    path = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    r = run_python(SCRIPT, path=path, env={"FI_COMPAT_ALLOW_CPU": "1"}, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["resolved"] and str(out["target"]).startswith("flashinfer."), out
    for label in ("cold", "warm"):
        assert out[label] == {"compiles": 1, "same": True, "spy_in_graph": True}, (label, out)
