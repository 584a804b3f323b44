"""``fi_compat.norm`` / ``fi_compat.activation`` against the release of the cell: each
function resolves to FlashInfer's own, and the call cases of the static suite run with
the innermost call replaced by a spy bound to ``inspect.signature`` of that function."""

from __future__ import annotations

import inspect
import os

import pytest

from elementwise_cases import ENTRIES, _args, _pdl_effect, facade, newest_pdl
from fi_compat import errors
from fi_compat._device import assume_capability
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place

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


@pytest.mark.parametrize("name", list(ENTRIES))
def test_live_calls_bind_and_mean_the_same(name: str) -> None:
    assert CELL is not None
    e = ENTRIES[name]
    if not at_least(place(CELL), e.since):
        pytest.skip(f"{name} is not in flashinfer-python {CELL}")
    a = e.select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    try:
        real = a.resolve()
    except errors.FlashInferImportError as exc:  # the cell's documented import outcome
        assert os.environ.get("FI_COMPAT_CELL_EXPECT") != "live", exc
        pytest.skip(f"{e.module} does not import here: {exc}")
    sig = inspect.signature(real)
    f, spy = facade(name, CELL, sig)
    f(**_args(name))
    f2, spy2 = facade(name, CELL, sig)
    f2(*_args(name).values())
    assert spy.calls and spy2.calls
    if name == "layernorm":
        return
    for cc in ((8, 0), (9, 0)):
        for v in (None, True, False):
            f, spy = facade(name, CELL, sig)
            with assume_capability(cc):
                f(**_args(name), enable_pdl=v)
            sent = spy.raw_kwargs[-1]
            if "enable_pdl" not in sig.parameters:
                assert "enable_pdl" not in sent
                continue
            newest = newest_pdl(name, v, cc)
            assert _pdl_effect(name, CELL, sent, cc) == newest, (cc, v, sent)
