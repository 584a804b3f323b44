"""``fi_compat.rope.mla_rope_quantize_fp8`` on every release 0.2.11-0.7.4, against each
release's snapshot signature (cases in ``tests/support/mla_rope_cases.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat._adapters.rope import MLA_SPECS as SPECS
from fi_compat.registry import KNOWN_RELEASES
from support.mla_rope_cases import CASES, releases

CELLS = [(n, r) for n in SPECS for r in releases(n)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize(("name", "release"), CELLS)
def test_policy(name: str, release: str, case: Any) -> None:
    case(name, release)


def test_every_release_from_0_2_11() -> None:
    e = SPECS["mla_rope_quantize_fp8"]
    start = KNOWN_RELEASES.index("0.2.11")
    assert e.since == "0.2.11" and releases(e.name) == list(KNOWN_RELEASES[start:])
    assert e.positional[0] == 15 and e.params["enable_pdl"].since == "0.5.0"
