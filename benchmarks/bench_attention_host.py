#!/usr/bin/env python3
"""Host time of the stable attention wrappers' ``plan`` / ``run`` (and the cascade merges)
over a stand-in for FlashInfer, for batches without empty rows (the common case).

    FI_COMPAT_ALLOW_CPU=1 python benchmarks/bench_attention_host.py [--json out.json]

Each FlashInfer method is replaced by a stand-in with the release's real signature (its
snapshot) that does what costs nothing: ``plan`` stores a new ``_plan_info`` on the
instance (as FlashInfer's does, which the empty-row hook compares), ``run`` returns
tensors made before the timing.  The instance is a plain object with the attributes
FlashInfer's plan leaves (``_backend="fa2"``, ...).  Arms, interleaved in one process,
p50 over batches of calls: ``direct`` (the stand-in called as model code calls
FlashInfer) and ``fi_compat`` (the facade); ``added`` is their difference.  Run it from
two checkouts (``PYTHONPATH=<checkout>/src``) to compare commits: the stand-ins and the
inputs are the same.  Plan inputs are CPU index tensors (engines plan from host copies).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("FI_COMPAT_ALLOW_CPU", "1")

import torch  # noqa: E402

from fi_compat import _snapshot_io as snapshots  # noqa: E402
from fi_compat.detection import Distribution  # noqa: E402
from support.attention_cases import DEC, ENTRIES, PAGED  # noqa: E402

RELEASES = ("0.6.7", "0.7.4")  # before / from the empty-row fix (0.7.0)
H, D, PAGE = 8, 64, 16


class Wrapper:
    """The attributes FlashInfer's plan leaves on its wrapper."""

    def __init__(self) -> None:
        self._backend = "fa2"
        self._jit_module = None
        self._plan_info: Any = None
        self._causal = True
        self.is_cuda_graph_enabled = False
        self.device = torch.device("cpu")


def stand_in(key: str, release: str, result: Any) -> Any:
    entry, _ = ENTRIES[key]
    params = snapshots.params(entry, release) or []
    sig = ", ".join(
        p[0] + (f"={p[2]}" if p[2] is not None and p[1] not in ("va", "vk") else "")
        if p[1] not in ("va", "vk")
        else ("*" if p[1] == "va" else "**") + p[0]
        for p in params
    )
    body = "self._plan_info = object()\n    return None" if key.endswith(".plan") else "return R"
    ns: dict[str, Any] = {"R": result, "torch": torch}
    exec(f"def f({sig}):\n    {body}\n", ns)
    return ns["f"]


def facade(key: str, release: str, target: Any) -> Any:
    entry, stub = ENTRIES[key]
    a = entry.select(Distribution("flashinfer-python", release, "<bench>", ""))
    f = a.build(stub)
    a._set_target(target)
    return f


def p50(fn: Any, batches: int, per: int) -> float:
    out = []
    for _ in range(batches):
        t0 = time.perf_counter_ns()
        for _ in range(per):
            fn()
        out.append((time.perf_counter_ns() - t0) / per)
    return statistics.median(out)


def measure(release: str, batches: int, per: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    w = Wrapper()

    def i32(vals: list[int]) -> torch.Tensor:
        return torch.tensor(vals, dtype=torch.int32)

    def arms(name: str, direct: Any, ours: Any) -> None:
        d, f = [], []
        for i in range(batches):
            pair = ((d, direct), (f, ours)) if i % 2 == 0 else ((f, ours), (d, direct))
            for acc, fn in pair:
                acc.append(p50(fn, 1, per))
        pd, pf = statistics.median(d), statistics.median(f)
        rows.append(
            {
                "release": release,
                "case": name,
                "direct_ns": round(pd),
                "fi_compat_ns": round(pf),
                "added_ns": round(pf - pd),
            }
        )

    for b in (8, 64, 256):  # decode plan, every request with keys
        lens = [1 + (37 * i) % 900 for i in range(b)]
        pages = [-(-n // PAGE) for n in lens]
        indptr = i32([0, *torch.tensor(pages).cumsum(0).tolist()])
        indices = torch.arange(int(indptr[-1]), dtype=torch.int32)
        last = i32([n - (p - 1) * PAGE for n, p in zip(lens, pages, strict=True)])
        target = stand_in(f"{DEC}.plan", release, None)
        f = facade(f"{DEC}.plan", release, target)
        pa = (indptr, indices, last, H, H, D, PAGE)
        kw = {"q_data_type": torch.bfloat16}
        arms(
            f"decode.plan B={b}",
            partial(target, w, *pa, **kw),
            partial(f, w, *pa, **kw),
        )
        if b == 8:
            q = torch.zeros(b, H, D, dtype=torch.bfloat16)
            kv = torch.zeros(2, 2, PAGE, H, D, dtype=torch.bfloat16)
            for lse in (False, True):
                res = (q, torch.zeros(b, H)) if lse else q
                t = stand_in(f"{DEC}.run", release, res)
                fr = facade(f"{DEC}.run", release, t)
                arms(
                    f"decode.run return_lse={lse}",
                    partial(t, w, q, kv, return_lse=lse),
                    partial(fr, w, q, kv, return_lse=lse),
                )
    for b in (8, 64):  # paged prefill plan, causal, kv_len >= qo_len everywhere
        qo = [1 + (13 * i) % 64 for i in range(b)]
        kvl = [n + (29 * i) % 500 for i, n in enumerate(qo)]
        pages = [-(-n // PAGE) for n in kvl]
        qo_indptr = i32([0, *torch.tensor(qo).cumsum(0).tolist()])
        indptr = i32([0, *torch.tensor(pages).cumsum(0).tolist()])
        indices = torch.arange(int(indptr[-1]), dtype=torch.int32)
        last = i32([n - (p - 1) * PAGE for n, p in zip(kvl, pages, strict=True)])
        target = stand_in(f"{PAGED}.plan", release, None)
        f = facade(f"{PAGED}.plan", release, target)
        pa = (qo_indptr, indptr, indices, last, H, H, D, PAGE)
        kw2 = {"causal": True, "q_data_type": torch.bfloat16}
        arms(
            f"prefill.plan B={b}",
            partial(target, w, *pa, **kw2),
            partial(f, w, *pa, **kw2),
        )
        if b == 8:
            n = sum(qo)
            q = torch.zeros(n, H, D, dtype=torch.bfloat16)
            kv = torch.zeros(2, 2, PAGE, H, D, dtype=torch.bfloat16)
            t = stand_in(f"{PAGED}.run", release, (q, torch.zeros(n, H)))
            fr = facade(f"{PAGED}.run", release, t)
            arms(
                "prefill.run return_lse=True",
                partial(t, w, q, kv, return_lse=True),
                partial(fr, w, q, kv, return_lse=True),
            )
    v = torch.zeros(16, H, D)
    s = torch.zeros(16, H)
    t = stand_in("merge_state", release, (v.clone(), s.clone()))
    fm = facade("merge_state", release, t)
    arms("merge_state (CPU tensors)", partial(t, v, s, v, s), partial(fm, v, s, v, s))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--batches", type=int, default=30)
    ap.add_argument("--per", type=int, default=200)
    o = ap.parse_args()
    rows = [r for rel in RELEASES for r in measure(rel, o.batches, o.per)]
    print(f"host ns per call, python {sys.version.split()[0]}, torch {torch.__version__}")
    print(f"{'release':8s} {'case':30s} {'direct':>9s} {'fi_compat':>10s} {'added':>8s}")
    for r in rows:
        print(
            f"{r['release']:8s} {r['case']:30s} {r['direct_ns']:9d} {r['fi_compat_ns']:10d} "
            f"{r['added_ns']:8d}"
        )
    if o.json:
        Path(o.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
