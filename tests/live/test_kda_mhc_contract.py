"""``fi_compat.kda_decode`` and ``fi_compat.mhc`` against the release of the cell: each
function resolves to FlashInfer's own, and the static suite's cases run with the
innermost call replaced by a spy bound to ``inspect.signature`` of that function."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from fi_compat import errors
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.kda_mhc_cases import CASES, SPECS
from support.live import CELL, EXPECT, MARKS

pytestmark = MARKS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("name", list(SPECS))
def test_live_policy(name: str, case: Any) -> None:
    assert CELL is not None
    e = SPECS[name]
    if not at_least(place(CELL), e.since):
        pytest.skip(f"{e.dotted} is served from {e.since}")
    a = e.select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    try:
        real = a.resolve()
    except errors.OptionalDependencyMissingError as exc:
        pytest.skip(f"{e.module} needs an optional package here: {exc}")
    except errors.FlashInferImportError as exc:
        assert EXPECT != "live", exc
        pytest.skip(f"{e.module} does not import here: {exc}")
    assert real.__name__ == name
    case(name, CELL, inspect.signature(real))
