"""Every fused-MoE call policy on every release 0.5.0-0.7.4, against each wheel's real
signature (the snapshot, read statically), without installing them; the live contract
suite (tests/live) repeats the same cases against really installed releases."""

from __future__ import annotations

from typing import Any

import pytest

from support.moe_cases import CASES
from support.moe_helpers import MOE_RELEASES, moe_facade


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("release", MOE_RELEASES)
def test_policy(release: str, case: Any) -> None:
    case(release, lambda name: moe_facade(name, release))
