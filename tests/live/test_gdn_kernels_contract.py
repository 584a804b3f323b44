"""``fi_compat.gdn_kernels`` against the release of the cell: ``gated_delta_rule_mtp``
resolves to ``flashinfer.gdn_kernels.gdn_decode_bf16_state``'s own function (not
``flashinfer.gdn_decode``'s), and the static suite's cases run with the innermost call
replaced by a spy bound to ``inspect.signature`` of that function."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from fi_compat import errors
from fi_compat._adapters.gdn_kernels import SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.gdn_kernels_cases import CASES
from support.live import CELL, EXPECT, MARKS

pytestmark = MARKS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("name", list(SPECS))
def test_live_policy(name: str, case: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert CELL is not None
    e = SPECS[name]
    if not at_least(place(CELL), e.since):
        pytest.skip(f"fi_compat.gdn_kernels.{name} is served from {e.since}")
    a = e.select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    try:
        real = a.resolve()
    except errors.OptionalDependencyMissingError as exc:
        dep = e.optional_dependency(place(CELL))
        assert dep is not None and dep.package in str(exc), exc
        pytest.skip(f"flashinfer.gdn_kernels.gdn_decode_bf16_state needs {dep.package} here: {exc}")
    except errors.FlashInferImportError as exc:
        # the module reads the GPU at import (``NUM_SMS = torch.cuda.
        # get_device_properties(0)...``, 0.6.8 l.2262, 0.6.14 l.2701) in these releases:
        # on a host without a CUDA GPU it cannot be imported, whatever `import flashinfer` does
        pl = place(CELL)
        gpu_at_import = (at_least(pl, "0.6.8") and not at_least(pl, "0.6.12")) or (
            at_least(pl, "0.6.14") and not at_least(pl, "0.7.1")
        )
        assert gpu_at_import or EXPECT != "live", exc
        pytest.skip(f"flashinfer.gdn_kernels.gdn_decode_bf16_state does not import here: {exc}")
    import flashinfer.gdn_kernels.gdn_decode_bf16_state as home

    assert real is home.gated_delta_rule_mtp
    extra = {"monkeypatch": monkeypatch} if "monkeypatch" in case.__code__.co_varnames else {}
    case(name, CELL, inspect.signature(real), **extra)
