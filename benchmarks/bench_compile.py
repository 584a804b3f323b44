#!/usr/bin/env python3
"""``torch.compile(fullgraph=True)`` through a facade against the same kernel called
directly: guards, graph breaks, recompiles, and time per compiled call.

    FI_COMPAT_ALLOW_CPU=1 python benchmarks/bench_compile.py [--release 0.7.4] [--json out.json]

FlashInfer's kernel is a stand-in custom op (``torch.library.custom_op`` with a CPU
implementation and a fake) registered as ``fi_compat_bench::<name>`` with the release's
own signature (its snapshot: names, order, defaults, keyword-only marker) as its schema;
the facade's FlashInfer callable is that op (``Adapter._set_target``, as the static
tests install a spy).  FlashInfer's own releases (0.2.3-0.7.4) disable their
``register_custom_op`` (``flashinfer/utils.py`` returns the function unchanged), so a
custom op is what an engine registers around FlashInfer, or what FlashInfer's older
releases registered; the stand-in measures the same traced region either way.

For each facade, two functions are compiled with ``fullgraph=True`` and
``backend="eager"`` (no codegen: the compiled call is Dynamo's guards plus the FX graph
run eagerly, which is what fi_compat can change): ``lambda *t: facade(*t)`` and
``lambda *t: op(*t)``, called as engines call FlashInfer.  Reported per arm:

* ``guards``: ``len(torch._dynamo.explain(fn)(*args).out_guards)`` (the guards Dynamo
  installs for the frame: ambient state, tensors, globals and defaults read);
* ``leaf``: the leaf guards of the installed guard tree (``GuardManagerWrapper``, from
  ``torch._dynamo.eval_frame._debug_get_cache_entry_list``), which is what every call
  runs, and ``check``: thread-CPU ns of one ``guard_manager.check(f_locals)`` (p50 over
  interleaved batches);
* ``breaks``: graph breaks (``explain``), cold (the facade's first call ever is traced)
  and warm (after an eager call);
* ``compiles``: compilations over the first call, a second call with new tensors of the
  same shape (0 recompiles wanted) and a call with another shape (1: Dynamo marks the
  dimension dynamic);
* ``call_ns``: thread-CPU time per compiled call, p50 over interleaved batches, beside a
  second compiled copy of the direct call (A/A control).
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
from fi_compat import activation, gdn_prefill, norm, sampling  # noqa: E402
from fi_compat._adapters.activation import SPECS as ACT  # noqa: E402
from fi_compat._adapters.gdn_prefill import SPEC as GDN  # noqa: E402
from fi_compat._adapters.norm import SPECS as NORM  # noqa: E402
from fi_compat._adapters.sampling import SPECS as SAMPLING  # noqa: E402
from fi_compat.detection import Distribution  # noqa: E402
from support.spy import stub  # noqa: E402

# the release's annotation (as its snapshot writes it) -> the op schema's type
SCHEMA_TYPES = {
    "torch.Tensor": "Tensor",
    "Optional[torch.Tensor]": "Tensor?",
    "float": "float",
    "str": "str",
    "Optional[float]": "float?",
    "int": "int",
    "Optional[int]": "int?",
    "bool": "bool",
    "Optional[bool]": "bool?",
    "Optional[torch.Generator]": "Generator?",
    # unions a schema cannot spell: the type of the default the facade forwards
    "Optional[Union[int, torch.Tensor]]": "Tensor?",
    "Optional[Union[Sequence[int], torch.Tensor]]": "int[]?",
    "Literal['auto'] | bool": "str",
}


def schema_type(ann: str) -> str:
    if ann in SCHEMA_TYPES:
        return SCHEMA_TYPES[ann]
    if ann.startswith("Literal["):
        return "str"
    if ann.startswith("Union[") and "torch.Tensor" in ann:  # a tensor or a scalar
        return "Tensor"  # the benchmark passes tensors
    raise ValueError(f"no schema type for {ann!r}")


def stand_in_op(entry: Any, release: str, name: str, result: str) -> Any:
    """A custom op with the release's signature returning ``result`` (an expression of
    its parameters), CPU implementation and fake alike."""
    params = snapshots.params(entry, release)
    assert params is not None, (entry.name, release)
    schema, sig, star = [], [], False
    # a custom op has no keyword-only tensors: where the release has one (GDN prefill
    # 0.7.x), its keyword-only parameters stay keyword-or-positional, in their order
    kw_tensors = any(k == "ko" and "Tensor" in schema_type(a) for _n, k, _d, a in params)
    for pname, kind, default, ann in params:
        if kind == "ko" and not star and not kw_tensors:
            schema.append("*")
            sig.append("*")
            star = True
        d = "" if default is None else f"={default}"
        if default is None and kind == "ko":
            d = "=None"
        schema.append(f"{schema_type(ann)} {pname}{d}")
        sig.append(f"{pname}{d}")
    ns: dict[str, Any] = {"torch": torch}
    exec(f"def impl({', '.join(sig)}):\n    return {result}\n", ns)
    op = torch.library.custom_op(
        f"fi_compat_bench::{name}",
        ns["impl"],
        mutates_args=(),
        schema=f"({', '.join(schema)}) -> Tensor",
    )
    op.register_fake(ns["impl"])
    return op


def facade_for(module: Any, name: str, entry: Any, release: str, target: Any) -> Any:
    a = entry.select(Distribution("flashinfer-python", release, "<bench>", ""))
    f = a.build(stub(module, name))
    a._set_target(target)
    return f


def cases(release: str) -> dict[str, tuple[Any, Any, Any, Any]]:
    """name -> (facade call, direct call, args, args of another shape)."""
    out = {}
    x = torch.randn(8, 256, dtype=torch.bfloat16)
    w = torch.ones(256, dtype=torch.bfloat16)
    x2, w2 = torch.randn(16, 512, dtype=torch.bfloat16), torch.ones(512, dtype=torch.bfloat16)
    op = stand_in_op(NORM["rmsnorm"], release, "rmsnorm", "input.clone()")
    f = facade_for(norm, "rmsnorm", NORM["rmsnorm"], release, op)
    out["rmsnorm"] = (f, op, (x, w), (x2, w2))

    gate = torch.randn(8, 512, dtype=torch.bfloat16)
    op = stand_in_op(ACT["silu_and_mul"], release, "silu_and_mul", "input[..., ::2].clone()")
    f = facade_for(activation, "silu_and_mul", ACT["silu_and_mul"], release, op)
    out["silu_and_mul"] = (f, op, (gate,), (torch.randn(4, 1024, dtype=torch.bfloat16),))

    def gdn_args(t: int) -> tuple[Any, ...]:
        h, d = 4, 64
        q = torch.randn(t, h, d, dtype=torch.bfloat16)
        g = torch.rand(t, h)
        cu = torch.tensor([0, t // 4, t], dtype=torch.int32)
        return (q, q.clone(), q.clone(), g, g.clone(), cu)

    op = stand_in_op(GDN, release, "chunk_gated_delta_rule", "v.clone()")
    f = facade_for(gdn_prefill, "chunk_gated_delta_rule", GDN, release, op)

    def gdn_fi(q: Any, k: Any, v: Any, g: Any, beta: Any, cu: Any, _f: Any = f) -> Any:
        return _f(q, k, v, g, beta, cu_seqlens=cu)

    def gdn_direct(q: Any, k: Any, v: Any, g: Any, beta: Any, cu: Any, _op: Any = op) -> Any:
        return _op(q, k, v, g, beta, cu_seqlens=cu)  # vLLM's call

    out["chunk_gated_delta_rule"] = (gdn_fi, gdn_direct, gdn_args(64), gdn_args(128))

    sname = "top_k_top_p_sampling_from_probs"
    probs = torch.softmax(torch.randn(8, 1000), -1)
    k = torch.full((8,), 20, dtype=torch.int32)
    p = torch.full((8,), 0.9)
    op = stand_in_op(
        SAMPLING[sname], release, sname, "torch.zeros(probs.shape[0], dtype=torch.int32)"
    )
    f = facade_for(sampling, sname, SAMPLING[sname], release, op)
    probs2 = torch.softmax(torch.randn(4, 1000), -1)
    out[sname] = (f, op, (probs, k, p), (probs2, k[:4].clone(), p[:4].clone()))
    return out


def leaf_guards(gm: Any) -> int:
    n = 0
    stack = [gm.root]
    while stack:
        m = stack.pop()
        n += len(m.get_leaf_guards())
        stack += m.get_child_managers()
    return n


def frame(fn: Any) -> Any:
    return getattr(fn, "__code__", None) or fn.__call__.__code__


def compiled_arm(fn: Any, args: tuple[Any, ...], other: tuple[Any, ...]) -> dict[str, Any]:
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    def model(*t: Any) -> Any:
        return fn(*t)

    ex = torch._dynamo.explain(model)(*args)
    torch._dynamo.reset()
    graphs: list[Any] = []

    def backend(gm: Any, _inputs: Any) -> Any:
        graphs.append(gm)
        return gm.forward

    c = torch.compile(model, fullgraph=True, backend=backend)
    c(*args)
    c(*(a.clone() if isinstance(a, torch.Tensor) else a for a in args))
    same_shape = len(graphs) - 1
    c(*other)
    entries = _debug_get_cache_entry_list(model.__code__)
    gm = entries[-1].guard_manager  # the static-shape entry (the first compiled)
    return {
        "guards": len(ex.out_guards),
        "breaks": ex.graph_break_count,
        "leaf": leaf_guards(gm),
        "check": gm,
        "recompiles_same_shape": same_shape,
        "recompiles_new_shape": len(graphs) - 1 - same_shape,
        "graph": str(graphs[0].code),
        "compiled": c,
        "guard_list": [f"{g.source.name} {g.name} {g.create_fn_name()}" for g in ex.out_guards],
    }


def per_call(
    arms: dict[str, Any], args: tuple[Any, ...], batches: int, per: int
) -> dict[str, float]:
    """p50 thread-CPU ns of a call of each compiled arm, and (``<arm> check``) of one
    evaluation of its guards alone, interleaved."""
    times: dict[str, list[float]] = {k: [] for k in arms}
    f_locals = {"t": args}
    for k, c in arms.items():
        if not k.endswith(" check"):
            c(*args)
    for _ in range(batches):
        for k, c in arms.items():  # interleaved
            t0 = time.thread_time_ns()
            if k.endswith(" check"):
                for _ in range(per * 10):
                    c.check(f_locals)
                times[k].append((time.thread_time_ns() - t0) / (per * 10))
                continue
            for _ in range(per):
                c(*args)
            times[k].append((time.thread_time_ns() - t0) / per)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--release", default="0.7.4")
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--per", type=int, default=300)
    ap.add_argument("--guards", action="store_true", help="list the facade's guards")
    ap.add_argument("--json")
    o = ap.parse_args()
    rows = []
    all_cases = cases(o.release)
    # cold: the facade's first call ever is the one Dynamo traces
    cold = {}
    for name, (fi, _direct, args, _other) in all_cases.items():
        torch._dynamo.reset()
        cold[name] = torch._dynamo.explain(lambda *t, _f=fi: _f(*t))(*args).graph_break_count
    print(f"torch {torch.__version__}, flashinfer-python {o.release} (stand-in custom ops), CPU")
    head = f"{'facade':32s} {'arm':7s} {'guards':>6s} {'leaf':>5s} {'check':>7s} {'breaks':>6s}"
    print(head + f" {'recompile same/new':>18s} {'call ns':>9s} {'added':>7s}")
    for name, (fi, direct, args, other) in all_cases.items():
        torch._dynamo.reset()
        fi(*args)  # warm
        arms = {"fi": compiled_arm(fi, args, other), "direct": compiled_arm(direct, args, other)}
        control = compiled_arm(direct, args, other)  # A/A: a second compiled direct call
        t = per_call(
            {
                "fi": arms["fi"]["compiled"],
                "direct": arms["direct"]["compiled"],
                "aa": control["compiled"],
                "fi check": arms["fi"]["check"],
                "direct check": arms["direct"]["check"],
                "aa check": control["check"],
            },
            args,
            o.batches,
            o.per,
        )
        for arm, r in arms.items():
            added = t[arm] - t["direct"]
            print(
                f"{name:32s} {arm:7s} {r['guards']:6d} {r['leaf']:5d} {t[arm + ' check']:6.0f}n "
                f"{r['breaks']:3d}/{cold[name] if arm == 'fi' else '-'} "
                f"{r['recompiles_same_shape']:10d}/{r['recompiles_new_shape']:<7d} "
                f"{t[arm]:9.0f} {added:+7.0f}"
            )
        print(
            f"{'':32s} A/A control: call {t['aa'] - t['direct']:+.0f} ns, "
            f"guards {t['aa check'] - t['direct check']:+.0f} ns"
        )
        if o.guards:
            for g in arms["fi"]["guard_list"]:
                print("    ", g)
        rows.append(
            {
                "facade": name,
                "release": o.release,
                **{
                    f"{arm}_{k}": v
                    for arm, r in arms.items()
                    for k, v in r.items()
                    if k not in ("compiled", "check", "graph", "guard_list")
                },
                "fi_check_ns": round(t["fi check"]),
                "direct_check_ns": round(t["direct check"]),
                "aa_check_ns": round(t["aa check"] - t["direct check"]),
                "cold_breaks": cold[name],
                "fi_call_ns": round(t["fi"]),
                "direct_call_ns": round(t["direct"]),
                "aa_ns": round(t["aa"] - t["direct"]),
                "fi_graph": arms["fi"]["graph"],
                "direct_graph": arms["direct"]["graph"],
            }
        )
    if o.json:
        Path(o.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
