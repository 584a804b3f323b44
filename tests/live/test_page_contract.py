"""``fi_compat.page`` against the release of the cell: each function resolves to
FlashInfer's own, and the static suite's cases run with the innermost call replaced by a
spy bound to ``inspect.signature`` of that function."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from fi_compat import errors
from fi_compat._adapters.page import SPECS
from fi_compat.detection import Distribution
from support.live import CELL, EXPECT, MARKS
from support.page_cases import CASES

pytestmark = MARKS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("name", list(SPECS))
def test_live_policy(name: str, case: Any) -> None:
    assert CELL is not None
    a = SPECS[name].select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    try:
        real = a.resolve()
    except errors.FlashInferImportError as exc:
        assert EXPECT != "live", exc
        pytest.skip(f"flashinfer.page does not import here: {exc}")
    sig = inspect.signature(real)
    case(name, CELL, sig)
