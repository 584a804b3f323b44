"""Live contract of fi_compat.gdn_prefill against the FlashInfer release on sys.path.

Run per release by ``tools/matrix.py`` (each release really installed from PyPI, side by
side, one interpreter each).  ``FI_COMPAT_CELL`` names the release, ``FI_COMPAT_CELL_EXPECT``
what importing ``flashinfer.gdn_prefill`` does on this CPU-only host:

* ``live``: the spy contract (same cases as the static suite) with the spy bound to
  ``inspect.signature`` of the real, imported function;
* ``dsl-missing`` / ``import-crash``: the first call raises fi_compat's explained error.
"""

from __future__ import annotations

import inspect
import os
import sys
from typing import Any

import pytest

import fi_compat
from fi_compat import _snapshot_io as snapshots
from fi_compat import errors, gdn_prefill
from fi_compat._adapters.gdn_prefill import SPEC
from fi_compat.registry import at_least, place
from support.helpers import facade_for, inputs
from support.policy_cases import CASES
from support.spy import Spy, snapshot_signature

CELL = os.environ.get("FI_COMPAT_CELL")
EXPECT = os.environ.get("FI_COMPAT_CELL_EXPECT", "live")
DSL = os.environ.get("FI_COMPAT_CELL_DSL") == "1"

pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(CELL is None, reason="no FlashInfer release cell (run tools/matrix.py)"),
]
facade = gdn_prefill.chunk_gated_delta_rule
# importing the facades (above) imported no FlashInfer (other suites import it later)
LAZY = "flashinfer" not in sys.modules
# cells of releases older than flashinfer.gdn_prefill (0.5.x, for the MoE facades)
BELOW = CELL is not None and not at_least(place(CELL), SPEC.since)


def test_detected_release_and_adapter() -> None:
    fi = fi_compat.detect().flashinfer
    assert fi is not None and fi.version == CELL
    assert fi.location.endswith(f"fi-{CELL}")
    d = facade.adapter.describe()
    if BELOW:  # the facade exists, and says from which release on it works
        assert d["installed"] == CELL and d["problem"] == "below-floor"
        x = inputs()
        with pytest.raises(errors.UnsupportedFlashInferVersionError, match=r">=0\.6\.0"):
            facade(x["q"], x["k"], x["v"], cu_seqlens=x["cu_seqlens"])
        return
    assert d["installed"] == CELL and d["problem"] is None
    assert facade.adapter.range is not None and CELL in facade.adapter.range.releases()
    assert LAZY  # facade import is lazy


def test_predicted_availability_matches_the_import() -> None:
    """What `info` predicts without importing (needs DSL or not) matches reality here."""
    from fi_compat.cli.info import entry_status

    status = entry_status(SPEC, facade.adapter)
    if BELOW:
        assert status["status"] == "unsupported release", status
        return
    want = {
        "dsl-missing": "needs nvidia-cutlass-dsl",
        "import-crash": "import fails here",
        "cubin-mismatch": "import fails here",
    }
    assert status["status"] == want.get(EXPECT, "available"), status


@pytest.fixture(scope="module")
def real() -> Any:
    if EXPECT != "live" or BELOW:
        pytest.skip(f"flashinfer.gdn_prefill cannot be imported here ({EXPECT}, {CELL})")
    facade.adapter._set_target(None)
    fn = facade.raw()  # resolves through fi_compat: the raw FlashInfer function
    import flashinfer.gdn_prefill as fg

    assert fn is fg.chunk_gated_delta_rule
    return fn


def test_live_signature_equals_snapshot(real: Any) -> None:
    live = inspect.signature(real)
    snap = snapshot_signature(str(CELL))
    got = [(p.name, p.kind, p.default) for p in live.parameters.values()]
    want = [(p.name, p.kind, p.default) for p in snap.parameters.values()]
    assert got == want
    assert snapshots.params(SPEC, str(CELL)) is not None


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
def test_live_policy(real: Any, case: Any) -> None:
    sig = inspect.signature(real)

    def make() -> tuple[Any, Spy]:
        spy = Spy(sig)
        fn, _ = facade_for(str(CELL), spy)
        return fn, spy

    case(str(CELL), make)


def test_the_installed_facade_reaches_the_spy(real: Any) -> None:
    """The module-level facade (built at import for this release) calls the spy by keyword."""
    spy = Spy(inspect.signature(real))
    facade.adapter._set_target(spy)
    try:
        x = inputs()
        _, state = facade(
            x["q"],
            x["k"],
            x["v"],
            x["g"],
            x["beta"],
            None,
            x["initial_state"],
            True,
            x["cu_seqlens"],
        )
        assert spy.last["q"] is x["q"] and state.shape == x["initial_state"].shape
    finally:
        facade.adapter._set_target(None)


def test_import_failure_is_explained() -> None:
    if EXPECT == "live":
        pytest.skip("flashinfer.gdn_prefill imports here")
    f, adapter = facade_for(str(CELL), None)
    adapter._set_target(None)  # the first call imports FlashInfer for real
    x = inputs()
    with pytest.raises(errors.FlashInferImportError) as ei:
        f(x["q"], x["k"], x["v"], cu_seqlens=x["cu_seqlens"])
    msg = str(ei.value)
    assert isinstance(ei.value, ImportError)
    if EXPECT == "cubin-mismatch":
        assert isinstance(ei.value.__cause__, RuntimeError)
        assert "does not match" in msg
    elif EXPECT == "dsl-missing":
        assert isinstance(ei.value, errors.OptionalDependencyMissingError)
        assert ei.value.package == "nvidia-cutlass-dsl" and ei.value.extra == "cu12"
        assert f"'flashinfer-python[cu12]=={CELL}'" in msg
        assert isinstance(ei.value.__cause__, ModuleNotFoundError)
    else:
        assert not isinstance(ei.value, AssertionError)
        assert isinstance(ei.value.__cause__, AssertionError)
        assert "Torch not compiled with CUDA enabled" in msg and "0.7.1" in msg
