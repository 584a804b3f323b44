"""Real FlashInfer MLA kernels through ``fi_compat.mla.BatchMLAPagedAttentionWrapper`` on
one release per interpreter, against a float32 torch reference written here: per request,
``o = softmax(scale * (q_nope ckv^T + q_pe kpe^T)) ckv`` over the request's gathered pages
(absorbed MLA: the compressed KV is both key and value), and the LSE ``log2(sum exp(...))``
(base 2; ``return_lse_base_on_e=True`` the natural log, emulated before 0.5.3).

Marked ``gpu``: skipped without CUDA.  ``FI_COMPAT_GPU_REPORT=path`` appends one JSON line
per check (max abs error of out / LSE; the first ``run``'s seconds, where the JIT build
runs).  tests/gpu/README.md has the table.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest
import torch

pytestmark = pytest.mark.gpu

if not torch.cuda.is_available():  # pragma: no cover - CPU hosts
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

import fi_compat  # noqa: E402
from fi_compat import mla  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
if not at_least(place(RELEASE), "0.2.2"):  # pragma: no cover
    pytest.skip("fi_compat.mla serves 0.2.2+", allow_module_level=True)

H, CKV, KPE, PAGE = 16, 512, 64, 16
SCALE = 0.05  # not 1/sqrt(192): a dropped sm_scale shows
KV_LENS = (40, 7, 33)
BF = torch.bfloat16
OUT_TOL, LSE_TOL = 2e-2, 5e-3


def _report(name: str, **fields: Any) -> None:
    path = os.environ.get("FI_COMPAT_GPU_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"release": RELEASE, "test": name, **fields}) + "\n")


def _problem(seed: int = 0) -> dict[str, Any]:
    g = torch.Generator(device="cuda").manual_seed(seed)
    pages = [(n + PAGE - 1) // PAGE for n in KV_LENS]
    total = sum(pages) + 2  # two unused pages
    perm = torch.randperm(total, generator=g, device="cuda").to(torch.int32)
    kv_indices = perm[: sum(pages)]
    kv_indptr = torch.tensor([0, *torch.tensor(pages).cumsum(0).tolist()], dtype=torch.int32)
    b = len(KV_LENS)

    def rn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g, device="cuda").to(BF)

    return {
        "q_nope": rn(b, H, CKV),
        "q_pe": rn(b, H, KPE),
        "ckv": rn(total, PAGE, CKV),
        "kpe": rn(total, PAGE, KPE),
        "qo_indptr": torch.arange(b + 1, dtype=torch.int32, device="cuda"),
        "kv_indptr": kv_indptr.cuda(),
        "kv_indices": kv_indices,
        "kv_len": torch.tensor(KV_LENS, dtype=torch.int32, device="cuda"),
    }


def _reference(p: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
    outs, lses = [], []
    for i, n in enumerate(KV_LENS):
        idx = p["kv_indices"][p["kv_indptr"][i] : p["kv_indptr"][i + 1]].long()
        ckv = p["ckv"][idx].reshape(-1, CKV)[:n].float()
        kpe = p["kpe"][idx].reshape(-1, KPE)[:n].float()
        s = (p["q_nope"][i].float() @ ckv.T + p["q_pe"][i].float() @ kpe.T) * SCALE  # [H, n]
        outs.append(torch.softmax(s, -1) @ ckv)
        lses.append(torch.logsumexp(s, -1) / torch.log(torch.tensor(2.0)))
    return torch.stack(outs), torch.stack(lses)


def _wrapper(p: dict[str, Any]) -> Any:
    ws = torch.empty(128 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    w = mla.BatchMLAPagedAttentionWrapper(ws)
    w.plan(
        p["qo_indptr"],
        p["kv_indptr"],
        p["kv_indices"],
        p["kv_len"],
        H,
        CKV,
        KPE,
        PAGE,
        False,
        SCALE,
        BF,
        BF,
    )
    return w


def test_mla_decode_matches_the_reference() -> None:
    p = _problem()
    w = _wrapper(p)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out, lse = w.run(p["q_nope"], p["q_pe"], p["ckv"], p["kpe"], return_lse=True)
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    ref_o, ref_lse = _reference(p)
    err_o = (out.float() - ref_o).abs().max().item()
    err_lse = (lse.float() - ref_lse).abs().max().item()
    _report(
        "mla-decode",
        out_err=round(err_o, 6),
        lse_err=round(err_lse, 6),
        first_run_s=round(first, 1),
    )
    assert out.shape == (len(KV_LENS), H, CKV) and lse.shape == (len(KV_LENS), H)
    assert err_o < OUT_TOL and err_lse < LSE_TOL


def test_lse_base_e_is_the_natural_log_on_every_release() -> None:
    """Native from 0.5.3 (the kernel's ``*= loge2``), emulated before: the same bits."""
    p = _problem(seed=1)
    w = _wrapper(p)
    _, lse2 = w.run(p["q_nope"], p["q_pe"], p["ckv"], p["kpe"], return_lse=True)
    _, lse_e = w.run(
        p["q_nope"], p["q_pe"], p["ckv"], p["kpe"], return_lse=True, return_lse_base_on_e=True
    )
    want = lse2 * torch.tensor(0.693147180559945309417, device="cuda")
    _, ref_lse = _reference(p)
    err = (lse_e - ref_lse * torch.log(torch.tensor(2.0))).abs().max().item()
    _report("mla-lse-base-e", bit_identical=bool(torch.equal(lse_e, want)), lse_e_err=round(err, 6))
    assert torch.equal(lse_e, want) and err < LSE_TOL
