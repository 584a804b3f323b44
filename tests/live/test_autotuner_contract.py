"""``fi_compat.autotuner`` against the release of the cell: ``autotune`` is FlashInfer's
own context manager (entered for real: it needs no GPU), the options bind to its live
signature, and the re-exported classes are FlashInfer's own objects."""

from __future__ import annotations

import importlib
import importlib.util
import inspect

import pytest

from fi_compat import errors
from fi_compat._adapters.autotuner import ALL_REEXPORTS, SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.autotuner_cases import CASES
from support.live import CELL, EXPECT, MARKS

pytestmark = MARKS


def _real(name: str) -> object:
    assert CELL is not None
    e = SPECS[name]
    a = e.select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    try:
        return a.resolve()
    except errors.FlashInferImportError as exc:
        assert EXPECT != "live", exc
        pytest.skip(f"flashinfer.autotuner does not import here: {exc}")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
def test_live_policy(case: object) -> None:
    assert CELL is not None
    name = case.__name__.removeprefix("case_")  # type: ignore[attr-defined]
    e = SPECS[name]
    if not at_least(place(CELL), e.since):
        case(CELL)  # type: ignore[operator]
        return
    case(CELL, inspect.signature(_real(name)))  # type: ignore[operator]


def test_autotune_is_flashinfer_context_manager() -> None:
    """The facade enters FlashInfer's own ``autotune`` (no GPU needed to enter it)."""
    from fi_compat import autotuner

    assert CELL is not None
    if not at_least(place(CELL), SPECS["autotune"].since):
        # no autotuner in this release: the facade is a no-op context manager and
        # nothing imports flashinfer.autotuner (which does not exist)
        with autotuner.autotune(False) as got:
            pass
        assert got is None
        assert importlib.util.find_spec("flashinfer.autotuner") is None
        return
    real = _real("autotune")
    with autotuner.autotune(False) as got:
        pass
    assert got is None
    assert autotuner.autotune.raw() is real


@pytest.mark.parametrize("row", ALL_REEXPORTS, ids=lambda r: r.name)
def test_reexports_are_flashinfer_objects(row: object) -> None:
    assert CELL is not None
    r = row
    if not at_least(place(CELL), r.since):  # type: ignore[attr-defined]
        with pytest.raises(errors.UnsupportedFlashInferVersionError):
            r.resolve()  # type: ignore[attr-defined]
        return
    _real("autotune")  # skips where flashinfer.autotuner does not import
    module = importlib.import_module("flashinfer.autotuner")
    import fi_compat.autotuner as facade

    obj = getattr(facade, r.name)  # type: ignore[attr-defined]
    assert obj is getattr(module, r.name)  # type: ignore[attr-defined]
