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

It also holds the positional rule of every facade (:func:`positional_rule`: how many
stable parameters mean the same at their slot in every release).  Signatures themselves
(positional order, defaults) are read lazily from the JSON snapshots where a cold path
needs them ("written for release X" binding).
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


def stem(entry: EntryPoint) -> str:
    """The snapshot stem of an entry point or re-export (its ``snapshot`` where it names
    one: a class's constructor recorded as ``<Class>.__init__``)."""
    return getattr(entry, "snapshot", None) or key(entry.module, entry.attr)


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

    k = stem(entry)
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
    entry.until = removed.get(stem(entry))
    since, _ = _facts_of(entry)
    entry.older_unserved = since != _facts.FACTS[stem(entry)][0]
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
        if path.stem.startswith("tllm_enums."):
            continue
        if data.get("kind") == "enum":
            # an enum's members are no parameters: only its first release (what a
            # re-export of it reads), where its releases have no gaps
            try:
                first, _ = compute(data)
            except ValueError:
                continue
            lines += [
                f"    {_lit(path.stem)}: (",
                f"        {_lit(first)},",
                "        {},",
                "    ),",
            ]
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
        if not params:  # a class snapshot (where it exists), as ruff format writes it
            lines.append("        {},")
        else:
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
    lines.append(
        "# the positional rule: (stable positional parameters, why the next is keyword-only)"
    )
    lines.append("POSITIONAL: dict[str, tuple[int, str | None]] = {")
    if positional:
        known = _positional_all()
    else:
        from . import _facts

        known = dict(getattr(_facts, "POSITIONAL", {}))
    for k, (n, why) in sorted(known.items()):
        line = f"    {_lit(k)}: {_lit((n, why))},"
        if len(line) <= 100:
            lines.append(line)
        else:  # as ruff format splits it (the reason may stay longer than a line)
            lines += [f"    {_lit(k)}: (", f"        {n},", f"        {_lit(why)},", "    ),"]
    lines.append("}")
    lines += ["", *_slot_lines(snap)]
    return "\n".join(lines) + "\n"


def _slot_lines(snap: Any) -> list[str]:
    """``SLOTS``: per snapshot, its releases' positional parameters (name, default as a
    Python value; ``...`` where the release has none or it is no literal), unique tuples
    once, and per known release the index of its tuple (-1: absent).  What the generated
    call reads to forward positionally (:func:`release_slots`), without reading JSON at
    run time."""
    import ast
    import json

    from ..registry import KNOWN_RELEASES

    out = [
        "# positional parameters per release: (unique slot tuples, index per known release)",
        "SLOTS: dict[str, tuple[tuple[tuple[tuple[str, object], ...], ...], tuple[int, ...]]] = {",
    ]
    for path in sorted(snap.glob("*.json")):
        data = json.loads(path.read_text())
        if data.get("kind") == "enum" or path.stem.startswith("tllm_enums."):
            continue
        uniq: list[tuple[tuple[str, object], ...]] = []
        index = []
        for release in KNOWN_RELEASES:
            rec = data["releases"].get(release)
            if rec is None:
                index.append(-1)
                continue
            slots = []
            for q in data["signatures"][rec["signature"]]:
                if q[1] not in ("po", "pk"):
                    break
                try:
                    value = ast.literal_eval(q[2]) if q[2] is not None else ...
                except (ValueError, SyntaxError):
                    value = ...
                slots.append((q[0], value))
            t = tuple(slots)
            if t not in uniq:
                uniq.append(t)
            index.append(uniq.index(t))
        row = f"    {path.stem!r}: ({tuple(uniq)!r}, {tuple(index)!r}),"
        out.append(row.replace("Ellipsis", "..."))
    out.append("}")
    return out


def release_slots(entry: EntryPoint, release: str) -> tuple[tuple[str, object], ...] | None:
    """``release``'s positional parameters of ``entry``, in order: (name as the release
    spells it, its default as a Python value, ``...`` for none or no literal); None where
    the snapshots do not know the release's signature."""
    from ..registry import KNOWN_RELEASES
    from ._facts import SLOTS

    row = SLOTS.get(stem(entry))
    if row is None or release not in KNOWN_RELEASES:
        return None
    sigs, index = row
    i = index[KNOWN_RELEASES.index(release)]
    return None if i < 0 else tuple(sigs[i])


def unlisted(entry: EntryPoint) -> list[str]:
    """What a call of ``entry`` can pass only through the stub's ``**kwargs``: the
    parameters of the releases it serves that have no stable name (neither a stable
    parameter nor its older spelling), and ``"**kwargs"`` where such a release takes
    ``**kwargs`` itself (cold: reads the snapshots).  Empty: the stable signature is
    complete, and the typed one (``tools/stubs.py``) has no ``**kwargs``."""
    from ..registry import KNOWN_RELEASES

    _first, params = _facts_of(entry)
    named = {n for p in entry.params.values() for n in (p.name, *(s[1] for s in p.spelled))}
    out = sorted(n for n in params if n not in named and n != entry.receiver)
    hi = None if entry.until is None else KNOWN_RELEASES.index(entry.until)
    for release in KNOWN_RELEASES[KNOWN_RELEASES.index(entry.since) : hi]:
        if any(q[1] == "vk" for q in signature(entry, release) or []):
            return [*out, "**kwargs"]
    return out


def _positional_all() -> dict[str, tuple[int, str | None]]:
    """:func:`positional_rule` of every registered entry point (stubs bound)."""
    from .._facades import entry_points

    return {e.dotted: positional_rule(e) for e in entry_points()}


def signature(entry: EntryPoint, release: str) -> list[list[Any]] | None:
    """``[[name, kind, default source, annotation], ...]`` of ``release`` (JSON, cold)."""
    from .. import _snapshot_io as snapshots

    return snapshots.params(entry, release)


def positional(entry: EntryPoint) -> tuple[int, str | None]:
    """:func:`positional_rule`, precomputed in :mod:`._facts` (keyed per facade: two
    facades may serve one function from different floors), else from the snapshots."""
    from ._facts import POSITIONAL

    k = entry.dotted
    return POSITIONAL[k] if k in POSITIONAL else positional_rule(entry)


def _positional_names(entry: EntryPoint, release: str) -> list[str]:
    """Release ``release``'s positional parameters, by stable name (older spellings
    mapped; a name the stable signature lacks stays the release's own)."""
    from ..registry import place

    pl = place(release)
    back = {p.spelling(pl)[0]: n for n, p in entry.params.items() if p.present_in(pl)}
    pos = [back.get(q[0], q[0]) for q in signature(entry, release) or [] if q[1] in ("po", "pk")]
    if entry.receiver is not None and pos[:1] == [entry.receiver]:
        pos = pos[1:]
    return pos


def positional_rule(entry: EntryPoint) -> tuple[int, str | None]:
    """The positional rule, from every release of the entry point's range: the stable
    positional parameters are the longest prefix of the stable order whose slots mean
    the same in every release that has them (renames count as the same meaning), and
    no longer than the newest release's positional parameters.  Returns (their number,
    what slot N holds per release range when releases disagree there, else ``None``)."""
    from ..registry import KNOWN_RELEASES

    hi = None if entry.until is None else KNOWN_RELEASES.index(entry.until)
    releases = KNOWN_RELEASES[KNOWN_RELEASES.index(entry.since) : hi]
    order = list(entry.order)
    by_release = {r: _positional_names(entry, r) for r in releases}
    newest = n = len(by_release[releases[-1]])
    for pos in by_release.values():
        n = next((i for i, name in enumerate(pos[:n]) if name != order[i]), n)
    if n == newest:
        return n, None  # as far as the newest release takes positional arguments
    runs: list[list[Any]] = []  # [name at slot n, first release, last release]
    for r, pos in by_release.items():
        name = pos[n] if n < len(pos) else None
        if runs and runs[-1][0] == name:
            runs[-1][2] = r
        else:
            runs.append([name, r, r])
    parts = [
        f"{run[0]} in {run[1]}" + (f"-{run[2]}" if run[2] != run[1] else "")
        for run in runs
        if run[0] is not None
    ]
    return n, f"slot {n} is " + ", ".join(parts)
