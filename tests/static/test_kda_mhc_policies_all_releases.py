"""``fi_compat.kda_decode`` (0.6.13 / 0.6.18-0.7.4) and ``fi_compat.mhc`` (0.6.13-0.7.4)
on every release of each range, against the release's snapshot signature (cases in
``tests/support/kda_mhc_cases.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat.registry import KNOWN_RELEASES
from support.kda_mhc_cases import CASES, SPECS, releases

CELLS = [(n, r) for n in SPECS for r in releases(n)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize(("name", "release"), CELLS)
def test_policy(name: str, release: str, case: Any) -> None:
    case(name, release)


def test_coverage() -> None:
    first = {
        "recurrent_kda": "0.6.13",
        "fused_kda_decode": "0.6.18",
        "mhc_post": "0.6.13",
        "mhc_pre_big_fuse": "0.6.13",
    }
    for name, since in first.items():
        assert SPECS[name].since == since
        assert releases(name) == list(KNOWN_RELEASES[KNOWN_RELEASES.index(since) :])
