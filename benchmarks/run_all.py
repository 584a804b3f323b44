#!/usr/bin/env python3
"""Every host benchmark in one command, one results file.

    FI_COMPAT_ALLOW_CPU=1 python benchmarks/run_all.py [--quick] [--baseline OTHER/src]

Runs ``bench_host.py`` (every facade family and the call patterns engines make, each
beside a direct call of a stand-in with the release's real signature, thread CPU time,
interleaved arms, an A/A control, checks on and off) in its own process and writes
``benchmarks/results/<UTC date>-<host>-host.txt`` (the table) and ``.json`` (the rows).

``--baseline DIR``: the same benchmark again with ``DIR`` (another checkout's ``src``)
first on ``PYTHONPATH``, the two runs alternating (baseline, this checkout, baseline,
this checkout, ``--rounds`` times); the file then holds a before/after table, each figure
the median over its rounds.  The stand-ins, inputs and benchmark code are this
checkout's in both.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def run(src: Path, extra: list[str]) -> list[dict[str, Any]]:
    env = {**os.environ, "FI_COMPAT_ALLOW_CPU": "1", "PYTHONPATH": str(src)}
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        cmd = [sys.executable, str(HERE / "bench_host.py"), "--json", tmp.name, *extra]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            sys.exit(f"bench_host.py failed with {src}:\n{r.stdout}{r.stderr[-3000:]}")
        rows: list[dict[str, Any]] = json.loads(Path(tmp.name).read_text())
        return rows


def merged(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per row (release, call), the median of each figure over the runs."""
    out = []
    for i, row in enumerate(runs[0]):
        r = dict(row)
        for k in ("direct_ns", "aa_ns", "added_on_ns", "added_off_ns", "x_plain"):
            vals = [run[i][k] for run in runs if run[i][k] is not None]
            r[k] = round(statistics.median(vals), 2 if k == "x_plain" else None) if vals else None
        out.append(r)
    return out


def table(rows: list[dict[str, Any]], before: list[dict[str, Any]] | None) -> str:
    head = f"{'release':8s} {'call':46s} {'direct':>7s} {'A/A':>5s}"
    head += (
        f" {'on before':>10s} {'on':>6s} {'off before':>10s} {'off':>6s}"
        if before
        else (f" {'on':>6s} {'off':>6s}")
    )
    head += f" {'x plain':>7s} {'goal on/off':>12s}"
    lines = [head]
    old = {(r["release"], r["call"]): r for r in before or []}
    for r in rows:
        b = old.get((r["release"], r["call"]))
        s = f"{r['release']:8s} {r['call']:46s} {r['direct_ns']:7d} {r['aa_ns']:5d}"
        if before:
            bo = f"{b['added_on_ns']:d}" if b else "-"
            bf = f"{b['added_off_ns']:d}" if b else "-"
            s += f" {bo:>10s} {r['added_on_ns']:6d} {bf:>10s} {r['added_off_ns']:6d}"
        else:
            s += f" {r['added_on_ns']:6d} {r['added_off_ns']:6d}"
        x = "" if r["x_plain"] is None else f"{r['x_plain']:.2f}"
        g = r["goal_ns"]
        miss = r["added_on_ns"] > g[0] or r["added_off_ns"] > g[1]
        s += f" {x:>7s} {g[0]:>6d}/{g[1]:<5d}{' MISS' if miss else ''}"
        lines.append(s)
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", help="results file (.txt; the rows go beside it as .json)")
    ap.add_argument("--quick", action="store_true", help="fewer batches (noisier)")
    ap.add_argument("--baseline", type=Path, help="another checkout's src: before/after")
    ap.add_argument("--rounds", type=int, default=2, help="runs per checkout (alternating)")
    ap.add_argument("--release", action="append", help="release(s) (default: 0.6.7, 0.7.4)")
    ap.add_argument("--family", action="append", help="only these (bench_host.py's families)")
    o = ap.parse_args()
    now = datetime.datetime.now(datetime.UTC)
    host = f"cpu-{os.cpu_count()}core"
    out = Path(o.out or HERE / "results" / f"{now:%Y-%m-%d}-{host}-host.txt")
    extra = ["--quick"] if o.quick else []
    for r in o.release or []:
        extra += ["--release", r]
    for fam in o.family or []:
        extra += ["--family", fam]
    ours: list[list[dict[str, Any]]] = []
    base: list[list[dict[str, Any]]] = []
    for i in range(o.rounds if o.baseline else 1):
        if o.baseline:
            base.append(run(o.baseline.resolve(), extra))
        ours.append(run(SRC, extra))
        print(f"round {i + 1} done", flush=True)
    rows = merged(ours)
    before = merged(base) if base else None
    import torch  # the versions, for the header

    parts = [
        f"fi_compat host time added per call, ns (thread CPU time), {now:%Y-%m-%d %H:%M} UTC",
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"python {sys.version.split()[0]}, torch {torch.__version__}",
        f"this checkout: {SRC}"
        + (f"; before: {o.baseline} ({o.rounds} rounds each)" if base else ""),
        "command: python benchmarks/run_all.py " + " ".join(sys.argv[1:]),
        "",
        table(rows, before),
    ]
    text = "\n".join(parts) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    out.with_suffix(".json").write_text(
        json.dumps({"after": rows, "before": before}, indent=1) + "\n"
    )
    print(text)
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
