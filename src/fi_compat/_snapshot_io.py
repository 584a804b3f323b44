"""Read the committed signature snapshots (``_snapshots/*.json``, made by tools/snapshot.py).

Used by tests (every adapter against every release of its range) and by ``info``.
"""

from __future__ import annotations

import json
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._core import EntryPoint

DIR = Path(__file__).with_name("_snapshots")


def path_for(entry: EntryPoint) -> Path:
    return DIR / f"{entry.module.removeprefix('flashinfer.')}.{entry.attr}.json"


def load(entry: EntryPoint) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path_for(entry).read_text())
    return data


def params(entry: EntryPoint, release: str) -> list[list[Any]] | None:
    """``[[name, kind, default_src, annotation], ...]`` of ``release``, None if absent."""
    data = load(entry)
    rel = data["releases"].get(release)
    if rel is None:
        return None
    out: list[list[Any]] = data["signatures"][rel["signature"]]
    return out
