"""What a wheel / sdist user gets: the licence the metadata declares, the docs the README
links to, the console script's own name in its help."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

from conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_license_file_matches_the_declared_licence() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text


def test_sdist_carries_what_the_readme_links_to() -> None:
    include = PYPROJECT["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    linked = set(
        re.findall(
            r"\]\(((?:docs|tests|tools|benchmarks)/[^)#]+)", (ROOT / "README.md").read_text()
        )
    )
    assert linked, "the README links into the tree"
    for path in sorted(linked):
        assert (ROOT / path).exists(), path
        assert path.split("/")[0] in include, f"{path} is not in the sdist"
    assert {"LICENSE", "README.md", "CHANGELOG.md"} <= set(include)


def test_console_script_names_itself() -> None:
    assert PYPROJECT["project"]["scripts"] == {"fi-compat": "fi_compat.__main__:main"}
    code = (
        "import sys; sys.argv[0] = '/usr/bin/fi-compat'; "
        "from fi_compat.__main__ import main; main()"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "src")},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: fi-compat"), r.stdout[:80]


def test_wheel_ships_the_type_stubs(tmp_path: Path) -> None:
    """PEP 561: ``py.typed`` and every generated ``.pyi`` are package data.  The wheel
    target takes the package directory whole (no include / exclude list to keep in step
    with new stubs) and git ignores neither; with hatchling at hand, the built wheel is
    read back."""
    wheel = PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel == {"packages": ["src/fi_compat"]}, wheel
    pkg = ROOT / "src" / "fi_compat"
    stubs = sorted(p.relative_to(pkg).as_posix() for p in pkg.rglob("*.pyi"))
    assert stubs and (ROOT / "src" / "fi_compat" / "py.typed").is_file()
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", "src/fi_compat/py.typed"]
        + [f"src/fi_compat/{s}" for s in stubs],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert ignored.stdout == "", ignored.stdout
    builders = pytest.importorskip("hatchling.builders.wheel")
    (built,) = builders.WheelBuilder(str(ROOT)).build(
        directory=str(tmp_path), versions=["standard"]
    )
    with zipfile.ZipFile(built) as z:
        names = set(z.namelist())
    assert {"fi_compat/py.typed", *(f"fi_compat/{s}" for s in stubs)} <= names
