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
from test_detection import make_dist

from conftest import ROOT, run_python
from fi_compat.detection import Detection, _scan
from fi_compat.doctor import check_packaging, check_toolchain, cubin_dir_in_use


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
    code = f"import sys; from fi_compat.info import main; sys.exit(main({list(args)!r}))"
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
    assert rc == 1 and "fetched nothing usable" in out and "0 files" in out


def test_info_reports_a_populated_cubin_directory(tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / f"k{i}.cubin").write_bytes(b"\0")
    env = {"FI_COMPAT_FLASHINFER_VERSION": "0.6.18", "FLASHINFER_CUBIN_DIR": str(tmp_path)}
    rc, out = cli("info", "--json", env=env)
    assert rc == 0
    data = json.loads(out)
    assert data["cubins"] == {"dir": str(tmp_path), "files": 3, "chosen_by": "FLASHINFER_CUBIN_DIR"}
    _, out = cli("doctor", "--json", env=env)
    f = {x["code"]: x for x in json.loads(out)["findings"]}
    assert f["cubins"]["severity"] == "ok" and "3 files" in f["cubins"]["title"]


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
    assert rc == 1  # the SM103 hang is an error on 0.6.7
    got = normalise(out, tmp_path)
    path = SNAP / f"doctor-0.6.7-sm103.{fmt}"
    if os.environ.get("FI_COMPAT_UPDATE_SNAPSHOTS"):
        path.write_text(got)
    assert got == path.read_text()
