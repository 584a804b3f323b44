"""The generated docs: anchors resolve, every facade function has a page, a line and a row."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from conftest import ROOT
from fi_compat.registry import KNOWN_RELEASES

sys.path.insert(0, str(ROOT / "tools"))
import docs_model as support

DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]*)\)")


def _anchors(path: Path) -> set[str]:
    return {
        support.anchor(m.group(1)) for m in re.finditer(r"^#+ (.+)$", path.read_text(), flags=re.M)
    }


def test_fragment_links_resolve() -> None:
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for target in LINK.findall(page.read_text()):
            if "://" in target or "#" not in target:
                continue
            file, _, fragment = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            assert dest.is_file(), f"{page.name}: {target} (no such file)"
            assert fragment in _anchors(dest), f"{page.name}: {target} (no such heading)"


def test_upstream_references_are_links() -> None:
    """``FI#2939``, ``V#38730``, ``S#21906``, ``FI PR #4401`` in the docs a user reads
    link to the issue or pull request (in the project the prefix names)."""
    ref = re.compile(r"(?<![\w#])(?:FI|V|S)#\d+|FI PR #\d+")
    linked = re.compile(
        r"\[((?:FI|V|S)#(\d+)|FI PR #(\d+))\]\(https://github\.com/([\w-]+/[\w-]+)/"
    )
    repos = {"FI": "flashinfer-ai/flashinfer", "V": "vllm-project/vllm", "S": "sgl-project/sglang"}
    seen = 0
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        text = page.read_text()
        links = linked.findall(text)
        for text_ref, _n, _p, repo in links:
            assert repos[text_ref.split("#")[0].split()[0]] == repo, (page.name, text_ref)
        bare = ref.findall(linked.sub("", text))
        assert not bare, f"{page.name}: not links: {bare[:5]}"
        seen += len(links)
    assert seen > 50  # the known-issues rows are rendered with their references


def test_each_known_issue_is_described_once_per_page() -> None:
    for facade, entries in support.facades().items():
        text = (DOCS / support.page_name(facade)).read_text()
        issues = {i.id: i for e in entries for g in support.generations(e) for i in g.issues}
        for issue in issues.values():
            assert text.count(f"\n### {issue.id}\n") == 1, (facade, issue.id)
            assert text.count(issue.summary) == 1, (facade, issue.id)
            assert f"[`{issue.id}`](#{support.anchor(issue.id)})" in text, (facade, issue.id)


def test_every_facade_module_has_one_line_naming_its_functions() -> None:
    """docs/facades.md: one line per facade module naming every function; the README
    links each module's page (a summary that does not grow a line per module)."""
    from fi_compat._facades import FACADES, entry_points

    lines = (DOCS / "facades.md").read_text().splitlines()
    readme = " ".join((ROOT / "README.md").read_text().split())
    for module in FACADES:
        mine = [ln for ln in lines if ln.startswith(f"- `fi_compat.{module}` \u2192")]
        assert len(mine) == 1, module
        for e in entry_points(module):
            assert f"`{e.name}`" in mine[0], (module, e.name)
        assert f"[`{module}`](docs/{module}.md)" in readme, module
    assert "(docs/facades.md)" in readme


def test_coverage_covers_every_release_and_entry_point() -> None:
    svg = (DOCS / "coverage.svg").read_text()
    assert svg.count("<rect ") == len(support.entry_points()) * len(KNOWN_RELEASES) + 1 + len(
        support.CATEGORIES
    )
    for e in support.entry_points():
        cells = support.coverage(e)
        assert list(cells) == list(KNOWN_RELEASES)
        assert {c.category for c in cells.values()} <= set(support.CATEGORIES)
        first = KNOWN_RELEASES.index(e.since)
        end = len(KNOWN_RELEASES) if e.until is None else KNOWN_RELEASES.index(e.until)
        assert all(cells[r].category == "absent" for r in KNOWN_RELEASES[:first]), e.name
        assert all(cells[r].category != "absent" for r in KNOWN_RELEASES[first:end]), e.name
        assert all(cells[r].category == "absent" for r in KNOWN_RELEASES[end:]), e.name
