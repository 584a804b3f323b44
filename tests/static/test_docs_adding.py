"""docs/adding.md stays true: its example runs, and every file, tool flag and name it
tells a maintainer to use exists."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT

GUIDE = ROOT / "docs" / "adding.md"


def test_the_executed_example_runs() -> None:
    text = GUIDE.read_text()
    blocks = re.findall(r"<!-- executed -->\n```python\n(.*?)```", text, re.S)
    assert blocks, "docs/adding.md has no executed example"
    for code in blocks:
        exec(compile(code, str(GUIDE), "exec"), {"__name__": "adding_example"})


def test_every_path_it_names_exists() -> None:
    text = GUIDE.read_text()
    paths = set(re.findall(r"`((?:src|tools|tests)/[\w/.*<>-]+)`", text))
    assert paths
    for p in paths:
        if "<" in p or "*" in p:  # a pattern: something matches it
            pattern = re.sub(r"<\w+>", "*", p)
            assert list(ROOT.glob(pattern)), p
        else:
            assert (ROOT / p).exists(), p


def test_the_names_it_uses_exist() -> None:
    from fi_compat import _facades as facades
    from fi_compat import registry
    from fi_compat._core import Emulation, EntryPoint, Normalizer, Param, lazy_facades
    from fi_compat._core import make_facade as _mf

    assert facades.FACADES and registry.KNOWN_RELEASES
    assert all(callable(x) for x in (lazy_facades, _mf, EntryPoint, Param))
    assert {"check", "before", "after", "needed"} <= set(vars(Emulation))
    assert "build" in vars(Normalizer)
    params = set(EntryPoint.__init__.__code__.co_varnames)
    assert {"validate", "devices", "debug", "normalizers", "receiver"} <= params


def test_the_snapshot_tool_takes_the_flags_it_names() -> None:
    r = subprocess.run(
        [sys.executable, "tools/snapshot.py", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert r.returncode == 0 and "--facts" in r.stdout
    r = subprocess.run(
        [sys.executable, "tools/render_docs.py", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0
