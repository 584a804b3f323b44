"""``python -m fi_compat migrate PATH... [--pin R] [--write]``.

Rewrites a codebase's FlashInfer imports and calls to fi_compat where fi_compat covers
the name, as a concrete-syntax-tree edit (libcst: comments and formatting stay), from
the sites :mod:`fi_compat.cli.callsites` finds:

* ``from flashinfer.M import a, b`` -> ``from fi_compat.M import a`` for every covered
  name (``fi_compat._locations``: fi_compat serves every FlashInfer location of a
  covered name, private modules included); uncovered names stay in a
  ``from flashinfer.M import ...`` of their own;
* ``flashinfer.M.a(...)`` / ``fi.M.a`` through ``import flashinfer[.M] [as fi]`` ->
  ``fi_compat.M.a`` (``import fi_compat`` is added; ``import flashinfer`` is dropped where
  nothing uses it any more and it stands alone at module level);
* a call with more positional arguments than the facade's stable positional prefix (or
  a keyword the stable signature spells otherwise) becomes
  ``fi_compat.written_for("PIN").M.a(...)``, keeping the binding of the release the code
  is written for (``--pin``, else the project's ``flashinfer-python`` pin); a method
  call on a FlashInfer wrapper past its prefix (``wrapper.plan(a, b, ..., page_size)``)
  makes every construction of that class ``fi_compat.written_for("PIN").M.Class(...)``,
  whose methods bind as the pinned release does;
* everything else is left alone and listed: names fi_compat does not cover, lazy
  look-ups by string (``getattr``, ``import_module``, a lazy per-symbol wrapper),
  ``from flashinfer import *``.

Without ``--write`` it prints a unified diff and changes nothing.  libcst is an optional
dependency: ``pip install 'fi_compat[tools]'``.
"""

from __future__ import annotations

import ast
import difflib
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import api

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from .callsites import FileAnalysis, Site
    from .scan import Judge


@dataclass
class Plan:
    """The edits of one file (positions as libcst reports them: 1-based line,
    character column)."""

    exprs: dict[tuple[int, int, int, int], str] = field(default_factory=dict)
    imports: dict[tuple[int, int], tuple[list[str], list[str], str]] = field(default_factory=dict)
    drop_imports: set[tuple[int, int]] = field(default_factory=set)
    add_import: bool = False
    notes: list[str] = field(default_factory=list)


def _char_col(source_lines: list[str], line: int, byte_col: int) -> int:
    text = source_lines[line - 1] if 0 < line <= len(source_lines) else ""
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


class Planner:
    def __init__(self, files: list[FileAnalysis], judge: Judge) -> None:
        self.files = files
        self.judge = judge
        self.h = judge.h
        self.pin = judge.pin
        self.classes_written: dict[str, str] = {}  # class def key -> facade module
        self.uncovered: list[str] = []
        self.left: list[str] = []
        self.counts = {"imports": 0, "references": 0, "written_for": 0}

    def _class_key(self, path: str) -> str | None:
        t = self.judge.lookup(path, self.pin)
        return t.key if t.kind == "class" else None

    def prepare(self) -> None:
        """Classes whose method calls need the pinned binding somewhere in the project."""
        assert self.judge.cov is not None
        for fa in self.files:
            for s in fa.sites:
                if s.kind != "call":
                    continue
                fc = self.judge.fi_compat(s) or {}
                if not fc.get("needs_written_for"):
                    continue
                t = self.judge.lookup(s.path, self.pin)
                cls = t.cls if t.kind == "method" else (t.key if t.kind == "class" else None)
                if cls is not None:
                    facade = self.judge.cov.class_facade(cls, self.pin)
                    if facade is not None:
                        self.classes_written[cls] = facade

    def plan(self, fa: FileAnalysis) -> Plan:
        p = Plan()
        lines = fa.source.splitlines()
        module_aliases = self._module_aliases(fa)
        from_names = {
            s.alias
            for s in fa.sites
            if s.kind == "import" and s.alias and s.alias not in module_aliases
        }
        rewritten_roots: dict[str, int] = {}
        for s in fa.sites:
            where = f"{fa.display}:{s.line}"
            if s.kind == "import":
                continue
            if s.kind == "probe":
                continue
            if s.via_partial:  # w.m = partial(flashinfer.f, w); w.m(...): the partial stays
                fc = self.judge.fi_compat(s) or {}
                if fc.get("needs_written_for"):
                    self.left.append(
                        f"{where} {s.code[:60]}: calls {s.path} through a partial; pass its "
                        f"arguments past the stable prefix by keyword"
                    )
                continue
            node = s.node
            assert node is not None
            text = ast.unparse(node)
            root = text.split(".")[0]
            written = None
            if s.kind == "call":
                fc = self.judge.fi_compat(s) or {}
                t = self.judge.lookup(s.path, self.pin)
                cls = t.key if t.kind == "class" else None
                if fc.get("needs_written_for") and not s.bound and cls is None:
                    e = self.judge.entries(s, self.pin) or self.judge.entries(
                        s, self.judge.targets[-1]
                    )
                    if e:
                        from .api import facade_path

                        written = f'fi_compat.written_for("{self.pin}").{facade_path(e[0])}'
                elif cls is not None and cls in self.classes_written:
                    facade = self.classes_written[cls].removeprefix("fi_compat.")
                    written = (
                        f'fi_compat.written_for("{self.pin}").{facade}.{cls.partition(":")[2]}'
                    )
                elif s.bound:
                    continue  # the instance's class is what gets rewritten
            if s.bound:
                continue
            if written is not None:
                key = self._key(lines, s)
                p.exprs[key] = written
                p.add_import = True
                self.counts["written_for"] += 1
                if root in module_aliases:
                    rewritten_roots[root] = rewritten_roots.get(root, 0) + 1
                continue
            if root not in module_aliases or not isinstance(node, ast.Attribute):
                if isinstance(node, ast.Name) or root in from_names:
                    continue  # its from-import is what gets rewritten (or listed)
                if api.covered_prefix(s.path) is None:
                    self.uncovered.append(f"{where} {s.path}")
                else:
                    self.left.append(f"{where} {text}: reached indirectly; left alone")
                continue
            hit = api.covered_prefix(s.path)
            if hit is None:
                self.uncovered.append(f"{where} {s.path}")
                continue
            fi_path, fc_path = hit
            rest = s.path[len(fi_path) :]
            p.exprs[self._key(lines, s)] = fc_path + rest
            p.add_import = True
            self.counts["references"] += 1
            rewritten_roots[root] = rewritten_roots.get(root, 0) + 1
        self._imports(fa, p, lines, module_aliases, rewritten_roots)
        return p

    def _key(self, lines: list[str], s: Site) -> tuple[int, int, int, int]:
        a, b, c, d = s.span
        return (a, _char_col(lines, a, b), c, _char_col(lines, c, d))

    def _module_aliases(self, fa: FileAnalysis) -> dict[str, str]:
        """{bound name: FlashInfer module} of the file's ``import flashinfer...`` and
        ``from flashinfer import <module>``."""
        out = {}
        for s in fa.sites:
            if s.kind == "import" and s.alias and s.path in self.h.modules:
                out[s.alias] = s.path
        return out

    def _imports(
        self,
        fa: FileAnalysis,
        p: Plan,
        lines: list[str],
        aliases: dict[str, str],
        used: dict[str, int],
    ) -> None:
        loads: dict[str, int] = {}
        for node in ast.walk(fa.tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                loads[node.id] = loads.get(node.id, 0) + 1
        top = {id(n) for n in fa.tree.body}
        for node in ast.walk(fa.tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and node.module
                and node.module.split(".")[0] == "flashinfer"
            ):
                keep, move = [], []
                for a in node.names:
                    src = f"{a.name} as {a.asname}" if a.asname else a.name
                    path = f"{node.module}.{a.name}"
                    if a.name == "*":
                        self.left.append(
                            f"{fa.display}:{node.lineno} from {node.module} import *: left alone"
                        )
                        keep.append(src)
                    elif path in self.h.modules:
                        keep.append(src)  # a module: its uses are rewritten one by one
                    elif api.covered_at(path) is not None:
                        move.append(src)
                    else:
                        keep.append(src)
                        self.uncovered.append(f"{fa.display}:{node.lineno} {path}")
                if move:
                    key = (node.lineno, _char_col(lines, node.lineno, node.col_offset))
                    target = "fi_compat" + node.module[len("flashinfer") :]
                    p.imports[key] = (keep, move, target)
                    self.counts["imports"] += len(move)
            elif isinstance(node, ast.Import) and id(node) in top and len(node.names) == 1:
                a = node.names[0]
                bound = a.asname or a.name.split(".")[0]
                if (
                    a.name.split(".")[0] == "flashinfer"
                    and used.get(bound)
                    and used[bound] >= loads.get(bound, 0)
                ):
                    p.drop_imports.add(
                        (node.lineno, _char_col(lines, node.lineno, node.col_offset))
                    )


def _transform(source: str, plan: Plan) -> str:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    class Rewrite(cst.CSTTransformer):
        METADATA_DEPENDENCIES = (PositionProvider,)

        def _pos(self, node: cst.CSTNode) -> tuple[int, int, int, int]:
            r = self.get_metadata(PositionProvider, node)
            return (r.start.line, r.start.column, r.end.line, r.end.column)

        def _expr(
            self, original: cst.BaseExpression, updated: cst.BaseExpression
        ) -> cst.BaseExpression:
            new = plan.exprs.get(self._pos(original))
            if new is None:
                return updated
            return cst.parse_expression(new).with_changes(lpar=updated.lpar, rpar=updated.rpar)

        def leave_Attribute(
            self, original: cst.Attribute, updated: cst.Attribute
        ) -> cst.BaseExpression:
            return self._expr(original, updated)

        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
            return self._expr(original, updated)

        def leave_SimpleStatementLine(
            self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
        ) -> Any:
            if len(original.body) != 1:
                return updated
            stmt = original.body[0]
            pos = self._pos(stmt)[:2]
            if isinstance(stmt, cst.Import) and pos in plan.drop_imports:
                return cst.RemoveFromParent()
            if not isinstance(stmt, cst.ImportFrom) or pos not in plan.imports:
                return updated
            keep, move, target = plan.imports[pos]
            upd = updated.body[0]
            assert isinstance(upd, cst.ImportFrom)
            new_stmt = cst.parse_statement(f"from {target} import {', '.join(move)}\n")
            if not keep:  # the whole statement moves: keep its layout, change the module
                mod = cst.parse_expression(target)
                assert isinstance(mod, (cst.Attribute, cst.Name))
                return updated.with_changes(body=[upd.with_changes(module=mod)])
            assert isinstance(new_stmt, cst.SimpleStatementLine)
            assert not isinstance(upd.names, cst.ImportStar)
            code = cst.Module([]).code_for_node
            kept = [a for a in upd.names if _alias_src(code(a.name), a, code) in keep]
            if upd.lpar is None:  # no parentheses: no trailing comma after the last name
                kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return cst.FlattenSentinel(
                [
                    updated.with_changes(body=[upd.with_changes(names=kept)]),
                    new_stmt.with_changes(leading_lines=[]),
                ]
            )

        def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
            if not plan.add_import or _binds_fi_compat(original):
                return updated
            body = list(updated.body)
            at = 0  # after the docstring and the leading block of imports
            for k, st in enumerate(body):
                first = st.body[0] if isinstance(st, cst.SimpleStatementLine) else None
                if k == 0 and isinstance(first, cst.Expr):
                    at = 1  # the docstring
                    continue
                if not isinstance(first, (cst.Import, cst.ImportFrom)):
                    break
                at = k + 1
            line = cst.parse_statement("import fi_compat\n")
            body.insert(at, line)
            return updated.with_changes(body=body)

    module = cst.parse_module(source)
    return MetadataWrapper(module).visit(Rewrite()).code


def _alias_src(name: str, alias: Any, code: Any) -> str:
    """``a`` or ``a as b``, as the plan names an imported alias."""
    if alias.asname is None:
        return name
    return f"{name} as {code(alias.asname.name)}"


def _binds_fi_compat(module: Any) -> bool:
    import libcst as cst

    for st in module.body:
        if isinstance(st, cst.SimpleStatementLine):
            for s in st.body:
                if isinstance(s, cst.Import):
                    for a in s.names:
                        name = cst.Module([]).code_for_node(a.name)
                        if name == "fi_compat" and a.asname is None:
                            return True
    return False


def run(
    paths: list[str], pin: str | None, write: bool
) -> tuple[list[tuple[str, str, str]], dict[str, Any]]:
    """[(file, old source, new source)] of the files that change, and the report."""
    from .api import Coverage, history
    from .callsites import Project
    from .scan import Judge, _relative, find_pin

    h = history()
    roots = [Path(p).resolve() for p in paths]
    pin_from = "--pin"
    if pin is None:
        found = find_pin(roots, h.releases)
        if found is not None:
            pin, pin_from = found[0], _relative(found[1])
        else:
            pin, pin_from = h.releases[-1], "default (no flashinfer-python pin found)"
    project = Project(h)
    project.load(roots)
    judge = Judge(h, Coverage(), pin, [h.releases[-1]])
    planner = Planner(project.files, judge)
    planner.prepare()
    changed = []
    for fa in project.files:
        if not fa.sites:
            continue
        plan = planner.plan(fa)
        if not (plan.exprs or plan.imports or plan.drop_imports):
            continue
        new = _transform(fa.source, plan)
        if new != fa.source:
            changed.append((fa.display, fa.source, new))
            if write:
                bom = fa.path.read_bytes().startswith(b"\xef\xbb\xbf")
                fa.path.write_text(new, encoding="utf-8-sig" if bom else "utf-8")
    report = {
        "pin": pin,
        "pin_from": pin_from,
        "files_changed": len(changed),
        **planner.counts,
        "classes_written_for": sorted(c.replace(":", ".") for c in planner.classes_written),
        "uncovered": sorted(dict.fromkeys(planner.uncovered)),
        "left_alone": sorted(dict.fromkeys(planner.left)),
    }
    return changed, report


def main(args: argparse.Namespace) -> int:
    try:
        import libcst  # noqa: F401
    except ImportError:
        print(
            "python -m fi_compat migrate: needs libcst: pip install 'fi_compat[tools]'",
            file=sys.stderr,
        )
        return 2
    for p in args.paths:
        if not Path(p).exists():
            print(
                f"python -m fi_compat migrate: error: {p}: no such file or directory",
                file=sys.stderr,
            )
            return 2
    from .api import history

    if args.pin and args.pin not in history().index:
        print(
            f"python -m fi_compat migrate: error: {args.pin!r} is not a known release",
            file=sys.stderr,
        )
        return 2
    changed, report = run(args.paths, args.pin, args.write)
    if not args.write:
        for name, old, new in changed:
            sys.stdout.writelines(
                difflib.unified_diff(
                    old.splitlines(keepends=True),
                    new.splitlines(keepends=True),
                    f"a/{name}",
                    f"b/{name}",
                )
            )
    out = sys.stdout if not args.write else sys.stderr
    verb = "rewrote" if args.write else "would rewrite"
    print(
        f"\nfi_compat migrate ({'written' if args.write else 'dry run'}; "
        f"written for flashinfer-python "
        f"{report['pin']}, {report['pin_from']}): {verb} {report['files_changed']} files: "
        f"{report['imports']} imported names, {report['references']} references, "
        f"{report['written_for']} calls through written_for",
        file=out,
    )
    if report["classes_written_for"]:
        print(
            "  classes built through written_for: " + ", ".join(report["classes_written_for"]),
            file=out,
        )
    if report["uncovered"]:
        print(f"  not covered by fi_compat (left alone, {len(report['uncovered'])}):", file=out)
        for u in report["uncovered"]:
            print(f"    {u}", file=out)
    for u in report["left_alone"]:
        print(f"  {u}", file=out)
    return 0
