"""``fi_compat.kda_decode`` and ``fi_compat.mhc`` against the release of the cell: each
function resolves to FlashInfer's own, and the static suite's cases run with the
innermost call replaced by a spy bound to ``inspect.signature`` of that function."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from support.kda_mhc_cases import CASES, SPECS
from support.live import CELL, MARKS, live_target

pytestmark = MARKS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("name", list(SPECS))
def test_live_policy(name: str, case: Any) -> None:
    real = live_target(SPECS, name, before_since="skip", optional_dependency=True)
    assert real.__name__ == name
    case(name, CELL, inspect.signature(real))
