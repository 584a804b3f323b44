"""The docs renderer's model: the support matrix, rendered from the adapter tables.

Nothing here is typed by hand: rows are the entry point's generations
(:meth:`EntryPoint.generations`), cells come from its :class:`Param` rows, its
:class:`Emulation` hooks and the known-issues table.  ``python tools/render_docs.py``
writes README.md's generated sections, ``docs/<facade>.md``, ``docs/known-issues.md`` and
``docs/coverage.svg``; a unit test fails when any of them is stale.

Every release of every entry point falls into one coverage category (:data:`CATEGORIES`),
the worst that applies:

``refused``   some stable parameter (or one of its values) raises
              ``UnsupportedParameterError`` unless left at its default
``emulated``  some stable parameter the release lacks is emulated by fi_compat
``adapted``   parameters dropped (hints), renamed, or index dtypes other than the
              newest release's (cast before the call)
``native``    the release has every stable parameter, as the newest release does
``absent``    the entry point is not in that release
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES, NEWEST, VersionRange, at_least, place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from fi_compat._core import Adapter, EntryPoint
    from fi_compat.device import KnownIssue


# worst first: a release takes the first category that applies
CATEGORIES: dict[str, str] = {
    "refused": "some stable parameter raises UnsupportedParameterError unless left at default",
    "emulated": "some stable parameter the release lacks is emulated",
    "adapted": "parameters dropped (hints), renamed or index dtypes cast; nothing emulated",
    "native": "the release has every stable parameter",
    "absent": "the entry point is not in this release",
}


def entry_points() -> list[EntryPoint]:
    """Every facade function's entry point, in registry order (:mod:`fi_compat._facades`)."""
    from fi_compat._facades import entry_points as _entry_points

    return _entry_points()


def facade_row(facade: str) -> str:
    """The registry row (:data:`fi_compat._facades.FACADES`) of a facade module:
    ``"fi_compat.comm.vllm_ar"`` -> ``"comm"`` (a facade package's submodules share its
    row and its page)."""
    from fi_compat._facades import FACADES

    name = facade.removeprefix("fi_compat.")
    while name not in FACADES and "." in name:
        name = name.rpartition(".")[0]
    return name


def facades() -> dict[str, list[EntryPoint]]:
    """Entry points grouped by registry row (``"fi_compat.gdn_prefill"`` -> [...])."""
    out: dict[str, list[EntryPoint]] = {}
    for e in entry_points():
        out.setdefault(f"fi_compat.{facade_row(e.facade)}", []).append(e)
    return out


def page_name(facade: str) -> str:
    """``"fi_compat.gdn_prefill"`` -> ``"gdn_prefill.md"`` (its page under ``docs/``)."""
    return facade_row(facade) + ".md"


def anchor(heading: str) -> str:
    """The fragment GitHub (and most Markdown renderers) give a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


class Generation(NamedTuple):
    """One release range of one entry point over which its adapter is constant."""

    range: VersionRange
    adapter: Adapter
    native_dtypes: dict[str, str]
    cast: list[str]  # index parameters whose native dtype is not the newest release's
    renamed: list[str]  # rendered "`name` is `release name` (enum)" items
    emulated: list[str]
    hints: list[str]
    refused: list[str]  # absent: dropped at default/neutral, else an error
    neutral: list[str]  # the subset of ``refused`` also dropped at a neutral value
    restricted: list[str]  # present, but some values need a newer release
    notes: list[str]
    issues: list[KnownIssue]
    needs: str | None

    @property
    def category(self) -> str:
        if self.refused or self.restricted:
            return "refused"
        if self.emulated:
            return "emulated"
        if self.renamed or self.hints or self.cast:
            return "adapted"
        return "native"


def _dist(version: str) -> Distribution:
    return Distribution("flashinfer-python", version, "<matrix>", "")


def generation(entry: EntryPoint, release: str, rng: VersionRange | None = None) -> Generation:
    """What ``entry``'s adapter does on ``release`` (a release at or above ``entry.since``)."""
    a = entry.select(_dist(release))
    pl = a.placement
    assert pl is not None and a.problem is None, f"{entry.name}: no adapter for {release}"
    params = entry.params
    newest = entry.select(_dist(NEWEST)).native_dtypes
    served = a.result_serves  # absent parameters a result hook implements

    def emulates(n: str) -> bool:
        return bool(params[n].emulation) or n in served

    emulated = [n for n in a.absent if emulates(n) and not params[n].own]
    hints = [n for n in a.absent if params[n].hint]
    refused = [n for n in a.absent if not (emulates(n) or params[n].hint or params[n].own)]
    neutral = [n for n in refused if params[n].neutral]
    renamed = [
        f"`{n}` is `{r}`"
        + (f" ({a.enums[n][1]})" if n in a.enums and a.enums[n][1] != params[n].enum else "")
        for n, r in a.spelling.items()
        if r != n
    ]
    notes = [d for e in entry.emulations.values() if (d := e.describe(pl))]
    hooks: list[Any] = [*entry.normalizers, *entry.results]
    notes += [d for nm in hooks if (d := nm.describe(pl))]
    restricted = []
    for n in a.present:
        for value, since in params[n].value_since.items():
            if not at_least(pl, since):
                notes.append(f"`{n}={value!r}` needs {since}")
                restricted.append(n)
    dep = entry.optional_dependency(pl)
    return Generation(
        range=rng if rng is not None else a.range or VersionRange(release),
        adapter=a,
        native_dtypes=dict(a.native_dtypes),
        cast=[n for n, d in a.native_dtypes.items() if newest.get(n) != d],
        renamed=renamed,
        emulated=emulated,
        hints=hints,
        refused=refused,
        neutral=neutral,
        restricted=list(dict.fromkeys(restricted)),
        notes=notes,
        issues=list(entry.issues(pl)),
        needs=dep.package if dep else None,
    )


def generations(entry: EntryPoint) -> list[Generation]:
    """One :class:`Generation` per row of ``entry``'s table, oldest first."""
    return [generation(entry, g.lo, g) for g in entry.generations()]


class Cell(NamedTuple):
    """One release of one entry point in the coverage picture."""

    category: str
    number: int  # parameters that put it in its category (0 for native / absent)
    why: str


def coverage(entry: EntryPoint) -> dict[str, Cell]:
    """``{known release: Cell}`` for every release in ``KNOWN_RELEASES``."""
    out: dict[str, Cell] = {}
    gens = generations(entry)
    for release in KNOWN_RELEASES:
        if KNOWN_RELEASES.index(release) < KNOWN_RELEASES.index(entry.since):
            out[release] = Cell("absent", 0, f"added in {entry.since}")
            continue
        if entry.until is not None and at_least(place(release), entry.until):
            out[release] = Cell("absent", 0, f"removed in {entry.until}")
            continue
        g = next(g for g in gens if release in g.range.releases())
        why = []
        if g.refused or g.restricted:
            why.append("refused unless at default: " + ", ".join([*g.refused, *g.restricted]))
        if g.emulated:
            why.append("emulated: " + ", ".join(g.emulated))
        if g.hints:
            why.append("dropped hints: " + ", ".join(g.hints))
        if g.renamed:
            why.append("renamed: " + ", ".join(r.replace("`", "") for r in g.renamed))
        if g.cast:
            why.append("index dtypes: " + ", ".join(f"{n} {g.native_dtypes[n]}" for n in g.cast))
        number = {
            "refused": len(g.refused) + len(g.restricted),
            "emulated": len(g.emulated),
            "adapted": len(g.hints) + len(g.renamed) + len(g.cast),
        }.get(g.category, 0)
        out[release] = Cell(g.category, number, "; ".join(why) or "every stable parameter")
    return out


def gpus(arch: str) -> str:
    """``"10.3"`` -> ``"SM103"``, ``"family:12"`` -> ``"SM12x"``, ``"any"`` -> ``"any GPU"``."""
    if arch == "any":
        return "any GPU"
    if arch.startswith("family:"):
        return f"SM{arch.partition(':')[2]}x"
    major, _, minor = arch.partition(".")
    return f"SM{major}{minor}"


# upstream references in the known-issues rows: FI# FlashInfer, V# vLLM, S# SGLang
# (an issue or a pull request number: GitHub's /issues/N redirects to /pull/N)
REF_REPOS = {"FI": "flashinfer-ai/flashinfer", "V": "vllm-project/vllm", "S": "sgl-project/sglang"}
_REF = re.compile(r"(?<![\w\[#])(?:(FI|V|S)#|(FI) PR #|#)(\d+)\b")


def ref_links(text: str) -> str:
    """``FI#2939``, ``V#38730``, ``S#21906``, ``FI PR #4401`` as Markdown links; a bare
    ``#3293`` belongs to the project of the reference before it in ``text``."""
    last = [""]

    def link(m: re.Match[str]) -> str:
        proj = m.group(1) or m.group(2) or last[0]
        if not proj:
            return m.group(0)
        last[0] = proj
        kind = "pull" if m.group(2) else "issues"
        return f"[{m.group(0)}](https://github.com/{REF_REPOS[proj]}/{kind}/{m.group(3)})"

    return _REF.sub(link, text)


def issue_link(issue: KnownIssue, page: str = "") -> str:
    return f"[`{issue.id}`]({page}#{anchor(issue.id)})"


def rows(entry: EntryPoint) -> list[dict[str, str]]:
    """``entry``'s table: one dict (column -> Markdown cell) per generation."""
    out = []
    for g in generations(entry):
        error = [f"`{n}`" + ("\u2020" if n in g.neutral else "") for n in g.refused]
        out.append(
            {
                "FlashInfer": str(g.range),
                "coverage": g.category,
                "native index dtypes": ", ".join(f"`{n}` {d}" for n, d in g.native_dtypes.items())
                or "-",
                "renamed here": ", ".join(g.renamed) or "-",
                "absent: emulated": ", ".join(f"`{n}`" for n in g.emulated) or "-",
                "absent: dropped (hint)": ", ".join(f"`{n}`" for n in g.hints) or "-",
                "absent: dropped at default/neutral, else error": ", ".join(error) or "-",
                "notes": "; ".join(g.notes) or "-",
                "known issues": ", ".join(issue_link(i) for i in g.issues) or "-",
                "needs": f"`{g.needs}`" if g.needs else "-",
            }
        )
    return out


def _span(entry: Any) -> str:
    return str(VersionRange(entry.since, entry.until))


def _own_notes(entry: EntryPoint) -> list[str]:
    """fi_compat-only parameters: the same on every release, so said once per entry point."""
    return [
        f"`{n}` is accepted on every release (fi_compat only: {p.note})"
        for n, p in entry.params.items()
        if p.own
    ]


COLUMN_KEY = """\
- **coverage**: {categories}.
- **native index dtypes**: the integer dtype the release reads; other integer dtypes are
  cast before the call (no copy when the input already conforms).
- **renamed here**: the release's name for a stable parameter (and its enum class).
- **absent: emulated**: the release lacks the parameter; fi_compat computes it exactly.
- **absent: dropped (hint)**: the release lacks a semantics-free hint; it is dropped,
  whatever its value.
- **absent: dropped at default/neutral, else error**: dropped when left at its default
  (\u2020: or at a [neutral value](neutral-values.md) such as `fixed_split_size=-1`,
  `backend="fa2"`); any other value raises `UnsupportedParameterError` naming the first
  release that has it.
- **needs**: an optional package the FlashInfer module imports unguarded.

Newer releases than the last row use its adapter (with a warning); pre-releases use the
row of the release they precede.
"""


def _issue_section(issues: list[KnownIssue], level: str = "###") -> list[str]:
    parts = []
    for i in issues:
        parts += [
            f"{level} {i.id}\n",
            f"- releases: {i.range}; GPUs: {gpus(i.arch)}; feature: `{i.feature}`; "
            f"kind: {i.kind}" + ("" if i.confirmed else " (unconfirmed)"),
            f"- {i.summary}",
            f"- reference: {ref_links(i.ref)}",
            f"- workaround: {i.workaround}\n",
        ]
    return parts


GENERATED = "<!-- generated by tools/render_docs.py from the adapter tables; do not edit -->"


def reexports(facade: str) -> list[Any]:
    """The re-exported FlashInfer objects of ``facade`` and of its submodules
    (``fi_compat.comm.mnnvl``'s on ``fi_compat.comm``'s page; :mod:`fi_compat._core.reexport`)."""
    from fi_compat._facades import reexports as _reexports

    return [
        r
        for r in _reexports(facade.removeprefix("fi_compat.").partition(".")[0])
        if r.facade == facade or r.facade.startswith(facade + ".")
    ]


def reexport_name(r: Any, facade: str) -> str:
    """``r``'s name as its page shows it: dotted from the page's facade module
    (``mnnvl.McastGPUBuffer`` on ``fi_compat.comm``'s)."""
    sub = r.facade.removeprefix(facade).lstrip(".")
    return f"{sub}.{r.name}" if sub else r.name


def constructor_changes(r: Any) -> str:
    """What changed in a re-exported class's constructor over its served releases, from
    the snapshot facts (arguments added or dropped after its first release)."""
    from fi_compat._core import facts
    from fi_compat._core._facts import FACTS

    first, params = FACTS[facts.stem(r)]
    if r.floor is not None:
        first, params = facts._from_floor(first, params, r.floor)
    out = []
    for name, ranges in params.items():
        lo, hi = ranges[0][0], ranges[-1][1]
        hi = None if hi == r.until else hi  # the class's own removal: no change of it
        if name == "self":
            continue
        if lo != first:
            out.append(f"`{name}` from {lo}" + (f" to before {hi}" if hi else ""))
        elif hi is not None:
            out.append(f"`{name}` until before {hi}")
    return "; ".join(out) or "none"


def _reexport_section(facade: str) -> list[str]:
    rows = reexports(facade)
    if not rows:
        return []
    parts = [
        "## Re-exported objects\n",
        "FlashInfer's own objects, handed out as they are (resolved on first access of the "
        "name, no FlashInfer import before). Where the installed release cannot give one "
        "(before its first release, after the release that removed it, an import failure), "
        "the name is a stand-in class whose use raises the typed error. Constructor "
        "arguments a release lacks are FlashInfer's `TypeError` there.\n",
        "| name | FlashInfer | releases | what | constructor changes |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        served = _span(r) + (f" ({ref_links(r.ref)})" if r.ref else "")
        parts.append(
            f"| `{reexport_name(r, facade)}` | `{r.module}.{r.attr}` | {served} | {r.note} | "
            f"{constructor_changes(r)} |"
        )
    parts.append("")
    return parts


def page(facade: str) -> str:
    """``docs/<facade>.md``: every entry point's table, then the known issues, once each."""
    entries = facades()[facade]
    parts = [
        f"# `{facade}`\n",
        GENERATED + "\n",
        f"What each FlashInfer release does with each stable parameter of `{facade}`, "
        "generated from the adapter tables. Coverage at a glance: "
        "[coverage.svg](coverage.svg); all known issues: [known-issues.md](known-issues.md).\n",
    ]
    parts += [f"- [`{e.name}`](#{anchor(e.name)}): {_span(e)}" for e in entries]
    parts += [
        f"- [`{reexport_name(r, facade)}`](#re-exported-objects): {_span(r)} (FlashInfer's object)"
        for r in reexports(facade)
    ]
    parts.append("")
    notes = _page_notes(facade)
    if notes:
        parts += ["## Conventions\n", notes.strip() + "\n"]
    seen: dict[str, KnownIssue] = {}
    for e in entries:
        rs = rows(e)
        for g in generations(e):
            seen.update((i.id, i) for i in g.issues)
        # columns that say nothing for this entry point are left out
        cols = [c for c in rs[0] if c in ("FlashInfer", "coverage") or any(r[c] != "-" for r in rs)]
        parts.append(f"## {e.name}\n")
        intro = [f"`{e.facade}.{e.name}` \u2192 `{e.qualname}`, {_span(e)}."]
        if e.matrix_note:
            intro.append(f"{e.matrix_note}.")
        intro += [f"{n}." for n in _own_notes(e)]
        parts.append(" ".join(intro) + "\n")
        parts.append("| " + " | ".join(cols) + " |")
        parts.append("|" + "---|" * len(cols))
        parts += ["| " + " | ".join(r[c] for c in cols) + " |" for r in rs]
        parts.append("")
    parts += _reexport_section(facade)
    for r in reexports(facade):
        for g_issue in r.issues():
            seen.setdefault(g_issue.id, g_issue)
    parts.append("## Known issues\n")
    if seen:
        parts.append(
            "Rows of the known-issues table (`src/fi_compat/_issues.py`) that apply to these "
            "entry points; `python -m fi_compat doctor` reports those of the installed "
            "release on this GPU.\n"
        )
        parts += _issue_section(list(seen.values()))
    else:
        parts.append("None recorded.\n")
    parts.append("## Columns\n")
    parts.append(_column_key())
    return "\n".join(parts)


def _page_notes(facade: str) -> str:
    """``PAGE_NOTES`` of the facade's adapter module (markdown; what every release does
    with a tensor's layout or an argument's meaning, which the tables cannot say)."""
    import importlib

    from fi_compat._facades import FACADES

    row = FACADES.get(facade.rpartition(".")[2])
    if row is None:
        return ""
    return str(getattr(importlib.import_module(row[1]), "PAGE_NOTES", ""))


def _column_key() -> str:
    cats = "; ".join(f"`{c}`: {d}" for c, d in CATEGORIES.items() if c != "absent")
    return COLUMN_KEY.format(categories=cats + " (the first that applies)")


def known_issues_page() -> str:
    """``docs/known-issues.md``: every row of the known-issues table, with what it affects."""
    from fi_compat.device import TABLE

    parts = [
        "# Known issues\n",
        GENERATED + "\n",
        "Every row of the known-issues table (`src/fi_compat/_issues.py`), which the support "
        "queries (`fi_compat.device`), `python -m fi_compat doctor` and the facade pages "
        "read.\n",
    ]
    affected: dict[str, list[str]] = {}
    for e in entry_points():
        for i in e.issues():
            link = f"[`{e.facade}.{e.name}`]({page_name(e.facade)}#{anchor(e.name)})"
            affected.setdefault(i.id, []).append(link)
    for i in TABLE:
        parts += _issue_section([i], "##")
        parts[-1] = parts[-1].rstrip("\n")
        touched = affected.get(i.id)
        parts.append("- facades: " + (", ".join(touched) if touched else "none") + "\n")
    return "\n".join(parts)


def lacking(entry: EntryPoint, name: str) -> list[str]:
    """The releases of ``entry``'s range whose adapter lacks parameter ``name``."""
    lo = KNOWN_RELEASES.index(entry.since)
    hi = len(KNOWN_RELEASES) if entry.until is None else KNOWN_RELEASES.index(entry.until)
    return [r for r in KNOWN_RELEASES[lo:hi] if name in entry.select(_dist(r)).absent]


def _runs(releases: list[str]) -> str:
    """``["0.2.0.post1", ..., "0.2.8"]`` -> ``"0.2.0.post1–0.2.8"`` (contiguous runs)."""
    runs: list[list[str]] = []
    for r in releases:
        i = KNOWN_RELEASES.index(r)
        if runs and KNOWN_RELEASES.index(runs[-1][-1]) == i - 1:
            runs[-1].append(r)
        else:
            runs.append([r])
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]}\u2013{run[-1]}" for run in runs)


def neutral_rows() -> list[tuple[EntryPoint, str]]:
    """Every ``(entry point, parameter)`` with neutral values, in registry order."""
    import importlib

    from fi_compat._facades import FACADES

    for m in FACADES:  # binds the stubs (the stable defaults)
        importlib.import_module(f"fi_compat.{m}")
    return [(e, n) for e in entry_points() for n in e.order if e.params[n].neutral]


# Values that look neutral but are not exactly (left refused), with the source that says
# so: (entry point, parameter, value, why).  The neutral-values test checks each is still
# refused on the first release that lacks the parameter.
NOT_NEUTRAL: list[tuple[str, str, str, str]] = [
    (
        "fi_compat.decode.BatchDecodeWithPagedKVCacheWrapper.__init__",
        "backend",
        "'fa3'",
        "0.6.0+ build the fa3 prefill module for it (0.6.0 decode.py:1051-1052, "
        "prefill.py:310); before 0.2.9 every decode runs FA2-family kernels",
    ),
    (
        "fi_compat.decode.trtllm_batch_decode_with_kv_cache",
        "o_scale",
        "None",
        "not 1.0: the xqa path multiplies by it (0.5.3 decode.py:2441 `bmm2_scale * o_scale`)",
    ),
    (
        "fi_compat.fused_moe.trtllm_bf16_moe",
        "routed_scaling_factor",
        "1.0",
        "0.5.3's BF16 launcher never sets it: the runner's default 0.0 applies "
        "(include/flashinfer/trtllm/fused_moe/runner.h:274), 0.6.0 reads None as 1.0",
    ),
    (
        "fi_compat.sampling.top_p_renorm_probs",
        "is_deterministic",
        "True",
        "0.6.7 brought a histogram algorithm with an integer-accumulation variant "
        "(sampling.py:1645); the releases before run another algorithm",
    ),
    (
        "fi_compat.quantization.fp4_quantize",
        "batch_invariant",
        "True",
        "0.7.4 routes it to separate batch-invariant kernels, which may refuse the call "
        "(quantization/fp4_quantization.py:1211-1221); likewise the other quantizers and "
        "the GEMMs",
    ),
    (
        "fi_compat.fused_moe.cutlass_fused_moe",
        "use_fused_finalize",
        "True",
        "0.5.3-0.6.14 always fuse (moe_kernels.h `use_fused_finalize_ = true`), but "
        "0.5.0-0.5.2 fuse on SM90 only (cutlass_fused_moe_kernels.cuh:4715)",
    ),
    (
        "fi_compat.decode.trtllm_batch_decode_with_kv_cache_mla",
        "return_lse_base",
        "'base2'",
        "None means base 2 on trtllm-gen / sparse but base e on monolithic cute-dsl "
        "(0.7.1 mla/_core.py:3702-3708): no single value",
    ),
    (
        "fi_compat.decode.trtllm_batch_decode_with_kv_cache_mla",
        "kv_scale_format",
        "'pow2_fp32'",
        "equal to 'auto' for d_qk=576 only; refused for d_qk=512 "
        "(0.6.14 mla/_sparse_mla_sm120.py:166)",
    ),
    (
        "fi_compat.prefill.BatchPrefillWithPagedKVCacheWrapper.run",
        "skip_softmax_threshold_scale_factor",
        "0.0",
        "any value selects the skip-softmax kernels (0.6.4: 'providing a value enables "
        "skip-softmax sparsity')",
    ),
    (
        "fi_compat.decode.BatchDecodeWithPagedKVCacheWrapper.plan",
        "o_data_type",
        "= q_data_type",
        "neutral, but equal to another argument rather than a constant (0.6.0 decode.py:974-975 "
        "`None -> q_data_type`); likewise prefill `head_dim_vo` = `head_dim_qk` (0.2.1 "
        "prefill.py:1293-1294), `single_prefill_with_kv_cache(o_dtype=q.dtype)` (0.2.6 "
        "prefill.py:943-944), MLA `output_dtype` (0.7.0 mla/_batch_mla/_wrapper.py:540), "
        "`mxfp8_quantize(sf_swizzle_layout=...)` matching `is_sf_swizzled_layout` (0.6.7 "
        "quantization/fp8_quantization.py:205-208); not expressed by this table",
    ),
]


def neutral_values_page() -> str:
    """``docs/neutral-values.md``: every parameter with values that mean what the releases
    lacking it always do, and the values that look so but are not."""
    parts = [
        "# Neutral values\n",
        GENERATED + "\n",
        "A stable parameter that the installed release lacks is dropped when it is left at "
        "its default, and refused otherwise with `UnsupportedParameterError` naming the "
        "first release that has it ([bad input](bad-input.md)).  Some values besides the "
        "default mean exactly what the releases without the parameter always do: a "
        "default that a newer release normalises to that value, or the only kernel family "
        "the older releases have.  These *neutral values* are dropped too, on every release "
        "that lacks the parameter, so code written for a newer release (vLLM's "
        '`plan(fixed_split_size=-1)`, SGLang\'s `backend="fa2"`) runs unchanged on an '
        "older one.  Each row is a `Param(neutral=..., neutral_ref=...)` of the adapter "
        "tables (`src/fi_compat/_adapters/`), checked on every release it names by "
        "`tests/static/test_neutral_values.py`.\n",
        "| entry point | parameter | default | neutral values | releases lacking it | evidence |",
        "|---|---|---|---|---|---|",
    ]
    for e, n in neutral_rows():
        p = e.params[n]
        link = f"[`{e.facade}.{e.name}`]({page_name(e.facade)}#{anchor(e.name)})"
        default = "(left out)" if repr(p.default) == "OMIT" else f"`{p.default!r}`"
        values = ", ".join(f"`{v!r}`" for v in p.neutral)
        parts.append(
            f"| {link} | `{n}` | {default} | {values} | {_runs(lacking(e, n))} | {p.neutral_ref} |"
        )
    parts += [
        "\n## Considered and left refused\n",
        "Values that look neutral but are not exactly, on some release that lacks the "
        "parameter (the test checks each is still refused):\n",
        "| entry point | parameter | value | why not |",
        "|---|---|---|---|",
    ]
    for dotted, n, value, why in NOT_NEUTRAL:
        parts.append(f"| `{dotted}` | `{n}` | `{value}` | {why} |")
    return "\n".join(parts) + "\n"


def attention_backends_page() -> str:
    """``docs/attention-backends.md``: every ``backend`` name the attention facades take,
    the first release that accepts it per entry point, and where it runs."""
    import importlib

    from fi_compat._adapters._backend import ATTENTION_BACKEND_GPUS
    from fi_compat._facades import FACADES

    parts = [
        "# Attention backends\n",
        GENERATED + "\n",
        "Which release accepts which `backend` name, per entry point (a name a release "
        "does not accept is refused before the call with `UnsupportedParameterError` "
        "naming the first release that does), and where each backend runs.  On SM90 (the "
        "H200) the GPU tests run `fa2` and `fa3`; the others are covered by the static "
        "suite and the live contract.\n",
        "## Where each backend runs\n",
        "| backend | GPUs |",
        "|---|---|",
    ]
    parts += [f"| `{b}` | {gpus} |" for b, gpus in ATTENTION_BACKEND_GPUS.items()]
    parts.append("\n## Names by release\n")
    parts += ["| entry point | backend | accepted from |", "|---|---|---|"]
    attention = ("decode", "prefill", "mla", "cascade")
    for m in attention:  # binds the stubs (defaults, the accepted names)
        importlib.import_module(f"fi_compat.{m}")
    for e in entry_points():
        if e.facade.removeprefix("fi_compat.") not in attention or "backend" not in e.params:
            continue
        p = e.params["backend"]
        first = p.since or e.since
        link = f"[`{e.facade}.{e.name}`]({page_name(e.facade)}#{anchor(e.name)})"
        stable = p.kind.literals if p.kind is not None else (p.default,)
        names = {}
        for v in stable:
            if (v == p.default or v in p.neutral) and p.since:  # dropped where absent
                names[str(v)] = f"{e.since} (not passed before {p.since})"
            else:
                names[str(v)] = str(p.value_since.get(v, first))
        for name, since in names.items():
            parts.append(f"| {link} | `{name}` | {since} |")
    assert all(m in FACADES for m in attention)
    return "\n".join(parts) + "\n"


def _facade_lines() -> list[tuple[str, str, str]]:
    """(module, page, line) per facade module: its FlashInfer module, releases, names."""
    from fi_compat._facades import FACADES
    from fi_compat._facades import entry_points as of_module

    out = []
    for module, (fi_module, _) in FACADES.items():
        entries = of_module(module)
        first = min((e.since for e in entries), key=KNOWN_RELEASES.index)
        names = ", ".join(
            [f"`{e.name}`" for e in entries]
            + [f"`{reexport_name(r, entries[0].facade)}`" for r in reexports(entries[0].facade)]
        )
        page = page_name(entries[0].facade)
        out.append(
            (
                module,
                page,
                f"- `fi_compat.{module}` \u2192 `{fi_module}`, from {first} to "
                f"{KNOWN_RELEASES[-1]}+ ([details]({page})): {names}",
            )
        )
    return out


def facades_page() -> str:
    """``docs/facades.md``: one line per facade module, its functions, methods and
    re-exported objects and the releases they serve."""
    rows = _facade_lines()
    parts = [
        "# Facade modules\n",
        GENERATED + "\n",
        "Each facade module mirrors a FlashInfer module; each details page has a row per "
        "release range: its known issues and what is dropped, renamed, emulated or refused "
        "there. FlashInfer's other spellings of a name (top-level `flashinfer.X`, "
        "submodules) resolve to the same object in the matching `fi_compat` module.\n",
        *(line for _, _, line in rows),
        "",
    ]
    return "\n".join(parts)


def readme_facades() -> str:
    """README.md's facade summary: the modules as links to their pages, wrapped (the
    full list is ``docs/facades.md``, so the README does not grow a line per module)."""
    rows = _facade_lines()
    n = len(entry_points()) + sum(len(reexports(f"fi_compat.{m}")) for m, _, _ in rows)
    words = [
        f"{len(rows)} modules, {n} functions, methods and FlashInfer objects "
        f"([all, with their releases](docs/facades.md)):"
    ]
    words += [f"[`{m}`](docs/{page})," for m, page, _ in rows]
    words[-1] = words[-1].rstrip(",") + "."
    lines, cur = [], ""
    for w in " ".join(words).split(" "):
        if cur and len(cur) + 1 + len(w) > 88:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    return "\n".join([*lines, cur])


def error_tree() -> str:
    """README.md's error hierarchy, read from :mod:`fi_compat.errors`."""
    from fi_compat import errors

    classes = [
        c for c in vars(errors).values() if isinstance(c, type) and c.__module__ == errors.__name__
    ]

    def base(c: type) -> type | None:
        return next((b for b in c.__bases__ if b in classes), None)

    def builtins(c: type) -> str:
        extra = [b.__name__ for b in c.__bases__ if b not in classes and b is not Exception]
        return f" ({', '.join(extra)})" if extra else ""

    def first_line(c: type) -> str:
        para = " ".join((c.__doc__ or "").strip().split("\n\n")[0].split())
        return re.sub(r":\w+:`([^`]+)`", r"`\1`", para.replace("``", "`"))

    lines: list[str] = []

    def walk(c: type, depth: int) -> None:
        lines.append(f"{'  ' * depth}- `{c.__name__}`{builtins(c)}: {first_line(c)}")
        for sub in classes:
            if base(sub) is c:
                walk(sub, depth + 1)

    for c in classes:
        if base(c) is None:
            walk(c, 0)
    return "\n".join(lines)


def markdown() -> str:
    """Every facade's page, concatenated (for ``info`` and ad-hoc use)."""
    return "\n".join(page(f) for f in facades())


__all__ = [
    "CATEGORIES",
    "Cell",
    "Generation",
    "coverage",
    "entry_points",
    "error_tree",
    "facades",
    "generation",
    "generations",
    "known_issues_page",
    "markdown",
    "page",
    "page_name",
    "readme_facades",
    "rows",
]
