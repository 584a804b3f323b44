"""Debug mode (``fi_compat.set_debug(True)`` / ``FI_COMPAT_DEBUG=1``): the value checks
metadata cannot make, before FlashInfer is reached; off by default (no host syncs)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

import fi_compat
from fi_compat import errors
from support.helpers import facade_for, inputs
from support.moe_helpers import E, args, moe_facade
from support.spy import Spy, snapshot_signature


@pytest.fixture
def debug() -> Iterator[None]:
    fi_compat.set_debug(True)
    try:
        yield
    finally:
        fi_compat.set_debug(False)


def _gdn(release: str) -> tuple[object, Spy]:
    spy = Spy(snapshot_signature(release))
    fn, adapter = facade_for(release, spy)
    adapter.set_mode(validation=True, debug=True)
    return fn, spy


@pytest.mark.parametrize(
    ("cu", "match"),
    [
        ([1, 5, 12], "start at 0"),
        ([0, 7, 5, 12], "non-decreasing"),
        ([0, 5, 11], "end at total_seq_len"),
    ],
)
@pytest.mark.parametrize("release", ["0.6.7", "0.7.4"])
def test_bad_cu_seqlens_values(debug: None, release: str, cu: list[int], match: str) -> None:
    fn, spy = _gdn(release)
    kw = inputs()
    kw.pop("initial_state")
    kw["cu_seqlens"] = torch.tensor(cu, dtype=torch.int32)
    with pytest.raises(errors.InvalidArgumentError, match=match):
        fn(**kw)  # type: ignore[operator]
    assert spy.calls == []


def test_int64_offsets_beyond_int32_on_releases_reading_int32(debug: None) -> None:
    kw = inputs(cu_dtype=torch.int64)
    kw.pop("initial_state")
    kw["cu_seqlens"] = torch.tensor([0, 5, 2**32 + 12], dtype=torch.int64)
    fn, spy = _gdn("0.7.4")
    with pytest.raises(errors.InvalidArgumentError, match="end at total_seq_len"):
        fn(**kw)  # type: ignore[operator]
    # the same offsets within the token count but not int32: only 0.7.x reads int32
    kw["cu_seqlens"] = torch.tensor([0, 5, 12], dtype=torch.int64)
    kw["checkpoint_cu_starts"] = torch.tensor([0, 2**31], dtype=torch.int64)
    kw["checkpoint_every_n_tokens"] = 4
    kw["state_checkpoints"] = torch.zeros(3, 4, 16, 16)
    with pytest.raises(errors.InvalidArgumentError, match="beyond int32"):
        fn(**kw)  # type: ignore[operator]
    assert spy.calls == []


def test_state_indices_out_of_the_pool(debug: None) -> None:
    fn, spy = _gdn("0.7.4")
    kw = inputs()
    kw["initial_state"] = torch.zeros(3, 4, 16, 16)
    kw["state_indices"] = torch.tensor([0, 3], dtype=torch.int32)
    with pytest.raises(errors.InvalidArgumentError, match=r"rows of the state pool \[0, 3\)"):
        fn(**kw)  # type: ignore[operator]
    assert spy.calls == []


def test_valid_values_pass_and_debug_is_off_by_default() -> None:
    fn, spy = _gdn("0.7.4")
    kw = inputs()
    kw.pop("initial_state")
    fn(**kw)  # type: ignore[operator]
    assert len(spy.calls) == 1
    # off: the same bad offsets reach the (stand-in) kernel unchecked, as documented
    spy2 = Spy(snapshot_signature("0.7.4"))
    fn2, _ = facade_for("0.7.4", spy2)
    kw["cu_seqlens"] = torch.tensor([0, 7, 5], dtype=torch.int32)
    fn2(**kw)
    assert len(spy2.calls) == 1


@pytest.mark.parametrize("release", ["0.6.11", "0.7.4"])
def test_routed_expert_ids_out_of_range(debug: None, release: str) -> None:
    name = "trtllm_fp4_block_scale_routed_moe"
    f, spy, adapter = moe_facade(name, release)
    adapter.set_mode(validation=True, debug=True)
    ids = torch.full((4, 2), E, dtype=torch.int32)
    with pytest.raises(errors.InvalidArgumentError, match=rf"\[0, {E}\)"):
        f(**{**args(name), "topk_ids": (ids, torch.rand(4, 2))})
    packed = (ids << 16) | 0x3F80  # bf16(1.0) in the low half
    with pytest.raises(errors.InvalidArgumentError, match="topk_ids"):
        f(**{**args(name), "topk_ids": packed})
    assert spy.calls == []


def test_cutlass_expert_ids_out_of_range(debug: None) -> None:
    f, spy, adapter = moe_facade("cutlass_fused_moe", "0.7.4")
    adapter.set_mode(validation=True, debug=True)
    kw = args("cutlass_fused_moe")
    kw["token_selected_experts"] = kw["token_selected_experts"] + E
    with pytest.raises(errors.InvalidArgumentError, match="token_selected_experts"):
        f(**kw)
    assert spy.calls == []
