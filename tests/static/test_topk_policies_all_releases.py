"""``fi_compat.topk`` on every release 0.6.0-0.7.4, against each release's snapshot
signature (cases in ``tests/support/topk_cases.py``), and ``TopKTieBreak``: FlashInfer's
own enum from 0.6.9 (its values never drifted), a typed error before."""

from __future__ import annotations

import json
import sys
import types
from enum import IntEnum
from typing import Any

import pytest

from fi_compat import _snapshot_io as snapshots
from fi_compat import errors
from fi_compat._adapters.topk import ALL_REEXPORTS, SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES
from support.topk_cases import CASES, releases

CELLS = [(n, r) for n in SPECS for r in releases(n)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize(("name", "release"), CELLS)
def test_policy(name: str, release: str, case: Any) -> None:
    case(name, release)


def test_every_function_covers_every_release_from_0_6_0() -> None:
    start = KNOWN_RELEASES.index("0.6.0")
    for name, e in SPECS.items():
        assert e.since == "0.6.0" and releases(name) == list(KNOWN_RELEASES[start:]), name
        assert e.positional[0] == len(e.order) - (3 if name == "top_k_page_table_transform" else 0)


def test_tie_break_values_never_drifted() -> None:
    """One member table on every release that has the enum: re-exported, not a
    StableEnum."""
    data = json.loads(snapshots.DIR.joinpath("topk.TopKTieBreak.json").read_text())
    have = [r for r, v in data["releases"].items() if v is not None]
    assert have[0] == "0.6.9" and have[-1] == KNOWN_RELEASES[-1]
    assert {data["releases"][r]["signature"] for r in have} == {"s0"}
    members = {m[0]: int(m[2]) for m in data["signatures"]["s0"]}
    assert members == {"NONE": 0, "SMALL": 1, "LARGE": 2}


def test_tie_break_is_flashinfer_s_enum_from_0_6_9(monkeypatch: pytest.MonkeyPatch) -> None:
    (row,) = ALL_REEXPORTS
    assert row.since == "0.6.9"
    pkg = types.ModuleType("flashinfer")
    pkg.__path__ = []
    mod = types.ModuleType("flashinfer.topk")
    mod.TopKTieBreak = IntEnum("TopKTieBreak", {"NONE": 0, "SMALL": 1, "LARGE": 2})  # type: ignore[attr-defined]
    pkg.topk = mod  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "flashinfer", pkg)
    monkeypatch.setitem(sys.modules, "flashinfer.topk", mod)
    for release in ("0.6.0", "0.6.8.post1", "0.6.9", "0.7.4"):
        dist = Distribution("flashinfer-python", release, "<override>", "")
        if release < "0.6.9":
            with pytest.raises(errors.UnsupportedFlashInferVersionError, match=r"0\.6\.9"):
                row.resolve(dist)
        else:
            assert row.resolve(dist) is mod.TopKTieBreak  # type: ignore[attr-defined]
