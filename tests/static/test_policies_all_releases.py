"""Every call policy on every release 0.6.0-0.7.4, against each wheel's real signature.

The spy binds against the signature read statically from that release's wheel (the
snapshot), so this runs for all 39 releases without installing them; the live contract
suite (tests/live) repeats the same cases against the really installed releases.
"""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat import _snapshot_io as snapshots
from fi_compat._adapters.gdn_prefill import SPEC
from support.helpers import facade_for
from support.policy_cases import CASES
from support.spy import Spy, snapshot_signature

RELEASES = [r for r, v in snapshots.load(SPEC)["releases"].items() if v is not None]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("release", RELEASES)
def test_policy(release: str, case: Any) -> None:
    sig = snapshot_signature(release)

    def make() -> tuple[Any, Spy]:
        spy = Spy(sig)
        fn, _ = facade_for(release, spy)
        return fn, spy

    case(release, make)
