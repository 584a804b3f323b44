#!/usr/bin/env python3
"""Generate signature snapshots of FlashInfer entry points from the PyPI wheels, statically.

    python tools/snapshot.py flashinfer.gdn_prefill:chunk_gated_delta_rule \
        [--since 0.6.0] [--until 0.7.4] [--wheels ~/.cache/fi_compat/wheels]

For every release in ``fi_compat.registry.KNOWN_RELEASES`` within the bounds it downloads
the wheel (``pip download --no-deps``, cached in ``--wheels``), or for the releases before
0.5.0, which PyPI has as source distributions only, the sdist; reads the module's source
out of the archive and finds the function with :mod:`ast` -- nothing is imported, built
or executed.  ``--merge`` keeps the releases an existing snapshot has outside the bounds.
``module:qualname`` takes ``Class.method`` qualnames (``Class.__init__`` of a
``@dataclass`` without its own ``__init__``: ``self`` and its fields, ``"dataclass":
true``); an enum class name (``flashinfer.fused_moe:ActivationType``, or a plain class of
integer constants such as ``flashinfer.comm:AllReduceFusionPattern``) records its members
and integer values (``"kind": "enum"``); any other class name records its constructor: a
``@dataclass``'s fields as the parameters of the ``__init__`` it generates (``"class":
"dataclass"``), a plain class's ``__init__`` without ``self`` (``"class": "class"``);
``mod_a|mod_b:name`` takes the first module (in order) that has the name;
``mod:name|old_name`` takes ``name``, else the older spelling ``old_name`` (recorded as
``"attr"`` in that release's record; the snapshot is named after ``name``);
``from .x import name`` (and ``*``) re-exports are followed to the defining module; a
name no top-level statement binds is looked up in the top-level ``if`` / ``try`` blocks
(the last binding wins).  The result is written (never edited by hand) to
``src/fi_compat/_snapshots/<module>.<qualname>.json``: unique signatures once, and per
release the defining module and the signature id (``null`` where the name is absent).

``--facts`` then regenerates ``src/fi_compat/_core/_facts.py``, the per-release facts
(first release of each entry point and parameter, removals, gaps, positional prefix)
the adapter tables read instead of typing releases by hand.

Methods (``Class.method``) are read as Python binds them, statically:

* a class-body alias ``begin_forward = plan`` (``Name = Name``, the right side a method
  bound earlier in the same class body) gives the aliased method's parameters and
  ``"alias_of": "plan"``; any other assignment to the name (``functools.partialmethod``)
  is no signature (``null``);
* a name the class body does not bind is looked up in its bases, left to right, depth
  first (static, by name: a class of the same module or one imported relatively or from
  ``flashinfer``); the base's own aliases refer to the base's methods, as at run time;
  the release records ``"inherited_from": "Base"`` (the class that binds it) and, where
  that class lives in another module, ``"inherited_module"``;
* a forwarder -- a method with both ``*args`` and ``**kwargs`` whose body calls exactly
  one private method of its own class, ``self._x(..., **kw)`` (a ``**`` argument), such
  as ``BatchDecodeWithPagedKVCacheWrapper.plan`` from 0.6.15 on (``plan(self, indptr,
  ..., page_size, *deprecated_positional_args, **kwargs)`` calling ``self._plan_impl``)
  -- is recorded with the callee's parameters and ``"via": "_x"``, plus
  ``"public_positional": N``, the forwarder's own named positional parameters (``self``
  not counted), and, where the body hands its ``*args`` to a call together with a
  module-level tuple of parameter names (``_BATCH_DECODE_PLAN_LEGACY_POS_ARGS``),
  ``"varargs_as"``: those names, the ones extra positional arguments are bound to.

A function bound by a module-level alias (``autotuner_initializer_empty = _empty``)
records the ``def``'s own name as ``"defined_as"``.

Every function or method release also records ``"returns"``: the return annotation's
source (the public method's, for an alias or a forwarder), or ``null``.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from packaging.version import Version  # noqa: E402

from fi_compat.registry import KNOWN_RELEASES  # noqa: E402

SNAPSHOT_DIR = ROOT / "src" / "fi_compat" / "_snapshots"
KINDS = {"posonlyargs": "po", "args": "pk", "kwonlyargs": "ko"}


def release_archive(version: str, cache: Path) -> Path:
    """The release's wheel, or its sdist where PyPI has no wheel (before 0.5.0)."""
    cache.mkdir(parents=True, exist_ok=True)
    wheel = cache / f"flashinfer_python-{version}-py3-none-any.whl"
    sdist = cache / f"flashinfer_python-{version}.tar.gz"
    for path in (wheel, sdist):
        if path.exists():
            return path
    if Version(version) < Version("0.5.0"):
        _fetch_sdist(version, sdist)
        return sdist
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "-d",
            str(cache),
            f"flashinfer-python=={version}",
        ],
        check=True,
    )
    return wheel


SIMPLE_INDEX = os.environ.get("FI_COMPAT_SIMPLE_INDEX", "https://pypi.org/simple")


def _fetch_sdist(version: str, dest: Path) -> None:
    """The sdist file from the simple index, checked against its sha256 (``pip
    download`` would run the sdist's setup.py to read its metadata, which fails for
    some of these releases without CUDA)."""
    import re
    import urllib.request

    page = urllib.request.urlopen(f"{SIMPLE_INDEX}/flashinfer-python/").read().decode()
    for url, name in re.findall(r'href="([^"]+)"[^>]*>([^<]+)<', page):
        if name == dest.name:
            href, _, frag = url.partition("#sha256=")
            data = urllib.request.urlopen(href).read()
            if frag and hashlib.sha256(data).hexdigest() != frag:
                raise RuntimeError(f"{name}: sha256 mismatch")
            dest.write_bytes(data)
            return
    raise FileNotFoundError(f"{dest.name} is not on {SIMPLE_INDEX}")


class Archive:
    """The files of a wheel (zip) or an sdist (tar.gz, one top-level folder), by the
    path a wheel would have them at (``flashinfer/norm.py``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._zip = zipfile.ZipFile(path) if path.suffix == ".whl" else None
        self._tar = None if self._zip else tarfile.open(path, "r:gz")  # noqa: SIM115 (close())
        self._names: dict[str, str] = {}
        self.trees: dict[str, tuple[str, ast.Module] | None] = {}  # parsed once, by _tree
        if self._tar is not None:
            for m in self._tar.getmembers():
                if m.isfile() and m.name.endswith(".py"):
                    self._names[m.name.partition("/")[2]] = m.name

    def read(self, name: str) -> bytes:
        if self._zip is not None:
            return self._zip.read(name)
        assert self._tar is not None
        fh = self._tar.extractfile(self._names[name])  # KeyError when absent, as zip
        assert fh is not None
        return fh.read()

    def close(self) -> None:
        (self._zip or self._tar).close()  # type: ignore[union-attr]


def _module_source(zf: Archive, module: str) -> tuple[str, str] | None:
    base = module.replace(".", "/")
    for cand in (f"{base}.py", f"{base}/__init__.py"):
        try:
            return cand, zf.read(cand).decode("utf-8")
        except KeyError:
            continue
    return None


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[list[str | None]]:
    a = fn.args
    out: list[list[str | None]] = []
    positional = [*a.posonlyargs, *a.args]
    pos_defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults))
    pos_defaults += list(a.defaults)
    for i, arg in enumerate(positional):
        kind = "po" if i < len(a.posonlyargs) else "pk"
        d = pos_defaults[i]
        out.append([arg.arg, kind, ast.unparse(d) if d is not None else None, _ann(arg)])
    if a.vararg:
        out.append([a.vararg.arg, "va", None, _ann(a.vararg)])
    for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        out.append([arg.arg, "ko", ast.unparse(d) if d is not None else None, _ann(arg)])
    if a.kwarg:
        out.append([a.kwarg.arg, "vk", None, _ann(a.kwarg)])
    return out


def _members(cls: ast.ClassDef) -> list[list[str | None]]:
    """An enum class body as [[name, "member", integer value, None], ...] (``X = 3`` and
    ``X = (3,)`` both give 3; members are in definition order)."""
    out: list[list[str | None]] = []
    for node in cls.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(value, ast.Tuple) and len(value.elts) == 1:
                value = value.elts[0]
            if (
                isinstance(target, ast.Name)
                and isinstance(value, ast.Constant)
                and type(value.value) is int
                and not target.id.startswith("_")
            ):
                out.append([target.id, "member", str(value.value), None])
    return out


def _decorator(cls: ast.ClassDef, name: str) -> ast.expr | None:
    """The decorator ``name`` (``@name``, ``@x.name``, ``@name(...)``) of ``cls``, or None."""
    for d in cls.decorator_list:
        f = d.func if isinstance(d, ast.Call) else d
        if (isinstance(f, ast.Name) and f.id == name) or (
            isinstance(f, ast.Attribute) and f.attr == name
        ):
            return d
    return None


def _is_enum(cls: ast.ClassDef) -> bool:
    """A base named ``*Enum`` (``IntEnum``, ``enum.Enum``): an enum's members, not a
    constructor, are its record."""
    names = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in cls.bases]
    return any(n.endswith("Enum") for n in names)


def _fields(cls: ast.ClassDef, dec: ast.expr) -> list[list[str | None]]:
    """A ``@dataclass`` body as its generated ``__init__``'s parameters: the annotated
    names in order (``ClassVar`` skipped), keyword-only under ``kw_only=True``, the
    default's source (``field(default_factory=...)`` as written)."""
    kw_only = isinstance(dec, ast.Call) and any(
        k.arg == "kw_only" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in dec.keywords
    )
    out: list[list[str | None]] = []
    for node in cls.body:
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        ann = ast.unparse(node.annotation)
        if ann.startswith(("ClassVar", "typing.ClassVar")):
            continue
        default = ast.unparse(node.value) if node.value is not None else None
        out.append([node.target.id, "ko" if kw_only else "pk", default, ann])
    return out


def _constants_only(cls: ast.ClassDef) -> bool:
    """A plain class of integer constants (``AllReduceFusionPattern``): members, no
    ``__init__``, no base."""
    has_init = any(
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "__init__"
        for n in cls.body
    )
    return not cls.bases and not has_init and bool(_members(cls))


def _ann(arg: ast.arg) -> str | None:
    return ast.unparse(arg.annotation) if arg.annotation is not None else None


Fn = ast.FunctionDef | ast.AsyncFunctionDef
Extra = dict[str, object]  # the keys a release record has besides module and signature
Hit = tuple[str, list[list[str | None]], Extra]  # (defining module, params, extra keys)
Binding = tuple[str, ast.Module, "Fn | ast.ClassDef"]  # (module, its tree, def or class)


def _tree(zf: Archive, module: str) -> tuple[str, ast.Module] | None:
    """(file name, parsed tree) of ``module`` in the archive, parsed once per archive."""
    if module not in zf.trees:
        found = _module_source(zf, module)
        zf.trees[module] = None if found is None else (found[0], ast.parse(found[1], found[0]))
    return zf.trees[module]


def _binding(zf: Archive, module: str, name: str, depth: int = 0) -> Binding | None:
    """The top-level ``def`` or ``class`` that ``module.name`` is bound to, re-exports
    (``from .x import name``, ``*``, and the absolute ``from flashinfer.x import name``
    of 0.6.15's ``flashinfer/autotuner/__init__.py``) and module-level aliases (``a = b``)
    followed to the defining module."""
    found = _tree(zf, module)
    if found is None or depth > 5:
        return None
    fname, tree = found
    result = _bound_in(zf, module, fname, tree, tree.body, name, depth)
    if result is None:  # only then: a definition inside a top-level ``if`` / ``try``
        result = _bound_in(zf, module, fname, tree, _nested(tree.body), name, depth)
    return result


def _nested(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of the top-level ``if`` / ``try`` blocks, in source order (``if
    IS_BUILDING_DOCS: class X (a stub) ... else: class X (the real one)``: the last
    binding, the real one, wins, as at run time outside a docs build)."""
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            out += _nested(node.body) + node.body + _nested(node.orelse) + node.orelse
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse):
                out += _nested(block) + block
    return out


def _bound_in(
    zf: Archive,
    module: str,
    fname: str,
    tree: ast.Module,
    body: list[ast.stmt],
    name: str,
    depth: int,
) -> Binding | None:
    result: Binding | None = None
    for node in body:  # the last binding wins, as at run time
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                result = (module, tree, node)
        elif (
            isinstance(node, ast.Assign)
            and [ast.unparse(t) for t in node.targets] == [name]
            and isinstance(node.value, ast.Name)
            and node.value.id != name
        ):
            # a module-level alias, ``autotuner_initializer_empty = _empty`` (0.6.15
            # autotuner/initializers.py): what the right side is bound to so far
            result = _bound_in(
                zf, module, fname, tree, body[: body.index(node)], node.value.id, depth
            )
        elif isinstance(node, ast.ImportFrom) and (
            node.level >= 1 or (node.module or "").split(".")[0] == "flashinfer"
        ):
            for alias in node.names:
                star = alias.name == "*"
                if star or (alias.asname or alias.name) == name:
                    pkg = module if fname.endswith("__init__.py") else module.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        pkg = pkg.rpartition(".")[0]
                    if node.level == 0:
                        target = str(node.module)
                    else:
                        target = f"{pkg}.{node.module}" if node.module else pkg
                    hit = _binding(zf, target, name if star else alias.name, depth + 1)
                    if hit is not None:
                        result = hit
    return result


def _base(zf: Archive, module: str, tree: ast.Module, expr: ast.expr) -> Binding | None:
    """The class a base-class expression names: one of the same module, imported
    relatively, or ``from flashinfer.x import Base`` (by name; anything else: None)."""
    name = expr.id if isinstance(expr, ast.Name) else None
    if name is None:
        return None
    hit = _binding(zf, module, name)
    if hit is None:  # absolute imports, which _binding does not follow
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] != "flashinfer":
                    continue
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        hit = _binding(zf, node.module, alias.name) or hit
    return hit if hit is not None and isinstance(hit[2], ast.ClassDef) else None


def _member(
    zf: Archive, module: str, tree: ast.Module, cls: ast.ClassDef, name: str, depth: int = 0
) -> tuple[Fn, Extra, ast.Module] | None:
    """The function ``cls.name`` is bound to, how (``alias_of``: a class-body alias,
    ``inherited_from``: found in a base) and the tree of the module that defines it;
    None when absent or not a function."""
    bound: dict[str, tuple[Fn, str | None] | None] = {}
    for node in cls.body:  # in order: an alias takes what the name is bound to then
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bound[node.name] = (node, None)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            for t in targets:
                if not isinstance(t, ast.Name):
                    continue
                src = bound.get(value.id) if isinstance(value, ast.Name) else None
                bound[t.id] = (src[0], src[0].name) if src is not None else None
    if name in bound:
        hit = bound[name]
        return None if hit is None else (hit[0], {"alias_of": hit[1]} if hit[1] else {}, tree)
    if depth > 5:
        return None
    for expr in cls.bases:  # left to right, depth first (the MRO of single inheritance)
        base = _base(zf, module, tree, expr)
        if base is None or not isinstance(base[2], ast.ClassDef):
            continue
        found = _member(zf, base[0], base[1], base[2], name, depth + 1)
        if found is not None:
            fn, extra, fn_tree = found
            if "inherited_from" not in extra:
                extra = {**extra, "inherited_from": base[2].name}
                if base[0] != module:
                    extra["inherited_module"] = base[0]
            return fn, extra, fn_tree
    return None


def _forwarded(
    zf: Archive, module: str, tree: ast.Module, cls: ast.ClassDef, fn: Fn, fn_tree: ast.Module
) -> tuple[Fn, Extra] | None:
    """The private method a ``*args, **kwargs`` forwarder ``fn`` (defined in ``fn_tree``)
    hands its call to, looked up from ``cls`` as ``self._x`` is at run time (see the
    module docstring), and the extra keys that say so; None for any other method."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    if a.vararg is None or a.kwarg is None or not positional:
        return None
    me = positional[0].arg
    callees: set[str] = set()
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == me
            and node.func.attr.startswith("_")
            and any(k.arg is None for k in node.keywords)
        ):
            callees.add(node.func.attr)
    if len(callees) != 1:
        return None
    callee = callees.pop()
    found = _member(zf, module, tree, cls, callee)
    if found is None:
        return None
    extra: Extra = {"via": callee, "public_positional": len(positional) - 1}
    names = _varargs_as(fn_tree, fn, a.vararg.arg)
    if names is not None:
        extra["varargs_as"] = names
    return found[0], extra


def _varargs_as(tree: ast.Module, fn: Fn, vararg: str) -> list[str] | None:
    """The names a forwarder binds its ``*args`` to: a module-level tuple (or list) of
    strings passed, by name, to the same call as the ``*args`` tuple itself."""
    consts: dict[str, list[str]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, (ast.Tuple, ast.List)):
            elts = stmt.value.elts
            strs = [
                e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
            if elts and len(strs) == len(elts):
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        consts[t.id] = strs
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            args = [*node.args, *(k.value for k in node.keywords)]
            if any(isinstance(x, ast.Name) and x.id == vararg for x in args):
                for x in args:
                    if isinstance(x, ast.Name) and x.id in consts:
                        return consts[x.id]
    return None


def _returns(fn: Fn) -> str | None:
    return ast.unparse(fn.returns) if fn.returns is not None else None


def find(zf: Archive, module: str, qualname: str, depth: int = 0) -> Hit | None:
    """(defining module, params, extra release keys) of ``module.qualname`` in the
    archive, or None."""
    head, _, rest = qualname.partition(".")
    hit = _binding(zf, module, head, depth)
    if hit is None:
        return None
    defining, tree, node = hit
    if isinstance(node, ast.ClassDef) and rest:
        member = _member(zf, defining, tree, node, rest)
        dec = _decorator(node, "dataclass")
        if member is None and rest == "__init__" and dec is not None:
            params = [["self", "pk", None, None], *_fields(node, dec)]
            return defining, params, {"returns": None, "dataclass": True}
        if member is None:
            return None
        fn, extra, fn_tree = member
        target = fn
        fwd = _forwarded(zf, defining, tree, node, fn, fn_tree)
        if fwd is not None:
            target, more = fwd
            extra = {**extra, **more}
        return defining, _params(target), {"returns": _returns(fn), **extra}
    if isinstance(node, ast.ClassDef):
        dec = _decorator(node, "dataclass")
        if dec is not None:  # the constructor the decorator generates
            return defining, _fields(node, dec), {"class": "dataclass"}
        if not _is_enum(node) and not _constants_only(node):  # the constructor, no self
            init = _member(zf, defining, tree, node, "__init__")
            params = _params(init[0])[1:] if init is not None else []
            return defining, params, {"class": "class"}
        return defining, _members(node), {}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not rest:
        keys: Extra = {"returns": _returns(node)}
        if node.name != head:  # bound by a module-level alias: the def's own name
            keys["defined_as"] = node.name
        return defining, _params(node), keys
    return None


def _record(zf: Archive, entry: str) -> tuple[Hit, str | None] | None:
    """The release's hit for ``entry`` (and its own spelling of the name), or None."""
    module, _, qualname = entry.partition(":")
    names = qualname.split("|")  # older spellings of the attribute after the first
    for name in names:
        hit = None
        for candidate in module.split("|"):  # the first module that has it
            hit = hit or find(zf, candidate, name)
        if hit is not None:
            return hit, (None if name == names[0] else name)
    return None


def snapshot(
    entry: str, since: str, until: str, cache: Path, old: dict | None = None
) -> dict[str, object]:
    """The snapshot of one entry (see :func:`snapshot_all`)."""
    return snapshot_all([entry], since, until, cache, [old])[0]


def snapshot_all(
    entries: list[str],
    since: str,
    until: str,
    cache: Path,
    olds: list[dict | None] | None = None,
) -> list[dict[str, object]]:
    """The snapshots of ``entries``, each release's archive opened (and hashed) once for
    all of them."""
    lo, hi = KNOWN_RELEASES.index(since), KNOWN_RELEASES.index(until)
    olds = olds or [None] * len(entries)
    sigs: list[dict[str, list]] = [dict(o["signatures"]) if o else {} for o in olds]
    by_key = [{json.dumps(p): sid for sid, p in sg.items()} for sg in sigs]
    releases: list[dict[str, dict | None]] = [{} for _ in entries]
    wanted = set(KNOWN_RELEASES[lo : hi + 1])
    for version in KNOWN_RELEASES:
        if version not in wanted:
            for i, o in enumerate(olds):
                if o and version in o["releases"]:
                    releases[i][version] = o["releases"][version]
            continue
        path = release_archive(version, cache)
        zf = Archive(path)
        try:
            hits = [_record(zf, entry) for entry in entries]
        finally:
            zf.close()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if any(hits) else ""
        key_name = "wheel_sha256" if path.suffix == ".whl" else "sdist_sha256"
        for i, found in enumerate(hits):
            if found is None:
                releases[i][version] = None
                continue
            (defining, params, extra), attr = found
            if attr is not None:  # the release's own name for it (``"attr"`` in the record)
                extra = {"attr": attr, **extra}
            key = json.dumps(params)
            sid = by_key[i].get(key)
            if sid is None:
                sid = by_key[i][key] = f"s{len(sigs[i])}"
                sigs[i][sid] = params
            releases[i][version] = {"module": defining, "signature": sid, **extra, key_name: digest}
            how = " ".join(
                f"{k}={v}" for k, v in extra.items() if k not in ("returns", "varargs_as")
            )
            print(
                f"{version:14s} {entries[i]:40s} {defining:40s} {sid} ({len(params)} params) {how}",
                file=sys.stderr,
            )
    out: list[dict[str, object]] = []
    for entry, sg, rel in zip(entries, sigs, releases, strict=True):
        data: dict[str, object] = {
            "entry": entry,
            "generated_by": "tools/snapshot.py (static ast read of the PyPI wheels and, before "
            "0.5.0, sdists; do not edit)",
            "param_format": [
                "name",
                "kind: po|pk|va|ko|vk",
                "default source or null",
                "annotation",
            ],
            "signatures": sg,
            "releases": rel,
        }
        if sg and all(p[1] == "member" for ps in sg.values() for p in ps) and any(sg.values()):
            data["kind"] = "enum"  # a class of integer members (facts skip it)
        out.append(data)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("entry", nargs="*", help="module:qualname, e.g. flashinfer.gdn_prefill:f")
    ap.add_argument(
        "--facts",
        action="store_true",
        help="(re)generate src/fi_compat/_core/_facts.py from the snapshots (after the entries)",
    )
    ap.add_argument("--since", default=KNOWN_RELEASES[0])
    ap.add_argument("--until", default=KNOWN_RELEASES[-1])
    default_cache = os.environ.get("FI_COMPAT_WHEEL_CACHE", "~/.cache/fi_compat/wheels")
    ap.add_argument("--wheels", default=default_cache, help="wheel cache directory")
    ap.add_argument("--out", default=str(SNAPSHOT_DIR))
    ap.add_argument(
        "--merge", action="store_true", help="keep an existing snapshot's other releases"
    )
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    paths, olds = [], []
    for entry in args.entry:
        module, _, qualname = entry.partition(":")
        stem = f"{module.split('|')[0].removeprefix('flashinfer.')}.{qualname.split('|')[0]}"
        path = out / f"{stem}.json"
        paths.append(path)
        olds.append(json.loads(path.read_text()) if args.merge and path.exists() else None)
    cache = Path(args.wheels).expanduser()
    if args.entry:  # every release's archive read once for all the entries
        datas = snapshot_all(list(args.entry), args.since, args.until, cache, olds)
        for path, data in zip(paths, datas, strict=True):
            path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
            print(f"wrote {path}", file=sys.stderr)
    if args.facts:
        from fi_compat._core import facts

        path = Path(facts.__file__).with_name("_facts.py")
        path.write_text(facts.render(positional=False))  # new entry points' facts first
        import importlib

        from fi_compat._core import _facts

        importlib.reload(_facts)
        path.write_text(facts.render())
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
