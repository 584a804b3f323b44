#!/usr/bin/env python3
"""Added host time of the GDN-prefill and rmsnorm facades with the prototype C checks.

    python benchmarks/accel_prototype/measure.py [--releases 0.6.7 0.7.4] [--json out.json]

Builds ``_fi_accel.c`` (abi3, Py_LIMITED_API 3.10) with the system C compiler into a
temporary folder, then, per release, side by side in one process, interleaved batches
of calls, thread CPU time (``time.thread_time_ns``), p50 over batches:

* ``direct``: a stand-in bound to the release's exact signature (from its snapshot),
  called as model code calls FlashInfer; ``direct again``: the same, a second arm (the
  A/A control: the noise floor of a difference);
* ``checks on (Python)``: the facade as it ships (the generated Python check);
* ``checks on (C)``: the same facade, its ``_validate`` global swapped for the C check
  (a drop-in: same return value; on any failure it calls the Python check);
* ``checks off``: ``set_validation(False)`` (the facade frame and forwarding alone);
* the checks alone: the Python check and the C check called directly, and the torch
  getters the check calls (``.shape``, ``.dtype``, ``get_device()``), read from C and
  compared with nothing: the floor of any check that does not read torch's memory.

Added = arm - direct.  The stand-ins come from benchmarks/bench_gdn_prefill.py and
benchmarks/bench_elementwise.py (same inputs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("FI_COMPAT_ALLOW_CPU", "1")
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import torch  # noqa: E402

import bench_elementwise as elementwise  # noqa: E402
import bench_gdn_prefill as gdn  # noqa: E402


def build(out: Path) -> tuple[Any, float]:
    """Compile the prototype (returns the module and the compile's wall seconds)."""
    so = out / "_fi_accel.abi3.so"
    inc = sysconfig.get_paths()["include"]
    cc = os.environ.get("CC", "cc")
    t0 = time.perf_counter()
    subprocess.run(
        [cc, "-O2", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", f"-I{inc}",
         str(HERE / "_fi_accel.c"), "-o", str(so)],
        check=True,
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    sys.path.insert(0, str(out))
    import _fi_accel

    return _fi_accel, seconds


def batch(fn: Any, a: tuple[Any, ...], per: int) -> float:
    t0 = time.thread_time_ns()
    for _ in range(per):
        fn(*a)
    return (time.thread_time_ns() - t0) / per


def race(arms: dict[str, tuple[Any, tuple[Any, ...], Any]], rounds: int, per: int) -> dict:
    """Interleaved: every round runs one batch of every arm (``setup`` before it)."""
    samples: dict[str, list[float]] = {k: [] for k in arms}
    for _ in range(rounds):
        for k, (fn, a, setup) in arms.items():
            if setup is not None:
                setup()
            samples[k].append(batch(fn, a, per))
    return {k: statistics.median(v) for k, v in samples.items()}


def arms_for(facade: Any, direct: Any, a: tuple[Any, ...], accel: Any) -> dict:
    ad = facade.adapter
    ns = ad.ns
    python_check = ns["_validate"]

    def mode(validation: bool, check: Any) -> Any:
        def setup() -> None:
            ad.set_validation(validation)
            ns["_validate"] = check

        return setup

    return {
        "direct": (direct, a, None),
        "direct again": (direct, a, None),
        "checks on (Python)": (facade, a, mode(True, python_check)),
        "checks on (C)": (facade, a, mode(True, accel)),
        "checks off": (facade, a, mode(False, python_check)),
    }


def report(name: str, rel: str, med: dict, alone: dict) -> dict:
    d = med["direct"]
    row = {
        "facade": name,
        "release": rel,
        "direct_ns": round(d, 1),
        "aa_ns": round(med["direct again"] - d, 1),
        "on_python_ns": round(med["checks on (Python)"] - d, 1),
        "on_c_ns": round(med["checks on (C)"] - d, 1),
        "off_ns": round(med["checks off"] - d, 1),
        "check_python_alone_ns": round(alone["python"], 1),
        "check_c_alone_ns": round(alone["c"], 1),
        "getters_alone_ns": round(alone["getters"], 1),
    }
    print(
        f"{name:12s} {rel:7s} direct {d:6.0f} ns | added: A/A {row['aa_ns']:+5.0f}  "
        f"on/Python {row['on_python_ns']:5.0f}  on/C {row['on_c_ns']:5.0f}  "
        f"off {row['off_ns']:5.0f} | check alone: Python {alone['python']:4.0f}  "
        f"C {alone['c']:4.0f}  getters {alone['getters']:4.0f}"
    )
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--releases", nargs="+", default=["0.6.7", "0.7.4"])
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--per", type=int, default=2000)
    ap.add_argument("--json")
    o = ap.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        accel, seconds = build(Path(tmp))
        print(f"built _fi_accel.abi3.so in {seconds:.2f} s")
        rows = []
        for rel in o.releases:
            # GDN prefill: nine positional arguments, as model code passes them
            launch = gdn.trivial_for(rel)
            f = gdn.facade_for(rel, launch)
            a = gdn.inputs("cpu", gdn.native_cu(rel))
            f(*a)  # first call: prepares the facade (binds the Python check)
            py = f.adapter.ns["_validate"]
            mod = sys.modules[py.__module__]
            c = accel.gdn_prefill(py, torch.Tensor.get_device, mod._INT, mod._STATE)
            q, k, v, g, beta, _scale, h0, _ofs, cu = a
            va = (q, k, v, g, beta, cu, h0, None, None)
            assert c(*va) == py(*va)
            med = race(arms_for(f, launch, a, c), o.rounds, o.per)
            # getters the check calls: q, k, v shape+device; g, beta shape+device;
            # cu_seqlens shape+dtype+device; initial_state dtype+device
            floor = (accel.reads, (torch.Tensor.get_device, (5, 5, 5, 5, 5, 7, 6, 4, 6), *va))
            alone = race(
                {"python": (py, va, None), "c": (c, va, None), "getters": (*floor, None)},
                o.rounds,
                o.per,
            )
            rows.append(report("gdn_prefill", rel, med, alone))
            f.adapter.set_validation(True)
            f.adapter.ns["_validate"] = py
            # rmsnorm (input, weight), positional
            st = elementwise.stand_in("rmsnorm", rel)
            fr = elementwise.facade("rmsnorm", rel, st)
            ra = elementwise.args("rmsnorm")
            fr(*ra)
            py = fr.adapter.ns["_validate"]
            c = accel.rmsnorm(py, torch.Tensor.get_device, torch.float16, torch.bfloat16)
            va = (ra[0], ra[1], None)
            assert c(*va) == py(*va)
            med = race(arms_for(fr, st, ra, c), o.rounds, o.per)
            floor = (accel.reads, (torch.Tensor.get_device, (7, 7, 7), *va))
            alone = race(
                {"python": (py, va, None), "c": (c, va, None), "getters": (*floor, None)},
                o.rounds,
                o.per,
            )
            rows.append(report("rmsnorm", rel, med, alone))
            fr.adapter.set_validation(True)
            fr.adapter.ns["_validate"] = py
    if o.json:
        Path(o.json).write_text(json.dumps({"compile_s": seconds, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
