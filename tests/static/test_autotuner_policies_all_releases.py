"""``fi_compat.autotuner`` on every release 0.2.0.post1-0.7.4 (cases in
``tests/support/autotuner_cases.py``), and the re-exported classes: FlashInfer's own
objects from their first release, a typed error before."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from conftest import run_python
from fi_compat import errors
from fi_compat._adapters.autotuner import ALL_REEXPORTS
from fi_compat._core import _facts
from fi_compat.detection import Distribution
from support.autotuner_cases import CASES, RELEASES, reexport_first


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("release", RELEASES)
def test_policy(release: str, case: Any) -> None:
    case(release)


ROWS = {r.name: r for r in ALL_REEXPORTS}
FIRST = {"AutoTuner": "0.2.6", "TuningConfig": "0.2.9", "ConstraintSpec": "0.2.9"}
FIRST["DynamicTensorSpec"] = "0.2.9"
FIRST["autotuner_initializer_empty"] = "0.6.15"  # autotuner/initializers.py


def _dist(release: str) -> Distribution:
    return Distribution("flashinfer-python", release, "<override>", "")


@pytest.fixture
def fake_flashinfer(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """``flashinfer.autotuner`` with stand-ins of the classes (no FlashInfer here)."""
    pkg = types.ModuleType("flashinfer")
    pkg.__path__ = []
    mod = types.ModuleType("flashinfer.autotuner")
    for name in ROWS:
        setattr(mod, name, type(name, (), {}))
    pkg.autotuner = mod  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "flashinfer", pkg)
    monkeypatch.setitem(sys.modules, "flashinfer.autotuner", mod)
    return mod


@pytest.mark.parametrize("name", list(ROWS))
def test_reexports_are_flashinfer_objects_from_their_first_release(
    name: str, fake_flashinfer: types.ModuleType
) -> None:
    r = ROWS[name]
    assert r.since == FIRST[name]
    for release in RELEASES:
        if RELEASES.index(release) < RELEASES.index(r.since):
            with pytest.raises(errors.UnsupportedFlashInferVersionError) as info:
                r.resolve(_dist(release))
            assert r.since in str(info.value) and release in str(info.value)
            assert isinstance(info.value, ImportError)  # ``from ... import`` fails as one
        else:
            assert r.resolve(_dist(release)) is getattr(fake_flashinfer, name)


def test_tuning_config_is_served_from_the_field_rename() -> None:
    """0.2.6-0.2.8 name the fields dynamic_tensors / constraints (snapshot facts): the
    class is handed out from 0.2.9, where the stable names begin."""
    first, fields = _facts.FACTS["autotuner.TuningConfig"]
    assert reexport_first("TuningConfig") == first == "0.2.6"
    assert fields["dynamic_tensors"] == (("0.2.6", "0.2.9"),)
    assert fields["dynamic_tensor_specs"][0][0] == "0.2.9"
    assert ROWS["TuningConfig"].floor == "0.2.9"
    # DynamicTensorSpec's tensor_initializers existed only 0.2.13-0.6.17 (docs say so)
    _, dts = _facts.FACTS["autotuner.DynamicTensorSpec"]
    assert dts["tensor_initializers"] == (("0.2.13", "0.6.18"),)


def test_module_access_without_flashinfer_is_the_typed_error() -> None:
    """``from fi_compat.autotuner import TuningConfig`` with no FlashInfer installed
    imports a stand-in (engines import names unconditionally); constructing it or reading
    an attribute raises the not-installed error (an ImportError)."""
    r = run_python(
        "import fi_compat.autotuner as m, sys\n"
        "assert 'torch' not in sys.modules and 'flashinfer' not in sys.modules\n"
        "assert {'AutoTuner', 'TuningConfig', 'autotune'} <= set(m.__all__) <= set(dir(m))\n"
        "from fi_compat.autotuner import AutoTuner, TuningConfig\n"
        "for use in (TuningConfig, lambda: AutoTuner.get()):\n"
        "    try:\n"
        "        use()\n"
        "    except ImportError as e:\n"
        "        print(type(e).__name__)\n"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["FlashInferNotInstalledError"] * 2


def test_autotune_before_0_2_6_needs_no_flashinfer_import() -> None:
    """The no-op context manager imports nothing of FlashInfer (there is no autotuner)."""
    r = run_python(
        "import sys\n"
        "from fi_compat.autotuner import autotune\n"
        "with autotune():\n"
        "    pass\n"
        "assert 'flashinfer' not in sys.modules\n"
        "print('ok')\n",
        env={"FI_COMPAT_FLASHINFER_VERSION": "0.2.5"},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("ok")


def test_initializer_empty_is_flashinfers_function_with_one_signature() -> None:
    """``autotuner_initializer_empty`` is an alias of ``_empty`` in 0.6.15-0.7.4's
    ``autotuner/initializers.py``: the snapshot follows it to the def (``defined_as``),
    one ``(shapes, dtype, device)`` signature on every release that has it."""
    from fi_compat import _snapshot_io as snapshots

    snap = snapshots.load(ROWS["autotuner_initializer_empty"])  # type: ignore[arg-type]
    recs = [v for v in snap["releases"].values() if v is not None]
    assert {v["signature"] for v in recs} == {"s0"}
    assert {v["defined_as"] for v in recs} == {"_empty"}
    assert [p[0] for p in snap["signatures"]["s0"]] == ["shapes", "dtype", "device"]
