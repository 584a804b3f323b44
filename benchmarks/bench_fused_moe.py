#!/usr/bin/env python3
"""Overhead of fi_compat.fused_moe over a direct FlashInfer call, per entry point.

    python benchmarks/bench_fused_moe.py [--release 0.6.7 ...] [--json out.json]

Both arms call the same trivial function in place of FlashInfer's launch: it has the
release's real signature (read from the snapshot of its wheel, defaults included) and
returns its ``hidden_states``/``input``.  The direct arm calls it as model code calls
FlashInfer (by keyword, with the release's own enum integers); the fi_compat arm calls
the facade with the same arguments and fi_compat's stable enum members.  Measured side
by side in one process, interleaved, batches of calls; p50 over batches.  Cases:

* ``fp4``: ``trtllm_fp4_block_scale_moe`` (40 parameters, two enums, the scale
  normaliser) with conforming 2-D scales, and with the flat 1-D scale of 0.6.7-era code
  (a view per call);
* ``fp8_block``: ``trtllm_fp8_block_scale_moe`` with native ``[H/128, T]`` scales;
* ``fp4_routed``: ``trtllm_fp4_block_scale_routed_moe`` (precomputed routing, one
  packed int32 ``topk_ids`` tensor);
* ``fp8_block_routed``: ``trtllm_fp8_block_scale_routed_moe`` (0.6.3+; skipped before);
* ``cutlass``: ``cutlass_fused_moe`` (41 parameters, one enum).

Also: extra aten ops per call for conforming inputs (every op dispatched is counted),
and ``torch.compile(fullgraph=True)`` through the fp4 facade.
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
# both arms run on CPU tensors: let them through the facades' CUDA-only device check
os.environ.setdefault("FI_COMPAT_ALLOW_CPU", "1")
sys.path.append(str(ROOT / "src"))  # a PYTHONPATH checkout first (before/after)
sys.path.insert(0, str(ROOT / "tests"))

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from fi_compat import _snapshot_io as snapshots  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402
from support.moe_helpers import ENTRIES, args, moe_facade, release_value  # noqa: E402
from support.spy import default_value  # noqa: E402


def trivial_for(name: str, release: str) -> Any:
    """A function with ``release``'s exact signature of ``name`` returning its input."""
    params = snapshots.params(ENTRIES[name], release)
    assert params is not None
    parts, star, defaults = [], False, {}
    for pname, kind, default, _ in params:
        if kind == "ko" and not star:
            parts.append("*")
            star = True
        if default is None and kind != "ko":
            parts.append(pname)
        else:
            defaults["_d_" + pname] = None if default is None else default_value(default, release)
            parts.append(f"{pname}=_d_{pname}")
    first = "input" if name == "cutlass_fused_moe" else "hidden_states"
    ns: dict[str, Any] = dict(defaults)
    exec(f"def flashinfer_launch({', '.join(parts)}):\n    return {first}\n", ns)
    return ns["flashinfer_launch"]


def direct_kwargs(name: str, release: str, kw: dict[str, Any]) -> dict[str, Any]:
    """The same call as model code writes it for this release (its names and integers)."""
    _, _, adapter = moe_facade(name, release)
    out = {}
    for n, v in kw.items():
        p = ENTRIES[name].params[n]
        rname = adapter.spelling.get(n, n)
        out[rname] = release_value(adapter, n, v.name) if p.enum and v is not None else v
    if "tile_tokens_dim" in adapter.present:  # 0.5.x: required in fp4, only logged
        out["tile_tokens_dim"] = None
    return out


CASES = {
    "fp4": ("trtllm_fp4_block_scale_moe", {}),
    "fp4_flat_scale": ("trtllm_fp4_block_scale_moe", {"flat": True}),
    "fp8_block": ("trtllm_fp8_block_scale_moe", {}),
    "fp4_routed": ("trtllm_fp4_block_scale_routed_moe", {}),
    "fp8_block_routed": ("trtllm_fp8_block_scale_routed_moe", {}),
    "cutlass": ("cutlass_fused_moe", {}),
}


def call_kwargs(name: str, flat: bool = False) -> dict[str, Any]:
    from fi_compat.enums import ActivationType, RoutingMethodType

    kw = args(name)
    if name.startswith("trtllm"):
        kw["routing_method_type"] = RoutingMethodType.Renormalize
    if name.startswith("trtllm_fp4") or name == "cutlass_fused_moe":
        kw["activation_type"] = ActivationType.Swiglu
    if flat:
        kw["hidden_states_scale"] = kw["hidden_states_scale"].reshape(-1)
    return kw


def bench(fn: Any, kw: dict[str, Any], batches: int, per: int) -> list[float]:
    out = []
    for _ in range(batches):
        t0 = time.perf_counter_ns()
        for _ in range(per):
            fn(**kw)
        out.append((time.perf_counter_ns() - t0) / per)
    return out


def side_by_side(case: str, release: str, batches: int, per: int) -> dict[str, Any]:
    name, opts = CASES[case]
    launch = trivial_for(name, release)
    facade, _, adapter = moe_facade(name, release)
    adapter._set_target(launch)
    kw = call_kwargs(name, **opts)
    dkw = direct_kwargs(name, release, call_kwargs(name))  # direct: conforming 2-D
    facade(**kw)
    d: list[float] = []
    f: list[float] = []
    for _ in range(5):
        d += bench(launch, dkw, batches // 5, per)
        f += bench(facade, kw, batches // 5, per)
    pd, pf = statistics.median(d), statistics.median(f)
    with CountOps() as c:
        facade(**kw)
    return {
        "case": case,
        "release": release,
        "direct_p50_ns": round(pd, 1),
        "fi_compat_p50_ns": round(pf, 1),
        "added_p50_ns": round(pf - pd, 1),
        "ratio": round(pf / pd, 2),
        "extra_aten_ops": c.ops,
    }


class CountOps(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def compile_check(release: str) -> dict[str, Any]:
    name = "trtllm_fp4_block_scale_moe"
    facade, _, adapter = moe_facade(name, release)
    body = trivial_for(name, release)
    adapter._set_target(lambda *a, **k: [body(*a, **k).float() * 2])
    kw = call_kwargs(name, flat=True)
    facade(**kw)
    fixed = {k: v for k, v in kw.items() if k != "hidden_states_scale"}

    def model(scale: Any) -> Any:
        return facade(**fixed, hidden_states_scale=scale)[0] + 1

    torch._dynamo.reset()
    try:
        explain = torch._dynamo.explain(model)(kw["hidden_states_scale"])
        compiled = torch.compile(model, fullgraph=True, backend="eager")
        out = compiled(kw["hidden_states_scale"])
        ok = torch.equal(out, kw["hidden_states"].float() * 2 + 1)
        return {"graph_breaks": explain.graph_break_count, "fullgraph_ok": bool(ok)}
    except Exception as exc:  # reported, not hidden
        return {"fullgraph_ok": False, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--release", action="append", help="release(s) to model (default: 3)")
    ap.add_argument("--batches", type=int, default=50)
    ap.add_argument("--per", type=int, default=1000)
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    releases = a.release or ["0.5.0", "0.6.7", "0.7.4"]
    rows = [
        side_by_side(c, r, a.batches, a.per)
        for r in releases
        for c in CASES
        if at_least(place(r), ENTRIES[CASES[c][0]].since)  # the release has it
    ]
    res = {
        "torch": torch.__version__,
        "rows": rows,
        "compile": {r: compile_check(r) for r in releases},
    }
    print(
        f"{'case':16s} {'release':8s} {'direct ns':>10s} {'fi_compat ns':>12s} "
        f"{'added ns':>9s} {'ratio':>6s}  extra aten ops"
    )
    for r in rows:
        print(
            f"{r['case']:16s} {r['release']:8s} {r['direct_p50_ns']:10.0f} "
            f"{r['fi_compat_p50_ns']:12.0f} {r['added_p50_ns']:9.0f} {r['ratio']:6.2f}  "
            f"{', '.join(r['extra_aten_ops']) or 'none'}"
        )
    for r, c in res["compile"].items():
        print(f"torch.compile(fullgraph=True) via fp4 facade, {r}: {c}")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
