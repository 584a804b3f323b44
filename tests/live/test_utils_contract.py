"""``fi_compat.utils``'s capability helpers and ``fi_compat.fused_moe``'s autotuner
bucket arithmetic against the release of the cell, run for real (host code, no GPU):
the facades give FlashInfer's own answers (its ``ValueError`` for a device that is not
CUDA; the buckets of 0.6.10+), and where the release lacks a function the typed error
(the buckets before 0.6.10) or the computed answer (``is_sm100a_supported`` before
0.2.6)."""

from __future__ import annotations

import importlib

import pytest

from fi_compat import errors
from fi_compat._adapters.fused_moe import BUCKETS
from fi_compat._adapters.utils import SPECS
from fi_compat.registry import at_least, place
from support.live import CELL, MARKS

pytestmark = MARKS


def _module(name: str) -> object:
    try:
        return importlib.import_module(name)
    except Exception as exc:  # the cell's documented import outcome (registry contract)
        pytest.skip(f"{name} does not import here: {exc!r}")


@pytest.mark.parametrize("name", ["get_compute_capability", "is_sm100a_supported"])
def test_capability_helpers_refuse_a_cpu_device_as_flashinfer_does(name: str) -> None:
    import torch

    from fi_compat import utils

    assert CELL is not None
    if at_least(place(CELL), SPECS[name].since):
        real = getattr(_module("flashinfer.utils"), name)
        with pytest.raises(ValueError) as want:
            real(torch.device("cpu"))
    f = getattr(utils, name)
    with pytest.raises(ValueError, match="cuda device") as got:
        f(torch.device("cpu"))
    if at_least(place(CELL), SPECS[name].since):
        assert str(got.value) == str(want.value)


def test_bucket_helpers_give_flashinfers_buckets() -> None:
    from fi_compat import fused_moe

    assert CELL is not None
    if not at_least(place(CELL), BUCKETS["get_hybrid_num_tokens_buckets"].since):
        for name in BUCKETS:
            with pytest.raises(errors.UnsupportedFlashInferVersionError, match=r"0\.6\.10"):
                getattr(fused_moe, name)(8)
        return
    real = _module("flashinfer.fused_moe.utils")
    for top, low in ((8192, 1), (3000, 8), (1, 1), (16384, 4)):
        got = fused_moe.get_hybrid_num_tokens_buckets(top, low)
        assert got == real.get_hybrid_num_tokens_buckets(top, low)  # type: ignore[attr-defined]
    assert fused_moe.get_hybrid_num_tokens_buckets(4096)[:3] == (1, 2, 4)
    for x in (-1, 0, 1, 3, 255, 257, 2049, 4097, 10_000):
        want = real.map_to_hybrid_bucket_uncapped(x)  # type: ignore[attr-defined]
        assert fused_moe.map_to_hybrid_bucket_uncapped(x) == want
    assert fused_moe.map_to_hybrid_bucket_uncapped.raw() is real.map_to_hybrid_bucket_uncapped  # type: ignore[attr-defined]
