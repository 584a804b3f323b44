#!/usr/bin/env python3
"""fi_compat's attention wrappers vs FlashInfer's own, side by side in one process on a GPU.

    python benchmarks/bench_attention_gpu.py [--json out.json]

For the installed release and two decode batches -- host-bound (8 requests x 512 tokens)
and GPU-bound (64 x 4096) -- GQA 32/8 heads, head size 128, bf16, page size 16, planned
once, then

* ``run``: host time per call (p50 over rounds of 200 calls, no sync inside a round),
  ``fi_compat`` (the stable subclass) vs the direct FlashInfer method on the same
  instance, plus the added ns;
* ``plan``: host time per call (p50 over 300 calls, a sync after each, as engines
  plan once per step), the arms in alternating order, with a second direct arm whose
  difference from the first is the noise floor (``plan_noise_ns``);
* a decode step: one ``plan`` and 32 ``run`` calls (one per layer), synchronised, p50 of
  rounds with the arms interleaved; the ratio fi_compat / direct.

Each shape is planned twice: with every index tensor on the GPU, and as vLLM's
FlashInfer backend plans (``indptr`` and ``last_page_len`` on the host, ``indices`` on
the GPU). Where the ``plan`` time goes (``plan_breakdown``), the same interleaved rounds:

* ``fi_compat_nochecks``: after ``fi_compat.set_validation(False)``;
* ``fi_compat_own``: fi_compat's generated ``plan`` with FlashInfer's ``plan`` (the
  generated function's ``_fn``) replaced by a no-op: fi_compat's own host work on this
  machine (checks, normalisers, the result hook), FlashInfer not called;
* ``noop``: the same no-op called directly (the floor of ``fi_compat_own``).

``plan_added_ns`` minus (``fi_compat_own`` - ``noop``) is what fi_compat's call changes
inside FlashInfer's own ``plan`` (zero if the arguments reach it as the direct call's do).

Outputs of both arms are compared bit for bit first.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import torch

import fi_compat
from fi_compat import decode

HQ, HKV, D, P = 32, 8, 128, 16
LAYERS = 32
SHAPES = {"host-bound": (8, 512), "gpu-bound": (64, 4096)}


def _setup(
    B: int, L: int, host_indptr: bool
) -> tuple[Any, Any, dict[str, Any], torch.Tensor, torch.Tensor]:
    pages = B * (L // P)
    meta = "cpu" if host_indptr else "cuda"
    cache = torch.randn(pages, 2, P, HKV, D, device="cuda").to(torch.bfloat16)
    indptr = torch.arange(0, pages + 1, L // P, dtype=torch.int32, device=meta)
    indices = torch.arange(pages, dtype=torch.int32, device="cuda")
    last = torch.full((B,), P, dtype=torch.int32, device=meta)
    q = torch.randn(B, HQ, D, device="cuda").to(torch.bfloat16)
    ws = torch.empty(128 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    w = decode.BatchDecodeWithPagedKVCacheWrapper(ws, "NHD")
    base = type(w).__mro__[1]
    plan = {
        "args": (indptr, indices, last, HQ, HKV, D, P),
        "kw": {"q_data_type": torch.bfloat16, "kv_data_type": torch.bfloat16, "sm_scale": 0.1},
    }
    return w, base, plan, q, cache


def _p50(xs: list[float]) -> float:
    return statistics.median(xs)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    a = ap.parse_args()
    release = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
    out = {"release": release, "device": torch.cuda.get_device_name()}
    for name, (B, L) in SHAPES.items():
        out[name] = measure(B, L, host_indptr=False)
        out[name + ", host indptr (vLLM)"] = measure(B, L, host_indptr=True)
    print(json.dumps(out, indent=1))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


def _noop(*args: Any, **kwargs: Any) -> None:
    return None


def measure(B: int, L: int, host_indptr: bool) -> dict[str, Any]:
    w, base, plan, q, cache = _setup(B, L, host_indptr)
    w.plan(*plan["args"], **plan["kw"])
    ours = w.run(q, cache)
    theirs = base.run(w, q, cache)
    torch.cuda.synchronize()
    identical = bool(torch.equal(ours, theirs))

    def run_round(fn: Any, n: int = 200) -> float:
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn(w, q, cache)
        dt = (time.perf_counter_ns() - t0) / n
        torch.cuda.synchronize()
        return dt

    stable_run, base_run = type(w).run, base.run
    run_ns: dict[str, list[float]] = {"fi_compat": [], "direct": []}
    for _ in range(40 if B < 64 else 10):
        run_ns["fi_compat"].append(run_round(stable_run))
        run_ns["direct"].append(run_round(base_run))

    def plan_once(fn: Any) -> float:
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        fn(w, *plan["args"], **plan["kw"])
        dt = time.perf_counter_ns() - t0
        torch.cuda.synchronize()
        return dt

    # alternating order; "direct-again" is a second direct arm (the A/A noise floor)
    plan_ns: dict[str, list[float]] = {"fi_compat": [], "direct": [], "direct-again": []}
    plan_arms = [("fi_compat", type(w).plan), ("direct", base.plan), ("direct-again", base.plan)]
    for i in range(300):
        for name, fn in plan_arms if i % 2 == 0 else plan_arms[::-1]:
            plan_ns[name].append(plan_once(fn))

    # where the plan time goes: checks off, and fi_compat's own work with FlashInfer's
    # plan replaced by a no-op (the generated function's global ``_fn``)
    gen = type(w).plan.__globals__
    real_fn = gen.get("_fn")
    parts: dict[str, list[float]] = {"fi_compat_nochecks": [], "fi_compat_own": [], "noop": []}
    for _ in range(300):
        fi_compat.set_validation(False)
        parts["fi_compat_nochecks"].append(plan_once(type(w).plan))
        fi_compat.set_validation(True)
        if real_fn is not None:
            gen["_fn"] = _noop
            try:
                parts["fi_compat_own"].append(plan_once(type(w).plan))
            finally:
                gen["_fn"] = real_fn
        parts["noop"].append(plan_once(_noop))
    w.plan(*plan["args"], **plan["kw"])  # leave a real plan for the step below

    def step(run: Any, pl: Any) -> float:
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        pl(w, *plan["args"], **plan["kw"])
        for _ in range(LAYERS):
            run(w, q, cache)
        torch.cuda.synchronize()
        return time.perf_counter_ns() - t0

    step_ns: dict[str, list[float]] = {"fi_compat": [], "direct": []}
    for i in range(200):
        arms = [("fi_compat", stable_run, type(w).plan), ("direct", base_run, base.plan)]
        for name, r, pl in arms if i % 2 == 0 else arms[::-1]:
            step_ns[name].append(step(r, pl))
    res: dict[str, Any] = {
        "shape": f"{B} x {L} tokens",
        "index_tensors": "indptr, last_page_len on the host" if host_indptr else "all on the GPU",
        "plan_breakdown_ns_p50": {k: _p50(v) for k, v in parts.items() if v},
        "bit_identical": identical,
        "run_ns_p50": {k: _p50(v) for k, v in run_ns.items()},
        "plan_ns_p50": {k: _p50(v) for k, v in plan_ns.items()},
        "step_us_p50": {k: _p50(v) / 1e3 for k, v in step_ns.items()},
    }
    res["run_added_ns"] = res["run_ns_p50"]["fi_compat"] - res["run_ns_p50"]["direct"]
    res["plan_added_ns"] = res["plan_ns_p50"]["fi_compat"] - res["plan_ns_p50"]["direct"]
    res["plan_noise_ns"] = res["plan_ns_p50"]["direct-again"] - res["plan_ns_p50"]["direct"]
    res["step_ratio"] = res["step_us_p50"]["fi_compat"] / res["step_us_p50"]["direct"]
    bd = res["plan_breakdown_ns_p50"]
    if "fi_compat_own" in bd:
        res["plan_own_ns"] = bd["fi_compat_own"] - bd["noop"]
        res["plan_inside_flashinfer_ns"] = res["plan_added_ns"] - res["plan_own_ns"]
    return res


if __name__ == "__main__":
    raise SystemExit(main())
