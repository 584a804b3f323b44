"""Generated code with its fixed globals as code constants (``fi_compat._core.consts``):
the same results as the code reading them as globals, no load of them left."""

from __future__ import annotations

import types

import torch

from fi_compat._core import consts

SRC = """def f(x, y=_d_y, *a, **kw):
    if a:
        raise ValueError(a)
    if len(x) not in _DEV:
        return "dev"
    if not kw and (y is _d_y or (type(y) is int and y == _d_y)) and x[0] in _L_x:
        return g(x, _d_y, _dt)
    return not _d_y
"""


def _ns() -> dict[str, object]:
    return {
        "_d_y": 3,
        "_DEV": frozenset({2}),
        "_L_x": frozenset({"a"}),
        "_dt": torch.bfloat16,
        "g": lambda *a: a,
    }


def test_constants_replace_the_globals_with_the_same_results() -> None:
    ns = _ns()
    exec(compile(SRC, "<t>", "exec"), ns)
    plain = ns["f"]
    fixed = consts.compile_with_consts(SRC, "<t>", [k for k, v in ns.items() if consts.literal(v)])
    assert fixed is not None
    code = consts.bind(fixed, ns)
    assert code is not None
    f = types.FunctionType(code, ns, "f", plain.__defaults__)  # type: ignore[arg-type]
    for args in (("ab",), ("abc",), ("xb",), ("ab", 4), ("ab", 3.0)):
        assert f(*args) == plain(*args), args
    # ``not _d_y`` would be folded by CPython with a constant: left a global load
    assert set(code.co_names) & {"_DEV", "_L_x", "_dt"} == set() and "_d_y" in code.co_names


def test_a_value_that_is_not_a_constant_to_dynamo_leaves_the_code_as_generated() -> None:
    ns = _ns()
    fixed = consts.compile_with_consts(SRC, "<t>", ["_DEV", "_dt"])
    assert fixed is not None
    assert consts.bind(fixed, {**ns, "_dt": torch.Tensor}) is None  # a class
    assert consts.bind(fixed, {k: v for k, v in ns.items() if k != "_DEV"}) is None
    assert consts.literal((1, "a", None, torch.float32)) and not consts.literal([1])
