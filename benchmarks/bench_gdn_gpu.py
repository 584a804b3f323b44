#!/usr/bin/env python3
"""End-to-end cost of fi_compat's GDN prefill facade over a direct FlashInfer call, on CUDA.

    python benchmarks/bench_gdn_gpu.py [--release 0.7.4] [--rounds 200] [--per 20] [--json out.json]

Runs the installed FlashInfer's real kernels (one release per interpreter: the one
``fi_compat.detect()`` reports; ``--release`` only confirms it).  Three arms, same input
tensors, measured side by side in one process:

* ``direct``: ``flashinfer.gdn_prefill.chunk_gated_delta_rule(q, k, v, g, beta, scale, h0,
  True, cu)``, positional, as model code calls it, with the release's native
  ``cu_seqlens`` dtype (int64 for 0.6.x, int32 for 0.7.x);
* ``fi_compat``: ``fi_compat.gdn_prefill.chunk_gated_delta_rule`` with the same arguments,
  metadata checks on (the default);
* ``fi_compat_nochecks``: the same after ``fi_compat.set_validation(False)``.

Each round runs every arm (rotating which goes first) as ``torch.cuda.synchronize();
t0; <per calls>; torch.cuda.synchronize(); t1`` and records ``(t1 - t0) / per``; p50
(and p10/p90) over rounds.  Two modes per shape: ``sync1`` (one call per round: launch
plus completion latency) and ``pipelined`` (``--per`` calls queued per round: throughput,
host overhead hidden where the GPU is the bottleneck).  Shapes:

* ``large``: 8 sequences x 512 tokens, 16 heads (q, k, v), head size 128;
* ``host``: 4 sequences x 16 tokens, 2 heads, head size 128 (host overhead dominates).

bf16 q/k/v, float32 g (alpha in (0.8, 1)) / beta / initial_state, ``output_final_state=True``.
The first call of each arm is timed separately (``first_call_s``: the JIT build, paid by
the direct arm, which runs first) and outputs of the arms are compared (bit-identical
expected: same kernel, same inputs).

Without CUDA, torch or an importable ``flashinfer.gdn_prefill`` it prints why and exits 0.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

SHAPES = {
    # name: (num_seqs, tokens per sequence, heads, head size)
    "large": (8, 512, 16, 128),
    "host": (4, 16, 2, 128),
}
ARMS = ("direct", "fi_compat", "fi_compat_nochecks")
DEVICE = "cuda"  # where the inputs are made (a CPU dry run of the harness may set "cpu")


def skip(reason: str, json_path: str | None) -> int:
    print(f"bench_gdn_gpu: skipped: {reason}")
    if json_path:
        Path(json_path).write_text(json.dumps({"skipped": reason}, indent=1) + "\n")
    return 0


def make_inputs(torch: Any, shape: tuple[int, int, int, int], cu_dtype: Any) -> tuple[Any, ...]:
    n, t, h, d = shape
    total = n * t
    gen = torch.Generator(device=DEVICE).manual_seed(0)

    def rn(*s: int) -> Any:
        return torch.randn(*s, generator=gen, device=DEVICE)

    q = torch.nn.functional.normalize(rn(total, h, d), dim=-1).to(torch.bfloat16)
    k = torch.nn.functional.normalize(rn(total, h, d), dim=-1).to(torch.bfloat16)
    v = (rn(total, h, d) * 0.5).to(torch.bfloat16)
    g = torch.rand(total, h, generator=gen, device=DEVICE) * 0.2 + 0.8
    beta = torch.rand(total, h, generator=gen, device=DEVICE) * 0.5 + 0.25
    h0 = rn(n, h, d, d) * 0.05
    cu = torch.arange(0, total + 1, t, dtype=cu_dtype, device=DEVICE)
    return (q, k, v, g, beta, 1 / math.sqrt(d), h0, True, cu)


def timed_rounds(
    torch: Any,
    arms: dict[str, Any],
    args: tuple[Any, ...],
    rounds: int,
    per: int,
    set_validation: Any,
) -> dict[str, list[float]]:
    """µs per call for each arm, one value per round; arms interleaved, order rotated."""
    names = list(arms)
    out: dict[str, list[float]] = {n: [] for n in names}
    sync = torch.cuda.synchronize
    clock = time.perf_counter_ns
    gc.collect()
    gc.disable()
    try:
        for r in range(rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                fn = arms[name]
                set_validation(name != "fi_compat_nochecks")
                sync()
                t0 = clock()
                for _ in range(per):
                    fn(*args)
                sync()
                out[name].append((clock() - t0) / per / 1e3)
    finally:
        gc.enable()
        set_validation(True)
    return out


def summary(xs: list[float]) -> dict[str, float]:
    dec = statistics.quantiles(xs, n=10)
    return {
        "p50_us": round(statistics.median(xs), 2),
        "p10_us": round(dec[0], 2),
        "p90_us": round(dec[-1], 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", help="the installed release expected (checked against detect())")
    ap.add_argument("--rounds", type=int, default=200, help="rounds per mode and shape")
    ap.add_argument("--per", type=int, default=20, help="calls per round in the pipelined mode")
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES), help="default: all")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument(
        "--stand-in",
        metavar="RELEASE",
        help="without FlashInfer: both arms call a stand-in with RELEASE's real signature "
        "(its snapshot) that returns (q, initial_state), and the facade is the installed "
        "path's (FI_COMPAT_FLASHINFER_VERSION=RELEASE); the same rounds, so what remains is "
        "fi_compat's own host time on this machine, with CUDA tensors",
    )
    a = ap.parse_args()
    if a.stand_in:
        os.environ["FI_COMPAT_FLASHINFER_VERSION"] = a.stand_in

    try:
        import torch
    except Exception as exc:
        return skip(f"torch not importable ({exc!r})", a.json)
    if not torch.cuda.is_available():
        return skip("needs a CUDA GPU (torch.cuda.is_available() is False)", a.json)

    import fi_compat
    from fi_compat.registry import at_least, place

    det = fi_compat.detect()
    dist = det.flashinfer
    if dist is None:
        return skip("flashinfer-python is not installed (fi_compat.detect())", a.json)
    release = dist.version
    if a.release and a.release not in (release, dist.public):
        print(
            f"bench_gdn_gpu: --release {a.release} asked, but this interpreter has "
            f"flashinfer-python {release} ({dist.location}); run one release per interpreter"
        )
        return 2
    from fi_compat import gdn_prefill

    facade = gdn_prefill.chunk_gated_delta_rule
    t0 = time.perf_counter()
    if a.stand_in:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        import bench_gdn_prefill

        direct = bench_gdn_prefill.trivial_for(release, "return (q, initial_state)")
        facade.adapter._set_target(direct)
    else:
        try:
            import flashinfer.gdn_prefill as fgdn
        except Exception as exc:
            return skip(f"flashinfer.gdn_prefill not importable on {release}: {exc!r}", a.json)
        direct = fgdn.chunk_gated_delta_rule
    import_s = time.perf_counter() - t0
    cu_dtype = torch.int32 if at_least(place(dist.public), "0.7.0") else torch.int64
    cap = torch.cuda.get_device_capability()
    res: dict[str, Any] = {
        "release": release,
        "device": torch.cuda.get_device_name(),
        "capability": f"{cap[0]}.{cap[1]}",
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "fi_compat": fi_compat.__version__,
        "cu_seqlens": str(cu_dtype).removeprefix("torch."),
        "stand_in": bool(a.stand_in),
        "import_flashinfer_gdn_prefill_s": round(import_s, 2),
        "rounds": a.rounds,
        "per": a.per,
        "rows": [],
        "first_call_s": {},
        "max_abs_diff_vs_direct": {},
    }
    arms = {"direct": direct, "fi_compat": facade, "fi_compat_nochecks": facade}
    print(
        f"GDN prefill end to end, flashinfer-python {release}, {res['device']} "
        f"(SM {res['capability']}), torch {torch.__version__}, cu_seqlens {res['cu_seqlens']}, "
        f"p50 over {a.rounds} rounds"
    )
    for sname in a.shape or list(SHAPES):
        shape = SHAPES[sname]
        args = make_inputs(torch, shape, cu_dtype)
        h0 = args[6].clone()
        firsts, outs = {}, {}
        for name in ARMS:  # direct first: it pays the JIT build
            fi_compat.set_validation(name != "fi_compat_nochecks")
            torch.cuda.synchronize()
            t = time.perf_counter()
            o, s = arms[name](*args)
            torch.cuda.synchronize()
            firsts[name] = round(time.perf_counter() - t, 4)
            outs[name] = (o.float().clone(), s.float().clone())
        fi_compat.set_validation(True)
        assert torch.equal(args[6], h0), "initial_state was modified in place"
        res["first_call_s"][sname] = firsts
        res["max_abs_diff_vs_direct"][sname] = {
            n: max((outs[n][i] - outs["direct"][i]).abs().max().item() for i in (0, 1))
            for n in ARMS[1:]
        }
        for _ in range(5):  # warm-up
            for name in ARMS:
                arms[name](*args)
        for mode, per in (("sync1", 1), ("pipelined", a.per)):
            xs = timed_rounds(torch, arms, args, a.rounds, per, fi_compat.set_validation)
            row: dict[str, Any] = {
                "shape": sname,
                "num_seqs": shape[0],
                "seq_len": shape[1],
                "heads": shape[2],
                "head_size": shape[3],
                "mode": mode,
                "calls_per_round": per,
            }
            for name in ARMS:
                row[name] = summary(xs[name])
            d = row["direct"]["p50_us"]
            row["ratio_checks_on"] = round(row["fi_compat"]["p50_us"] / d, 3)
            row["ratio_checks_off"] = round(row["fi_compat_nochecks"]["p50_us"] / d, 3)
            row["added_us_checks_on"] = round(row["fi_compat"]["p50_us"] - d, 2)
            row["added_us_checks_off"] = round(row["fi_compat_nochecks"]["p50_us"] - d, 2)
            res["rows"].append(row)

    hdr = (
        f"{'release':9s} {'shape':24s} {'mode':12s} {'direct us':>10s} {'fi on us':>10s} "
        f"{'fi off us':>10s} {'on/dir':>7s} {'off/dir':>7s} {'+on us':>7s} {'+off us':>7s}"
    )
    print(hdr)
    for r in res["rows"]:
        shp = f"{r['shape']} {r['num_seqs']}x{r['seq_len']} h{r['heads']} d{r['head_size']}"
        mode = f"{r['mode']}" + (f"/{r['calls_per_round']}" if r["mode"] == "pipelined" else "")
        print(
            f"{release:9s} {shp:24s} {mode:12s} {r['direct']['p50_us']:10.1f} "
            f"{r['fi_compat']['p50_us']:10.1f} {r['fi_compat_nochecks']['p50_us']:10.1f} "
            f"{r['ratio_checks_on']:7.3f} {r['ratio_checks_off']:7.3f} "
            f"{r['added_us_checks_on']:7.1f} {r['added_us_checks_off']:7.1f}"
        )
    for sname, f in res["first_call_s"].items():
        print(
            f"first call (s), {sname}: {f}; max |fi_compat - direct|: "
            f"{res['max_abs_diff_vs_direct'][sname]}"
        )
    print(f"import flashinfer.gdn_prefill: {res['import_flashinfer_gdn_prefill_s']} s")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    if os.environ.get("FI_COMPAT_VALIDATE"):
        print("note: FI_COMPAT_VALIDATE is set; the bench switches checks itself")
    raise SystemExit(main())
