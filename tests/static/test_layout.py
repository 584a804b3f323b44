"""The package's layout: no import cycle inside ``src/fi_compat``.

Every ``import`` / ``from ... import`` statement counts, at module level or inside a
function, except those under ``if TYPE_CHECKING:`` (never executed).  A submodule's
import of its own parent package is not an edge (Python runs the package first anyway).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT

SRC = ROOT / "src"


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in (SRC / "fi_compat").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_pkg)
    return out


def import_graph() -> dict[str, set[str]]:
    """{module: the fi_compat modules it imports}, from the sources (``ast``)."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, (path, is_pkg) in mods.items():
        tree = ast.parse(path.read_text())
        base = mod.split(".") if is_pkg else mod.split(".")[:-1]
        skip: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
                skip |= {id(x) for x in ast.walk(node)}
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.ImportFrom):
                pkg = base[: len(base) - node.level + 1] if node.level else []
                target = ".".join([*pkg, *([node.module] if node.module else [])])
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods]
                targets = subs if len(subs) == len(node.names) else [target, *subs]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            graph[mod] |= {
                t for t in targets if t in mods and t != mod and not mod.startswith(t + ".")
            }
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each module that lies on one (depth-first search)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the stack, 2: done

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                found.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_the_graph_is_read() -> None:
    g = import_graph()
    assert "fi_compat._core.table" in g["fi_compat._core.adapter"]  # a module-level import
    assert "fi_compat._core.codegen" in g["fi_compat._core.adapter"]  # a function-level one
    assert "fi_compat._core.adapter" not in g["fi_compat._core.codegen"]  # TYPE_CHECKING only


def test_cycles_are_found() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" -> ".join(c) for c in found)


# The modules a user imports; everything else under src/fi_compat is underscored.
PUBLIC = {"cli", "detection", "device", "enums", "errors", "registry"}


def test_internal_modules_are_underscored() -> None:
    from fi_compat._facades import FACADES

    top = {
        p.stem if p.suffix == ".py" else p.name
        for p in (SRC / "fi_compat").iterdir()
        if (p.suffix == ".py" or (p / "__init__.py").exists()) and not p.name.startswith("__")
    }
    stray = top - PUBLIC - set(FACADES) - {"fp4_quantization", "fp8_quantization"}
    assert {n for n in stray if not n.startswith("_")} == set()


def test_an_entry_point_name_is_written_once_in_its_facade_module() -> None:
    """The stub ``def name(...)`` is the only place: ``__all__``, ``dir()``, docs and
    ``info`` derive it (``lazy_facades`` / ``lazy_classes``)."""
    import importlib

    from fi_compat._facades import FACADES, entry_points

    by_module: dict[str, list[Any]] = {}
    for row in FACADES:
        for entry in entry_points(row):
            by_module.setdefault(entry.facade.removeprefix("fi_compat."), []).append(entry)
    for module, entries in by_module.items():
        rel = Path("fi_compat", *module.split("."))
        path = SRC / rel.with_suffix(".py")
        if not path.exists():  # a facade package (fi_compat.comm)
            path = SRC / rel / "__init__.py"
        tree = ast.parse(path.read_text())
        literal: set[str] = set()
        for node in tree.body:
            target = node.target if isinstance(node, ast.AnnAssign) else None
            if isinstance(node, ast.Assign):
                target = node.targets[0]
            if getattr(target, "id", None) == "__all__" and node.value is not None:
                literal = {c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)}
        mod = importlib.import_module(f"fi_compat.{module}")
        stubs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        for entry in entries:
            name = entry.name.split(".")[0]  # a wrapper method: its class
            assert name not in literal, (module, name)
            assert name in mod.__all__, (module, name)
            assert name in dir(mod), (module, name)
            if "." not in entry.name:
                assert name in stubs, (module, name)


def test_tests_are_split_by_what_they_prove() -> None:
    tests = ROOT / "tests"
    assert {
        p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))
    } >= {
        "static",
        "live",
        "gpu",
        "support",
    }
    # no test module outside the four folders, no support module inside a test folder
    assert not [p for p in tests.glob("*.py") if p.name != "conftest.py"]
    assert not list((tests / "support").glob("test_*.py"))


@pytest.mark.parametrize("bench", sorted(p.name for p in (ROOT / "benchmarks").glob("*.py")))
def test_benchmark_imports(bench: str) -> None:
    """Every benchmark imports (its own ``sys.path`` set-up) and parses its arguments."""
    r = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / bench), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert r.returncode == 0, r.stderr[-2000:]
