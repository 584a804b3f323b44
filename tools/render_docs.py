#!/usr/bin/env python3
"""Write every generated document from the adapter tables (``tools/docs_model.py``).

python tools/render_docs.py          # rewrite them
python tools/render_docs.py --check  # exit 1 if any is stale (a unit test does this)

Outputs: README.md's generated sections (between ``<!-- NAME:start -->`` and
``<!-- NAME:end -->`` markers), ``docs/<facade>.md`` per facade module,
``docs/facades.md`` (every module's names), ``docs/known-issues.md``,
``docs/attention-backends.md``, ``docs/neutral-values.md`` and ``docs/coverage.svg``.
A generated page under docs/ that no facade produces any more is stale too (and removed
on a rewrite).
"""

from __future__ import annotations

import sys
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "src"))

import docs_model as support  # noqa: E402  (tools/docs_model.py, beside this script)
from fi_compat.registry import KNOWN_RELEASES  # noqa: E402

# coverage picture: fill and text colour per category (legend order)
COLOURS = {
    "native": ("#1b7837", "#ffffff"),
    "adapted": ("#a6dba0", "#000000"),
    "emulated": ("#fdb863", "#000000"),
    "refused": ("#d6604d", "#ffffff"),
    "absent": ("#e8e8e8", "#000000"),
}
CELL, PAD, CHAR, FONT = 18, 12, 7, "DejaVu Sans Mono, Menlo, Consolas, monospace"


def readme_sections() -> dict[str, str]:
    return {"facades": support.readme_facades(), "errors": support.error_tree()}


def render_readme(text: str) -> str:
    for name, body in readme_sections().items():
        start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
        head, found, rest = text.partition(start)
        _, found_end, tail = rest.partition(end)
        if not (found and found_end):
            raise SystemExit(f"README.md lacks the {start} ... {end} markers")
        text = f"{head}{start}\n{body}\n{end}{tail}"
    return text


def coverage_svg() -> str:
    """Rows: every facade function; columns: every known release; colour: category."""
    entries = support.entry_points()
    labels = [f"{e.facade.removeprefix('fi_compat.')}.{e.name}" for e in entries]
    left = PAD + CHAR * max(len(s) for s in labels) + 8
    top = 40 + CHAR * max(len(r) for r in KNOWN_RELEASES)
    width = left + CELL * len(KNOWN_RELEASES) + 2 * PAD
    legend_y = top + CELL * len(entries) + 2 * PAD
    height = legend_y + CELL + 3 * PAD
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="{FONT}" font-size="11">',
        "<title>fi_compat coverage: facade function x FlashInfer release</title>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{PAD}" y="{PAD + 10}" font-size="13" font-weight="bold">'
        "fi_compat facade functions \u00d7 flashinfer-python releases</text>",
    ]
    for j, release in enumerate(KNOWN_RELEASES):
        x, y = left + CELL * j + CELL // 2 + 4, top - 6
        out.append(f'<text transform="translate({x},{y}) rotate(-90)">{escape(release)}</text>')
    for i, (entry, label) in enumerate(zip(entries, labels, strict=True)):
        y = top + CELL * i
        out.append(
            f'<text x="{left - 8}" y="{y + CELL - 5}" text-anchor="end">{escape(label)}</text>'
        )
        # one tooltip per run of releases whose cells are the same
        cells = list(support.coverage(entry).items())
        j = 0
        while j < len(cells):
            k = j
            while k + 1 < len(cells) and cells[k + 1][1] == cells[j][1]:
                k += 1
            cell = cells[j][1]
            span = cells[j][0] if j == k else f"{cells[j][0]}\u2013{cells[k][0]}"
            fill, ink = COLOURS[cell.category]
            out.append(
                f"<g><title>{escape(f'{label}, {span}: {cell.category} ({cell.why})')}</title>"
            )
            for n in range(j, k + 1):
                x = left + CELL * n
                out.append(
                    f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{fill}" '
                    'stroke="#ffffff"/>'
                )
                if cell.number:
                    out.append(
                        f'<text x="{x + CELL // 2}" y="{y + CELL - 5}" text-anchor="middle" '
                        f'font-size="9" fill="{ink}">{cell.number}</text>'
                    )
            out.append("</g>")
            j = k + 1
    x = PAD
    for category, (fill, _) in COLOURS.items():
        out.append(
            f'<rect x="{x}" y="{legend_y}" width="{CELL}" height="{CELL}" fill="{fill}"/>'
            f'<text x="{x + CELL + 5}" y="{legend_y + CELL - 5}">{category}</text>'
        )
        x += CELL + 5 + CHAR * len(category) + 2 * PAD
    out.append(
        f'<text x="{PAD}" y="{legend_y + CELL + 2 * PAD}" font-size="10">'
        "a cell shows the first category that applies (refused, emulated, adapted, native);"
        " its number counts the stable parameters in that state</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def targets() -> dict[Path, str]:
    """Every generated file and its content."""
    readme = ROOT / "README.md"
    out = {readme: render_readme(readme.read_text())}
    for facade in support.facades():
        out[DOCS / support.page_name(facade)] = support.page(facade)
    out[DOCS / "facades.md"] = support.facades_page()
    out[DOCS / "known-issues.md"] = support.known_issues_page()
    out[DOCS / "attention-backends.md"] = support.attention_backends_page()
    out[DOCS / "neutral-values.md"] = support.neutral_values_page()
    out[DOCS / "coverage.svg"] = coverage_svg()
    return out


def orphans(expected: dict[Path, str]) -> list[Path]:
    """Generated pages under docs/ that nothing generates any more."""
    if not DOCS.is_dir():
        return []
    return [
        p
        for p in sorted(DOCS.glob("*.md"))
        if p not in expected and support.GENERATED in p.read_text()
    ]


def main() -> int:
    expected = targets()
    stale = [p for p, text in expected.items() if not p.is_file() or p.read_text() != text]
    extra = orphans(expected)
    if "--check" in sys.argv:
        for p in [*stale, *extra]:
            print(f"stale: {p.relative_to(ROOT)}", file=sys.stderr)
        if stale or extra:
            print("run: python tools/render_docs.py", file=sys.stderr)
        return int(bool(stale or extra))
    DOCS.mkdir(exist_ok=True)
    for p in stale:
        p.write_text(expected[p])
    for p in extra:
        p.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
