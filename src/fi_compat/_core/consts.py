"""Generated code with its fixed values as constants of the code (``LOAD_CONST``).

A generated function reads its release's values (defaults, dtypes, literal sets, the
devices found to serve) as globals.  Dynamo (``torch.compile``) installs a guard on every
global it reads, checked on every compiled call, and a second guard on a container it
tests (``x in S``: the set's equality and the membership); a constant of the code
object costs no guard (Dynamo guards the code object once, by identity).  So the
generated sources are compiled a second time with each load of such a global replaced
by a placeholder constant (:func:`compile_with_consts`), and the values are put in the
code's constants (:func:`bind`) once they are known: at the facade's warm-up, again
when one changes (a device recorded).  Only values Dynamo takes from ``LOAD_CONST``
(``ConstantVariable``: ``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes``, a
``torch.dtype``, tuples and frozensets of them) are bound; anything else leaves the
code as generated.  Eagerly a constant is one ``LOAD_CONST`` instead of a dictionary
lookup: the same value, a little cheaper.
"""

from __future__ import annotations

import ast
import warnings
from types import CodeType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

_MARK = "\x00fi_compat constant "

# where a placeholder cannot be folded by CPython's AST optimiser with a neighbouring
# constant (``not C``, ``-C``, ``C + 1``, ``C[0]`` are folded; a comparison, a call's
# argument, an assignment, a return value are not)
_SAFE_PARENTS = (ast.Compare, ast.Call, ast.keyword, ast.Assign, ast.Return)


def literal(value: Any) -> bool:
    """Whether Dynamo takes ``value`` from ``LOAD_CONST`` as a constant (no guard)."""
    t = type(value)
    if value is None or t in (bool, int, float, str, bytes):
        return True
    if t is tuple or t is frozenset:
        return all(literal(v) for v in value)
    return t.__module__ == "torch" and t.__name__ == "dtype"  # no torch import here


class _Placeholders(ast.NodeTransformer):
    def __init__(self, names: frozenset[str]) -> None:
        self.names = names
        self.used: set[str] = set()
        self.parent: ast.AST | None = None

    def generic_visit(self, node: ast.AST) -> ast.AST:
        outer, self.parent = self.parent, node
        try:
            return super().generic_visit(node)
        finally:
            self.parent = outer

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if (
            isinstance(node.ctx, ast.Load)
            and node.id in self.names
            and isinstance(self.parent, _SAFE_PARENTS)
            and not (isinstance(self.parent, ast.Call) and self.parent.func is node)
        ):
            self.used.add(node.id)
            return ast.copy_location(ast.Constant(_MARK + node.id), node)
        return node


def compile_with_consts(src: str, filename: str, names: Iterable[str]) -> CodeType | None:
    """The code of the one function ``src`` defines, with each load of a global in
    ``names`` in its body as a placeholder constant (:func:`bind` puts the values in);
    ``None`` when it loads none of them (nothing to bind).  The function's defaults are
    left to the generated function itself."""
    tree = ast.parse(src, filename)
    fdef = tree.body[0]
    assert isinstance(fdef, ast.FunctionDef), src
    marks = _Placeholders(frozenset(names))
    fdef.body = [marks.visit(stmt) for stmt in fdef.body]
    if not marks.used:
        return None
    with warnings.catch_warnings():  # ``x is <constant>``: a SyntaxWarning, as intended
        warnings.simplefilter("ignore", SyntaxWarning)
        module = compile(tree, filename, "exec")
    return next(c for c in module.co_consts if isinstance(c, CodeType))


def bind(code: CodeType, values: Mapping[str, Any]) -> CodeType | None:
    """``code`` (:func:`compile_with_consts`) with the placeholders replaced by
    ``values`` (the function's globals); ``None`` if one of them is missing or not a
    constant to Dynamo (:func:`literal`), or a placeholder was folded away."""
    missing = object()

    def value(c: Any) -> Any:
        if type(c) is str and c.startswith(_MARK):
            v = values.get(c[len(_MARK) :], missing)
            if v is missing or not literal(v):
                raise LookupError(c)
            return v
        if type(c) is tuple:
            return tuple(value(x) for x in c)
        if type(c) is frozenset:
            return frozenset(value(x) for x in c)
        return c

    try:
        return code.replace(co_consts=tuple(value(c) for c in code.co_consts))
    except LookupError:
        return None
