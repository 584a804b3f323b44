#!/usr/bin/env python3
# ruff: noqa: SIM105, SIM115, B904, E501  (a standalone device script: long-lived child pipes and logs)
"""GPU probe for FlashInfer's masked-softmax sentinel bugs (#4267/#4450/#4451/#4452).

All three regression tests were added by flashinfer-ai/flashinfer PR #4401
(commit d7f2c64647585b641590e309c75974519dea17db, first shipped in 0.7.0), which
changed ``math::inf`` from the finite sentinel 5e4 to IEEE infinity and clamped
every ``exp2`` exponent so that fully masked tiles contribute 0 instead of NaN.

Runs against whatever ``flashinfer`` is importable (tested signatures: 0.3.1,
0.6.7, 0.7.4; keyword-only calls so 0.2.x..0.7.x bind the same way) and writes
one JSON line per case to ``--out``:

    {"release", "case", "outcome": "ok"|"bug"|"error:...", "detail", ...}

"ok" means: behaves like the fixed releases (the #4401 test assertions pass).
"bug" means: an assertion of the ported test failed (detail says which/values).

Cases (``--cases`` takes a comma list of prefixes; default all):
  paged_decode_extreme_negative_logits   port of the test (classic decode kernel)
  ragged_prefill_one_valid_key           port of the test (backend fa2)
  paged_prefill_fully_masked_rows        port of the test (backend fa2)
  extra:
  paged_decode_extreme_negative_logits[tc]  same, use_tensor_cores=True (prefill FA2 kernel)
  *[fa3]                                 the two prefill tests with backend fa3 (sm90 only)
  paged_prefill_fully_masked_rows+posthoc[fa2|fa3]
        buggy call + the proposed post-hoc fix (rows with no valid key:
        lse := -inf, o := 0, rows derived on device from plan inputs)
  ragged_prefill_one_valid_key+qscale[fa2|fa3]
        pre-call workaround hypothesis: q*2^-8 and sm_scale*2^8 (exact in fp
        arithmetic) moves the FA2/FA3 raw-logit sentinel threshold
  threshold_decode_k=-46 / -50           classic decode, scaled log2 logit ~-48054 / ~-52232
  threshold_ragged_fa2_k=-6 / -7         FA2 prefill, raw logit -49152 / -57344
  decode_empty_kv                        decode, one request with kv_len 0 (expect o=0, lse=-inf)
  merge_state_two_empty                  cascade merge_state of two lse=-inf states

Usage (GPU machine):
  PYTHONPATH=<flashinfer release> python probe_numeric.py --out results.jsonl
  python probe_numeric.py --out r.jsonl --dtypes bf16 --cases paged_prefill,ragged
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import traceback

# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def _release() -> str:
    try:
        from importlib.metadata import version

        return version("flashinfer-python")
    except Exception:
        pass
    try:
        import flashinfer

        return str(getattr(flashinfer, "__version__", "unknown"))
    except Exception as e:  # pragma: no cover
        return f"unimportable:{type(e).__name__}"


def _f(x):
    """JSON-safe float."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _stats(t):
    t = t.float()
    finite = t[torch.isfinite(t)]
    return {
        "n": t.numel(),
        "nan": int(torch.isnan(t).sum()),
        "neginf": int(torch.isneginf(t).sum()),
        "posinf": int(torch.isposinf(t).sum()),
        "min": _f(finite.min()) if finite.numel() else None,
        "max": _f(finite.max()) if finite.numel() else None,
    }


class Bug(Exception):
    pass


def check(cond, msg, **info):
    if not cond:
        raise Bug(json.dumps({"failed": msg, **info}, default=str))


def check_close(a, b, rtol, atol, msg):
    try:
        torch.testing.assert_close(a, b, rtol=rtol, atol=atol)
    except AssertionError as e:
        diff = (a.float() - b.float()).abs()
        diff = diff[torch.isfinite(diff)]
        raise Bug(
            json.dumps(
                {
                    "failed": msg,
                    "got": _stats(a),
                    "want": _stats(b),
                    "max_abs_diff": _f(diff.max()) if diff.numel() else None,
                    "assert": str(e).splitlines()[0][:160],
                }
            )
        )


_WS = {}


def workspace():
    if "ws" not in _WS:
        _WS["ws"] = torch.empty(128 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    return _WS["ws"]


def backend_of(w):
    return str(getattr(w, "_backend", "?"))


# --------------------------------------------------------------------------
# post-hoc fix under test (device only, no host sync)
# --------------------------------------------------------------------------


def fully_masked_rows(qo_indptr, kv_len, causal, nnz):
    """Bool [nnz]: token rows that have no valid key.

    Row t of request b (i = t - qo_indptr[b]) has no valid key iff
    kv_len[b] == 0, or causal and i < qo_len[b] - kv_len[b]
    (FlashInfer's bottom-right causal alignment; window_left never empties a
    row). Custom masks need a row-wise any() over the mask in addition.
    """
    qo_indptr = qo_indptr.to(torch.int64)
    kv_len = kv_len.to(torch.int64)
    rows = torch.arange(nnz, device=qo_indptr.device, dtype=torch.int64)
    b = torch.searchsorted(qo_indptr[1:].contiguous(), rows, right=True)
    b = b.clamp(max=kv_len.numel() - 1)
    i = rows - qo_indptr[b]
    qo_len = (qo_indptr[1:] - qo_indptr[:-1])[b]
    kv = kv_len[b]
    empty = kv == 0
    if causal:
        empty = empty | (i < qo_len - kv)
    return empty


def paged_kv_len(indptr, last_page_len, page_size):
    npages = (indptr[1:] - indptr[:-1]).to(torch.int64)
    return torch.where(
        npages > 0,
        (npages - 1) * page_size + last_page_len.to(torch.int64),
        torch.zeros_like(npages),
    )


def apply_posthoc(o, lse, empty):
    lse = lse.masked_fill(empty[:, None], float("-inf"))
    o = o.masked_fill(empty[:, None, None], 0)
    return o, lse


# --------------------------------------------------------------------------
# ported test bodies (flashinfer d7f2c646, tests/attention/*)
# --------------------------------------------------------------------------


def decode_extreme(dtype, use_tensor_cores=False, k_val=-64.0, q_val=64.0):
    # test_paged_decode_extreme_negative_logits (#4450)
    num_qo_heads, num_kv_heads, head_dim = 32, 4, 128
    page_size, num_pages = 1, 17
    sm_scale = 1.0 / math.sqrt(head_dim)
    q = torch.full((1, num_qo_heads, head_dim), q_val, dtype=dtype, device="cuda")
    k_cache = torch.full(
        (num_pages, page_size, num_kv_heads, head_dim),
        k_val,
        dtype=dtype,
        device="cuda",
    )
    v_cache = torch.ones_like(k_cache)
    w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(
        workspace(), kv_layout="NHD", use_tensor_cores=use_tensor_cores
    )
    w.plan(
        indptr=torch.tensor([0, 2], dtype=torch.int32, device="cuda"),
        indices=torch.tensor([15, 16], dtype=torch.int32, device="cuda"),
        last_page_len=torch.tensor([1], dtype=torch.int32, device="cuda"),
        num_qo_heads=num_qo_heads,
        num_kv_heads=num_kv_heads,
        head_dim=head_dim,
        page_size=page_size,
        pos_encoding_mode="NONE",
        sm_scale=sm_scale,
        q_data_type=dtype,
        kv_data_type=dtype,
    )
    o, lse = w.run(q, (k_cache, v_cache), return_lse=True)
    torch.cuda.synchronize()
    k_gqa = k_cache[[15, 16], 0].repeat_interleave(num_qo_heads // num_kv_heads, dim=1)
    logits = torch.einsum("hd,khd->hk", q[0].float(), k_gqa.float()) * sm_scale
    ref_lse = (torch.logsumexp(logits, dim=-1) / math.log(2.0)).unsqueeze(0)
    info = {
        "backend": backend_of(w),
        "scaled_log2_logit": _f(logits[0, 0] / math.log(2.0)),
        "o": _stats(o),
        "lse": _stats(lse),
        "ref_lse": _f(ref_lse[0, 0]),
    }
    check(not o.isnan().any() and not lse.isnan().any(), "nan", **info)
    check_close(o, torch.ones_like(o), 0, 0, "o == 1")
    check_close(lse, ref_lse, 1e-5, 1e-3, "lse == ref")
    return info


def ragged_one_key(dtype, backend="fa2", k_val=-64.0, q_scale_pow2=0):
    # test_ragged_prefill_one_valid_key (#4451)
    num_qo_heads, num_kv_heads, head_dim = 32, 8, 128
    sm_scale = 1.0 / math.sqrt(head_dim)
    q = torch.full((1, num_qo_heads, head_dim), 64.0, dtype=dtype, device="cuda")
    k = torch.full((1, num_kv_heads, head_dim), k_val, dtype=dtype, device="cuda")
    v = torch.ones(1, num_kv_heads, head_dim, dtype=dtype, device="cuda")
    alpha = 2.0 ** (-q_scale_pow2)
    q_in = q * alpha if q_scale_pow2 else q
    w = flashinfer.BatchPrefillWithRaggedKVCacheWrapper(
        workspace(), kv_layout="NHD", backend=backend
    )
    w.plan(
        qo_indptr=torch.tensor([0, 1], dtype=torch.int32, device="cuda"),
        kv_indptr=torch.tensor([0, 1], dtype=torch.int32, device="cuda"),
        num_qo_heads=num_qo_heads,
        num_kv_heads=num_kv_heads,
        head_dim_qk=head_dim,
        causal=True,
        sm_scale=sm_scale / alpha,
        q_data_type=dtype,
        kv_data_type=dtype,
    )
    o, lse = w.run(q_in, k, v, return_lse=True)
    torch.cuda.synchronize()
    k_gqa = k.repeat_interleave(num_qo_heads // num_kv_heads, dim=1)
    raw = (q.float() * k_gqa.float()).sum(-1)
    ref_lse = raw * sm_scale / math.log(2.0)
    info = {
        "backend": backend_of(w),
        "raw_logit": _f(raw[0, 0]),
        "raw_logit_seen_by_kernel": _f(raw[0, 0] * alpha),
        "o": _stats(o),
        "lse": _stats(lse),
        "ref_lse": _f(ref_lse[0, 0]),
    }
    check(not o.isnan().any() and not lse.isnan().any(), "nan", **info)
    check_close(o, v.repeat_interleave(num_qo_heads // num_kv_heads, dim=1), 0, 0, "o == v")
    check_close(lse, ref_lse, 1e-5, 1e-3, "lse == ref")
    return info


def paged_fully_masked(dtype, backend="fa2", posthoc=False):
    # test_paged_prefill_fully_masked_rows (#4452)
    qo_len, kv_len = 34, 1
    num_qo_heads, num_kv_heads, head_dim = 32, 8, 128
    page_size, num_pages = 1, 2
    q = torch.zeros(qo_len, num_qo_heads, head_dim, dtype=dtype, device="cuda")
    k_cache = torch.zeros(num_pages, page_size, num_kv_heads, head_dim, dtype=dtype, device="cuda")
    v_cache = torch.ones_like(k_cache)
    qo_indptr = torch.tensor([0, qo_len], dtype=torch.int32, device="cuda")
    kv_indptr = torch.tensor([0, 1], dtype=torch.int32, device="cuda")
    last = torch.tensor([1], dtype=torch.int32, device="cuda")
    w = flashinfer.BatchPrefillWithPagedKVCacheWrapper(
        workspace(), kv_layout="NHD", backend=backend
    )
    w.plan(
        qo_indptr=qo_indptr,
        paged_kv_indptr=kv_indptr,
        paged_kv_indices=torch.tensor([1], dtype=torch.int32, device="cuda"),
        paged_kv_last_page_len=last,
        num_qo_heads=num_qo_heads,
        num_kv_heads=num_kv_heads,
        head_dim_qk=head_dim,
        page_size=page_size,
        causal=True,
        sm_scale=1.0 / math.sqrt(head_dim),
        q_data_type=dtype,
        kv_data_type=dtype,
    )
    o, lse = w.run(q, (k_cache, v_cache), return_lse=True)
    nm = qo_len - kv_len
    info = {
        "backend": backend_of(w),
        "raw_masked_o": _stats(o[:nm]),
        "raw_masked_lse": _stats(lse[:nm]),
        "raw_masked_lse_distinct": [_f(x) for x in sorted(set(lse[:nm].flatten().tolist()))[:8]],
        "raw_valid_o": _stats(o[nm:]),
        "raw_valid_lse": _stats(lse[nm:]),
    }
    if posthoc:
        empty = fully_masked_rows(
            qo_indptr, paged_kv_len(kv_indptr, last, page_size), True, q.shape[0]
        )
        info["empty_rows_detected"] = int(empty.sum())
        o, lse = apply_posthoc(o, lse, empty)
    torch.cuda.synchronize()
    check(not o.isnan().any() and not lse.isnan().any(), "nan", **info)
    check_close(o[:nm], torch.zeros_like(o[:nm]), 0, 0, "masked o == 0")
    check(bool(torch.isneginf(lse[:nm]).all()), "masked lse == -inf", **info)
    check_close(o[nm:], torch.ones_like(o[nm:]), 0, 0, "valid o == 1")
    check_close(lse[nm:], torch.zeros_like(lse[nm:]), 0, 0, "valid lse == 0")
    return info


def decode_empty_kv(dtype):
    # one request with 2 keys, one with kv_len 0 (no pages)
    num_qo_heads, num_kv_heads, head_dim, page_size = 8, 2, 128, 1
    q = torch.randn(2, num_qo_heads, head_dim, dtype=dtype, device="cuda")
    k_cache = torch.randn(4, page_size, num_kv_heads, head_dim, dtype=dtype, device="cuda")
    v_cache = torch.randn_like(k_cache)
    w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(workspace(), kv_layout="NHD")
    w.plan(
        indptr=torch.tensor([0, 2, 2], dtype=torch.int32, device="cuda"),
        indices=torch.tensor([0, 1], dtype=torch.int32, device="cuda"),
        last_page_len=torch.tensor([1, 0], dtype=torch.int32, device="cuda"),
        num_qo_heads=num_qo_heads,
        num_kv_heads=num_kv_heads,
        head_dim=head_dim,
        page_size=page_size,
        pos_encoding_mode="NONE",
        q_data_type=dtype,
        kv_data_type=dtype,
    )
    o, lse = w.run(q, (k_cache, v_cache), return_lse=True)
    torch.cuda.synchronize()
    info = {
        "backend": backend_of(w),
        "empty_o": _stats(o[1]),
        "empty_lse": _stats(lse[1]),
    }
    check(not o[1].isnan().any() and not lse[1].isnan().any(), "nan", **info)
    check_close(o[1], torch.zeros_like(o[1]), 0, 0, "empty o == 0")
    check(bool(torch.isneginf(lse[1]).all()), "empty lse == -inf", **info)
    return info


def merge_two_empty(dtype):
    n, h, d = 4, 8, 128
    va = torch.zeros(n, h, d, dtype=dtype, device="cuda")
    vb = torch.zeros(n, h, d, dtype=dtype, device="cuda")
    sa = torch.full((n, h), float("-inf"), dtype=torch.float32, device="cuda")
    sb = sa.clone()
    v, s = flashinfer.merge_state(va, sa, vb, sb)
    torch.cuda.synchronize()
    info = {"v": _stats(v), "s": _stats(s)}
    check(not v.isnan().any() and not s.isnan().any(), "nan", **info)
    check_close(v, torch.zeros_like(v), 0, 0, "v == 0")
    check(bool(torch.isneginf(s).all()), "s == -inf", **info)
    return info


# --------------------------------------------------------------------------


def build_cases(is_sm90: bool, skip_fa3: bool):
    c = [
        ("paged_decode_extreme_negative_logits", False, lambda dt: decode_extreme(dt)),
        ("ragged_prefill_one_valid_key", False, lambda dt: ragged_one_key(dt, "fa2")),
        (
            "paged_prefill_fully_masked_rows",
            False,
            lambda dt: paged_fully_masked(dt, "fa2"),
        ),
        (
            "paged_decode_extreme_negative_logits[tc]",
            True,
            lambda dt: decode_extreme(dt, use_tensor_cores=True),
        ),
        (
            "paged_prefill_fully_masked_rows+posthoc[fa2]",
            True,
            lambda dt: paged_fully_masked(dt, "fa2", posthoc=True),
        ),
        (
            "ragged_prefill_one_valid_key+qscale[fa2]",
            True,
            lambda dt: ragged_one_key(dt, "fa2", q_scale_pow2=8),
        ),
        ("threshold_decode_k=-46", True, lambda dt: decode_extreme(dt, k_val=-46.0)),
        ("threshold_decode_k=-50", True, lambda dt: decode_extreme(dt, k_val=-50.0)),
        (
            "threshold_ragged_fa2_k=-6",
            True,
            lambda dt: ragged_one_key(dt, "fa2", k_val=-6.0),
        ),
        (
            "threshold_ragged_fa2_k=-7",
            True,
            lambda dt: ragged_one_key(dt, "fa2", k_val=-7.0),
        ),
        ("decode_empty_kv", True, decode_empty_kv),
        ("merge_state_two_empty", True, merge_two_empty),
    ]
    if is_sm90 and not skip_fa3:
        c += [
            (
                "ragged_prefill_one_valid_key[fa3]",
                True,
                lambda dt: ragged_one_key(dt, "fa3"),
            ),
            (
                "paged_prefill_fully_masked_rows[fa3]",
                True,
                lambda dt: paged_fully_masked(dt, "fa3"),
            ),
            (
                "paged_prefill_fully_masked_rows+posthoc[fa3]",
                True,
                lambda dt: paged_fully_masked(dt, "fa3", posthoc=True),
            ),
            (
                "ragged_prefill_one_valid_key+qscale[fa3]",
                True,
                lambda dt: ragged_one_key(dt, "fa3", q_scale_pow2=8),
            ),
        ]
    return c


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="JSON-lines output file (appended)")
    ap.add_argument("--dtypes", default="fp16,bf16")
    ap.add_argument("--cases", default="", help="comma list of case-name prefixes")
    ap.add_argument("--no-extra", action="store_true", help="only the 3 ported tests")
    ap.add_argument("--skip-fa3", action="store_true")
    args = ap.parse_args(argv)

    global torch, flashinfer
    release = _release()
    out = open(args.out, "a")

    def emit(case, outcome, detail, extra):
        rec = {"release": release, "case": case, "outcome": outcome, "detail": detail}
        rec.update(extra)
        out.write(json.dumps(rec, default=str) + "\n")
        out.flush()
        print(json.dumps(rec, default=str)[:400], file=sys.stderr)

    try:
        import flashinfer
        import torch
    except Exception as e:
        emit(
            "import",
            f"error:{type(e).__name__}: {e}"[:300],
            traceback.format_exc()[-800:],
            {},
        )
        return 1

    cc = torch.cuda.get_device_capability() if torch.cuda.is_available() else None
    env = {
        "device": torch.cuda.get_device_name() if cc else None,
        "cc": f"{cc[0]}.{cc[1]}" if cc else None,
        "torch": torch.__version__,
    }
    if cc is None:
        emit("cuda", "error:no CUDA device", None, env)
        return 1
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    wanted = [p for p in args.cases.split(",") if p]
    for name, is_extra, fn in build_cases(cc == (9, 0), args.skip_fa3):
        if args.no_extra and is_extra:
            continue
        if wanted and not any(name.startswith(p) for p in wanted):
            continue
        for dn in args.dtypes.split(","):
            case = f"{name}/{dn}"
            extra = dict(env, extra=is_extra)
            try:
                info = fn(dtypes[dn])
                emit(case, "ok", info, extra)
            except Bug as b:
                emit(case, "bug", json.loads(str(b)), extra)
            except Exception as e:
                msg = f"error:{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
                emit(case, msg[:300], traceback.format_exc()[-1200:], extra)
                try:
                    torch.cuda.synchronize()
                except Exception:
                    pass
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
