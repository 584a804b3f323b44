"""Static coverage: every adapter against every release of its range (all 39 wheels)."""

from __future__ import annotations

import ast

import pytest

from fi_compat import _snapshot_io as snapshots
from fi_compat import gdn_prefill
from fi_compat._adapters.gdn_prefill import SPEC
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place

assert gdn_prefill.chunk_gated_delta_rule  # the stub's defaults are bound to SPEC
DATA = snapshots.load(SPEC)
RELEASES = [r for r, v in DATA["releases"].items() if v is not None]


def test_every_release_from_0_6_0_has_a_snapshot_and_none_before() -> None:
    assert RELEASES[0] == "0.6.0" and RELEASES[-1] == "0.7.4" and len(RELEASES) == 39
    before = [v for r, v in DATA["releases"].items() if not at_least(place(r), "0.6.0")]
    assert len(before) == 35 and not any(before)  # 0.2.0.post1-0.5.3


@pytest.mark.parametrize("release", RELEASES)
def test_adapter_matches_the_release_signature(release: str) -> None:
    params = snapshots.params(SPEC, release)
    assert params is not None
    named = [p for p in params if p[1] in ("po", "pk", "ko")]
    adapter = SPEC.select(Distribution("flashinfer-python", release, "<test>", ""))
    # the adapter forwards exactly the release's parameters, and can pass each by keyword
    assert list(adapter.present) == [p[0] for p in named]
    assert all(p[1] in ("pk", "ko") for p in named)
    # the release's positional parameters are a prefix of fi_compat's frozen order, so a
    # positional call written against that release means the same through fi_compat
    pos = [p[0] for p in named if p[1] == "pk"]
    stable_pos = [n for n in SPEC.order if not SPEC.params[n].keyword_only]
    assert stable_pos[: len(pos)] == pos
    for name, kind, default, _ in named:
        prm = SPEC.params[name]
        assert prm.keyword_only == (kind == "ko"), name
        # "left at the default" must mean the same as the release's default
        expected = prm.default if default is None else ast.literal_eval(default)
        assert prm.default == expected, (release, name)


def test_stable_signature_is_the_union_in_newest_order() -> None:
    newest = [p[0] for p in snapshots.params(SPEC, "0.7.4") or []]
    union = {p[0] for r in RELEASES for p in snapshots.params(SPEC, r) or []}
    assert list(SPEC.order) == newest and set(SPEC.order) == union
    assert len(SPEC.order) == 29 and sum(p.keyword_only for p in SPEC.params.values()) == 9


def test_param_since_matches_first_release_having_it() -> None:
    for name, prm in SPEC.params.items():
        first = next(r for r in RELEASES if name in [p[0] for p in snapshots.params(SPEC, r) or []])
        assert (prm.since or "0.6.0") == first, name


def test_generated_facts_are_current() -> None:
    """``_core/_facts.py`` is what ``tools/snapshot.py --facts`` makes of the snapshots."""
    from pathlib import Path

    from fi_compat._core import facts

    path = Path(facts.__file__).with_name("_facts.py")
    assert path.read_text() == facts.render(), "run: python tools/snapshot.py --facts"
