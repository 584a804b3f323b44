"""``fi_compat.sampling`` on every release 0.2.0.post1-0.7.4 that it serves, against each
release's snapshot signature (cases in ``tests/support/sampling_cases.py``)."""

from __future__ import annotations

from typing import Any

import pytest

import fi_compat.sampling as sampling_facade
from fi_compat import errors
from fi_compat._adapters.sampling import FLOOR, SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES
from support.sampling_cases import CASES, args, releases
from support.spy import stub

CELLS = [(n, r) for n in SPECS for r in releases(n)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize(("name", "release"), CELLS)
def test_policy(name: str, release: str, case: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    extra = {"monkeypatch": monkeypatch} if "monkeypatch" in case.__code__.co_varnames else {}
    case(name, release, **extra)


FIRST = {"sampling_from_logits": "0.2.6", "softmax": "0.2.7"}
NO_FLOOR = ("top_p_renorm_probs", "top_k_renorm_probs", "top_k_mask_logits")


@pytest.mark.parametrize("name", list(SPECS))
def test_coverage_and_the_floor(name: str) -> None:
    """Every release from the function's first (or the floor) to 0.7.4 is served; below
    the floor the call is refused before FlashInfer is touched, naming the floor."""
    e = SPECS[name]
    want = FIRST.get(name) or ("0.2.0.post1" if name in NO_FLOOR else FLOOR)
    assert e.since == want
    assert releases(name) == list(KNOWN_RELEASES[KNOWN_RELEASES.index(want) :])
    if want != FLOOR:
        return
    a = e.select(Distribution("flashinfer-python", "0.2.2.post1", "<t>", ""))
    f = a.build(stub(sampling_facade, name))
    with pytest.raises(errors.UnsupportedFlashInferVersionError, match="fi_compat serves it"):
        f(**args(name))
