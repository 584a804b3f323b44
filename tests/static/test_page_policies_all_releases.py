"""``fi_compat.page`` on every release 0.2.0.post1-0.7.4, against each release's snapshot
signature (cases in ``tests/support/page_cases.py``), and
``CUDAGraphBatchDecodeWithPagedKVCacheWrapper``
sharing the stable decode wrapper's ``plan`` / ``run``, which FlashInfer's class inherits
on every release."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat import _snapshot_io as snapshots
from fi_compat import decode
from fi_compat._adapters import decode as dec_tables
from fi_compat._adapters.page import SPECS
from fi_compat.registry import KNOWN_RELEASES
from support.page_cases import CASES, releases

CELLS = [(n, r) for n in SPECS for r in releases(n)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize(("name", "release"), CELLS)
def test_policy(name: str, release: str, case: Any) -> None:
    case(name, release)


def test_every_function_covers_every_release() -> None:
    for name, e in SPECS.items():
        assert e.since == KNOWN_RELEASES[0] and releases(name) == list(KNOWN_RELEASES), name
    buffers = SPECS["get_batch_indices_positions"].params
    assert buffers["batch_indices"].since == buffers["positions"].since == "0.6.0"


@pytest.mark.parametrize("method", ["plan", "run"])
def test_cuda_graph_wrapper_inherits_plan_and_run_on_every_release(method: str) -> None:
    """The snapshots of FlashInfer's subclass record the base's methods on every release
    (``inherited_from``), signature for signature: the stable class shares the stable
    decode wrapper's generated functions (one adapter each), and its aliases."""
    graph = f"decode.{dec_tables.GRAPH_CLASS}.{method}"
    base = dec_tables.METHODS[method]
    data = snapshots.DIR.joinpath(f"{graph}.json").read_text()
    import json

    snap = json.loads(data)
    for release in KNOWN_RELEASES:
        rec = snap["releases"][release]
        assert rec["inherited_from"] == dec_tables.CLASS, release
        assert snap["signatures"][rec["signature"]] == snapshots.params(base, release), release
    row = decode.CLASSES[dec_tables.GRAPH_CLASS]
    fns = row.functions()
    assert fns[method] is decode.CLASSES[dec_tables.CLASS].functions()[method]
    assert fns["__init__"].adapter.entry is dec_tables.GRAPH_INIT
    assert row.aliases == {"begin_forward": "plan"} and "end_forward" in row.extra
