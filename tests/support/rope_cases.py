"""Call cases of ``fi_compat.rope``, shared by the static suite (every release, spy bound
to the snapshot signature) and the live contract (spy bound to ``inspect.signature`` of
the installed function).  The spy returns what the kernel would (``(q, k)`` copies, or
None in place) and records the bound arguments."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import errors, rope
from fi_compat._adapters.rope import SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

NNZ, HQ, HK, D = 7, 4, 2, 64


class RopeSpy(BindSpy):
    def __init__(self, name: str, release: str, signature: Any = None) -> None:
        super().__init__(signature or snapshot_signature(release, SPECS[name]))
        self.name = name

    def result(self, a: dict[str, Any]) -> Any:
        if self.name.endswith("_inplace"):
            return None
        if "query" in a:
            return a["query"].clone(), a["key"].clone()
        return a["q"].clone(), a["k"].clone()


def releases(name: str) -> list[str]:
    e = SPECS[name]
    rel = snapshots.load(e)["releases"]
    return [r for r, v in rel.items() if v is not None and at_least(place(r), e.since)]


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, RopeSpy]:
    a = SPECS[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(rope, name))
    spy = RopeSpy(name, release, signature)
    a._set_target(spy)
    return f, spy


def args(name: str, idx: torch.dtype = torch.int64) -> dict[str, Any]:
    q = torch.randn(NNZ, HQ, D).to(torch.bfloat16)
    k = torch.randn(NNZ, HK, D).to(torch.bfloat16)
    if name.startswith("apply_rope_with_cos_sin_cache"):
        return {
            "positions": torch.arange(NNZ, dtype=idx),
            "query": q.reshape(NNZ, -1),
            "key": k.reshape(NNZ, -1),
            "head_size": D,
            "cos_sin_cache": torch.randn(64, D),
        }
    if name in ("apply_rope", "apply_rope_inplace"):
        return {
            "q": q,
            "k": k,
            "indptr": torch.tensor([0, 3, NNZ], dtype=idx),
            "offsets": torch.tensor([0, 5], dtype=idx),
        }
    return {"q": q, "k": k, "pos_ids": torch.arange(NNZ, dtype=idx)}


INDEX = ("indptr", "offsets", "pos_ids", "positions")


def case_calls_bind_and_index_dtypes_are_native(name: str, release: str, sig: Any = None) -> None:
    """Positional and keyword calls reach the kernel by keyword with the same tensors;
    int64 index tensors become int32 where the release reads int32 blindly (before
    0.2.7) and are passed as they are after."""
    for idx in (torch.int64, torch.int32):
        kw = args(name, idx)
        f, spy = facade(name, release, sig)
        res = f(**kw)
        f2, spy2 = facade(name, release, sig)
        f2(*kw.values())
        for s in (spy, spy2):
            sent = s.raw_kwargs[-1]
            for n in INDEX:
                if n not in kw:
                    continue
                want = torch.int32 if not at_least(place(release), "0.2.7") else idx
                assert sent[n].dtype == want, (n, idx)
                assert torch.equal(sent[n].long(), kw[n].long())
                if want == idx:
                    assert sent[n] is kw[n]  # conforming: no copy
        assert (res is None) == name.endswith("_inplace")


def case_bad_input_is_refused(name: str, release: str, sig: Any = None) -> None:
    kw = args(name)
    f, spy = facade(name, release, sig)
    bad: list[tuple[dict[str, Any], str]] = []
    if "query" in kw:
        bad.append(({"cos_sin_cache": kw["cos_sin_cache"].half()}, "cos_sin_cache must be"))
        bad.append(({"positions": kw["positions"][:3]}, "positions must be 1-D"))
        bad.append(({"positions": kw["positions"].float()}, "int32 or int64"))
        bad.append(({"head_size": torch.randn(3)}, "head_size"))
    else:
        bad.append(({"q": kw["q"].float()}, "float16 or bfloat16"))
        bad.append(({"k": kw["k"][:, :, :32]}, "k must match q"))
        bad.append(({"q": kw["q"].reshape(NNZ, -1)}, "q must be 3-D"))
        idx = "pos_ids" if "pos_ids" in kw else "offsets"
        bad.append(({idx: kw[idx].float()}, f"{idx} must be a 1-D int32 or int64"))
    for change, msg in bad:
        with pytest.raises((errors.InvalidArgumentError, errors.MissingArgumentError), match=msg):
            f(**{**kw, **change})
    assert spy.calls == []


def case_old_cos_sin_order_fails_loudly(name: str, release: str, sig: Any = None) -> None:
    """0.2.0.post1's ``(q, k, cos_cache, sin_cache, pos_ids)`` positional call against the
    present signature (``positions`` gets q, ``head_size`` a tensor ...): a typed error
    before any launch, never a kernel reading the wrong tensors."""
    if not name.startswith("apply_rope_with_cos_sin_cache"):
        return
    f, spy = facade(name, release, sig)
    q, k = torch.randn(NNZ, HQ, D).half(), torch.randn(NNZ, HK, D).half()
    cos, sin = torch.randn(64, D // 2), torch.randn(64, D // 2)
    with pytest.raises(errors.InvalidArgumentError, match="apply_rope_with_cos_sin_cache"):
        f(q, k, cos, sin, torch.arange(NNZ, dtype=torch.int32))
    assert spy.calls == []


CASES = [
    case_calls_bind_and_index_dtypes_are_native,
    case_bad_input_is_refused,
    case_old_cos_sin_order_fails_loudly,
]
