"""``fi_compat.concat_ops`` on every release 0.6.0-0.7.4, against each release's snapshot
signature (cases in ``tests/support/concat_ops_cases.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat._adapters.concat_ops import SPECS
from fi_compat.registry import KNOWN_RELEASES
from support.concat_ops_cases import CASES, releases

CELLS = [(n, r) for n in SPECS for r in releases(n)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize(("name", "release"), CELLS)
def test_policy(name: str, release: str, case: Any) -> None:
    case(name, release)


def test_every_release_from_0_6_0() -> None:
    e = SPECS["concat_mla_k"]
    assert e.since == "0.6.0" and releases("concat_mla_k") == list(
        KNOWN_RELEASES[KNOWN_RELEASES.index("0.6.0") :]
    )
    assert e.positional[0] == 3 and e.params["backend"].since == "0.7.0"
