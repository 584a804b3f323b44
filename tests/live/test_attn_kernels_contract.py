"""``fi_compat.decode.xqa_batch_decode_with_kv_cache``,
``fi_compat.prefill.trtllm_fmha_v2_prefill`` and
``fi_compat.prefill.cudnn_batch_prefill_with_kv_cache`` against the release of the cell:
each resolves to FlashInfer's own, and the static suite's cases run with the innermost
call replaced by a spy bound to ``inspect.signature`` of that function; before its first
release the typed error naming it."""

from __future__ import annotations

import inspect
import os
from typing import Any

import pytest

from fi_compat import errors
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.attn_kernels_cases import CASES, SPECS

CELL = os.environ.get("FI_COMPAT_CELL")
pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(CELL is None, reason="no FlashInfer release cell (run tools/matrix.py)"),
    # `import flashinfer` crashes in these cells; a crashed import leaves submodules in
    # sys.modules that later tests of the same cell would reach (test_registry_contract
    # checks the documented failure for every facade module)
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
