"""``fi_compat.device.supports``: one query per facade function or family, answered from
fi_compat's tables, and in agreement with what the facade then does.

The agreement test asks the facade itself, independently of ``supports``: the adapter
``EntryPoint.select`` picks for the release (``problem_error``), its resolution with
FlashInfer's import made to fail the way a missing optional package makes it fail (or to
succeed, with a stand-in module), and its device check under an assumed capability; the
facade raises a typed error exactly where ``supports`` says no.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import pytest

from fi_compat import _device, device, errors
from fi_compat._core import resolve
from fi_compat._facades import entry_points
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES

ROOT = Path(__file__).resolve().parents[2]
CAPS = [(8, 0), (8, 9), (9, 0), (10, 0), (10, 3), (11, 0), (12, 0), (12, 1)]
ENTRIES = entry_points()


def _releases(e: Any) -> list[str]:
    """Every release where the entry point's adapter changes, one before its first, its
    removal, and the newest."""
    out = {g.lo for g in e.generations()} | {KNOWN_RELEASES[-1]}
    i = KNOWN_RELEASES.index(e.since)
    if i:
        out.add(KNOWN_RELEASES[i - 1])
    if e.until is not None:
        out.add(e.until)
    # and one older than every release fi_compat knows (below its floor)
    return ["0.1.6", *sorted(out, key=KNOWN_RELEASES.index)]


def _missing_sets(e: Any) -> list[tuple[str, ...]]:
    mods = sorted({d.module for d in e.optional_deps})
    return [(), *((m,) for m in mods)] + ([tuple(mods)] if len(mods) > 1 else [])


def _stand_in(attr: str) -> types.SimpleNamespace:
    """A module whose ``attr`` (dotted: ``Class.method``) exists."""
    leaf: Any = lambda *a, **k: None  # noqa: E731
    for part in reversed(attr.split(".")[1:]):
        leaf = types.SimpleNamespace(**{part: leaf})
    return types.SimpleNamespace(**{attr.split(".")[0]: leaf})


def facade_verdict(
    monkeypatch: pytest.MonkeyPatch,
    e: Any,
    release: str,
    cc: tuple[int, int],
    missing: tuple[str, ...],
) -> Exception | None:
    """The typed error the facade raises before any launch, or None."""
    a = e.select(Distribution("flashinfer-python", release, "<test>", ""))
    err = a.problem_error()
    if err is not None:
        return err
    absent = [d.module for d in e.optional_dependencies(a.placement) if d.module in missing]
    real = importlib.import_module

    def fake(name: str, package: str | None = None) -> Any:
        if not name.startswith("flashinfer"):
            return real(name, package)
        if absent:
            raise ModuleNotFoundError(f"No module named {absent[0]!r}", name=absent[0])
        return _stand_in(e.attr_on(a.placement))

    with monkeypatch.context() as mp:
        mp.setattr(importlib, "import_module", fake)
        mp.setattr(resolve, "check_imported_release", lambda a: None)
        # a requirement with a minimum version (b12x: nvidia-cutlass-dsl>=4.4.2) is met
        # unless this case takes its module away, as supports(missing=...) assumes
        check = resolve.check_requirement
        mp.setattr(
            resolve,
            "check_requirement",
            lambda a, dep: check(a, dep) if dep.module in missing else None,
        )
        try:
            a.resolve()
        except errors.FiCompatError as exc:
            return exc
    if e.devices is not None:
        with _device.assume_capability(cc):
            try:
                a.check_device(0, record=False)
            except errors.UnsupportedDeviceError as exc:
                return exc
    return None


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.dotted.removeprefix("fi_compat."))
def test_supports_agrees_with_the_facade(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, entry: Any
) -> None:
    # TRTLLM-gen cubins present (the MoE device rule asks for them; both sides agree
    # without them too, but then nothing of that family is ever supported)
    (tmp_path / "checksums.txt").write_text("")
    monkeypatch.setenv("FLASHINFER_CUBIN_DIR", str(tmp_path))
    monkeypatch.delenv("FI_COMPAT_IGNORE_ISSUES", raising=False)
    monkeypatch.delenv(device.DISABLE_ENV, raising=False)
    monkeypatch.delenv("FI_COMPAT_STRICT", raising=False)
    query = entry.dotted.removeprefix("fi_compat.")
    yes = no = 0
    for release in _releases(entry):
        for missing in _missing_sets(entry):
            for cc in CAPS:
                s = device.supports(query, capability=cc, release=release, missing=missing)
                err = facade_verdict(monkeypatch, entry, release, cc, missing)
                where = (query, release, cc, missing, s.reasons, err)
                assert bool(s) == (err is None), where
                if err is None:
                    yes += 1
                    continue
                no += 1
                assert isinstance(err, errors.FiCompatError), where
                if s.fix is not None and isinstance(err, errors.OptionalDependencyMissingError):
                    assert err.package in s.fix, where  # the same package named
    assert yes, f"{query}: never supported on {_releases(entry)}"
    assert no, f"{query}: never refused (a release before its first is one case)"


def test_families_are_the_conjunction_of_their_members() -> None:
    for query, rel, cc in [
        ("moe.trtllm", "0.6.7", (12, 0)),
        ("comm.allreduce", "0.6.7", (9, 0)),
        ("comm.vllm_ar", "0.2.3", (9, 0)),
        ("attention.trtllm", "0.6.7", (10, 3)),
        ("decode.BatchDecodeWithPagedKVCacheWrapper", "0.6.7", (9, 0)),
    ]:
        members = device.query_members(query)
        assert members
        each = [
            bool(device.supports(m.dotted, capability=cc, release=rel, missing=())) for m in members
        ]
        assert bool(device.supports(query, capability=cc, release=rel, missing=())) == all(each)
    # several queries: all must hold
    both = device.supports(
        ["comm.allreduce_fusion", "gemm.mm_bf16"], capability=(9, 0), release="0.6.0", missing=()
    )
    assert not both  # mm_bf16 exists from 0.6.3
    assert any("gemm.mm_bf16" in r and "0.6.3" in r for r in both.reasons), both.reasons


def test_a_query_names_what_it_refuses() -> None:
    s = device.supports(
        "comm.allreduce_fusion", capability=(9, 0), release="0.6.11", missing=("cuda.tile",)
    )
    assert not s and s.fix is not None and "cuda-tile" in s.fix
    s = device.supports("moe.trtllm", capability=(9, 0), release="0.7.4", missing=())
    assert not s and any("SM90" in r for r in s.reasons)
    s = device.supports("attention.trtllm", capability=(10, 3), release="0.6.7", missing=())
    assert not s and [i.id for i in s.issues] == ["sm103-trtllm-attention-hang"]
    with pytest.raises(ValueError, match=r"families: .*moe\.trtllm"):
        device.query_members("no.such.thing")


def test_no_gpu_and_no_release(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(device, "current_capability", lambda device=None: None)
    s = device.supports("norm.rmsnorm", release="0.6.7")
    assert not s and any("no CUDA device" in r for r in s.reasons)


def test_disable_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(device.DISABLE_ENV, "moe")
    s = device.supports("fused_moe.cutlass_fused_moe", capability=(9, 0), release="0.7.4")
    assert not s and any(device.DISABLE_ENV in r for r in s.reasons)


def test_supports_imports_neither_torch_nor_flashinfer() -> None:
    code = (
        "import sys\n"
        "from fi_compat import device\n"
        "for q in ('comm', 'moe.trtllm', 'attention', 'fused_moe.cutlass_fused_moe'):\n"
        "    device.supports(q, capability=(10, 0), release='0.6.7')\n"
        "assert 'torch' not in sys.modules and 'flashinfer' not in sys.modules\n"
    )
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)


def test_vllm_probe_table_resolves_and_is_documented() -> None:
    doc = (ROOT / "docs" / "capabilities.md").read_text()
    for probe, (queries, note) in device.VLLM_PROBES.items():
        assert f"`{probe}`" in doc, probe
        for q in queries or ():
            assert device.query_members(q), q
            assert f"`{q}`" in doc, q
        assert queries or note, probe


def test_a_release_newer_than_fi_compat_knows(monkeypatch: pytest.MonkeyPatch) -> None:
    newer = "99.0.0"
    e = device.query_members("norm.rmsnorm")[0]
    with warnings.catch_warnings():  # warned once per process: maybe earlier in a worker
        warnings.simplefilter("ignore", errors.UntestedFlashInferVersionWarning)
        s = device.supports("norm.rmsnorm", capability=(9, 0), release=newer, missing=())
    assert s and any("newer than fi_compat knows" in r for r in s.reasons)
    monkeypatch.setenv("FI_COMPAT_STRICT", "1")
    s = device.supports("norm.rmsnorm", capability=(9, 0), release=newer, missing=())
    err = facade_verdict(monkeypatch, e, newer, (9, 0), ())
    assert not s and isinstance(err, errors.UntestedFlashInferVersionError)
