"""Per-release facts of every entry point, derived from the committed signature snapshots.

``_snapshots/<module>.<attr>.json`` (written by ``tools/snapshot.py`` from the PyPI
wheels) holds every release's signature.  From them ``render()`` derives, per entry
point, its first release and, per FlashInfer parameter name, the release ranges that
have it; the result is the generated module :mod:`fi_compat._core._facts` (a dict
literal: importing it costs no JSON parsing).  :func:`apply` turns those ranges into the
``since`` / ``until`` / ``gaps`` of each :class:`~fi_compat._core.table.Param` (a
parameter's older spellings count as the parameter), so no table types a release by
hand.  ``tools/snapshot.py --facts`` regenerates the module; a unit test fails when it
is stale.

Signatures themselves (positional order, defaults) are read lazily from the JSON
snapshots where a cold path needs them: "written for release X" binding and the
``positional_from`` line of the docs.
"""

from __future__ import annotations

from itertools import pairwise

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .table import EntryPoint

Ranges = tuple[tuple[str, "str | None"], ...]


def key(module: str, attr: str) -> str:
    """The snapshot stem of ``module.attr`` (``gdn_prefill.chunk_gated_delta_rule``)."""
    return f"{module.removeprefix('flashinfer.')}.{attr}"


def _merge(ranges: list[tuple[str, str | None]]) -> Ranges:
    from ..registry import KNOWN_RELEASES

    idx = {r: i for i, r in enumerate(KNOWN_RELEASES)}
    end = len(KNOWN_RELEASES)
    spans = sorted((idx[lo], end if hi is None else idx[hi]) for lo, hi in ranges)
    out: list[list[int]] = []
    for lo, hi in spans:
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((KNOWN_RELEASES[lo], None if hi == end else KNOWN_RELEASES[hi]) for lo, hi in out)


def _facts_of(entry: EntryPoint) -> tuple[str, dict[str, Ranges]]:
    from ._facts import FACTS

    k = key(entry.module, entry.attr)
    try:
        first, params = FACTS[k]
    except KeyError:
        raise ValueError(
            f"{entry.name}: no snapshot facts for {k!r}; run tools/snapshot.py "
            f"{entry.module}:{entry.attr} --facts"
        ) from None
    if entry.floor is not None:
        return _from_floor(first, params, entry.floor)
    return first, params


def first(entry: EntryPoint) -> str:
    """The entry point's first release (set ``until`` and ``older_unserved`` too)."""
    from . import _facts

    removed: dict[str, str] = getattr(_facts, "REMOVED", {})  # absent while regenerating
    entry.until = removed.get(key(entry.module, entry.attr))
    since, _ = _facts_of(entry)
    entry.older_unserved = since != _facts.FACTS[key(entry.module, entry.attr)][0]
    return since


def apply(entry: EntryPoint) -> None:
    """Fill ``since``/``until``/``gaps`` of ``entry``'s parameters (stub bound)."""
    first, params = _facts_of(entry)
    for p in entry.params.values():
        if p.own:
            continue
        spans = [r for n in (p.name, *(s[1] for s in p.spelled)) for r in params.get(n, ())]
        if not spans:
            raise ValueError(f"{entry.name}: {p.name} is in no release's signature (own=True?)")
        merged = _merge(spans)
        p.since = None if merged[0][0] == first else merged[0][0]
        p.until = merged[-1][1]
        p.gaps = tuple((a[1], b[0]) for a, b in pairwise(merged))  # type: ignore[misc]


def _from_floor(first: str, params: dict[str, Ranges], floor: str) -> tuple[str, dict[str, Ranges]]:
    """The facts from release ``floor`` on: earlier ranges cut off at it."""
    from ..registry import KNOWN_RELEASES

    idx = {v: i for i, v in enumerate(KNOWN_RELEASES)}
    if idx[floor] <= idx[first]:
        return first, params
    out: dict[str, Ranges] = {}
    for name, ranges in params.items():
        kept = tuple(
            (floor if idx[lo] < idx[floor] else lo, hi)
            for lo, hi in ranges
            if hi is None or idx[hi] > idx[floor]
        )
        if kept:
            out[name] = kept
    return floor, out


def compute(data: dict[str, Any]) -> tuple[str, dict[str, Ranges]]:
    """(first release, {FlashInfer parameter name: release ranges}) of one snapshot."""
    from ..registry import KNOWN_RELEASES

    rel = data["releases"]
    having: dict[str, list[str]] = {}
    present = [r for r in KNOWN_RELEASES if rel.get(r) is not None]
    for r in present:
        for name, kind, _default, _ann in data["signatures"][rel[r]["signature"]]:
            if kind not in ("va", "vk"):
                having.setdefault(name, []).append(r)
    lo = KNOWN_RELEASES.index(present[0])
    if present != list(KNOWN_RELEASES[lo : lo + len(present)]):
        raise ValueError(f"{data['entry']}: the entry point has gaps; not supported")
    nxt = {
        r: (KNOWN_RELEASES[i + 1] if i + 1 < len(KNOWN_RELEASES) else None)
        for i, r in enumerate(KNOWN_RELEASES)
    }
    out: dict[str, Ranges] = {}
    for name, rs in having.items():
        out[name] = _merge([(r, nxt[r]) for r in rs])
    return present[0], out


def _lit(x: object) -> str:
    """A literal as ruff format writes it (double quotes, trailing comma in 1-tuples)."""
    if isinstance(x, tuple):
        inner = ", ".join(_lit(v) for v in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    if isinstance(x, str):
        return '"' + x + '"'
    return repr(x)


def render(positional: bool = True) -> str:
    """The source of :mod:`fi_compat._core._facts`, from every snapshot on disk.
    ``positional=False`` keeps the current positional facts: a first pass, needed when
    a new entry point's table cannot be built before its snapshot facts exist."""
    import json
    from pathlib import Path

    from ..registry import KNOWN_RELEASES

    snap = Path(__file__).resolve().parent.parent / "_snapshots"
    lines = [
        '"""Per-release facts derived from ``_snapshots/*.json`` by ``tools/snapshot.py',
        '--facts`` (first release; release ranges per parameter).  Generated: do not edit."""',
        "",
        "FACTS: dict[str, tuple[str, dict[str, tuple[tuple[str, str | None], ...]]]] = {",
    ]
    removed: dict[str, str] = {}
    for path in sorted(snap.glob("*.json")):
        data = json.loads(path.read_text())
        if data.get("kind") == "enum" or path.stem.startswith("tllm_enums."):
            continue
        if data["releases"].get(KNOWN_RELEASES[-1]) is None:
            last = max(
                (r for r, v in data["releases"].items() if v is not None),
                key=KNOWN_RELEASES.index,
            )
            removed[path.stem] = KNOWN_RELEASES[KNOWN_RELEASES.index(last) + 1]
        first, params = compute(data)
        lines.append(f"    {_lit(path.stem)}: (")
        lines.append(f"        {_lit(first)},")
        lines.append("        {")
        for name, ranges in params.items():
            lines.append(f"            {_lit(name)}: {_lit(ranges)},")
        lines.append("        },")
        lines.append("    ),")
    lines.append("}")
    lines.append("")
    lines.append("# entry points a release removed: the first release without it")
    lines.append("REMOVED: dict[str, str] = {")
    for k, v in sorted(removed.items()):
        lines.append(f"    {_lit(k)}: {_lit(v)},")
    lines.append("}")
    lines.append("")
    lines.append("# first release from which positional calls mean the same as the stable order")
    lines.append("POSITIONAL_FROM: dict[str, str | None] = {")
    if positional:
        known = _positional_all()
    else:
        from . import _facts

        known = dict(getattr(_facts, "POSITIONAL_FROM", {}))
    for k, since in sorted(known.items()):
        lines.append(f"    {_lit(k)}: {_lit(since)},")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _positional_all() -> dict[str, str | None]:
    """:func:`positional_from` of every registered entry point (stubs bound)."""
    import importlib

    from ..facades import FACADES, entry_points

    for name in FACADES:  # binds every stub (positional order, keyword-only split)
        importlib.import_module(f"fi_compat.{name}")
    return {e.dotted: _positional_from(e) for e in entry_points()}


def signature(entry: EntryPoint, release: str) -> list[list[Any]] | None:
    """``[[name, kind, default source, annotation], ...]`` of ``release`` (JSON, cold)."""
    from .. import snapshots

    return snapshots.params(entry, release)


def positional_from(entry: EntryPoint) -> str | None:
    """First release from which every release's positional order is a prefix of the
    stable positional order (by meaning: older spellings mapped to stable names);
    precomputed in :mod:`._facts`, else read from the JSON snapshots."""
    from ._facts import POSITIONAL_FROM

    k = entry.dotted  # per facade: two facades may serve one function from different floors
    return POSITIONAL_FROM[k] if k in POSITIONAL_FROM else _positional_from(entry)


def _positional_from(entry: EntryPoint) -> str | None:
    from ..registry import KNOWN_RELEASES, place

    stable = [n for n in entry.order if not entry.params[n].keyword_only]
    ok_from: str | None = None
    hi = None if entry.until is None else KNOWN_RELEASES.index(entry.until)
    for r in KNOWN_RELEASES[KNOWN_RELEASES.index(entry.since) : hi]:
        sig = signature(entry, r) or []
        pl = place(r)
        back = {p.spelling(pl)[0]: n for n, p in entry.params.items() if p.present_in(pl)}
        pos = [back.get(q[0], q[0]) for q in sig if q[1] in ("po", "pk")]
        if entry.receiver is not None and pos[:1] == [entry.receiver]:
            pos = pos[1:]
        ok_from = (ok_from or r) if stable[: len(pos)] == pos else None
    return ok_from
