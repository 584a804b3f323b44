"""The upgrade tools (``python -m fi_compat diff | scan | migrate``) on real releases.

The API history (``fi_compat/_api_history.json.gz``, tools/api_history.py) is checked
against the signature snapshots of every covered entry point; ``diff`` against changes
read from the release sources; ``scan`` and ``migrate`` against
``tests/support/upgrade_engine``, an engine written for flashinfer-python 0.6.17 in the
styles vLLM and SGLang use (lazy per-symbol wrappers, ``hasattr`` probes, wrapper
objects kept on ``self`` and in lists, positional ``plan`` calls, ``from
flashinfer.fused_moe import ...``).
"""

from __future__ import annotations

import ast
import gzip
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, run_python
from fi_compat._facades import entry_points
from fi_compat._snapshot_io import DIR as SNAPSHOTS
from fi_compat._snapshot_io import load
from fi_compat.cli import api, main
from fi_compat.cli import diff as diff_cmd
from fi_compat.cli import scan as scan_cmd
from fi_compat.registry import KNOWN_RELEASES

ENGINE = ROOT / "tests" / "support" / "upgrade_engine"
BUDGET = 1_250_000  # bytes of the gzip'd history shipped in the wheel (docs/upgrade.md)


# -- the API history ------------------------------------------------------------------


def test_history_is_complete_and_within_its_size_budget() -> None:
    size = api.DATA.stat().st_size
    assert size < BUDGET, f"{size} bytes: over the budget in docs/upgrade.md"
    data = json.loads(gzip.decompress(api.DATA.read_bytes()))
    assert data["format"] == 1 and data["generated_by"].startswith("tools/api_history.py")
    assert tuple(data["releases"]) == KNOWN_RELEASES
    h = api.history()
    assert all(h.has_module("flashinfer", i) for i in range(len(KNOWN_RELEASES)))
    # not only the covered names: every public callable (a few per release)
    newest = h.index[KNOWN_RELEASES[-1]]
    assert len(h.exposures(newest)) > 15_000
    assert h.lookup("flashinfer.comm.trtllm_allreduce_fusion", newest).kind == "function"


def _params(rec: dict[str, Any]) -> list[list[Any]]:
    return [p[:3] for p in rec["p"]]


def test_history_agrees_with_every_covered_snapshot() -> None:
    """Every release of every entry point's snapshot (tools/snapshot.py) has the same
    parameters (name, kind, default) in the history, read by the other tool: methods
    through their class (inherited ones too), forwarders with their callee's."""
    h = api.history()
    checked = 0
    for e in entry_points():
        data = load(e)
        for release, rec in data["releases"].items():
            if rec is None:
                continue
            i = h.index[release]
            attr = rec.get("attr", e.attr)
            if attr.split(".")[-1].startswith("_"):
                continue  # a private FlashInfer name: the history holds public callables
            want = [p[:3] for p in data["signatures"][rec["signature"]]]
            if "." in attr:
                cls, _, meth = attr.rpartition(".")
                hit = h.method(f"{rec['module']}:{cls}", meth, i)
                assert hit is not None, (e.dotted, release)
                got = hit[1]
            else:
                got = h.record(f"{rec['module']}:{attr}", i)
                assert got is not None, (e.dotted, release)
            assert _params(got) == want, (e.dotted, release)
            assert got.get("via") == rec.get("via"), (e.dotted, release)
            checked += 1
    for path in sorted(SNAPSHOTS.glob("tllm_enums.*.json")):  # enum members and values
        data = json.loads(path.read_text())
        for release, rec in data["releases"].items():
            if rec is None:
                continue
            name = path.stem.split(".")[1]
            got = h.record(f"{rec['module']}:{name}", h.index[release])
            assert got is not None, (name, release)
            members = [[p[0], p[2]] for p in data["signatures"][rec["signature"]]]
            assert [m for m in got["e"] if m[1].lstrip("-").isdigit()] == members
            checked += 1
    assert checked > 3000


# -- diff -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def coverage() -> api.Coverage:
    return api.Coverage()


def _diff(old: str, new: str, module: str | None, coverage: api.Coverage) -> dict[str, Any]:
    return diff_cmd.Differ(api.history(), old, new, module, coverage).compare()


def _item(data: dict[str, Any], name: str) -> dict[str, Any]:
    hits = [it for it in data["items"] if name in it.get("names", [it["name"]])]
    assert len(hits) == 1, [it["name"] for it in hits]
    return hits[0]


def test_diff_names_an_inserted_positional_parameter_and_the_slot_it_shifts(
    coverage: api.Coverage,
) -> None:
    """0.6.14 inserted ``per_token_scale`` before ``output`` in the FP4 MoE (slot 28):
    positional callers shift there."""
    data = _diff("0.6.8.post1", "0.6.14", "flashinfer.fused_moe", coverage)
    it = _item(data, "flashinfer.fused_moe.trtllm_fp4_block_scale_moe")
    changes = {c["change"]: c for c in it["changes"]}
    assert changes["inserted"]["param"] == "per_token_scale"
    assert changes["inserted"]["slot"] == 28 and changes["inserted"]["was"] == "output"
    assert changes["shift"] == {
        "change": "shift",
        "slot": 28,
        "was": "output",
        "now": "per_token_scale",
        "breaks": True,
    }
    assert it["breaks"]
    (fc,) = [f for f in it["fi_compat"] if f["entry_point"].endswith("trtllm_fp4_block_scale_moe")]
    assert fc["positional_prefix"] == 24
    assert any("written_for('0.6.8.post1')" in n for n in fc["does"])


def test_diff_follows_a_forwarder_and_sees_no_shift(coverage: api.Coverage) -> None:
    """0.6.15 turned BatchDecodeWithPagedKVCacheWrapper.plan into ``plan(..., page_size,
    *deprecated_positional_args, **kwargs)`` forwarding to ``_plan_impl``; the legacy
    positional order survives, ``window_right`` is new and keyword-only."""
    data = _diff("0.6.14", "0.6.15", "flashinfer.decode", coverage)
    it = _item(data, "flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper")
    plan = it["methods"]["plan"]["changes"]
    assert {"change": "added", "param": "window_right", "kind": "keyword-only"}.items() <= plan[
        0
    ].items()
    assert not [c for c in plan if c["change"] in ("shift", "inserted", "moved")]


def test_diff_reports_enum_values_that_moved_and_known_issues(coverage: api.Coverage) -> None:
    data = _diff("0.6.17", "0.6.18", None, coverage)
    it = _item(data, "flashinfer.fused_moe.RoutingMethodType")
    members = {c["member"]: c for c in it["changes"] if c["change"] == "member"}
    assert (members["Unspecified"]["was"], members["Unspecified"]["now"]) == ("9", "10")
    assert members["TopKSigmoid"]["was"] is None
    assert it["fi_compat"][0]["entry_point"] == "fi_compat.enums.RoutingMethodType"
    introduced = {r["id"] for r in data["known_issues"]["introduced"]}
    assert {"0.6.18-gpt-oss-eval-oom", "0.6.18-gpu0-stall"} <= introduced
    text = diff_cmd.render(data)
    assert len(text.splitlines()) < 250  # a pull request's worth
    assert "member Unspecified: 9 -> 10" in text


def test_diff_reports_what_fi_compat_knows_beyond_signatures(coverage: api.Coverage) -> None:
    """0.7.0: GDN prefill reads int32 launch metadata (int64 before), the MLA decode
    wrapper is gone, the 0.6.18 hang and OOM reports end."""
    data = _diff("0.6.18.post1", "0.7.0", None, coverage)
    it = _item(data, "flashinfer.gdn_prefill.chunk_gated_delta_rule")
    (fc,) = it["fi_compat"]
    assert fc["differs"]["native_dtypes"]["cu_seqlens"] == {"old": "int64", "new": "int32"}
    mla = _item(data, "flashinfer.decode.BatchDecodeMlaWithPagedKVCacheWrapper")
    assert mla["status"] == "removed"
    assert {"0.6.18-gpu0-stall"} <= {r["id"] for r in data["known_issues"]["fixed"]}


def test_diff_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "0.6.17", "0.6.18", "--module", "flashinfer.gdn_prefill", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == 1 and data["command"] == "diff"
    assert set(data) >= {"old", "new", "module", "summary", "items", "known_issues", "modules"}
    assert main(["diff", "0.6.17", "0.9.9"]) == 2
    assert "not a known flashinfer-python release" in capsys.readouterr().err


# -- scan -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scanned() -> dict[str, Any]:
    return scan_cmd.run([str(ENGINE)], None, ["0.6.18", "0.6.8.post1", "0.7.0", "0.4.1"])


def _site(data: dict[str, Any], kind: str, path: str, **where: Any) -> dict[str, Any]:
    hits = [
        s
        for s in data["sites"]
        if s["kind"] == kind and s["path"] == path and all(s[k] == v for k, v in where.items())
    ]
    assert len(hits) == 1, (kind, path, [(s["file"], s["line"]) for s in hits])
    return hits[0]


def test_scan_reads_the_pin_and_finds_every_style(scanned: dict[str, Any]) -> None:
    assert scanned["pin"] == "0.6.17" and scanned["pin_from"].endswith("requirements.txt")
    # a lazy per-symbol wrapper, called with keywords
    moe = _site(scanned, "call", "flashinfer.fused_moe.cutlass_fused_moe")
    assert "tune_max_num_tokens" in moe["keywords"] and moe["positional"] == 0
    assert moe["releases"]["0.6.18"]["status"] == "same"
    # hasattr probes, also of a module imported lazily by string
    mla = _site(scanned, "probe", "flashinfer.BatchDecodeMlaWithPagedKVCacheWrapper")
    assert mla["releases"]["0.6.18"]["status"] == "true"
    assert mla["releases"]["0.7.0"]["status"] == "false"
    _site(scanned, "probe", "flashinfer.fused_moe.cutlass_fused_moe")
    # wrapper methods on objects kept in lists, in dataclass fields, on self
    plans = [s for s in scanned["sites"] if s["path"].endswith("Wrapper.plan")]
    assert {s["path"].rpartition(".")[0].rpartition(".")[2] for s in plans} == {
        "BatchDecodeWithPagedKVCacheWrapper",
        "BatchPrefillWithPagedKVCacheWrapper",
    }
    assert all(s["bound"] for s in plans)
    ragged = _site(scanned, "call", "flashinfer.BatchPrefillWithRaggedKVCacheWrapper.begin_forward")
    assert ragged["fi_compat"]["entry_point"].endswith("BatchPrefillWithRaggedKVCacheWrapper.plan")
    fwd = _site(scanned, "call", "flashinfer.BatchDecodeWithPagedKVCacheWrapper.forward")
    assert fwd["fi_compat"]["covered"] and "inherited" in fwd["fi_compat"]["action"]
    # imports from a submodule that only some releases have
    core = _site(scanned, "import", "flashinfer.fused_moe.core.ActivationType")
    assert core["releases"]["0.6.18"]["status"] == "present"
    assert core["releases"]["0.4.1"]["status"] == "needs-newer"
    # an imported function called inside the function that imports it
    gdn = _site(scanned, "call", "flashinfer.gdn_prefill.chunk_gated_delta_rule")
    assert gdn["releases"]["0.4.1"]["status"] == "needs-newer"
    assert gdn["releases"]["0.4.1"]["detail"] == "first in 0.6.0"
    assert gdn["fi_compat"]["releases"]["0.6.17"]["native_dtypes"] == {"cu_seqlens": "int64"}
    assert gdn["fi_compat"]["releases"]["0.7.0"]["native_dtypes"] == {"cu_seqlens": "int32"}
    assert (
        scanned["not_followed"]
        and "import_module(module_name)" in scanned["not_followed"][0]["code"]
    )


def test_scan_tells_same_meaning_from_shifted_meaning(scanned: dict[str, Any]) -> None:
    """The 29 positional arguments of the MoE call were written for 0.6.17, where slot 28
    is ``per_token_scale`` (inserted in 0.6.14); on 0.6.8.post1 the same call puts that
    argument in ``output``.  The decode ``plan`` call passes 11 positionally: 0.6.17
    binds the last 4 through its deprecated ``*args`` in the old order, so 0.6.8.post1
    and 0.7.0 bind them alike."""
    moe = _site(scanned, "call", "flashinfer.fused_moe.trtllm_fp4_block_scale_moe")
    assert moe["positional"] == 29
    assert moe["releases"]["0.6.18"]["status"] == "same"
    old = moe["releases"]["0.6.8.post1"]
    assert old["status"] == "shifted"
    assert old["shifted"] == [{"slot": 28, "was": "per_token_scale", "now": "output"}]
    assert moe["breaks"]
    fc = moe["fi_compat"]
    assert fc["needs_written_for"] and fc["positional_prefix"] == 24
    assert "written_for('0.6.17').fused_moe.trtllm_fp4_block_scale_moe" in fc["action"]
    plan = _site(scanned, "call", "flashinfer.BatchDecodeWithPagedKVCacheWrapper.plan")
    assert plan["positional"] == 11
    assert plan["releases"]["0.6.17"]["legacy_positional"] == 4
    for r in ("0.6.18", "0.6.8.post1", "0.7.0"):
        assert plan["releases"][r]["status"] == "same", r
    assert plan["fi_compat"]["needs_written_for"]
    untouched = _site(
        scanned, "call", "flashinfer.gemm.gemm_base.get_fp8_blockscale_gemm_runner_sm90"
    )
    assert untouched["fi_compat"] == {"covered": False}


def test_scan_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", str(ENGINE), "--release", "0.6.18"]) == 0
    out = capsys.readouterr().out
    assert "written for flashinfer-python 0.6.17" in out
    assert main(["scan", str(ENGINE), "--release", "0.6.8.post1"]) == 1
    out = capsys.readouterr().out
    assert "shifted: positional slot 28 lands in 'output' (was 'per_token_scale'" in out
    assert main(["scan", str(ENGINE), "--release", "0.6.18", "--pin", "0.6.99"]) == 2


def test_scan_follows_bindings_and_leaves_ambiguous_ones(tmp_path: Path) -> None:
    """Flow-insensitive binding: an object that is FlashInfer's on one path and the
    project's own on another is neither; a module reached by ``import_module`` with a
    literal and a function returning FlashInfer's object are followed; parameters
    annotated with FlashInfer classes are instances; a computed attribute is listed."""
    (tmp_path / "mod.py").write_text(
        "import importlib\n"
        "import flashinfer\n"
        "from flashinfer import BatchPrefillWithPagedKVCacheWrapper as Prefill\n\n"
        "class Own:\n"
        "    def plan(self, *a): ...\n\n"
        "def make(flag):\n"
        "    w = Prefill(None) if flag else Own()\n"
        "    w.plan(1, 2, 3)\n"
        "    return flashinfer.norm\n\n"
        "def use(w: Prefill, name):\n"
        "    w.run(1, 2)\n"
        "    make(True).rmsnorm(1, 2)\n"
        "    importlib.import_module('flashinfer.sampling').softmax(1)\n"
        "    return getattr(flashinfer, name)\n"
    )
    # SGLang replaces a wrapper's method with a partial of fast_decode_plan (and a file
    # may start with a byte-order mark)
    (tmp_path / "sgl.py").write_bytes(
        b"\xef\xbb\xbffrom functools import partial\n"
        b"from flashinfer import BatchDecodeWithPagedKVCacheWrapper, fast_decode_plan\n\n"
        b"def setup(ws):\n"
        b"    w = BatchDecodeWithPagedKVCacheWrapper(ws, 'NHD')\n"
        b"    w.begin_forward = partial(fast_decode_plan, w)\n"
        b"    w.run = lambda *a: None\n"
        b"    w.begin_forward(1, 2, 3, 4, 4, 128, 16, global_override_indptr_cpu=None)\n"
        b"    w.run(1, 2, 3, 4, 5, 6)\n"
    )
    data = scan_cmd.run([str(tmp_path)], "0.6.17", ["0.6.18"], with_fi_compat=False)
    assert not data["errors"]
    calls = {s["path"] for s in data["sites"] if s["kind"] == "call"}
    assert "flashinfer.BatchPrefillWithPagedKVCacheWrapper.plan" not in calls  # ambiguous
    assert {
        "flashinfer.BatchPrefillWithPagedKVCacheWrapper",
        "flashinfer.BatchPrefillWithPagedKVCacheWrapper.run",
        "flashinfer.norm.rmsnorm",
        "flashinfer.sampling.softmax",
    } <= calls
    assert [d["code"] for d in data["not_followed"]] == ["getattr(flashinfer, name)"]
    fast = _site(data, "call", "flashinfer.fast_decode_plan")
    assert fast["positional"] == 8  # the wrapper the partial binds, then the call's 7
    assert fast["releases"]["0.6.18"]["status"] == "same"
    run = _site(data, "call", "flashinfer.BatchDecodeWithPagedKVCacheWrapper.run")
    assert run["releases"]["0.6.18"]["status"] == "unknown"  # replaced by the project


# -- migrate ----------------------------------------------------------------------------


@pytest.fixture
def engine_copy(tmp_path: Path) -> Path:
    shutil.copytree(ENGINE, tmp_path / "upgrade_engine")
    return tmp_path / "upgrade_engine"


def test_migrate_dry_run_prints_a_diff_and_writes_nothing(
    engine_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("libcst")
    before = {p: p.read_text() for p in engine_copy.rglob("*.py")}
    assert main(["migrate", str(engine_copy)]) == 0
    out = capsys.readouterr().out
    assert {p: p.read_text() for p in engine_copy.rglob("*.py")} == before
    assert "-from flashinfer.fused_moe import RoutingMethodType, trtllm_fp4_block_scale_moe" in out
    assert "+from fi_compat.fused_moe import RoutingMethodType, trtllm_fp4_block_scale_moe" in out
    assert "would rewrite 3 files" in out
    assert (
        "layers/gdn.py:31 flashinfer.gemm.gemm_base.get_fp8_blockscale_gemm_runner_sm90" in out
    )  # listed, untouched


def test_migrate_write_keeps_layout_and_meaning(engine_copy: Path) -> None:
    pytest.importorskip("libcst")
    assert main(["migrate", str(engine_copy), "--write"]) == 0
    backend = (engine_copy / "fake_engine/attention/flashinfer_backend.py").read_text()
    moe = (engine_copy / "fake_engine/moe/flashinfer_moe.py").read_text()
    gdn = (engine_copy / "fake_engine/layers/gdn.py").read_text()
    for text in (backend, moe, gdn):
        ast.parse(text)
    # comments and layout of a multi-line import survive; only the module changes
    assert "from fi_compat import (\n        BatchDecodeWithPagedKVCacheWrapper," in backend
    assert "BatchPrefillWithRaggedKVCacheWrapper,  # ragged prefill for extend" in backend
    assert "    # every argument by position, as the 0.6.x kernels' callers wrote them" in moe
    # positional past the stable prefix: the pinned release's binding
    assert 'fi_compat.written_for("0.6.17").fused_moe.trtllm_fp4_block_scale_moe(' in moe
    assert 'fi_compat.written_for("0.6.17").decode.BatchDecodeWithPagedKVCacheWrapper(' in backend
    assert "BatchPrefillWithRaggedKVCacheWrapper(workspace" in backend  # within its prefix
    # attribute chains through module aliases; the alias import goes, uncovered stays
    assert "fi_compat.norm.rmsnorm(x, weight, eps)" in gdn
    assert "import flashinfer.norm as fi_norm" not in gdn
    assert (
        "flashinfer.gemm.gemm_base.get_fp8_blockscale_gemm_runner_sm90(" in gdn
        and "\nimport flashinfer\n" in gdn
    )
    # what the rewritten code names exists in fi_compat (no FlashInfer needed), and the
    # written_for binder puts slot 28 where 0.6.17 did
    code = (
        "import fi_compat\n"
        "from fi_compat.fused_moe.core import ActivationType\n"
        "from fi_compat.cascade import merge_state\n"
        "w = fi_compat.written_for('0.6.17')\n"
        "assert w.decode.BatchDecodeWithPagedKVCacheWrapper.__name__\n"
        "f = w.fused_moe.trtllm_fp4_block_scale_moe\n"
        "from fi_compat._core.written import _binding\n"
        "import fi_compat.fused_moe as m\n"
        "pos = _binding(m.trtllm_fp4_block_scale_moe, '0.6.17', (), False)[0]\n"
        "assert pos[28] == 'per_token_scale', pos[26:30]\n"
        "print(fi_compat.norm.rmsnorm.__name__, fi_compat.fused_add_rmsnorm.__name__)\n"
    )
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    # a second run finds nothing left to do
    changed, report = __import__("fi_compat.cli.migrate", fromlist=["run"]).run(
        [str(engine_copy)], None, False
    )
    assert changed == [] and report["uncovered"]


def test_migrate_without_libcst_names_the_extra(
    engine_copy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "libcst", None)
    assert main(["migrate", str(engine_copy)]) == 2
    assert "pip install 'fi_compat[tools]'" in capsys.readouterr().err


def test_import_fi_compat_loads_none_of_the_tools() -> None:
    r = run_python(
        "import sys, fi_compat, fi_compat.norm\n"
        "bad = [m for m in sys.modules if m.startswith(('fi_compat.cli', 'libcst'))]\n"
        "assert not bad, bad\n"
    )
    assert r.returncode == 0, r.stderr
