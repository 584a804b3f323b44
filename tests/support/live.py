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


def live_target(
    specs: Mapping[str, Any],
    name: str,
    *,
    before_since: str = "raise",
    optional_dependency: bool = False,
    import_error_expected: bool = False,
) -> Any:
    """The cell's real FlashInfer function behind ``specs[name]``, resolved by fi_compat.

    Before the entry point's first release: with ``before_since="raise"`` the typed error
    naming that release is checked and ``None`` returned; with ``"skip"`` the test skips.
    A missing optional package (``optional_dependency=True``) must be the one the entry
    point declares for the release; the test then skips.  Where the module does not import
    here the test skips: an error in a ``live`` cell unless ``import_error_expected``."""
    assert CELL is not None
    e = specs[name]
    a = e.select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    if not at_least(place(CELL), e.since):
        if before_since == "skip":
            pytest.skip(f"{e.dotted} is served from {e.since}")
        with pytest.raises(
            errors.UnsupportedFlashInferVersionError, match=e.since.replace(".", r"\.")
        ):
            a.resolve()
        return None
    try:
        return a.resolve()
    except errors.OptionalDependencyMissingError as exc:
        if not optional_dependency:
            assert import_error_expected or EXPECT != "live", exc
            pytest.skip(f"{e.module} does not import here: {exc}")
        dep = e.optional_dependency(place(CELL))
        assert dep is not None and dep.package in str(exc), exc
        pytest.skip(f"{e.module} needs {dep.package} here: {exc}")
    except errors.FlashInferImportError as exc:
        assert import_error_expected or EXPECT != "live", exc
        pytest.skip(f"{e.module} does not import here: {exc}")


def run_policy(
    specs: Mapping[str, Any],
    name: str,
    case: Callable[..., None],
    *,
    monkeypatch: pytest.MonkeyPatch | None = None,
    **target: Any,
) -> Any:
    """One static case against the cell (see :func:`live_target`, whose options
    ``target`` passes on): the case with the innermost call bound to the real function's
    signature (and ``monkeypatch`` where the case takes one); returns that function."""
    real = live_target(specs, name, **target)
    if real is not None:
        extra = {"monkeypatch": monkeypatch} if "monkeypatch" in case.__code__.co_varnames else {}
        case(name, CELL, inspect.signature(real), **extra)
    return real
