"""``fi_compat.prefill.trtllm_ragged_attention_deepseek`` against the release of the cell:
it resolves to FlashInfer's own, and the static suite's cases run with the innermost call
replaced by a spy bound to ``inspect.signature`` of that function; before 0.2.14 the
typed error."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from fi_compat import errors
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.live import CELL, EXPECT, MARKS
from support.ragged_deepseek_cases import CASES, SPECS

pytestmark = MARKS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("name", list(SPECS))
def test_live_policy(name: str, case: Any) -> None:
    assert CELL is not None
    e = SPECS[name]
    # no trtllm_ragged_attention_deepseek before 0.2.14: the typed error, nothing imported
    if not at_least(place(CELL), e.since):
        with pytest.raises(errors.UnsupportedFlashInferVersionError, match=r"0\.2\.14"):
            e.select(Distribution("flashinfer-python", CELL, "<cell>", "")).resolve()
        return
    a = e.select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    try:
        real = a.resolve()
    except errors.FlashInferImportError as exc:
        assert EXPECT != "live", exc
        pytest.skip(f"flashinfer.prefill does not import here: {exc}")
    sig = inspect.signature(real)
    case(name, CELL, sig)
