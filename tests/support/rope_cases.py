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


# (head_size, rotary_dim, is_neox) of the cos/sin-cache form measured on an H100 with
# 0.6.7 and 0.7.4 (tools/gpu/probe_rope.py), where head sizes outside 64/128/256/512 run
# the RopeQuantize kernel (0.6.0+, FI#2109); before 0.6.0 DISPATCH_HEAD_DIM refuses them
# (SIGSEGV on 0.2.1.post1-0.3.1.post1, measured with 0.3.1)
CACHE_EXACT = [
    (96, 96, True),
    (128, 128, True),
    (160, 160, True),
    (192, 192, True),
    (192, 96, True),
    (80, 80, False),
    (96, 96, False),
    (112, 112, False),
    (160, 160, False),
    (192, 192, False),
    (96, 48, False),
    (160, 80, False),
    (192, 96, False),
]
CACHE_BROKEN = [  # wrong results (neox 80/80, 96/48, 112/112, 160/80), a device fault
    (80, 80, True),  # (80/40, 112/56 neox), a race (80/40, 112/56 interleaved, 0.6.7)
    (96, 48, True),
    (112, 112, True),
    (160, 80, True),
    (80, 40, True),
    (112, 56, True),
    (80, 40, False),
    (112, 56, False),
]
NATIVE_CACHE = [
    (64, 64, True),
    (64, 32, False),
    (128, 64, True),
    (256, 128, True),
    (512, 512, False),
]


def _cache_args(head: int, rotary: int, neox: bool) -> dict[str, Any]:
    q = torch.randn(NNZ, HQ * head).to(torch.bfloat16)
    return {
        "positions": torch.arange(NNZ, dtype=torch.int32),
        "query": q,
        "key": torch.randn(NNZ, HK * head).to(torch.bfloat16),
        "head_size": head,
        "cos_sin_cache": torch.randn(64, rotary),
        "is_neox": neox,
    }


def _refused(f: Any, kw: dict[str, Any], err: type[Exception], msg: str) -> Exception:
    """Refused by a keyword call and by a positional one, with the same error."""
    got = []
    for call in (lambda: f(**kw), lambda: f(*kw.values())):
        with pytest.raises(err, match=msg) as exc:
            call()
        got.append(exc.value)
    return got[0]


def case_head_sizes_outside_the_kernels(name: str, release: str, sig: Any = None) -> None:
    """Every head size and rotary_dim a release cannot compute is refused before the
    launch, the kernel never called: apply_rope* / apply_llama31_rope* outside
    64/128/256/512 with InvalidArgumentError on every release; the cos/sin-cache form
    with UnsupportedParameterError naming 0.6.0 before it, InvalidArgumentError on every
    release where RopeQuantize (0.6.0+) is wrong.  Every combination measured exact
    still reaches the kernel."""
    routed = at_least(place(release), "0.6.0")
    if not name.startswith("apply_rope_with_cos_sin_cache"):
        for head in (80, 96, 112, 160, 192, 32, 1024):
            for rotary in (None, head // 2):
                f, spy = facade(name, release, sig)
                kw = args(name)
                kw["q"] = torch.randn(NNZ, HQ, head).to(torch.bfloat16)
                kw["k"] = torch.randn(NNZ, HK, head).to(torch.bfloat16)
                kw["rotary_dim"] = rotary
                _refused(
                    f, kw, errors.InvalidArgumentError, rf"head_dim = {head} .*64, 128, 256 or 512"
                )
                assert spy.calls == []
        for head in (64, 128, 256, 512):
            f, spy = facade(name, release, sig)
            kw = args(name)
            kw["q"] = torch.randn(NNZ, HQ, head).to(torch.bfloat16)
            kw["k"] = torch.randn(NNZ, HK, head).to(torch.bfloat16)
            f(**kw)
            f(*kw.values())
            assert len(spy.calls) == 2
        return
    for head, rotary, neox in NATIVE_CACHE + CACHE_EXACT:
        f, spy = facade(name, release, sig)
        kw = _cache_args(head, rotary, neox)
        if routed or head in (64, 128, 256, 512):
            f(**kw)
            f(*kw.values())
            assert len(spy.calls) == 2, (head, rotary, neox)
            continue
        e = _refused(f, kw, errors.UnsupportedParameterError, r"needs flashinfer-python>=0\.6\.0")
        assert isinstance(e, errors.UnsupportedParameterError)
        assert (e.parameter, e.minimum, e.installed) == ("head_size", "0.6.0", release)
        assert f"head_size={head}" in str(e) and f"rotary_dim {rotary}" in str(e)
        assert spy.calls == []
    for head, rotary, neox in [*CACHE_BROKEN, (80, 96, False)]:  # rotary_dim > head_size
        f, spy = facade(name, release, sig)
        kw = _cache_args(head, rotary, neox)
        _refused(f, kw, errors.InvalidArgumentError, "no flashinfer-python release up to 0.7.4")
        assert spy.calls == []
    # the common case is one inline membership test in the generated code, not a call
    f, spy = facade(name, release, sig)
    f(**_cache_args(128, 128, True))
    assert "if not (head_size in _ROPE_HEAD_DIMS):" in f.adapter.source
    # the refusal stands with the metadata checks off (it guards a crash, not a shape)
    f.adapter.set_validation(False)
    try:
        bad = _cache_args(80, 80, True)
        with pytest.raises(errors.InvalidArgumentError):
            f(**bad)
    finally:
        f.adapter.set_validation(True)
    assert len(spy.calls) == 1


CASES = [
    case_calls_bind_and_index_dtypes_are_native,
    case_bad_input_is_refused,
    case_old_cos_sin_order_fails_loudly,
    case_head_sizes_outside_the_kernels,
]
