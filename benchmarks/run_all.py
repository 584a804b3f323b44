#!/usr/bin/env python3
"""Every host benchmark in one command, one results file.

    FI_COMPAT_ALLOW_CPU=1 python benchmarks/run_all.py [--quick] [--out FILE]

Runs, one after another and each in its own process (same interpreter, same
``PYTHONPATH``: put another checkout's ``src`` first to measure it), the call patterns
engines make, each beside a direct call of a stand-in with the release's real signature:

* ``bench_attention_host.py``: decode / prefill ``plan`` (CUDA-graph-style: CPU index
  tensors, the arguments engines pass) and ``run``, ``merge_state``;
* ``bench_gdn_prefill.py``: GDN prefill, plain and with the state pool (native on 0.7.4);
* ``bench_fused_moe.py``: the MoE entry points, routed ``(ids, weights)`` pairs included;
* ``bench_elementwise.py``: norm, rope, activation, sampling, quantisation, ``bmm_fp8``.

The output of each (added ns per call, checks on and off where the benchmark reports
both) is written to ``--out`` (default ``benchmarks/results/<UTC date>-host.txt``).
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHES = {
    "attention (plan / run)": ["bench_attention_host.py"],
    "gdn_prefill (plain, state pool)": [
        "bench_gdn_prefill.py",
        "--release",
        "0.6.7",
        "--release",
        "0.7.4",
    ],
    "fused_moe (routed pairs, out=)": [
        "bench_fused_moe.py",
        "--release",
        "0.6.7",
        "--release",
        "0.7.4",
    ],
    "elementwise (sampling, norm, rope, ...)": ["bench_elementwise.py"],
}
QUICK = {
    "bench_attention_host.py": ["--batches", "10", "--per", "100"],
    "bench_gdn_prefill.py": ["--batches", "20", "--per", "300"],
    "bench_fused_moe.py": ["--batches", "10", "--per", "200"],
    "bench_elementwise.py": ["--batches", "20", "--per", "100"],
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--quick", action="store_true", help="fewer batches (noisier)")
    o = ap.parse_args()
    day = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    out = Path(o.out or HERE / "results" / f"{day}-host.txt")
    env = {**os.environ, "FI_COMPAT_ALLOW_CPU": "1"}
    parts = [f"python {sys.version.split()[0]}, PYTHONPATH={env.get('PYTHONPATH', '')}"]
    for title, cmd in BENCHES.items():
        args = [sys.executable, str(HERE / cmd[0]), *cmd[1:]]
        if o.quick:
            args += QUICK[cmd[0]]
        r = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
        text = r.stdout if r.returncode == 0 else r.stdout + r.stderr[-2000:]
        parts.append(f"== {title}: {' '.join(cmd)} (exit {r.returncode})\n{text}")
        print(parts[-1], flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(parts))
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
