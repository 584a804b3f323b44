#!/usr/bin/env python3
"""Record every FlashInfer location of the names fi_compat covers, statically.

    python tools/locations.py [--render-only] [--wheels ~/.cache/fi_compat/wheels]

Two steps:

``scan`` (skipped with ``--render-only``): for every release in
``fi_compat.registry.KNOWN_RELEASES`` it reads every ``flashinfer/**/*.py`` of the wheel
(the sdist before 0.5.0; downloaded and cached as ``tools/snapshot.py`` does) with
:mod:`ast` -- nothing is imported or executed -- and works out each module's top-level
namespace as Python builds it: ``def`` / ``class``, ``A = B`` aliases (and ``A = mod.B``
of a module imported relatively), ``from .x import name [as alias]`` (relative or
``flashinfer.``-absolute), ``from .x import *`` (the target's ``__all__`` where it is a
literal, else its public names), top-level ``try`` / ``if`` bodies (not ``if
TYPE_CHECKING:``); any other binding of a name shadows it.  Every public name is
followed to the ``def`` or ``class`` it is bound to.  The result, {module: {name:
"defining_module:def_name"}}, is cached per release in ``<wheels>/../locations/``
(about 3 s a release, 74 releases ~10 minutes on two cores).

``render``: the names fi_compat covers -- every entry point's function or class name
(``EntryPoint.attr`` and its older spellings ``attr_spelled``), the re-exported
FlashInfer objects (``Reexport``), the enums of :mod:`fi_compat.enums` -- and, per
release, their definitions: the defining module the signature snapshots record
(``_snapshots/*.json``), else the entry point's module followed to the definition. Every
(module, name) of the release bound to one of those definitions is a location, private
modules (``flashinfer.mla._core``) included. Written to ``src/fi_compat/_locations.py``
(generated; never edit it): ``LOCATIONS`` {exposed name: {flashinfer module: (first
release, last release or None while the newest has it)}}, ``ALIASES`` {exposed name:
covered name} where FlashInfer spells it otherwise (``top_k_renorm_prob``),
``PROVIDERS`` {covered name: the fi_compat module whose object the top-level name gives}
(the entry point with the widest release range). A gap (a release in between lacking it)
is not recorded: the range is first to last.

After adding an entry point or a release (its snapshots made): ``python
tools/locations.py`` (scans only the releases not cached yet, then renders);
``tests/static/test_locations.py`` fails while the data is stale.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

from fi_compat.registry import KNOWN_RELEASES  # noqa: E402
from snapshot import Archive, release_archive  # noqa: E402

OUT = ROOT / "src" / "fi_compat" / "_locations.py"
SCAN_VERSION = 3  # bump when the scan's rules change (invalidates the cache)
# private FlashInfer names engines import (fi_compat serves them under a public name too):
# indexed like public ones, so FlashInfer's own spelling resolves in its module
PRIVATE_NAMES = frozenset({"_maybe_get_cached_w3_w1_permute_indices"})
ENUM_HOMES = ("flashinfer.fused_moe", "flashinfer")  # an enum without a snapshot: from here

# a binding: ("def", module, name) | ("import", module, name) | ("module", module);
# None: shadowed by something opaque
Binding = tuple[str, ...] | None


class Release:
    """The modules of one release and their namespaces, built on demand."""

    def __init__(self, archive: Archive) -> None:
        self.files: dict[str, str] = {}  # module -> path in the archive
        names = archive._zip.namelist() if archive._zip is not None else list(archive._names)
        for path in names:
            if not path.startswith("flashinfer/") or not path.endswith(".py"):
                continue
            parts = path[:-3].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if all(p.isidentifier() for p in parts):
                self.files[".".join(parts)] = path
        self.archive = archive
        self.spaces: dict[str, dict[str, Binding]] = {}
        self.alls: dict[str, list[str]] = {}  # a literal ``__all__``, by module
        self._busy: set[str] = set()

    def is_package(self, module: str) -> bool:
        return self.files.get(module, "").endswith("__init__.py")

    def namespace(self, module: str) -> dict[str, Binding]:
        if module in self.spaces:
            return self.spaces[module]
        if module in self._busy or module not in self.files:
            return {}
        self._busy.add(module)
        try:
            src = self.archive.read(self.files[module]).decode("utf-8", "replace")
            try:
                tree = ast.parse(src)
            except SyntaxError:
                ns: dict[str, Binding] = {}
            else:
                ns = {}
                self._block(module, tree.body, ns)
        finally:
            self._busy.discard(module)
        self.spaces[module] = ns
        return ns

    def _target(self, module: str, node: ast.ImportFrom) -> str | None:
        if node.level == 0:
            if node.module and node.module.split(".")[0] == "flashinfer":
                return node.module
            return None
        pkg = module if self.is_package(module) else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            pkg = pkg.rpartition(".")[0]
        return f"{pkg}.{node.module}" if node.module else pkg

    def exports(self, module: str) -> list[str]:
        """What ``from module import *`` binds."""
        ns = self.namespace(module)
        if module in self.alls:
            return self.alls[module]
        return [n for n in ns if not n.startswith("_")]

    def _block(self, module: str, body: list[ast.stmt], ns: dict[str, Binding]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                ns[node.name] = ("def", module, node.name)
            elif isinstance(node, ast.ImportFrom):
                target = self._target(module, node)
                for alias in node.names:
                    if alias.name == "*":
                        if target is not None:
                            self.namespace(target)
                            for n in self.exports(target):
                                ns[n] = ("import", target, n)
                        continue
                    bound = alias.asname or alias.name
                    if target is None:
                        ns[bound] = None
                    elif f"{target}.{alias.name}" in self.files:
                        ns[bound] = ("module", f"{target}.{alias.name}")
                    else:
                        ns[bound] = ("import", target, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    ns[alias.asname or alias.name.split(".")[0]] = None
            elif isinstance(node, ast.AnnAssign) and node.value is None:
                continue  # ``x: int`` binds nothing
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                bound: Binding = None
                if isinstance(value, ast.Name):
                    bound = ns.get(value.id)
                elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
                    mod = ns.get(value.value.id)
                    if mod is not None and mod[0] == "module":
                        bound = ("import", mod[1], value.attr)
                for t in targets:
                    if isinstance(t, ast.Name):
                        if t.id == "__all__" and isinstance(value, (ast.List, ast.Tuple)):
                            self.alls[module] = [
                                e.value
                                for e in value.elts
                                if isinstance(e, ast.Constant) and isinstance(e.value, str)
                            ]
                        ns[t.id] = bound
                    else:  # a, b = ...: shadowed; f.__doc__ = ...: binds no name
                        for sub in ast.walk(t):
                            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                                ns[sub.id] = None
            elif isinstance(node, ast.If):
                test = ast.unparse(node.test)
                if "TYPE_CHECKING" in test:
                    self._block(module, node.orelse, ns)
                    continue
                self._branches(module, [node.body, node.orelse], ns)
            elif isinstance(node, ast.Try):
                self._branches(
                    module, [node.body + node.orelse, *(h.body for h in node.handlers)], ns
                )
                self._block(module, node.finalbody, ns)
            elif isinstance(node, ast.With):
                self._block(module, node.body, ns)

    def _branches(
        self, module: str, branches: list[list[ast.stmt]], ns: dict[str, Binding]
    ) -> None:
        """The first branch's bindings win; a later branch only adds names the first
        leaves unbound (``try: from .x import f`` / ``except ImportError: f = None``)."""
        first = dict(ns)
        self._block(module, branches[0], first)
        for other in branches[1:]:
            alt = dict(ns)
            self._block(module, other, alt)
            for k, v in alt.items():
                if k not in first:
                    first[k] = v
        ns.update(first)

    def resolve(self, module: str, name: str, depth: int = 0) -> tuple[str, str] | None:
        """The (module, name) of the ``def`` / ``class`` that ``module.name`` is."""
        if depth > 12:
            return None
        b = self.namespace(module).get(name)
        if b is None:
            return None
        if b[0] == "def":
            return b[1], b[2]
        if b[0] == "import":
            return self.resolve(b[1], b[2], depth + 1)
        return None

    def index(self) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for module in sorted(self.files):
            for name in sorted(self.namespace(module)):
                if name.startswith("_") and name not in PRIVATE_NAMES:
                    continue
                hit = self.resolve(module, name)
                if hit is not None:
                    out.setdefault(module, {})[name] = f"{hit[0]}:{hit[1]}"
        return out


def scan(version: str, cache: Path) -> dict[str, dict[str, str]]:
    """The release's index, from the cache or read from its archive."""
    store = cache.parent / "locations"
    store.mkdir(parents=True, exist_ok=True)
    path = store / f"{version}.v{SCAN_VERSION}.json"
    if path.exists():
        return json.loads(path.read_text())  # type: ignore[no-any-return]
    archive = Archive(release_archive(version, cache))
    try:
        data = Release(archive).index()
    finally:
        archive.close()
    path.write_text(json.dumps(data, separators=(",", ":")))
    print(
        f"{version:14s} {sum(map(len, data.values()))} names in {len(data)} modules",
        file=sys.stderr,
    )
    return data


Sources = dict[str, list[tuple[str, str]]]  # covered name -> [(module, attribute), ...]
Defs = dict[str, dict[str, str]]  # release -> {"module:def": covered name}


def covered() -> tuple[Sources, Defs, dict[str, str]]:
    """What fi_compat covers: {covered name: [(flashinfer module, attribute spelling),
    ...]} to look it up from; {release: {"defining_module:def": covered name}}, read
    from the signature snapshots; {covered name: fi_compat module providing its object}."""
    from fi_compat import enums
    from fi_compat._facades import entry_points, reexports
    from fi_compat._snapshot_io import DIR, load
    from fi_compat.registry import KNOWN_RELEASES as releases

    sources: Sources = {}
    defs: Defs = {}
    providers: dict[str, str] = {}
    widest: dict[str, int] = {}

    def add(name: str, snap: dict[str, Any] | None, modules: list[str], attrs: list[str]) -> None:
        where = sources.setdefault(name, [])
        if snap is not None:
            modules = modules + snap["entry"].partition(":")[0].split("|")
            for release, rec in snap["releases"].items():
                if rec is not None:
                    attr = rec.get("defined_as") or rec.get("attr", name)
                    defs.setdefault(release, {}).setdefault(f"{rec['module']}:{attr}", name)
        for m in modules:
            for a in attrs:
                if (m, a) not in where:
                    where.append((m, a))

    for e in entry_points():
        name = e.attr.split(".")[0]
        olds = [old for _since, old in e.attr_spelled if "." not in e.attr]
        try:
            snap = load(e)
        except FileNotFoundError:
            snap = None
        add(name, snap, [e.module], [name, *olds])
        floor = e.floor or releases[0]
        first = releases.index(floor) if floor in releases else 0
        if name not in widest or first < widest[name]:
            widest[name], providers[name] = first, e.facade.removeprefix("fi_compat.")
    for r in reexports():  # FlashInfer's objects handed out as they are
        snap = json.loads((DIR / f"{r.snapshot}.json").read_text())
        add(r.name, snap, [r.module], [r.attr])
        providers[r.name] = r.facade.removeprefix("fi_compat.")
    for n in enums.__all__:
        if n != "StableEnum":
            cls = getattr(enums, n)
            path = DIR / f"{cls._snapshot_}.json"
            snap = json.loads(path.read_text()) if path.exists() else None
            homes = [m for m in cls._flashinfer_modules_ if m not in ENUM_HOMES]
            add(n, snap, [*homes, *ENUM_HOMES], [n])
            providers[n] = "enums"
    return sources, defs, providers


def q(s: str) -> str:
    return json.dumps(s)


def release_locations(
    version: str, cache: Path, sources: Sources, snapshot_defs: Defs
) -> list[tuple[str, str, str]]:
    """(exposed name, flashinfer module, covered name) of every location in ``version``:
    every (module, name) bound to the definition the snapshots record for the release,
    or, where they have none, to what ``sources`` find."""
    idx = scan(version, cache)
    defs = dict(snapshot_defs.get(version, {}))  # "module:def" -> covered name
    have = set(defs.values())
    for name, where in sources.items():
        if name in have:
            continue
        for module, attr in where:
            hit = idx.get(module, {}).get(attr)
            if hit is not None and hit not in defs:
                defs[hit] = name
    out = []
    for module, names in idx.items():
        for exposed, hit in names.items():
            name = defs.get(hit)
            if name is not None:
                out.append((exposed, module, name))
    return sorted(out)


def render(cache: Path, releases: tuple[str, ...] = KNOWN_RELEASES) -> str:
    sources, snapshot_defs, providers = covered()
    spans: dict[str, dict[str, list[int]]] = {}
    aliases: dict[str, str] = {}
    for i, version in enumerate(releases):
        for exposed, module, name in release_locations(version, cache, sources, snapshot_defs):
            if exposed != name and aliases.setdefault(exposed, name) != name:
                raise SystemExit(f"{exposed} names both {aliases[exposed]} and {name}")
            span = spans.setdefault(exposed, {}).setdefault(module, [i, i])
            span[1] = i
    last = len(releases) - 1
    lines = [
        "# ruff: noqa: E501 (FlashInfer's module names)",
        '"""Where FlashInfer exposes each name fi_compat covers (generated by',
        "``tools/locations.py`` from a static read of every release; do not edit).",
        "",
        "``LOCATIONS``: {exposed name: {flashinfer module: (first release, last release or",
        "None while the newest known release has it)}}; ``ALIASES``: {exposed name: covered",
        "name} where FlashInfer spells it otherwise; ``PROVIDERS``: {covered name: fi_compat",
        "module whose object a location gives where no enclosing facade module has the",
        'name (the widest release range)}; see fi_compat._locate."""',
        "",
        "from __future__ import annotations",
        "",
        "LOCATIONS: dict[str, dict[str, tuple[str, str | None]]] = {",
    ]
    for exposed in sorted(spans):
        lines.append(f"    {q(exposed)}: {{")
        for module in sorted(spans[exposed]):
            a, b = spans[exposed][module]
            end = "None" if b == last else q(releases[b])
            line = f"        {q(module)}: ({q(releases[a])}, {end}),"
            if len(line) > 100:  # as ruff format splits it
                pad = "\n            "
                line = f"        {q(module)}: ({pad}{q(releases[a])},{pad}{end},\n        ),"
            lines.append(line)
        lines.append("    },")
    lines.append("}")
    lines.append("ALIASES: dict[str, str] = {")
    lines += [f"    {q(k)}: {q(v)}," for k, v in sorted(aliases.items())]
    lines.append("}")
    lines.append("PROVIDERS: dict[str, str] = {")
    lines += [f"    {q(k)}: {q(v)}," for k, v in sorted(providers.items())]
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    default_cache = os.environ.get("FI_COMPAT_WHEEL_CACHE", "~/.cache/fi_compat/wheels")
    ap.add_argument("--wheels", default=default_cache, help="wheel cache directory")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument(
        "--render-only",
        action="store_true",
        help="only re-render from the cached scans (fails on a release not scanned yet)",
    )
    args = ap.parse_args(argv)
    cache = Path(args.wheels).expanduser()
    if args.render_only:
        store = cache.parent / "locations"
        missing = [v for v in KNOWN_RELEASES if not (store / f"{v}.v{SCAN_VERSION}.json").exists()]
        if missing:
            raise SystemExit(f"not scanned yet: {', '.join(missing)} (run without --render-only)")
    Path(args.out).write_text(render(cache))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
