"""``fi_compat.gdn_kernels`` against the release of the cell: ``gated_delta_rule_mtp``
resolves to ``flashinfer.gdn_kernels.gdn_decode_bf16_state``'s own function (not
``flashinfer.gdn_decode``'s), and the static suite's cases run with the innermost call
replaced by a spy bound to ``inspect.signature`` of that function."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat._adapters.gdn_kernels import SPECS
from fi_compat.registry import at_least, place
from support.gdn_kernels_cases import CASES
from support.live import CELL, MARKS, run_policy

pytestmark = MARKS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("name", list(SPECS))
def test_live_policy(name: str, case: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert CELL is not None
    # the module reads the GPU at import (``NUM_SMS = torch.cuda.get_device_properties(0)
    # ...``, 0.6.8 l.2262, 0.6.14 l.2701) in these releases: on a host without a CUDA GPU
    # it cannot be imported, whatever `import flashinfer` does
    pl = place(CELL)
    gpu_at_import = (at_least(pl, "0.6.8") and not at_least(pl, "0.6.12")) or (
        at_least(pl, "0.6.14") and not at_least(pl, "0.7.1")
    )
    real = run_policy(
        SPECS,
        name,
        case,
        monkeypatch=monkeypatch,
        before_since="skip",
        optional_dependency=True,
        import_error_expected=gpu_at_import,
    )
    import flashinfer.gdn_kernels.gdn_decode_bf16_state as home

    assert real is home.gated_delta_rule_mtp
