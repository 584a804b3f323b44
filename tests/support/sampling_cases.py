"""Call cases of ``fi_compat.sampling``, shared by the static suite (every release, spy
bound to the snapshot signature) and the live contract (spy bound to
``inspect.signature`` of the installed function).

The spy returns what the release's kernel returns, release by release: samples in int32
before 0.6.0 and in the indices' dtype after; for a row without a positive probability
an arbitrary category before 0.6.7 (an uninitialised slot; the last category here) and
``0`` (with ``valid`` False) after; ``(samples, valid)`` only where the release has
``return_valid`` and was asked; renormalisation in float32
before 0.6.0.  Its samples are the first category of the highest probability among those
each filter keeps, so every value can be checked."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import errors, sampling
from fi_compat._adapters import sampling as adapter
from fi_compat._adapters.sampling import SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

B, V = 4, 16
SAMPLERS = [n for n in SPECS if "sampling_from" in n]
RENORM = ("top_p_renorm_probs", "top_k_renorm_probs", "top_k_mask_logits")


def releases(name: str) -> list[str]:
    e = SPECS[name]
    rel = snapshots.load(e)["releases"]
    return [r for r, v in rel.items() if v is not None and at_least(place(r), e.since)]


def _kept(p: torch.Tensor, a: dict[str, Any], i: int) -> torch.Tensor:
    """The categories the sampler's filters keep in row ``p`` (output row ``i``)."""
    keep = p > 0
    k = a.get("top_k")
    if k is not None:
        k = int(k[i]) if isinstance(k, torch.Tensor) else k
        keep &= p >= torch.topk(p, k).values[-1]
    mp = a.get("min_p")
    if mp is not None:
        keep &= p >= float(mp) * p.max()
    return keep


class SamplingSpy(BindSpy):
    def __init__(self, name: str, release: str, signature: Any = None) -> None:
        super().__init__(signature or snapshot_signature(release, SPECS[name]))
        self.name, self.pl = name, place(release)

    def result(self, a: dict[str, Any]) -> Any:
        n = self.name
        if n == "softmax":
            t = a["temperature"]
            t = 1.0 if t is None else (t.float()[:, None] if isinstance(t, torch.Tensor) else t)
            return torch.softmax(a["logits"].float() / t, -1)
        if n == "chain_speculative_sampling":
            b, k = a["draft_token_ids"].shape
            return (
                torch.zeros(b, k + 1, dtype=torch.int32),
                torch.zeros(b, dtype=torch.int32),
                torch.zeros(b, dtype=torch.int32),
            )
        if n in RENORM:
            x = a["logits" if n == "top_k_mask_logits" else "probs"]
            xf = x.float()
            if n == "top_p_renorm_probs":
                out = xf / xf.sum(-1, keepdim=True)  # the nucleus of a flat test row: all
            else:
                k = a["top_k"]
                thr = torch.topk(xf, k, dim=-1).values[:, -1:]
                kept = xf >= thr
                if n == "top_k_mask_logits":
                    out = xf.masked_fill(~kept, float("-inf"))
                else:
                    out = xf * kept
                    out = out / out.sum(-1, keepdim=True)
            native = n == "top_k_mask_logits" or n == "top_k_renorm_probs"
            if native and at_least(self.pl, "0.6.0"):
                return out.to(x.dtype)
            return out  # float32, as those releases return it
        x = a["logits"] if "logits" in a else a["probs"]
        p = torch.softmax(x.float(), -1) if "logits" in a else x.float()
        idx = a["indices"]
        rows = idx.tolist() if idx is not None else list(range(p.shape[0]))
        out_dt = idx.dtype if idx is not None and at_least(self.pl, "0.6.0") else torch.int32
        # before 0.6.7 an uninitialised shared-memory slot: the last category (0.3.1 on
        # the H200 returned 7 of 8)
        empty = 0 if at_least(self.pl, "0.6.7") else p.shape[1] - 1
        samples, valid = [], []
        for i, r in enumerate(rows):
            keep = _kept(p[r], a, i)
            ok = bool(keep.any())
            samples.append(int(torch.argmax(torch.where(keep, p[r], -1.0))) if ok else empty)
            valid.append(ok)
        s = torch.tensor(samples, dtype=out_dt)
        if a.get("return_valid"):
            return s, torch.tensor(valid)
        return s


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, SamplingSpy]:
    a = SPECS[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(sampling, name))
    spy = SamplingSpy(name, release, signature)
    a._set_target(spy)
    return f, spy


def args(name: str) -> dict[str, Any]:
    """A batch whose row 1 has no positive probability (row 0 peaks at 3, row 2 at 7)."""
    g = torch.Generator().manual_seed(0)
    probs = torch.rand(B, V, generator=g) * 0.5
    probs[0, 3], probs[2, 7], probs[3, 11] = 2.0, 2.0, 2.0
    probs[1] = 0
    probs = probs / probs.sum(-1, keepdim=True).clamp_min(1e-9)
    if name == "chain_speculative_sampling":
        return {
            "draft_probs": torch.rand(B, 2, V),
            "draft_token_ids": torch.zeros(B, 2, dtype=torch.int32),
            "target_probs": torch.rand(B, 3, V),
        }
    if name == "softmax":
        return {"logits": torch.randn(B, V, generator=g)}
    kw: dict[str, Any] = {}
    if "logits" in name:
        logits = torch.log(probs.clamp_min(1e-30))
        logits[1] = 0.0  # a flat row: every category possible
        kw["logits"] = logits
    else:
        kw["probs"] = probs
    if "top_k" in name:
        kw["top_k"] = 3
    if "top_p" in name:
        kw["top_p"] = 0.9 if name != "top_p_renorm_probs" else 1.0
    if name.startswith("min_p"):
        kw["min_p"] = 0.1
    if name in RENORM:
        kw[next(iter(kw))] = torch.rand(B, V, generator=g) + 0.01
    return kw


def _has(release: str, name: str, param: str) -> bool:
    return param in {p[0] for p in snapshots.params(SPECS[name], release) or []}


def case_samples_match_the_newest_convention(name: str, release: str, sig: Any = None) -> None:
    """Positional and keyword calls bind by keyword; samples come back as 0.6.7+ return
    them: the peak category per row, ``0`` for the row without mass, int32 or the
    indices' dtype; ``return_valid`` gives ``(samples, valid)`` on every release."""
    if name not in SAMPLERS:
        return
    kw = args(name)
    want = torch.tensor([3, 0, 7, 11])
    if "logits" in name:
        want[1] = 0  # flat row: the first category with the highest probability
    f, spy = facade(name, release, sig)
    out = f(**kw)
    assert out.dtype == torch.int32 and torch.equal(out.long(), want)
    f(*kw.values())
    assert spy.raw_kwargs[-1].keys() == spy.raw_kwargs[0].keys()
    for dt in (torch.int64, torch.int32):
        idx = torch.tensor([2, 1, 0, 0], dtype=dt)
        f, spy = facade(name, release, sig)
        out = f(**kw, indices=idx)
        sent = spy.last["indices"]
        assert sent.dtype == (dt if at_least(place(release), "0.6.0") else torch.int32)
        if sent.dtype == dt:
            assert sent is idx  # conforming: no copy
        assert out.dtype == dt
        assert out.tolist() == [7, 0, 3, 3]
    if "return_valid" in SPECS[name].params:
        f, spy = facade(name, release, sig)
        out, valid = f(**kw, return_valid=True)
        assert torch.equal(out.long(), want)
        assert valid.tolist() == [True, False, True, True]
        assert ("return_valid" in spy.last) == _has(release, name, "return_valid")


def case_seed_and_offset(name: str, release: str, sig: Any = None, monkeypatch: Any = None) -> None:
    """Ints: forwarded from 0.6.0, a generator with that seed before (its offset is
    what the release turns into the kernel's ``offset``: the kernel-level check is
    ``tests/static/test_sampling_seed_paths.py``); tensors: forwarded from 0.6.4,
    refused naming 0.6.4 before, one value per row refused before 0.7.2; the same
    checks everywhere."""
    if "seed" not in SPECS[name].params:
        return
    kw = args(name)
    x = next(iter(kw.values()))
    pl = place(release)
    made: list[tuple[Any, int, int]] = []
    marker = object()

    def fake(device: Any, seed: int, offset: int) -> Any:
        made.append((device, seed, offset))
        return marker

    assert monkeypatch is not None
    monkeypatch.setattr(adapter, "philox_generator", fake)
    f, spy = facade(name, release, sig)
    f(**kw, seed=1234, offset=8)
    if at_least(pl, "0.6.0"):
        assert spy.last["seed"] == 1234 and spy.last["offset"] == 8 and made == []
    else:
        assert spy.last["generator"] is marker and [m[:2] for m in made] == [(x.device, 1234)]
        assert "seed" not in spy.raw_kwargs[-1]
    seed_t = torch.tensor([5], dtype=torch.int64)
    off_t = torch.tensor([0], dtype=torch.int64)
    rows = torch.arange(B, dtype=torch.int64)
    if at_least(pl, "0.6.4"):
        f(**kw, seed=seed_t, offset=off_t)
        assert spy.last["seed"] is seed_t
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.4"):
            f(**kw, seed=seed_t, offset=off_t)
    if at_least(pl, "0.7.2"):  # seed_arr[bx * seed_stride]: one per row
        f(**kw, seed=rows, offset=off_t)
        assert spy.last["seed"] is rows
    elif at_least(pl, "0.6.4"):  # seed_arr[0] for every row
        with pytest.raises(errors.UnsupportedParameterError, match=r"one value per row.*0\.7\.2"):
            f(**kw, seed=rows, offset=off_t)
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.7\.2"):
            f(**kw, seed=seed_t, offset=rows)
    n = len(spy.calls)
    bad = [
        ({"seed": 3}, "seed and offset go together"),
        ({"offset": 4}, "seed and offset go together"),
        ({"seed": seed_t, "offset": 4}, "both be ints or both be tensors"),
        ({"seed": seed_t.int(), "offset": off_t.int()}, "int64 or uint64"),
        ({"seed": -1, "offset": 0}, r"seed must be an int in \[0, 2\*\*64\)"),
    ]
    for change, msg in bad:
        with pytest.raises(errors.InvalidArgumentError, match=msg):
            f(**kw, **change)
    assert len(spy.calls) == n


def case_bad_input_is_refused(name: str, release: str, sig: Any = None) -> None:
    kw = args(name)
    f, spy = facade(name, release, sig)
    first = next(iter(kw))
    x = kw[first]
    msg = f"expected {first}" if name == "chain_speculative_sampling" else f"{first} must be"
    bad: list[tuple[dict[str, Any], str]] = [({first: x[0]}, msg), ({first: x.long()}, msg)]
    if name in SAMPLERS:
        bad.append(({"indices": torch.zeros(B, 1, dtype=torch.int32)}, "indices must be a 1-D"))
        bad.append(({"indices": torch.zeros(B)}, "indices must be a 1-D int32 or int64"))
    if "top_k" in kw:
        bad.append(({"top_k": torch.ones(B + 3, dtype=torch.int32)}, "one value per row"))
        bad.append(({"top_k": "3"}, "top_k must be"))
    if name == "softmax":
        bad.append(({"temperature": torch.ones(B + 1)}, "temperature must be"))
    for change, msg in bad:
        with pytest.raises((errors.InvalidArgumentError, errors.MissingArgumentError), match=msg):
            f(**{**kw, **change})
    assert spy.calls == []


def case_renorm_and_mask_keep_the_input_dtype(name: str, release: str, sig: Any = None) -> None:
    """bf16 in, bf16 out on every release (0.2.x-0.5.x compute and return float32);
    float32 in, the same tensor FlashInfer returned."""
    if name not in RENORM:
        return
    kw = args(name)
    first = next(iter(kw))
    f, spy = facade(name, release, sig)
    ref = f(**kw)
    assert ref.dtype == torch.float32
    out = f(**{**kw, first: kw[first].bfloat16()})
    want = torch.float32 if name == "top_p_renorm_probs" else torch.bfloat16
    assert out.dtype == want
    assert torch.allclose(out.float(), ref, atol=2e-2, rtol=2e-2)
    if "is_deterministic" in SPECS[name].params:
        if _has(release, name, "is_deterministic"):
            f(**kw, is_deterministic=True)
            assert spy.last["is_deterministic"] is True
        else:
            since = SPECS[name].params["is_deterministic"].since
            with pytest.raises(errors.UnsupportedParameterError, match=since.replace(".", r"\.")):
                f(**kw, is_deterministic=True)


def case_hints_and_renames(name: str, release: str, sig: Any = None) -> None:
    """``top_k_max`` is dropped where the release lacks it; the emitted-count buffer of
    ``chain_speculative_sampling`` goes under the release's name."""
    kw = args(name)
    if "top_k_max" in SPECS[name].params:
        f, spy = facade(name, release, sig)
        f(**kw, top_k_max=3)
        assert ("top_k_max" in spy.raw_kwargs[-1]) == _has(release, name, "top_k_max")
    if name == "chain_speculative_sampling":
        f, spy = facade(name, release, sig)
        buf = torch.zeros(B, dtype=torch.int32)
        res = f(**kw, maybe_output_emitted_draft_token_num=buf)
        old = not at_least(place(release), "0.2.5")
        key = "maybe_output_emitted_token_num" if old else "maybe_output_emitted_draft_token_num"
        assert spy.raw_kwargs[-1][key] is buf
        assert len(res) == 3


CASES = [
    case_samples_match_the_newest_convention,
    case_seed_and_offset,
    case_bad_input_is_refused,
    case_renorm_and_mask_keep_the_input_dtype,
    case_hints_and_renames,
]
