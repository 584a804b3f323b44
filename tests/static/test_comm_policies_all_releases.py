"""``fi_compat.comm`` on every release of each entry point's range, against each
release's snapshot signature (cases in ``tests/support/comm_cases.py``), plus what the
cases cannot reach: removals, the stand-ins of classes and re-exports FlashInfer cannot
give, static methods, the re-exports' constructors never drifting, and the typed errors
of ``flashinfer.comm``'s import failures."""

from __future__ import annotations

import json
import sys
import types
from typing import Any

import pytest

from fi_compat import _snapshot_io as snapshots
from fi_compat import comm, detection, errors
from fi_compat._adapters import comm as tables
from fi_compat._core import resolve
from fi_compat.comm import trtllm_alltoall
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES
from support.comm_cases import CASES, ENTRIES, args, facade, releases

CELLS = [(k, r) for k in ENTRIES for r in releases(k)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize(("key", "release"), CELLS)
def test_policy(key: str, release: str, case: Any) -> None:
    case(key, release)


def test_ranges_come_from_the_snapshots() -> None:
    assert ENTRIES["allreduce_fusion"].since == "0.6.0"
    assert ENTRIES["trtllm_allreduce_fusion"].since == "0.2.9"  # the floor
    assert ENTRIES["trtllm_custom_all_reduce"].until == "0.7.0"
    for key in ("MoeAlltoAll.combine", "moe_a2a_get_workspace_size_per_rank"):
        assert (ENTRIES[key].since, ENTRIES[key].until) == ("0.6.0", "0.7.4")
    assert ENTRIES["MnnvlMoe.mnnvl_moe_alltoallv"].until == "0.7.4"
    p = ENTRIES["allreduce_fusion"].params
    assert p["trigger_completion_at_end"].since == "0.6.8" and p["weight_bias"].since == "0.6.12"
    assert ENTRIES["allreduce_fusion"].positional[0] == 4


def _selected(key: str, release: str) -> Any:
    return ENTRIES[key].select(Distribution("flashinfer-python", release, "<test>", ""))


@pytest.mark.parametrize(
    ("key", "release", "fix"),
    [
        ("trtllm_custom_all_reduce", "0.7.0", "allreduce_fusion"),
        ("MoeAlltoAll.dispatch", "0.7.4", "NVLinkOneSidedAlltoAll"),
        ("moe_a2a_get_workspace_size_per_rank", "0.7.4", "NVLinkOneSidedAlltoAll"),
        ("MnnvlMoe.mnnvl_moe_alltoallv", "0.7.4", "NVLinkTwoSidedAlltoAll"),
    ],
)
def test_removed_entry_points_name_the_replacement(key: str, release: str, fix: str) -> None:
    a = _selected(key, release)
    assert a.problem == "removed"
    with pytest.raises(errors.UnsupportedFlashInferVersionError, match=fix) as ei:
        a.resolve()
    assert f"removed in flashinfer-python {ENTRIES[key].until}" in str(ei.value)


def test_trtllm_allreduce_fusion_refuses_releases_below_its_floor() -> None:
    """0.2.7.post1-0.2.8 take use_oneshot at slot 7 as a required bool: not served."""
    a = _selected("trtllm_allreduce_fusion", "0.2.8")
    with pytest.raises(errors.UnsupportedFlashInferVersionError, match=r"0\.2\.9"):
        a.resolve()


def test_mnnvl_moe_static_methods_on_the_subclass() -> None:
    """The stable ``MnnvlMoe`` binds the generated functions as static methods over
    FlashInfer's class (state stays on the base, where FlashInfer's code keeps it)."""

    class FlashInferMnnvlMoe:
        moe_workspace = "FlashInfer's"

    row = trtllm_alltoall.CLASSES["MnnvlMoe"]
    cls = row.subclass(FlashInferMnnvlMoe, row.functions())
    assert issubclass(cls, FlashInferMnnvlMoe) and cls.moe_workspace == "FlashInfer's"
    for name in tables.MNNVL_MOE_METHODS:
        assert isinstance(cls.__dict__[name], staticmethod), name
    fn, spy, _ = facade("MnnvlMoe.mnnvl_moe_alltoallv", "0.6.7")
    kw = args("MnnvlMoe.mnnvl_moe_alltoallv")
    assert fn(*kw.values()) is not None and spy.raw_kwargs[-1]["x"] is kw["x"]


def test_stand_ins_keep_static_methods_and_raise_the_typed_error() -> None:
    row = trtllm_alltoall.CLASSES["MnnvlMoe"]
    cls = row._stand_in(errors.FlashInferNotInstalledError("no flashinfer"))
    with pytest.raises(errors.FlashInferNotInstalledError):
        cls()
    assert isinstance(cls.__dict__["mnnvl_moe_alltoallv"], staticmethod)


@pytest.mark.parametrize(
    ("release", "error", "match"),
    [
        (None, errors.FlashInferNotInstalledError, "no flashinfer-python"),
        ("0.2.6", errors.UnsupportedFlashInferVersionError, "exists from flashinfer-python 0.2.7"),
        ("0.7.4", errors.UnsupportedFlashInferVersionError, "NVLinkTwoSidedAlltoAll"),
    ],
)
def test_reexport_stand_ins_raise_on_any_use(
    release: str | None, error: type[Exception], match: str
) -> None:
    spec = tables.ALLTOALL_REEXPORTS["MoEAlltoallInfo"]
    fi = None if release is None else Distribution("flashinfer-python", release, "<test>", "")
    err = spec.problem(fi)
    assert isinstance(err, error) and match in str(err)
    from fi_compat._core.reexport import stand_in

    cls = stand_in(spec, err)  # type: ignore[arg-type]
    with pytest.raises(error, match=match):
        cls()
    with pytest.raises(error, match=match):
        cls.local_token_allocation_count  # noqa: B018
    assert spec.problem(Distribution("flashinfer-python", "0.6.7", "<t>", "")) is None


def test_reexports_never_drifted() -> None:
    """A re-export is honest only while its constructor never changed: every release of
    its snapshot it serves (from its first release or floor) has one parameter list
    (names, kinds, defaults; annotations aside)."""
    for r in tables.ALL_REEXPORTS:
        data = json.loads((snapshots.DIR / f"{r.snapshot}.json").read_text())
        served = KNOWN_RELEASES[KNOWN_RELEASES.index(r.since) :]
        shapes = {
            json.dumps([p[:3] for p in data["signatures"][rec["signature"]]])
            for v, rec in data["releases"].items()
            if rec is not None and v in served
        }
        assert len(shapes) == 1, (r.name, shapes)
        assert r.since in KNOWN_RELEASES


def test_mcast_gpu_buffer_is_served_from_its_0_6_0_constructor() -> None:
    """0.2.8-0.5.3 take ``mn_nvlink: bool`` as the fifth parameter, 0.6.0-0.7.4
    ``comm_backend_for_handle_transfer``: the class is handed out from 0.6.0, a typed
    error naming 0.6.0 on the older releases that have it."""
    r = tables.MNNVL_REEXPORTS["McastGPUBuffer"]
    data = json.loads((snapshots.DIR / f"{r.snapshot}.json").read_text())
    first = {v: rec for v, rec in data["releases"].items() if rec is not None}
    assert next(iter(first)) == "0.2.8" and r.since == r.floor == "0.6.0"
    names = {v: [p[0] for p in data["signatures"][rec["signature"]]] for v, rec in first.items()}
    assert names["0.5.3"][-1] == "mn_nvlink"
    assert names["0.6.0"][-1] == names["0.7.4"][-1] == "comm_backend_for_handle_transfer"
    for release in ("0.2.8", "0.5.3"):
        err = r.problem(Distribution("flashinfer-python", release, "<t>", ""))
        assert isinstance(err, errors.UnsupportedFlashInferVersionError)
        assert "0.6.0" in str(err) and release in str(err)
    assert r.problem(Distribution("flashinfer-python", "0.6.0", "<t>", "")) is None
    assert "McastGPUBuffer" in comm.mnnvl.__all__


def test_the_facade_modules_give_flashinfers_names_without_flashinfer() -> None:
    assert {"allreduce_fusion", "MoeAlltoAll", "Mapping"} <= set(comm.__all__)
    assert {"MnnvlConfig", "MnnvlMemory", "is_mnnvl_fabric_supported"} <= set(comm.mnnvl.__all__)
    from fi_compat.comm.trtllm_moe_alltoall import MoeAlltoAll

    from fi_compat.comm import FP4QuantizationSFLayout, vllm_all_reduce
    from fi_compat.comm.vllm_ar import all_reduce
    from fi_compat.enums import QuantizationSFLayout

    assert vllm_all_reduce is all_reduce
    assert FP4QuantizationSFLayout is QuantizationSFLayout
    assert MoeAlltoAll is comm.MoeAlltoAll


# -- flashinfer.comm's import failures, explained -----------------------------------------


def _fail_import(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    import importlib

    real = importlib.import_module

    def fake(name: str, package: str | None = None) -> types.ModuleType:
        if name.startswith("flashinfer"):
            raise exc
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", fake)


def _cuda_missing() -> ImportError:
    """What 0.3.0+ comm/mnnvl.py raises without cuda-python."""
    try:
        try:
            raise ModuleNotFoundError("No module named 'cuda'", name="cuda")
        except ImportError as e:
            raise ImportError(
                "Could not import the 'cuda' module. Please install cuda-python that "
                "matches your CUDA version."
            ) from e
    except ImportError as outer:
        return outer


@pytest.mark.parametrize(
    ("release", "exc", "error", "words"),
    [
        ("0.6.14", None, errors.OptionalDependencyMissingError, ("cuda-python",)),
        (
            "0.6.11",
            ModuleNotFoundError("No module named 'cuda.tile'", name="cuda.tile"),
            errors.OptionalDependencyMissingError,
            ("cuda-tile",),
        ),
        (
            "0.6.7",
            AssertionError("libcudart is not loaded in the current process"),
            errors.FlashInferImportError,
            ("comm-import-libcudart-not-loaded", "0.6.14"),
        ),
        (
            "0.6.16",
            TypeError("type 'array.array' is not subscriptable"),
            errors.FlashInferImportError,
            ("comm-import-python-below-3.12", "0.6.16.post4", "3.12"),
        ),
    ],
)
def test_import_failures_are_typed_and_explained(
    monkeypatch: pytest.MonkeyPatch,
    release: str,
    exc: BaseException | None,
    error: type[Exception],
    words: tuple[str, ...],
) -> None:
    monkeypatch.setattr(resolve, "check_imported_release", lambda a: None)
    _fail_import(monkeypatch, exc if exc is not None else _cuda_missing())
    a = _selected("allreduce_fusion" if release >= "0.6" else "trtllm_allreduce_fusion", release)
    with pytest.raises(error) as ei:
        a.resolve()
    assert type(ei.value) is error
    for w in words:
        assert w in str(ei.value), (w, str(ei.value))
    # the re-exports explain it the same way, as stand-ins whose use raises it
    with monkeypatch.context() as mp:
        mp.setenv(detection.OVERRIDE_ENV, release)
        detection.detect(refresh=True)
        try:
            cls = tables.REEXPORTS["Mapping"].value()
        finally:
            mp.undo()
            detection.detect(refresh=True)
    with pytest.raises(error) as ei2:
        cls(world_size=2)
    assert all(w in str(ei2.value) for w in words)


def test_the_python_row_applies_only_below_3_12(monkeypatch: pytest.MonkeyPatch) -> None:
    from fi_compat.device import TABLE

    row = next(i for i in TABLE if i.id == "comm-import-python-below-3.12")
    exc = TypeError("type 'array.array' is not subscriptable")
    monkeypatch.setattr(sys, "version_info", (3, 11, 7))
    assert resolve.import_issue_applies(row, exc)
    assert not resolve.import_issue_applies(row, AssertionError("x"))
    monkeypatch.setattr(sys, "version_info", (3, 12, 0))
    assert not resolve.import_issue_applies(row, exc)


@pytest.mark.parametrize("release", ["0.6.7", "0.7.4"])
def test_flashinfers_integer_constants_stay_on_the_generated_path(
    monkeypatch: pytest.MonkeyPatch, release: str
) -> None:
    """Engines pass FlashInfer's ``AllReduceFusionPattern.kARResidualRMSNorm`` (a plain
    int) per layer: a stable integer is a key of the enum table, so the call never takes
    the general path (it did: ~115 us a call); a bool, an IntEnum (read by name) and an
    ambiguous integer still go there."""
    import enum

    from fi_compat._core.adapter import Adapter

    general: list[Any] = []
    call_general = Adapter.call_general

    def counting(self: Adapter, *a: Any, **kw: Any) -> Any:
        general.append(a)
        return call_general(self, *a, **kw)

    monkeypatch.setattr(Adapter, "call_general", counting)
    fn, spy, _ = facade("allreduce_fusion", release)
    kw = args("allreduce_fusion")
    fn(**kw)  # the first call prepares (binds torch) on the general path
    general.clear()
    fn(**{**kw, "pattern": 1, "layout_code": 0})
    assert general == [] and spy.raw_kwargs[-1]["pattern"] == 1
    assert spy.raw_kwargs[-1]["layout_code"] == 0

    class EnginePattern(enum.IntEnum):  # an engine's copy: by name, not by value
        kARResidualRMSNormFP8Quant = 1

    fn(**{**kw, "pattern": EnginePattern.kARResidualRMSNormFP8Quant})
    assert len(general) == 1 and spy.raw_kwargs[-1]["pattern"] == 2
    with pytest.raises(errors.InvalidArgumentError):
        fn(**{**kw, "pattern": True})
    fn2, spy2, _ = facade("trtllm_allreduce_fusion", release)
    with pytest.raises(errors.InvalidArgumentError, match="LINEAR"):
        fn2(**{**args("trtllm_allreduce_fusion"), "layout_code": 1})  # ambiguous there
    assert spy2.calls == []
