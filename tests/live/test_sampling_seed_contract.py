"""The Philox ``(seed, offset)`` that reaches the kernel module through the cell's real
FlashInfer code: each sampler is called through fi_compat, FlashInfer's own Python runs
as released, and only its JIT module (the innermost callable) is replaced by a recorder
(no CUDA here).  CUDA generators are :class:`support.philox.CudaGenerator` (the state
protocol of torch's), FlashInfer's ``get_default_generators`` returns one with a known
seed.  0.2.3-0.3.1.post1 hand the generator itself to the module, whose C++ reads it with
``philox_cuda_state`` (the offset before the reservation)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import torch

from fi_compat._adapters import sampling as adapter
from fi_compat._adapters.sampling import SPECS
from fi_compat.registry import at_least, place
from support.philox import M64, CudaGenerator, with_state

CELL = os.environ.get("FI_COMPAT_CELL")
pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(CELL is None, reason="no FlashInfer release cell (run tools/matrix.py)"),
    pytest.mark.skipif(
        os.environ.get("FI_COMPAT_CELL_EXPECT") != "live",
        reason="flashinfer.sampling does not import in this cell",
    ),
]
B, V, N = 4, 16, 2
NAMES = [n for n in SPECS if "sampling_from" in n or n == "chain_speculative_sampling"]


class Recorder:
    """The JIT module: every function records its arguments and returns nothing
    (``module.f.default(...)`` too: 0.2.x-0.3.x call torch ops)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any) -> None:
            self.calls.append((name, args))

        record.default = record  # type: ignore[attr-defined]  # 0.2.x-0.3.x: torch ops
        return record


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Recorder, CudaGenerator]]:
    import flashinfer.sampling as fis

    rec, default = Recorder(), CudaGenerator(seed=4321, offset=64)

    class Spec:
        def build_and_load(self) -> Recorder:
            return rec

    if hasattr(fis, "gen_sampling_module"):  # 0.2.14+: a cached JIT spec
        monkeypatch.setattr(fis, "gen_sampling_module", lambda *a, **k: Spec())
    else:  # 0.2.3-0.2.13: load_cuda_ops into a module global, a CUDA stream argument
        monkeypatch.setattr(fis, "has_prebuilt_ops", False)
        monkeypatch.setattr(fis, "load_cuda_ops", lambda *a, **k: rec)
        monkeypatch.setattr(fis, "_sampling_module", None)
        monkeypatch.setattr(fis, "get_cuda_stream", lambda device: 0)
    if hasattr(fis, "get_default_generators"):
        monkeypatch.setattr(fis, "get_default_generators", lambda device: default)
    monkeypatch.setattr(
        adapter, "philox_generator", lambda d, s, o: with_state(adapter.philox_state(s, o))
    )
    monkeypatch.setattr(adapter, "default_generator", lambda index: default)
    clear = getattr(fis.get_sampling_module, "cache_clear", lambda: None)
    clear()
    try:
        yield rec, default
    finally:
        clear()


def _seed_offset(args: tuple[Any, ...]) -> tuple[int, int]:
    """What the kernel gets: the generator's state (C++ reads it, 0.2.3-0.3.1.post1),
    else the last two integer arguments (``seed, offset`` / ``seed_val, offset_val``)."""
    gens = [a for a in args if isinstance(a, CudaGenerator)]
    if gens:
        return gens[0].seed, gens[0].offset
    ints = [a for a in args if type(a) is int]
    return ints[-2] % M64, ints[-1] % M64


def _call(name: str, **kw: Any) -> None:
    from fi_compat import sampling

    probs = torch.softmax(torch.randn(B, V, generator=torch.Generator().manual_seed(0)), -1)
    if name == "chain_speculative_sampling":
        sampling.chain_speculative_sampling(
            torch.rand(B, N, V), torch.zeros(B, N, dtype=torch.int32), torch.rand(B, N + 1, V), **kw
        )
        return
    x = probs.log() if "logits" in name else probs
    per_row = {"top_k": 3, "top_p": 0.9, "min_p": 0.1}
    extra = {k: v for k, v in per_row.items() if k in SPECS[name].params}
    if "filter_apply_order" in SPECS[name].params:
        # "joint": one kernel; "top_k_first" runs a top-k pass first, which 0.7.4 does
        # with CUDA calls of its own (the sampler reached reserves the same either way)
        extra["filter_apply_order"] = "joint"
    getattr(sampling, name)(x, **extra, **kw)


@pytest.mark.parametrize("name", NAMES)
def test_explicit_seed_and_offset_reach_the_kernel(
    name: str, kernel: tuple[Recorder, CudaGenerator]
) -> None:
    assert CELL is not None
    if not at_least(place(CELL), SPECS[name].since):
        pytest.skip(f"{name} is served from {SPECS[name].since}")
    rec, _default = kernel
    for seed, offset in ((1234, 0), (7, 4096)):
        rec.calls.clear()
        _call(name, seed=seed, offset=offset)
        sampled = [c for c in rec.calls if "sampling" in c[0]]
        assert len(sampled) == 1, rec.calls
        assert _seed_offset(sampled[0][1]) == (seed, offset), (sampled[0][0], seed, offset)


@pytest.mark.parametrize("name", NAMES)
def test_no_generator_draws_from_the_default_cuda_generator(
    name: str, kernel: tuple[Recorder, CudaGenerator]
) -> None:
    assert CELL is not None
    if not at_least(place(CELL), SPECS[name].since):
        pytest.skip(f"{name} is served from {SPECS[name].since}")
    rec, default = kernel
    seen = set()
    for _ in range(2):
        rec.calls.clear()
        before = default.offset
        _call(name)
        (sampled,) = [c for c in rec.calls if "sampling" in c[0]]
        seed, offset = _seed_offset(sampled[1])
        seen.add(offset)
        assert seed == 4321
        if any(isinstance(a, CudaGenerator) for a in sampled[1]):  # the C++ reserves later
            default.philox_cuda_state(1)
        assert default.offset > before
    assert len(seen) == 2
