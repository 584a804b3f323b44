"""``Emulation.reads``: the arguments an emulation's ``needed`` and ``check`` read.

The generated code hands those two methods a dict of just the declared names (the full
argument dict is built only for a hook that runs).  A name missing from ``reads`` would
be a ``KeyError`` at call time, a name too many costs a dict entry: this test derives
the set from the methods' source (``kw["name"]`` reads, followed into ``self.<method>``
calls) and requires the declaration to match, or to be ``None`` where the source hands
``kw`` on, iterates it or writes it.
"""

from __future__ import annotations

import ast
import inspect
import textwrap

import pytest

from fi_compat._core.table import Emulation
from fi_compat._facades import entry_points


def _method(cls: type, name: str) -> object:
    for k in cls.__mro__:
        if name in k.__dict__:
            return k.__dict__[name]
    return None


def derived_reads(cls: type, method: str) -> frozenset[str] | None:
    """What ``method`` reads from its ``kw``; ``None`` when ``kw`` escapes."""
    fn = _method(cls, method)
    if fn is None or fn is Emulation.__dict__.get(method):
        return frozenset()
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))  # type: ignore[arg-type]
    f = tree.body[0]
    assert isinstance(f, ast.FunctionDef)
    kwname = f.args.args[2].arg
    parents = {ch: node for node in ast.walk(f) for ch in ast.iter_child_nodes(node)}
    names: set[str] = set()
    for node in ast.walk(f):
        if not (isinstance(node, ast.Name) and node.id == kwname):
            continue
        p = parents.get(node)
        if (
            isinstance(p, ast.Subscript)
            and p.value is node
            and isinstance(p.slice, ast.Constant)
            and isinstance(p.ctx, ast.Load)
        ):
            names.add(p.slice.value)
            continue
        if (
            isinstance(p, ast.Call)
            and isinstance(p.func, ast.Attribute)
            and isinstance(p.func.value, ast.Name)
            and p.func.value.id == "self"
        ):
            sub = derived_reads(cls, p.func.attr)
            if sub is None:
                return None
            names |= sub
            continue
        return None
    return frozenset(names)


def _classes() -> list[type]:
    seen: dict[type, None] = {}
    for e in entry_points():
        for em in e.emulations.values():
            seen[type(em)] = None
    return list(seen)


CLASSES = _classes()


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_reads_is_what_needed_and_check_read(cls: type) -> None:
    a, b = derived_reads(cls, "needed"), derived_reads(cls, "check")
    want = None if a is None or b is None else a | b
    got = cls.reads  # type: ignore[attr-defined]
    assert (None if got is None else frozenset(got)) == want, (cls.__name__, got, want)


def test_reads_names_stable_parameters() -> None:
    for e in entry_points():
        for em in e.emulations.values():
            extra = set(em.reads or ()) - set(e.order)
            assert not extra, (e.dotted, type(em).__name__, extra)


def test_the_derivation_sees_an_escaping_kw() -> None:
    class Escapes(Emulation):
        def needed(self, adapter: object, kw: dict[str, object]) -> bool:
            return helper(kw)  # type: ignore[no-any-return]

    class Reads(Emulation):
        def needed(self, adapter: object, kw: dict[str, object]) -> bool:
            return kw["a"] is not None and self._more(adapter, kw)

        def _more(self, adapter: object, kw: dict[str, object]) -> bool:
            return kw["b"] is None

    def helper(kw: object) -> bool:
        return True

    assert derived_reads(Escapes, "needed") is None
    assert derived_reads(Reads, "needed") == {"a", "b"}
    assert len(CLASSES) >= 15
