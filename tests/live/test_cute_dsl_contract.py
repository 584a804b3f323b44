"""``fi_compat.cute_dsl`` against the release of the cell: each function resolves to
FlashInfer's own and the static suite's cases run with the innermost call replaced by a
spy bound to ``inspect.signature`` of that function; where the cell lacks
``nvidia-cutlass-dsl``, the functions whose module imports ``cutlass`` (the GEMM, the
scale view, the MoE) raise the typed ``OptionalDependencyMissingError`` naming the
package (``cuda-python`` where the cell lacks it too: imported first), the quantisers
resolve."""

from __future__ import annotations

import inspect
import os
from typing import Any

import pytest

from fi_compat import errors
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.cute_dsl_cases import CASES, METHOD_CASES, METHODS, SPECS

CELL = os.environ.get("FI_COMPAT_CELL")
EXPECT = os.environ.get("FI_COMPAT_CELL_EXPECT")
DSL = os.environ.get("FI_COMPAT_CELL_DSL") == "1"
pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(CELL is None, reason="no FlashInfer release cell (run tools/matrix.py)"),
    pytest.mark.skipif(EXPECT == "import-crash", reason="import flashinfer fails here"),
    pytest.mark.skipif(EXPECT == "cubin-mismatch", reason="a packaging-mismatch cell"),
]


def _needs_dsl_here(name: str) -> bool:
    """The module fi_compat imports needs nvidia-cutlass-dsl (and cuda-python), which
    the cell lacks (``import flashinfer`` itself works in the dsl-missing cells)."""
    return not DSL and bool(SPECS[name].optional_deps)


def _resolved(name: str) -> Any:
    assert CELL is not None
    e = SPECS[name]
    if not at_least(place(CELL), e.since):
        pytest.skip(f"fi_compat.cute_dsl.{name} is served from {e.since}")
    a = e.select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    if _needs_dsl_here(name):
        with pytest.raises(errors.OptionalDependencyMissingError) as ei:
            a.resolve()
        # cuda-python where the cell lacks it too: the GEMM kernel module imports
        # cuda.bindings.driver first
        assert ei.value.package in ("nvidia-cutlass-dsl", "cuda-python"), ei.value
        assert "pip install" in str(ei.value)
        pytest.skip(f"typed optional-dependency error checked: {ei.value}")
    return a.resolve()


@pytest.mark.parametrize("name", list(SPECS))
def test_live_resolution(name: str) -> None:
    """The real function (or the typed error where the cell lacks the DSL)."""
    real = _resolved(name)
    assert callable(real)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("name", list(SPECS))
def test_live_policy(name: str, case: Any) -> None:
    assert CELL is not None
    real = _resolved(name)
    case(name, CELL, inspect.signature(real))


@pytest.mark.parametrize("case", METHOD_CASES, ids=lambda c: c.__name__.removeprefix("mcase_"))
@pytest.mark.parametrize("method", list(METHODS))
def test_live_wrapper_policy(method: str, case: Any) -> None:
    """``CuteDslMoEWrapper.__init__`` / ``run`` against the installed class's methods."""
    assert CELL is not None
    e = METHODS[method]
    if not at_least(place(CELL), e.since):
        pytest.skip(f"CuteDslMoEWrapper is served from {e.since}")
    a = e.select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    if not DSL:
        with pytest.raises(errors.OptionalDependencyMissingError) as ei:
            a.resolve()
        assert ei.value.package in ("nvidia-cutlass-dsl", "cuda-python"), ei.value
        pytest.skip(f"typed optional-dependency error checked: {ei.value}")
    case(method, CELL, inspect.signature(a.resolve()))


def test_live_wrapper_class_is_a_subclass() -> None:
    """The stable class subclasses the installed FlashInfer class (0.7.4+dsl), or is the
    stand-in raising the typed error where the cell lacks the DSL."""
    import importlib

    from fi_compat import cute_dsl

    assert CELL is not None
    if not at_least(place(CELL), "0.6.4"):
        pytest.skip("CuteDslMoEWrapper is served from 0.6.4")
    cls = cute_dsl.CuteDslMoEWrapper
    if not DSL:
        with pytest.raises(errors.OptionalDependencyMissingError):
            cls(num_experts=4, top_k=2, hidden_size=128, intermediate_size=128)
        return
    base = importlib.import_module("flashinfer.fused_moe.cute_dsl.fused_moe").CuteDslMoEWrapper
    assert issubclass(cls, base)
