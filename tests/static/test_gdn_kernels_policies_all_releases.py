"""``fi_compat.gdn_kernels`` on every release it serves (0.6.8-0.7.4), against each
release's snapshot signature (cases in ``tests/support/gdn_kernels_cases.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat._adapters.gdn_kernels import SPECS
from fi_compat.registry import KNOWN_RELEASES
from support.gdn_kernels_cases import CASES, releases

CELLS = [(n, r) for n in SPECS for r in releases(n)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize(("name", "release"), CELLS)
def test_policy(name: str, release: str, case: Any) -> None:
    case(name, release)


def test_coverage() -> None:
    for e in SPECS.values():
        assert e.since == "0.6.8"
        assert releases(e.name) == list(KNOWN_RELEASES[KNOWN_RELEASES.index("0.6.8") :])
