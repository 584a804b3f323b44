"""The README's support matrix is generated from the registry, never typed by hand."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def test_readme_support_matrix_is_current() -> None:
    r = subprocess.run([sys.executable, "tools/render_readme.py", "--check"], cwd=ROOT)
    assert r.returncode == 0, "README.md is stale: run python tools/render_readme.py"


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python tools/matrix.py run" in readme and "python tools/matrix.py run" in ci
