"""`import fi_compat` / facade modules: no FlashInfer, no torch, no CUDA (import time is
measured in benchmarks/bench_import.py)."""

from __future__ import annotations

import json

from conftest import run_python

PROBE = """
import json, sys, time
t = time.perf_counter()
import fi_compat, fi_compat.gdn_prefill
ms = (time.perf_counter() - t) * 1e3
heavy = sorted(m for m in sys.modules if m.split('.')[0] in
               ('torch', 'flashinfer', 'packaging', 'importlib.metadata', 'numpy'))
print(json.dumps({"ms": ms, "heavy": heavy,
                  "problem": fi_compat.gdn_prefill.chunk_gated_delta_rule.adapter.problem}))
"""


def test_import_pulls_in_nothing_heavy_and_works_without_flashinfer() -> None:
    r = run_python(PROBE)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["heavy"] == []  # neither flashinfer nor torch (so no CUDA initialisation)
    assert out["problem"] == "not-installed"


def test_import_with_a_known_release_needs_no_packaging() -> None:
    r = run_python(PROBE, env={"FI_COMPAT_FLASHINFER_VERSION": "0.6.7"})
    out = json.loads(r.stdout)
    assert out["heavy"] == [] and out["problem"] is None, r.stderr


MOE_PROBE = """
import sys, time
t = time.perf_counter()
import fi_compat.fused_moe as m
ms = (time.perf_counter() - t) * 1e3
from fi_compat._core import adapters
built_at_import = len(adapters(build=False))
fn = m.trtllm_fp4_block_scale_moe  # built on first access
after_one = len(adapters(build=False))
heavy = sorted(x for x in sys.modules if x.split('.')[0] in ('torch', 'flashinfer', 'json', 're'))
import json
print(json.dumps({"ms": ms, "heavy": heavy, "built": [built_at_import, after_one,
                  len(adapters())], "same": m.trtllm_fp4_block_scale_moe is fn,
                  "listed": "cutlass_fused_moe" in dir(m)}))
"""


def test_fused_moe_import_is_lazy_and_cheap() -> None:
    env = {"PYTHONDONTWRITEBYTECODE": "", "FI_COMPAT_FLASHINFER_VERSION": "0.6.7"}
    run_python(MOE_PROBE, env=env)
    out = json.loads(run_python(MOE_PROBE, env=env).stdout)
    from fi_compat._facades import entry_points

    n = len(entry_points("fused_moe"))
    assert out["heavy"] == []  # no torch, FlashInfer, json or re for any of them
    assert out["built"] == [0, 1, n] and out["same"] and out["listed"]
