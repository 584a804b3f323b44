"""``fi_compat.mamba.selective_state_update`` against the release of the cell: it
resolves to FlashInfer's own function, and the static suite's cases run with the
innermost call replaced by a spy bound to ``inspect.signature`` of that function."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from fi_compat._adapters.mamba import SPECS
from support.live import CELL, MARKS, live_target
from support.ssm_cases import CASES, NAME

pytestmark = MARKS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
def test_live_policy(case: Any) -> None:
    real = live_target(SPECS, NAME, before_since="skip")
    assert real.__name__ == NAME
    case(CELL, inspect.signature(real))
