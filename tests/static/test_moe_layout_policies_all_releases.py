"""The MoE weight-layout helpers on every release 0.5.0-0.7.4 against each release's
own functions, read out of its wheel and run on CPU (pure torch): the real signature,
cache key and assertions, nothing installed (tests/support/moe_layout_cases.py)."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat import fused_moe
from fi_compat.detection import Distribution
from support.moe_helpers import ENTRIES, MOE_RELEASES
from support.moe_layout_cases import CASES, load
from support.spy import stub


def _make(release: str, fns: dict[str, Any]) -> Any:
    def make(name: str) -> Any:
        entry = ENTRIES[name]
        adapter = entry.select(Distribution("flashinfer-python", release, "<test>", ""))
        fn = adapter.build(stub(fused_moe, name))
        adapter._set_target(fns[entry.attr], live=True)
        return fn

    return make


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("release", MOE_RELEASES)
def test_layout_helper(release: str, case: Any) -> None:
    fns = load(release)
    if fns is None:
        pytest.skip(f"no wheel of {release} in ~/.cache/fi_compat/wheels")
    case(release, _make(release, fns), fns.__getitem__)
