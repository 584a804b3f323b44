"""How much of what serving engines call from FlashInfer is reachable through fi_compat.

Reads the inventory of engine call sites (``research/engine-usage.md`` of the shared
notes: a static scan of vLLM, SGLang, TRT-LLM, tokenspeed, aphrodite, LightLLM,
Megatron-LM, TGI and tokasaurus; its "Full table": one row per FlashInfer name with the
modules the engines import it from, the call sites per engine and whether the sites are
on the hot path) and measures, per engine and overall, the share of names, call sites
and hot-path call sites whose name fi_compat serves **at the module the engine imports
it from** (``fi_compat._locations.LOCATIONS``: ``from flashinfer.fused_moe.core import
ActivationType`` becomes ``from fi_compat.fused_moe.core import ActivationType``), next
to the inventory's own coverage column (the "before" numbers, as of the scan).

A row's sites count as reachable when the name is reachable at every module the
inventory lists for it (any location where the scan recorded none); a wrapper method
when its class is, and the method is an entry point, one of the legacy names the facade
classes keep (``begin_forward``, ``run_return_lse``, ...), or a backend query of a facade
function (``mm_bf16.is_backend_supported``); a method of a class fi_compat re-exports as
FlashInfer's own (``AutoTuner.get``, ``McastGPUBuffer.lamport_initialize``) when the
class binds it (itself or a FlashInfer base) in every release the re-export serves, from
its first release (or floor) to its removal (``fi_compat.cli.api``, the API history).

    python tools/coverage.py [--usage PATH] [--json] [--docs docs/uncovered.md]

``--usage`` defaults to ``$FI_COMPAT_ENGINE_USAGE`` or ``../shared/research/engine-usage.md``
beside the repository (a clear error when absent); ``--docs`` writes the page of the
names fi_compat does not reach, each with its reason.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
USAGE_ENV = "FI_COMPAT_ENGINE_USAGE"
ENGINES = {
    "V": "vLLM",
    "S": "SGLang",
    "T": "TRT-LLM",
    "TS": "tokenspeed",
    "A": "aphrodite",
    "L": "LightLLM",
    "M": "Megatron",
    "G": "TGI",
    "K": "tokasaurus",
}
# names the facade wrapper classes keep besides their entry points
# (fi_compat/_adapters/_attention.py: begin_forward is plan, run_return_lse is
# run(return_lse=True), end_forward a no-op, forward / forward_return_lse FlashInfer's own)
CLASS_LEGACY = ("begin_forward", "end_forward", "forward", "forward_return_lse", "run_return_lse")
BACKEND_QUERIES = ("is_backend_supported", "is_compute_capability_supported")

# out of scope by design: build internals and building blocks an engine compiles its own
# kernels with, not operations with a contract fi_compat could freeze
OUT_OF_SCOPE_GROUPS = {
    "jit / cubin / artifacts": "build-internal (JIT specs, cubin loader, artifact paths)",
    "private trtllm-gen JIT modules": "build-internal (FlashInfer's private JIT module getters)",
    "CuTe-DSL building blocks (engine-owned kernels)": (
        "CuTe-DSL building block for an engine's own kernel (make_ptr, ...), not a FlashInfer "
        "operation"
    ),
}
# names left uncovered on purpose for now, each with why (docs/uncovered.md)
LEFT = {
    "TunableRunner": (
        "the base class of an engine's own tunable op (FlashInfer's autotuner internals, "
        "abstract methods that changed with the tactic API); not a FlashInfer operation"
    ),
    "current_nvfp4_4over6_config": (
        "flashinfer.quantization.nvfp4_quantization_utils 0.7.0+ (a context-local NVFP4 "
        "4-over-6 recipe state, new enough that its contract is not settled)"
    ),
    "make_nvfp4_global_scale": (
        "flashinfer.quantization.nvfp4_quantization_utils 0.7.0+, with current_nvfp4_4over6_config"
    ),
}


@dataclass
class Row:
    """One row of the inventory's full table."""

    name: str
    modules: tuple[str, ...]  # () where the scan recorded none
    group: str
    sites: dict[str, int]  # engine letter -> call sites
    hot: bool
    before: bool  # the inventory's fi_compat column: COVERED / COVERED*
    drift: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.sites.values())


def parse(text: str) -> list[Row]:
    """The rows of the "## Full table" section of ``text`` (the inventory's markdown)."""
    _, found, table = text.partition("\n## Full table")
    if not found:
        raise ValueError("no '## Full table' section: not the engine-usage inventory")
    rows: list[Row] = []
    for line in table.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 8:
            raise ValueError(f"a row with {len(cells)} cells (8 or more expected): {line}")
        name = re.match(r"`([^`]+)`", cells[0])
        if name is None:
            raise ValueError(f"no name in {cells[0]!r}")
        mods = tuple(
            sorted({m.strip() for m in cells[1].split(",") if m.strip().startswith("flashinfer")})
        )
        sites = {k: int(v) for k, v in re.findall(r"\b([A-Z]{1,2}):(\d+)", cells[3])}
        unknown = set(sites) - set(ENGINES)
        if unknown:
            raise ValueError(f"unknown engine letters {sorted(unknown)} in {line}")
        if sum(sites.values()) != int(cells[4]):
            raise ValueError(f"{name.group(1)}: engine sites {sites} do not sum to {cells[4]}")
        rows.append(
            Row(
                name=name.group(1),
                modules=mods,
                group=cells[2],
                sites=sites,
                hot=cells[5].startswith("hot"),
                before=cells[7].startswith("COVERED"),
                drift=cells[6],
            )
        )
    if not rows:
        raise ValueError("the full table has no rows")
    return rows


class Reach:
    """Where fi_compat serves each name (its generated location data and registry)."""

    def __init__(self) -> None:
        sys.path.insert(0, str(ROOT / "src"))
        from fi_compat._facades import entry_points, reexports
        from fi_compat._locations import LOCATIONS

        self.locations = LOCATIONS
        eps = entry_points()
        self.methods = {e.attr for e in eps if "." in e.attr}
        self.classes = {a.partition(".")[0] for a in self.methods}
        self.backend_queries = {e.attr for e in eps if e.backend_query is not None}
        self.reexported: dict[str, list[Any]] = {}
        for r in reexports():
            self.reexported.setdefault(r.name, []).append(r)

    def reexported_method(self, owner: str, meth: str) -> bool:
        """Whether ``owner`` is a class fi_compat re-exports as FlashInfer's own and that
        class binds method ``meth`` in every release each of its re-exports serves
        (first release or floor to removal), by the API history of the releases."""
        rows = self.reexported.get(owner)
        if not rows or meth.startswith("_"):
            return False
        from fi_compat.cli.api import history

        h = history()
        for r in rows:
            lo = h.index[r.since]
            hi = h.index[r.until] if r.until is not None else len(h.releases)
            path = f"{r.module}.{r.attr}.{meth}"
            if not all(h.lookup(path, i).kind == "method" for i in range(lo, hi)):
                return False
        return True

    def where(self, name: str) -> set[str]:
        """The FlashInfer modules at which fi_compat serves ``name`` (some release)."""
        owner, _, meth = name.partition(".")
        if not meth:
            return set(self.locations.get(name, {}))
        served = (
            f"{owner}.{meth}" in self.methods
            or (owner in self.classes and meth in CLASS_LEGACY)
            or (owner in self.backend_queries and meth in BACKEND_QUERIES)
            or self.reexported_method(owner, meth)
        )
        return set(self.locations.get(owner, {})) if served else set()

    def reachable(self, row: Row) -> bool:
        at = self.where(row.name)
        return bool(at) and (not row.modules or set(row.modules) <= at)


def reason(row: Row, reach: Reach) -> str:
    """Why fi_compat does not reach ``row``'s name."""
    at = reach.where(row.name)
    if at:
        missing = sorted(set(row.modules) - at)
        note = f": {LEFT[row.name]}" if row.name in LEFT else ""
        return (
            f"not yet at {', '.join(missing)} (fi_compat serves it at {', '.join(sorted(at))})"
            + note
        )
    if row.group in OUT_OF_SCOPE_GROUPS:
        return "out of scope: " + OUT_OF_SCOPE_GROUPS[row.group]
    private = [p for p in (row.name, *row.modules) for p in p.split(".") if p.startswith("_")]
    if private:
        return f"out of scope: private FlashInfer name ({private[0]})"
    if "absent from every release" in row.drift:
        return "not yet (" + row.drift.strip() + "; newer than the scan, or engine-side)"
    if row.name in LEFT:
        return f"not yet: {LEFT[row.name]}"
    return "not yet"


def measure(rows: list[Row], covered: dict[str, bool]) -> dict[str, dict[str, int]]:
    """{engine or "all": {names, names_ok, sites, sites_ok, hot, hot_ok}}."""
    out: dict[str, dict[str, int]] = {}
    keys = ("names", "names_ok", "sites", "sites_ok", "hot", "hot_ok")
    for row in rows:
        ok = covered[row.name]
        for eng, n in [*row.sites.items(), ("all", row.total)]:
            m = out.setdefault(ENGINES.get(eng, eng), dict.fromkeys(keys, 0))
            m["names"] += 1
            m["names_ok"] += ok
            m["sites"] += n
            m["sites_ok"] += n * ok
            if row.hot:
                m["hot"] += n
                m["hot_ok"] += n * ok
    return out


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.0f}%" if b else "-"


def report(rows: list[Row], reach: Reach) -> tuple[str, dict[str, object]]:
    before = measure(rows, {r.name: r.before for r in rows})
    after = measure(rows, {r.name: reach.reachable(r) for r in rows})
    order = [*ENGINES.values(), "all"]
    lines = [
        "engine       names (before -> now)     call sites (before -> now)   hot-path sites",
    ]
    for eng in [e for e in order if e in after]:
        b, a = before[eng], after[eng]
        lines.append(
            f"{eng:<12} {b['names_ok']:>3} -> {a['names_ok']:>3} / {a['names']:<3} "
            f"({_pct(b['names_ok'], b['names'])} -> {_pct(a['names_ok'], a['names'])})"
            f"   {b['sites_ok']:>3} -> {a['sites_ok']:>3} / {a['sites']:<3} "
            f"({_pct(b['sites_ok'], b['sites'])} -> {_pct(a['sites_ok'], a['sites'])})"
            f"   {b['hot_ok']:>3} -> {a['hot_ok']:>3} / {a['hot']:<3} "
            f"({_pct(b['hot_ok'], b['hot'])} -> {_pct(a['hot_ok'], a['hot'])})"
        )
    return "\n".join(lines), {"before": before, "now": after}


def uncovered_page(rows: list[Row], reach: Reach, source: str) -> str:
    """docs/uncovered.md: every engine-called name fi_compat does not reach, and why."""
    missing = [r for r in rows if not reach.reachable(r)]
    missing.sort(key=lambda r: (reason(r, reach).startswith("out of scope"), -r.total, r.name))
    engines = ", ".join(ENGINES.values())
    out = [
        "# FlashInfer names engines call that fi_compat does not reach",
        "",
        f"Generated by `python tools/coverage.py --docs docs/uncovered.md` from {source} "
        f"(a static scan of {engines}; do not edit). A name counts as reached when fi_compat "
        "serves it at every module the engines import it from. Out of scope by design: "
        "private names, build internals (JIT specs, the cubin loader, artifact paths, "
        "FlashInfer's private JIT module getters) and the CuTe-DSL building blocks engines "
        "compile their own kernels with; the rest is not yet covered.",
        "",
        f"{len(missing)} of {len(rows)} names, "
        f"{sum(r.total for r in missing)} of {sum(r.total for r in rows)} call sites.",
        "",
        "| name | FlashInfer module(s) | group | call sites (engines) | hot | reason |",
        "|---|---|---|---|---|---|",
    ]
    for r in missing:
        engs = " ".join(f"{k}:{v}" for k, v in r.sites.items())
        mods = ", ".join(r.modules) or "—"
        out.append(
            f"| `{r.name}` | {mods} | {r.group} | {r.total} ({engs}) | "
            f"{'hot' if r.hot else 'setup'} | {reason(r, reach)} |"
        )
    letters = ", ".join(f"{k} {v}" for k, v in ENGINES.items())
    return "\n".join([*out, "", f"Engines: {letters}.", ""])


def default_usage() -> Path:
    env = os.environ.get(USAGE_ENV)
    if env:
        return Path(env)
    for base in (ROOT.parent, ROOT.parent.parent):
        p = base / "shared" / "research" / "engine-usage.md"
        if p.is_file():
            return p
    return ROOT.parent / "shared" / "research" / "engine-usage.md"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--usage", type=Path, default=None, help="the engine-usage inventory")
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    ap.add_argument("--docs", type=Path, default=None, help="write the uncovered-names page")
    args = ap.parse_args(argv)
    usage = args.usage or default_usage()
    if not usage.is_file():
        print(
            f"coverage.py: the engine-usage inventory is not at {usage}; pass --usage PATH "
            f"or set {USAGE_ENV} (it lives in the shared research notes, "
            f"research/engine-usage.md)",
            file=sys.stderr,
        )
        return 2
    rows = parse(usage.read_text(encoding="utf-8"))
    reach = Reach()
    text, numbers = report(rows, reach)
    print(json.dumps(numbers, indent=1) if args.json else text)
    if args.docs is not None:
        args.docs.write_text(uncovered_page(rows, reach, "research/engine-usage.md"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
