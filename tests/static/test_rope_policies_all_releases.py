"""``fi_compat.rope`` on every release 0.2.0.post1-0.7.4 that it serves, against each
release's snapshot signature (cases in ``tests/support/rope_cases.py``)."""

from __future__ import annotations

from typing import Any

import pytest

import fi_compat.rope as rope_facade
from fi_compat import errors
from fi_compat._adapters.rope import SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES
from support.rope_cases import CASES, args, releases
from support.spy import stub

CELLS = [(n, r) for n in SPECS for r in releases(n)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize(("name", "release"), CELLS)
def test_policy(name: str, release: str, case: Any) -> None:
    case(name, release)


def test_coverage_and_the_cos_sin_cache_floor() -> None:
    for name, e in SPECS.items():
        want = "0.2.0.post2" if "cos_sin_cache" in name else "0.2.0.post1"
        assert e.since == want and releases(name) == list(
            KNOWN_RELEASES[KNOWN_RELEASES.index(want) :]
        )
    a = SPECS["apply_rope_with_cos_sin_cache"].select(
        Distribution("flashinfer-python", "0.2.0.post1", "<t>", "")
    )
    f = a.build(stub(rope_facade, "apply_rope_with_cos_sin_cache"))
    with pytest.raises(errors.UnsupportedFlashInferVersionError, match="fi_compat serves it"):
        f(**args("apply_rope_with_cos_sin_cache"))
