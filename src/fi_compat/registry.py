"""Known FlashInfer releases, version ranges, and the adapter-selection policy.

Ordering is established once, with :mod:`packaging.version`: ``KNOWN_RELEASES`` is every
``flashinfer-python`` wheel release fi_compat has read, in PEP 440 order (a unit test
re-sorts it with ``packaging.version.Version`` and compares it with the signature
snapshots).  A detected version that is a known release is placed by an exact table
lookup, so importing a facade never imports ``packaging`` (≈20 ms on a small machine);
every other version (pre-releases, dev builds, unknown or newer releases) is placed by
``packaging.version`` comparisons.  No version is ever compared as a string.

Selection policy (each rule has a test):

* the entry point's first release is its floor; below it -> ``UnsupportedFlashInferVersionError``
  naming the supported range (at call time);
* FlashInfer not installed -> ``FlashInferNotInstalledError`` with the install command
  (at call time, never at import);
* newer than the newest known release -> the newest adapter and a once-only
  ``UntestedFlashInferVersionWarning``; with ``FI_COMPAT_STRICT=1`` the call raises
  ``UntestedFlashInferVersionError`` instead;
* a pre-release or dev build (``0.7.0rc1``, ``0.7.5.dev3``) is treated as the release it
  precedes (its ``base_version``) and warned about once, as it is untested;
* a local tag (``0.6.18+cu130``) is ignored for selection.
"""

from __future__ import annotations

__all__ = [
    "KNOWN_RELEASES",
    "STRICT_ENV",
    "Placement",
    "VersionRange",
    "place",
]

STRICT_ENV = "FI_COMPAT_STRICT"

# Every flashinfer-python release on PyPI from 0.2.0.post1 (the first under that name)
# to the newest fi_compat knows, in PEP 440 order: source distributions only before
# 0.5.0, wheels from 0.5.0.  Adding a release: append it here, run tools/snapshot.py
# --merge, and add table rows where its API changed.
KNOWN_RELEASES: tuple[str, ...] = (
    "0.2.0.post1",
    "0.2.0.post2",
    "0.2.1",
    "0.2.1.post1",
    "0.2.1.post2",
    "0.2.2",
    "0.2.2.post1",
    "0.2.3",
    "0.2.4",
    "0.2.5",
    "0.2.6",
    "0.2.6.post1",
    "0.2.7",
    "0.2.7.post1",
    "0.2.8",
    "0.2.9",
    "0.2.10",
    "0.2.11",
    "0.2.11.post1",
    "0.2.11.post2",
    "0.2.11.post3",
    "0.2.12",
    "0.2.13",
    "0.2.14",
    "0.2.14.post1",
    "0.3.0",
    "0.3.0.post1",
    "0.3.1",
    "0.3.1.post1",
    "0.4.0",
    "0.4.1",
    "0.5.0",
    "0.5.1",
    "0.5.2",
    "0.5.3",
    "0.6.0",
    "0.6.1",
    "0.6.2",
    "0.6.3",
    "0.6.4",
    "0.6.5",
    "0.6.6",
    "0.6.7",
    "0.6.7.post1",
    "0.6.7.post2",
    "0.6.7.post3",
    "0.6.8",
    "0.6.8.post1",
    "0.6.9",
    "0.6.10",
    "0.6.10.post1",
    "0.6.11",
    "0.6.11.post1",
    "0.6.11.post2",
    "0.6.11.post3",
    "0.6.12",
    "0.6.13",
    "0.6.14",
    "0.6.15",
    "0.6.15.post1",
    "0.6.16",
    "0.6.16.post1",
    "0.6.16.post2",
    "0.6.16.post3",
    "0.6.16.post4",
    "0.6.17",
    "0.6.18",
    "0.6.18.post1",
    "0.7.0",
    "0.7.0.post1",
    "0.7.1",
    "0.7.2",
    "0.7.2.post1",
    "0.7.4",
)
NEWEST = KNOWN_RELEASES[-1]
_INDEX = {v: i for i, v in enumerate(KNOWN_RELEASES)}


def strict() -> bool:
    """True when ``FI_COMPAT_STRICT`` is on (``1``/``true``/``yes``/``on``, any case;
    :func:`fi_compat._switches.flag`)."""
    from ._switches import flag

    return flag(STRICT_ENV, False)


class Placement:
    """Where a version string sits among the known releases.

    ``pos`` is ``2 * index`` for a known release and odd between two known releases, so
    ranges compare plain integers.  ``kind`` is one of ``known``, ``prerelease``
    (placed at its base release), ``between`` (an unknown release between two known
    ones), ``newer``, ``older``, ``invalid``.
    """

    __slots__ = ("version", "pos", "kind", "treated_as")

    def __init__(self, version: str, pos: int, kind: str, treated_as: str | None) -> None:
        self.version = version
        self.pos = pos
        self.kind = kind
        self.treated_as = treated_as

    def __repr__(self) -> str:
        return f"Placement({self.version!r}, pos={self.pos}, kind={self.kind!r})"


def _index(release: str) -> int:
    try:
        return _INDEX[release]
    except KeyError:
        raise ValueError(f"{release!r} is not in fi_compat.registry.KNOWN_RELEASES") from None


def place(version: str) -> Placement:
    """Place a version string (local tag ignored) among ``KNOWN_RELEASES``."""
    public = version.partition("+")[0].strip()
    i = _INDEX.get(public)
    if i is not None:  # fast path: a known release, no parsing needed
        return Placement(version, 2 * i, "known", public)
    from packaging.version import InvalidVersion, Version

    try:
        v = Version(public)
    except InvalidVersion:
        return Placement(version, -1, "invalid", None)
    if v.is_prerelease or v.is_devrelease:
        base = v.base_version
        j = _INDEX.get(base)
        if j is not None:
            return Placement(version, 2 * j, "prerelease", base)
        v = Version(base)
    known = [Version(k) for k in KNOWN_RELEASES]
    if v > known[-1]:
        return Placement(version, 2 * len(known), "newer", NEWEST)
    if v < known[0]:
        return Placement(version, -1, "older", None)
    for j, k in enumerate(known):
        if k == v:  # e.g. "0.6.8.0" == 0.6.8
            return Placement(version, 2 * j, "known", KNOWN_RELEASES[j])
        if k > v:
            return Placement(version, 2 * j - 1, "between", KNOWN_RELEASES[j - 1])
    raise AssertionError("unreachable")  # pragma: no cover


class VersionRange:
    """Half-open range ``[lo, hi)`` of releases; ``hi=None`` means open-ended.

    Both ends must be known releases; ``contains`` takes a :class:`Placement`.
    """

    __slots__ = ("lo", "hi", "_lo", "_hi")

    def __init__(self, lo: str, hi: str | None = None) -> None:
        self.lo = lo
        self.hi = hi
        self._lo = 2 * _index(lo)
        self._hi = 2 * _index(hi) if hi is not None else None
        if self._hi is not None and self._hi <= self._lo:
            raise ValueError(f"empty range [{lo}, {hi})")

    def contains(self, p: Placement) -> bool:
        return p.pos >= self._lo and (self._hi is None or p.pos < self._hi)

    def releases(self) -> tuple[str, ...]:
        """The known releases inside the range."""
        hi = len(KNOWN_RELEASES) if self._hi is None else self._hi // 2
        return KNOWN_RELEASES[self._lo // 2 : hi]

    def overlaps(self, other: VersionRange) -> bool:
        a_hi = self._hi if self._hi is not None else 10**9
        b_hi = other._hi if other._hi is not None else 10**9
        return self._lo < b_hi and other._lo < a_hi

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VersionRange) and (self.lo, self.hi) == (other.lo, other.hi)

    def __hash__(self) -> int:
        return hash((self.lo, self.hi))

    def __str__(self) -> str:
        rel = self.releases()
        if self.hi is None:
            return f"{rel[0]}+" if len(rel) == 1 else f"{rel[0]}-{rel[-1]}+"
        return rel[0] if len(rel) == 1 else f"{rel[0]}-{rel[-1]}"

    def __repr__(self) -> str:
        return f"VersionRange({self.lo!r}, {self.hi!r})"


def at_least(p: Placement, release: str) -> bool:
    """True when placement ``p`` is ``release`` or later.

    ``release`` is normally a known (wheel) release, compared by table position; an older
    sdist-only release (``0.4.0``, ``0.3.1``) is compared with ``packaging.version``.
    """
    i = _INDEX.get(release)
    if i is not None:
        return p.pos >= 2 * i
    if p.kind == "invalid":
        return False
    from packaging.version import Version

    mine = Version(p.treated_as or p.version.partition("+")[0])
    return Version(mine.base_version if p.kind == "prerelease" else str(mine)) >= Version(release)
