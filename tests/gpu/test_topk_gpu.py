"""Real ``flashinfer.topk`` kernels through ``fi_compat.topk`` vs torch references, on one
release per interpreter (0.6.0+; tests/gpu/README.md has the table).

Tie-free scores (a random permutation per row, so the selected set is unique): ``top_k``
against ``torch.topk`` (the set per row; values and order with ``sorted=True``) in
float32 / float16 / bfloat16; ``top_k_page_table_transform`` (with ``row_to_batch``) and
``top_k_ragged_transform`` against the selected set translated through the page table /
shifted by the offset, rows shorter than ``k`` giving every index then ``-1``.  The same
call (defaults only, positional as written for 0.6.0) on every release.

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
from fi_compat import topk  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
DEV = "cuda"
ROWS, LEN, K = 6, 8192, 256
DTYPES = (torch.float32, torch.float16, torch.bfloat16)


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


def _scores(dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    """Distinct ranks per row (a permutation of ``0..LEN-1``), exact in float32.  In
    float16 / bfloat16 (integers exact to 2048 / 256) the ``K`` largest ranks become
    ``1..K`` and every other entry ``-1``: the selected set and its order stay unique."""
    g = torch.Generator(device=DEV).manual_seed(seed)
    ranks = torch.stack([torch.randperm(LEN, generator=g, device=DEV) for _ in range(ROWS)])
    x = ranks.float()
    if dtype is not torch.float32:
        x = torch.where(x >= LEN - K, x - (LEN - K) + 1, torch.full_like(x, -1.0))
    return x.to(dtype)


def _ref_sets(x: torch.Tensor, lengths: list[int]) -> list[set[int]]:
    return [
        set(torch.topk(x[i, :n].float(), min(K, n)).indices.tolist()) for i, n in enumerate(lengths)
    ]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_top_k_matches_torch(dtype: torch.dtype) -> None:
    x = _scores(dtype)
    (vals, idx), sec = _timed(lambda: topk.top_k(x, K))
    want = _ref_sets(x, [LEN] * ROWS)
    bad = sum(set(idx[i].tolist()) != want[i] for i in range(ROWS))
    assert idx.dtype == torch.int64 and vals.dtype == dtype
    assert torch.equal(vals, torch.gather(x, 1, idx))
    sv, si = topk.top_k(x, K, True)  # positional, as written for 0.6.0
    tv, ti = torch.topk(x.float(), K)
    bad_sorted = int((sv.float() != tv).any()) + int((si != ti).any())
    _report("top_k", dtype=str(dtype), mismatched_rows=bad, sorted_mismatch=bad_sorted, sec=sec)
    assert bad == 0 and bad_sorted == 0


def test_page_table_transform_matches_reference() -> None:
    x = _scores(torch.float32, 1)
    lengths = [LEN, 100, K, 5000, 1, 3000]
    batch = 2
    g = torch.Generator(device=DEV).manual_seed(2)
    table = torch.randint(0, 1 << 20, (batch, LEN), generator=g, device=DEV, dtype=torch.int32)
    row_to_batch = torch.tensor([1, 0, 1, 0, 1, 0], device=DEV, dtype=torch.int32)
    lens = torch.tensor(lengths, device=DEV, dtype=torch.int32)
    out, sec = _timed(lambda: topk.top_k_page_table_transform(x, table, lens, K, row_to_batch))
    bad = 0
    for i, s in enumerate(_ref_sets(x, lengths)):
        b = int(row_to_batch[i])
        want = {int(table[b, j]) for j in s}
        row = out[i].tolist()
        bad += set(row[: len(s)]) != want or any(v != -1 for v in row[len(s) :])
    _report("top_k_page_table_transform", mismatched_rows=bad, sec=sec)
    assert out.dtype == torch.int32 and tuple(out.shape) == (ROWS, K) and bad == 0


def test_ragged_transform_matches_reference() -> None:
    x = _scores(torch.float32, 3)  # windows shorter than LEN: float32 ranks
    lengths = [LEN, 100, K, 5000, 1, 3000]
    offsets = torch.arange(ROWS, device=DEV, dtype=torch.int32) * 100000
    lens = torch.tensor(lengths, device=DEV, dtype=torch.int32)
    out, sec = _timed(lambda: topk.top_k_ragged_transform(x, offsets, lens, K))
    bad = 0
    for i, s in enumerate(_ref_sets(x, lengths)):
        want = {j + int(offsets[i]) for j in s}
        row = out[i].tolist()
        bad += set(row[: len(s)]) != want or any(v != -1 for v in row[len(s) :])
    _report("top_k_ragged_transform", mismatched_rows=bad, sec=sec)
    assert out.dtype == torch.int32 and tuple(out.shape) == (ROWS, K) and bad == 0
