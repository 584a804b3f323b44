"""Call cases of ``fi_compat.page``, shared by the static suite (every release, spy bound
to the snapshot signature) and the live contract (spy bound to ``inspect.signature`` of
the installed function).  The spy computes what the release computes: nothing for the
in-place append, the sequence-length formula, and ``get_batch_indices_positions`` with
the release's allocation (0.6.8+: ``-1`` / ``0`` padding rows, before: ``torch.empty``,
standing in as 77 / 55)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import errors, page
from fi_compat._adapters.page import SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

NNZ, HEADS, DIM, PAGE = 7, 2, 64, 4


class PageSpy(BindSpy):
    def __init__(self, name: str, release: str, signature: Any = None) -> None:
        super().__init__(signature or snapshot_signature(release, SPECS[name]))
        self.name, self.release = name, release

    def result(self, a: dict[str, Any]) -> Any:
        if self.name == "append_paged_kv_cache":
            return None
        if self.name == "get_seq_lens":
            ind = a["kv_indptr"]
            return (
                torch.clamp(ind[1:] - ind[:-1] - 1, min=0) * a["page_size"] + a["kv_last_page_len"]
            )
        new = at_least(place(self.release), "0.6.8")
        nnz, ind, seq = a["nnz"], a["append_indptr"], a["seq_lens"]
        bi, pos = a.get("batch_indices"), a.get("positions")
        if bi is None:
            bi = torch.full((nnz,), -1 if new else 77, dtype=torch.int32)
        elif new:
            bi.fill_(-1)
        if pos is None:
            pos = torch.full((nnz,), 0 if new else 55, dtype=torch.int32)
        for i in range(ind.shape[0] - 1):
            s, e = int(ind[i]), int(ind[i + 1])
            bi[s:e] = i
            pos[s:e] = torch.arange(s, e) + int(seq[i]) - e
        return bi, pos


def releases(name: str) -> list[str]:
    e = SPECS[name]
    rel = snapshots.load(e)["releases"]
    return [r for r, v in rel.items() if v is not None and at_least(place(r), e.since)]


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, PageSpy]:
    a = SPECS[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(page, name))
    spy = PageSpy(name, release, signature)
    a._set_target(spy)
    return f, spy


def args(name: str, idx: torch.dtype = torch.int32) -> dict[str, Any]:
    def i(*v: int) -> torch.Tensor:
        return torch.tensor(v, dtype=idx)

    if name == "get_seq_lens":
        return {"kv_indptr": i(0, 2, 3), "kv_last_page_len": i(3, 1), "page_size": PAGE}
    if name == "get_batch_indices_positions":
        return {"append_indptr": i(0, 3, 5), "seq_lens": i(6, 2), "nnz": NNZ}  # 2 padding
    return {
        "append_key": torch.randn(NNZ, HEADS, DIM).half(),
        "append_value": torch.randn(NNZ, HEADS, DIM).half(),
        "batch_indices": i(0, 0, 0, 1, 1, 1, 1),
        "positions": i(3, 4, 5, 0, 1, 2, 3),
        "paged_kv_cache": torch.zeros(3, 2, PAGE, HEADS, DIM).half(),
        "kv_indices": i(0, 1, 2),
        "kv_indptr": i(0, 2, 3),
        "kv_last_page_len": i(2, 4),
    }


def case_calls_bind_and_index_tensors_pass_as_they_are(
    name: str, release: str, sig: Any = None
) -> None:
    """Keyword and positional calls reach FlashInfer by keyword with the caller's tensors:
    every release casts the append indices to int32 itself (``.int()``) and the Triton
    kernel reads any integer dtype, so int64 is never copied by fi_compat."""
    for idx in (torch.int32, torch.int64):
        kw = args(name, idx)
        f, spy = facade(name, release, sig)
        f(**kw)
        f2, spy2 = facade(name, release, sig)
        f2(*kw.values())
        for s in (spy, spy2):
            assert kw.keys() <= s.raw_kwargs[-1].keys()
            assert all(s.raw_kwargs[-1][n] is v for n, v in kw.items())


def case_batch_indices_positions_mean_0_6_8s(name: str, release: str, sig: Any = None) -> None:
    """Every release returns 0.6.8's result: padding rows ``-1`` / ``0``, the caller's
    buffers written (before 0.6.0 from the result), a given ``positions`` keeping its
    padding rows."""
    if name != "get_batch_indices_positions":
        return
    kw = args(name)
    newest = PageSpy(name, "0.7.4")(**kw)
    f, _ = facade(name, release, sig)
    got = f(**kw)
    assert all(torch.equal(g, w) for g, w in zip(got, newest, strict=True))
    assert got[0][5:].tolist() == [-1, -1] and got[1][5:].tolist() == [0, 0]
    bufs = {n: torch.full((NNZ,), 99, dtype=torch.int32) for n in ("batch_indices", "positions")}
    want = PageSpy(name, "0.7.4")(**kw, **{n: b.clone() for n, b in bufs.items()})
    f, _ = facade(name, release, sig)
    got = f(**kw, **bufs)
    assert got[0] is bufs["batch_indices"] and got[1] is bufs["positions"]
    assert all(torch.equal(g, w) for g, w in zip(got, want, strict=True))
    assert got[1][5:].tolist() == [99, 99]


def case_bad_input_is_refused(name: str, release: str, sig: Any = None) -> None:
    kw = args(name)
    f, spy = facade(name, release, sig)
    bad: list[tuple[dict[str, Any], str]] = []
    if name == "append_paged_kv_cache":
        cache = kw["paged_kv_cache"]
        bad.append(({"append_value": kw["append_value"].bfloat16()}, "append_key's dtype"))
        bad.append(({"paged_kv_cache": cache.bfloat16()}, "append_key's dtype"))
        bad.append(({"append_key": kw["append_key"][0]}, r"\[nnz, heads, head_dim\]"))
        bad.append(({"kv_indptr": kw["kv_indptr"].float()}, "kv_indptr must be a 1-D int32"))
        bad.append(({"positions": None}, "positions must be a torch.Tensor"))
        # AppendPagedKVCache's DISPATCH_HEAD_DIM has 64/128/256/512 only, every release
        # (a throw; the process dies on 0.2.1.post1-0.3.1.post1's TORCH_LIBRARY binding)
        for head in (80, 96, 192):
            rows = {n: torch.randn(NNZ, HEADS, head).half() for n in ("append_key", "append_value")}
            rows["paged_kv_cache"] = torch.zeros(3, 2, PAGE, HEADS, head).half()
            bad.append((rows, rf"head_dim = {head} .*must be 64, 128, 256 or 512"))
    elif name == "get_batch_indices_positions":
        bad.append(({"seq_lens": kw["seq_lens"].float()}, "seq_lens must be a 1-D int32"))
        bad.append(({"positions": torch.zeros(NNZ, dtype=torch.int64)}, "1-D int32 tensor"))
    else:
        bad.append(({"page_size": 4.0}, "page_size"))
    for change, msg in bad:
        with pytest.raises((errors.InvalidArgumentError, errors.MissingArgumentError), match=msg):
            f(**{**kw, **change})
    assert spy.calls == []


CASES = [
    case_calls_bind_and_index_tensors_pass_as_they_are,
    case_batch_indices_positions_mean_0_6_8s,
    case_bad_input_is_refused,
]
