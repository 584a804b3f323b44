"""doctor's packaging / toolchain findings against generated dist-info, and download-cubin.

flashinfer-jit-cache is not on PyPI and flashinfer-cubin left it after 0.6.13, so these
mismatch cases use generated dist-info folders (METADATA only); the real installed case
(flashinfer-cubin 0.6.0 beside flashinfer-python 0.6.7) runs in the release matrix.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from test_detection import make_dist, make_package

from conftest import ROOT, run_python
from fi_compat._installation import (
    check_cubin_dir,
    check_duplicates,
    check_imported,
    check_package,
)
from fi_compat.cli.doctor import (
    check_jit_cache_dir,
    check_known_issues,
    check_packaging,
    check_toolchain,
    cubin_dir_in_use,
    wrapped_features,
)
from fi_compat.detection import Detection, _scan, _scan_all


def det_for(tmp_path: Path, fi: str, cubin: str | None = None, jit: str | None = None) -> Detection:
    make_dist(tmp_path, "flashinfer_python", fi)
    if cubin:
        make_dist(tmp_path, "flashinfer_cubin", cubin)
    if jit:
        make_dist(tmp_path, "flashinfer_jit_cache", jit)
    return Detection(_scan([str(tmp_path)]), False)


def codes(findings: list) -> dict[str, str]:
    return {f.code: f.severity for f in findings}


@pytest.mark.parametrize(
    ("fi", "cubin", "jit", "want"),
    [
        ("0.6.7", "0.6.7", "0.6.7+cu129", {}),
        ("0.6.10", "0.6.8.post1", None, {"cubin-mismatch": "error"}),  # the NeMo/vLLM report
        ("0.7.1", "0.7.0", None, {"cubin-mismatch": "error"}),  # last release that raises
        ("0.7.2", "0.7.1", None, {"cubin-mismatch": "warning"}),  # 0.7.2: warned and ignored
        ("0.6.18", None, "0.6.17+cu130", {"jit-cache-mismatch": "error"}),
        ("0.6.1", None, "0.6.18+cu130", {"jit-cache-prefix": "warning"}),  # startswith quirk
        ("0.7.0", None, "0.7.0+cu130", {}),
        ("0.7.0", None, "0.7.0.post1+cu130", {"jit-cache-mismatch": "error"}),  # exact or v+
        ("0.7.4", None, "0.7.2+cu130", {"jit-cache-mismatch": "warning"}),
    ],
)
def test_packaging_coherence(
    tmp_path: Path, fi: str, cubin: str | None, jit: str | None, want: dict[str, str]
) -> None:
    got = codes(check_packaging(det_for(tmp_path, fi, cubin, jit), {}))
    for code in ("cubin-mismatch", "jit-cache-mismatch", "jit-cache-prefix"):
        assert got.get(code) == want.get(code), (code, got)


def test_version_check_bypass_warns_about_stale_kernels(tmp_path: Path) -> None:
    det = det_for(tmp_path, "0.6.10", cubin="0.6.8.post1")
    got = codes(check_packaging(det, {"FLASHINFER_DISABLE_VERSION_CHECK": "1"}))
    assert got["cubin-mismatch"] == "warning" and got["version-check-disabled"] == "warning"


def test_cubin_fix_uses_flashinfer_index_from_0_6_14(tmp_path: Path) -> None:
    det = det_for(tmp_path, "0.6.16", cubin="0.6.13")
    fix = next(f.fix for f in check_packaging(det, {}) if f.code == "cubin-mismatch")
    assert fix == "pip install 'flashinfer-cubin==0.6.16' --index-url https://flashinfer.ai/whl"


@pytest.mark.parametrize(("fi", "wins"), [("0.6.15", "package"), ("0.6.16", "env")])
def test_cubin_dir_precedence(tmp_path: Path, fi: str, wins: str) -> None:
    det = det_for(tmp_path, fi, cubin=fi)
    assert det.flashinfer is not None
    d, why = cubin_dir_in_use(det.flashinfer, det.cubin, {"FLASHINFER_CUBIN_DIR": "/x/cubins"})
    assert (d == "/x/cubins") == (wins == "env"), why


@pytest.mark.parametrize("var", ["FLASHINFER_CUBIN_DIR", "FLASHINFER_WORKSPACE_BASE"])
@pytest.mark.parametrize("below", [False, True])
def test_a_directory_variable_naming_a_file_is_an_error(
    tmp_path: Path, var: str, below: bool
) -> None:
    """FlashInfer reads cubins from / builds kernels under these directories (creating
    missing ones): a file there, or above them, can never work; doctor says so."""
    det = det_for(tmp_path / "site", "0.7.4")
    assert det.flashinfer is not None
    f = tmp_path / "a-file"
    f.write_text("")
    env = {var: str(f / "sub" if below else f)}
    found = [*check_cubin_dir(det, env), check_jit_cache_dir(det.flashinfer, env)]
    bad = [x for x in found if x.severity == "error"]
    want = {"cubins", "jit-cache-dir"} if var == "FLASHINFER_WORKSPACE_BASE" else {"cubins"}
    assert {x.code for x in bad} == want, [(x.code, x.severity, x.title) for x in found]
    for x in bad:
        assert "must be a directory" in x.title and f"{f} is a file" in x.title
        assert var in x.fix
    env = {var: str(tmp_path / "new" / "dir")}  # missing: FlashInfer creates it
    found = [*check_cubin_dir(det, env), check_jit_cache_dir(det.flashinfer, env)]
    assert all(x.severity != "error" for x in found)


def fake_nvcc(tmp_path: Path, release: str) -> str:
    p = tmp_path / "nvcc"
    p.write_text(f"#!/bin/sh\necho 'Cuda compilation tools, release {release}, V{release}.1'\n")
    p.chmod(0o755)
    return str(p)


@pytest.mark.parametrize(
    ("nvcc", "cc", "sev"),
    [("12.8", (12, 0), "error"), ("12.9", (12, 1), "ok"), ("12.8", (9, 0), "ok")],
)
def test_nvcc_new_enough_for_sm120(
    tmp_path: Path, nvcc: str, cc: tuple[int, int], sev: str
) -> None:
    det = det_for(tmp_path, "0.6.18")
    f = {
        x.code: x for x in check_toolchain(det, {"FLASHINFER_NVCC": fake_nvcc(tmp_path, nvcc)}, cc)
    }
    assert f["nvcc"].severity == sev, f["nvcc"].title


def cli(*args: str, env: dict[str, str]) -> tuple[int, str]:
    code = f"import sys; from fi_compat.cli import main; sys.exit(main({list(args)!r}))"
    r = run_python(code, env=env)
    assert "Traceback" not in r.stderr, r.stderr
    # JSON on stdout alone (torch may warn on stderr, e.g. without numpy)
    return r.returncode, r.stdout if "--json" in args else r.stdout + r.stderr


def test_download_cubin_dry_run_shows_what_would_run(tmp_path: Path) -> None:
    env = {"FI_COMPAT_FLASHINFER_VERSION": "0.6.7", "FLASHINFER_WORKSPACE_BASE": str(tmp_path)}
    rc, out = cli("download-cubin", "--dry-run", env=env)
    assert rc == 0 and "-m flashinfer download-cubin" in out
    assert f"into {tmp_path}/.cache/flashinfer/cubins" in out and "artifactory" in out
    rc, out = cli("download-cubin", "--dry-run", "--dest", str(tmp_path / "c"), env=env)
    assert f"into {tmp_path}/c (FLASHINFER_CUBIN_DIR)" in out
    rc, out = cli("download-cubin", "--dry-run", env={"FI_COMPAT_FLASHINFER_VERSION": "0.3.0"})
    assert rc == 2 and "no download-cubin command (0.3.1+)" in out


def test_download_cubin_fails_loudly_when_nothing_arrives(tmp_path: Path) -> None:
    # FlashInfer itself is not importable here: its command fails, nothing is fetched
    env = {"FI_COMPAT_FLASHINFER_VERSION": "0.6.7", "FLASHINFER_CUBIN_DIR": str(tmp_path)}
    rc, out = cli("download-cubin", env=env)
    assert rc == 1 and "fetched nothing usable" in out and "0 cubins" in out
    assert out.count("download-cubin failed") == 1  # one summary; FlashInfer's lines above it


def test_info_reports_a_populated_cubin_directory(tmp_path: Path) -> None:
    # the layout FlashInfer leaves (flashinfer-cubin 0.6.0 ships it so): per kernel a
    # .cubin and the .cubin.lock taken while fetching it, checksums.txt, include/*.h
    group = tmp_path / "ccae3ed1" / "batched_gemm-0d275a2"
    (group / "include").mkdir(parents=True)
    for i in range(3):
        (group / f"k{i}.cubin").write_bytes(b"\0")
        (group / f"k{i}.cubin.lock").write_bytes(b"")
    (group / "k3.cubin.lock").write_bytes(b"")  # a fetch that never finished
    (group / "checksums.txt").write_text("0 k0.cubin\n")
    (group / "include" / "flashinferMetaInfo.h").write_text("")
    env = {"FI_COMPAT_FLASHINFER_VERSION": "0.6.18", "FLASHINFER_CUBIN_DIR": str(tmp_path)}
    rc, out = cli("info", "--json", env=env)
    assert rc == 0
    data = json.loads(out)
    assert data["cubins"] == {"dir": str(tmp_path), "files": 3, "chosen_by": "FLASHINFER_CUBIN_DIR"}
    _, out = cli("doctor", "--json", env=env)
    f = {x["code"]: x for x in json.loads(out)["findings"]}
    assert f["cubins"]["severity"] == "ok" and "3 cubins" in f["cubins"]["title"]


def test_lock_files_alone_are_no_cubins(tmp_path: Path) -> None:
    (tmp_path / "k0.cubin.lock").write_bytes(b"")
    (tmp_path / "checksums.txt").write_text("")
    env = {"FI_COMPAT_FLASHINFER_VERSION": "0.6.18", "FLASHINFER_CUBIN_DIR": str(tmp_path)}
    _, out = cli("doctor", "--json", env=env)
    f = {x["code"]: x for x in json.loads(out)["findings"]}
    assert f["cubins"]["severity"] == "warning" and "0 cubins" in f["cubins"]["title"]


SNAP = Path(__file__).with_name("snapshots")


def normalise(text: str, tmp: Path) -> str:
    text = text.replace(str(tmp), "<tmp>").replace(str(ROOT), "<root>")
    return re.sub(r"nvcc \S+ at \S+", "nvcc <v> at <path>", text)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_doctor_snapshot(tmp_path: Path, fmt: str) -> None:
    """doctor for flashinfer-python 0.6.7 judged for an SM103 GPU, in a fixed environment."""
    env = {
        "FI_COMPAT_FLASHINFER_VERSION": "0.6.7",
        "FLASHINFER_WORKSPACE_BASE": str(tmp_path),
        "PATH": "/usr/bin:/bin",
        "NO_COLOR": "1",
    }
    args = ["doctor", "--capability", "10.3"] + (["--json"] if fmt == "json" else [])
    rc, out = cli(*args, env=env)
    # the SM103 hang of 0.6.7 is in TRTLLM-gen attention, which fi_compat.decode / prefill
    # wrap: an error (their facades refuse SM103 there), and only the 10.3 row (not one per
    # GPU family)
    assert rc == 1
    got = normalise(out, tmp_path)
    path = SNAP / f"doctor-0.6.7-sm103.{fmt}"
    if os.environ.get("FI_COMPAT_UPDATE_SNAPSHOTS"):
        path.write_text(got)
    assert got == path.read_text()


# -- known issues and the toolchain, judged for the GPU at hand ------------------------------


# the features of the facades' entry points (EntryPoint.feature)
WRAPPED = ("gdn.prefill", "moe.cutlass", "moe.trtllm", "quantization")
# the attention numerics rows of every release before 0.7.0 (accuracy: warnings)
NUMERIC = {"attention-logits-below-sentinel": "warning", "empty-rows-lse-sentinel": "warning"}


def test_wrapped_features_come_from_the_facades() -> None:
    assert set(wrapped_features()) >= set(WRAPPED)


def issue_findings(tmp_path: Path, fi: str, cc: tuple[int, int] | None, **kw: str) -> dict:
    det = det_for(tmp_path, fi, **kw)
    return {
        f.code.removeprefix("issue:"): f.severity
        for f in check_known_issues(det, cc, WRAPPED)
        if f.code.startswith("issue:")
    }


def _no_cuda_torch() -> dict[str, str]:
    """``comm-import-libcudart-not-loaded`` where it holds: a torch build without CUDA
    (this CPU host), 0.2.7.post1-0.6.13; a caveat (it names the exception)."""
    from fi_compat.cli.info import torch_build

    return {} if torch_build()["cuda"] else {"comm-import-libcudart-not-loaded": "warning"}


def test_known_issue_of_a_wrapped_kernel_is_an_error(tmp_path: Path) -> None:
    # 0.6.0-0.6.2: CUDA-graph capture of the SM90 GDN prefill kernel fails (gdn.prefill);
    # the zero-length-sequence hang concerns only some calls: a caveat
    got = issue_findings(tmp_path, "0.6.2", (9, 0))
    assert got == {
        "0.6.0-gdn-prefill-cuda-graph": "error",
        "gdn-sm90-empty-sequence-hang": "warning",
        "fp4quant-subnormal-e4m3-scales": "warning",  # arch any, unconfirmed: a warning
        # the rows about some head sizes / hidden sizes only (when): caveats
        "activation-misaligned-hidden-size": "warning",
        "page-append-head-dim": "warning",
        "rope-quantize-rotary-alignment": "warning",
        **NUMERIC,
        **_no_cuda_torch(),
    }


def test_known_issue_of_some_calls_is_a_warning_that_names_them(tmp_path: Path) -> None:
    det = det_for(tmp_path, "0.7.4")
    found = {f.code: f for f in check_known_issues(det, (9, 0), WRAPPED)}
    f = found["issue:gdn-sm90-empty-sequence-state"]
    assert f.severity == "warning" and "only calls with sequences=zero-length" in f.explanation
    assert "cu_seqlens_cpu" in f.fix


def test_known_issue_of_a_kernel_fi_compat_does_not_wrap_is_a_warning(tmp_path: Path) -> None:
    got = issue_findings(tmp_path, "0.6.7", (10, 3))
    assert got == {  # attention.trtllm; the GDN decode row is limited to bf16 states (when)
        "sm103-trtllm-attention-hang": "warning",
        "gdn-decode-bf16-state-dsl-alignment": "warning",
        "fp4quant-subnormal-e4m3-scales": "warning",
        # the rows about some head sizes / hidden sizes only (when): caveats
        "activation-misaligned-hidden-size": "warning",
        "page-append-head-dim": "warning",
        "rope-quantize-rotary-alignment": "warning",
        **NUMERIC,
        **_no_cuda_torch(),
    }
    got = issue_findings(tmp_path / "b", "0.6.13", (12, 0))
    assert got["topk-sampler-multi-cta-hang"] == "warning"  # sampling, arch any
    assert got["sm12x-sampler-hang"] == "warning"


def test_known_issues_only_for_the_gpu_and_none_without_one(tmp_path: Path) -> None:
    got = issue_findings(tmp_path, "0.6.7", (9, 0))
    assert got == {  # the others: 10.3, 12.x, ...
        "gdn-sm90-empty-sequence-hang": "warning",
        "gdn-decode-bf16-state-dsl-alignment": "warning",
        "fp4quant-subnormal-e4m3-scales": "warning",
        # the rows about some head sizes / hidden sizes only (when): caveats
        "activation-misaligned-hidden-size": "warning",
        "page-append-head-dim": "warning",
        "rope-quantize-rotary-alignment": "warning",
        **NUMERIC,
        **_no_cuda_torch(),
    }
    det = det_for(tmp_path / "b", "0.6.7")
    found = check_known_issues(det, None, WRAPPED)
    assert [f.code for f in found] == ["issues-not-judged"] and found[0].severity == "ok"


def test_jit_cache_issue_needs_the_jit_cache(tmp_path: Path) -> None:
    row = "0.6.18-jit-cache-drops-sm75-sm121a"
    assert row not in issue_findings(tmp_path, "0.6.18", (7, 5))
    got = issue_findings(tmp_path / "b", "0.6.18", (7, 5), jit="0.6.18+cu130")
    assert got[row] == "warning"


def test_missing_nvcc_is_only_informative_without_a_gpu(tmp_path: Path) -> None:
    det = det_for(tmp_path, "0.6.18")
    env = {"PATH": str(tmp_path / "nothing")}
    assert codes(check_toolchain(det, env, None))["nvcc"] == "ok"
    assert codes(check_toolchain(det, env, (9, 0)))["nvcc"] == "warning"


CPU_ONLY = {"CUDA_VISIBLE_DEVICES": "", "PATH": "/nonexistent", "NO_COLOR": "1"}


@pytest.mark.parametrize("release", ["0.6.7", "0.6.13", "0.6.18"])
def test_doctor_on_a_cpu_only_host_exits_0(tmp_path: Path, release: str) -> None:
    env = {**CPU_ONLY, "FI_COMPAT_FLASHINFER_VERSION": release}
    env["FLASHINFER_WORKSPACE_BASE"] = str(tmp_path)
    rc, out = cli("doctor", "--json", env=env)
    doc = json.loads(out)
    issues = [f for f in doc["findings"] if f["code"].startswith("issue:")]
    assert issues == [] and rc == 0 and doc["errors"] == 0, doc["findings"]
    f = {x["code"]: x for x in doc["findings"]}
    assert f["nvcc"]["severity"] == "ok"


def test_capability_must_be_a_capability() -> None:
    for bad in ("abc", "10.x", "0.0"):
        code = (
            "import sys; from fi_compat.cli import main; "
            f"sys.exit(main(['doctor', '--capability', {bad!r}]))"
        )
        r = run_python(code, env=CPU_ONLY)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert "usage:" in r.stderr and "--capability" in r.stderr and repr(bad) in r.stderr


# -- metadata against code ------------------------------------------------------------------


def test_duplicate_dist_infos_that_agree_warn(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    make_dist(a, "flashinfer_python", "0.6.7")
    make_dist(b, "flashinfer_python", "0.6.7")
    det = Detection(*scan(a, b))
    [f] = check_duplicates(det)
    assert f.severity == "warning" and f.code == "duplicate-dist-info"
    assert str(a) in f.title and str(b) in f.title
    assert f.fix == f"delete the stale dist-info: rm -r '{b}/flashinfer_python-0.6.7.dist-info'"


def test_duplicate_dist_infos_that_disagree_are_an_error(tmp_path: Path) -> None:
    make_package(tmp_path, "0.6.8")
    make_dist(tmp_path, "flashinfer_python", "0.6.7")
    make_dist(tmp_path, "flashinfer_python", "0.6.8")
    det = Detection(*scan(tmp_path))
    [f] = check_duplicates(det)
    assert f.severity == "error" and "0.6.7" in f.title and "0.6.8" in f.title
    # the package's own _build_meta.py says which dist-info is stale
    stale = tmp_path / "flashinfer_python-0.6.7.dist-info"
    assert f.fix == f"delete the stale dist-info: rm -r '{stale}'"
    assert "package" in f.explanation and "0.6.8" in f.explanation


def test_duplicate_dist_infos_without_a_package_suggest_pip_uninstall(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    make_dist(a, "flashinfer_cubin", "0.6.7")
    make_dist(b, "flashinfer_cubin", "0.6.0")
    [f] = check_duplicates(Detection(*scan(a, b)))
    assert f.severity == "error" and f.fix.startswith("pip uninstall -y flashinfer-cubin")


def scan(*roots: Path) -> tuple:
    found, dups, loc = _scan_all([str(r) for r in roots])
    return found, False, dups, loc


def test_package_before_its_dist_info_is_an_error(tmp_path: Path) -> None:
    checkout, site = tmp_path / "checkout", tmp_path / "site"
    make_package(checkout, "0.7.4")  # a FlashInfer source tree in the working directory
    make_package(site, "0.6.7")
    make_dist(site, "flashinfer_python", "0.6.7")
    f = {x.code: x for x in check_package(Detection(*scan(checkout, site)))}
    assert f["package-location"].severity == "error"
    assert str(checkout) in f["package-location"].title and str(site) in f["package-location"].title
    assert f["package-version"].severity == "error" and "0.7.4" in f["package-version"].title
    assert check_package(Detection(*scan(site, checkout))) == []  # the right order


def test_package_without_dist_info_is_an_error(tmp_path: Path) -> None:
    make_package(tmp_path, "0.6.7")
    [f] = check_package(Detection(*scan(tmp_path)))
    assert f.code == "package-without-metadata" and f.severity == "error"
    assert f.fix == "pip install 'flashinfer-python==0.6.7'"


def test_dist_info_without_package_is_an_error(tmp_path: Path) -> None:
    make_dist(tmp_path, "flashinfer_python", "0.6.7")
    [f] = check_package(Detection(*scan(tmp_path)))
    assert f.code == "package-missing" and f.severity == "error"


def test_package_of_another_version_than_its_dist_info(tmp_path: Path) -> None:
    make_package(tmp_path, "0.6.8")  # files copied over a 0.6.7 install
    make_dist(tmp_path, "flashinfer_python", "0.6.7")
    [f] = check_package(Detection(*scan(tmp_path)))
    assert f.code == "package-version" and f.severity == "error"
    assert "0.6.8" in f.title and "0.6.7" in f.title


def test_imported_version_against_dist_info(tmp_path: Path) -> None:
    make_package(tmp_path, "0.6.7")
    make_dist(tmp_path, "flashinfer_python", "0.6.7")
    det = Detection(*scan(tmp_path))
    init = str(tmp_path / "flashinfer" / "__init__.py")
    assert check_imported(det, "0.6.7", init) == []
    [f] = check_imported(det, "0.6.8", init)
    assert f.code == "probe-version" and f.severity == "error"
    [f] = check_imported(det, "0.6.7", "/elsewhere/flashinfer/__init__.py")
    assert f.code == "probe-location" and f.severity == "error"


def test_doctor_reports_metadata_findings_end_to_end(tmp_path: Path) -> None:
    checkout, site = tmp_path / "checkout", tmp_path / "site"
    make_package(checkout, "0.7.4")
    make_package(site, "0.6.7")
    make_dist(site, "flashinfer_python", "0.6.7")
    make_dist(site / "old", "flashinfer_python", "0.6.3")
    code = "import sys; from fi_compat.cli import main; sys.exit(main(['doctor', '--json']))"
    r = run_python(code, env=CPU_ONLY, path=[str(checkout), str(site), str(site / "old")])
    assert "Traceback" not in r.stderr, r.stderr
    f = {x["code"]: x for x in json.loads(r.stdout)["findings"]}
    assert r.returncode == 1
    assert {f[c]["severity"] for c in ("duplicate-dist-info", "package-location")} == {"error"}
    assert f["package-version"]["severity"] == "error"
