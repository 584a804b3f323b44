"""The Philox ``(seed, offset)`` that reaches each release's sampling kernel, for every
sampler and every release fi_compat serves it on.

The spy stands in for FlashInfer's public function (bound to the release's snapshot
signature); what that function does between its arguments and the kernel module is
then replayed from the release's own code, recorded by ``tools/seed_paths.py`` in
``snapshots/sampling-seed-paths.json``: its ``get_seed_and_offset`` source is executed
on the generator fi_compat passed (0.4.0+), or torch's ``philox_cuda_state`` is
applied where the C++ extension reads the generator itself (0.2.3-0.3.1.post1); the
increment is the release's own expression.  :class:`CudaGenerator` keeps the state as
torch's CUDA generator does (16 bytes: uint64 seed, int64 offset, offset % 4 == 0).
"""

from __future__ import annotations

import functools
import inspect
import json
import typing
from pathlib import Path
from typing import Any

import pytest
import torch

from fi_compat import errors
from fi_compat._adapters import sampling as adapter
from fi_compat.registry import at_least, place
from support.philox import M64, CudaGenerator, with_state
from support.sampling_cases import SAMPLERS, B, args, facade, releases

DATA = json.loads((Path(__file__).parent / "snapshots" / "sampling-seed-paths.json").read_text())
SEEDED = [*SAMPLERS, "chain_speculative_sampling"]
CELLS = [(n, r) for n in SEEDED for r in releases(n)]


class _Torch:
    """``torch`` as the recorded helpers see it: a new ``torch.Generator`` is a CUDA one."""

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)

    @staticmethod
    def Generator(device: Any = None) -> CudaGenerator:
        return CudaGenerator()


def _kernel_of(name: str, order: str) -> str:
    """The inner function (the one that calls the kernel module) ``name`` reaches."""
    if name.startswith("top_k_top_p"):  # top_k_first: a top-k pass, then top-p sampling
        return (
            "top_p_sampling_from_probs"
            if order == "top_k_first"
            else name.replace("logits", "probs")
        )
    return name


def kernel_seed_offset(
    release: str, name: str, call: dict[str, Any], default: CudaGenerator, order: str
) -> tuple[int, int]:
    """The ``(philox_seed, philox_offset)`` the release's kernel module receives."""
    rec = DATA["releases"][release]
    row = rec["increments"][_kernel_of(name, order)]
    if call.get("seed") is not None and call.get("offset") is not None:
        assert row["guarded"], (release, name)  # the release bypasses its generator
        return call["seed"] % M64, call["offset"] % M64
    x = call.get("probs", call.get("logits", call.get("draft_probs")))
    idx = call.get("indices")
    names = {
        "batch_size": idx.shape[0] if idx is not None else x.shape[0],
        "vocab_size": x.shape[-1],
        "logits": x,
        "draft_probs": x,
        "num_speculate_tokens": x.shape[1] if x.dim() == 3 else 0,
    }
    n = eval(row["increment"], {}, names)  # the release's own expression
    gen = call.get("generator")
    if rec["helper"] == "philox_cuda_state":  # C++: the generator or the default one
        return (gen or default).philox_cuda_state(n)
    helper = _helper(rec["helper"])
    helper.__globals__["get_default_generators"] = lambda device: default
    extra = (x.device,) if "device" in inspect.signature(helper).parameters else ()
    seed, offset = helper(n, gen, *extra)
    return seed % M64, offset % M64  # the kernel's uint64_t


@functools.cache
def _helper(key: str) -> Any:
    """The release's ``get_seed_and_offset``, executed from its recorded source."""
    ns: dict[str, Any] = {"torch": _Torch(), "Optional": typing.Optional, "Tuple": tuple}
    exec(DATA["sources"][key], ns)
    return ns["get_seed_and_offset"]


@pytest.fixture
def generators(monkeypatch: pytest.MonkeyPatch) -> CudaGenerator:
    """fi_compat's generators are :class:`CudaGenerator` in the state it computes; the
    default CUDA generator is one with a known seed."""
    default = CudaGenerator(seed=4321, offset=64)
    monkeypatch.setattr(
        adapter, "philox_generator", lambda d, s, o: with_state(adapter.philox_state(s, o))
    )
    monkeypatch.setattr(adapter, "default_generator", lambda index: default)
    return default


def _orders(name: str) -> list[str]:
    return ["top_k_first", "joint"] if name.startswith("top_k_top_p") else ["top_k_first"]


def _calls(name: str) -> list[dict[str, Any]]:
    """The plain call and, for the samplers, one with 5 indices (batch 5, 4 rows)."""
    kw = args(name)
    out = [kw]
    if name != "chain_speculative_sampling":
        out.append({**kw, "indices": torch.tensor([0, 2, 3, 0, 2], dtype=torch.int32)})
    return out


@pytest.mark.parametrize(("name", "release"), CELLS)
def test_explicit_seed_and_offset_reach_the_kernel(
    name: str, release: str, generators: CudaGenerator
) -> None:
    """``seed=S, offset=O`` gives the kernel ``(S, O)`` on every release: as given from
    0.6.0, through a generator the release reads as ``(S, O)`` before (0.4.0-0.5.3 add
    their reservation to the generator's offset: fi_compat starts it that much lower);
    an offset no generator can hold is refused before 0.6.0; a caller's generator is
    passed on as it is."""
    for order in _orders(name):
        for kw in _calls(name):
            if order != "top_k_first":
                kw = {**kw, "filter_apply_order": order}
            f, spy = facade(name, release)
            for seed, offset in ((1234, 0), (M64 - 1, 2**40 + 4)):
                f(**kw, seed=seed, offset=offset)
                got = kernel_seed_offset(release, name, spy.last, generators, order)
                assert got == (seed, offset), (order, kw.get("indices"), seed, offset)
    # a generator's offset is a multiple of 4: another offset needs 0.6.0 (native)
    kw = args(name)
    f, spy = facade(name, release)
    if at_least(place(release), "0.6.0"):
        f(**kw, seed=1, offset=6)
        assert kernel_seed_offset(release, name, spy.last, generators, "top_k_first") == (1, 6)
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=r"offset=6.*0\.6\.0"):
            f(**kw, seed=1, offset=6)
        assert spy.calls == []
    g = CudaGenerator(seed=99, offset=8)  # a generator of the caller's goes as it is
    f(**kw, generator=g)
    assert spy.last["generator"] is g


@pytest.mark.parametrize(("name", "release"), CELLS)
def test_no_generator_draws_from_the_default_cuda_generator(
    name: str, release: str, generators: CudaGenerator
) -> None:
    """Without generator and seed, the kernel gets the seed of the input device's default
    CUDA generator and a fresh offset per call, and the generator advances by the
    release's reservation (0.4.0-0.5.3 alone would draw from a new ``torch.Generator``
    per call: the same numbers every time, FI#2284)."""
    kw = args(name)
    f, spy = facade(name, release)
    seen = []
    for _ in range(3):
        before = generators.offset
        f(**kw)
        seen.append(kernel_seed_offset(release, name, spy.last, generators, "top_k_first"))
        assert generators.offset > before
    assert {s for s, _ in seen} == {4321}
    assert len({o for _, o in seen}) == 3


def test_every_served_release_is_recorded() -> None:
    for name, release in CELLS:
        rec = DATA["releases"][release]
        for order in _orders(name):
            assert _kernel_of(name, order) in rec["increments"], (name, release, order)


@pytest.mark.parametrize("release", releases("sampling_from_probs"))
def test_per_row_seed_tensors_follow_the_kernel(release: str) -> None:
    """A seed tensor of one value per row is forwarded only where the kernels index it
    per row (``seed_arr[bx * seed_stride]``, as recorded from sampling.cuh)."""
    if not at_least(place(release), "0.6.4"):
        return
    f, spy = facade("sampling_from_probs", release)
    rows = torch.arange(B, dtype=torch.int64)
    per_row = DATA["releases"][release]["seed_arr"] == "[bx * seed_stride]"
    if per_row:
        f(**args("sampling_from_probs"), seed=rows, offset=rows)
        assert spy.last["seed"] is rows
    else:
        assert DATA["releases"][release]["seed_arr"] == "[0]"
        with pytest.raises(errors.UnsupportedParameterError, match="one value per row"):
            f(**args("sampling_from_probs"), seed=rows, offset=rows)
