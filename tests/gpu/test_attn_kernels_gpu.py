"""Real attention kernels outside the wrappers through fi_compat vs torch references, on
one release per interpreter (tests/gpu/README.md has the table).

* ``fi_compat.decode.xqa_batch_decode_with_kv_cache`` (0.5.0+, SM90/SM10x/SM12x): bf16
  query and paged ``(k_cache, v_cache)`` (NHD), GQA 8/2, head size 128, page size 16,
  two requests of 20 and 32 keys, positional and keyword calls, against a float32 softmax
  attention over the pages; ``q_len_per_req=2`` refused before 0.6.0.
* ``fi_compat.prefill.trtllm_fmha_v2_prefill`` (0.6.7+, SM90/SM12x): ``PACKED_QKV``
  causal prefill, two sequences (16 and 32 tokens), 8 heads of 128, bf16, against a
  float32 causal softmax attention per sequence.
* ``fi_compat.prefill.cudnn_batch_prefill_with_kv_cache``: needs the ``cudnn`` Python
  package (cuDNN's graph path; the cubin path downloads its cubins at the first call,
  which the device cannot): skipped where ``import cudnn`` fails.

Marked ``gpu``: skipped without CUDA.  ``FI_COMPAT_GPU_REPORT=path`` appends one JSON line
per check (release, max abs error, first-call seconds).
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import Any

import pytest
import torch

pytestmark = pytest.mark.gpu

if not torch.cuda.is_available():  # pragma: no cover - CPU hosts
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

import fi_compat  # noqa: E402
from fi_compat import errors  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
DEV = "cuda"
CC = torch.cuda.get_device_capability()


def _report(name: str, **fields: Any) -> None:
    path = os.environ.get("FI_COMPAT_GPU_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(
                json.dumps({"test": name, "release": RELEASE, "cc": list(CC), **fields}) + "\n"
            )


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, causal: bool) -> Any:
    """float32 softmax attention, q ``[tq, hq, d]``, k/v ``[tk, hkv, d]`` (GQA groups),
    causal aligned bottom-right."""
    group = q.shape[1] // k.shape[1]
    k = k.float().repeat_interleave(group, dim=1)
    v = v.float().repeat_interleave(group, dim=1)
    s = torch.einsum("qhd,khd->hqk", q.float(), k) * scale
    if causal:
        tq, tk = q.shape[0], k.shape[0]
        mask = torch.ones(tq, tk, dtype=torch.bool, device=q.device).tril(tk - tq)
        s = s.masked_fill(~mask, float("-inf"))
    return torch.einsum("hqk,khd->qhd", s.softmax(-1), v)


B, HQ, HKV, D, PAGE = 2, 8, 2, 128, 16
KV_LENS = (20, 32)


def _paged() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    pages = 2  # per request
    k = torch.randn(B * pages, PAGE, HKV, D, device=DEV).bfloat16()
    v = torch.randn(B * pages, PAGE, HKV, D, device=DEV).bfloat16()
    table = torch.arange(B * pages, dtype=torch.int32, device=DEV).view(B, pages)
    lens = torch.tensor(KV_LENS, dtype=torch.int32, device=DEV)
    return k, v, table, lens


@pytest.mark.skipif(CC[0] not in (9, 10, 12), reason="XQA kernels: SM90/SM10x/SM12x")
def test_xqa_decode_matches_reference() -> None:
    from fi_compat.decode import xqa_batch_decode_with_kv_cache as xqa

    if not at_least(place(RELEASE), "0.5.0"):
        with pytest.raises(errors.UnsupportedFlashInferVersionError, match=r"0\.5\.0"):
            xqa(torch.zeros(B, HQ, D, device=DEV), None, None, None, None, 1)
        return
    k, v, table, lens = _paged()
    q = torch.randn(B, HQ, D, device=DEV).bfloat16()
    ws = torch.zeros(256 * 1024 * 1024, dtype=torch.uint8, device=DEV)
    scale = 1 / math.sqrt(D)
    t0 = time.perf_counter()
    out = xqa(q, (k, v), ws, table, lens, max(KV_LENS), scale, 1.0)
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    ref = torch.stack(
        [
            _attend(
                q[b : b + 1],
                k[table[b]].reshape(-1, HKV, D)[: KV_LENS[b]],
                v[table[b]].reshape(-1, HKV, D)[: KV_LENS[b]],
                scale,
                False,
            )[0]
            for b in range(B)
        ]
    )
    err = (out.float() - ref).abs().max().item()
    again = xqa(
        query=q, kv_cache=(k, v), workspace_buffer=ws, block_tables=table, seq_lens=lens,
        max_seq_len=max(KV_LENS), bmm1_scale=scale, out=torch.empty_like(q), kv_layout="NHD",
    )  # fmt: skip
    torch.cuda.synchronize()
    same = torch.equal(again, out)
    _report("xqa_decode", max_abs_err=err, first_call_s=round(first, 2), keyword_equal=same)
    assert err < 2e-2 and same
    if not at_least(place(RELEASE), "0.6.0"):
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.0"):
            xqa(q, (k, v), ws, table, lens, max(KV_LENS), scale, 1.0, q_len_per_req=2)


@pytest.mark.skipif(CC[0] not in (9, 12), reason="FMHA v2 kernels: SM90/SM12x")
def test_fmha_v2_packed_causal_matches_reference() -> None:
    from fi_compat.prefill import trtllm_fmha_v2_prefill as fmha

    if not at_least(place(RELEASE), "0.6.7"):
        with pytest.raises(errors.UnsupportedFlashInferVersionError, match=r"0\.6\.7"):
            fmha(
                torch.zeros(1, device=DEV), "PACKED_QKV", None, None, 1, 1, 1.0, 1.0, 1, None, None
            )
        return
    torch.manual_seed(1)
    q_lens = (16, 32)
    packed = torch.randn(sum(q_lens), 3, HQ, D, device=DEV).bfloat16()
    lens = torch.tensor(q_lens, dtype=torch.int32, device=DEV)
    cum = torch.tensor([0, q_lens[0], sum(q_lens)], dtype=torch.int32, device=DEV)
    ws = torch.zeros(256 * 1024 * 1024, dtype=torch.uint8, device=DEV)
    scale = 1 / math.sqrt(D)
    t0 = time.perf_counter()
    out = fmha(
        packed, "PACKED_QKV", workspace_buffer=ws, seq_lens=lens, max_q_len=max(q_lens),
        max_kv_len=max(q_lens), bmm1_scale=scale, bmm2_scale=1.0, batch_size=2,
        cum_seq_lens_q=cum, cum_seq_lens_kv=cum, mask_mode="causal",
    )  # fmt: skip
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    ref = torch.cat(
        [
            _attend(p[:, 0], p[:, 1], p[:, 2], scale, True)
            for p in (packed[: q_lens[0]], packed[q_lens[0] :])
        ]
    )
    err = (out.float() - ref).abs().max().item()
    _report("fmha_v2_packed_causal", max_abs_err=err, first_call_s=round(first, 2))
    assert err < 2e-2


def test_cudnn_prefill_matches_reference() -> None:
    pytest.importorskip("cudnn", reason="cuDNN's graph path needs the cudnn Python package")
    from fi_compat.prefill import cudnn_batch_prefill_with_kv_cache as cudnn_prefill

    if not at_least(place(RELEASE), "0.6.0"):
        pytest.skip("0.2.9-0.5.3's graph path is bf16-only; run on 0.6.0+")
    torch.manual_seed(2)
    q_lens, kv_lens, h, d = (4, 8), (8, 8), 4, 128
    q = torch.randn(sum(q_lens), h, d, device=DEV).bfloat16()
    k = torch.randn(sum(kv_lens), h, d, device=DEV).bfloat16()
    v = torch.randn(sum(kv_lens), h, d, device=DEV).bfloat16()
    cq = torch.tensor([0, 4, 12], dtype=torch.int32, device=DEV)
    ck = torch.tensor([0, 8, 16], dtype=torch.int32, device=DEV)
    ws = torch.zeros(128 * 1024 * 1024, dtype=torch.uint8, device=DEV)
    out, lse = cudnn_prefill(
        q, k, v, 1 / math.sqrt(d), ws, max_token_per_sequence=8, max_sequence_kv=8,
        actual_seq_lens_q=torch.tensor(q_lens, dtype=torch.int32, device=DEV).view(-1, 1, 1, 1),
        actual_seq_lens_kv=torch.tensor(kv_lens, dtype=torch.int32, device=DEV).view(-1, 1, 1, 1),
        causal=True, return_lse=True, batch_offsets_q=cq * h * d, batch_offsets_o=cq * h * d,
        batch_offsets_k=ck * h * d, batch_offsets_v=ck * h * d,
    )  # fmt: skip
    torch.cuda.synchronize()
    refs = [
        _attend(
            q[cq[b] : cq[b + 1]], k[ck[b] : ck[b + 1]], v[ck[b] : ck[b + 1]], 1 / math.sqrt(d), True
        )
        for b in range(2)
    ]
    err = (out.float() - torch.cat(refs)).abs().max().item()
    # base-2 LSE on every release, padded (batch, max_token_per_sequence, heads)
    s = [
        torch.einsum("qhd,khd->hqk", q[cq[b] : cq[b + 1]].float(), k[ck[b] : ck[b + 1]].float())
        / math.sqrt(d)
        for b in range(2)
    ]
    lse_err = 0.0
    for b in range(2):
        tq, tk = q_lens[b], kv_lens[b]
        mask = torch.ones(tq, tk, dtype=torch.bool, device=DEV).tril(tk - tq)
        ref_lse = s[b].masked_fill(~mask, float("-inf")).logsumexp(-1).transpose(0, 1) / math.log(2)
        lse_err = max(lse_err, (lse[b, :tq] - ref_lse).abs().max().item())
    _report("cudnn_prefill", max_abs_err=err, lse_max_abs_err=lse_err, lse_shape=list(lse.shape))
    assert err < 2e-2 and tuple(lse.shape) == (2, 8, h) and lse_err < 1e-2
