"""``fi_compat.decode.trtllm_batch_decode_sparse_mla_dsv4`` against the release of the
cell: it resolves to FlashInfer's own, and the static suite's cases run with the innermost
call replaced by a spy bound to ``inspect.signature`` of that function; before 0.6.12 the
typed error naming it."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.dsv4_cases import CASES, SPECS
from support.live import CELL, MARKS, case_rows, run_policy

pytestmark = MARKS

ROWS, IDS = case_rows(SPECS, CASES)


@pytest.mark.parametrize(("name", "case"), ROWS, ids=IDS)
def test_live_policy(name: str, case: Any) -> None:
    run_policy(SPECS, name, case)


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
