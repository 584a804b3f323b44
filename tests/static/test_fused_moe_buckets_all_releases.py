"""``fi_compat.fused_moe``'s autotuner bucket arithmetic (``flashinfer.fused_moe.utils``,
0.6.10+) on every release that has it, against each release's snapshot signature:
tokenspeed's and vLLM's calls (``get_hybrid_num_tokens_buckets(max_num_tokens)``,
``map_to_hybrid_bucket_uncapped(x)``, the latter handed to the autotuner as a function)
reach FlashInfer's function with the same values, positional and by keyword; before
0.6.10 the typed error naming it (0.6.9's MoE runners tune over other buckets, so
nothing is computed there); FlashInfer's ``flashinfer.fused_moe.utils`` location gives
the same objects."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat import _snapshot_io as snapshots
from fi_compat import errors, fused_moe
from fi_compat._adapters.fused_moe import BUCKETS
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES
from support.spy import BindSpy, snapshot_signature, stub

FIRST = "0.6.10"
ARGS: dict[str, tuple[Any, ...]] = {
    "get_hybrid_num_tokens_buckets": (8192, 1),
    "map_to_hybrid_bucket_uncapped": (300,),
}


class Echo(BindSpy):
    def result(self, a: dict[str, Any]) -> Any:
        return dict(a)


def _releases(name: str) -> list[str]:
    rel = snapshots.load(BUCKETS[name])["releases"]
    return [r for r, v in rel.items() if v is not None]


CELLS = [(n, r) for n in BUCKETS for r in _releases(n)]


@pytest.mark.parametrize(("name", "release"), CELLS)
def test_calls_reach_flashinfer_by_the_release_signature(name: str, release: str) -> None:
    e = BUCKETS[name]
    a = e.select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(fused_moe, name))
    a._set_target(Echo(snapshot_signature(release, e)))
    kw = dict(zip(e.order, ARGS[name], strict=True))
    assert f(*ARGS[name]) == kw
    assert f(**kw) == kw


@pytest.mark.parametrize("name", list(BUCKETS))
def test_served_from_0_6_10_with_one_signature_and_refused_before(name: str) -> None:
    e = BUCKETS[name]
    assert e.since == FIRST and e.until is None
    assert _releases(name) == list(KNOWN_RELEASES[KNOWN_RELEASES.index(FIRST) :])
    snap = snapshots.load(e)
    assert {v["signature"] for v in snap["releases"].values() if v is not None} == {"s0"}
    for before in ("0.6.9", "0.5.0", "0.2.0.post1"):
        a = e.select(Distribution("flashinfer-python", before, "<test>", ""))
        f = a.build(stub(fused_moe, name))
        with pytest.raises(errors.UnsupportedFlashInferVersionError, match=r"0\.6\.10") as ei:
            f(*ARGS[name])
        assert before in str(ei.value)


def test_keyword_typo_is_a_type_error_and_the_min_default_is_1() -> None:
    e = BUCKETS["get_hybrid_num_tokens_buckets"]
    a = e.select(Distribution("flashinfer-python", "0.7.4", "<test>", ""))
    f = a.build(stub(fused_moe, "get_hybrid_num_tokens_buckets"))
    a._set_target(Echo(snapshot_signature("0.7.4", e)))
    assert f(4096) == {"max_num_tokens": 4096, "min_num_tokens": 1}
    with pytest.raises(errors.UnknownArgumentError):
        f(4096, min_num_token=2)


def test_flashinfer_locations_give_the_facades() -> None:
    import fi_compat.fused_moe.utils as located

    for name in BUCKETS:
        assert getattr(located, name) is getattr(fused_moe, name)
        assert name in fused_moe.__all__
