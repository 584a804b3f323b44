"""The positional rule, for every entry point, from every release's snapshot.

A stable signature's positional parameters are exactly the longest prefix of its order
whose slots mean the same in every release of the entry point's range (older spellings
count as the same parameter), no longer than the newest release's positional list; every
later parameter is keyword-only.  A positional call past it is a
``PositionalMismatchError`` naming ``fi_compat.written_for``, on every release.
"""

from __future__ import annotations

import pytest
import torch

from fi_compat import errors
from fi_compat._core import facts
from fi_compat._core._facts import POSITIONAL
from fi_compat._core.written import binder
from fi_compat._facades import entry_points
from support.quant_gemm_cases import args, facade

ENTRIES = {e.dotted: e for e in entry_points()}


@pytest.mark.parametrize("dotted", list(ENTRIES))
def test_the_stub_follows_the_rule(dotted: str) -> None:
    e = ENTRIES[dotted]
    n, why = facts.positional_rule(e)  # from the JSON snapshots of every release
    stub = [p for p in e.order if not e.params[p].keyword_only]
    assert len(stub) == n, (dotted, len(stub), n, why)
    assert POSITIONAL[dotted] == (n, why), "stale: run tools/snapshot.py --facts"


def test_every_entry_point_has_a_rule() -> None:
    assert set(POSITIONAL) == set(ENTRIES)


# (facade, stable positional parameters, the slot's meanings) where releases disagree
DRIFT = {
    "fi_compat.quantization.fp4_quantize": (6, "enable_pdl in 0.2.11.post2-0.6.10.post1"),
    "fi_compat.gdn_decode.gated_delta_rule_mtp": (12, "disable_state_update in 0.6.2-0.6.13"),
    "fi_compat.fused_moe.trtllm_fp8_block_scale_moe": (16, "tile_tokens_dim in 0.5.0-0.5.3"),
    "fi_compat.prefill.BatchPrefillWithPagedKVCacheWrapper.plan": (8, "custom_mask in"),
    "fi_compat.prefill.single_prefill_with_kv_cache": (3, "custom_mask in 0.2.0.post1-0.2.5"),
    "fi_compat.decode.BatchDecodeWithPagedKVCacheWrapper.__init__": (7, "jit_args in"),
    "fi_compat.decode.fast_decode_plan": (19, "global_override_indptr_cpu in 0.4.0"),
}


@pytest.mark.parametrize("dotted", list(DRIFT))
def test_known_drift_is_found(dotted: str) -> None:
    n, part = DRIFT[dotted]
    got_n, why = POSITIONAL[dotted]
    assert got_n == n and why is not None and part in why, (got_n, why)


@pytest.mark.parametrize("release", ["0.6.10", "0.6.11", "0.7.4"])
def test_a_positional_call_written_for_0_6_10_fails_loudly(release: str) -> None:
    """``fp4_quantize(x, g, 16, False, True, False, True)`` meant ``enable_pdl=True`` on
    0.6.10; 0.6.11 put ``is_global_scale_inversed`` in that slot.  Bound by position it
    would hand FlashInfer the reciprocal scale; it is refused before any call instead."""
    f, spy, _ = facade("fp4_quantize", release)
    a = args("fp4_quantize")
    with pytest.raises(errors.PositionalMismatchError) as info:
        f(a["input"], a["global_scale"], 16, False, True, False, True)
    msg = str(info.value)
    assert "at most 6 positional" in msg and "written_for" in msg
    assert "enable_pdl in 0.2.11.post2-0.6.10.post1" in msg
    assert "is_global_scale_inversed" in msg
    assert spy.calls == []
    # the same code, said to be written for 0.6.10 (what
    # fi_compat.written_for("0.6.10").quantization.fp4_quantize does), keeps its meaning
    binder(f, "0.6.10")(a["input"], a["global_scale"], 16, False, True, False, True)
    sent = spy.calls[-1]
    assert sent.get("is_global_scale_inversed", False) is False
    if "enable_pdl" in spy.signature.parameters:
        assert sent["enable_pdl"] is True
    assert torch.equal(sent["global_scale"], a["global_scale"])  # not its reciprocal
