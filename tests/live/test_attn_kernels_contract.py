"""``fi_compat.decode.xqa_batch_decode_with_kv_cache``,
``fi_compat.prefill.trtllm_fmha_v2_prefill`` and
``fi_compat.prefill.cudnn_batch_prefill_with_kv_cache`` against the release of the cell:
each resolves to FlashInfer's own, and the static suite's cases run with the innermost
call replaced by a spy bound to ``inspect.signature`` of that function; before its first
release the typed error naming it."""

from __future__ import annotations

from typing import Any

import pytest

from support.attn_kernels_cases import CASES, SPECS
from support.live import MARKS, case_rows, run_policy

pytestmark = MARKS

ROWS, IDS = case_rows(SPECS, CASES)


@pytest.mark.parametrize(("name", "case"), ROWS, ids=IDS)
def test_live_policy(name: str, case: Any) -> None:
    run_policy(SPECS, name, case)
