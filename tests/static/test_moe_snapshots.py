"""Static coverage of fi_compat.fused_moe: every adapter table against every release of
its range, read from the wheels (``_snapshots/fused_moe.*.json``, 43 releases)."""

from __future__ import annotations

from typing import Any

import pytest

import fi_compat.fused_moe  # noqa: F401  (binds the stubs to the tables)
from fi_compat import _snapshot_io as snapshots
from fi_compat import enums
from fi_compat._adapters.fused_moe import HELPERS, SPECS
from fi_compat._core import OMIT, EntryPoint
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES, at_least, place
from support.spy import UNSET, default_value

ENTRIES: dict[str, EntryPoint] = {**SPECS, **HELPERS}


def _releases(e: EntryPoint) -> list[str]:
    """The releases fi_compat serves the entry point on (from its floor, 0.5.0)."""
    return [
        r
        for r, v in snapshots.load(e)["releases"].items()
        if v is not None and at_least(place(r), e.since)
    ]


CELLS = [(name, r) for name, e in ENTRIES.items() for r in _releases(e)]


def test_every_release_is_covered() -> None:
    assert KNOWN_RELEASES[0] == "0.2.0.post1" and len(KNOWN_RELEASES) == 74
    for name, e in ENTRIES.items():
        rel = _releases(e)
        assert rel[0] == e.since and rel[-1] == "0.7.4", name
        # once present, present in every later release (no entry point was dropped)
        assert rel == list(KNOWN_RELEASES[KNOWN_RELEASES.index(e.since) :]), name
        older = [r for r, v in snapshots.load(e)["releases"].items() if v and r not in rel]
        assert e.floor == "0.5.0" and all(not at_least(place(r), "0.5.0") for r in older)
    assert len(CELLS) == 545


def _meaning(entry: EntryPoint, name: str, value: Any, release: str, renum: str | None) -> Any:
    """A default by meaning: enum defaults as member names, FlashInfer's _UNSET as OMIT."""
    if value is UNSET:
        return OMIT
    p = entry.params[name]
    if p.enum is None or value is None:
        return value
    if renum is None:
        return value
    if isinstance(value, int):
        values = getattr(enums, renum).values_in(release)
        assert values is not None
        value = next(n for n, v in values.items() if v == value)
    stable = value if isinstance(value, str) else value.name
    back = {v: k for k, v in p.enum_map.items()} if renum != p.enum else {}
    return back.get(stable, stable)


@pytest.mark.parametrize(("name", "release"), CELLS)
def test_adapter_matches_the_release_signature(name: str, release: str) -> None:
    entry = ENTRIES[name]
    params = snapshots.params(entry, release)
    assert params is not None
    named = [p for p in params if p[1] in ("po", "pk", "ko")]
    a = entry.select(Distribution("flashinfer-python", release, "<test>", ""))
    # exactly the release's parameters are forwarded, under the release's names
    assert sorted(a.spelling[n] for n in a.present) == sorted(p[0] for p in named)
    assert all(p[1] in ("pk", "ko") for p in named)  # every one can be passed by keyword
    by_release = {a.spelling[n]: n for n in a.present}
    # FlashInfer only ever inserted parameters (never reordered them): each release's
    # positional order is a subsequence of fi_compat's frozen order, with the removed
    # tile_tokens_dim and the renamed gated_act_type keyword-only here
    pos = [by_release[p[0]] for p in named if p[1] == "pk"]
    moved = {n for n in pos if n in ("tile_tokens_dim", "activation_type")}
    moved = {n for n in moved if entry.params[n].keyword_only}
    order = [n for n in entry.order if n not in moved]
    it = iter(order)
    assert all(n in it for n in pos if n not in moved), (name, release)
    # ... and the stable positional parameters hold the same slots in this release
    stable_pos = [n for n in entry.order if not entry.params[n].keyword_only]
    assert pos[: len(stable_pos)] == stable_pos[: len(pos)], (name, release)
    for rname, kind, default, _ in named:
        n = by_release[rname]
        p = entry.params[n]
        if kind == "ko":
            assert p.keyword_only, (name, release, n)
        normalized = {o for nm in entry.normalizers for o in nm.out}
        if p.explicit or (n in normalized and n == "use_fused_finalize"):
            continue  # forwarded explicitly / resolved per release (documented)
        renum = a.enums.get(n, (None, None))[1]
        want = _meaning(entry, n, p.default, release, p.enum)
        got = default_value(default, release) if default is not None else p.default
        assert _meaning(entry, n, got, release, renum) == want, (name, release, n)


@pytest.mark.parametrize("name", list(ENTRIES))
def test_param_since_matches_first_release_having_it(name: str) -> None:
    entry = ENTRIES[name]
    rels = _releases(entry)
    for n, p in entry.params.items():
        if p.own:
            continue
        spelled = {p.name, *(s[1] for s in p.spelled)}
        having = [r for r in rels if spelled & {q[0] for q in snapshots.params(entry, r) or []}]
        assert having, (name, n)
        assert (p.since or entry.since) == having[0], (name, n)
        if p.until:
            assert (
                p.until not in having
                and having[-1] == KNOWN_RELEASES[KNOWN_RELEASES.index(p.until) - 1]
            ), (name, n)


@pytest.mark.parametrize("name", list(ENTRIES))
def test_stable_order_is_the_newest_plus_removed_keyword_only(name: str) -> None:
    entry = ENTRIES[name]
    newest = [q[0] for q in snapshots.params(entry, "0.7.4") or []]
    own = [n for n in entry.order if n not in newest]
    assert [n for n in entry.order if n in newest] == newest
    assert all(entry.params[n].keyword_only for n in own), own
    union = {q[0] for r in _releases(entry) for q in snapshots.params(entry, r) or []}
    spelled = {s[1] for p in entry.params.values() for s in p.spelled}
    assert union - spelled <= set(entry.order) | spelled


def test_a_release_below_the_moe_floor_is_refused_saying_why() -> None:
    from fi_compat import errors
    from fi_compat._core import resolve

    a = ENTRIES["cutlass_fused_moe"].select(Distribution("flashinfer-python", "0.4.1", "<t>", ""))
    err = resolve.problem_error(a)
    assert isinstance(err, errors.UnsupportedFlashInferVersionError)
    assert "fi_compat serves it from flashinfer-python 0.5.0 on" in str(err)
