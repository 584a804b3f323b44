"""Metadata that lies, at the first call: a stale dist-info of another release ahead of
the real one on ``sys.path`` selects the wrong adapter; resolution compares the
imported package's own ``__version__`` with it and refuses with a typed error naming
both, and ``FI_COMPAT_VERSION_SOURCE=package`` selects by the package's version file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CELL = os.environ.get("FI_COMPAT_CELL")
EXPECT = os.environ.get("FI_COMPAT_CELL_EXPECT", "live")
pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(
        CELL is None or EXPECT not in ("live", "dsl-missing"),
        reason="needs a cell whose flashinfer.norm imports",
    ),
]

PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from fi_compat import errors, norm
a = norm.rmsnorm.adapter  # every release has it
out = {"selected": a.release}
try:
    norm.rmsnorm.raw()
    out["error"] = None
except errors.FlashInferVersionMismatchError as exc:
    out.update(error=type(exc).__name__, detected=exc.detected, imported=exc.imported,
               message=str(exc))
print(json.dumps(out))
"""


def _run(stale_dir: Path, **env: str) -> dict[str, object]:
    e = dict(os.environ, **env)
    r = subprocess.run(
        [sys.executable, "-c", PROBE, str(stale_dir)],
        capture_output=True,
        text=True,
        env=e,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _stale(tmp_path: Path) -> tuple[Path, str]:
    assert CELL is not None
    stale = "0.6.3" if CELL != "0.6.3" else "0.6.7"
    info = tmp_path / f"flashinfer_python-{stale}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: flashinfer-python\nVersion: {stale}\n\n"
    )
    return tmp_path, stale


def test_a_stale_dist_info_ahead_is_refused_at_the_first_call(tmp_path: Path) -> None:
    d, stale = _stale(tmp_path)
    out = _run(d)
    assert out["selected"] == stale
    assert out["error"] == "FlashInferVersionMismatchError"
    assert out["detected"] == stale and out["imported"] == CELL
    assert "FI_COMPAT_VERSION_SOURCE=package" in str(out["message"])


def test_version_source_package_selects_the_imported_release(tmp_path: Path) -> None:
    d, _ = _stale(tmp_path)
    out = _run(d, FI_COMPAT_VERSION_SOURCE="package")
    assert out["selected"] == CELL and out["error"] is None
