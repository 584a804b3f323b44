"""``fi_compat.cute_dsl.b12x_fused_moe`` / ``B12xMoEWrapper`` on every release that has
them (0.6.9+), against each release's snapshot signature (cases in
``tests/support/b12x_cases.py``), and the ``nvidia-cutlass-dsl`` minimum the generated
code checks at the first call."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat import cute_dsl
from fi_compat._core import resolve
from fi_compat.detection import Distribution
from fi_compat.errors import OptionalDependencyMissingError
from fi_compat.registry import KNOWN_RELEASES, place
from support.b12x_cases import B12X, B12X_METHODS, CASES, FN, releases

KEYS = [FN, *B12X_METHODS]
CELLS = [(k, r) for k in KEYS for r in releases(k)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize(("key", "release"), CELLS)
def test_policy(key: str, release: str, case: Any) -> None:
    case(key, release)


@pytest.mark.parametrize("key", KEYS)
def test_coverage(key: str) -> None:
    """From 0.6.9 (``fused_moe/cute_dsl/b12x_moe.py``), every release since."""
    e = B12X if key == FN else B12X_METHODS[key]
    assert e.since == "0.6.9"
    assert releases(key) == list(KNOWN_RELEASES[KNOWN_RELEASES.index("0.6.9") :])


# release -> the release's own Requires-Dist minimum (its wheel's METADATA)
MINIMUM = {
    "0.6.9": "4.4.2",
    "0.6.10.post1": "4.4.2",
    "0.6.11": "4.5.0",
    "0.6.17": "4.5.0",
    "0.6.18": "4.6.2a0",
    "0.7.2.post1": "4.6.2a0",
    "0.7.4": "4.8.0",
}


@pytest.mark.parametrize(("release", "minimum"), MINIMUM.items())
def test_cutlass_dsl_minimum_is_checked_once_at_resolution(
    release: str, minimum: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Missing or older than the release needs: ``OptionalDependencyMissingError`` naming
    the package, the version and the pip line, raised before FlashInfer's module is
    imported; at the minimum it passes."""
    import importlib.util

    from fi_compat import _requirements

    a = B12X.select(Distribution("flashinfer-python", release, "<test>", ""))
    deps = [d for d in B12X.optional_deps if d.minimum and d.range.contains(place(release))]
    assert [d.minimum for d in deps] == [minimum]
    installed: dict[str, Any] = {"v": None, "found": False}
    real_find = importlib.util.find_spec
    monkeypatch.setattr(_requirements, "_installed_version", lambda name: installed["v"])
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda m, *a: (
            object()
            if m == "cutlass" and installed["found"]
            else real_find(m, *a)
            if m != "cutlass"
            else None
        ),
    )
    import types

    imported: list[str] = []
    sentinel = object()

    def import_module(m: str) -> Any:
        imported.append(m)
        return types.SimpleNamespace(b12x_fused_moe=sentinel)

    monkeypatch.setattr("importlib.import_module", import_module)
    with pytest.raises(OptionalDependencyMissingError) as err:
        resolve.import_target(a)
    assert err.value.package == "nvidia-cutlass-dsl"
    assert f"nvidia-cutlass-dsl>={minimum}" in str(err.value) and "not installed" in str(err.value)
    assert f"pip install 'nvidia-cutlass-dsl>={minimum}'" in str(err.value)
    installed.update(v="4.0.0", found=True)
    with pytest.raises(OptionalDependencyMissingError, match=r"4\.0\.0 is installed"):
        resolve.import_target(a)
    assert imported == []  # refused before the import
    installed["v"] = minimum
    assert resolve.import_target(a) is sentinel  # passed: the (stubbed) import ran
    assert imported == [B12X.module]


def test_class_row_and_locations() -> None:
    """``B12xMoEWrapper`` is a class row of ``fi_compat.cute_dsl``; both names resolve at
    FlashInfer's own location ``flashinfer.fused_moe`` too."""
    import fi_compat.fused_moe as fm

    assert "B12xMoEWrapper" in cute_dsl.__all__ and FN in cute_dsl.__all__
    assert set(cute_dsl.CLASSES["B12xMoEWrapper"].methods) == {"__init__", "run"}
    assert fm.b12x_fused_moe is cute_dsl.b12x_fused_moe
