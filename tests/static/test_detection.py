"""Version detection from dist-info metadata, without importing FlashInfer.

The distributions here are generated dist-info folders (only METADATA), the documented
stand-in where PyPI has no such release (pre-releases, local tags, the old name).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fi_compat import detection
from fi_compat.detection import Detection, _scan


def make_dist(root: Path, project: str, version: str, egg: bool = False) -> None:
    d = root / (f"{project}.egg-info" if egg else f"{project}-{version}.dist-info")
    d.mkdir(parents=True)
    name = "PKG-INFO" if egg else "METADATA"
    (d / name).write_text(f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n\nbody\n")


@pytest.mark.parametrize(
    ("version", "public", "local", "pre", "dev"),
    [
        ("0.6.7", "0.6.7", None, False, False),
        ("0.7.0rc1", "0.7.0rc1", None, True, False),
        ("0.6.18+cu130", "0.6.18", "cu130", False, False),
        ("0.7.5.dev20261201", "0.7.5.dev20261201", None, True, True),
    ],
)
def test_versions_and_tags(
    tmp_path: Path, version: str, public: str, local: str | None, pre: bool, dev: bool
) -> None:
    make_dist(tmp_path, "flashinfer_python", version)
    fi = _scan([str(tmp_path)])["flashinfer-python"]
    assert (fi.version, fi.public, fi.local, fi.is_prerelease, fi.is_devrelease) == (
        version,
        public,
        local,
        pre,
        dev,
    )
    assert fi.location == str(tmp_path)
    assert fi.as_dict()["base_version"] == fi.parsed.base_version


def test_first_on_sys_path_wins_and_all_three_distributions(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    make_dist(a, "flashinfer_python", "0.6.18")
    make_dist(a, "flashinfer_cubin", "0.6.18")
    make_dist(a, "flashinfer_jit_cache", "0.6.17+cu129")
    make_dist(b, "flashinfer_python", "0.6.7")
    det = Detection(_scan([str(a), str(b)]), overridden=False)
    assert det.flashinfer is not None and det.flashinfer.version == "0.6.18"
    assert det.cubin is not None and det.jit_cache is not None
    assert det.version_mismatches() == [
        "flashinfer-jit-cache 0.6.17+cu129 != flashinfer-python 0.6.18"
    ]


def test_jit_cache_local_tag_is_not_a_mismatch(tmp_path: Path) -> None:
    make_dist(tmp_path, "flashinfer_python", "0.6.18")
    make_dist(tmp_path, "flashinfer_jit_cache", "0.6.18+cu130")
    assert Detection(_scan([str(tmp_path)]), False).version_mismatches() == []


def test_legacy_distribution_name_and_egg_info(tmp_path: Path) -> None:
    make_dist(tmp_path, "flashinfer", "0.6.1", egg=True)
    det = Detection(_scan([str(tmp_path)]), False)
    assert det.flashinfer is not None and det.flashinfer.name == "flashinfer"
    assert det.flashinfer.version == "0.6.1"


def test_not_installed(tmp_path: Path) -> None:
    assert Detection(_scan([str(tmp_path), str(tmp_path / "missing")]), False).flashinfer is None


def test_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(detection.OVERRIDE_ENV, "0.6.16.post2")
    det = detection.detect(refresh=True)
    assert det.overridden and det.flashinfer is not None
    assert det.flashinfer.version == "0.6.16.post2" and det.flashinfer.location == "<override>"
    monkeypatch.setenv(detection.OVERRIDE_ENV, "none")
    assert detection.detect(refresh=True).flashinfer is None
    monkeypatch.delenv(detection.OVERRIDE_ENV)
    detection.detect(refresh=True)


# -- metadata against code ------------------------------------------------------------------

MATRIX = Path(__file__).resolve().parents[2] / ".matrix"


def make_package(root: Path, build_meta: str | None = None, **files: str) -> Path:
    """A ``flashinfer`` package folder: ``_build_meta.py`` stating ``build_meta`` (as every
    wheel release 0.5.0-0.7.4 has), plus the given files (``version_py=...``)."""
    pkg = root / "flashinfer"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(files.pop("init_py", ""))
    if build_meta is not None:
        (pkg / "_build_meta.py").write_text(
            f'"""Build metadata for flashinfer package."""\n__version__ = "{build_meta}"\n'
        )
    for name, text in files.items():
        (pkg / name.replace("_py", ".py")).write_text(text)
    return pkg


def test_two_dist_infos_in_one_folder_are_recorded(tmp_path: Path) -> None:
    make_dist(tmp_path, "flashinfer_python", "0.6.7")
    make_dist(tmp_path, "flashinfer_python", "0.6.8")
    found, dups, _ = detection._scan_all([str(tmp_path)])
    assert [d.version for d in dups["flashinfer-python"]] in (
        ["0.6.7", "0.6.8"],
        ["0.6.8", "0.6.7"],
    )
    assert found["flashinfer-python"] is dups["flashinfer-python"][0]  # the one that wins


def test_two_dist_infos_in_two_folders_first_wins(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    make_dist(a, "flashinfer_python", "0.6.18")
    make_dist(b, "flashinfer_python", "0.6.18")
    make_dist(b, "flashinfer_cubin", "0.6.18")
    _, dups, _ = detection._scan_all([str(a), str(b)])
    assert list(dups) == ["flashinfer-python"]  # one cubin is no duplicate
    assert [d.location for d in dups["flashinfer-python"]] == [str(a), str(b)]


def test_package_location_is_where_import_would_find_it(tmp_path: Path) -> None:
    src, site = tmp_path / "src", tmp_path / "site"
    make_package(src, "0.7.4")
    make_package(site, "0.6.7")
    make_dist(site, "flashinfer_python", "0.6.7")
    (tmp_path / "empty" / "flashinfer").mkdir(parents=True)  # no __init__.py: not a package
    _, _, loc = detection._scan_all([str(tmp_path / "empty"), str(src), str(site)])
    assert loc == str(src)
    found, dups, loc = detection._scan_all([str(site)])
    det = Detection(found, False, dups, loc)
    assert det.package_location == str(site) and det.package_dir == str(site / "flashinfer")


def test_detect_records_duplicates_and_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    make_package(a, "0.6.8")
    make_dist(a, "flashinfer_python", "0.6.8")
    make_dist(b, "flashinfer_python", "0.6.7")
    monkeypatch.delenv(detection.OVERRIDE_ENV, raising=False)
    monkeypatch.setattr("sys.path", [str(a), str(b)])
    det = detection.detect(refresh=True)
    assert det.flashinfer is not None and det.flashinfer.version == "0.6.8"
    assert [d.version for d in det.duplicates["flashinfer-python"]] == ["0.6.8", "0.6.7"]
    assert det.package_location == str(a)
    monkeypatch.undo()
    detection.detect(refresh=True)


@pytest.mark.parametrize(
    ("files", "want"),
    [
        ({"build_meta": "0.6.7"}, "0.6.7"),
        # 0.7.4's version.py: the literal only in the indented ImportError fallback
        (
            {
                "version_py": "try:\n    from . import _build_meta\n"
                "    __version__: str = _build_meta.__version__\nexcept ImportError:\n"
                '    __version__ = "0.0.0+unknown"\n'
            },
            None,
        ),
        ({"version_py": '__version__ = "0.2.14"\n'}, "0.2.14"),  # sdist-era version.py
        ({"init_py": "__version__: str = '0.3.1'\n"}, "0.3.1"),  # literal in __init__.py
        ({"build_meta": "0.7.0rc1", "version_py": '__version__ = "9"\n'}, "0.7.0rc1"),
    ],
)
def test_read_package_version_without_import(
    tmp_path: Path, files: dict[str, str], want: str | None
) -> None:
    files = dict(files)
    pkg = make_package(tmp_path, files.pop("build_meta", None), **files)
    assert detection.read_package_version(str(pkg)) == want


def test_read_package_version_of_a_missing_folder(tmp_path: Path) -> None:
    assert detection.read_package_version(str(tmp_path / "nope")) is None


@pytest.mark.parametrize("release", ["0.5.0", "0.6.7", "0.6.18", "0.7.4"])
def test_read_package_version_of_real_releases(release: str) -> None:
    pkg = MATRIX / f"fi-{release}" / "flashinfer"
    if not pkg.is_dir():
        pytest.skip(f"{pkg} not installed (python tools/matrix.py install)")
    assert detection.read_package_version(str(pkg)) == release


@pytest.mark.parametrize("value", ["garbage", "", "  ", "0.6.x", "latest"])
def test_invalid_override_raises(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    from fi_compat.errors import InvalidArgumentError

    monkeypatch.setenv(detection.OVERRIDE_ENV, value)
    with pytest.raises(InvalidArgumentError) as info:
        detection.detect(refresh=True)
    msg = str(info.value)
    assert detection.OVERRIDE_ENV in msg and repr(value) in msg
    assert "0.6.7" in msg and "'none'" in msg and "PEP 440" in msg
    monkeypatch.delenv(detection.OVERRIDE_ENV)
    detection.detect(refresh=True)


@pytest.mark.parametrize(
    ("value", "want"),
    [("NONE", None), (" 0.6.7 ", "0.6.7"), ("0.9.0", "0.9.0"), ("1!2.0", "1!2.0")],
)
def test_valid_overrides(monkeypatch: pytest.MonkeyPatch, value: str, want: str | None) -> None:
    monkeypatch.setenv(detection.OVERRIDE_ENV, value)
    fi = detection.detect(refresh=True).flashinfer
    assert (fi.version if fi else None) == want
    monkeypatch.delenv(detection.OVERRIDE_ENV)
    detection.detect(refresh=True)
