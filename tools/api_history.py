#!/usr/bin/env python3
"""Record every public FlashInfer callable of every release, statically, compactly.

    python tools/api_history.py [--wheels ~/.cache/fi_compat/wheels] [--out PATH]

For every release in ``fi_compat.registry.KNOWN_RELEASES`` it reads every
``flashinfer/**/*.py`` of the wheel (the sdist before 0.5.0; downloaded and cached as
``tools/snapshot.py`` does) with :mod:`ast` -- nothing is imported or executed -- and
records:

* **modules**: every public module (no path component starting with ``_``;
  ``flashinfer.data``, the vendored C++ sources and build scripts shipped as package
  data, left out), as runs ``[first, last]`` of release indices;
* **names**: every public name of every public module that is bound to a FlashInfer
  ``def`` or ``class``, followed through re-exports, ``A = B`` aliases and ``from .x
  import *`` exactly as ``tools/locations.py`` builds a module's namespace;
* **defs**: for each definition those names reach (``defining_module:name``), per
  release: a function's parameters ``[name, kind, default source]`` (kinds as in the
  snapshots: ``po pk va ko vk``); a class's bases (``defining_module:name`` where the base
  is a FlashInfer class, else its source text) and enum members (``[name, value
  source]``, for a class with an ``...Enum`` / ``...Flag`` base); and, as separate defs
  ``module:Class.method``, every public method plus ``__init__`` and ``__call__``
  (``@property`` left out; ``"s"``/``"c"`` for static and class methods; a class-body
  alias ``begin_forward = plan`` has ``"alias_of"``; a ``*args, **kwargs`` forwarder to
  one private method has the callee's parameters and ``via`` / ``public_positional`` /
  ``varargs_as``, as in ``tools/snapshot.py``); a ``@dataclass`` (or ``NamedTuple``)
  without its own ``__init__`` gets the ``__init__`` its fields make.  Base classes
  that no public name reaches are recorded too (their methods are inherited).

Annotations and return types are not kept (the signature snapshots of the covered
entry points have them); inherited methods are not copied: a class records its bases
and :mod:`fi_compat.cli.api` looks a method up through them.

Written, compactly, to ``src/fi_compat/_api_history.json.gz`` (generated, never edited):
each distinct record once (``records``), each def as runs ``[first, last, record]`` of
release indices (inclusive; a release outside every run lacks it), each name as runs of
def indices.  ``tests/static/test_api_history.py`` checks it against the snapshots of
the covered entry points.  Reads about 74 archives (~6 minutes on two cores); the
per-release results are cached in ``<wheels>/../api_history/``.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

from fi_compat.registry import KNOWN_RELEASES  # noqa: E402
from locations import Release  # noqa: E402
from snapshot import Archive, _forwarded, release_archive  # noqa: E402

OUT = ROOT / "src" / "fi_compat" / "_api_history.json.gz"
SCAN_VERSION = 1  # bump when the per-release rules change (invalidates the cache)
FORMAT = 1
EXCLUDED = ("flashinfer.data",)  # package data: vendored C++ sources, build scripts
DUNDER = ("__init__", "__call__")

Fn = ast.FunctionDef | ast.AsyncFunctionDef


def public(module: str) -> bool:
    parts = module.split(".")
    if any(p.startswith("_") for p in parts):
        return False
    return not any(module == x or module.startswith(x + ".") for x in EXCLUDED)


def _params(fn: Fn, drop_first: bool = False) -> list[list[str | None]]:
    a = fn.args
    out: list[list[str | None]] = []
    positional = [*a.posonlyargs, *a.args]
    pos_defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults))
    pos_defaults += list(a.defaults)
    for i, arg in enumerate(positional):
        if drop_first and i == 0:
            continue
        kind = "po" if i < len(a.posonlyargs) else "pk"
        d = pos_defaults[i]
        out.append([arg.arg, kind, ast.unparse(d) if d is not None else None])
    if a.vararg:
        out.append([a.vararg.arg, "va", None])
    for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        out.append([arg.arg, "ko", ast.unparse(d) if d is not None else None])
    if a.kwarg:
        out.append([a.kwarg.arg, "vk", None])
    return out


def _deco_names(node: Fn | ast.ClassDef) -> list[str]:
    out = []
    for d in node.decorator_list:
        if isinstance(d, ast.Call):
            d = d.func
        out.append(ast.unparse(d))
    return out


def _find(body: list[ast.stmt], name: str) -> Fn | ast.ClassDef | None:
    """The ``def`` / ``class`` ``name`` a module body binds (top level, ``if`` / ``try``
    / ``with`` bodies included; the last one wins)."""
    hit: Fn | ast.ClassDef | None = None
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                hit = node
        elif isinstance(node, ast.If):
            hit = _find(node.body, name) or _find(node.orelse, name) or hit
        elif isinstance(node, ast.Try):
            for b in (node.body, node.orelse, *(h.body for h in node.handlers), node.finalbody):
                hit = _find(b, name) or hit
        elif isinstance(node, ast.With):
            hit = _find(node.body, name) or hit
    return hit


class Reader:
    """One release: module trees, definitions and their records."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self.rel = Release(archive)
        self.trees: dict[str, ast.Module | None] = {}

    def tree(self, module: str) -> ast.Module | None:
        if module not in self.trees:
            path = self.rel.files.get(module)
            t = None
            if path is not None:
                try:
                    t = ast.parse(self.archive.read(path).decode("utf-8", "replace"))
                except SyntaxError:
                    t = None
            self.trees[module] = t
        return self.trees[module]

    def base(self, module: str, expr: ast.expr) -> str:
        """``defining_module:name`` of a FlashInfer base class, else its source text."""
        if isinstance(expr, ast.Subscript):  # Generic[T], NamedTuple-like generics
            expr = expr.value
        if isinstance(expr, ast.Name):
            hit = self.rel.resolve(module, expr.id)
            if hit is not None:
                return f"{hit[0]}:{hit[1]}"
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            b = self.rel.namespace(module).get(expr.value.id)
            if b is not None and b[0] == "module":
                hit = self.rel.resolve(b[1], expr.attr)
                if hit is not None:
                    return f"{hit[0]}:{hit[1]}"
        return ast.unparse(expr)

    def records(self, module: str, name: str) -> dict[str, dict[str, Any]]:
        """{def key: record} of the definition ``module:name`` and, for a class, its
        methods (``module:Class.method``)."""
        tree = self.tree(module)
        node = _find(tree.body, name) if tree is not None else None
        if node is None:
            return {}
        key = f"{module}:{name}"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return {key: {"p": _params(node)}}
        assert tree is not None
        bases = [self.base(module, b) for b in node.bases]
        rec: dict[str, Any] = {"k": "c", "b": bases}
        enum = any(
            b.rpartition(".")[2].rpartition(":")[2].endswith(("Enum", "Flag")) for b in bases
        )
        if enum:
            rec["e"] = _members(node)
        out = {key: rec}
        out.update(self.methods(module, tree, node, key, bases))
        return out

    def methods(
        self, module: str, tree: ast.Module, cls: ast.ClassDef, key: str, bases: list[str]
    ) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        bound: dict[str, Fn] = {}
        for node in cls.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                bound[node.name] = node
                decos = _deco_names(node)
                if any(
                    d in ("property", "cached_property", "functools.cached_property")
                    or d.endswith((".setter", ".deleter", ".getter"))
                    for d in decos
                ):
                    out.pop(f"{key}.{node.name}", None)
                    continue
                if node.name.startswith("_") and node.name not in DUNDER:
                    continue
                flag = "s" if "staticmethod" in decos else "c" if "classmethod" in decos else None
                rec: dict[str, Any] = {"p": _params(node)}
                if flag:
                    rec["f"] = flag
                fwd = _forwarded(self.archive, module, tree, cls, node, tree)
                if fwd is not None:
                    target, extra = fwd
                    rec = {"p": _params(target), **extra}
                out[f"{key}.{node.name}"] = rec
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
                src = bound.get(node.value.id)
                for t in node.targets:
                    if isinstance(t, ast.Name) and src is not None:
                        bound[t.id] = src
                        if not t.id.startswith("_"):
                            alias = dict(out.get(f"{key}.{src.name}") or {"p": _params(src)})
                            alias["alias_of"] = src.name
                            out[f"{key}.{t.id}"] = alias
        if "__init__" not in bound:
            init = _synthesized_init(cls, bases)
            if init is not None:
                out[f"{key}.__init__"] = init
        return out


def _members(cls: ast.ClassDef) -> list[list[str]]:
    """An enum body's members: ``[[name, value source], ...]`` in definition order (a
    one-element tuple value gives its element, ``auto()`` stays ``auto()``)."""
    out: list[list[str]] = []
    for node in cls.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(value, ast.Tuple) and len(value.elts) == 1:
                value = value.elts[0]
            if (
                isinstance(target, ast.Name)
                and not target.id.startswith("_")
                and isinstance(value, (ast.Constant, ast.Call, ast.UnaryOp, ast.BinOp))
            ):
                out.append([target.id, ast.unparse(value)])
    return out


def _synthesized_init(cls: ast.ClassDef, bases: list[str]) -> dict[str, Any] | None:
    """The ``__init__`` a ``@dataclass`` (``kw_only=True`` honoured) or a ``NamedTuple``
    class body makes from its annotated fields (``ClassVar`` fields skipped)."""
    dc = None
    for d in cls.decorator_list:
        f = d.func if isinstance(d, ast.Call) else d
        if ast.unparse(f) in ("dataclass", "dataclasses.dataclass"):
            dc = d
    named = any(b.rpartition(".")[2] == "NamedTuple" for b in bases)
    if dc is None and not named:
        return None
    kw_only = isinstance(dc, ast.Call) and any(
        k.arg == "kw_only" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in dc.keywords
    )
    params: list[list[str | None]] = []
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if "ClassVar" in ast.unparse(node.annotation):
                continue
            default = None
            if node.value is not None:
                v = node.value
                if isinstance(v, ast.Call) and ast.unparse(v.func).rpartition(".")[2] == "field":
                    kws = {k.arg: k.value for k in v.keywords}
                    if "default" in kws:
                        default = ast.unparse(kws["default"])
                    elif "default_factory" in kws:
                        default = f"{ast.unparse(kws['default_factory'])}()"
                else:
                    default = ast.unparse(v)
            params.append([node.target.id, "ko" if kw_only else "pk", default])
    return {"p": [["self", "pk", None], *params], "synth": "namedtuple" if named else "dataclass"}


def read_release(version: str, cache: Path) -> dict[str, Any]:
    """{"names": {module: {name: def key}}, "defs": {def key: record}} of one release,
    from the cache or read from its archive."""
    store = cache.parent / "api_history"
    store.mkdir(parents=True, exist_ok=True)
    path = store / f"{version}.v{SCAN_VERSION}.json"
    if path.exists():
        return json.loads(path.read_text())  # type: ignore[no-any-return]
    t0 = time.time()
    archive = Archive(release_archive(version, cache))
    try:
        reader = Reader(archive)
        names: dict[str, dict[str, str]] = {}
        defs: dict[str, dict[str, Any]] = {}
        for module in sorted(reader.rel.files):
            if not public(module):
                continue
            for name in sorted(reader.rel.namespace(module)):
                if name.startswith("_"):
                    continue
                hit = reader.rel.resolve(module, name)
                if hit is None:
                    continue
                key = f"{hit[0]}:{hit[1]}"
                names.setdefault(module, {})[name] = key
                if key not in defs:
                    recs = reader.records(hit[0], hit[1])
                    if not recs:  # bound to something that is no def after all
                        del names[module][name]
                        continue
                    defs.update(recs)
        # base classes no public name reaches (``_TrtllmRunnerBase``): their methods are
        # the subclasses' inherited ones
        pending = [b for r in list(defs.values()) for b in r.get("b", ()) if ":" in b]
        while pending:
            base = pending.pop()
            if base in defs:
                continue
            recs = reader.records(*base.split(":", 1))
            defs.update(recs or {base: {"k": "c", "b": []}})
            pending += [b for b in recs.get(base, {}).get("b", ()) if ":" in b]
    finally:
        archive.close()
    modules = sorted(m for m in reader.rel.files if public(m))
    data = {"modules": modules, "names": names, "defs": defs}
    path.write_text(json.dumps(data, separators=(",", ":")))
    n = sum(map(len, names.values()))
    print(
        f"{version:14s} {n} names in {len(names)} modules, {len(defs)} defs "
        f"({time.time() - t0:.1f} s)",
        file=sys.stderr,
    )
    return data


def _runs(per_release: dict[int, int]) -> list[list[int]]:
    out: list[list[int]] = []
    for i in sorted(per_release):
        v = per_release[i]
        if out and out[-1][1] == i - 1 and out[-1][2] == v:
            out[-1][1] = i
        else:
            out.append([i, i, v])
    return out


def build(cache: Path, releases: tuple[str, ...] = KNOWN_RELEASES) -> dict[str, Any]:
    records: list[Any] = []
    rec_index: dict[str, int] = {}
    defs: dict[str, dict[int, int]] = {}
    names: dict[str, dict[str, dict[int, str]]] = {}
    modules: dict[str, dict[int, int]] = {}
    for i, version in enumerate(releases):
        data = read_release(version, cache)
        for module in data["modules"]:
            modules.setdefault(module, {})[i] = 0
        for key, rec in data["defs"].items():
            text = json.dumps(rec, sort_keys=True, separators=(",", ":"))
            r = rec_index.get(text)
            if r is None:
                r = rec_index[text] = len(records)
                records.append(rec)
            defs.setdefault(key, {})[i] = r
        for module, ns in data["names"].items():
            for name, key in ns.items():
                names.setdefault(module, {}).setdefault(name, {})[i] = key
    def_keys = sorted(defs)
    def_index = {k: j for j, k in enumerate(def_keys)}
    return {
        "format": FORMAT,
        "generated_by": "tools/api_history.py (static ast read of the PyPI wheels and, "
        "before 0.5.0, sdists; do not edit)",
        "releases": list(releases),
        "param_format": ["name", "kind: po|pk|va|ko|vk", "default source or null"],
        "records": records,
        "modules": {m: [r[:2] for r in _runs(spans)] for m, spans in sorted(modules.items())},
        "defs": [[k, _runs(defs[k])] for k in def_keys],
        "names": {
            m: {
                n: _runs({i: def_index[k] for i, k in spans.items()})
                for n, spans in sorted(ns.items())
            }
            for m, ns in sorted(names.items())
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    default_cache = os.environ.get("FI_COMPAT_WHEEL_CACHE", "~/.cache/fi_compat/wheels")
    ap.add_argument("--wheels", default=default_cache, help="wheel cache directory")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    data = build(Path(args.wheels).expanduser())
    raw = json.dumps(data, separators=(",", ":")).encode()
    # mtime=0: the same input gives the same bytes (a stale check can compare files)
    Path(args.out).write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
    print(
        f"wrote {args.out}: {len(raw) / 1e6:.1f} MB of JSON, "
        f"{Path(args.out).stat().st_size / 1e6:.2f} MB gzip",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
