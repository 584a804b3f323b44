"""Release ordering, placement of odd versions, and disjoint adapter ranges."""

from __future__ import annotations

import pytest
from packaging.version import Version

from fi_compat import _snapshot_io as snapshots
from fi_compat._adapters.gdn_prefill import SPEC
from fi_compat.registry import KNOWN_RELEASES, VersionRange, place


def test_known_releases_are_in_pep440_order_and_unique() -> None:
    assert list(KNOWN_RELEASES) == sorted(KNOWN_RELEASES, key=Version)
    assert len(set(map(Version, KNOWN_RELEASES))) == len(KNOWN_RELEASES)


def test_known_releases_match_the_snapshot_release_list() -> None:
    assert list(snapshots.load(SPEC)["releases"]) == list(KNOWN_RELEASES)


@pytest.mark.parametrize(
    ("version", "kind", "treated_as"),
    [
        ("0.6.7", "known", "0.6.7"),
        ("0.6.18+cu130", "known", "0.6.18"),  # local tag ignored
        ("0.7.0rc1", "prerelease", "0.7.0"),  # treated as the release it precedes
        ("0.6.8.dev3", "prerelease", "0.6.8"),
        ("0.7.3", "between", "0.7.2.post1"),  # never released: placed between neighbours
        ("0.7.5", "newer", "0.7.4"),
        ("0.8.0.dev1", "newer", "0.7.4"),
        ("0.2.10", "known", "0.2.10"),  # the version vLLM once rejected by string comparison
        ("0.1.6", "older", None),  # before flashinfer-python's first release
        ("not-a-version", "invalid", None),
        ("0.6.8.0", "known", "0.6.8"),
    ],
)
def test_place(version: str, kind: str, treated_as: str | None) -> None:
    p = place(version)
    assert (p.kind, p.treated_as) == (kind, treated_as)


def test_placement_orders_like_packaging() -> None:
    vs = ["0.5.3", "0.6.2", "0.6.10", "0.6.9", "0.6.8.post1", "0.7.0rc1", "0.7.0", "0.7.3"]
    by_pos = sorted(vs, key=lambda v: place(v).pos)
    by_pkg = sorted(vs, key=lambda v: Version(Version(v).base_version))
    assert [place(v).pos for v in by_pos] == [place(v).pos for v in by_pkg]
    assert place("0.6.10").pos > place("0.6.9").pos  # a string comparison gets this wrong


def test_generations_are_disjoint_and_cover_every_release_from_the_floor() -> None:
    gens = SPEC.generations()
    for i, a in enumerate(gens):
        for b in gens[i + 1 :]:
            assert not a.overlaps(b), (a, b)
    covered = [r for g in gens for r in g.releases()]
    floor = KNOWN_RELEASES.index("0.6.0")
    assert covered == list(KNOWN_RELEASES[floor:])  # 0.6.0-0.7.4, each exactly once
    assert gens[-1].hi is None  # newer releases land in the newest adapter
    assert len(covered) == 39


def test_version_range() -> None:
    r = VersionRange("0.6.8", "0.6.14")
    assert r.contains(place("0.6.8")) and r.contains(place("0.6.13"))
    assert not r.contains(place("0.6.14")) and not r.contains(place("0.6.7.post3"))
    assert str(r) == "0.6.8-0.6.13"
    with pytest.raises(ValueError):
        VersionRange("0.6.9", "0.6.8")
    with pytest.raises(ValueError):
        VersionRange("0.6.99")
