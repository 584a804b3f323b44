#!/usr/bin/env python3
"""Host time fi_compat adds per call, every facade family and the call patterns engines
make, checks on and off, in one process.

    FI_COMPAT_ALLOW_CPU=1 python benchmarks/bench_host.py [--quick] [--json out.json]

Every case calls a stand-in in place of FlashInfer's function: a function with the
release's real signature (its snapshot, defaults included) that returns a result made
before the timing (what the kernel would return).  Four arms per case, run in rounds
whose order rotates (no arm always first after another):

* ``direct``: the stand-in called with exactly what the facade hands FlashInfer (the
  same positional / keyword split), as model code written for that release calls it;
* ``direct A/A``: the same call again, a second arm: its difference to ``direct`` is
  the noise floor of the table;
* ``on``: the facade, metadata checks on (the default);
* ``off``: the same facade after ``adapter.set_validation(False)``.

Time is the thread's CPU time (``time.thread_time_ns``): another process on the machine
does not count, a preemption does not either.  Each arm's figure is the median of its
batches' per-call means; ``added`` = arm - direct.  For a call pattern (``out=``,
generators, seeds, state pools, routed pairs, CUDA-graph-style ``plan``) ``x plain`` is
its ``on`` time over the plain call's ``on`` time of the same entry point.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.append(str(ROOT / "src"))  # a PYTHONPATH checkout first (before/after)
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(HERE))
os.environ.setdefault("FI_COMPAT_ALLOW_CPU", "1")

import torch  # noqa: E402

from fi_compat import _snapshot_io as snapshots  # noqa: E402
from fi_compat.detection import Distribution  # noqa: E402
from support.spy import default_value, stub  # noqa: E402

RELEASES = ("0.6.7", "0.7.4")
Arm = Callable[[], Any]


class Case:
    """One row: a direct call and the facade's, with the adapter to switch checks."""

    def __init__(
        self, family: str, name: str, release: str, direct: Arm, call: Arm, adapter: Any
    ) -> None:
        self.family, self.name, self.release = family, name, release
        self.direct, self.call, self.adapter = direct, call, adapter
        self.plain: str | None = None  # the plain call's name, for a pattern


def measure(case: Case, batches: int, per: int) -> dict[str, float]:
    a = case.adapter
    arms: dict[str, tuple[Arm, bool | None]] = {
        "direct": (case.direct, None),
        "aa": (case.direct, None),
        "on": (case.call, True),
        "off": (case.call, False),
    }
    order = list(arms)
    got: dict[str, list[float]] = {k: [] for k in arms}
    clock = time.thread_time_ns
    for _ in range(3):  # warm: first calls, caches
        for fn, mode in arms.values():
            if mode is not None:
                a.set_validation(mode)
            fn()
    for i in range(batches):
        for k in order[i % 4 :] + order[: i % 4]:
            fn, mode = arms[k]
            if mode is not None:
                a.set_validation(mode)
            t0 = clock()
            for _ in range(per):
                fn()
            got[k].append((clock() - t0) / per)
    a.set_validation(True)
    return {k: statistics.median(v) for k, v in got.items()}


# -- stand-ins --------------------------------------------------------------------------
def stand_in(entry: Any, release: str, body: str, ns: dict[str, Any]) -> Any:
    """A function with ``release``'s signature of ``entry`` (its snapshot) doing ``body``."""
    params = snapshots.params(entry, release)
    assert params is not None, (entry.name, release)
    parts, star = [], False
    for pname, kind, default, _ in params:
        if kind == "va":
            parts.append("*" + pname)
            star = True
            continue
        if kind == "vk":
            parts.append("**" + pname)
            continue
        if kind == "ko" and not star:
            parts.append("*")
            star = True
        if default is None and kind != "ko":
            parts.append(pname)
        else:
            ns["_d_" + pname] = None if default is None else default_value(default, release)
            parts.append(f"{pname}=_d_{pname}")
    exec(f"def flashinfer_function({', '.join(parts)}):\n    {body}\n", ns)
    return ns["flashinfer_function"]


def stable_call(f: Any, kw: dict[str, Any]) -> Arm:
    """The facade called as model code calls it: positionally up to the first parameter
    it leaves out, by keyword after."""
    b = inspect.signature(f).bind(**kw)
    return partial(f, *b.args, **b.kwargs)


def generic(
    family: str,
    module: Any,
    name: str,
    entry: Any,
    release: str,
    kw: dict[str, Any],
    label: str | None = None,
) -> Case:
    """A facade whose first call, through a recorder, shows what FlashInfer gets; the
    direct arm then makes that same call on a stand-in returning the same result."""
    a = entry.select(Distribution("flashinfer-python", release, "<bench>", ""))
    f = a.build(stub(module, name))
    seen: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    ns: dict[str, Any] = {}
    probe = stand_in(entry, release, "return None", dict(ns))

    def record(*args: Any, **kwargs: Any) -> Any:
        seen.append((args, kwargs))
        probe(*args, **kwargs)  # binds as the release does
        return ns.get("_R")

    a._set_target(record)
    call = stable_call(f, kw)
    ns["_R"] = result_for(family, name, kw)
    call()
    fa, fk = seen[-1]
    target = stand_in(entry, release, "return _R", ns)
    a._set_target(target)
    return Case(family, label or name, release, partial(target, *fa, **fk), call, a)


def result_for(family: str, name: str, kw: dict[str, Any]) -> Any:
    """What the kernel returns for these arguments (shapes and dtypes)."""
    if family == "sampling":
        x = kw.get("probs", kw.get("logits"))
        if "sampling_from" in name:
            return torch.zeros(x.shape[0], dtype=torch.int32)
        return x
    if family == "quantisation":
        x = kw.get("input", kw.get("a"))
        m, k = x.shape
        if name == "mxfp8_quantize":
            return (torch.zeros(m, k, dtype=torch.float8_e4m3fn), torch.zeros(m * k // 32).byte())
        return torch.zeros(m, k // 2, dtype=torch.uint8), torch.zeros(m * k // 16).byte()
    if family == "gemm":
        return kw.get("out") if kw.get("out") is not None else torch.zeros(1)
    if family == "gdn_decode":
        q, v = kw["q"], kw["v"]
        state = kw.get("state")
        return torch.zeros(*v.shape, dtype=q.dtype), kw.get(
            "initial_state"
        ) if state is None else state
    x = next(iter(kw.values()))
    if name == "fused_add_rmsnorm":
        return None
    if name.startswith("apply_rope"):
        return kw.get("q", x), kw.get("k", x)
    return x


# -- the cases --------------------------------------------------------------------------
def elementwise(release: str) -> list[Case]:
    from fi_compat import activation, norm, quantization, rope, sampling
    from fi_compat._adapters.activation import SPECS as ACT
    from fi_compat._adapters.norm import SPECS as NORM
    from fi_compat._adapters.quantization import SPECS as QUANT
    from fi_compat._adapters.rope import SPECS as ROPE
    from fi_compat._adapters.sampling import SPECS as SAMPLING

    x = torch.randn(8, 256, dtype=torch.bfloat16)
    w = torch.ones(256, dtype=torch.bfloat16)
    q = torch.randn(8, 4, 64, dtype=torch.bfloat16)
    pos = torch.arange(8, dtype=torch.int32)
    q2 = torch.randn(8, 4 * 64, dtype=torch.bfloat16)
    cache = torch.randn(32, 64)
    probs = torch.softmax(torch.randn(4, 64), -1)
    logits = torch.randn(4, 64)
    gen = torch.Generator().manual_seed(0)
    gs = torch.tensor([448.0 * 6 / 3.0])
    xq = torch.randn(8, 64, dtype=torch.bfloat16)
    rows: list[tuple[str, Any, str, Any, dict[str, Any], str | None, str | None]] = [
        ("norm", norm, "rmsnorm", NORM, {"input": x, "weight": w}, None, None),
        (
            "norm",
            norm,
            "rmsnorm",
            NORM,
            {"input": x, "weight": w, "out": torch.empty_like(x)},
            "rmsnorm out=",
            "rmsnorm",
        ),
        (
            "norm",
            norm,
            "fused_add_rmsnorm",
            NORM,
            {"input": x, "residual": x.clone(), "weight": w},
            None,
            None,
        ),
        ("activation", activation, "silu_and_mul", ACT, {"input": x}, None, None),
        (
            "activation",
            activation,
            "silu_and_mul",
            ACT,
            {"input": x, "out": torch.empty(8, 128, dtype=torch.bfloat16)},
            "silu_and_mul out=",
            "silu_and_mul",
        ),
        (
            "rope",
            rope,
            "apply_rope_pos_ids",
            ROPE,
            {"q": q, "k": q.clone(), "pos_ids": pos},
            None,
            None,
        ),
        (
            "rope",
            rope,
            "apply_rope_with_cos_sin_cache",
            ROPE,
            {
                "positions": pos,
                "query": q2,
                "key": q2.clone(),
                "head_size": 64,
                "cos_sin_cache": cache,
            },
            None,
            None,
        ),
        (
            "sampling",
            sampling,
            "top_k_top_p_sampling_from_logits",
            SAMPLING,
            {"logits": logits, "top_k": 8, "top_p": 0.9},
            None,
            None,
        ),
        (
            "sampling",
            sampling,
            "top_k_top_p_sampling_from_logits",
            SAMPLING,
            {"logits": logits, "top_k": 8, "top_p": 0.9, "generator": gen},
            "top_k_top_p_sampling_from_logits generator=",
            "top_k_top_p_sampling_from_logits",
        ),
        ("sampling", sampling, "sampling_from_probs", SAMPLING, {"probs": probs}, None, None),
        (
            "sampling",
            sampling,
            "sampling_from_probs",
            SAMPLING,
            {"probs": probs, "seed": 1234, "offset": 0},
            "sampling_from_probs seed=, offset=",
            "sampling_from_probs",
        ),
        (
            "sampling",
            sampling,
            "top_p_renorm_probs",
            SAMPLING,
            {"probs": probs, "top_p": 0.9},
            None,
            None,
        ),
        (
            "quantisation",
            quantization,
            "fp4_quantize",
            QUANT,
            {"input": xq, "global_scale": gs},
            None,
            None,
        ),
        ("quantisation", quantization, "mxfp8_quantize", QUANT, {"input": xq}, None, None),
    ]
    out = []
    for family, mod, name, specs, kw, label, plain in rows:
        entry = specs[name]
        if snapshots.params(entry, release) is None:
            continue
        try:
            c = generic(family, mod, name, entry, release, kw, label)
        except Exception as exc:  # a pattern the release cannot serve: reported
            print(f"  skipped {label or name} on {release}: {type(exc).__name__}: {exc}"[:160])
            continue
        c.plain = plain
        out.append(c)
    return out


def gemm(release: str) -> list[Case]:
    from fi_compat import gemm as g
    from fi_compat._adapters.gemm import SPECS

    m, k, n = 8, 64, 32
    kw = {
        "A": torch.randn(2, m, k).to(torch.float8_e4m3fn),
        "B": torch.randn(2, n, k).to(torch.float8_e4m3fn).transpose(-2, -1),
        "A_scale": torch.tensor([1.0]),
        "B_scale": torch.tensor([1.0]),
        "dtype": torch.bfloat16,
    }
    plain = generic("gemm", g, "bmm_fp8", SPECS["bmm_fp8"], release, kw)
    kw_out = {**kw, "out": torch.empty(2, m, n, dtype=torch.bfloat16)}
    out = generic("gemm", g, "bmm_fp8", SPECS["bmm_fp8"], release, kw_out, "bmm_fp8 out=")
    out.plain = "bmm_fp8"
    return [plain, out]


def gdn_decode(release: str) -> list[Case]:
    from fi_compat import gdn_decode as gd
    from fi_compat._adapters.gdn_decode import SPECS

    name = "gated_delta_rule_decode_pretranspose"
    if snapshots.params(SPECS[name], release) is None:
        return []
    b, h, hv, k = 8, 4, 8, 128
    kw = {
        "q": torch.randn(b, 1, h, k).to(torch.bfloat16),
        "k": torch.randn(b, 1, h, k).to(torch.bfloat16),
        "v": torch.randn(b, 1, hv, k).to(torch.bfloat16),
        "state": torch.zeros(b, hv, k, k),
        "A_log": torch.zeros(hv),
        "a": torch.randn(b, 1, hv).to(torch.bfloat16),
        "dt_bias": torch.zeros(hv),
        "b": torch.randn(b, 1, hv).to(torch.bfloat16),
    }
    cases = [generic("gdn_decode", gd, name, SPECS[name], release, kw)]
    # the engines' form: a bf16 state pool addressed by int32 slots
    pool = {
        **kw,
        "state": None,
        "initial_state": torch.zeros(2 * b, hv, k, k, dtype=torch.bfloat16),
        "initial_state_indices": torch.arange(b, dtype=torch.int32),
    }
    cases.append(generic("gdn_decode", gd, name, SPECS[name], release, pool, f"{name} bf16 pool"))
    return cases


def gdn_prefill(release: str) -> list[Case]:
    import bench_gdn_prefill as bg
    from fi_compat._device import assume_capability

    cu = bg.native_cu(release)
    launch = bg.trivial_for(release)
    f = bg.facade_for(release, launch)
    args = bg.inputs("cpu", cu)
    rows = [
        Case(
            "gdn_prefill",
            "chunk_gated_delta_rule",
            release,
            partial(launch, *args),
            partial(f, *args),
            f.adapter,
        )
    ]
    if release == "0.7.4":  # the native state pool (vLLM's call), SM90 assumed
        launch = bg.trivial_for(release, bg.POOL_BODY)
        fp = bg.facade_for(release, launch)
        pargs, pkw = bg.pool_inputs("cpu", cu)
        cap = assume_capability((9, 0))
        cap.__enter__()  # for the rest of this process (the last rows measured)
        c = Case(
            "gdn_prefill",
            "chunk_gated_delta_rule state pool",
            release,
            partial(launch, *pargs, **pkw),
            partial(fp, *pargs, **pkw),
            fp.adapter,
        )
        c.plain = "chunk_gated_delta_rule"
        rows.append(c)
    return rows


def moe(release: str) -> list[Case]:
    import bench_fused_moe as bm
    from support.moe_helpers import moe_facade

    rows = []
    for case in ("fp4", "fp4_routed", "fp8_block", "cutlass"):
        name, opts = bm.CASES[case]
        launch = bm.trivial_for(name, release)
        f, _, a = moe_facade(name, release)
        a._set_target(launch)
        kw = bm.call_kwargs(name, **opts)
        dkw = bm.direct_kwargs(name, release, bm.call_kwargs(name))
        c = Case("moe", name, release, partial(launch, **dkw), partial(f, **kw), a)
        if case == "fp4_routed":
            c.plain = "trtllm_fp4_block_scale_moe"
        rows.append(c)
    return rows


def attention(release: str) -> list[Case]:
    import bench_attention_host as ba
    from support.attention_cases import DEC, PAGED

    h, d, page = ba.H, ba.D, ba.PAGE
    w = ba.Wrapper()

    def i32(vals: list[int]) -> torch.Tensor:
        return torch.tensor(vals, dtype=torch.int32)

    rows = []
    b = 8
    lens = [1 + (37 * i) % 900 for i in range(b)]
    pages = [-(-n // page) for n in lens]
    indptr = i32([0, *torch.tensor(pages).cumsum(0).tolist()])
    indices = torch.arange(int(indptr[-1]), dtype=torch.int32)
    last = i32([n - (p - 1) * page for n, p in zip(lens, pages, strict=True)])
    t = ba.stand_in(f"{DEC}.plan", release, None)
    f = ba.facade(f"{DEC}.plan", release, t)
    pa = (indptr, indices, last, h, h, d, page)
    kw = {"q_data_type": torch.bfloat16}
    rows.append(
        Case(
            "plan",
            "decode plan B=8 (CPU indptr)",
            release,
            partial(t, w, *pa, **kw),
            partial(f, w, *pa, **kw),
            f.adapter,
        )
    )
    # a wrapper made with use_cuda_graph=True (fixed batch size): the empty-row state is
    # kept in fixed buffers that every plan rewrites (0.2.0.post1-0.6.18)
    wg = ba.Wrapper()
    wg.is_cuda_graph_enabled = True
    wg._fixed_batch_size = b  # type: ignore[attr-defined]
    c = Case(
        "plan",
        "decode plan B=8 (CPU indptr, CUDA graph)",
        release,
        partial(t, wg, *pa, **kw),
        partial(f, wg, *pa, **kw),
        f.adapter,
    )
    c.plain = "decode plan B=8 (CPU indptr)"
    rows.append(c)
    q = torch.zeros(b, h, d, dtype=torch.bfloat16)
    kv = torch.zeros(2, 2, page, h, d, dtype=torch.bfloat16)
    for lse in (False, True):
        res = (q, torch.zeros(b, h)) if lse else q
        t = ba.stand_in(f"{DEC}.run", release, res)
        fr = ba.facade(f"{DEC}.run", release, t)
        c = Case(
            "run",
            f"decode run return_lse={lse}",
            release,
            partial(t, w, q, kv, return_lse=lse),
            partial(fr, w, q, kv, return_lse=lse),
            fr.adapter,
        )
        c.plain = None if not lse else "decode run return_lse=False"
        rows.append(c)
    qo = [1 + (13 * i) % 64 for i in range(b)]
    kvl = [n + (29 * i) % 500 for i, n in enumerate(qo)]
    pages = [-(-n // page) for n in kvl]
    qo_indptr = i32([0, *torch.tensor(qo).cumsum(0).tolist()])
    indptr = i32([0, *torch.tensor(pages).cumsum(0).tolist()])
    indices = torch.arange(int(indptr[-1]), dtype=torch.int32)
    last = i32([n - (p - 1) * page for n, p in zip(kvl, pages, strict=True)])
    t = ba.stand_in(f"{PAGED}.plan", release, None)
    f = ba.facade(f"{PAGED}.plan", release, t)
    pa = (qo_indptr, indptr, indices, last, h, h, d, page)
    kw2 = {"causal": True, "q_data_type": torch.bfloat16}
    rows.append(
        Case(
            "plan",
            "prefill plan B=8 (CPU indptr)",
            release,
            partial(t, w, *pa, **kw2),
            partial(f, w, *pa, **kw2),
            f.adapter,
        )
    )
    n = sum(qo)
    qp = torch.zeros(n, h, d, dtype=torch.bfloat16)
    t = ba.stand_in(f"{PAGED}.run", release, (qp, torch.zeros(n, h)))
    fr = ba.facade(f"{PAGED}.run", release, t)
    rows.append(
        Case(
            "run",
            "prefill run return_lse=True",
            release,
            partial(t, w, qp, kv, return_lse=True),
            partial(fr, w, qp, kv, return_lse=True),
            fr.adapter,
        )
    )
    return rows


FAMILIES = {
    "elementwise": elementwise,
    "gemm": gemm,
    "gdn_decode": gdn_decode,
    "attention": attention,
    "moe": moe,
    "gdn_prefill": gdn_prefill,  # last: the state pool assumes a GPU for the process
}
# added host time goals on the 2-core CPU, checks on / off (ns)
TARGETS = {
    "norm": (500, 120),
    "rope": (500, 120),
    "activation": (500, 120),
    "sampling": (500, 120),
    "quantisation": (500, 120),
    "gemm": (500, 120),
    "gdn_prefill": (1300, 150),
    "gdn_decode": (1000, 200),
    "moe": (1500, 300),
    "plan": (600, 300),
    "run": (400, 150),
}


def aten_ops(case: Case) -> dict[str, list[str]]:
    """The aten ops the facade of ``case`` dispatches in one warm call, checks on and off
    (the stand-in FlashInfer function dispatches none)."""
    from bench_gdn_prefill import CountOps

    out: dict[str, list[str]] = {}
    for arm, mode in (("on", True), ("off", False)):
        case.adapter.set_validation(mode)
        case.call()  # warm
        with CountOps() as c:
            case.call()
        out[arm] = c.ops
    case.adapter.set_validation(True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--release", action="append", help=f"default: {', '.join(RELEASES)}")
    ap.add_argument("--family", action="append", help=f"of {', '.join(FAMILIES)}")
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--per", type=int, default=400)
    ap.add_argument("--quick", action="store_true", help="16 batches of 200 (noisier)")
    ap.add_argument("--json")
    ap.add_argument(
        "--ops",
        action="store_true",
        help="instead of timing, print the aten ops each facade call dispatches "
        "(tensors it creates, copies, host reads) as JSON",
    )
    o = ap.parse_args()
    if o.ops:
        found = {
            f"{rel} {c.name}": aten_ops(c)
            for rel in o.release or RELEASES
            for fam, build in FAMILIES.items()
            if not o.family or fam in o.family
            for c in build(rel)
        }
        print(json.dumps(found, indent=1))
        return 0
    if o.quick:
        o.batches, o.per = 16, 200
    rows: list[dict[str, Any]] = []
    print(
        f"added host ns per call (thread CPU time), python {sys.version.split()[0]}, "
        f"torch {torch.__version__}, {o.batches} batches x {o.per} calls"
    )
    head = (
        f"{'release':8s} {'call':46s} {'direct':>7s} {'A/A':>5s} {'on':>6s} {'off':>6s} "
        f"{'x plain':>7s} {'goal':>9s}"
    )
    print(head)
    for rel in o.release or RELEASES:
        plain_on: dict[str, float] = {}
        for fam, build in FAMILIES.items():
            if o.family and fam not in o.family:
                continue
            for c in build(rel):
                m = measure(c, o.batches, o.per)
                on, off = m["on"] - m["direct"], m["off"] - m["direct"]
                plain_on[c.name] = m["on"]
                ratio = m["on"] / plain_on[c.plain] if c.plain in plain_on else None
                goal = TARGETS[c.family]
                miss = (" MISS" if on > goal[0] or off > goal[1] else "") + (
                    " >2x" if ratio is not None and ratio > 2 else ""
                )
                row = {
                    "release": rel,
                    "family": c.family,
                    "call": c.name,
                    "direct_ns": round(m["direct"]),
                    "aa_ns": round(m["aa"] - m["direct"]),
                    "added_on_ns": round(on),
                    "added_off_ns": round(off),
                    "x_plain": None if ratio is None else round(ratio, 2),
                    "goal_ns": goal,
                }
                rows.append(row)
                print(
                    f"{rel:8s} {c.name:46s} {m['direct']:7.0f} {row['aa_ns']:5d} {on:6.0f} "
                    f"{off:6.0f} {'' if ratio is None else f'{ratio:.2f}':>7s} "
                    f"{goal[0]:>4d}/{goal[1]:<4d}{miss}",
                    flush=True,
                )
    if o.json:
        Path(o.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
