"""Live contract of fi_compat.fused_moe against the FlashInfer release on sys.path.

Run per release by ``tools/matrix.py`` (each release really installed from PyPI).  The
cell's ``FI_COMPAT_CELL_EXPECT`` describes ``import flashinfer`` on this CPU-only host;
``flashinfer.fused_moe`` needs no ``nvidia-cutlass-dsl`` in any release, so the cells
that lack it (``dsl-missing``) are live here.  Live cells run every policy case of
``tests/support/moe_cases.py`` with the spy bound to ``inspect.signature`` of the real, imported
function and with FlashInfer's own enum members; the others check the explained error.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
from typing import Any

import pytest

import fi_compat
from fi_compat import _snapshot_io as snapshots
from fi_compat import enums, errors, fused_moe
from fi_compat._adapters.fused_moe import LAYOUTS, MOE_FLOOR
from fi_compat._core.enumtrans import live_class as _live_enum
from fi_compat.registry import at_least, place
from support.moe_cases import CASES
from support.moe_helpers import ENTRIES, args, moe_facade
from support.moe_layout_cases import CASES as LAYOUT_CASES
from support.spy import snapshot_signature

CELL = os.environ.get("FI_COMPAT_CELL")
EXPECT = os.environ.get("FI_COMPAT_CELL_EXPECT", "live")
MOE_EXPECT = "live" if EXPECT == "dsl-missing" else EXPECT

pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(CELL is None, reason="no FlashInfer release cell (run tools/matrix.py)"),
    pytest.mark.skipif(
        CELL is not None and not at_least(place(CELL), MOE_FLOOR),
        reason=f"fi_compat serves MoE from {MOE_FLOOR} (older releases are refused)",
    ),
]
HERE = [n for n, e in ENTRIES.items() if CELL and at_least(place(CELL), e.since)]


def test_detected_release_and_adapters() -> None:
    fi = fi_compat.detect().flashinfer
    assert fi is not None and fi.version == CELL
    for name in ENTRIES:
        a = getattr(fused_moe, name).adapter
        d = a.describe()
        assert d["installed"] == CELL
        assert d["problem"] == (None if name in HERE else "below-floor"), name


@pytest.fixture(scope="module")
def real() -> dict[str, Any]:
    """FlashInfer's own functions, resolved through fi_compat (the first call's import)."""
    if MOE_EXPECT != "live":
        pytest.skip(f"import flashinfer fails here ({EXPECT})")
    out = {}
    for name in HERE:
        f = getattr(fused_moe, name)
        f.adapter._set_target(None)
        out[name] = f.raw()
        e = ENTRIES[name]  # FlashInfer's own module and name (flashinfer.utils, ...core)
        assert out[name] is getattr(importlib.import_module(e.module), e.attr), name
    return out


def test_live_signatures_equal_the_snapshots(real: dict[str, Any]) -> None:
    for name, fn in real.items():
        live = inspect.signature(fn)
        snap = snapshot_signature(str(CELL), ENTRIES[name])
        got = [(p.name, p.kind) for p in live.parameters.values()]
        want = [(p.name, p.kind) for p in snap.parameters.values()]
        assert got == want, name
        assert snapshots.params(ENTRIES[name], str(CELL)) is not None


def test_live_enums_equal_the_snapshots(real: dict[str, Any]) -> None:
    """The release's own enum classes hold the values the snapshot says (by name)."""
    for cls_name in ("RoutingMethodType", "ActivationType", "WeightLayout"):
        live = _live_enum(cls_name)
        want = getattr(enums, cls_name).values_in(str(CELL))
        assert live is not None and want is not None, cls_name
        assert {m.name: int(m.value) for m in live} == want, cls_name


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
def test_live_policy(real: dict[str, Any], case: Any) -> None:
    """Every policy case, spy bound to the real signature, FlashInfer's own members."""

    def make(name: str) -> tuple[Any, Any, Any]:
        return moe_facade(name, str(CELL), inspect.signature(real[name]), live=True)

    case(str(CELL), make)


@pytest.mark.parametrize("case", LAYOUT_CASES, ids=lambda c: c.__name__.removeprefix("case_"))
def test_live_layout_helpers_run_for_real(real: dict[str, Any], case: Any) -> None:
    """The weight-layout helpers are pure torch: fi_compat's facade, calling the installed
    release, against FlashInfer's own function called directly, on CPU (cache keys,
    refusals where the release asserts)."""
    assert LAYOUTS.keys() <= ENTRIES.keys()

    def make(name: str) -> Any:
        f = getattr(fused_moe, name)
        f.adapter._set_target(None)  # the installed release's own function
        return f

    case(str(CELL), make, real.__getitem__)


def test_enum_members_passed_are_flashinfers_own(real: dict[str, Any]) -> None:
    f, spy, _ = moe_facade(
        "trtllm_fp4_block_scale_moe",
        str(CELL),
        inspect.signature(real["trtllm_fp4_block_scale_moe"]),
        live=True,
    )
    f(**args("trtllm_fp4_block_scale_moe"), routing_method_type=enums.RoutingMethodType.Llama4)
    got = spy.raw_kwargs[-1]["routing_method_type"]
    assert type(got) is _live_enum("RoutingMethodType") and got.name == "Llama4"


def test_helpers_run_for_real(real: dict[str, Any]) -> None:
    """The weight helpers are plain torch on CPU: run them through fi_compat for real and
    compare with FlashInfer's own call."""
    for name in ("reorder_rows_for_gated_act_gemm", "shuffle_matrix_a"):
        a = args(name)
        got = getattr(fused_moe, name)(*a.values())
        want = real[name](**a)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert bool((got == want).all()), name


def test_cubin_probe_asks_the_file_the_release_fetches(real: dict[str, Any]) -> None:
    """The MoE device check probes ``<ArtifactPath.TRTLLM_GEN_BMM>/checksums.txt``, read
    statically from the installed artifacts.py: the same string the release's own
    module holds, and the file its ``jit/fused_moe.py`` fetches before anything else."""
    from pathlib import Path

    import flashinfer.jit.fused_moe as jit_moe
    from flashinfer.artifacts import ArtifactPath

    from fi_compat import device

    bmm = ArtifactPath.TRTLLM_GEN_BMM
    assert device.trtllm_artifact("TRTLLM_GEN_BMM") == f"{bmm}/checksums.txt"
    assert device.trtllm_artifact("TRTLLM_GEN_FMHA") == (
        f"{ArtifactPath.TRTLLM_GEN_FMHA}/checksums.txt"
    )
    src = Path(jit_moe.__file__).read_text()
    path = r'checksum_path = f"\{(ArtifactPath\.TRTLLM_GEN_BMM|bmm_path)\}/checksums\.txt"'
    m = re.search(path, src)
    assert m is not None, "the release builds another checksums path"
    if m.group(1) == "bmm_path":
        # 0.6.18+: ``bmm_path = ArtifactPath.TRTLLM_GEN_BMM``; 0.6.16-0.6.17 pick
        # ``TRTLLM_GEN_BMM_RUBIN if enable_rubin else TRTLLM_GEN_BMM`` (Rubin, SM107, only)
        bmm_def = (
            r"bmm_path = \(?\s*(?:ArtifactPath\.TRTLLM_GEN_BMM_RUBIN\s+if enable_rubin\s+"
            r"else\s+)?ArtifactPath\.TRTLLM_GEN_BMM\b"
        )
        assert re.search(bmm_def, src), "bmm_path is another artifact group"
    first = re.search(r"= get_(?:cubin|artifact)\(\s*([^,\s]+)", src)
    assert first is not None and first.group(1) == "checksum_path"


def test_import_failure_is_explained() -> None:
    if MOE_EXPECT == "live":
        pytest.skip("flashinfer.fused_moe imports here")
    f, _, adapter = moe_facade("trtllm_bf16_moe", str(CELL))
    adapter._set_target(None)  # the first call imports FlashInfer for real
    with pytest.raises(errors.FlashInferImportError) as ei:
        f(**args("trtllm_bf16_moe"))
    msg = str(ei.value)
    if EXPECT == "cubin-mismatch":
        assert isinstance(ei.value.__cause__, RuntimeError) and "does not match" in msg
    else:
        assert isinstance(ei.value.__cause__, AssertionError)
        assert "cpu-torch-dsl-import-crash" in msg and "0.7.1" in msg


def test_predicted_availability_matches_the_import() -> None:
    from fi_compat.cli.info import entry_status

    want = {"import-crash": "import fails here", "cubin-mismatch": "import fails here"}
    for name in HERE:
        f = getattr(fused_moe, name)
        st = entry_status(ENTRIES[name], f.adapter)
        assert st["status"] == want.get(MOE_EXPECT, "available"), (name, st)
