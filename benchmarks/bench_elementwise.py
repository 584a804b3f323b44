#!/usr/bin/env python3
"""Host time fi_compat adds to ``fi_compat.norm.rmsnorm`` / ``fused_add_rmsnorm``,
``fi_compat.activation.silu_and_mul`` and ``fi_compat.rope.apply_rope_pos_ids`` over a
direct call, per release era.

    FI_COMPAT_ALLOW_CPU=1 python benchmarks/bench_elementwise.py [--json out.json]

Both arms call the same trivial stand-in in place of FlashInfer's function: it has the
release's real signature (from its snapshot) and returns its first argument.  The direct
arm calls it as model code calls FlashInfer (positional arguments); the fi_compat arm
calls the facade with the same arguments (metadata checks on, then off).  Interleaved
batches in one process; p50 over batches.  The goal is <= 500 ns added with checks.

    python benchmarks/bench_elementwise.py --real [--json out.json]   # on a GPU

``--real``: the installed FlashInfer's own functions on CUDA tensors (8 x 4096 bf16: the
kernels take less time than the host dispatch, so a batch of calls without a sync measures
host time): FlashInfer's host time per call, and fi_compat's added time on top, checks on.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT / "src"))  # a PYTHONPATH checkout first (before/after)
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("FI_COMPAT_ALLOW_CPU", "1")

import torch  # noqa: E402

from fi_compat import _snapshot_io as snapshots  # noqa: E402
from fi_compat import activation, norm, rope  # noqa: E402
from fi_compat._adapters.activation import SPECS as ACT  # noqa: E402
from fi_compat._adapters.norm import SPECS as NORM  # noqa: E402
from fi_compat._adapters.rope import SPECS as ROPE  # noqa: E402

ALL = {**NORM, **ACT, **ROPE}
MODULES = {
    **dict.fromkeys(NORM, norm),
    **dict.fromkeys(ACT, activation),
    **dict.fromkeys(ROPE, rope),
}
from fi_compat.detection import Distribution  # noqa: E402
from support.spy import stub  # noqa: E402

# one release per era of enable_pdl: none (0.2.0.post1), bool (0.2.5), Optional and not
# clamped (0.4.1), clamped in norm (0.7.4)
RELEASES = ("0.2.0.post1", "0.2.5", "0.4.1", "0.7.4")
CASES = (
    "rmsnorm",
    "fused_add_rmsnorm",
    "silu_and_mul",
    "apply_rope_pos_ids",
    "apply_rope_with_cos_sin_cache",
)


def stand_in(name: str, release: str) -> Any:
    entry = ALL[name]
    params = snapshots.params(entry, release) or []
    sig = ", ".join(p[0] + (f"={p[2]}" if p[2] is not None else "") for p in params)
    ns: dict[str, Any] = {}
    exec(f"def {name}({sig}):\n    return {params[0][0]}\n", ns)
    return ns[name]


def facade(name: str, release: str, target: Any) -> Any:
    entry = ALL[name]
    typed = stub(MODULES[name], name)
    a = entry.select(Distribution("flashinfer-python", release, "<bench>", ""))
    f = a.build(typed)
    a._set_target(target)
    return f


def args(name: str) -> tuple[Any, ...]:
    x = torch.randn(8, 256, dtype=torch.bfloat16)
    w = torch.ones(256, dtype=torch.bfloat16)
    if name == "rmsnorm":
        return (x, w)
    if name == "fused_add_rmsnorm":
        return (x, x.clone(), w)
    if name == "apply_rope_pos_ids":
        q = torch.randn(8, 4, 64, dtype=torch.bfloat16)
        return (q, q.clone(), torch.arange(8, dtype=torch.int32))
    if name == "apply_rope_with_cos_sin_cache":
        q = torch.randn(8, 4 * 64, dtype=torch.bfloat16)
        cache = torch.randn(32, 64)
        return (torch.arange(8, dtype=torch.int32), q, q.clone(), 64, cache)
    return (x,)


def bench(fn: Any, a: tuple[Any, ...], batches: int, per: int) -> list[float]:
    out = []
    for _ in range(batches):
        t0 = time.perf_counter_ns()
        for _ in range(per):
            fn(*a)
        out.append((time.perf_counter_ns() - t0) / per)
    return out


def real(o: argparse.Namespace) -> int:
    """FlashInfer's own host time per call vs fi_compat's on top (installed release)."""
    import flashinfer

    import fi_compat

    release = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
    x = torch.randn(8, 4096, device="cuda").to(torch.bfloat16)
    w = torch.ones(4096, device="cuda", dtype=torch.bfloat16)
    r = x.clone()
    gate = torch.randn(8, 2 * 4096, device="cuda").to(torch.bfloat16)
    cases: dict[str, tuple[Any, Any, tuple[Any, ...]]] = {
        "rmsnorm": (flashinfer.norm.rmsnorm, norm.rmsnorm, (x, w)),
        "fused_add_rmsnorm": (flashinfer.norm.fused_add_rmsnorm, norm.fused_add_rmsnorm, (x, r, w)),
        "silu_and_mul": (flashinfer.activation.silu_and_mul, activation.silu_and_mul, (gate,)),
    }
    rows = []
    print(f"host time per call on {torch.cuda.get_device_name()}, flashinfer-python {release}")
    print(f"{'function':20s} {'flashinfer':>11s} {'fi_compat':>10s} {'added':>8s} {'ratio':>6s}")
    for name, (direct, facade_fn, a) in cases.items():
        t0 = time.perf_counter()
        direct(*a)  # JIT / load
        torch.cuda.synchronize()
        first = time.perf_counter() - t0
        facade_fn(*a)
        torch.cuda.synchronize()

        def timed(fn: Any, args: tuple[Any, ...] = a) -> list[float]:
            out = bench(fn, args, 1, o.per)
            torch.cuda.synchronize()
            return out

        d: list[float] = []
        f: list[float] = []
        for i in range(o.batches):
            arms = ((d, direct), (f, facade_fn)) if i % 2 == 0 else ((f, facade_fn), (d, direct))
            for acc, fn in arms:
                acc += timed(fn)
        pd, pf = statistics.median(d), statistics.median(f)
        rows.append(
            {
                "function": name,
                "release": release,
                "flashinfer_host_p50_ns": round(pd, 1),
                "fi_compat_host_p50_ns": round(pf, 1),
                "added_p50_ns": round(pf - pd, 1),
                "first_call_s": round(first, 2),
            }
        )
        print(f"{name:20s} {pd:10.0f}n {pf:9.0f}n {pf - pd:7.0f}n {pf / pd:6.3f}")
    if o.json:
        Path(o.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--real", action="store_true", help="FlashInfer's own kernels on CUDA")
    ap.add_argument("--batches", type=int, default=100)
    ap.add_argument("--per", type=int, default=200)
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated functions")
    ap.add_argument("--releases", default=",".join(RELEASES), help="comma-separated releases")
    o = ap.parse_args()
    if o.real:
        return real(o)
    rows = []
    print(
        f"fi_compat added host time per call, python {sys.version.split()[0]}, {torch.__version__}"
    )
    print(
        f"{'function':20s} {'release':12s} {'direct':>8s} {'fi_compat':>10s} {'added':>8s} "
        f"{'no checks':>10s}"
    )
    for name in o.cases.split(","):
        for rel in o.releases.split(","):
            target = stand_in(name, rel)
            f = facade(name, rel, target)
            a = args(name)
            f(*a)  # first call binds the torch globals
            d: list[float] = []
            w: list[float] = []
            for _ in range(5):
                d += bench(target, a, o.batches // 5, o.per)
                w += bench(f, a, o.batches // 5, o.per)
            f.adapter.set_validation(False)
            lean: list[float] = []
            for _ in range(5):
                lean += bench(f, a, o.batches // 5, o.per)
            f.adapter.set_validation(True)
            pd, pw, pl = (statistics.median(v) for v in (d, w, lean))
            rows.append(
                {
                    "function": name,
                    "release": rel,
                    "direct_p50_ns": round(pd, 1),
                    "fi_compat_p50_ns": round(pw, 1),
                    "added_p50_ns": round(pw - pd, 1),
                    "added_p50_ns_without_checks": round(pl - pd, 1),
                }
            )
            print(f"{name:20s} {rel:12s} {pd:7.0f}n {pw:9.0f}n {pw - pd:7.0f}n {pl - pd:9.0f}n")
    if o.json:
        Path(o.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
