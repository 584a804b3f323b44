"""Support matrix, rendered from the adapter tables (README section, ``info``).

Nothing here is typed by hand: rows are the entry point's generations
(:meth:`EntryPoint.generations`), cells come from its :class:`Param` rows and
:class:`Emulation` hooks.  ``python tools/render_readme.py`` writes it into README.md and
a unit test fails when README.md is stale.
"""

from __future__ import annotations

from .detection import Distribution
from .registry import at_least

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._callpath import EntryPoint


def entry_points() -> list[EntryPoint]:
    from .adapters.fused_moe import HELPERS, SPECS
    from .adapters.gdn_prefill import SPEC as GDN

    return [GDN, *SPECS.values(), *HELPERS.values()]


def rows(entry: EntryPoint) -> list[dict[str, str]]:
    out = []
    for gen in entry.generations():
        a = entry.select(Distribution("flashinfer-python", gen.lo, "<matrix>", ""))
        pl = a.placement
        assert pl is not None
        params = entry.params
        own = [n for n in a.absent if params[n].own]
        emulated = [n for n in a.absent if params[n].emulation and not params[n].own]
        hints = [n for n in a.absent if params[n].hint]
        neutral = [n for n in a.absent if params[n].neutral and not params[n].emulation]
        error = [n for n in a.absent if not (params[n].emulation or params[n].hint)]
        notes = [d for e in entry.emulations.values() if (d := e.describe(pl))]
        notes += [f"`{n}` accepted (fi_compat only: {params[n].note})" for n in own]
        for n in a.present:
            for value, since in params[n].value_since.items():
                if not at_least(pl, since):
                    notes.append(f"`{n}={value!r}` needs {since}")
        notes += [f"known issue `{i.id}` ({i.arch}): {i.summary}" for i in entry.issues(pl)]
        dep = entry.optional_dependency(pl)
        out.append(
            {
                "FlashInfer": str(gen),
                "native index dtypes": ", ".join(f"`{n}` {d}" for n, d in a.native_dtypes.items())
                or "-",
                "renamed here": ", ".join(
                    f"`{n}` is `{r}`"
                    + (f" ({a.enums[n][1]})" if a.enums[n][1] != params[n].enum else "")
                    if n in a.enums
                    else f"`{n}` is `{r}`"
                    for n, r in a.spelling.items()
                    if r != n
                )
                or "-",
                "absent: emulated": ", ".join(f"`{n}`" for n in emulated) or "-",
                "absent: dropped (hint)": ", ".join(f"`{n}`" for n in hints) or "-",
                "absent: dropped at default/neutral, else error": ", ".join(
                    f"`{n}`" + ("\u2020" if n in neutral else "") for n in error
                )
                or "-",
                "notes": "; ".join(notes) or "-",
                "needs": f"`{dep.package}`" if dep else "-",
            }
        )
    return out


def markdown() -> str:
    """Every entry point's table; facades after the first fold into ``<details>``."""
    parts = []
    current = None
    for entry in entry_points():
        if entry.facade != current:
            current = entry.facade
            parts.append(f"### `{current}`\n")
        rs = rows(entry)
        # columns that say nothing for this entry point are left out
        cols = [c for c in rs[0] if c == "FlashInfer" or any(r[c] != "-" for r in rs)]
        head = f"<code>{entry.name}</code> \u2192 <code>{entry.qualname}</code>"
        note = f"\n\n{entry.matrix_note}." if entry.matrix_note else ""
        parts.append(f"<details><summary>{head}</summary>{note}\n")
        parts.append("| " + " | ".join(cols) + " |")
        parts.append("|" + "---|" * len(cols))
        parts += ["| " + " | ".join(r[c] for c in cols) + " |" for r in rs]
        parts.append("\n</details>\n")
    parts.append(
        "\u2020 also dropped at a neutral value (e.g. `use_cp=False`, "
        '`backend="flashinfer"`). Newer releases than the last row use its adapter '
        "(with a warning); pre-releases use the row of the release they precede.\n"
    )
    return "\n".join(parts)
