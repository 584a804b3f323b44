"""``fi_compat.prefill.trtllm_ragged_attention_deepseek`` on every release 0.2.14-0.7.4,
against each release's snapshot signature (cases in
``tests/support/ragged_deepseek_cases.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat.registry import KNOWN_RELEASES
from support.ragged_deepseek_cases import CASES, SPECS, releases

CELLS = [(n, r) for n in SPECS for r in releases(n)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize(("name", "release"), CELLS)
def test_policy(name: str, release: str, case: Any) -> None:
    case(name, release)


def test_positional_rule_stops_before_the_0_6_4_insertion() -> None:
    (e,) = SPECS.values()
    start = KNOWN_RELEASES.index("0.2.14")
    assert e.since == "0.2.14" and releases(e.name) == list(KNOWN_RELEASES[start:])
    n, why = e.positional
    assert n == 18 and e.order[n - 1] == "attention_sinks"
    assert why is not None and "0.6.4" in why and "skip_softmax_threshold_scale_factor" in why
