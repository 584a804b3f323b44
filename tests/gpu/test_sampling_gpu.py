"""Seeded sampling on the real kernels: the same ``seed`` / ``offset`` gives the same
Philox stream on every release (run one release per interpreter; tests/gpu/README.md).

* Within one release: ``fi_compat`` with ``seed=S, offset=O`` equals FlashInfer called
  directly with a ``torch.Generator`` whose state that release turns into the kernel's
  ``(S, O)``: the generator's own offset on 0.2.3-0.3.1.post1 (the C++ extension's
  ``philox_cuda_state``) and 0.7.4 (``get_seed_and_offset`` returns the offset before
  its reservation); the offset plus ``ceil4(n)`` on 0.4.0-0.7.2.post1 (it returns the
  offset after), ``n`` the release's reservation for the sampler.
* Across releases: every seeded call writes its samples (the first 64 and a sha256 of
  all) to ``$FI_COMPAT_GPU_REPORT``; ``sampling_from_probs`` is the same kernel (one
  uniform per row, inverse CDF) on every release, so its lines must be identical; a
  sampler whose kernel changed between releases may differ there without a seed
  problem (the within-release check above says which).
* ``generator=None`` draws from the default CUDA generator: two calls differ and
  ``torch.manual_seed`` repeats them (0.4.0-0.5.3 alone draw the same numbers on every
  call, FI#2284).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from typing import Any

import pytest
import torch

pytestmark = pytest.mark.gpu

if not torch.cuda.is_available():  # pragma: no cover - CPU hosts
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

import flashinfer.sampling as fis  # noqa: E402

import fi_compat  # noqa: E402
from fi_compat import sampling  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
PL = place(RELEASE)
DEV = "cuda"
ROWS = 4096  # rows per call (the batch)
SEED = 1234

if not at_least(PL, "0.2.3"):  # pragma: no cover
    pytest.skip("the samplers draw their own numbers from 0.2.3", allow_module_level=True)


def _report(name: str, **fields: Any) -> None:
    path = os.environ.get("FI_COMPAT_GPU_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"release": RELEASE, "test": name, **fields}) + "\n")


def _probs(rows: int = ROWS, vocab: int = 32) -> torch.Tensor:
    g = torch.Generator().manual_seed(7)
    w = torch.rand(rows, vocab, generator=g) + 0.05
    return (w / w.sum(-1, keepdim=True)).to(DEV)


def _generator(seed: int, offset: int) -> torch.Generator:
    g = torch.Generator(device=DEV)
    g.manual_seed(seed)
    g.set_offset(offset)
    return g


def _kernel_offset_of(generator_offset: int, n: int) -> int:
    """The Philox offset this release's kernel gets from a generator at that offset."""
    after = at_least(PL, "0.4.0") and not at_least(PL, "0.7.4")
    return generator_offset + ((n + 3) // 4 * 4 if after else 0)


PROBS = _probs()
LOGITS = PROBS.log()
B, N, V = 512, 3, 32
_g = torch.Generator().manual_seed(11)
DRAFT = torch.softmax(torch.randn(B, N, V, generator=_g), -1).to(DEV)
TARGET = torch.softmax(torch.randn(B, N + 1, V, generator=_g), -1).to(DEV)
IDS = torch.randint(0, V, (B, N), generator=_g, dtype=torch.int32).to(DEV)

# name -> (fi_compat call, FlashInfer call, the release's reservation n) with (S, O) or a
# generator; n from each release's get_seed_and_offset / philox_cuda_state call
# (tools/seed_paths.py; chain_speculative_sampling reserves b * (n + 2) on 0.7.4)
Call = Callable[..., Any]
CASES: dict[str, tuple[Call, Call, int]] = {
    "sampling_from_probs": (
        lambda **kw: sampling.sampling_from_probs(PROBS, **kw),
        lambda g: fis.sampling_from_probs(PROBS, generator=g),
        ROWS,
    ),
    "sampling_from_logits": (
        lambda **kw: sampling.sampling_from_logits(LOGITS, **kw),
        lambda g: fis.sampling_from_logits(LOGITS, generator=g),
        ROWS * 32,
    ),
    "top_p_sampling_from_probs": (
        lambda **kw: sampling.top_p_sampling_from_probs(PROBS, 0.7, **kw),
        lambda g: fis.top_p_sampling_from_probs(PROBS, 0.7, generator=g),
        ROWS * 32,
    ),
    "top_k_sampling_from_probs": (
        lambda **kw: sampling.top_k_sampling_from_probs(PROBS, 5, **kw),
        lambda g: fis.top_k_sampling_from_probs(PROBS, 5, generator=g),
        ROWS * 32,
    ),
    "min_p_sampling_from_probs": (
        lambda **kw: sampling.min_p_sampling_from_probs(PROBS, 0.5, **kw),
        lambda g: fis.min_p_sampling_from_probs(PROBS, 0.5, generator=g),
        ROWS,
    ),
    "top_k_top_p_sampling_from_probs": (
        lambda **kw: sampling.top_k_top_p_sampling_from_probs(PROBS, 8, 0.7, **kw),
        lambda g: fis.top_k_top_p_sampling_from_probs(PROBS, 8, 0.7, generator=g),
        ROWS * 32,
    ),
    "top_k_top_p_sampling_from_logits": (
        lambda **kw: sampling.top_k_top_p_sampling_from_logits(LOGITS, 8, 0.7, **kw),
        lambda g: fis.top_k_top_p_sampling_from_logits(LOGITS, 8, 0.7, generator=g),
        ROWS * 32,
    ),
    "chain_speculative_sampling": (
        lambda **kw: sampling.chain_speculative_sampling(DRAFT, IDS, TARGET, **kw)[0],
        lambda g: fis.chain_speculative_sampling(DRAFT, IDS, TARGET, generator=g)[0],
        B * (N + 2 if at_least(PL, "0.7.4") else N + 1),
    ),
}
FIRST = {"sampling_from_logits": "0.2.6", "chain_speculative_sampling": "0.2.3"}


def _need(name: str) -> None:
    since = FIRST.get(name, "0.2.3")
    if not at_least(PL, since):
        pytest.skip(f"{name} is flashinfer>={since}")


def _digest(t: torch.Tensor) -> dict[str, Any]:
    flat = [int(x) for x in t.flatten().tolist()]
    sha = hashlib.sha256(json.dumps(flat).encode()).hexdigest()[:16]
    return {"first64": flat[:64], "sha256": sha, "numel": len(flat)}


@pytest.mark.parametrize("name", list(CASES))
def test_seeded_samples_are_the_stream_of_seed_and_offset(name: str) -> None:
    """``seed=S, offset=O`` through fi_compat == FlashInfer with the generator state the
    release turns into ``(S, O)``; repeatable; reported for comparison across releases."""
    _need(name)
    ours, theirs, n = CASES[name]
    for gen_offset in (0, 4096):
        offset = _kernel_offset_of(gen_offset, n)
        got = ours(seed=SEED, offset=offset)
        again = ours(seed=SEED, offset=offset)
        want = theirs(_generator(SEED, gen_offset))
        same = bool(torch.equal(got, want))
        _report(
            f"seeded-{name}",
            seed=SEED,
            offset=offset,
            generator_offset=gen_offset,
            equals_flashinfer_generator=same,
            repeat_equal=bool(torch.equal(got, again)),
            **_digest(got),
        )
        assert torch.equal(got, again)
        assert same, (name, offset, gen_offset)
    for offset in (0, 8):  # the same (S, O) on every release: compare the report lines
        at = _digest(ours(seed=SEED, offset=offset))
        _report(f"seeded-{name}-at", seed=SEED, offset=offset, **at)


@pytest.mark.parametrize("name", ["sampling_from_probs", "top_k_sampling_from_probs"])
def test_no_generator_draws_from_the_default_generator(name: str) -> None:
    ours, _theirs, _n = CASES[name]
    torch.manual_seed(7)
    a, b = ours(), ours()
    torch.manual_seed(7)
    c = ours()
    differ, repeat = not torch.equal(a, b), bool(torch.equal(a, c))
    _report(f"default-generator-{name}", calls_differ=differ, manual_seed_repeats=repeat)
    assert differ and repeat, (differ, repeat)
