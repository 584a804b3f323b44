"""Real FlashInfer attention kernels through ``fi_compat.decode`` / ``fi_compat.prefill`` on
one release per interpreter, against a float32 torch reference written here: per request,
``softmax(scale * q k^T [+ causal mask]) v`` over the request's gathered pages (GQA: query
head ``h`` reads KV head ``h // (Hq / Hkv)``), and the LSE ``log2(sum exp(scale * q k^T))``
(FlashInfer's kernels return base 2; ``lse_base="ln"`` the natural log).  The causal mask
is aligned to the end of the KV (query ``i`` of ``qo_len`` sees keys ``j <= i + kv_len -
qo_len``), as FlashInfer's.

Marked ``gpu``: skipped without CUDA.  ``FI_COMPAT_GPU_REPORT=path`` appends one JSON line
per check (max abs error of out / LSE; first ``plan`` seconds, where the JIT build runs;
single decode / prefill build at the first call).  tests/gpu/README.md has the
table.
"""

from __future__ import annotations

import json
import math
import os
import time
import warnings
from typing import Any

import pytest
import torch

pytestmark = pytest.mark.gpu

if not torch.cuda.is_available():  # pragma: no cover - CPU hosts
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

import fi_compat  # noqa: E402
from fi_compat import decode, prefill  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
DEV = "cuda"
HQ, HKV, D = 8, 2, 128
SCALE = 0.0625  # not 1/sqrt(D) = 0.0884: a dropped sm_scale shows
# base-2 LSE: the CUDA-core decode kernel is within 2e-6 of the float32 reference; the
# tensor-core (fa2 / fa3) kernels round the probabilities to bf16 first: up to ~2.5e-3
LSE_TOL = 5e-3
BF = torch.bfloat16
_FIRST: set[str] = set()


def _report(name: str, **fields: Any) -> None:
    path = os.environ.get("FI_COMPAT_GPU_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"release": RELEASE, "test": name, **fields}) + "\n")


def _timed(tag: str, fn: Any) -> tuple[Any, float | None]:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    r = fn()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    first = tag not in _FIRST
    _FIRST.add(tag)
    return r, (round(dt, 2) if first else None)


def _ws() -> torch.Tensor:
    return torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device=DEV)


def _ref(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, scale: float = SCALE
) -> tuple[torch.Tensor, torch.Tensor]:
    """q [L, HQ, D], k/v [S, HKV, D] -> out [L, HQ, D] float32, lse [L, HQ] base 2."""
    group = q.shape[1] // k.shape[1]
    kf = k.float().repeat_interleave(group, dim=1)
    vf = v.float().repeat_interleave(group, dim=1)
    s = torch.einsum("lhd,shd->hls", q.float(), kf) * scale
    if causal:
        L, S = q.shape[0], k.shape[0]
        i = torch.arange(L, device=q.device)[:, None]
        j = torch.arange(S, device=q.device)[None, :]
        s = s.masked_fill(j > i + (S - L), float("-inf"))
    lse = torch.logsumexp(s, dim=-1) / math.log(2.0)  # [H, L]
    out = torch.einsum("hls,shd->lhd", torch.softmax(s, dim=-1), vf)
    return out, lse.transpose(0, 1)


def _err(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.float() - b.float()).abs().max())


class Paged:
    """Requests' K/V scattered over shuffled pages, in ``layout``."""

    def __init__(self, kv_lens: list[int], page_size: int, layout: str, seed: int = 0) -> None:
        g = torch.Generator(device=DEV).manual_seed(seed)
        self.kv_lens, self.page_size, self.layout = kv_lens, page_size, layout
        self.k = [torch.randn(n, HKV, D, generator=g, device=DEV).to(BF) for n in kv_lens]
        self.v = [torch.randn(n, HKV, D, generator=g, device=DEV).to(BF) for n in kv_lens]
        pages = [-(-n // page_size) for n in kv_lens]
        total = sum(pages) + 3  # spare pages: indices need not be dense
        perm = torch.randperm(total, generator=g, device=DEV)[: sum(pages)].int()
        shape = (total, 2, page_size, HKV, D) if layout == "NHD" else (total, 2, HKV, page_size, D)
        self.cache = torch.zeros(shape, dtype=BF, device=DEV)
        self.indptr = torch.tensor([0, *torch.tensor(pages).cumsum(0).tolist()], dtype=torch.int32)
        self.indices = perm
        self.last = torch.tensor(
            [n - (p - 1) * page_size for n, p in zip(kv_lens, pages, strict=True)],
            dtype=torch.int32,
        )
        for r, n in enumerate(kv_lens):
            for t in range(n):
                page = int(perm[int(self.indptr[r]) + t // page_size])
                slot = t % page_size
                if layout == "NHD":
                    self.cache[page, 0, slot] = self.k[r][t]
                    self.cache[page, 1, slot] = self.v[r][t]
                else:
                    self.cache[page, 0, :, slot] = self.k[r][t]
                    self.cache[page, 1, :, slot] = self.v[r][t]
        self.indptr, self.last = self.indptr.to(DEV), self.last.to(DEV)


@pytest.mark.parametrize("layout", ["NHD", "HND"])
@pytest.mark.parametrize("page_size", [16, 64])
@pytest.mark.parametrize("tensor_cores", [False, True])
def test_paged_decode_matches_reference(layout: str, page_size: int, tensor_cores: bool) -> None:
    kv = Paged([17, 64, 100], page_size, layout)
    q = torch.randn(3, HQ, D, device=DEV).to(BF)
    w = decode.BatchDecodeWithPagedKVCacheWrapper(_ws(), layout, use_tensor_cores=tensor_cores)
    _, first = _timed(
        f"decode-tc{tensor_cores}",
        lambda: w.plan(
            kv.indptr, kv.indices, kv.last, HQ, HKV, D, page_size,
            q_data_type=BF, kv_data_type=BF, sm_scale=SCALE,
        ),
    )  # fmt: skip
    out, lse = w.run(q, kv.cache, return_lse=True)
    eo = el = 0.0
    for r in range(3):
        ro, rl = _ref(q[r : r + 1], kv.k[r], kv.v[r], causal=False)
        eo, el = max(eo, _err(out[r : r + 1], ro)), max(el, _err(lse[r : r + 1], rl))
    _report(
        f"decode-{layout}-p{page_size}-tc{tensor_cores}", err_out=eo, err_lse=el, first_plan_s=first
    )
    assert out.dtype == BF and out.shape == q.shape and lse.shape == (3, HQ)
    assert lse.dtype == torch.float32 and eo < 2e-2 and el < LSE_TOL


@pytest.mark.parametrize("causal", [True, False])
def test_paged_prefill_matches_reference(causal: bool) -> None:
    qo_lens, kv_lens = [5, 16, 1], [20, 16, 40]
    kv = Paged(kv_lens, 16, "NHD", seed=1)
    q = torch.randn(sum(qo_lens), HQ, D, device=DEV).to(BF)
    qo_indptr = torch.tensor([0, 5, 21, 22], dtype=torch.int32, device=DEV)
    w = prefill.BatchPrefillWithPagedKVCacheWrapper(_ws(), "NHD")
    _, first = _timed(
        "prefill-paged",
        lambda: w.plan(
            qo_indptr, kv.indptr, kv.indices, kv.last, HQ, HKV, D, 16,
            causal=causal, sm_scale=SCALE, q_data_type=BF, kv_data_type=BF,
        ),
    )  # fmt: skip
    out, lse = w.run(q, kv.cache, return_lse=True)
    eo = el = 0.0
    for r in range(3):
        s, e = int(qo_indptr[r]), int(qo_indptr[r + 1])
        ro, rl = _ref(q[s:e], kv.k[r], kv.v[r], causal)
        eo, el = max(eo, _err(out[s:e], ro)), max(el, _err(lse[s:e], rl))
    _report(f"prefill-paged-causal{causal}", err_out=eo, err_lse=el, first_plan_s=first)
    assert eo < 2e-2 and el < LSE_TOL


@pytest.mark.parametrize("causal", [True, False])
def test_ragged_prefill_matches_reference_and_lse_forms(causal: bool) -> None:
    qo_lens, kv_lens = [7, 16], [30, 16]
    g = torch.Generator(device=DEV).manual_seed(2)
    q = torch.randn(sum(qo_lens), HQ, D, generator=g, device=DEV).to(BF)
    k = torch.randn(sum(kv_lens), HKV, D, generator=g, device=DEV).to(BF)
    v = torch.randn(sum(kv_lens), HKV, D, generator=g, device=DEV).to(BF)
    qo = torch.tensor([0, 7, 23], dtype=torch.int32, device=DEV)
    kvp = torch.tensor([0, 30, 46], dtype=torch.int32, device=DEV)
    w = prefill.BatchPrefillWithRaggedKVCacheWrapper(_ws(), "NHD")
    _, first = _timed(
        "prefill-ragged",
        lambda: w.plan(
            qo, kvp, HQ, HKV, D, causal=causal, sm_scale=SCALE, q_data_type=BF, kv_data_type=BF
        ),
    )
    out, lse = w.run(q, k, v, return_lse=True)
    _, ln = w.run(q, k, v, return_lse=True, lse_base="ln")
    _, hn = w.run(q, k, v, return_lse=True, lse_layout="HN")
    eo = el = 0.0
    for r in range(2):
        s, e = int(qo[r]), int(qo[r + 1])
        ro, rl = _ref(
            q[s:e], k[int(kvp[r]) : int(kvp[r + 1])], v[int(kvp[r]) : int(kvp[r + 1])], causal
        )
        eo, el = max(eo, _err(out[s:e], ro)), max(el, _err(lse[s:e], rl))
    ln_ok = torch.allclose(ln, lse * math.log(2.0), rtol=0, atol=1e-6)
    hn_ok = torch.equal(hn, lse.t().contiguous())
    native = at_least(place(RELEASE), "0.7.1")
    _report(
        f"prefill-ragged-causal{causal}", err_out=eo, err_lse=el, first_plan_s=first,
        lse_ln_ok=ln_ok, lse_hn_ok=hn_ok, lse_forms="native" if native else "emulated",
    )  # fmt: skip
    assert eo < 2e-2 and el < LSE_TOL and ln_ok and hn_ok


def test_single_decode_and_prefill_match_reference() -> None:
    g = torch.Generator(device=DEV).manual_seed(3)
    k = torch.randn(77, HKV, D, generator=g, device=DEV).to(BF)
    v = torch.randn(77, HKV, D, generator=g, device=DEV).to(BF)
    q1 = torch.randn(HQ, D, generator=g, device=DEV).to(BF)
    o1, first_d = _timed(
        "single-decode", lambda: decode.single_decode_with_kv_cache(q1, k, v, sm_scale=SCALE)
    )
    ro1, _ = _ref(q1[None], k, v, causal=False)
    q = torch.randn(13, HQ, D, generator=g, device=DEV).to(BF)
    o, first_p = _timed(
        "single-prefill",
        lambda: prefill.single_prefill_with_kv_cache(q, k, v, causal=True, sm_scale=SCALE),
    )
    ro, _ = _ref(q, k, v, causal=True)
    e1, e2 = _err(o1[None], ro1), _err(o, ro)
    _report("single-decode", err_out=e1, first_call_s=first_d)
    _report("single-prefill-causal", err_out=e2, first_call_s=first_p)
    assert e1 < 2e-2 and e2 < 2e-2


def test_plan_written_for_0_5_3_keeps_its_sm_scale() -> None:
    """0.5.3's positional decode ``plan`` (``..., q_data_type, kv_data_type, data_type,
    sm_scale, ...``) through ``written_for("0.5.3")``: right on every release.  The same
    positional call straight to FlashInfer puts ``sm_scale`` elsewhere on 0.6.0+
    (``data_type``, as 0.6.15's forwarder maps extras in 0.6.0's order): the control."""
    kv = Paged([40, 9], 16, "NHD", seed=4)
    q = torch.randn(2, HQ, D, device=DEV).to(BF)
    tail = ("NONE", -1, None, BF, BF, None, SCALE, None, None)  # ..., sm_scale, rope_*
    head = (kv.indptr, kv.indices, kv.last, HQ, HKV, D, 16)
    W = fi_compat.written_for("0.5.3").decode.BatchDecodeWithPagedKVCacheWrapper
    w = W(_ws(), "NHD")
    w.plan(*head, *tail)
    out = w.run(q, kv.cache)
    want = torch.cat([_ref(q[r : r + 1], kv.k[r], kv.v[r], False)[0] for r in range(2)])
    e = _err(out, want)
    base = decode.BatchDecodeWithPagedKVCacheWrapper.__mro__[1]
    raw = base(_ws(), "NHD")
    direct: float | str
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            base.plan(raw, *head, *tail)
            direct = _err(base.run(raw, q, kv.cache), want)
    except Exception as exc:
        direct = f"{type(exc).__name__}: {str(exc)[:120]}"
    _report("plan-written-for-0.5.3", err_out=e, direct_positional=direct)
    assert e < 2e-2
    if at_least(place(RELEASE), "0.6.0"):
        assert not (isinstance(direct, float) and direct < 2e-2)  # the drift is real


def test_cuda_graph_decode_replays_after_a_new_plan() -> None:
    B, max_pages = 2, 16
    bufs = {
        "paged_kv_indptr_buffer": torch.zeros(B + 1, dtype=torch.int32, device=DEV),
        "paged_kv_indices_buffer": torch.zeros(max_pages, dtype=torch.int32, device=DEV),
        "paged_kv_last_page_len_buffer": torch.zeros(B, dtype=torch.int32, device=DEV),
    }
    w = decode.BatchDecodeWithPagedKVCacheWrapper(_ws(), "NHD", use_cuda_graph=True, **bufs)
    errs = []
    q = torch.randn(B, HQ, D, device=DEV).to(BF)
    out = torch.empty_like(q)
    kv1 = Paged([33, 50], 16, "NHD", seed=5)
    kv2 = Paged([70, 3], 16, "NHD", seed=6)
    cache = torch.zeros(max_pages + 4, 2, 16, HKV, D, dtype=BF, device=DEV)
    graph = None
    for kv in (kv1, kv2):
        cache.zero_()
        cache[: kv.cache.shape[0]] = kv.cache
        w.plan(
            kv.indptr, kv.indices, kv.last, HQ, HKV, D, 16,
            q_data_type=BF, kv_data_type=BF, sm_scale=SCALE,
        )  # fmt: skip
        if graph is None:
            w.run(q, cache, out=out)  # warm-up (JIT) outside capture
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                w.run(q, cache, out=out)
        out.zero_()
        graph.replay()
        torch.cuda.synchronize()
        want = torch.cat([_ref(q[r : r + 1], kv.k[r], kv.v[r], False)[0] for r in range(B)])
        errs.append(_err(out, want))
    _report("decode-cuda-graph", err_out_plan1=errs[0], err_out_plan2=errs[1])
    assert max(errs) < 2e-2


def test_merged_states_of_two_kv_parts_equal_attention_over_all() -> None:
    """``fi_compat.cascade``: attention over two KV parts, merged by the three merges,
    against the reference over the whole KV (single prefill's base-2 LSE as ``s``)."""
    from fi_compat import cascade

    g = torch.Generator(device=DEV).manual_seed(7)
    q = torch.randn(9, HQ, D, generator=g, device=DEV).to(BF)
    k = torch.randn(60, HKV, D, generator=g, device=DEV).to(BF)
    v = torch.randn(60, HKV, D, generator=g, device=DEV).to(BF)
    parts = [
        prefill.single_prefill_with_kv_cache(q, k[a:b], v[a:b], sm_scale=SCALE, return_lse=True)
        for a, b in ((0, 25), (25, 60))
    ]
    (oa, la), (ob, lb) = parts
    want_o, want_l = _ref(q, k, v, causal=False)
    (mo, ml), first = _timed("merge", lambda: cascade.merge_state(oa, la, ob, lb))
    so, sl = cascade.merge_states(torch.stack([oa, ob], 1), torch.stack([la, lb], 1))
    io, il = oa.clone(), la.clone()
    cascade.merge_state_in_place(io, il, ob, lb)
    errs = {
        "merge_state": (_err(mo, want_o), _err(ml, want_l)),
        "merge_states": (_err(so, want_o), _err(sl, want_l)),
        "merge_state_in_place": (_err(io, want_o), _err(il, want_l)),
    }
    _report("cascade-merges", first_call_s=first, **{k: list(v) for k, v in errs.items()})
    assert all(eo < 2e-2 and el < LSE_TOL for eo, el in errs.values()), errs


def test_fast_decode_plan_replans_like_plan() -> None:
    """``fi_compat.decode.fast_decode_plan`` after a first ``plan``: FlashInfer's own on
    0.4.0+, the full ``plan`` before; the same result on every release."""
    kv1 = Paged([33, 50], 16, "NHD", seed=8)
    kv2 = Paged([70, 3], 16, "NHD", seed=9)
    q = torch.randn(2, HQ, D, device=DEV).to(BF)
    w = decode.BatchDecodeWithPagedKVCacheWrapper(_ws(), "NHD")
    common = {"q_data_type": BF, "kv_data_type": BF, "sm_scale": SCALE}
    w.plan(kv1.indptr, kv1.indices, kv1.last, HQ, HKV, D, 16, **common)
    w.run(q, kv1.cache)
    decode.fast_decode_plan(w, kv2.indptr, kv2.indices, kv2.last, HQ, HKV, D, 16, **common)
    out = w.run(q, kv2.cache)
    want = torch.cat([_ref(q[r : r + 1], kv2.k[r], kv2.v[r], False)[0] for r in range(2)])
    e = _err(out, want)
    native = at_least(place(RELEASE), "0.4.0")
    _report("fast-decode-plan", err_out=e, path="native" if native else "full plan")
    assert e < 2e-2


def test_inherited_forward_return_lse_applies_its_arguments() -> None:
    """FlashInfer's own ``forward_return_lse`` / ``forward`` on the stable paged prefill
    wrapper (SGLang's extend path): its ``causal`` / ``sm_scale`` / ``k_scale`` /
    ``v_scale`` take effect as the release's ``run`` reads them (``sm_scale * k_scale``
    the softmax scale, ``out * v_scale``), on every release: before 0.2.9 FlashInfer's
    own call passed both scales into ``run``'s ``*args`` (dropped); the release view
    binds them as 0.2.9 (#1254) does."""
    qo_lens, kv_lens = [5, 16], [20, 40]
    kv = Paged(kv_lens, 16, "NHD", seed=10)
    q = torch.randn(sum(qo_lens), HQ, D, device=DEV).to(BF)
    qo_indptr = torch.tensor([0, 5, 21], dtype=torch.int32, device=DEV)
    w = prefill.BatchPrefillWithPagedKVCacheWrapper(_ws(), "NHD")
    w.plan(
        qo_indptr, kv.indptr, kv.indices, kv.last, HQ, HKV, D, 16,
        causal=True, sm_scale=0.5, q_data_type=BF, kv_data_type=BF,
    )  # fmt: skip
    out, lse = w.forward_return_lse(
        q, kv.cache, causal=True, sm_scale=SCALE / 2, k_scale=2.0, v_scale=0.5
    )
    out2 = w.forward(q, kv.cache, causal=True, sm_scale=SCALE / 2, k_scale=2.0, v_scale=0.5)
    eo = el = e2 = 0.0
    for r in range(2):
        s, e = int(qo_indptr[r]), int(qo_indptr[r + 1])
        ro, rl = _ref(q[s:e], kv.k[r], kv.v[r], True)
        eo, el = max(eo, _err(out[s:e], ro * 0.5)), max(el, _err(lse[s:e], rl))
        e2 = max(e2, _err(out2[s:e], ro * 0.5))
    _report("inherited-forward-return-lse", err_out=eo, err_lse=el, err_forward=e2)
    assert type(w) is prefill.BatchPrefillWithPagedKVCacheWrapper
    assert eo < 2e-2 and el < LSE_TOL and e2 < 2e-2
