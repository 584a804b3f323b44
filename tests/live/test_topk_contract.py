"""``fi_compat.topk`` against the release of the cell: each function resolves to
FlashInfer's own, and the static suite's cases run with the innermost call replaced by a
spy bound to ``inspect.signature`` of that function; on a release before 0.6.0 the
typed error."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat import errors
from fi_compat._adapters.topk import SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.live import CELL, MARKS, run_policy
from support.topk_cases import CASES

pytestmark = MARKS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("name", list(SPECS))
def test_live_policy(name: str, case: Any) -> None:
    run_policy(SPECS, name, case)


def test_live_tie_break_enum() -> None:
    """``TopKTieBreak`` is FlashInfer's own enum from 0.6.9, the typed error before."""
    assert CELL is not None
    from fi_compat._adapters.topk import ALL_REEXPORTS

    (row,) = ALL_REEXPORTS
    dist = Distribution("flashinfer-python", CELL, "<cell>", "")
    if not at_least(place(CELL), "0.6.9"):
        with pytest.raises(errors.UnsupportedFlashInferVersionError, match=r"0\.6\.9"):
            row.resolve(dist)
        return
    import flashinfer.topk

    tie = row.resolve(dist)
    assert tie is flashinfer.topk.TopKTieBreak
    assert {m.name: int(m) for m in tie} == {"NONE": 0, "SMALL": 1, "LARGE": 2}
