"""``fi_compat.concat_ops`` against the release of the cell: each function resolves to
FlashInfer's own, and the static suite's cases run with the innermost call replaced by a
spy bound to ``inspect.signature`` of that function; on a release before 0.6.0 the
typed error."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat._adapters.concat_ops import SPECS
from support.concat_ops_cases import CASES
from support.live import MARKS, run_policy

pytestmark = MARKS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("name", list(SPECS))
def test_live_policy(name: str, case: Any) -> None:
    run_policy(SPECS, name, case)
