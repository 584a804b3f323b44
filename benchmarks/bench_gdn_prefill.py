#!/usr/bin/env python3
"""Overhead of fi_compat.gdn_prefill.chunk_gated_delta_rule over a direct FlashInfer call.

    python benchmarks/bench_gdn_prefill.py [--release 0.6.7] [--json out.json]

Both arms call the same trivial function in place of FlashInfer's launch: it has the
release's real signature (read from the snapshot of its wheel) and returns ``q``.  The
direct arm calls it as model code calls FlashInfer (nine positional arguments); the
fi_compat arm calls the facade with the same arguments, whose adapter forwards by
keyword.  Measured side by side in one process, interleaved, batches of calls; p50/p90
over batches.  Also: import time (fresh interpreters), extra tensors created per call
(every aten op dispatched during the call is counted), ``torch.compile(fullgraph=True)``
through the facade, and CUDA-graph capture/replay when a GPU is present.

The state-pool pattern (vLLM's prefill with a native pool: ``initial_state=pool,
output_state=pool, state_indices=idx``) is measured beside the plain call in the same
run: natively served on 0.6.18 (SM100) and 0.7.4 (SM90) -- the GPU is assumed on a CPU
host (``assume_capability``) -- and emulated (gather / packed call / scatter) on 0.6.7,
where the direct arm is the packed call FlashInfer itself would get.  ``--pool-dtype``
picks the pool's dtype (float32, bfloat16, float8_e4m3fn, float8_e5m2; default the first
three): 0.6.7's SM90 kernel reads float32 state only, so a bf16 or fp8 pool is gathered
into float32 rows and the final states are rounded back into the pool (fp8 saturating).
"""

from __future__ import annotations

import argparse
import ast
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT / "src"))  # a PYTHONPATH checkout first (before/after)
sys.path.insert(0, str(ROOT / "tests"))
# no GPU: a trivial stand-in runs on CPU tensors, which the device check lets through
os.environ.setdefault("FI_COMPAT_ALLOW_CPU", "1")

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from fi_compat import _snapshot_io as snapshots  # noqa: E402
from fi_compat import gdn_prefill  # noqa: E402
from fi_compat._adapters.gdn_prefill import SPEC  # noqa: E402
from fi_compat._device import assume_capability  # noqa: E402
from fi_compat.detection import Distribution  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402
from support.spy import stub  # noqa: E402


def trivial_for(release: str, body: str = "return q") -> Any:
    """A function with ``release``'s exact signature (from its wheel) doing ``body``."""
    params = snapshots.params(SPEC, release)
    assert params is not None
    parts, star = [], False
    for name, kind, default, _ in params:
        if kind == "ko" and not star:
            parts.append("*")
            star = True
        parts.append(name if default is None and kind != "ko" else f"{name}={default}")
        if kind == "ko" and default is None:
            parts[-1] = f"{name}=None"
    ns: dict[str, Any] = {}
    exec(f"def flashinfer_launch({', '.join(parts)}):\n    {body}\n", ns)
    for _, _kind, default, _ in params:
        if default is not None:
            ast.literal_eval(default)  # every default is a literal: the stand-in is exact
    return ns["flashinfer_launch"]


def native_cu(release: str) -> torch.dtype:
    return torch.int32 if at_least(place(release), "0.7.0") else torch.int64


def facade_for(release: str, target: Any) -> Any:
    adapter = SPEC.select(Distribution("flashinfer-python", release, "<bench>", ""))
    fn = adapter.build(stub(gdn_prefill, "chunk_gated_delta_rule"))
    adapter._set_target(target)
    return fn


def inputs(device: str, cu_dtype: torch.dtype) -> tuple[Any, ...]:
    t, h, d = 64, 4, 128
    q = torch.randn(t, h, d, device=device, dtype=torch.bfloat16)
    g = torch.rand(t, h, device=device)
    cu = torch.tensor([0, 16, 64], dtype=cu_dtype, device=device)
    h0 = torch.zeros(2, h, d, d, device=device)
    return (q, q.clone(), q.clone(), g, g.clone(), None, h0, True, cu)


def bench(fn: Any, args: tuple[Any, ...], batches: int, per: int) -> list[float]:
    out = []
    for _ in range(batches):
        t0 = time.perf_counter_ns()
        for _ in range(per):
            fn(*args)
        out.append((time.perf_counter_ns() - t0) / per)
    return out


def side_by_side(
    release: str, device: str, cu_dtype: torch.dtype, batches: int, per: int
) -> dict[str, Any]:
    launch = trivial_for(release)
    facade = facade_for(release, launch)
    args = inputs(device, cu_dtype)
    facade(*args)  # first call: binds torch dtypes into the generated function
    direct_s: list[float] = []
    fi_s: list[float] = []
    for _ in range(5):  # interleave to cancel drift
        direct_s += bench(launch, args, batches // 5, per)
        fi_s += bench(facade, args, batches // 5, per)
    # the metadata check alone (the generated code's ``_validate``), same arguments
    check = facade.adapter.entry.validate
    q, k, v, g, beta, _, h0, _, cu = args
    check_args = (q, k, v, g, beta, cu, h0, None, None)
    check_s = bench(check, check_args, batches // 5, per)
    lean_s: list[float] = []
    facade.adapter.set_validation(False)
    for _ in range(5):
        lean_s += bench(facade, args, batches // 5, per)
    facade.adapter.set_validation(True)
    p50d, p50f = statistics.median(direct_s), statistics.median(fi_s)
    p50l = statistics.median(lean_s)
    q = statistics.quantiles
    return {
        "release": release,
        "cu_seqlens": str(cu_dtype).removeprefix("torch."),
        "direct_p50_ns": round(p50d, 1),
        "fi_compat_p50_ns": round(p50f, 1),
        "added_p50_ns": round(p50f - p50d, 1),
        "added_p90_ns": round(q(fi_s, n=10)[-1] - q(direct_s, n=10)[-1], 1),
        "ratio": round(p50f / p50d, 2),
        "added_p50_ns_without_checks": round(p50l - p50d, 1),
        "check_only_p50_ns": round(statistics.median(check_s), 1),
    }


# the state pool: (release, assumed GPU, served natively there)
POOL_CASES = (("0.6.7", (9, 0), False), ("0.6.18", (10, 0), True), ("0.7.4", (9, 0), True))
POOL_BODY = (
    "return (q, output_state if output_state is not None else initial_state) "
    "if output_final_state else q"
)


def pool_inputs(
    device: str, cu_dtype: torch.dtype, dtype: torch.dtype = torch.float32
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """vLLM's call: ``(q, k, v, g, beta, None, pool, True, cu)`` plus ``output_state=pool,
    state_indices=idx`` (int32 pool rows, as vLLM's metadata holds them)."""
    q, k, v, g, beta, _, h0, _, cu = inputs(device, cu_dtype)
    pool = torch.zeros(8, *h0.shape[1:], device=device, dtype=dtype)
    idx = torch.tensor([5, 2], dtype=torch.int32, device=device)
    return (q, k, v, g, beta, None, pool, True, cu), {"output_state": pool, "state_indices": idx}


def side_by_side_pool(
    release: str,
    cc: tuple[int, int],
    native: bool,
    device: str,
    batches: int,
    per: int,
    dtype: torch.dtype = torch.float32,
) -> dict[str, Any]:
    launch = trivial_for(release, POOL_BODY)
    facade = facade_for(release, launch)
    cu_dtype = native_cu(release)
    args, kw = pool_inputs(device, cu_dtype, dtype)
    plain = inputs(device, cu_dtype)
    if native:
        direct_args, direct_kw = args, kw
    else:  # the packed call the emulation makes: gathered float32 rows, no pool
        h0 = args[6].float().index_select(0, kw["state_indices"].long())
        direct_args, direct_kw = (*args[:6], h0, *args[7:]), {}

    def direct() -> Any:
        return launch(*direct_args, **direct_kw)

    def pooled() -> Any:
        return facade(*args, **kw)

    def plain_call() -> Any:
        return facade(*plain)

    def plain_direct() -> Any:
        return launch(*plain)

    arms: dict[str, list[float]] = {"direct": [], "pool": [], "plain": [], "plain_direct": []}
    fns = {"direct": direct, "pool": pooled, "plain": plain_call, "plain_direct": plain_direct}
    with assume_capability(cc):
        try:
            pooled()
        except Exception as e:  # e.g. an fp8 pool a release's path cannot write
            return {
                "release": release,
                "gpu": f"SM{cc[0]}{cc[1]}",
                "pool": "native" if native else "emulated",
                "pool_dtype": str(dtype).removeprefix("torch."),
                "error": f"{type(e).__name__}: {str(e)[:80]}",
            }
        plain_call()
        for _ in range(5):
            for name, fn in fns.items():
                arms[name] += bench(fn, (), batches // 5, per)
    med = {k: statistics.median(v) for k, v in arms.items()}
    return {
        "release": release,
        "gpu": f"SM{cc[0]}{cc[1]}",
        "pool": "native" if native else "emulated",
        "pool_dtype": str(dtype).removeprefix("torch."),
        "plain_direct_p50_ns": round(med["plain_direct"], 1),
        "plain_fi_compat_p50_ns": round(med["plain"], 1),
        "plain_added_p50_ns": round(med["plain"] - med["plain_direct"], 1),
        "pool_direct_p50_ns": round(med["direct"], 1),
        "pool_fi_compat_p50_ns": round(med["pool"], 1),
        "pool_added_p50_ns": round(med["pool"] - med["direct"], 1),
    }


class CountOps(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def extra_ops(release: str, device: str, cu_dtype: torch.dtype) -> list[str]:
    facade = facade_for(release, trivial_for(release))
    args = inputs(device, cu_dtype)
    facade(*args)
    with CountOps() as c:
        facade(*args)
    return c.ops


def import_time(runs: int = 7) -> dict[str, float]:
    code = (
        "import time; t=time.perf_counter(); import fi_compat, fi_compat.gdn_prefill; "
        "print((time.perf_counter()-t)*1e3)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("FI_COMPAT_")}
    env.update(PYTHONPATH=str(ROOT / "src"), PYTHONDONTWRITEBYTECODE="")
    subprocess.run([sys.executable, "-c", code], env=env, capture_output=True)  # write .pyc
    ms = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True
            ).stdout
        )
        for _ in range(runs)
    ]
    return {"best_ms": round(min(ms), 2), "median_ms": round(statistics.median(ms), 2)}


def compile_check(release: str, device: str) -> dict[str, Any]:
    facade = facade_for(release, trivial_for(release, "return q * 2"))
    args = inputs(device, native_cu(release))

    def model(q: Any, k: Any, v: Any, g: Any, beta: Any, cu: Any) -> Any:
        return facade(q, k, v, g, beta, None, None, False, cu) + 1

    facade(*args)
    torch._dynamo.reset()
    explain = torch._dynamo.explain(model)(args[0], args[1], args[2], args[3], args[4], args[8])
    compiled = torch.compile(model, fullgraph=True, backend="eager")
    out = compiled(args[0], args[1], args[2], args[3], args[4], args[8])
    ok = torch.equal(out, args[0] * 2 + 1)
    return {"graph_breaks": explain.graph_break_count, "fullgraph_ok": bool(ok)}


def cuda_graph_check(release: str) -> dict[str, Any]:
    facade = facade_for(release, trivial_for(release, "return q.mul_(2)"))
    args = inputs("cuda", native_cu(release))
    facade(*args)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        facade(*args)
    args[0].fill_(1)
    graph.replay()
    torch.cuda.synchronize()
    return {"captured": True, "replay_ok": bool((args[0] == 2).all().item())}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--release", action="append", help="release(s) to model (default: 3)")
    ap.add_argument("--batches", type=int, default=100)
    ap.add_argument("--per", type=int, default=2000)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--pool-only", action="store_true", help="only the state-pool table")
    ap.add_argument(
        "--pool-dtype",
        action="append",
        choices=("float32", "bfloat16", "float8_e4m3fn", "float8_e5m2"),
        help="state-pool dtype(s) (default: float32, bfloat16, float8_e4m3fn)",
    )
    ap.add_argument(
        "--device",
        action="append",
        choices=("cpu", "cuda"),
        help="where the per-call table's tensors live; twice (cpu, cuda) compares the "
        "two in one process (default: cuda if present, else cpu)",
    )
    a = ap.parse_args()
    releases = a.release or ["0.6.7", "0.6.18", "0.7.4"]
    devices = a.device or ["cuda" if torch.cuda.is_available() else "cpu"]
    device = devices[-1]  # the pool table, the op count, torch.compile
    res: dict[str, Any] = {
        "device": device,
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "per_call": [],
        "extra_ops": {},
        "pool": [],
    }
    print(f"fi_compat call overhead, {device}, python {res['python']}, torch {torch.__version__}")
    print("state-pool pattern beside the plain call (ns per call, p50):")
    print(
        f"{'release':9s} {'gpu':6s} {'pool':9s} {'dtype':13s} {'plain direct':>13s} "
        f"{'plain fi_c':>11s} {'added':>8s} {'pool direct':>12s} {'pool fi_c':>10s} {'added':>8s}"
    )
    pool_dtypes = a.pool_dtype or ["float32", "bfloat16", "float8_e4m3fn"]
    for (rel, cc, native), dt in itertools.product(POOL_CASES, pool_dtypes):
        if a.release and rel not in a.release:
            continue
        r = side_by_side_pool(
            rel, cc, native, device, a.batches, max(a.per // 4, 1), getattr(torch, dt)
        )
        res["pool"].append(r)
        head = f"{rel:9s} {r['gpu']:6s} {r['pool']:9s} {dt:13s}"
        if "error" in r:
            print(f"{head} {r['error']}")
            continue
        print(
            f"{head} {r['plain_direct_p50_ns']:12.0f}n "
            f"{r['plain_fi_compat_p50_ns']:10.0f}n {r['plain_added_p50_ns']:7.0f}n "
            f"{r['pool_direct_p50_ns']:11.0f}n {r['pool_fi_compat_p50_ns']:9.0f}n "
            f"{r['pool_added_p50_ns']:7.0f}n"
        )
    if a.pool_only:
        if a.json:
            Path(a.json).write_text(json.dumps(res, indent=1) + "\n")
        return 0
    print(
        f"{'release':12s} {'tensors':7s} {'cu_seqlens':10s} {'direct':>9s} {'fi_compat':>10s} "
        f"{'added p50':>10s} {'added p90':>10s} {'ratio':>6s} {'no checks':>10s} "
        f"{'check':>8s}"
    )
    for rel, dev in itertools.product(releases, devices):
        for cu in (torch.int32, torch.int64):
            r = side_by_side(rel, dev, cu, a.batches, a.per)
            r["device"] = dev
            res["per_call"].append(r)
            print(
                f"{rel:12s} {dev:7s} {r['cu_seqlens']:10s} {r['direct_p50_ns']:8.0f}n "
                f"{r['fi_compat_p50_ns']:9.0f}n {r['added_p50_ns']:9.0f}n "
                f"{r['added_p90_ns']:9.0f}n {r['ratio']:6.2f} "
                f"{r['added_p50_ns_without_checks']:9.0f}n {r['check_only_p50_ns']:7.0f}n"
            )
            ops = extra_ops(rel, dev, cu)
            res["extra_ops"][f"{rel}/{dev}/{r['cu_seqlens']}"] = ops
    print("aten ops dispatched by fi_compat per call (0 = no extra tensors):")
    for k, ops in res["extra_ops"].items():
        print(f"  {k:18s} {len(ops)} {ops}")
    res["import"] = import_time()
    print(
        f"import fi_compat + fi_compat.gdn_prefill: best {res['import']['best_ms']} ms, "
        f"median {res['import']['median_ms']} ms"
    )
    res["compile"] = {rel: compile_check(rel, device) for rel in releases}
    for rel, c in res["compile"].items():
        print(
            f"torch.compile(fullgraph=True) {rel}: graph breaks {c['graph_breaks']}, "
            f"result ok {c['fullgraph_ok']}"
        )
    if device == "cuda":
        res["cuda_graph"] = {rel: cuda_graph_check(rel) for rel in releases}
        for rel, c in res["cuda_graph"].items():
            print(f"CUDA graph capture {rel}: {c}")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
