"""``fi_compat.decode.trtllm_batch_decode_sparse_mla_dsv4`` (0.6.12-0.7.4) on every release,
against each release's snapshot signature (cases in ``tests/support/dsv4_cases.py``), and
its FlashInfer locations (``flashinfer.decode``, ``flashinfer.mla``, 0.6.18's alias
``batch_decode_sparse_mla_dsv4``)."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat.registry import KNOWN_RELEASES, place
from support.dsv4_cases import CASES, SPECS, releases

CELLS = [(n, r, c) for n in SPECS for r in releases(n) for c in CASES[n]]


@pytest.mark.parametrize(
    ("name", "release", "case"),
    CELLS,
    ids=[f"{n}-{r}-{c.__name__.removeprefix('case_')}" for n, r, c in CELLS],
)
def test_policy(name: str, release: str, case: Any) -> None:
    case(name, release)


def test_every_release_from_0_6_12_and_the_whole_list_positional() -> None:
    (e,) = SPECS.values()
    assert e.since == "0.6.12"
    assert releases() == list(KNOWN_RELEASES[KNOWN_RELEASES.index("0.6.12") :])
    n, why = e.positional
    assert n == 31 and e.order[n - 1] == "multi_ctas_kv_counter_buffer" and why is None
    assert e.params["kv_cache_format"].keyword_only


def test_served_where_flashinfer_exports_it() -> None:
    from fi_compat import decode, mla
    from fi_compat._locations import ALIASES, LOCATIONS

    where = LOCATIONS["trtllm_batch_decode_sparse_mla_dsv4"]
    assert where["flashinfer.decode"] == ("0.6.12", None)
    assert where["flashinfer.mla"] == ("0.6.12", None)
    assert ALIASES["batch_decode_sparse_mla_dsv4"] == "trtllm_batch_decode_sparse_mla_dsv4"
    f = decode.trtllm_batch_decode_sparse_mla_dsv4
    assert mla.trtllm_batch_decode_sparse_mla_dsv4 is f
    assert mla.batch_decode_sparse_mla_dsv4 is f


@pytest.mark.parametrize(
    ("release", "cc", "ok"),
    [
        ("0.6.13", (10, 0), True),
        ("0.6.13", (12, 0), False),
        ("0.6.14", (12, 0), True),
        ("0.6.17", (10, 1), True),
        ("0.6.18", (10, 1), False),
        ("0.7.1", (10, 7), False),
        ("0.7.2", (10, 7), True),
        ("0.7.4", (9, 0), False),
    ],
)
def test_gpus_served(release: str, cc: tuple[int, int], ok: bool) -> None:
    (e,) = SPECS.values()
    assert e.devices is not None
    assert (e.devices(place(release), cc) is None) is ok
