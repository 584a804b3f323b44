"""Real ``flashinfer.sampling`` / ``flashinfer.rope`` kernels through fi_compat: sampling
checked statistically (allowed sets exact, frequencies against the probabilities),
renormalisation / masking / softmax and RoPE against float32 torch references, on one
release per interpreter (tests/gpu/README.md has the recipe).

Marked ``gpu``: skipped without CUDA.  ``FI_COMPAT_GPU_REPORT=path`` appends one JSON line
per check (release, max abs error or frequency deviation, first-call seconds; the first 64
samples of a seeded call, to compare releases afterwards).

Semantics read from the released sources (0.3.1 / 0.7.4 ``sampling.cuh``, ``pos_enc.cuh``):
top-p keeps the smallest set of most probable categories whose mass reaches ``top_p``
(a category is kept when the mass strictly above it is ``< top_p``); min-p keeps
``p >= min_p * max(p)``; ``top_k_top_p`` (``filter_apply_order="top_k_first"``) applies
top-p to the top-k *renormalised* probabilities; RoPE uses ``freq_j = theta^(-2j/d)``,
halves (NeoX) or pairs ``(2j, 2j+1)`` (``interleave=True`` / ``is_neox=False``).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
import torch

pytestmark = pytest.mark.gpu

if not torch.cuda.is_available():  # pragma: no cover - CPU hosts
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

import fi_compat  # noqa: E402
from fi_compat import rope, sampling  # noqa: E402
from fi_compat.errors import UnsupportedFlashInferVersionError  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
DEV = "cuda"
N = 20000  # draws per row of the table (one call over N copies of each row)


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


def _err(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.float() - b.float()).abs().max())


def _gen(seed: int) -> torch.Generator:
    return torch.Generator(device=DEV).manual_seed(seed)


def _need(since: str, what: str) -> None:
    if not at_least(place(RELEASE), since):
        pytest.skip(f"{what} is flashinfer>={since}")


@contextlib.contextmanager
def _or_skip() -> Iterator[None]:
    """A facade the installed release cannot serve: skip, naming why."""
    try:
        yield
    except UnsupportedFlashInferVersionError as exc:
        pytest.skip(f"not served on {RELEASE}: {exc}")


# -- sampling references -----------------------------------------------------------------

# 4 rows x 8 categories, no ties, rows permuted differently.  Margins: top-p 0.5 cumulative
# sums (sorted) are >= 0.02 from 0.5; 0.2 * max is >= 0.01 from every p; top-4-renormalised
# cumulative sums are >= 0.03 from 0.6 (the helpers assert a margin > 1e-3 themselves).
_TABLE = [
    [9, 30, 3, 16, 1, 22, 7, 12],
    [2, 13, 40, 1, 9, 25, 4, 6],
    [13, 3, 18, 10, 20, 8, 16, 12],
    [1, 4, 10, 2, 8, 55, 15, 5],
]


def _probs() -> torch.Tensor:
    return torch.tensor(_TABLE, dtype=torch.float32, device=DEV) / 100


def _big(probs: torch.Tensor) -> torch.Tensor:
    """Row ``r`` repeated ``N`` times: rows ``[r*N, (r+1)*N)``."""
    return probs.repeat_interleave(N, 0).contiguous()


def _top_k_mask(p: torch.Tensor, k: int) -> torch.Tensor:
    s = p.sort(-1, descending=True).values
    assert bool((s[:, k - 1] > s[:, k]).all()), "tie at the top-k boundary"
    return p >= s[:, k - 1 : k]


def _top_p_mask(p: torch.Tensor, top_p: float) -> torch.Tensor:
    """Smallest prefix (descending) whose mass reaches ``top_p``: kept when the mass of
    the categories before it is ``< top_p``."""
    s, order = p.sort(-1, descending=True)
    before = s.cumsum(-1) - s
    assert float((before - top_p).abs().min()) > 1e-3, "ambiguous top-p table"
    keep_sorted = before < top_p
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


def _min_p_mask(p: torch.Tensor, min_p: float) -> torch.Tensor:
    thr = min_p * p.max(-1, keepdim=True).values
    assert float((p - thr).abs().min()) > 1e-3, "ambiguous min-p table"
    return p >= thr


def _renorm(p: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    q = torch.where(mask, p, torch.zeros_like(p))
    return q / q.sum(-1, keepdim=True)


def _freqs(samples: torch.Tensor, rows: int, vocab: int) -> torch.Tensor:
    s = samples[: rows * N].long().view(rows, N)
    counts = torch.zeros(rows, vocab, device=s.device).scatter_add_(
        1, s, torch.ones_like(s, dtype=torch.float32)
    )
    return counts / N


# -- A. sampling -------------------------------------------------------------------------


def test_sampling_from_probs_frequencies_and_zero_row() -> None:
    _need("0.2.3", "sampling_from_probs (Philox form)")
    probs = _probs()
    big = torch.cat([_big(probs), torch.zeros(1, 8, device=DEV)])
    with _or_skip():
        (samples, valid), dt = _timed(
            lambda: sampling.sampling_from_probs(big, generator=_gen(0), return_valid=True)
        )
    dev = _err(_freqs(samples, 4, 8), probs)
    zero_ok = int(samples[-1]) == 0 and not bool(valid[-1]) and bool(valid[:-1].all())
    _report(
        "sampling_from_probs-freq",
        max_freq_dev=dev,
        zero_row_sample=int(samples[-1]),
        valid_ok=zero_ok,
        dtype=str(samples.dtype),
        seconds=round(dt, 2),
    )
    assert samples.dtype == torch.int32 and samples.shape == (4 * N + 1,)
    assert int(samples.min()) >= 0 and int(samples.max()) < 8
    assert dev < 0.02 and zero_ok, (dev, samples[-1], valid[-1], valid[:-1].all())


FILTERS: dict[str, tuple[Any, Any]] = {
    "top_k_sampling_from_probs": (
        lambda b, g: sampling.top_k_sampling_from_probs(b, 3, generator=g),
        lambda p: _top_k_mask(p, 3),
    ),
    "top_p_sampling_from_probs": (
        lambda b, g: sampling.top_p_sampling_from_probs(b, 0.5, generator=g),
        lambda p: _top_p_mask(p, 0.5),
    ),
    "min_p_sampling_from_probs": (
        lambda b, g: sampling.min_p_sampling_from_probs(b, 0.2, generator=g),
        lambda p: _min_p_mask(p, 0.2),
    ),
    "top_k_top_p_sampling_from_probs": (
        lambda b, g: sampling.top_k_top_p_sampling_from_probs(b, 4, 0.6, generator=g),
        # top_k_first: top-p over the top-4 renormalised probabilities
        lambda p: _top_p_mask(_renorm(p, _top_k_mask(p, 4)), 0.6) & _top_k_mask(p, 4),
    ),
}


@pytest.mark.parametrize("name", list(FILTERS))
def test_filtered_sampling_allowed_set_and_frequencies(name: str) -> None:
    _need("0.2.3", f"{name} (Philox form)")
    call, mask_of = FILTERS[name]
    probs = _probs()
    mask = mask_of(probs)
    with _or_skip():
        samples, dt = _timed(lambda: call(_big(probs), _gen(1)))
    s = samples.long().view(4, N)
    outside = int((~mask.gather(1, s)).sum())
    dev = _err(_freqs(samples, 4, 8), _renorm(probs, mask))
    _report(
        name,
        allowed_sizes=mask.sum(-1).tolist(),
        samples_outside=outside,
        max_freq_dev=dev,
        seconds=round(dt, 2),
    )
    assert samples.dtype == torch.int32 and outside == 0 and dev < 0.03, (outside, dev)


def test_seed_offset_reproducible() -> None:
    _need("0.2.3", "sampling_from_probs (Philox form)")
    big = _big(_probs())
    with _or_skip():
        a = sampling.sampling_from_probs(big, seed=1234, offset=0)
        b = sampling.sampling_from_probs(big, seed=1234, offset=0)
        c = sampling.sampling_from_probs(big, seed=1234, offset=4096)
    first = [int(x) for x in a[:64].tolist()]
    same, differ = torch.equal(a, b), not torch.equal(a, c)
    _report("sampling_from_probs-seed1234", first64=first, repeat_equal=same, offset_differs=differ)
    assert same and differ, (same, differ)


def test_indices_int64() -> None:
    _need("0.2.3", "sampling_from_probs (Philox form)")
    probs = torch.zeros(4, 8, device=DEV)
    probs[torch.arange(4), 2 * torch.arange(4) + 1] = 1.0  # row r: one-hot at 2r + 1
    idx = torch.tensor([3, 0, 0, 1], dtype=torch.int64, device=DEV)
    with _or_skip():
        out = sampling.sampling_from_probs(probs, indices=idx, generator=_gen(2))
    want = 2 * idx + 1
    _report("sampling_from_probs-indices-int64", dtype=str(out.dtype), samples=out.tolist())
    assert out.dtype == torch.int64 and torch.equal(out, want), (out, want)


def test_top_k_renorm_and_mask_bf16() -> None:
    g = torch.Generator().manual_seed(5)
    w = torch.stack([torch.randperm(16, generator=g) + 1 for _ in range(4)]).float()
    probs = (w / w.sum(-1, keepdim=True)).to(DEV, torch.bfloat16)  # distinct in bf16
    with _or_skip():
        out, dt = _timed(lambda: sampling.top_k_renorm_probs(probs, 3))
    want = _renorm(probs.float(), _top_k_mask(probs.float(), 3))
    e_renorm = _err(out, want)
    # logits k/8, |k| <= 32: exact and distinct in bf16
    logits = torch.stack([torch.randperm(64, generator=g) - 32 for _ in range(4)]) / 8
    logits = logits.to(DEV, torch.bfloat16)
    with _or_skip():
        masked = sampling.top_k_mask_logits(logits, 3)
    keep = _top_k_mask(logits.float(), 3)
    ninf = torch.full_like(logits, float("-inf"))
    mask_ok = torch.equal(masked, torch.where(keep, logits, ninf))
    _report(
        "top_k_renorm_probs-bf16",
        max_err=e_renorm,
        dtype=str(out.dtype),
        mask_dtype=str(masked.dtype),
        mask_exact=mask_ok,
        seconds=round(dt, 2),
    )
    assert out.dtype == torch.bfloat16 and masked.dtype == torch.bfloat16
    assert e_renorm < 1e-2 and mask_ok, (e_renorm, masked, logits)


def test_top_p_renorm_probs_f32() -> None:
    probs = _probs()
    with _or_skip():
        out, dt = _timed(lambda: sampling.top_p_renorm_probs(probs, 0.5))
    e = _err(out, _renorm(probs, _top_p_mask(probs, 0.5)))
    _report("top_p_renorm_probs", max_err=e, seconds=round(dt, 2))
    assert out.dtype == torch.float32 and e < 1e-5, e


def test_softmax_temperature() -> None:
    _need("0.2.7", "softmax")
    logits = torch.randn(4, 1000, generator=_gen(6), device=DEV) * 3
    with _or_skip():
        out, dt = _timed(lambda: sampling.softmax(logits, temperature=0.7))
    e = _err(out, torch.softmax(logits / 0.7, dim=-1))
    _report("softmax-t0.7", max_err=e, seconds=round(dt, 2))
    assert out.dtype == torch.float32 and out.shape == logits.shape and e < 1e-5, e


def test_chain_speculative_sampling_identical_one_hot() -> None:
    _need("0.2.3", "chain_speculative_sampling (Philox form)")
    b, n, v = 3, 4, 16
    g = torch.Generator().manual_seed(7)
    draft_ids = torch.randint(0, v, (b, n), generator=g).to(DEV, torch.int32)
    bonus = torch.randint(0, v, (b,), generator=g).to(DEV)
    draft_probs = torch.nn.functional.one_hot(draft_ids.long(), v).float()
    bonus_probs = torch.nn.functional.one_hot(bonus, v).float()[:, None]
    target_probs = torch.cat([draft_probs, bonus_probs], 1).contiguous()
    with _or_skip():
        (ids, accepted, emitted), dt = _timed(
            lambda: sampling.chain_speculative_sampling(
                draft_probs, draft_ids, target_probs, generator=_gen(8)
            )
        )
    ok = (
        tuple(ids.shape) == (b, n + 1)
        and tuple(accepted.shape) == (b,)
        and tuple(emitted.shape) == (b,)
        and torch.equal(ids[:, :n], draft_ids)
        and torch.equal(ids[:, n].long(), bonus)
        and bool((accepted == n).all())
        and bool((emitted == n).all())
    )
    _report(
        "chain_speculative_sampling-identical",
        all_accepted=ok,
        accepted=accepted.tolist(),
        emitted=emitted.tolist(),
        dtypes=[str(ids.dtype), str(accepted.dtype), str(emitted.dtype)],
        seconds=round(dt, 2),
    )
    assert ok, (ids, draft_ids, bonus, accepted, emitted)


# -- B. RoPE -----------------------------------------------------------------------------

NNZ, HQ, HK, D, THETA, POS0 = 64, 8, 2, 128, 1e4, 1000


def _angles(pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """cos / sin ``[len(pos), D/2]`` of ``pos * theta^(-2j/D)``, computed in float64."""
    j = torch.arange(D // 2, dtype=torch.float64, device=pos.device)
    ang = pos.double()[:, None] * THETA ** (-2 * j / D)[None]
    return ang.cos().float(), ang.sin().float()


def _rope_ref(x: torch.Tensor, pos: torch.Tensor, interleave: bool) -> torch.Tensor:
    cos, sin = (t[:, None, :] for t in _angles(pos))
    xf = x.float()
    if interleave:  # pairs (2j, 2j+1)
        xe, xo = xf[..., 0::2], xf[..., 1::2]
        return torch.stack([xe * cos - xo * sin, xo * cos + xe * sin], -1).flatten(-2)
    x1, x2 = xf[..., : D // 2], xf[..., D // 2 :]  # halves: x*cos + rotate_half(x)*sin
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


def _qk() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = _gen(9)
    q = torch.randn(NNZ, HQ, D, generator=g, device=DEV).to(torch.bfloat16)
    k = torch.randn(NNZ, HK, D, generator=g, device=DEV).to(torch.bfloat16)
    pos = torch.arange(NNZ, dtype=torch.int64, device=DEV) + POS0
    return q, k, pos


@pytest.mark.parametrize("interleave", [False, True])
def test_rope_pos_ids_matches_reference(interleave: bool) -> None:
    q, k, pos = _qk()
    q0, k0 = q.clone(), k.clone()
    with _or_skip():
        (qr, kr), dt = _timed(
            lambda: rope.apply_rope_pos_ids(q, k, pos, interleave=interleave, rope_theta=THETA)
        )
    eq, ek = _err(qr, _rope_ref(q, pos, interleave)), _err(kr, _rope_ref(k, pos, interleave))
    untouched = torch.equal(q, q0) and torch.equal(k, k0)
    qi, ki = q.clone(), k.clone()
    with _or_skip():
        res = rope.apply_rope_pos_ids_inplace(qi, ki, pos, interleave=interleave, rope_theta=THETA)
    inplace_equal = res is None and torch.equal(qi, qr) and torch.equal(ki, kr)
    _report(
        f"apply_rope_pos_ids-{'interleave' if interleave else 'neox'}",
        max_err_q=eq,
        max_err_k=ek,
        inplace_bitwise_equal=inplace_equal,
        inputs_untouched=untouched,
        seconds=round(dt, 2),
    )
    assert qr.dtype == torch.bfloat16 and qr.shape == q.shape and kr.shape == k.shape
    assert eq < 5e-2 and ek < 5e-2 and untouched and inplace_equal, (eq, ek, inplace_equal)


@pytest.mark.parametrize("is_neox", [True, False])
def test_rope_with_cos_sin_cache_matches_reference(is_neox: bool) -> None:
    _need("0.2.0.post2", "apply_rope_with_cos_sin_cache (vLLM signature)")
    q, k, pos = _qk()
    cos, sin = _angles(torch.arange(2048, device=DEV))
    cache = torch.cat([cos, sin], -1).contiguous()  # float32 [max_pos, D]
    query, key = q.reshape(NNZ, HQ * D), k.reshape(NNZ, HK * D)
    with _or_skip():
        (qo, ko), dt = _timed(
            lambda: rope.apply_rope_with_cos_sin_cache(pos, query, key, D, cache, is_neox=is_neox)
        )
    eq = _err(qo.reshape(NNZ, HQ, D), _rope_ref(q, pos, not is_neox))
    ek = _err(ko.reshape(NNZ, HK, D), _rope_ref(k, pos, not is_neox))
    _report(
        f"apply_rope_with_cos_sin_cache-{'neox' if is_neox else 'interleave'}",
        max_err_q=eq,
        max_err_k=ek,
        out_shape=[list(qo.shape), list(ko.shape)],
        seconds=round(dt, 2),
    )
    assert qo.numel() == query.numel() and ko.numel() == key.numel()
    assert eq < 5e-2 and ek < 5e-2, (eq, ek)
