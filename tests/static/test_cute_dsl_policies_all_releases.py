"""``fi_compat.cute_dsl`` on every release that has each function, against each
release's snapshot signature (cases in ``tests/support/cute_dsl_cases.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat import _locate, cute_dsl
from fi_compat._core.resolve import missing_dependency
from fi_compat.detection import Distribution
from fi_compat.errors import OptionalDependencyMissingError
from fi_compat.registry import KNOWN_RELEASES
from support.cute_dsl_cases import (
    CASES,
    METHOD_CASES,
    METHODS,
    SPECS,
    method_releases,
    releases,
)

CELLS = [(n, r) for n in SPECS for r in releases(n)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize(("name", "release"), CELLS)
def test_policy(name: str, release: str, case: Any) -> None:
    case(name, release)


FIRST = {
    "grouped_gemm_nt_masked": "0.2.11.post3",
    "convert_sf_to_mma_layout": "0.6.4",
    "scaled_fp4_grouped_quantize": "0.5.0",
    "silu_and_mul_scaled_nvfp4_experts_quantize": "0.5.0",
    "nvfp4_batched_quantize": "0.4.0",
    "cute_dsl_fused_moe_nvfp4": "0.6.4",
}


@pytest.mark.parametrize("name", list(SPECS))
def test_coverage(name: str) -> None:
    assert SPECS[name].since == FIRST[name]
    assert releases(name) == list(KNOWN_RELEASES[KNOWN_RELEASES.index(FIRST[name]) :])


@pytest.mark.parametrize(
    ("name", "release", "missing", "package", "fix"),
    [
        ("grouped_gemm_nt_masked", "0.2.14", "cutlass", "nvidia-cutlass-dsl", "nvidia-cutlass-dsl"),
        (
            "grouped_gemm_nt_masked",
            "0.6.16",
            "cutlass",
            "nvidia-cutlass-dsl",
            "'flashinfer-python[cu12]==0.6.16'",
        ),
        ("grouped_gemm_nt_masked", "0.5.0", "cuda.bindings", "cuda-python", "cuda-python"),
        (
            "convert_sf_to_mma_layout",
            "0.6.7",
            "cutlass",
            "nvidia-cutlass-dsl",
            "nvidia-cutlass-dsl",
        ),
        (
            "cute_dsl_fused_moe_nvfp4",
            "0.7.4",
            "cutlass",
            "nvidia-cutlass-dsl",
            "'flashinfer-python[cu13]==0.7.4'",
        ),
    ],
)
def test_missing_cutlass_dsl_is_typed(
    name: str, release: str, missing: str, package: str, fix: str
) -> None:
    """``import cutlass`` (or, first, ``cuda.bindings.driver``) failing in the module
    fi_compat imports is the typed error with the pip line of that release (extras from
    0.6.8) and the reason."""
    a = SPECS[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    exc = missing_dependency(a, missing, ModuleNotFoundError(f"No module named {missing!r}"))
    assert isinstance(exc, OptionalDependencyMissingError)
    assert exc.package == package
    assert fix in str(exc).partition("Fix: pip install ")[2], str(exc)
    assert "module scope" in str(exc)


def test_flashinfer_locations_are_the_same_objects() -> None:
    """FlashInfer's own module spellings resolve to the facade objects."""
    import importlib

    import fi_compat

    for name in SPECS:
        obj = getattr(cute_dsl, name)
        homes = [m for m, names in _locate._index()[0].items() if name in names]
        assert homes, name
        for home in homes:
            mod = importlib.import_module(home)
            assert getattr(mod, name) is obj, (home, name)
    assert fi_compat.scaled_fp4_grouped_quantize is cute_dsl.scaled_fp4_grouped_quantize
    from fi_compat.fused_moe import cute_dsl_fused_moe_nvfp4

    assert cute_dsl_fused_moe_nvfp4 is cute_dsl.cute_dsl_fused_moe_nvfp4


METHOD_CELLS = [(m, r) for m in METHODS for r in method_releases(m)]


@pytest.mark.parametrize("case", METHOD_CASES, ids=lambda c: c.__name__.removeprefix("mcase_"))
@pytest.mark.parametrize(("method", "release"), METHOD_CELLS)
def test_wrapper_policy(method: str, release: str, case: Any) -> None:
    case(method, release)


def test_wrapper_class_row() -> None:
    """``CuteDslMoEWrapper`` is a class row of ``fi_compat.cute_dsl`` (0.6.4+), resolved at
    FlashInfer's locations too; without FlashInfer the name is a stand-in whose use
    raises the typed error."""
    assert "CuteDslMoEWrapper" in cute_dsl.__all__
    assert set(cute_dsl.CLASSES["CuteDslMoEWrapper"].methods) == {"__init__", "run"}
    assert all(m.since == "0.6.4" for m in METHODS.values())
