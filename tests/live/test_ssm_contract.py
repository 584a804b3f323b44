"""``fi_compat.mamba.selective_state_update`` against the release of the cell: it
resolves to FlashInfer's own function, and the static suite's cases run with the
innermost call replaced by a spy bound to ``inspect.signature`` of that function."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from fi_compat import errors
from fi_compat._adapters.mamba import SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.live import CELL, EXPECT, MARKS
from support.ssm_cases import CASES, NAME

pytestmark = MARKS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
def test_live_policy(case: Any) -> None:
    assert CELL is not None
    e = SPECS[NAME]
    if not at_least(place(CELL), e.since):
        pytest.skip(f"fi_compat.mamba.{NAME} is served from {e.since}")
    a = e.select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    try:
        real = a.resolve()
    except errors.FlashInferImportError as exc:
        assert EXPECT != "live", exc
        pytest.skip(f"flashinfer.mamba does not import here: {exc}")
    assert real.__name__ == NAME
    case(CELL, inspect.signature(real))
