"""``fi_compat.gdn_decode`` on every release 0.2.0.post1-0.7.4 that it serves, against each
release's snapshot signature (cases in ``tests/support/gdn_decode_cases.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat._adapters.gdn_decode import SPECS
from fi_compat.registry import KNOWN_RELEASES
from support.gdn_decode_cases import CASES, releases

CELLS = [(n, r) for n in SPECS for r in releases(n)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize(("name", "release"), CELLS)
def test_policy(name: str, release: str, case: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    extra = {"monkeypatch": monkeypatch} if "monkeypatch" in case.__code__.co_varnames else {}
    case(name, release, **extra)


def test_coverage() -> None:
    for e in SPECS.values():
        assert e.since == "0.6.2"
        assert releases(e.name) == list(KNOWN_RELEASES[KNOWN_RELEASES.index("0.6.2") :])
