"""``fi_compat.mamba.selective_state_update`` on every release 0.6.1-0.7.4, against each
release's snapshot signature (cases in ``tests/support/ssm_cases.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat._adapters.mamba import SPECS
from fi_compat.registry import KNOWN_RELEASES
from support.ssm_cases import CASES, NAME, releases


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("release", releases())
def test_policy(release: str, case: Any) -> None:
    case(release)


def test_coverage() -> None:
    assert SPECS[NAME].since == "0.6.1"
    assert releases() == list(KNOWN_RELEASES[KNOWN_RELEASES.index("0.6.1") :])
