"""``docs/cli-json.md`` documents exactly the keys ``info --json`` and ``doctor --json``
print (with ``--probe`` too) and the fixed ``status`` values of an entry point."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_cli_truth import cli, installed

from conftest import ROOT

DOC = ROOT / "docs" / "cli-json.md"
ROW = re.compile(r"^\| `([^`]+)` \| [^|]* \| (.*) \|$")


def documented() -> dict[str, dict[str, dict[str, bool]]]:
    """{"info" | "doctor": {path: {key: optional}}} from the doc's tables; a key whose
    meaning starts with "only" is optional."""
    out: dict[str, dict[str, dict[str, bool]]] = {}
    cmd = path = ""
    for line in DOC.read_text().splitlines():
        if m := re.match(r"^## `(\w+) --json`$", line):
            cmd = m.group(1)
            out[cmd] = {}
        elif line.startswith("## "):
            cmd = ""
        elif cmd and line.startswith("### "):
            path = line[4:].strip()
            out[cmd][path] = {}
        elif cmd and path and (m := ROW.match(line)):
            out[cmd][path][m.group(1)] = m.group(2).startswith("only")
    return out


def objects(data: Any, path: str) -> Iterator[dict[str, Any]]:
    """Every object at ``path`` (``<name>``: each value of a mapping, ``x[]``: each
    element of list ``x``)."""
    nodes = [data]
    for seg in [] if path == "top level" else path.split("."):
        nxt: list[Any] = []
        for n in nodes:
            if seg == "<name>":
                nxt += list(n.values())
            elif seg.endswith("[]"):
                nxt += n.get(seg[:-2], [])
            elif seg in n:
                nxt.append(n[seg])
        nodes = nxt
    yield from nodes


def check(cmd: str, data: dict[str, Any], seen: set[str], only: str | None = None) -> None:
    for path, keys in documented()[cmd].items():
        if only is not None and path != only:
            continue
        for obj in objects(data, path):
            got = set(obj)
            assert got <= set(keys), f"{cmd} {path}: undocumented {sorted(got - set(keys))}"
            required = {k for k, opt in keys.items() if not opt}
            assert required <= got, f"{cmd} {path}: documented, absent {sorted(required - got)}"
            seen.add(path)


def test_the_doc_has_every_section() -> None:
    doc = documented()
    assert len(doc["info"]) >= 13 and set(doc["doctor"]) == {"top level", "findings[]"}


@pytest.mark.parametrize("probe", [False, True])
def test_info_and_doctor_json_match_the_doc(tmp_path: Path, probe: bool) -> None:
    root = installed(tmp_path, "0.6.7", "0.6.7")
    extra = ["--probe"] if probe else []
    seen: set[str] = set()
    _, out, _ = cli("info", "--json", *extra, env={}, path=[str(root)])
    data = json.loads(out)
    check("info", data, seen)
    for f in data.get("probe_findings", []):  # the same finding objects as doctor's
        check("doctor", {"findings": [f]}, seen, only="findings[]")
    _, out, _ = cli("doctor", "--json", *extra, env={}, path=[str(root)])
    check("doctor", json.loads(out), seen)
    want = set(documented()["info"]) | set(documented()["doctor"])
    if not probe:
        want.discard("entry_points.<name>.probe")
    assert seen == want


def test_statuses_are_the_documented_fixed_values() -> None:
    import fi_compat
    from fi_compat.cli.info import STATUSES

    text = DOC.read_text().split("## Statuses", 1)[1]
    assert tuple(re.findall(r"^\| `([^`]+)` \|", text, re.M)) == STATUSES
    packages = {d.package for a in fi_compat.adapters().values() for d in a.entry.optional_deps}
    assert {s for s in STATUSES if s.startswith("needs ")} == {f"needs {p}" for p in packages}


@pytest.mark.parametrize("release", ["0.4.1", "0.6.7", "0.7.4", "0.9.0", None])
def test_every_status_printed_is_a_documented_value(release: str | None) -> None:
    from fi_compat.cli.info import STATUSES

    env = {"FI_COMPAT_FLASHINFER_VERSION": release} if release else {}
    _, out, _ = cli("info", "--json", env=env)
    got = {st["status"] for st in json.loads(out)["entry_points"].values()}
    assert got and got <= set(STATUSES)
