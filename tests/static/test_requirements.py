"""The installed release's requirements, read from its metadata without importing it:
what `import flashinfer` needs is an error when missing, the rest one warning, each with
the exact pip line; info and doctor give the same verdict."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_python
from fi_compat._requirements import check, findings
from fi_compat.detection import Distribution


def dist(tmp: Path, version: str, requires: list[str]) -> Distribution:
    info = tmp / f"flashinfer_python-{version}.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", "Name: flashinfer-python", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    (info / "METADATA").write_text("\n".join(lines) + "\n")
    return Distribution("flashinfer-python", version, str(tmp), str(info))


def test_declared_requirements_and_their_state(tmp_path: Path) -> None:
    fi = dist(
        tmp_path,
        "0.6.7",
        [
            "packaging>=1",  # met
            "packaging-is-not-this>=2",  # missing
            "torch>=99",  # installed, too old (and imported by `import flashinfer`)
            "nvidia-cutlass-dsl>=4.3.4",  # judged by doctor's cutlass-dsl finding
            'cudnn-only-on-windows; sys_platform == "win32"',  # not for this platform
            'extra-only; extra == "cu13"',  # an extra's requirement
        ],
    )
    rows = {r.name: r for r in check(fi)}
    assert rows["packaging"].ok and rows["packaging"].spec == ">=1"
    assert not rows["packaging-is-not-this"].ok and rows["packaging-is-not-this"].installed is None
    assert not rows["torch"].ok and rows["torch"].import_time
    assert "cudnn-only-on-windows" not in rows and "extra-only" not in rows
    # 0.6.7 imports filelock / jinja2 unguarded without declaring them
    assert rows["filelock"].import_time and rows["filelock"].spec == ""
    found = findings(fi)
    errors = {f.fix for f in found if f.code == "import-dependency"}
    assert "pip install 'torch>=99'" in errors
    assert all(f.severity == "error" for f in found if f.code == "import-dependency")
    got = {f.code: f for f in found}
    later = got["declared-dependency"]
    assert later.severity == "warning" and "packaging-is-not-this>=2" in later.title
    assert "nvidia-cutlass-dsl" not in later.title
    assert later.fix == "pip install 'packaging-is-not-this>=2'"


def test_an_import_time_module_is_needed_only_where_the_release_imports_it(
    tmp_path: Path,
) -> None:
    old = {r.module for r in check(dist(tmp_path / "a", "0.2.1", [])) if r.import_time}
    new = {r.module for r in check(dist(tmp_path / "b", "0.7.4", [])) if r.import_time}
    assert "triton" in old and "tvm_ffi" not in old  # 0.2.0.post1-0.2.2.post1's page.py
    assert "triton" not in new and {"tvm_ffi", "pynvml", "numpy", "tqdm"} <= new


def test_info_says_the_import_fails_and_how_to_fix_it(tmp_path: Path) -> None:
    """A flashinfer-python whose import needs a module that is not installed: every entry
    point is "import fails here", with the one pip line (no FlashInfer import)."""
    fi = dist(tmp_path, "0.5.3", ["nvidia-ml-py"])
    (tmp_path / "flashinfer").mkdir()
    (tmp_path / "flashinfer" / "__init__.py").write_text("raise SystemExit('imported')\n")
    code = (
        "import json, sys; from fi_compat.cli.info import collect; d = collect(); "
        "print(json.dumps([d['entry_points'], 'flashinfer' in sys.modules]))"
    )
    r = run_python(code, path=[fi.location], env={"PYTHONNOUSERSITE": "1"})
    assert r.returncode == 0, r.stderr
    eps, imported = json.loads(r.stdout.strip().splitlines()[-1])
    assert not imported
    pynvml_here = any(x.module == "pynvml" and x.ok for x in check(fi))
    st = eps["fi_compat.norm.rmsnorm"]
    if pynvml_here:  # the host has it: then the import is not blocked by it
        assert "nvidia-ml-py" not in st["detail"]
    else:
        assert st["status"] == "import fails here"
        assert "fix: pip install " in st["detail"] and "'nvidia-ml-py'" in st["detail"]
