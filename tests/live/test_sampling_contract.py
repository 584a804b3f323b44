"""``fi_compat.sampling`` against the release of the cell: each function resolves to
FlashInfer's own, and the static suite's cases run with the innermost call replaced by a
spy bound to ``inspect.signature`` of that function."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat._adapters.sampling import SPECS
from support.live import MARKS, run_policy
from support.sampling_cases import CASES

pytestmark = MARKS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("name", list(SPECS))
def test_live_policy(name: str, case: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    run_policy(SPECS, name, case, monkeypatch=monkeypatch, before_since="skip")
