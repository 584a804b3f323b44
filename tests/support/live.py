"""What every live-contract module (``tests/live``) shares: the cell it runs in
(``tools/matrix.py`` sets ``FI_COMPAT_CELL`` and ``FI_COMPAT_CELL_EXPECT``), its marks, and
the run of a family's static cases against the cell's real FlashInfer signature."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from fi_compat import errors
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place

CELL = os.environ.get("FI_COMPAT_CELL")
EXPECT = os.environ.get("FI_COMPAT_CELL_EXPECT")
MARKS = [
    pytest.mark.contract,
    pytest.mark.skipif(CELL is None, reason="no FlashInfer release cell (run tools/matrix.py)"),
    # `import flashinfer` crashes in these cells; a crashed import leaves submodules in
    # sys.modules that later tests of the same cell would reach (test_registry_contract
    # checks the documented failure for every facade module)
    pytest.mark.skipif(
        EXPECT == "import-crash", reason="import flashinfer fails here (import-crash)"
    ),
]


def case_rows(
    specs: Mapping[str, Any], cases: Mapping[str, list[Any]]
) -> tuple[list[tuple[str, Any]], list[str]]:
    """``(entry point name, case)`` rows of a family and their test ids."""
    rows = [(n, c) for n in specs for c in cases[n]]
    return rows, [f"{n}-{c.__name__.removeprefix('case_')}" for n, c in rows]


def run_policy(specs: Mapping[str, Any], name: str, case: Callable[..., None]) -> None:
    """One static case against the cell: before the entry point's first release the typed
    error naming it; where the module does not import here a skip (an error in a ``live``
    cell); else the case with the innermost call bound to the real function's signature."""
    assert CELL is not None
    e = specs[name]
    a = e.select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    if not at_least(place(CELL), e.since):
        with pytest.raises(
            errors.UnsupportedFlashInferVersionError, match=e.since.replace(".", r"\.")
        ):
            a.resolve()
        return
    try:
        real = a.resolve()
    except errors.FlashInferImportError as exc:
        assert EXPECT != "live", exc
        pytest.skip(f"{e.module} does not import here: {exc}")
    case(name, CELL, inspect.signature(real))
