"""``fi_compat.cute_dsl.b12x_fused_moe`` / ``B12xMoEWrapper`` against the release of the
cell: where the installed ``nvidia-cutlass-dsl`` meets the release's own minimum the
names resolve to FlashInfer's own and the static suite's cases run with the innermost
call replaced by a spy bound to ``inspect.signature`` of it; otherwise the first call
raises ``OptionalDependencyMissingError`` naming the package and the version."""

from __future__ import annotations

import importlib.util
import inspect
import os
from typing import Any

import pytest

from fi_compat import errors
from fi_compat._requirements import _installed_version, _satisfies
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.b12x_cases import CASES, FN, entry

CELL = os.environ.get("FI_COMPAT_CELL")
EXPECT = os.environ.get("FI_COMPAT_CELL_EXPECT")
pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(CELL is None, reason="no FlashInfer release cell (run tools/matrix.py)"),
    pytest.mark.skipif(EXPECT == "import-crash", reason="import flashinfer fails here"),
    pytest.mark.skipif(EXPECT == "cubin-mismatch", reason="a packaging-mismatch cell"),
]
KEYS = [FN, "__init__", "run"]


def _resolved(key: str) -> Any:
    assert CELL is not None
    e = entry(key)
    pl = place(CELL)
    if not at_least(pl, e.since):
        pytest.skip(f"{e.dotted} is served from {e.since}")
    a = e.select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    (dep,) = [d for d in e.optional_deps if d.minimum and d.range.contains(pl)]
    have = _installed_version(dep.package)
    found = importlib.util.find_spec(dep.module) is not None
    if not (found and _satisfies(have, f">={dep.minimum}")):
        with pytest.raises(errors.OptionalDependencyMissingError) as ei:
            a.resolve()
        assert ei.value.package == "nvidia-cutlass-dsl"
        assert f"nvidia-cutlass-dsl>={dep.minimum}" in str(ei.value)
        pytest.skip(f"typed requirement error checked: {ei.value}")
    return a.resolve()


@pytest.mark.parametrize("key", KEYS)
def test_live_resolution(key: str) -> None:
    assert callable(_resolved(key))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("key", KEYS)
def test_live_policy(key: str, case: Any) -> None:
    assert CELL is not None
    case(key, CELL, inspect.signature(_resolved(key)))
