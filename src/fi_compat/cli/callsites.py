"""Find a codebase's FlashInfer imports, references and call sites, statically.

Nothing of the scanned code is imported or run: each file is read with :mod:`ast`.
What is followed, per file and across the project's own modules:

* ``import flashinfer[.x] [as y]`` and ``from flashinfer[.x] import a [as b]`` at any
  depth (``try`` / ``if`` blocks, function bodies: lazy imports);
* names bound to FlashInfer objects: assignments (``f = flashinfer.norm.rmsnorm``),
  ``getattr(module, "literal"[, default])``, ``importlib.import_module("flashinfer.x")``,
  and any call that names a FlashInfer module and one of its attributes as string
  literals (``_lazy_import_wrapper("flashinfer.fused_moe", "cutlass_fused_moe")``: a
  lazy per-symbol wrapper that forwards ``*args, **kwargs``); functions that return such
  an object (``@cache def _get_impl(): return flashinfer.x``);
* objects built from FlashInfer classes: ``w = BatchDecodeWithPagedKVCacheWrapper(...)``,
  ``self.w = ...`` (in any method of the class), containers (``[C(...) for _ in r]``,
  ``xs.append(C(...))``, ``xs[i]``, ``for w in xs``), annotations (``w:
  BatchPrefillWithPagedKVCacheWrapper``, ``wrappers: List[...]``, dataclass fields), and
  attributes assigned such objects anywhere in the project (``metadata.decode_wrappers``)
  when the attribute name has one meaning there;
* the project's own modules: ``from myproj.utils.flashinfer import f`` follows ``f`` to
  what that module binds (module names from the ``__init__.py`` chain of each file, or
  the path below the scanned root).

Binding is flow-insensitive: a name bound to a FlashInfer object anywhere in a scope is
that object in the whole scope (``try: from flashinfer import f`` / ``except
ImportError: f = None`` is ``f``).  Not seen: imports or attribute names computed at run
time (``import_module(name)``, ``getattr(m, name)`` with a variable), objects passed
through untyped parameters or returned from other modules' functions, ``exec``/``eval``.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from .api import History

    Ref = tuple[Any, ...]

# a reference: ("p", path) a FlashInfer module or object; ("i", class path) an instance;
# ("c", ref) a container of ref; ("f", ref) a function returning ref; ("m", class path,
# method) a bound method; ("x", module, name) a project module's name; ("xm", module)

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        "node_modules",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "site-packages",
        "build",
        "dist",
    }
)
_CONTAINERS = ("List", "list", "Sequence", "Tuple", "tuple", "Dict", "dict", "Iterable", "Mapping")
_WRAPPERS = ("Optional", "Union", "Final", "ClassVar", "Annotated")


@dataclass
class Site:
    """One place the code touches FlashInfer.

    ``kind``: ``import`` (one imported name or module), ``call``, ``reference`` (a
    FlashInfer object used otherwise than called), ``probe`` (``hasattr(m, "x")``);
    ``path``: the FlashInfer dotted path (for a method call the class path plus the
    method); ``bound``: a method called on an instance (``self`` implicit);
    ``positional``: the number of positional arguments (``None`` with a ``*args``
    splat); ``span``: (line, col, end line, end col) of the callee or the name (ast
    positions: 1-based lines, UTF-8 byte columns)."""

    file: str
    line: int
    kind: str
    path: str
    code: str
    span: tuple[int, int, int, int]
    bound: bool = False
    positional: int | None = None
    keywords: list[str] = field(default_factory=list)
    star_kw: bool = False
    alias: str | None = None  # import: the bound name; call: how the callee is written
    statement: tuple[int, int] | None = None  # import: the statement's (line, col)
    lazy: bool = False  # an import inside a function body or a try/if block
    replaced: bool = False  # a method the project replaced on its instances
    via_partial: bool = False  # ... by a partial of this FlashInfer function
    node: ast.AST | None = field(default=None, repr=False, compare=False)  # callee / name
    call: ast.Call | None = field(default=None, repr=False, compare=False)


OTHER: Ref = ("o",)  # an object that is not FlashInfer's (a project class, a tensor)


def _merge(store: dict[str, Ref], stamps: dict[str, int], name: str, r: Ref, rnd: int) -> None:
    """Bind ``name`` to ``r`` flow-insensitively: the first binding of a round replaces
    the previous round's; a name bound both to a FlashInfer object and to another
    object (``w = FlashInferWrapper(...)`` / ``w = OwnWrapper(...)``) is neither."""
    if stamps.get(name) != rnd:
        store[name], stamps[name] = r, rnd
    elif store.get(name) != r:
        store[name] = OTHER if OTHER in (store.get(name), r) else r


class Scope:
    __slots__ = ("vars", "parent", "cls", "self_name", "funcs", "stamps")

    def __init__(self, parent: Scope | None, cls: str | None = None, self_name: str | None = None):
        self.vars: dict[str, Ref] = {}
        self.stamps: dict[str, int] = {}
        self.parent = parent
        self.cls = cls
        self.self_name = self_name
        self.funcs: list[tuple[ast.AST, Scope]] = []

    def get(self, name: str) -> Ref | None:
        s: Scope | None = self
        while s is not None:
            if name in s.vars:
                return s.vars[name]
            s = s.parent
        return None


def module_name(path: Path, root: Path) -> list[str]:
    """The module names a file may be imported under: from its ``__init__.py`` chain,
    and its path below the scanned ``root``."""
    names = []
    parts = [] if path.name == "__init__.py" else [path.stem]
    d = path.parent
    while (d / "__init__.py").exists() and d != d.parent:
        parts.insert(0, d.name)
        d = d.parent
    if parts:
        names.append(".".join(parts))
    try:
        rel = path.relative_to(root).with_suffix("")
    except ValueError:
        rel = None
    if rel is not None:
        rp = [p for p in rel.parts if p != "__init__"]
        for k in range(len(rp)):  # src/ layouts: every suffix that is an identifier path
            sub = rp[k:]
            if sub and all(p.isidentifier() for p in sub):
                cand = ".".join(sub)
                if cand not in names:
                    names.append(cand)
                break
    return names


class FileAnalysis:
    """The scopes, references and sites of one file."""

    def __init__(
        self,
        project: Project,
        path: Path,
        display: str,
        source: str,
        tree: ast.Module,
        names: list[str],
    ):
        self.project = project
        self.path = path
        self.display = display
        self.source = source
        self.tree = tree
        self.names = names
        self.module = names[0] if names else display
        self.is_package = path.name == "__init__.py"
        self.scope = Scope(None)
        self.classes: dict[str, dict[str, Ref]] = {}  # class name -> {self attribute: ref}
        self.class_stamps: dict[str, dict[str, int]] = {}
        self.round = 0
        self.class_scopes: dict[str, Scope] = {}  # class name -> its body's bindings
        self.attrs: dict[str, set[Ref]] = {}  # any obj.attr = ref, class-body annotations
        self.overrides: dict[tuple[str, str], Ref] = {}  # (class, method) -> replacement
        self._scopes: dict[int, Scope] = {}
        self._return_values: dict[int, list[ast.expr]] = {}
        self._lines: list[str] | None = None
        self.sites: list[Site] = []
        self.dynamic: list[tuple[int, str]] = []  # what the scanner could not follow

    # -- binding ------------------------------------------------------------------------
    def bind(self) -> None:
        self.round += 1
        self.attrs = {}
        self.overrides = {}
        self.dynamic = []
        self._bind_block(self.tree.body, self.scope, top=True)

    def _child(self, node: ast.AST, parent: Scope, cls: str | None, self_name: str | None) -> Scope:
        s = self._scopes.get(id(node))
        if s is None:
            if cls is None and self_name is None:  # a closure inside a method sees self
                cls, self_name = parent.cls, parent.self_name
            s = self._scopes[id(node)] = Scope(parent, cls, self_name)
            parent.funcs.append((node, s))
        return s

    def _bind_block(
        self,
        body: list[ast.stmt],
        scope: Scope,
        top: bool = False,
        cls: str | None = None,
        cls_scope: Scope | None = None,
    ) -> None:
        for node in body:
            self._bind_stmt(node, scope, top, cls, cls_scope)

    def _bind_stmt(
        self, node: ast.stmt, scope: Scope, top: bool, cls: str | None, cls_scope: Scope | None
    ) -> None:
        target_scope = cls_scope or scope
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "flashinfer":
                    ref: Ref = ("p", a.name if a.asname else "flashinfer")
                else:
                    ref = ("xm", a.name if a.asname else a.name.split(".")[0])
                target_scope.vars[a.asname or a.name.split(".")[0]] = ref
        elif isinstance(node, ast.ImportFrom):
            mod = self._from_module(node)
            if mod is None:
                return
            for a in node.names:
                if a.name == "*":
                    if mod.split(".")[0] != "flashinfer":
                        self._star(mod, target_scope)
                    continue
                if mod.split(".")[0] == "flashinfer":
                    target_scope.vars[a.asname or a.name] = ("p", f"{mod}.{a.name}")
                else:
                    target_scope.vars[a.asname or a.name] = ("x", mod, a.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self_name = None
            if cls is not None:
                args = [*node.args.posonlyargs, *node.args.args]
                decos = {ast.unparse(d) for d in node.decorator_list}
                if args and "staticmethod" not in decos:
                    self_name = args[0].arg
            child = self._child(node, scope, cls, self_name)
            for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                if arg.annotation is not None:
                    ra = self._annotation(arg.annotation, scope)
                    if ra is not None:
                        child.vars[arg.arg] = ra
            self._bind_block(node.body, child, cls=None)
            ret = self._returns(node, child)
            if ret is not None:
                target_scope.vars[node.name] = ("f", ret)
        elif isinstance(node, ast.ClassDef):
            self.classes.setdefault(node.name, {})
            cscope = self._child(node, scope, None, None)
            self.class_scopes[node.name] = cscope
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    r = self._annotation(stmt.annotation, scope)
                    if r is not None:
                        stamps = self.class_stamps.setdefault(node.name, {})
                        _merge(self.classes[node.name], stamps, stmt.target.id, r, self.round)
                        self.attrs.setdefault(stmt.target.id, set()).add(r)
            self._bind_block(node.body, scope, cls=node.name, cls_scope=cscope)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            value = node.value
            r = self.ev(value, scope) if value is not None else None
            if isinstance(node, ast.AnnAssign):
                r = r or self._annotation(node.annotation, scope)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                self._assign(t, value, r, scope, target_scope)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            r = self.ev(node.iter, scope)
            if r is not None and r[0] == "c":
                self._assign(node.target, None, r[1], scope, target_scope)
            elif (
                isinstance(node.iter, ast.Call)
                and ast.unparse(node.iter.func) in ("enumerate", "zip")
                and node.iter.args
            ):
                inner = self.ev(
                    node.iter.args[-1 if ast.unparse(node.iter.func) == "enumerate" else 0], scope
                )
                if inner is not None and inner[0] == "c" and isinstance(node.target, ast.Tuple):
                    idx = 1 if ast.unparse(node.iter.func) == "enumerate" else 0
                    if len(node.target.elts) > idx:
                        self._assign(node.target.elts[idx], None, inner[1], scope, target_scope)
            self._bind_block(node.body, scope, cls=cls, cls_scope=cls_scope)
            self._bind_block(node.orelse, scope, cls=cls, cls_scope=cls_scope)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            self._bind_block(node.body, scope, cls=cls, cls_scope=cls_scope)
        elif isinstance(node, (ast.If, ast.While)):
            self._bind_block(node.body, scope, cls=cls, cls_scope=cls_scope)
            self._bind_block(node.orelse, scope, cls=cls, cls_scope=cls_scope)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            for b in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):  # type: ignore[attr-defined]
                self._bind_block(b, scope, cls=cls, cls_scope=cls_scope)
        elif type(node).__name__ == "Match":
            for case in node.cases:  # type: ignore[attr-defined]
                self._bind_block(case.body, scope, cls=cls, cls_scope=cls_scope)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value  # xs.append(C(...)) / xs.extend([...]): xs holds C
            f = call.func
            if (
                isinstance(f, ast.Attribute)
                and f.attr in ("append", "extend", "insert")
                and call.args
            ):
                r = self.ev(call.args[-1], scope)
                if r is not None:
                    r = r if f.attr == "extend" else ("c", r)
                    if r[0] == "c":
                        self._assign(f.value, None, r, scope, target_scope, weak=True)
        # walrus and comprehension targets are left alone

    def _assign(
        self,
        t: ast.expr,
        value: ast.expr | None,
        r: Ref | None,
        scope: Scope,
        target_scope: Scope,
        weak: bool = False,
    ) -> None:
        if r is None and _is_object(value):
            r = OTHER
        if isinstance(t, ast.Name):
            if r is not None and not (weak and t.id in target_scope.vars):
                _merge(target_scope.vars, target_scope.stamps, t.id, r, self.round)
        elif isinstance(t, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(t.elts):
                for a, b in zip(t.elts, value.elts, strict=True):
                    self._assign(a, b, self.ev(b, scope), scope, target_scope)
        elif isinstance(t, ast.Attribute):
            self._override(t, value, scope)
            if r is None:
                return
            base = t.value
            if isinstance(base, ast.Name) and scope.self_name == base.id and scope.cls:
                attrs = self.classes.setdefault(scope.cls, {})
                stamps = self.class_stamps.setdefault(scope.cls, {})
                _merge(attrs, stamps, t.attr, r, self.round)
            if r[0] in ("i", "c", "o"):
                self.attrs.setdefault(t.attr, set()).add(r)
        elif isinstance(t, ast.Subscript) and r is not None:
            self._assign(t.value, None, ("c", r), scope, target_scope, weak=True)

    def _override(self, t: ast.Attribute, value: ast.expr | None, scope: Scope) -> None:
        """``w.begin_forward = partial(fast_decode_plan, w)`` on an instance of a FlashInfer
        class: calls of that method on its instances are calls of what replaced it (a
        ``partial`` of a FlashInfer function: that function, its first arguments given),
        or of something the scan cannot bind."""
        owner = self.ev(t.value, scope)
        if owner is None or owner[0] != "i":
            return
        repl: Ref = ("opaque",)
        if (
            isinstance(value, ast.Call)
            and ast.unparse(value.func).rpartition(".")[2] == "partial"
            and value.args
        ):
            f = self.ev(value.args[0], scope)
            if f is not None and f[0] == "p":
                kws = tuple(k.arg for k in value.keywords if k.arg)
                repl = ("partial", f[1], len(value.args) - 1, kws)
        self.overrides[(owner[1], t.attr)] = repl

    def _from_module(self, node: ast.ImportFrom) -> str | None:
        if node.level == 0:
            return node.module
        pkg = self.module if self.is_package else self.module.rpartition(".")[0]
        for _ in range(node.level - 1):
            pkg = pkg.rpartition(".")[0]
        if node.module:
            return f"{pkg}.{node.module}" if pkg else node.module
        return pkg or None

    def _star(self, mod: str, scope: Scope) -> None:
        other = self.project.modules.get(mod)
        if other is not None and other is not self:
            for name in list(other.scope.vars):
                if not name.startswith("_"):
                    scope.vars.setdefault(name, ("x", mod, name))

    def _returns(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> Ref | None:
        values = self._return_values.get(id(fn))
        if values is None:
            values = self._return_values[id(fn)] = [
                node.value
                for node in _walk_own(fn)
                if isinstance(node, ast.Return) and node.value is not None
            ]
        for v in values:
            r = self.ev(v, scope)
            if r is not None and r[0] != "f":
                return r
        return None

    def _annotation(self, ann: ast.expr, scope: Scope) -> Ref | None:
        """What an annotation declares: an instance of a FlashInfer class, a container of
        them, :data:`OTHER` (a type that is not FlashInfer's; with one in a union the
        annotation is ambiguous), or None (nothing: ``None``, unparsable)."""
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            parsed = _parse_annotation(ann.value)
            if parsed is None:
                return None
            ann = parsed
        if isinstance(ann, ast.Constant) and ann.value is None:
            return None
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
            return _union([self._annotation(ann.left, scope), self._annotation(ann.right, scope)])
        if isinstance(ann, ast.Subscript):
            head = ast.unparse(ann.value).rpartition(".")[2]
            inner = ann.slice
            elts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            if head in _WRAPPERS:
                parts = elts[:1] if head == "Annotated" else elts
                return _union([self._annotation(e, scope) for e in parts])
            if head in _CONTAINERS:
                item = self._annotation(elts[-1], scope)  # Dict[K, V]: the values
                if item is not None and item != OTHER:
                    return ("c", item)
            return OTHER
        r = self.ev(ann, scope)
        if r is not None and r[0] == "p" and self.project.is_class(r[1]):
            return ("i", r[1])
        return OTHER

    # -- evaluation ---------------------------------------------------------------------
    def ev(self, e: ast.expr | None, scope: Scope, depth: int = 0) -> Ref | None:
        if e is None or depth > 30:
            return None
        r = self._ev(e, scope, depth)
        return self.project.resolve(r) if r is not None else None

    def _ev(self, e: ast.expr, scope: Scope, depth: int) -> Ref | None:
        if isinstance(e, ast.Name):
            v = scope.get(e.id)
            return None if v == OTHER else v
        if isinstance(e, ast.Attribute):
            v = self.ev(e.value, scope, depth + 1)
            if v is not None:
                if v[0] == "p":
                    return ("p", f"{v[1]}.{e.attr}")
                if v[0] == "xm":
                    return self.project.member(v[1], e.attr)
                if v[0] == "i":
                    return ("m", v[1], e.attr)
                return None
            base = e.value
            if isinstance(base, ast.Name) and base.id == scope.self_name and scope.cls:
                hit = self.classes.get(scope.cls, {}).get(e.attr)
                cs = self.class_scopes.get(scope.cls)
                if hit is None and cs is not None:
                    hit = cs.vars.get(e.attr)
                if hit is not None:
                    return None if hit == OTHER else hit
            return self.project.attr(e.attr)
        if isinstance(e, ast.Call):
            return self._ev_call(e, scope, depth)
        if isinstance(e, ast.Subscript):
            v = self.ev(e.value, scope, depth + 1)
            return v[1] if v is not None and v[0] == "c" else None
        if isinstance(e, (ast.List, ast.Tuple, ast.Set)):
            for x in e.elts:
                r = self.ev(x, scope, depth + 1)
                if r is not None:
                    return ("c", r)
            return None
        if isinstance(e, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            r = self.ev(e.elt, scope, depth + 1)
            return ("c", r) if r is not None else None
        if isinstance(e, ast.DictComp):
            r = self.ev(e.value, scope, depth + 1)
            return ("c", r) if r is not None else None
        if isinstance(e, ast.Dict):
            for x in e.values:
                r = self.ev(x, scope, depth + 1)
                if r is not None:
                    return ("c", r)
            return None
        if isinstance(e, ast.IfExp):
            a, b = self.ev(e.body, scope, depth + 1), self.ev(e.orelse, scope, depth + 1)
            if (a is None and _is_object(e.body)) or (b is None and _is_object(e.orelse)):
                return OTHER if (a or b) else None  # FlashInfer's or another object
            return a or b
        if isinstance(e, ast.BoolOp):
            for x in e.values:
                r = self.ev(x, scope, depth + 1)
                if r is not None:
                    return r
            return None
        if isinstance(e, (ast.Await, ast.NamedExpr)):
            return self.ev(e.value, scope, depth + 1)
        return None

    def _ev_call(self, e: ast.Call, scope: Scope, depth: int) -> Ref | None:
        f = self.ev(e.func, scope, depth + 1)
        if f is not None:
            if f[0] == "p" and self.project.is_class(f[1]):
                return ("i", f[1])
            if f[0] == "f":
                return f[1]  # type: ignore[no-any-return]
            return None
        name = ast.unparse(e.func)
        consts = [
            a.value for a in e.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
        ]
        if name == "getattr" and len(e.args) >= 2:
            obj = self.ev(e.args[0], scope, depth + 1)
            attr = e.args[1]
            if obj is not None and obj[0] in ("p", "xm", "i"):
                if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                    return self._ev(
                        ast.Attribute(e.args[0], attr.value, ast.Load()), scope, depth + 1
                    )
                if obj[0] == "p":
                    self.dynamic.append((e.lineno, f"getattr({obj[1]}, {ast.unparse(attr)})"))
            return None
        if name.rpartition(".")[2] in ("import_module", "__import__") and e.args:
            a = e.args[0]
            if isinstance(a, ast.Constant) and isinstance(a.value, str):
                if a.value.split(".")[0] == "flashinfer":
                    return ("p", a.value if name.endswith("import_module") else "flashinfer")
            elif name.endswith("import_module"):
                self.dynamic.append((e.lineno, f"{name}({ast.unparse(a)})"))
            return None
        # a lazy per-symbol wrapper: f("flashinfer.fused_moe", "cutlass_fused_moe")
        h = self.project.history
        for k, s in enumerate(consts):
            if s.split(".")[0] == "flashinfer" and s in h.modules:
                rest = [c for c in consts[k + 1 :] if c.isidentifier()]
                for name_ in rest[:1]:
                    if name_ in self.project.attr_names(s):
                        return ("p", f"{s}.{name_}")
                return ("p", s)
        return None

    # -- sites --------------------------------------------------------------------------
    def collect(self) -> None:
        self.sites = []
        self._collect_block(self.tree.body, self.scope, lazy=False)
        self.sites.sort(key=lambda s: (s.line, s.span[1]))

    def _collect_block(self, body: Iterable[ast.AST], scope: Scope, lazy: bool) -> None:
        for node in body:
            self._collect(node, scope, lazy)

    def _collect(self, node: ast.AST, scope: Scope, lazy: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for deco in node.decorator_list:
                self._collect(deco, scope, lazy)
            if not isinstance(node, ast.ClassDef):
                for d in [*node.args.defaults, *node.args.kw_defaults]:
                    if d is not None:
                        self._collect(d, scope, lazy)
            own = self._scopes.get(id(node), scope)
            inner = scope if isinstance(node, ast.ClassDef) else own
            self._collect_block(node.body, inner, lazy=True)
            return
        if isinstance(node, ast.Import):
            for al in node.names:
                if al.name.split(".")[0] == "flashinfer":
                    self._site(
                        node, "import", al.name, alias=al.asname or al.name.split(".")[0], lazy=lazy
                    )
            return
        if isinstance(node, ast.ImportFrom):
            mod = self._from_module(node)
            if mod is not None and mod.split(".")[0] == "flashinfer":
                for al in node.names:
                    path = mod if al.name == "*" else f"{mod}.{al.name}"
                    self._site(node, "import", path, alias=al.asname or al.name, lazy=lazy)
            return
        if isinstance(
            node, (ast.Try, ast.If, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)
        ) or type(node).__name__ in ("TryStar", "Match"):
            lazy = True if not isinstance(node, (ast.With, ast.AsyncWith)) else lazy
            for child in ast.iter_child_nodes(node):
                self._collect(child, scope, lazy)
            return
        if isinstance(node, ast.Call):
            how = self._call(node, scope)
            if how is not None:
                if how != "probe":
                    for a in node.args:
                        self._collect(a, scope, lazy)
                    for k in node.keywords:
                        self._collect(k.value, scope, lazy)
                if how == "method" and isinstance(node.func, ast.Attribute):
                    self._collect(node.func.value, scope, lazy)  # the receiver's own calls
                return
        elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            r = self.ev(node, scope)
            if r is not None and r[0] == "p":
                if r[1] not in self.project.history.modules:  # a module is no object
                    self._site(node, "reference", r[1])
                return
        elif isinstance(node, ast.Lambda):
            self._collect(node.body, scope, lazy)
            return
        for child in ast.iter_child_nodes(node):
            self._collect(child, scope, lazy)

    def _call(self, node: ast.Call, scope: Scope) -> str | None:
        """Record ``node`` if it calls FlashInfer (or probes it): ``"call"``, ``"method"``
        (on an instance) or ``"probe"``; None if it does neither."""
        f = self.ev(node.func, scope)
        if f is None:
            if (
                isinstance(node.func, ast.Name)
                and node.func.id == "hasattr"
                and len(node.args) == 2
            ):
                obj = self.ev(node.args[0], scope)
                attr = node.args[1]
                if (
                    obj is not None
                    and obj[0] == "p"
                    and isinstance(attr, ast.Constant)
                    and isinstance(attr.value, str)
                ):
                    self._site(node, "probe", f"{obj[1]}.{attr.value}")
                    return "probe"
            return None
        if f[0] == "p":
            path, bound = f[1], False
        elif f[0] == "m":
            path, bound = f"{f[1]}.{f[2]}", True
            repl = self.project.override(f[1], f[2])
            if repl is not None:  # the project replaced the method on its instances
                return self._replaced(node, path, repl)
        elif f[0] == "i":
            path, bound = f"{f[1]}.__call__", True
        else:
            return None
        starred = any(isinstance(a, ast.Starred) for a in node.args)
        self._site(
            node.func,
            "call",
            path,
            bound=bound,
            positional=None if starred else len(node.args),
            keywords=[k.arg for k in node.keywords if k.arg is not None],
            star_kw=any(k.arg is None for k in node.keywords),
            alias=ast.unparse(node.func),
            call=node,
        )
        return "method" if bound else "call"

    def _replaced(self, node: ast.Call, path: str, repl: Ref) -> str:
        starred = any(isinstance(a, ast.Starred) for a in node.args)
        kws = [k.arg for k in node.keywords if k.arg is not None]
        if repl[0] == "partial":
            self._site(
                node.func,
                "call",
                repl[1],
                positional=None if starred else len(node.args) + repl[2],
                keywords=[*repl[3], *kws],
                star_kw=any(k.arg is None for k in node.keywords),
                alias=f"{ast.unparse(node.func)} (= partial({repl[1]}, ...))",
                call=node,
                via_partial=True,
            )
        else:
            self._site(node.func, "call", path, bound=True, keywords=kws, call=node, replaced=True)
        return "method"

    def _segment(self, node: ast.expr | ast.stmt) -> str:
        """The source text of ``node`` (its first 300 characters are enough)."""
        if self._lines is None:
            self._lines = self.source.splitlines()
        a, b = node.lineno, node.end_lineno or node.lineno
        lines = self._lines[a - 1 : min(b, a + 12)]
        if not lines:
            return ast.unparse(node)
        raw = [ln.encode("utf-8") for ln in lines]
        end = node.end_col_offset if b < a + 12 else None
        if len(raw) == 1:
            text = raw[0][node.col_offset : end].decode("utf-8", "replace")
        else:
            last = raw[-1][:end] if b < a + 12 else raw[-1]
            text = b"\n".join([raw[0][node.col_offset :], *raw[1:-1], last]).decode(
                "utf-8", "replace"
            )
        return text

    def _site(
        self,
        node: ast.expr | ast.stmt,
        kind: str,
        path: str,
        call: ast.Call | None = None,
        lazy: bool = False,
        **kw: Any,
    ) -> None:
        code_node = call or node
        code = " ".join(self._segment(code_node).split())
        if len(code) > 100:
            code = code[:97] + "..."
        span = (
            node.lineno,
            node.col_offset,
            node.end_lineno or node.lineno,
            node.end_col_offset or 0,
        )
        stmt = (node.lineno, node.col_offset) if kind == "import" else None
        site = Site(self.display, node.lineno, kind, path, code, span, statement=stmt, lazy=lazy)
        site.node, site.call = node, call
        for k, v in kw.items():
            setattr(site, k, v)
        self.sites.append(site)


def _union(parts: list[Ref | None]) -> Ref | None:
    """A union's reference: its one FlashInfer member, OTHER when a member is not
    FlashInfer's (ambiguous), None when nothing is known."""
    known = [p for p in parts if p is not None]
    if not known:
        return None
    fi = [p for p in known if p != OTHER]
    return fi[0] if fi and len(fi) == len(known) else OTHER


def _is_object(value: ast.expr | None) -> bool:
    """An expression that builds an object (a call), so a name it is assigned to may
    hold something else than FlashInfer's."""
    if isinstance(value, ast.IfExp):
        return _is_object(value.body) or _is_object(value.orelse)
    return isinstance(value, ast.Call)


_ANNOTATIONS: dict[str, ast.expr | None] = {}


def _parse_annotation(text: str) -> ast.expr | None:
    """A string annotation's expression (parsed once per distinct string)."""
    if text not in _ANNOTATIONS:
        try:
            _ANNOTATIONS[text] = ast.parse(text, mode="eval").body
        except SyntaxError:
            _ANNOTATIONS[text] = None
    return _ANNOTATIONS[text]


def _walk_own(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function body, not those of functions nested in it."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


class Project:
    """Every file of the scan that touches FlashInfer, and the project's modules."""

    def __init__(self, history: History) -> None:
        self.history = history
        self.files: list[FileAnalysis] = []
        self.modules: dict[str, FileAnalysis] = {}
        self._attr: dict[str, Ref | None] = {}
        self._attr_index: dict[str, set[Ref]] = {}
        self._attr_built = False
        self._classes: dict[str, bool] = {}
        self._names: dict[str, set[str]] = {}
        self.scanned = 0
        self.errors: list[tuple[str, str]] = []

    def attr_names(self, module: str) -> set[str]:
        """Every name ``module`` exposes in some release (and its submodules)."""
        if module not in self._names:
            out = set(self.history.names.get(module, {}))
            prefix = module + "."
            out |= {
                m[len(prefix) :].split(".")[0] for m in self.history.modules if m.startswith(prefix)
            }
            self._names[module] = out
        return self._names[module]

    def is_class(self, path: str) -> bool:
        """Whether ``path`` is a FlashInfer class in some release."""
        if path not in self._classes:
            h = self.history
            module, rest = h.split(path)
            hit = False
            if len(rest) == 1:
                runs = h.names.get(module, {}).get(rest[0], [])
                for run in runs:
                    rec = h.record(h.def_keys[run[2]], run[0])
                    if rec is not None and rec.get("k") == "c":
                        hit = True
                        break
            self._classes[path] = hit
        return self._classes[path]

    def resolve(self, r: Ref, depth: int = 0) -> Ref | None:
        while r[0] == "x" and depth < 20:
            nxt = self.export(r[1], r[2])
            if nxt is None:
                return None
            r, depth = nxt, depth + 1
        if r[0] in ("c", "f") and r[1][0] == "x":
            inner = self.resolve(r[1], depth + 1)
            return None if inner is None else (r[0], inner)
        return r if r[0] != "x" else None

    def override(self, cls: str, method: str) -> Ref | None:
        """What the project assigns over ``cls.method`` on its instances, if anything."""
        for fa in self.files:
            hit = fa.overrides.get((cls, method))
            if hit is not None:
                return hit
        return None

    def is_fi(self, r: Ref) -> bool:
        """Whether ``r`` stands for something of FlashInfer's (not a project module)."""
        rr = self.resolve(r)
        while rr is not None and rr[0] in ("c", "f"):
            rr = rr[1]
        return rr is not None and rr[0] in ("p", "i", "m")

    def export(self, module: str, name: str) -> Ref | None:
        fa = self.modules.get(module)
        if fa is not None:
            r = fa.scope.vars.get(name)
            if r is not None:
                return r
        if f"{module}.{name}" in self.modules:
            return ("xm", f"{module}.{name}")
        return None

    def member(self, module: str, name: str) -> Ref | None:
        r = self.export(module, name)
        return self.resolve(r) if r is not None else None

    def attr(self, name: str) -> Ref | None:
        """What ``<anything>.name`` holds where the project assigns that attribute one
        kind of FlashInfer object (an instance or a container of instances)."""
        if not self._attr_built:
            index: dict[str, set[Ref]] = {}
            for fa in self.files:
                for n, refs in fa.attrs.items():
                    index.setdefault(n, set()).update(refs)
            self._attr_index = index
            self._attr_built = True
        if name not in self._attr:
            seen: set[Ref] = set()
            for r in self._attr_index.get(name, ()):
                rr = self.resolve(r)
                if rr is not None:
                    seen.add(rr)
            self._attr[name] = seen.pop() if len(seen) == 1 else None
        return self._attr[name]

    # -- the scan -----------------------------------------------------------------------
    def load(self, roots: list[Path]) -> None:
        """Read every ``*.py`` below ``roots``; analyse those that mention FlashInfer, then
        those that mention a name the analysed ones export, until none is new."""
        texts: dict[Path, tuple[bytes, Path]] = {}
        for root in roots:
            for path in _python_files(root):
                try:
                    texts[path] = (path.read_bytes(), root)
                except OSError as exc:
                    self.errors.append((str(path), str(exc)))
        self.scanned = len(texts)
        pending = [p for p, (b, _) in texts.items() if b"flashinfer" in b]
        done: set[Path] = set()
        while pending:
            for path in pending:
                done.add(path)
                data, root = texts[path]
                self._add(path, root, data)
            self._settle()
            # a file that imports an exported name from a project module names that
            # module too (``from vllm.utils.flashinfer import autotune``): both must occur
            tails: dict[bytes, set[bytes]] = {}
            for fa in self.files:
                for n, r in fa.scope.vars.items():
                    if self.is_fi(r):
                        for m in fa.names:
                            tails.setdefault(n.encode(), set()).add(m.rpartition(".")[2].encode())
            if not tails:
                break
            pat = re.compile(rb"\b(" + b"|".join(re.escape(n) for n in sorted(tails)) + rb")\b")
            pending = []
            for p, (b, _) in texts.items():
                if p in done:
                    continue
                hits = set(pat.findall(b))
                if any(t in b for n in hits for t in tails[n]):
                    pending.append(p)
        for fa in self.files:
            fa.collect()

    def _add(self, path: Path, root: Path, data: bytes) -> None:
        display = os.path.relpath(path, root.parent)
        try:
            source = data.decode("utf-8-sig")  # a byte-order mark is no source
            tree = ast.parse(source, str(path))
        except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
            self.errors.append((display, f"not parsed: {exc}"))
            return
        fa = FileAnalysis(
            self,
            path,
            display,
            source,
            tree,
            module_name(path, root if root.is_dir() else root.parent),
        )
        self.files.append(fa)
        for n in fa.names:
            self.modules.setdefault(n, fa)

    def _settle(self) -> None:
        for _ in range(3):  # references across files and scopes settle in a few rounds
            self._attr.clear()
            self._attr_built = False
            for fa in self.files:
                fa.bind()
        self._attr.clear()
        self._attr_built = False


def _python_files(root: Path) -> Iterator[Path]:
    if root.is_file():
        if root.suffix == ".py":
            yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for f in sorted(filenames):
            if f.endswith(".py"):
                yield Path(dirpath) / f
