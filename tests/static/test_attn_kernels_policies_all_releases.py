"""``fi_compat.decode.xqa_batch_decode_with_kv_cache`` (0.5.0-0.7.4),
``fi_compat.prefill.trtllm_fmha_v2_prefill`` (0.6.7-0.7.4) and
``fi_compat.prefill.cudnn_batch_prefill_with_kv_cache`` (0.2.7.post1-0.7.4) on every
release of each, against each release's snapshot signature (cases in
``tests/support/attn_kernels_cases.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat.registry import KNOWN_RELEASES
from support.attn_kernels_cases import CASES, SPECS, releases

CELLS = [(n, r, c) for n in SPECS for r in releases(n) for c in CASES[n]]


@pytest.mark.parametrize(
    ("name", "release", "case"),
    CELLS,
    ids=[f"{n}-{r}-{c.__name__.removeprefix('case_')}" for n, r, c in CELLS],
)
def test_policy(name: str, release: str, case: Any) -> None:
    case(name, release)


@pytest.mark.parametrize(
    ("name", "first", "positional", "last"),
    [
        ("xqa_batch_decode_with_kv_cache", "0.5.0", 18, "q_cu_seq_lens"),
        ("trtllm_fmha_v2_prefill", "0.6.7", 22, "skip_softmax_threshold_scale_factor"),
        ("cudnn_batch_prefill_with_kv_cache", "0.2.7.post1", 5, "workspace_buffer"),
    ],
)
def test_every_release_from_the_first_and_the_positional_prefix(
    name: str, first: str, positional: int, last: str
) -> None:
    e = SPECS[name]
    assert e.since == first and releases(name) == list(
        KNOWN_RELEASES[KNOWN_RELEASES.index(first) :]
    )
    n, why = e.positional
    assert n == positional and e.order[n - 1] == last and why is None
