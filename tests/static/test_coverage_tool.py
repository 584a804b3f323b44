"""tools/coverage.py: the share of engine call sites fi_compat reaches, on an excerpt of
the inventory (tests/support/engine_usage_excerpt.md), and docs/uncovered.md kept true."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXCERPT = ROOT / "tests" / "support" / "engine_usage_excerpt.md"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "fi_compat_coverage_tool", ROOT / "tools" / "coverage.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look the module up
    spec.loader.exec_module(mod)
    return mod


cov = _tool()
ROWS = cov.parse(EXCERPT.read_text())
BY_NAME = {r.name: r for r in ROWS}
REACH = cov.Reach()


def test_parse_reads_every_row_of_the_excerpt() -> None:
    lines = [ln for ln in EXCERPT.read_text().splitlines() if ln.startswith("| `")]
    assert len(ROWS) == len(lines) == len(BY_NAME)
    r = BY_NAME["gated_delta_rule_mtp"]
    assert r.modules == ("flashinfer.gdn_decode", "flashinfer.gdn_kernels.gdn_decode_bf16_state")
    assert r.sites == {"S": 1, "TS": 2} and r.total == 3 and r.hot and r.before
    assert BY_NAME["append_paged_kv_cache"].modules == ()  # "—": not recorded
    assert not BY_NAME["get_artifact"].hot
    with pytest.raises(ValueError, match="Full table"):
        cov.parse("# something else\n")
    bad = EXCERPT.read_text().replace("| T:1 TS:1 | 2 |", "| T:1 TS:1 | 3 |", 1)
    with pytest.raises(ValueError, match="do not sum"):
        cov.parse(bad)


def test_reachability_is_at_the_module_the_engine_imports_from() -> None:
    from fi_compat._locations import LOCATIONS

    # a function, at every module the engines import it from
    assert REACH.reachable(BY_NAME["silu_and_mul"])
    # an enum imported from flashinfer.fused_moe.core: fi_compat serves that module too
    assert "flashinfer.fused_moe.core" in BY_NAME["ActivationType"].modules
    assert REACH.reachable(BY_NAME["ActivationType"])
    # a facade served where the engine imports it (flashinfer.decode, 0.6.12+)
    assert REACH.reachable(BY_NAME["trtllm_batch_decode_sparse_mla_dsv4"])
    # one name, two FlashInfer functions: each module the engines import it from is served
    # (fi_compat.gdn_decode and fi_compat.gdn_kernels)
    mtp = BY_NAME["gated_delta_rule_mtp"]
    assert "flashinfer.gdn_kernels.gdn_decode_bf16_state" in LOCATIONS[mtp.name]
    assert REACH.reachable(mtp)
    # a module fi_compat does not serve the name at: not reached, and the reason says where
    elsewhere = dataclasses.replace(mtp, modules=(*mtp.modules, "flashinfer.gdn_kernels.other"))
    assert not REACH.reachable(elsewhere)
    assert cov.reason(elsewhere, REACH).startswith("not yet at flashinfer.gdn_kernels.other")
    # wrapper methods: an entry point, a legacy name the facade class keeps, a backend query
    assert REACH.reachable(BY_NAME["BatchDecodeWithPagedKVCacheWrapper.plan"])
    assert REACH.reachable(BY_NAME["BatchPrefillWithPagedKVCacheWrapper.begin_forward"])
    assert REACH.reachable(BY_NAME["mm_bf16.is_backend_supported"])
    assert not REACH.where("BatchDecodeWithPagedKVCacheWrapper.no_such_method")
    # no module recorded: any location
    assert REACH.reachable(BY_NAME["append_paged_kv_cache"])
    # a capability helper fi_compat.utils serves (FlashInfer's own function)
    assert REACH.reachable(BY_NAME["get_compute_capability"])


def test_methods_of_reexported_classes_count_where_every_served_release_has_them() -> None:
    """A class re-exported as FlashInfer's own gives its methods: ``AutoTuner.get``
    (0.2.6+) and ``McastGPUBuffer.lamport_initialize`` (served from 0.6.0) are bound in
    every release served (the API history); ``get_mc_buffer`` left McastGPUBuffer in
    0.6.0 and ``get_unicast_ptr`` arrived then, so only the latter counts; a private or
    absent method never does."""
    assert REACH.reachable(BY_NAME["AutoTuner.get"])
    assert REACH.reachable(BY_NAME["McastGPUBuffer.lamport_initialize"])
    assert REACH.reexported_method("McastGPUBuffer", "get_unicast_ptr")
    assert not REACH.reexported_method("McastGPUBuffer", "get_mc_buffer")
    assert not REACH.where("McastGPUBuffer.get_mc_buffer")
    assert not REACH.where("AutoTuner._no_such_method")
    assert not REACH.where("AutoTuner.no_such_method")


def test_reasons_for_what_is_not_reached() -> None:
    for name, words in [
        ("get_artifact", "out of scope: build-internal"),
        ("_sparse_mla_sm120_paged_attention", "out of scope: private"),
        ("all_reduce_reg", "absent from every release"),
    ]:
        assert not REACH.reachable(BY_NAME[name]), name
        assert words in cov.reason(BY_NAME[name], REACH), (name, cov.reason(BY_NAME[name], REACH))


def test_measure_counts_names_sites_and_hot_sites_per_engine() -> None:
    now = {r.name: REACH.reachable(r) for r in ROWS}
    m = cov.measure(ROWS, now)
    assert m["all"]["names"] == len(ROWS)
    assert m["all"]["sites"] == sum(r.total for r in ROWS)
    assert m["all"]["sites_ok"] == sum(r.total for r in ROWS if now[r.name])
    assert m["all"]["hot_ok"] == sum(r.total for r in ROWS if now[r.name] and r.hot)
    for eng, nums in m.items():
        if eng == "all":
            continue
        letter = next(k for k, v in cov.ENGINES.items() if v == eng)
        assert nums["sites"] == sum(r.sites.get(letter, 0) for r in ROWS)
        assert nums["names"] == sum(letter in r.sites for r in ROWS)
    assert sum(v["sites"] for k, v in m.items() if k != "all") == m["all"]["sites"]


def test_main_prints_before_and_now(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    docs = tmp_path / "uncovered.md"
    assert cov.main(["--usage", str(EXCERPT), "--docs", str(docs)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^all\s+\d+ ->\s+\d+ / 14 ", out, re.M), out
    page = docs.read_text()
    assert "`get_artifact`" in page and "`silu_and_mul`" not in page
    assert "`gated_delta_rule_mtp`" not in page
    assert "`trtllm_batch_decode_sparse_mla_dsv4`" not in page


def test_main_without_the_inventory_says_where_to_find_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert cov.main(["--usage", str(tmp_path / "absent.md")]) == 2
    err = capsys.readouterr().err
    assert "absent.md" in err and "--usage" in err and cov.USAGE_ENV in err


def test_uncovered_page_lists_only_names_still_not_reached() -> None:
    """docs/uncovered.md (generated from the full inventory): a name fi_compat has since
    covered makes it stale."""
    rows = [ln for ln in (ROOT / "docs" / "uncovered.md").read_text().splitlines()]
    rows = [ln for ln in rows if ln.startswith("| `")]
    assert rows
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        name = cells[0].strip("`")
        mods = tuple(m.strip() for m in cells[1].split(",") if m.strip().startswith("flashinfer"))
        at = REACH.where(name)
        assert not (at and (not mods or set(mods) <= at)), (
            f"{name} is reached now: regenerate docs/uncovered.md "
            "(python tools/coverage.py --docs docs/uncovered.md)"
        )
