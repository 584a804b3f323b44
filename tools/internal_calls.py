#!/usr/bin/env python3
"""Audit FlashInfer's own methods of the wrapped classes: which of them call the methods
the stable subclasses override, and how, in every release (a static read of the wheels
and, before 0.5.0, the sdists, as tools/snapshot.py reads them; nothing is imported).

    python tools/internal_calls.py            # rewrite the audit and its docs table
    python tools/internal_calls.py --check    # exit 1 if the docs table is stale

For every class of the attention facades' ``CLASSES`` rows and every release that has
it, the class's surface is read as Python resolves it (the class body, then its bases
depth first, as ``tools/snapshot.py`` follows them) and, for each name the stable
subclass binds (its methods, aliases and extras: ``plan``, ``run``, ``begin_forward``,
``run_return_lse`` ...) and each method whose body calls one of those names on ``self``,
one record:

* ``{"alias_of": "plan"}``: a class-body alias (``begin_forward = plan``);
* ``{"partialmethod": "run", "keywords": "return_lse=True"}``: ``functools.partialmethod``;
* ``{"def": Class, "params": "...", "body": [...], "calls": [...]}``: a method of
  ``Class`` (the defining class), its parameters (annotations dropped), and, where it
  calls a stable name on ``self``, its statements (docstring dropped) and those calls.

The result, ``tests/support/internal_calls.json`` (records de-duplicated, releases ->
record ids), drives the static suite's stand-in classes (the release's own method bodies
over spies bound to the release's signatures) and the audit table of ``docs/wrappers.md``
(between ``<!-- internal-calls:start -->`` and ``<!-- internal-calls:end -->``).
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

import snapshot as snap  # noqa: E402  (tools/snapshot.py, beside this script)
from fi_compat.registry import KNOWN_RELEASES  # noqa: E402

OUT = ROOT / "tests" / "support" / "internal_calls.json"
DOC = ROOT / "docs" / "wrappers.md"
START, END = "<!-- internal-calls:start -->", "<!-- internal-calls:end -->"


def wrapped_classes() -> dict[str, tuple[str, dict[str, str]]]:
    """{class name: (FlashInfer module, {name the stable subclass binds: how})}, how being
    ``"method"`` (a generated method whose target is FlashInfer's), ``"alias:<method>"``
    or ``"extra"`` (hand-written)."""
    from fi_compat import cascade, decode, mla, prefill

    out = {}
    for mod in (decode, prefill, mla, cascade):
        for name, row in mod.CLASSES.items():  # type: ignore[attr-defined]
            inherited = row.inherits.methods if row.inherits is not None else {}
            names = {m: "method" for m in [*row.methods, *inherited]}
            names.update({a: f"alias:{m}" for a, m in row.aliases.items()})
            names.update({x: "extra" for x in row.extra})
            out[name] = (row.module, dict(sorted(names.items())))
    return out


def _strip(args: ast.arguments) -> str:
    a = copy.deepcopy(args)
    for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
        if arg is not None:
            arg.annotation = None
    return ast.unparse(a)


def _body(fn: snap.Fn) -> list[str]:
    stmts = list(fn.body)
    if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant):
        stmts = stmts[1:]  # the docstring
    return [ast.unparse(s) for s in stmts]


def _self_calls(fn: snap.Fn, names: set[str]) -> list[str]:
    """The calls ``self.<name>(...)`` / ``super().<name>(...)`` in ``fn``, in source order."""
    args = [*fn.args.posonlyargs, *fn.args.args]
    me = args[0].arg if args else None
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner, attr = node.func.value, node.func.attr
            mine = isinstance(owner, ast.Name) and owner.id == me
            sup = isinstance(owner, ast.Call) and ast.unparse(owner) == "super()"
            if attr in names and (mine or sup):
                out.append((node.lineno, node.col_offset, ast.unparse(node)))
    return [c for _, _, c in sorted(out)]


def surface(zf: snap.Archive, module: str, clsname: str, names: set[str]) -> dict | None:
    """The records of class ``module.clsname`` in one release (see the module docstring)."""
    hit = snap._binding(zf, module, clsname)
    if hit is None or not isinstance(hit[2], ast.ClassDef):
        return None
    seen: dict[str, dict] = {}

    def walk(mod: str, tree: ast.Module, cls: ast.ClassDef, depth: int) -> None:
        bound: dict[str, dict] = {}
        for node in cls.body:  # in order, as the class body binds them
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                rec: dict = {"def": cls.name}
                calls = _self_calls(node, names)
                if calls:  # what a stand-in needs to run the release's own method
                    rec["calls"] = calls
                    rec["params"] = _strip(node.args)
                    rec["body"] = _body(node)
                bound[node.name] = rec
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                for t in targets:
                    if not isinstance(t, ast.Name):
                        continue
                    if isinstance(value, ast.Name):
                        bound[t.id] = {"alias_of": value.id, "in": cls.name}
                    elif (
                        isinstance(value, ast.Call)
                        and ast.unparse(value.func) in ("functools.partialmethod", "partialmethod")
                        and value.args
                        and isinstance(value.args[0], ast.Name)
                    ):
                        bound[t.id] = {
                            "partialmethod": value.args[0].id,
                            "keywords": ", ".join(ast.unparse(k) for k in value.keywords),
                            "in": cls.name,
                        }
                    else:
                        bound[t.id] = {"value": ast.unparse(value) if value else None}
        for name, rec in bound.items():
            seen.setdefault(name, rec)  # the class nearer the instance wins
        if depth > 5:
            return
        for expr in cls.bases:
            base = snap._base(zf, mod, tree, expr)
            if base is not None and isinstance(base[2], ast.ClassDef):
                walk(base[0], base[1], base[2], depth + 1)

    walk(hit[0], hit[1], hit[2], 0)
    out = {}
    for name, rec in sorted(seen.items()):
        if "value" in rec:
            continue
        if name in names or "calls" in rec:
            out[name] = rec
    for name in names:
        out.setdefault(name, {"absent": True})
    return dict(sorted(out.items()))


def audit(cache: Path) -> dict:
    classes = wrapped_classes()
    records: dict[str, dict] = {}
    by_key: dict[str, str] = {}
    result: dict[str, dict[str, str | None]] = {c: {} for c in classes}
    for version in KNOWN_RELEASES:
        zf = snap.Archive(snap.release_archive(version, cache))
        try:
            for cls, (module, names) in classes.items():
                rec = surface(zf, module, cls, set(names))
                if rec is None:
                    result[cls][version] = None
                    continue
                key = json.dumps(rec, sort_keys=True)
                rid = by_key.get(key)
                if rid is None:
                    rid = by_key[key] = f"r{len(records)}"
                    records[rid] = rec
                result[cls][version] = rid
        finally:
            zf.close()
        print(version, file=sys.stderr)
    return {
        "generated_by": "tools/internal_calls.py (static ast read of the PyPI wheels and, "
        "before 0.5.0, sdists; do not edit)",
        "stable_names": {c: names for c, (_m, names) in classes.items()},
        "modules": {c: m for c, (m, _n) in classes.items()},
        "records": records,
        "classes": result,
    }


# -- the docs table ----------------------------------------------------------------------


def _ranges(releases: list[str]) -> str:
    """Consecutive known releases as ``a–b`` spans."""
    idx = sorted(KNOWN_RELEASES.index(r) for r in releases)
    spans, start = [], idx[0]
    for prev, cur in zip(idx, [*idx[1:], None], strict=True):
        if cur != prev + 1:
            a, b = KNOWN_RELEASES[start], KNOWN_RELEASES[prev]
            spans.append(a if a == b else f"{a}\u2013{b}")
            if cur is not None:
                start = cur
    return ", ".join(spans)


def _how(name: str, rec: dict) -> str:
    """How the release binds ``name`` and what of it reaches the stable names."""
    if rec.get("absent"):
        return "absent"
    if "alias_of" in rec:
        return f"class-body alias `{name} = {rec['alias_of']}`: the base's `{rec['alias_of']}`"
    if "partialmethod" in rec:
        return (
            f"`functools.partialmethod({rec['partialmethod']}, {rec['keywords']})`: the "
            f"base's `{rec['partialmethod']}`"
        )
    calls = rec.get("calls")
    if not calls:
        return f"`def` in `{rec['def']}`; calls no overridden name"
    return f"`def` in `{rec['def']}`: " + "; ".join(f"`{c}`" for c in calls)


def _what(cls: str, name: str, rec: dict, how: str | None) -> str:
    """What the stable subclass does with ``name`` (``how``: its binding, or None)."""
    if how == "method":
        text = f"the stable `{name}`, whose target is FlashInfer's `{name}` (called by keyword)"
        if any(c.startswith("super().") for c in rec.get("calls", ())):
            text += "; its `super()` call resolves among FlashInfer's own classes"
        return text
    if how is not None and how.startswith("alias:"):
        target = how.partition(":")[2]
        return (
            f"the stable `{target}` for calls from user code; inside FlashInfer's own "
            f"methods, `{target}` bound by this release's signature"
        )
    if how == "extra" and name == "run_return_lse":
        return "fi_compat's `self.run(..., return_lse=True)`: the same call as the release's"
    if how == "extra" and name == "end_forward":
        return "fi_compat's no-op (FlashInfer's did nothing; 0.7.0 removed it)"
    if how == "extra":
        return "fi_compat's hand-written method"
    calls = rec.get("calls")
    if not calls:
        return "FlashInfer's own, unchanged"
    names = sorted({c.split("(")[0].rpartition(".")[2] for c in calls})
    text = (
        "FlashInfer's own, run in the release view: `self."
        + "(...)` / `self.".join(names)
        + "(...)` there binds by this release's signature, then the stable `run` runs"
    )
    if any(c.endswith("k_scale, v_scale)") for c in calls):
        text += (
            "; the positional `k_scale, v_scale` (into `run`'s `*args`, dropped by the "
            "built-in kernels) bind as `k_scale=` / `v_scale=`, as #1254 (0.2.9) passes them"
        )
    return text


def table(data: dict) -> str:
    lines = [
        "| class | method | releases | how the release binds it | what the stable subclass does |",
        "|---|---|---|---|---|",
    ]
    for cls, by_release in data["classes"].items():
        stable: dict[str, str] = data["stable_names"][cls]
        rows: dict[tuple[str, str], list[str]] = {}
        for release, rid in by_release.items():
            if rid is None:
                continue
            for name, rec in data["records"][rid].items():
                if name not in stable and "calls" not in rec:
                    continue
                how = _how(name, rec)
                rows.setdefault((name, how), []).append(release)
                rows[(name, how)].append(release)
        order = {r: i for i, r in enumerate(KNOWN_RELEASES)}
        for (name, how), releases in sorted(
            rows.items(), key=lambda kv: (kv[0][0], order[kv[1][0]])
        ):
            releases = sorted(set(releases), key=order.__getitem__)
            rid = by_release[releases[0]]
            assert rid is not None
            rec = data["records"][rid][name]
            lines.append(
                f"| `{cls}` | `{name}` | {_ranges(releases)} | {how} | "
                f"{_what(cls, name, rec, stable.get(name))} |"
            )
    return "\n".join(lines)


def render(text: str, data: dict) -> str:
    head, found, rest = text.partition(START)
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise SystemExit(f"{DOC} lacks the {START} ... {END} markers")
    return f"{head}{START}\n{table(data)}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    default_cache = os.environ.get("FI_COMPAT_WHEEL_CACHE", "~/.cache/fi_compat/wheels")
    ap.add_argument("--wheels", default=default_cache, help="wheel cache directory")
    ap.add_argument("--check", action="store_true", help="only check the docs table")
    ap.add_argument("--render-only", action="store_true", help="docs table from the JSON")
    args = ap.parse_args(argv)
    if args.check or args.render_only:
        data = json.loads(OUT.read_text())
    else:
        data = audit(Path(args.wheels).expanduser())
        OUT.write_text(json.dumps(data, indent=1) + "\n")
        print(f"wrote {OUT}", file=sys.stderr)
    text = DOC.read_text()
    new = render(text, data)
    if args.check:
        if new != text:
            print(f"stale: {DOC.relative_to(ROOT)} (run tools/internal_calls.py)", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new)
    print(f"wrote {DOC}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
