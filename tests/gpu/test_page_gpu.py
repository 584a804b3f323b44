"""Real ``flashinfer.page`` kernels through ``fi_compat.page`` vs torch references, on one
release per interpreter (tests/gpu/README.md has the table).

``get_seq_lens`` against the page-table arithmetic, ``get_batch_indices_positions`` with a
padded ``nnz`` (0.6.8's ``-1`` / ``0`` padding rows) with and without output buffers, and
``append_paged_kv_cache`` in NHD / HND as one 5-D tensor and as a ``(k, v)`` pair, bf16,
3 requests over shuffled pages, every written slot compared and every other slot checked
unchanged.  Positions are within each request's KV sequence
(``seq_len - append_len + i``, FlashInfer's ``triton/page.py``); row ``i`` lands in page
``kv_indices[kv_indptr[b] + pos // page_size]``, entry ``pos % page_size``.

Marked ``gpu``: skipped without CUDA.  ``FI_COMPAT_GPU_REPORT=path`` appends one JSON line
per check (release, mismatches, first-call seconds).
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
from fi_compat import page  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
DEV = "cuda"
HEADS, DIM, PAGE = 2, 64, 16
# three requests: KV already in the cache, rows appended now
PREV, APPEND = (5, 17, 0), (7, 20, 33)
NUM_PAGES = 12  # the requests use 7 of them; the rest must stay untouched


def _report(name: str, **fields: Any) -> None:
    path = os.environ.get("FI_COMPAT_GPU_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"release": RELEASE, "test": name, **fields}) + "\n")


def _timed(fn: Any) -> tuple[Any, float]:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    r = fn()
    torch.cuda.synchronize()
    return r, time.perf_counter() - t0


def _gen(seed: int) -> torch.Generator:
    return torch.Generator(device=DEV).manual_seed(seed)


# --- get_seq_lens ----------------------------------------------------------------------


@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_get_seq_lens_matches_reference(device: str) -> None:
    pages = [1, 3, 0, 3]  # the third request has no page yet
    last = [12, 5, 0, 16]
    indptr = torch.tensor([0, *torch.tensor(pages).cumsum(0).tolist()], dtype=torch.int32)
    kv_last = torch.tensor(last, dtype=torch.int32)
    want = [max(n - 1, 0) * PAGE + ln for n, ln in zip(pages, last, strict=True)]
    out, dt = _timed(lambda: page.get_seq_lens(indptr.to(device), kv_last.to(device), PAGE))
    got = out.cpu().tolist()
    _report(f"get_seq_lens-{device}", got=got, want=want, seconds=round(dt, 3))
    assert got == want and out.device.type == device, (got, want)


# --- get_batch_indices_positions -------------------------------------------------------


def _bip_reference(append_len: list[int], seq_lens: list[int], nnz: int) -> tuple[list, list]:
    batch, pos = [], []
    for b, (n, s) in enumerate(zip(append_len, seq_lens, strict=True)):
        batch += [b] * n
        pos += [s - n + i for i in range(n)]
    pad = nnz - len(batch)
    return batch + [-1] * pad, pos + [0] * pad


_BIP_APPEND = [3, 0, 7, 2]  # an empty request in the middle
_BIP_SEQ = [5, 4, 20, 2]
_BIP_NNZ = 16  # append_indptr[-1] is 12: four padding rows


def _bip_inputs(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    indptr = torch.tensor([0, *torch.tensor(_BIP_APPEND).cumsum(0).tolist()], dtype=dtype)
    return indptr.to(DEV), torch.tensor(_BIP_SEQ, dtype=dtype, device=DEV)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_get_batch_indices_positions_padded(dtype: torch.dtype) -> None:
    indptr, seq = _bip_inputs(dtype)
    want_b, want_p = _bip_reference(_BIP_APPEND, _BIP_SEQ, _BIP_NNZ)
    (b, p), dt = _timed(lambda: page.get_batch_indices_positions(indptr, seq, _BIP_NNZ))
    got_b, got_p = b.cpu().tolist(), p.cpu().tolist()
    _report(
        f"get_batch_indices_positions-{str(dtype)[6:]}",
        batch_ok=got_b == want_b,
        positions_ok=got_p == want_p,
        seconds=round(dt, 2),
    )
    assert b.dtype == p.dtype == torch.int32 and b.shape == p.shape == (_BIP_NNZ,)
    assert got_b == want_b, (got_b, want_b)
    assert got_p == want_p, (got_p, want_p)


def test_get_batch_indices_positions_into_buffers() -> None:
    indptr, seq = _bip_inputs(torch.int32)
    want_b, want_p = _bip_reference(_BIP_APPEND, _BIP_SEQ, _BIP_NNZ)
    n = sum(_BIP_APPEND)
    # positions' padding rows are the caller's (0.6.8+ leave a given buffer's padding):
    # zeros there, so the 0.6.8 result is the reference; batch_indices must be overwritten
    bi = torch.full((_BIP_NNZ,), 55, dtype=torch.int32, device=DEV)
    pos = torch.full((_BIP_NNZ,), 77, dtype=torch.int32, device=DEV)
    pos[n:] = 0
    out, dt = _timed(
        lambda: page.get_batch_indices_positions(
            indptr, seq, _BIP_NNZ, batch_indices=bi, positions=pos
        )
    )
    got_b, got_p = bi.cpu().tolist(), pos.cpu().tolist()
    same = [out[0].data_ptr() == bi.data_ptr(), out[1].data_ptr() == pos.data_ptr()]
    _report(
        "get_batch_indices_positions-buffers",
        batch_ok=got_b == want_b,
        positions_ok=got_p == want_p,
        returns_buffers=all(same),
        seconds=round(dt, 2),
    )
    assert got_b == want_b, (got_b, want_b)
    assert got_p == want_p, (got_p, want_p)
    assert all(same) and torch.equal(out[0], bi) and torch.equal(out[1], pos), same


# --- append_paged_kv_cache -------------------------------------------------------------


def _page_table(seed: int) -> dict[str, Any]:
    """Three requests over shuffled pages, already covering the appended rows."""
    seq = [p + a for p, a in zip(PREV, APPEND, strict=True)]
    npages = [(s + PAGE - 1) // PAGE for s in seq]
    perm = torch.randperm(NUM_PAGES, generator=torch.Generator().manual_seed(seed))
    indices = perm[: sum(npages)].tolist()
    indptr = [0, *torch.tensor(npages).cumsum(0).tolist()]
    last = [s - (n - 1) * PAGE for s, n in zip(seq, npages, strict=True)]
    batch, pos = [], []
    for b, (p, a) in enumerate(zip(PREV, APPEND, strict=True)):
        batch += [b] * a
        pos += [p + i for i in range(a)]  # seq_len - append_len + i
    return {
        "indices": indices,
        "indptr": indptr,
        "last": last,
        "batch": batch,
        "pos": pos,
    }


def _make_cache(layout: str, form: str, g: torch.Generator) -> Any:
    """The cache in the requested form, filled with noise (the untouched-slot check)."""
    inner = (PAGE, HEADS, DIM) if layout == "NHD" else (HEADS, PAGE, DIM)
    if form == "5d":
        shape = (NUM_PAGES, 2, *inner)
        return torch.randn(shape, generator=g, device=DEV).to(torch.bfloat16)
    return tuple(
        torch.randn((NUM_PAGES, *inner), generator=g, device=DEV).to(torch.bfloat16)
        for _ in range(2)
    )


def _as_nhd(cache: Any, layout: str) -> torch.Tensor:
    """A ``[pages, 2, page_size, heads, dim]`` copy of the cache, whatever its form."""
    kv = torch.stack(cache, dim=1) if isinstance(cache, tuple) else cache
    return (kv if layout == "NHD" else kv.transpose(2, 3)).clone()


@pytest.mark.parametrize(
    ("layout", "form", "index_dtype"),
    [
        ("NHD", "5d", torch.int32),
        ("HND", "5d", torch.int32),
        ("NHD", "tuple", torch.int32),
        ("HND", "tuple", torch.int32),
        ("NHD", "5d", torch.int64),
    ],
)
def test_append_paged_kv_cache_matches_reference(
    layout: str, form: str, index_dtype: torch.dtype
) -> None:
    seed = {"NHD": 1, "HND": 2}[layout] * 10 + (form == "tuple")
    g = _gen(seed)
    t = _page_table(seed)
    nnz = sum(APPEND)
    k = torch.randn(nnz, HEADS, DIM, generator=g, device=DEV).to(torch.bfloat16)
    v = torch.randn(nnz, HEADS, DIM, generator=g, device=DEV).to(torch.bfloat16)
    cache = _make_cache(layout, form, g)
    before = _as_nhd(cache, layout)

    # the reference: row i of request b at position pos lands in page
    # kv_indices[kv_indptr[b] + pos // PAGE], entry pos % PAGE
    want = before.clone()
    written = torch.zeros(NUM_PAGES, PAGE, dtype=torch.bool, device=DEV)
    for row, (b, p) in enumerate(zip(t["batch"], t["pos"], strict=True)):
        pg = t["indices"][t["indptr"][b] + p // PAGE]
        want[pg, 0, p % PAGE] = k[row]
        want[pg, 1, p % PAGE] = v[row]
        written[pg, p % PAGE] = True
    assert int(written.sum()) == nnz  # the reference hits distinct slots

    def idx(xs: list[int]) -> torch.Tensor:
        return torch.tensor(xs, dtype=index_dtype, device=DEV)

    res, dt = _timed(
        lambda: page.append_paged_kv_cache(
            k,
            v,
            idx(t["batch"]),
            idx(t["pos"]),
            cache,
            idx(t["indices"]),
            idx(t["indptr"]),
            idx(t["last"]),
            kv_layout=layout,
        )
    )
    after = _as_nhd(cache, layout)
    slot_ok = (after == want).all(dim=-1).all(dim=-1)  # [pages, 2, page_size]
    bad_written = int((~slot_ok & written[:, None]).sum())
    bad_untouched = int((~slot_ok & ~written[:, None]).sum())
    changed_untouched = int(((after != before).any(-1).any(-1) & ~written[:, None]).sum())
    _report(
        f"append_paged_kv_cache-{layout}-{form}-{str(index_dtype)[6:]}",
        written_mismatches=bad_written,
        untouched_changed=changed_untouched,
        seconds=round(dt, 2),
    )
    assert res is None
    assert bad_written == 0, f"{bad_written} written slots differ from the reference"
    assert bad_untouched == 0 and changed_untouched == 0, (bad_untouched, changed_untouched)
    assert torch.equal(after, want)
