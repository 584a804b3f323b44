"""Call cases of ``fi_compat.topk``, shared by the static suite (every release 0.6.0-0.7.4,
spy bound to the snapshot signature) and the live contract (spy bound to
``inspect.signature`` of the installed function).  The spy computes what the kernels
compute on a tie-free input (``torch.topk`` per row, ``-1`` past each row's length,
translated through the page table / shifted by the offset), so a result is compared,
not only the call."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import errors, topk
from fi_compat._adapters.topk import SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

ROWS, LEN, K = 3, 16, 4
# appended options, their first release (0.6.8 topk.py deterministic, 0.6.9 tie_break,
# 0.6.10 dsa_graph_safe / row_starts, 0.6.17 page_table_row_starts, 0.6.18 the
# keyword-only page_size / out / out_raw_indices) and a value other than the default
OPTIONS: dict[str, dict[str, tuple[str, Any]]] = {
    "top_k": {
        "deterministic": ("0.6.8", True),
        "tie_break": ("0.6.9", 1),
        "dsa_graph_safe": ("0.6.10", True),
    },
    "top_k_ragged_transform": {
        "deterministic": ("0.6.8", True),
        "tie_break": ("0.6.9", 2),
        "dsa_graph_safe": ("0.6.10", True),
        "row_starts": ("0.6.10", "rows"),
    },
    "top_k_page_table_transform": {
        "deterministic": ("0.6.8", True),
        "tie_break": ("0.6.9", 1),
        "dsa_graph_safe": ("0.6.10", True),
        "row_starts": ("0.6.10", "rows"),
        "page_table_row_starts": ("0.6.17", "rows"),
        "page_size": ("0.6.18", 2),
        "out": ("0.6.18", "out"),
        "out_raw_indices": ("0.6.18", "out"),
    },
}


def _rows_of(a: dict[str, Any]) -> list[list[int]]:
    """Each row's selected local indices (descending score), as the kernels select."""
    out = []
    for i in range(a["input"].shape[0]):
        n = int(a["lengths"][i]) if "lengths" in a else a["input"].shape[1]
        row = a["input"][i, :n].float()
        out.append(torch.topk(row, min(a["k"], n)).indices.tolist())
    return out


class TopKSpy(BindSpy):
    def __init__(self, name: str, release: str, signature: Any = None) -> None:
        super().__init__(signature or snapshot_signature(release, SPECS[name]))
        self.name, self.release = name, release

    def result(self, a: dict[str, Any]) -> Any:
        x, k = a["input"], a["k"]
        if self.name == "top_k":
            v, i = torch.topk(x.float(), k, dim=-1)
            return v.to(x.dtype), i
        out = torch.full((x.shape[0], k), -1, dtype=torch.int32)
        for r, idx in enumerate(_rows_of(a)):
            if self.name == "top_k_ragged_transform":
                vals = [j + int(a["offsets"][r]) for j in idx]
            else:
                b = r if a.get("row_to_batch") is None else int(a["row_to_batch"][r])
                vals = [int(a["src_page_table"][b, j]) for j in idx]
            out[r, : len(vals)] = torch.tensor(vals, dtype=torch.int32)
        return out


def releases(name: str) -> list[str]:
    e = SPECS[name]
    rel = snapshots.load(e)["releases"]
    return [r for r, v in rel.items() if v is not None and at_least(place(r), e.since)]


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, TopKSpy]:
    a = SPECS[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(topk, name))
    spy = TopKSpy(name, release, signature)
    a._set_target(spy)
    return f, spy


def args(name: str, dtype: torch.dtype = torch.float32) -> dict[str, Any]:
    g = torch.Generator().manual_seed(0)
    scores = torch.randperm(ROWS * LEN, generator=g).reshape(ROWS, LEN).to(dtype)  # no ties
    lengths = torch.tensor([LEN, 3, 9], dtype=torch.int32)  # one row shorter than k
    if name == "top_k":
        return {"input": scores, "k": K}
    if name == "top_k_ragged_transform":
        offsets = torch.tensor([0, 100, 200], dtype=torch.int32)
        return {"input": scores, "offsets": offsets, "lengths": lengths, "k": K}
    table = torch.randperm(2 * LEN, generator=g)[: 2 * LEN].reshape(2, LEN).int()
    return {
        "input": scores,
        "src_page_table": table,
        "lengths": lengths,
        "k": K,
        "row_to_batch": torch.tensor([1, 0, 1], dtype=torch.int32),
    }


def _value(v: Any) -> Any:
    if v == "rows":
        return torch.zeros(ROWS, dtype=torch.int32)
    if v == "out":
        return torch.empty(ROWS, K, dtype=torch.int32)
    return v


def case_calls_bind_and_results_pass_through(name: str, release: str, sig: Any = None) -> None:
    """Keyword and positional calls reach FlashInfer by keyword with the caller's tensors
    (no copies), and the release's result is returned as it is."""
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        kw = args(name, dtype)
        want = TopKSpy(name, "0.7.4")(**kw)
        for call in ("kw", "pos"):
            f, spy = facade(name, release, sig)
            got = f(**kw) if call == "kw" else f(*kw.values())
            assert kw.keys() <= spy.raw_kwargs[-1].keys(), (call, spy.raw_kwargs[-1])
            assert all(spy.raw_kwargs[-1][n] is v for n, v in kw.items())
            pairs = zip(got, want, strict=True) if name == "top_k" else [(got, want)]
            assert all(torch.equal(g_, w) for g_, w in pairs)


def case_options_of_newer_releases(name: str, release: str, sig: Any = None) -> None:
    """An appended option at its default is left out where the release lacks it (what
    that release always does) and forwarded where it has it; any other value is refused
    before the call there, naming the first release that takes it."""
    kw = args(name)
    p = place(release)
    for opt, (since, other) in OPTIONS[name].items():
        value = _value(other)
        f, spy = facade(name, release, sig)
        default = SPECS[name].params[opt].default
        f(**kw, **{opt: default})
        if not at_least(p, since):
            assert opt not in spy.raw_kwargs[-1], (opt, release)
            with pytest.raises(errors.UnsupportedParameterError, match=since.replace(".", r"\.")):
                f(**kw, **{opt: value})
            assert len(spy.calls) == 1, (opt, release)
        else:
            f(**kw, **{opt: value})
            assert spy.raw_kwargs[-1][opt] is value or spy.raw_kwargs[-1][opt] == value


def case_positional_calls_of_older_releases(name: str, release: str, sig: Any = None) -> None:
    """The positional order is every release's (options only ever appended): a call
    written for 0.6.0 (``top_k(x, k, True)``) runs on every release, and one written for
    0.6.10 with its options at their defaults runs on 0.6.0 too."""
    kw = args(name)
    base = list(kw.values())
    if name == "top_k":
        old, new = [*base, True], [*base, True, False, 0, False]
    elif name == "top_k_ragged_transform":
        old, new = base, [*base, False, 0, False, None]
    else:
        old, new = base, [*base, False, 0, False, None]
    for call in (old, new):
        f, spy = facade(name, release, sig)
        f(*call)
        sent = spy.raw_kwargs[-1]
        assert all(sent[n] is v for n, v in kw.items())
        if name == "top_k":
            assert sent["sorted"] is True


def case_bad_input_is_refused(name: str, release: str, sig: Any = None) -> None:
    """Dtypes and shapes every release needs (0.6.0 topk.py asserts float scores; the
    kernels read int32 index rows), refused before the call."""
    kw = args(name)
    f, spy = facade(name, release, sig)
    bad: list[tuple[dict[str, Any], str]] = [
        ({"input": kw["input"].int()}, "input"),
        ({"input": kw["input"][0]}, "input"),
    ]
    if name != "top_k":
        bad.append(({"lengths": kw["lengths"].long()}, "lengths"))
        bad.append(({"lengths": kw["lengths"][:2]}, "lengths"))
    if name == "top_k_ragged_transform":
        bad.append(({"offsets": kw["offsets"].long()}, "offsets"))
    if name == "top_k_page_table_transform":
        bad.append(({"src_page_table": kw["src_page_table"].long()}, "src_page_table"))
        bad.append(({"row_to_batch": kw["row_to_batch"][:1]}, "row_to_batch"))
        if at_least(place(release), "0.6.18"):
            strided = torch.empty(ROWS, 2 * K, dtype=torch.int32)[:, ::2]
            bad.append(({"out": strided}, "out"))
    for change, msg in bad:
        with pytest.raises(errors.InvalidArgumentError, match=msg):
            f(**{**kw, **change})
    assert spy.calls == []


CASES = [
    case_calls_bind_and_results_pass_through,
    case_options_of_newer_releases,
    case_positional_calls_of_older_releases,
    case_bad_input_is_refused,
]
