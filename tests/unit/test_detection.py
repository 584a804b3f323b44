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
