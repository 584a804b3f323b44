"""README.md is a landing page; its generated parts and docs/ come from the adapter tables."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT

README_MAX_LINES = 250


def _section(text: str, heading: str) -> str:
    _, _, rest = text.partition(f"\n{heading}\n")
    return rest.split("\n## ", 1)[0]


def _commands(markdown: str) -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", markdown, flags=re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_generated_docs_are_current() -> None:
    r = subprocess.run(
        [sys.executable, "tools/render_docs.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, f"stale generated docs: run python tools/render_docs.py\n{r.stderr}"


def test_readme_is_short() -> None:
    n = len((ROOT / "README.md").read_text().splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines (at most {README_MAX_LINES})"


def test_readme_test_command_is_what_ci_runs() -> None:
    setup = _commands(_section((ROOT / "README.md").read_text(), "## Set up"))
    assert len(setup) == 2, setup
    install, test = setup
    assert install.endswith("python -m fi_compat info"), install
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    ci_test = [line for line in ci if "tools/matrix.py run" in line]
    assert ci_test == [test], f"README's test command {test!r} is not .ci/run's {ci_test!r}"
