"""``fi_compat.prefill.trtllm_ragged_attention_deepseek`` against the release of the cell:
it resolves to FlashInfer's own, and the static suite's cases run with the innermost call
replaced by a spy bound to ``inspect.signature`` of that function; before 0.2.14 the
typed error."""

from __future__ import annotations

from typing import Any

import pytest

from support.live import MARKS, run_policy
from support.ragged_deepseek_cases import CASES, SPECS

pytestmark = MARKS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("name", list(SPECS))
def test_live_policy(name: str, case: Any) -> None:
    run_policy(SPECS, name, case)
