"""``fi_compat.decode.trtllm_batch_decode_sparse_mla_dsv4`` against the release of the
cell: it resolves to FlashInfer's own, and the static suite's cases run with the innermost
call replaced by a spy bound to ``inspect.signature`` of that function; before 0.6.12 the
typed error naming it."""

from __future__ import annotations

import inspect
import os
from typing import Any

import pytest

from fi_compat import errors
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.dsv4_cases import CASES, SPECS

CELL = os.environ.get("FI_COMPAT_CELL")
pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(CELL is None, reason="no FlashInfer release cell (run tools/matrix.py)"),
    pytest.mark.skipif(
        os.environ.get("FI_COMPAT_CELL_EXPECT") == "import-crash",
        reason="import flashinfer fails here (import-crash)",
    ),
]

ROWS = [(n, c) for n in SPECS for c in CASES[n]]


@pytest.mark.parametrize(
    ("name", "case"), ROWS, ids=[f"{n}-{c.__name__.removeprefix('case_')}" for n, c in ROWS]
)
def test_live_policy(name: str, case: Any) -> None:
    assert CELL is not None
    e = SPECS[name]
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
        assert os.environ.get("FI_COMPAT_CELL_EXPECT") != "live", exc
        pytest.skip(f"{e.module} does not import here: {exc}")
    case(name, CELL, inspect.signature(real))


def test_the_flashinfer_locations_are_the_same_function() -> None:
    """``flashinfer.decode`` and ``flashinfer.mla`` export one function (``mla._core``'s),
    the one the facade calls."""
    assert CELL is not None
    if not at_least(place(CELL), "0.6.12"):
        pytest.skip("before 0.6.12")
    try:
        import flashinfer.decode
        import flashinfer.mla
    except Exception as exc:  # the cell's own import check covers it
        pytest.skip(f"flashinfer.decode does not import here: {exc}")
    fn = flashinfer.decode.trtllm_batch_decode_sparse_mla_dsv4
    assert flashinfer.mla.trtllm_batch_decode_sparse_mla_dsv4 is fn
    real = SPECS[fn.__name__].select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    assert real.resolve() is fn
