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


def test_the_cpu_example_runs_and_shows_what_it_says() -> None:
    """The README's executed example runs on a CPU-only host without FlashInfer, with the
    variables it names; its comments are what it prints."""
    import os

    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"<!-- executed -->\n```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    env_line = text.split("<!-- executed -->")[0].rstrip().rsplit("\n\n", 1)[1]
    env = dict(re.findall(r"(FI_COMPAT_\w+)=([\w.]+)", env_line))
    assert env == {"FI_COMPAT_FLASHINFER_VERSION": "0.6.7", "FI_COMPAT_ALLOW_CPU": "1"}
    e = {k: v for k, v in os.environ.items() if not k.startswith("FI_COMPAT_")}
    e.update(env, PYTHONPATH=str(ROOT / "src"), CUDA_VISIBLE_DEVICES="")
    r = subprocess.run(
        [sys.executable, "-c", blocks[0]], env=e, capture_output=True, text=True, cwd="/"
    )
    assert r.returncode == 1 and "flashinfer" not in sys.modules
    assert "# adapter_range: 0.6.0" in r.stdout and "def rmsnorm(" in r.stdout
    for shown in re.findall(r"<Tensor [^>]+>", blocks[0]):  # the plan's tensors
        assert shown in r.stdout
    assert "'function': 'flashinfer.norm.rmsnorm'" in r.stdout
    assert "## BatchDecodeWithPagedKVCacheWrapper.plan(indptr: Tensor" in r.stdout
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("fi_compat.errors.UnknownArgumentError: ") and (
        "'epps' (did you mean 'eps'?)" in last
    )
