#!/usr/bin/env python3
# ruff: noqa: SIM105, SIM115, UP031  (a standalone device script: long-lived child pipes and logs)
"""Probe FlashInfer's RoPE entry points over head sizes, in child processes.

For the flashinfer importable from PYTHONPATH (any release 0.2.0.post1 .. 0.7.4), run every
RoPE entry point for head sizes 64, 80, 96, 112, 128, 160, 192, 256, rotary_dim = head_size
and head_size // 2, NeoX and interleaved (GPT-J) layouts, and compare with a float32 torch
reference.  One JSON line per case:

  {"release", "fn", "head_size", "rotary_dim", "is_neox", "outcome", "max_err", ...}

outcome: "ok" | "mismatch" | "error:<ExceptionType>" | "signal:<n>" (child killed by a
signal, e.g. 11 = SIGSEGV, 6 = SIGABRT) | "error:timeout" | "error:exit<rc>" | "error:absent"
(entry point not in this release).  Extra keys: dtype, max_err_q / max_err_k, tol,
inputs_modified (out-of-place calls that wrote their inputs), detail (exception text or the
child's stderr tail), fi_version, path (which API form was called).

Isolation: the parent never imports torch or flashinfer.  Cases run in child processes; a
child writes "START <i>" (fsync'd) before case i and the result line after it, so a child
that dies (segfault, abort) is blamed on exactly the case it had started; the parent then
starts a fresh child for the remaining cases.  A child also exits after a case that leaves
the CUDA context unusable (sticky "illegal address"/"misaligned address" errors), so later
cases are not misattributed.  --per-child 1 gives one process per case (slow: every child
imports torch + flashinfer again); the default batches cases per child (a crash still only
costs the crashed case).

Conventions of the reference (read from FlashInfer's sources):
* cos/sin cache (vLLM form, 0.2.0.post2+): cache[max_pos, rotary_dim] float32 =
  cat(cos(pos * inv_freq), sin(pos * inv_freq)), inv_freq[j] = theta ** (-2j / rotary_dim),
  j < rotary_dim / 2.  NeoX rotates the halves x[:r/2], x[r/2:r]; interleaved (GPT-J,
  is_neox=False / interleave=True) rotates the pairs (x[2j], x[2j+1]) by angle j.  The
  dimensions past rotary_dim pass through unchanged.
* 0.2.0.post1's apply_rope_with_cos_sin_cache(q, k, cos_cache, sin_cache, pos_ids,
  interleave) takes per-element caches [max_pos, rotary_dim]: NeoX cat(c, c), interleaved
  repeat_interleave(c, 2) (pos_enc.cuh BatchQKApplyRotaryPosIdsCosSinCacheKernel, l. 237-239).
* apply_rope / apply_rope_pos_ids: angle = pos * freq_j, freq_j = theta ** (-2j/r) / scale;
  apply_llama31_*: freq_j = (1 - s) * freq_j / scale + s * freq_j,
  s = clamp(freq_j * a + b, 0, 1), a = old_ctx / (2 pi hf - 2 pi lf), b = -1 / (hf / lf - 1)
  (pos_enc.cuh BatchQKApplyLlama31Rotary*).  apply_rope positions are offsets[b] + i.
* index tensors are int32 (0.2.0.post1-0.2.6 read them as int32 without a check).

Usage:
  PYTHONPATH=/path/to/flashinfer-release:$PYTHONPATH \
  python3 probe_rope.py --release-label 0.3.1 --out rope-0.3.1.jsonl
  options: --dtype float16|bfloat16, --fns a,b,c, --heads 64,80, --extra-rotary 40,72,
           --per-child N (1 = one process per case), --jobs N (children at once after a
           sequential warm-up that JIT-builds the modules), --timeout SECONDS (per child),
           --no-controls
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

HEADS = [64, 80, 96, 112, 128, 160, 192, 256]
FNS = [
    "apply_rope",
    "apply_rope_inplace",
    "apply_rope_pos_ids",
    "apply_rope_pos_ids_inplace",
    "apply_llama31_rope",
    "apply_llama31_rope_inplace",
    "apply_llama31_rope_pos_ids",
    "apply_llama31_rope_pos_ids_inplace",
    "apply_rope_with_cos_sin_cache",
    "apply_rope_with_cos_sin_cache_inplace",
    "rope_quantize_fp8",
]
# controls: a C++ exception thrown through the binding without any head-size question
# (float32 q is refused by the fp16/bf16 dtype dispatch, TORCH_CHECK / TVM check), so a
# crash there means "any C++ error crashes this build", not "this head size crashes".
CONTROLS = ["control_fp32_dtype_error"]

NNZ, HQ, HK, MAX_POS = 16, 4, 2, 64
# the device the cases run on; "cpu" only for self-tests of this script against a fake module
DEVICE = os.environ.get("PROBE_ROPE_DEVICE", "cuda")
THETA, SCALE = 1e4, 1.0
L31 = dict(
    rope_scale=8.0, rope_theta=5e5, low_freq_factor=1.0, high_freq_factor=4.0, old_context_len=8192
)


# --------------------------------------------------------------------------------------
# parent
# --------------------------------------------------------------------------------------
def enumerate_cases(fns, heads, controls, extra_rot=()):
    cases = []
    for fn in fns:
        for d in heads:
            rots = [d, d // 2]  # full and partial rotary_dim
            rots += [r for r in extra_rot if r < d and r not in rots]
            for r in rots:
                if fn == "rope_quantize_fp8" and r == d:
                    continue  # needs a non-empty nope part (q_nope [nnz, H, d - r])
                for neox in (True, False):
                    cases.append(dict(fn=fn, head_size=d, rotary_dim=r, is_neox=neox))
    if controls:
        for c in CONTROLS:
            cases.append(dict(fn=c, head_size=64, rotary_dim=64, is_neox=True))
    return cases


def run_parent(args):
    import threading

    fns = args.fns.split(",") if args.fns else FNS
    heads = [int(h) for h in args.heads.split(",")] if args.heads else HEADS
    extra = [int(x) for x in args.extra_rotary.split(",")] if args.extra_rotary else []
    cases = enumerate_cases(fns, heads, not args.no_controls, extra)
    for i, c in enumerate(cases):
        c["id"] = i
    work = tempfile.mkdtemp(prefix="probe_rope_")
    out_f = open(args.out, "a") if args.out else None
    lock = threading.Lock()
    counter = [0]

    def emit(r):
        with lock:
            _emit(r, args, out_f)

    # warm-up, one process, in order: the first case of every entry point (the smallest head
    # size, which every release supports), so the JIT build of each module happens once and
    # not concurrently in several children
    first = {}
    for c in cases:
        first.setdefault(c["fn"], c["id"])
    warm = sorted(first.values())
    rest = [i for i in range(len(cases)) if i not in set(warm)]
    _run_shard(warm, cases, args, work, "w", counter, lock, emit)
    jobs = max(1, args.jobs)
    shards = [rest[j::jobs] for j in range(jobs)]
    threads = [
        threading.Thread(
            target=_run_shard, args=(sh, cases, args, work, f"s{j}", counter, lock, emit)
        )
        for j, sh in enumerate(shards)
        if sh
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if out_f:
        out_f.close()
    print(f"# {len(cases)} cases, {counter[0]} child processes, workdir {work}", file=sys.stderr)


def _run_shard(pending, cases, args, work, tag, counter, lock, emit):
    """Run the cases ``pending`` (ids) in child processes, one after the other; a child that
    dies costs only the case it had started; the next child takes the cases left."""
    pending = list(pending)
    n = 0
    while pending:
        batch = pending if args.per_child <= 0 else pending[: args.per_child]
        n += 1
        with lock:
            counter[0] += 1
        stem = os.path.join(work, f"{tag}_{n}")
        cfile, rfile, pfile, efile = (
            stem + x for x in (".cases.json", ".results.jsonl", ".progress.txt", ".stderr.txt")
        )
        with open(cfile, "w") as f:
            json.dump([cases[i] for i in batch], f)
        cmd = [
            sys.executable,
            os.path.abspath(__file__),
            "--child",
            cfile,
            "--child-results",
            rfile,
            "--child-progress",
            pfile,
            "--dtype",
            args.dtype,
            "--seed",
            str(args.seed),
        ]
        rc, timed_out = None, False
        with open(efile, "w") as ef:
            try:
                p = subprocess.run(cmd, stdout=ef, stderr=subprocess.STDOUT, timeout=args.timeout)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                timed_out = True
        done = {r["id"]: r for r in _read_jsonl(rfile)}
        tail = _tail(efile, 1500)
        for i in _read_started(pfile):
            if i in done:
                continue  # at most one started case has no result: the one the child died in
            if timed_out:
                outcome = "error:timeout"
            elif rc is not None and rc < 0:
                outcome = f"signal:{-rc}"
            else:
                outcome = f"error:exit{rc}"
            done[i] = dict(cases[i], outcome=outcome, max_err=None, detail=tail)
        if not any(i in done for i in batch):
            # the child died before starting any case (import failure?): fail the batch
            for i in batch:
                done[i] = dict(cases[i], outcome=f"error:child_rc{rc}", max_err=None, detail=tail)
        for i in batch:
            if i in done:
                emit(done[i])
        pending = [i for i in pending if i not in done]


def _emit(r, args, out_f):
    r = dict(r)
    r["release"] = args.release_label or r.get("fi_version") or "unknown"
    keys = ["release", "fn", "head_size", "rotary_dim", "is_neox", "outcome", "max_err"]
    rec = {k: r.get(k) for k in keys}
    for k, v in r.items():
        if k not in rec and k != "id":
            rec[k] = v
    line = json.dumps(rec)
    print(line, flush=True)
    if out_f:
        out_f.write(line + "\n")
        out_f.flush()


def _read_jsonl(path):
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for ln in f:
                ln = ln.strip()
                if ln:
                    try:
                        out.append(json.loads(ln))
                    except json.JSONDecodeError:
                        pass
    return out


def _read_started(path):
    ids = []
    if os.path.exists(path):
        with open(path) as f:
            for ln in f:
                if ln.startswith("START "):
                    ids.append(int(ln.split()[1]))
    return ids


def _tail(path, n):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return ""


# --------------------------------------------------------------------------------------
# child
# --------------------------------------------------------------------------------------
def run_child(args):
    import torch  # noqa: F401  (imported here only)

    cases = json.load(open(args.child))
    rf = open(args.child_results, "a")
    pf = open(args.child_progress, "a")
    try:
        import flashinfer

        fi_version = getattr(flashinfer, "__version__", "unknown")
    except Exception as e:  # import failure: report on every case, exit
        for c in cases:
            _child_write(
                rf,
                dict(
                    c,
                    outcome=f"error:import:{type(e).__name__}",
                    max_err=None,
                    detail=str(e)[-600:],
                ),
            )
        return 0
    for c in cases:
        pf.write(f"START {c['id']}\n")
        pf.flush()
        os.fsync(pf.fileno())
        res = dict(c, fi_version=fi_version, dtype=args.dtype)
        healthy = True
        try:
            res.update(run_case(c, args.dtype, args.seed))
        except Exception as e:
            res.update(
                outcome=f"error:{type(e).__name__}",
                max_err=None,
                detail=" ".join(str(e).split())[:600],
            )
            healthy = _cuda_healthy()
        _child_write(rf, res)
        if not healthy:
            return 3  # sticky CUDA error: let the parent start a fresh process
    return 0


def _child_write(rf, res):
    rf.write(json.dumps(res) + "\n")
    rf.flush()
    os.fsync(rf.fileno())


def _sync():
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


def _cuda_healthy():
    import torch

    try:
        _sync()
        x = torch.ones(4, device=DEVICE) + 1
        return bool(float(x.sum().item()) == 8.0)
    except Exception:
        return False


def _get_fn(name):
    import flashinfer

    mod = getattr(flashinfer, "rope", None)
    fn = getattr(mod, name, None) if mod is not None else None
    return fn if fn is not None else getattr(flashinfer, name, None)


def _param_names(fn):
    import inspect

    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []


# ---- reference ------------------------------------------------------------------------
def _inv_freq(r, theta, device):
    import torch

    j = torch.arange(0, r // 2, device=device, dtype=torch.float64)
    return theta ** (-2.0 * j / r)


def _llama31_freq(freq, scale, lf, hf, old_ctx):
    import torch

    a = old_ctx / (2 * math.pi * hf - 2 * math.pi * lf)
    b = -1.0 / (hf / lf - 1.0)
    s = torch.clamp(freq * a + b, 0.0, 1.0)
    return (1 - s) * (freq / scale) + s * freq


def _rotate_ref(x, cos, sin, r, neox):
    """x [nnz, H, D] (float64), cos/sin [nnz, r/2] (float64): the rotated copy."""
    import torch

    c = cos[:, None, :]
    s = sin[:, None, :]
    xr, xp = x[..., :r], x[..., r:]
    if neox:
        x1, x2 = xr[..., : r // 2], xr[..., r // 2 :]
        o = torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)
    else:
        x1, x2 = xr[..., 0::2], xr[..., 1::2]
        o = torch.stack([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).flatten(-2)
    return torch.cat([o, xp], dim=-1)


def _err(out, ref):
    return float((out.double() - ref).abs().max().item())


# ---- one case -------------------------------------------------------------------------
def run_case(c, dtype_name, seed):
    import torch

    fn_name, d, r, neox = c["fn"], c["head_size"], c["rotary_dim"], c["is_neox"]
    dev = DEVICE
    dtype = getattr(torch, dtype_name)
    g = torch.Generator(device="cpu").manual_seed(seed + 1000 * d + r + (7 if neox else 0))
    q0 = torch.randn(NNZ, HQ, d, generator=g).to(dev, dtype)
    k0 = torch.randn(NNZ, HK, d, generator=g).to(dev, dtype)
    pos = torch.randint(0, MAX_POS, (NNZ,), generator=g, dtype=torch.int32).to(dev)
    # apply_rope's ragged form: two sequences of 7 and 9 tokens at offsets 3 and 11
    indptr = torch.tensor([0, 7, NNZ], dtype=torch.int32, device=dev)
    offsets = torch.tensor([3, 11], dtype=torch.int32, device=dev)
    pos_ragged = torch.cat(
        [torch.arange(7, dtype=torch.int32) + 3, torch.arange(NNZ - 7, dtype=torch.int32) + 11]
    ).to(dev)
    tol = {"float16": 2e-2, "bfloat16": 6e-2}[dtype_name]
    extra = {}

    if fn_name == "control_fp32_dtype_error":
        fn = _get_fn("apply_rope_pos_ids")
        qf, kf = q0.float(), k0.float()
        fn(qf, kf, pos, rotary_dim=r, interleave=not neox)
        _sync()
        return dict(outcome="ok", max_err=None, detail="float32 q accepted (unexpected)")

    fn = _get_fn(fn_name)
    if fn is None:
        return dict(outcome="error:absent", max_err=None)
    names = _param_names(fn)
    q, k = q0.clone(), k0.clone()
    qin, kin = q0.clone(), k0.clone()  # to detect writes by out-of-place calls

    if fn_name in ("apply_rope_with_cos_sin_cache", "apply_rope_with_cos_sin_cache_inplace"):
        inplace = fn_name.endswith("_inplace")
        inv = _inv_freq(r, THETA, dev)
        ang_tab = torch.arange(MAX_POS, device=dev, dtype=torch.float64)[:, None] * inv[None]
        cos_h, sin_h = ang_tab.cos(), ang_tab.sin()  # [max_pos, r/2]
        if "cos_cache" in names:  # 0.2.0.post1: (q, k, cos_cache, sin_cache, pos_ids, interleave)
            extra["path"] = "old(q,k,cos_cache,sin_cache,pos_ids,interleave)"
            if neox:
                cc, sc = torch.cat([cos_h, cos_h], -1), torch.cat([sin_h, sin_h], -1)
            else:
                cc, sc = cos_h.repeat_interleave(2, -1), sin_h.repeat_interleave(2, -1)
            cc, sc = cc.float().contiguous(), sc.float().contiguous()
            ret = fn(q, k, cc, sc, pos, interleave=not neox)
            _sync()
            qo, ko = (q, k) if inplace else ret
        else:
            extra["path"] = "vllm(positions,query,key,head_size,cos_sin_cache,is_neox)"
            cache = torch.cat([cos_h, sin_h], -1).float().contiguous()  # [max_pos, r]
            q2, k2 = q.reshape(NNZ, HQ * d), k.reshape(NNZ, HK * d)
            ret = fn(
                positions=pos, query=q2, key=k2, head_size=d, cos_sin_cache=cache, is_neox=neox
            )
            _sync()
            if inplace:
                qo, ko = q2, k2
            else:
                qo, ko = ret
            qo, ko = qo.reshape(NNZ, HQ, d), ko.reshape(NNZ, HK, d)
        p64 = pos.long()
        cos, sin = cos_h[p64], sin_h[p64]
        rq = _rotate_ref(q0.double(), cos, sin, r, neox)
        rk = _rotate_ref(k0.double(), cos, sin, r, neox)

    elif fn_name == "rope_quantize_fp8":
        extra["path"] = "rope_quantize_fp8"
        if not hasattr(torch, "float8_e4m3fn"):
            return dict(outcome="error:no_fp8_dtype", max_err=None)
        inv = _inv_freq(r, THETA, dev)
        ang_tab = torch.arange(MAX_POS, device=dev, dtype=torch.float64)[:, None] * inv[None]
        cos_h, sin_h = ang_tab.cos(), ang_tab.sin()
        cache = torch.cat([cos_h, sin_h], -1).float().contiguous()
        q_rope, q_nope = q[..., :r].contiguous(), q[..., r:].contiguous()
        k_rope, k_nope = k[..., :r].contiguous(), k[..., r:].contiguous()
        outs = fn(
            q_rope,
            k_rope,
            q_nope,
            k_nope,
            cache,
            pos,
            is_neox=neox,
            quantize_dtype=torch.float8_e4m3fn,
        )
        _sync()
        qro, kro, qno, kno = outs
        qo = torch.cat([qro.float(), qno.float()], -1)
        ko = torch.cat([kro.float(), kno.float()], -1)
        p64 = pos.long()
        rq = _rotate_ref(q0.double(), cos_h[p64], sin_h[p64], r, neox)
        rk = _rotate_ref(k0.double(), cos_h[p64], sin_h[p64], r, neox)
        # fp8 e4m3: 3 mantissa bits; allow 1/16 relative + a small absolute term
        eq = ((qo.double() - rq).abs() - rq.abs() / 16).max().item()
        ek = ((ko.double() - rk).abs() - rk.abs() / 16).max().item()
        err = max(_err(qo, rq), _err(ko, rk))
        ok = max(eq, ek) <= 0.05
        return dict(
            outcome="ok" if ok else "mismatch",
            max_err=err,
            max_err_q=_err(qo, rq),
            max_err_k=_err(ko, rk),
            tol="fp8:|d|<=|ref|/16+0.05",
            **extra,
        )

    else:  # apply_rope / apply_rope_pos_ids / apply_llama31_rope(_pos_ids) (+ _inplace)
        inplace = fn_name.endswith("_inplace")
        llama31 = "llama31" in fn_name
        ragged = "pos_ids" not in fn_name
        kw = dict(rotary_dim=r, interleave=not neox)
        if llama31:
            kw.update(L31)
            theta, scale = L31["rope_theta"], L31["rope_scale"]
        else:
            kw.update(rope_scale=SCALE, rope_theta=THETA)
            theta, scale = THETA, SCALE
        if names:  # every release has them all; keep only what the signature names
            kw = {a: v for a, v in kw.items() if a in names}
        if ragged:
            ret = fn(q, k, indptr, offsets, **kw)
            p = pos_ragged
        else:
            ret = fn(q, k, pos, **kw)
            p = pos
        _sync()
        qo, ko = (q, k) if inplace else ret
        freq = _inv_freq(r, theta, dev)
        if llama31:
            freq = _llama31_freq(
                freq, scale, L31["low_freq_factor"], L31["high_freq_factor"], L31["old_context_len"]
            )
        else:
            freq = freq / scale
        ang = p.double()[:, None] * freq[None]
        rq = _rotate_ref(q0.double(), ang.cos(), ang.sin(), r, neox)
        rk = _rotate_ref(k0.double(), ang.cos(), ang.sin(), r, neox)

    eq, ek = _err(qo, rq), _err(ko, rk)
    err = max(eq, ek)
    if not math.isfinite(err):
        err_out = None
        outcome = "mismatch"
    else:
        err_out = err
        outcome = "ok" if err <= tol else "mismatch"
    res = dict(outcome=outcome, max_err=err_out, max_err_q=eq, max_err_k=ek, tol=tol, **extra)
    if not fn_name.endswith("_inplace"):
        res["inputs_modified"] = bool(not (torch.equal(q, qin) and torch.equal(k, kin)))
    return res


# --------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--release-label",
        default=None,
        help="value of the 'release' field (default: flashinfer.__version__)",
    )
    ap.add_argument("--out", default=None, help="append JSON lines to this file")
    ap.add_argument("--dtype", default="float16", choices=["float16", "bfloat16"])
    ap.add_argument("--fns", default=None, help="comma list (default: all) of " + ",".join(FNS))
    ap.add_argument("--heads", default=None, help="comma list (default: %s)" % HEADS)
    ap.add_argument(
        "--per-child",
        type=int,
        default=0,
        help="cases per child process; 0 = as many as survive (default), 1 = one each",
    )
    ap.add_argument(
        "--extra-rotary",
        default=None,
        help="more rotary_dims to try where smaller than head_size, e.g. 40,72 "
        "(vector-straddle cases: rotary_dim/2 not a multiple of the vector width)",
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=6,
        help="child processes running at once after the warm-up (default 6)",
    )
    ap.add_argument(
        "--timeout",
        type=float,
        default=480.0,
        help="seconds per child (the first one JIT-compiles the rope module)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-controls", action="store_true")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-results", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-progress", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        sys.exit(run_child(args))
    run_parent(args)


if __name__ == "__main__":
    main()
