"""`doctor` / `info --probe` against the really installed release of the cell.

The probe imports FlashInfer in a subprocess: a release whose import crashes here
(AssertionError on a CPU-only torch, RuntimeError on a cubin mismatch) is reported and
the command exits normally (doctor: status 1), never with a traceback of its own.
The real release's own files also check the metadata-against-code findings: its
``flashinfer/_build_meta.py`` read statically, its imported ``__version__`` / ``__file__``,
and a stale dist-info of another release put before it on ``sys.path``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fi_compat.registry import at_least, place

CELL = os.environ.get("FI_COMPAT_CELL")
EXPECT = os.environ.get("FI_COMPAT_CELL_EXPECT", "live")
pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(CELL is None, reason="no FlashInfer release cell (run tools/matrix.py)"),
    pytest.mark.skipif(
        os.environ.get("FI_COMPAT_CELL_DOCTOR", "1") != "1",
        reason="the doctor contract runs in one cell per import outcome (tools/matrix.py "
        "DOCTOR_CELLS)",
    ),
]


def cli(*args: str, **env: str) -> tuple[int, Any]:
    e = dict(os.environ, **env)
    r = subprocess.run(
        [sys.executable, "-m", "fi_compat", *args],
        capture_output=True,
        text=True,
        env=e,
        timeout=300,
    )
    assert "Traceback" not in r.stderr, r.stderr
    return r.returncode, json.loads(r.stdout) if "--json" in args else r.stdout


def by_code(doc: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {f["code"]: f for f in doc["findings"]}


# flashinfer.fused_moe needs no CuTe DSL: it imports in the dsl-missing cells
MOE_EXPECT = "live" if EXPECT == "dsl-missing" else EXPECT
GDN = CELL is not None and at_least(place(CELL), "0.6.0")


def probes(doc: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Probe findings by FlashInfer module (one probe per module)."""
    out = {}
    for f in doc["findings"]:
        if f["code"] == "probe":
            out[f["title"].removeprefix("import ").split(" ")[0]] = f
    return out


def test_doctor_probe_reports_the_real_import_outcome() -> None:
    rc, doc = cli("doctor", "--json", "--probe")
    found = probes(doc)
    assert found["flashinfer.fused_moe"]["severity"] == ("ok" if MOE_EXPECT == "live" else "error")
    if not GDN:
        assert "flashinfer.gdn_prefill" not in found  # below its floor: nothing to probe
        assert (rc == 1) == (doc["errors"] > 0)
        return
    probe = found["flashinfer.gdn_prefill"]
    if EXPECT == "live":
        assert probe["severity"] == "ok"
    else:
        assert probe["severity"] == "error" and rc == 1
        want = {
            "dsl-missing": "ModuleNotFoundError",
            "import-crash": "AssertionError",
            "cubin-mismatch": "RuntimeError",
        }[EXPECT]
        assert want in probe["explanation"]
    assert (rc == 1) == (doc["errors"] > 0)


def test_info_probe_is_not_fatal() -> None:
    rc, data = cli("info", "--json", "--probe")
    assert rc == 0
    eps = data["entry_points"]
    moe = eps["fi_compat.fused_moe.trtllm_fp4_block_scale_moe"]
    assert moe["probe"]["ok"] == (MOE_EXPECT == "live")
    gdn = eps["fi_compat.gdn_prefill.chunk_gated_delta_rule"]
    if GDN:
        assert gdn["probe"]["ok"] == (EXPECT == "live")
    else:
        assert "probe" not in gdn and gdn["status"] == "unsupported release"


def test_packaging_findings() -> None:
    _, doc = cli("doctor", "--json")
    f = by_code(doc)
    if EXPECT == "cubin-mismatch":
        m = f["cubin-mismatch"]
        assert m["severity"] == "error" and "RuntimeError" in m["explanation"]
        assert m["fix"] == f"pip install 'flashinfer-cubin=={CELL}'"
        # the bypass turns the import error into a warning about stale kernels
        _, doc2 = cli("doctor", "--json", "--probe", FLASHINFER_DISABLE_VERSION_CHECK="1")
        f2 = by_code(doc2)
        assert f2["cubin-mismatch"]["severity"] == "warning"
        assert f2["version-check-disabled"]["severity"] == "warning"
        assert f2["probe"]["severity"] == "ok"  # and FlashInfer indeed imports then
    else:
        assert "cubin-mismatch" not in f and "jit-cache-mismatch" not in f
    # the matrix installs what `import flashinfer` needs (tools/matrix.py COMMON); the
    # release's other requirements are reported once, with their pip line
    assert "import-dependency" not in f, f.get("import-dependency")
    if "declared-dependency" in f:
        assert f["declared-dependency"]["fix"].startswith("pip install '")
    if EXPECT == "dsl-missing":
        assert f["cutlass-dsl"]["severity"] == "warning"
    if os.environ.get("FI_COMPAT_CELL_DSL") == "1":
        assert f["cutlass-dsl"]["severity"] == "ok", f["cutlass-dsl"]


METADATA_CODES = (
    "duplicate-dist-info",
    "package-location",
    "package-version",
    "package-missing",
    "package-without-metadata",
    "probe-version",
    "probe-location",
)


def test_metadata_agrees_with_the_code() -> None:
    _, data = cli("info", "--json")
    meta = data["metadata"]
    assert meta["package_version"] == CELL and meta["duplicates"] == {}
    assert Path(meta["package_location"]).name == f"fi-{CELL}"
    _, doc = cli("doctor", "--json", "--probe")
    assert not [f for f in doc["findings"] if f["code"] in METADATA_CODES], doc["findings"]


def test_probe_reports_the_imported_package() -> None:
    _, data = cli("info", "--json", "--probe")
    moe = data["entry_points"]["fi_compat.fused_moe.trtllm_fp4_block_scale_moe"]["probe"]
    assert moe["flashinfer_version"] == CELL  # also after a failed import (flashinfer.version)
    assert Path(moe["flashinfer_file"]).parent.parent.name == f"fi-{CELL}"
    doctor = {f["title"]: f for f in cli("doctor", "--json", "--probe")[1]["findings"]}
    for f in data["probe_findings"]:
        if f["severity"] != "ok":  # ok titles carry the measured seconds
            assert doctor[f["title"]] == f


def test_a_stale_dist_info_first_on_sys_path(tmp_path: Path) -> None:
    """A dist-info of another release first on sys.path, this release's package behind it."""
    stale = "0.5.3" if CELL == "0.5.0" else "0.5.0"
    d = tmp_path / f"flashinfer_python-{stale}.dist-info"
    d.mkdir()
    (d / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: flashinfer-python\nVersion: {stale}\n"
    )
    path = os.pathsep.join([str(tmp_path), os.environ["PYTHONPATH"]])
    rc, doc = cli("doctor", "--json", "--probe", PYTHONPATH=path)
    f = by_code(doc)
    assert rc == 1 and f["duplicate-dist-info"]["severity"] == "error"
    assert f["package-location"]["severity"] == "error"
    assert f["package-version"]["severity"] == "error" and CELL in f["package-version"]["title"]
    assert f["probe-version"]["severity"] == "error"
    # the package's own version names the stale dist-info to delete
    assert f["duplicate-dist-info"]["fix"] == f"delete the stale dist-info: rm -r '{d}'"
