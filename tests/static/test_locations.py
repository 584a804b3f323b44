"""FlashInfer's own locations of every covered name resolve in fi_compat, to the facade's
object (``import fi_compat as flashinfer``); the generated data (fi_compat._locations,
tools/locations.py) agrees with the signature snapshots and the entry points."""

from __future__ import annotations

import importlib
import json
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, run_python
from fi_compat import _locate, enums
from fi_compat._facades import FACADES, entry_points, reexports
from fi_compat._locations import ALIASES, LOCATIONS, PROVIDERS
from fi_compat._snapshot_io import load
from fi_compat.registry import KNOWN_RELEASES

_POS = {v: i for i, v in enumerate(KNOWN_RELEASES)}
ENUMS = [n for n in enums.__all__ if n != "StableEnum"]


def _within(span: tuple[str, str | None], release: str) -> bool:
    first, last = span
    return _POS[first] <= _POS[release] <= _POS[last or KNOWN_RELEASES[-1]]


def _covered() -> dict[str, set[str]]:
    """{covered name: the fi_compat modules whose entry points define it}."""
    out: dict[str, set[str]] = {n: {"fi_compat.enums"} for n in ENUMS}
    for e in entry_points():
        out.setdefault(e.attr.split(".")[0], set()).add(e.facade)
    for r in reexports():
        out.setdefault(r.name, set()).add(r.facade)
    return out


# -- the data is not stale ---------------------------------------------------------------


def test_every_snapshot_module_of_a_covered_name_is_a_location() -> None:
    """Each release's defining module (snapshot) and the module the entry point reads
    (``EntryPoint.module``) expose the name there, under its release's spelling."""
    checked = 0
    for e in entry_points():
        name = e.attr.split(".")[0]
        for release, rec in load(e)["releases"].items():
            if rec is None or release not in _POS:
                continue
            exposed = rec.get("attr", name) if "." not in e.attr else name
            where = LOCATIONS.get(exposed, {})
            for module in {rec["module"], e.module}:
                assert module in where, (
                    f"{exposed} in {module} ({release}): re-run tools/locations.py"
                )
                assert _within(where[module], release), (exposed, module, release, where[module])
                checked += 1
    assert checked > 1000


def test_every_enum_snapshot_module_is_a_location() -> None:
    snaps = ROOT / "src" / "fi_compat" / "_snapshots"
    for n in ENUMS:
        data = json.loads((snaps / f"{getattr(enums, n)._snapshot_}.json").read_text())
        for release, rec in data["releases"].items():
            if rec is not None and release in _POS:
                exposed = rec.get("attr", n)  # the release's own spelling of the class
                assert _within(LOCATIONS[exposed][rec["module"]], release), (n, release)


def test_names_and_providers_match_the_entry_points() -> None:
    covered = _covered()
    assert set(PROVIDERS) == set(covered), "re-run tools/locations.py --render-only"
    for name, provider in PROVIDERS.items():
        assert f"fi_compat.{provider}" in covered[name], name
    for exposed in LOCATIONS:
        assert ALIASES.get(exposed, exposed) in covered, exposed
    # the wider range serves the top-level name (0.2.9+, not fused_moe's 0.5.0+)
    assert PROVIDERS["block_scale_interleave"] == "quantization"
    assert ALIASES["top_k_renorm_prob"] == "top_k_renorm_probs"
    assert ALIASES["top_p_renorm_prob"] == "top_p_renorm_probs"


def test_known_locations_are_recorded() -> None:
    assert LOCATIONS["trtllm_batch_decode_with_kv_cache_mla"]["flashinfer.mla"][0] == "0.6.0"
    assert "flashinfer.cascade" in LOCATIONS["BatchPrefillWithPagedKVCacheWrapper"]
    assert "flashinfer.tllm_enums" in LOCATIONS["RoutingMethodType"]
    assert "flashinfer.fused_moe.core" in LOCATIONS["RoutingMethodType"]
    for n in ("rmsnorm", "mm_fp4", "shuffle_matrix_a", "SfLayout"):
        assert "flashinfer" in LOCATIONS[n], n


# -- every location resolves to the facade's object ----------------------------------------

PROBE = """
import importlib, json, sys
from fi_compat._facades import reexports
from fi_compat._locations import ALIASES, LOCATIONS
for r in reexports():  # no FlashInfer here: each re-export's object is a stand-in
    r._value = type(r.name, (), {})
classes = set(json.loads(sys.argv[1]))
found, heavy_after_functions = {}, None
for functions in (True, False):
    for exposed, where in sorted(LOCATIONS.items()):
        if (ALIASES.get(exposed, exposed) in classes) == functions:
            continue
        for module in where:
            if module.startswith("flashinfer._"):
                continue  # fi_compat._x is fi_compat's own module
            mod = importlib.import_module("fi_compat" + module[len("flashinfer"):])
            found[f"{module}:{exposed}"] = id(getattr(mod, exposed))
    if functions:
        heavy_after_functions = sorted(
            m for m in sys.modules if m.split(".")[0] in ("torch", "flashinfer"))
expected = {}
for exposed, where in LOCATIONS.items():
    covered = ALIASES.get(exposed, exposed)
    objs = []
    for home in json.loads(sys.argv[2])[covered]:
        mod = importlib.import_module(home)
        if covered in getattr(mod, "__all__", ()):
            objs.append(id(getattr(mod, covered)))
    for module in where:
        if not module.startswith("flashinfer._"):
            expected[f"{module}:{exposed}"] = objs
print(json.dumps({"found": found, "expected": expected, "heavy": heavy_after_functions}))
"""


def test_every_location_resolves_to_the_facade_object_without_torch() -> None:
    covered = _covered()
    classes = [e.attr.split(".")[0] for e in entry_points() if "." in e.attr]
    homes = json.dumps({k: sorted(v) for k, v in covered.items()})
    r = run_python(
        "import sys; sys.argv[1:] = " + repr([json.dumps(classes), homes]) + "\n" + PROBE
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["heavy"] == []  # functions and enums: neither torch nor FlashInfer
    assert set(out["found"]) == set(out["expected"])
    wrong = [k for k, v in out["found"].items() if v not in out["expected"][k]]
    assert wrong == []
    public = [m for w in LOCATIONS.values() for m in w if not m.startswith("flashinfer._")]
    assert len(out["found"]) == len(public)


def test_drop_in_spellings() -> None:
    import fi_compat as flashinfer
    from fi_compat import decode, enums, fused_moe, norm, prefill, quantization, sampling

    assert flashinfer.rmsnorm is norm.rmsnorm
    assert flashinfer.shuffle_matrix_a is fused_moe.shuffle_matrix_a
    assert flashinfer.SfLayout is enums.SfLayout
    assert flashinfer.block_scale_interleave is quantization.block_scale_interleave
    from fi_compat.mla import trtllm_batch_decode_with_kv_cache_mla

    assert trtllm_batch_decode_with_kv_cache_mla is decode.trtllm_batch_decode_with_kv_cache_mla
    from fi_compat.cascade import BatchPrefillWithPagedKVCacheWrapper

    assert BatchPrefillWithPagedKVCacheWrapper is prefill.BatchPrefillWithPagedKVCacheWrapper
    from fi_compat.fused_moe.core import RoutingMethodType
    from fi_compat.tllm_enums import ActivationType

    assert RoutingMethodType is enums.RoutingMethodType
    assert ActivationType is enums.ActivationType
    import fi_compat.fused_moe.core
    import fi_compat.tllm_enums

    assert fi_compat.tllm_enums.WeightLayout is enums.WeightLayout
    assert fi_compat.fused_moe.core is sys.modules["fi_compat.fused_moe.core"]
    assert sampling.top_k_renorm_prob is sampling.top_k_renorm_probs
    # fused_moe keeps its own object (0.5.0+, no argument checks; see the CHANGELOG)
    assert fi_compat.fused_moe.core.nvfp4_block_scale_interleave is fused_moe.block_scale_interleave
    # FlashInfer's package binds the function over its submodule of the same name
    import fi_compat.cute_dsl.rmsnorm_fp4quant

    assert fi_compat.cute_dsl.rmsnorm_fp4quant is norm.rmsnorm_fp4quant
    with pytest.raises(AttributeError):
        fi_compat.not_a_flashinfer_name  # noqa: B018
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("fi_compat.not_a_flashinfer_module")


# -- dir() --------------------------------------------------------------------------------


def test_dir_of_the_package_lists_facades_and_flashinfer_names() -> None:
    import fi_compat

    listed = set(dir(fi_compat))
    assert set(fi_compat.__all__) <= listed
    assert set(_locate.names("fi_compat")) <= listed
    assert {"rmsnorm", "mm_fp4", "SfLayout", "tllm_enums", *FACADES} <= listed


def test_dir_of_every_module_lists_its_names() -> None:
    modules = {"fi_compat" + m[len("flashinfer") :] for w in LOCATIONS.values() for m in w}
    modules |= {f"fi_compat.{m}" for m in (*FACADES, "fp4_quantization", "fp8_quantization")}
    modules = {m for m in modules if m != "fi_compat" and not m.startswith("fi_compat._")}
    for name in sorted(modules):
        mod = importlib.import_module(name)
        listed = set(dir(mod))
        assert set(getattr(mod, "__all__", ())) <= listed, name
        assert set(_locate.names(name)) <= listed, name
        assert _locate.children(name) <= listed, name


# -- the static reader --------------------------------------------------------------------


def test_reader_follows_imports_aliases_and_star_exports(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        locations = importlib.import_module("locations")
        snapshot = importlib.import_module("snapshot")
    finally:
        sys.path.remove(str(ROOT / "tools"))
    files = {
        "flashinfer/__init__.py": "from .norm import *\nfrom .pkg import g as h\n"
        "try:\n    from .opt import o\nexcept ImportError:\n    o = None\n"
        "if TYPE_CHECKING:\n    from .norm import hidden\n",
        "flashinfer/norm.py": "__all__ = ['f', 'f_old']\ndef f(): ...\nf_old = f\n"
        "def private(): ...\n",
        "flashinfer/pkg/__init__.py": "from .impl import g\nfrom . import impl\nk = impl.g\n",
        "flashinfer/pkg/impl.py": "class g: ...\n",
        "flashinfer/opt.py": "def o(): ...\n",
        "flashinfer/shadow.py": "from .norm import f\nf = something()\n",
    }
    path = tmp_path / "flashinfer_python-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    archive = snapshot.Archive(path)
    try:
        idx = locations.Release(archive).index()
    finally:
        archive.close()
    assert idx["flashinfer"] == {
        "f": "flashinfer.norm:f",
        "f_old": "flashinfer.norm:f",
        "h": "flashinfer.pkg.impl:g",
        "o": "flashinfer.opt:o",
    }
    assert idx["flashinfer.pkg"] == {"g": "flashinfer.pkg.impl:g", "k": "flashinfer.pkg.impl:g"}
    assert "flashinfer.shadow" not in idx  # rebound to something else
