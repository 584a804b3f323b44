"""``fi_compat.decode.trtllm_batch_decode_with_kv_cache``,
``trtllm_batch_decode_with_kv_cache_mla`` and
``fi_compat.prefill.trtllm_batch_context_with_kv_cache`` on every release 0.2.9-0.7.4,
against each release's real signature (snapshots), with the policies their table names."""

from __future__ import annotations

import pytest
import torch

from fi_compat import errors
from fi_compat._core.written import binder
from fi_compat._device import assume_capability
from fi_compat.registry import at_least, place
from support.attention_cases import ENTRIES, TRTLLM, args, facade, releases

DEC, MLA, CTX = TRTLLM


@pytest.mark.parametrize("release", releases(DEC))
def test_decode_positional_call_in_0_2_11_order_fails_or_binds_as_written(release: str) -> None:
    """0.5.0 inserted ``kv_layout`` before ``enable_pdl``: a positional call written for
    0.2.11.post3 would put ``enable_pdl`` into ``kv_layout``.  The stable function is
    keyword-only after ``sinks`` (refused); written for 0.2.11.post3 it binds as there."""
    f, spy = facade(DEC, release)
    a = args(DEC)
    pos = [*a.values(), -1, None, None, None, None, None, True]  # ..., sinks, enable_pdl
    with pytest.raises(errors.PositionalMismatchError):
        f(*pos)
    assert spy.calls == []
    if not at_least(place(release), "0.2.11.post3"):
        return
    binder(f, "0.2.11.post3")(*pos)
    assert spy.last.get("kv_layout", "HND") == "HND"
    assert spy.last["enable_pdl"] is True


@pytest.mark.parametrize("release", releases(MLA))
def test_mla_positional_out_in_0_5_3_order_is_refused(release: str) -> None:
    """0.6.0 inserted ``sparse_mla_top_k`` before ``out``."""
    f, spy = facade(MLA, release)
    out = torch.empty(2, 1, 16, 512, dtype=torch.bfloat16)
    with pytest.raises(errors.PositionalMismatchError):
        f(*args(MLA).values(), out)
    f(**args(MLA), out=out)
    assert spy.last["out"] is out


@pytest.mark.parametrize("key", TRTLLM)
def test_device_scales_need_0_5_3_and_float_scales_are_always_forwarded(key: str) -> None:
    for release in releases(key):
        f, spy = facade(key, release)
        f(**{**args(key), "bmm1_scale": 1.0})
        assert spy.raw_kwargs[-1]["bmm1_scale"] == 1.0  # explicit: required before 0.5.3
        scale = torch.tensor([0.125])
        if at_least(place(release), "0.5.3"):
            f(**{**args(key), "bmm1_scale": scale})
            assert spy.last["bmm1_scale"] is scale
            continue
        n = len(spy.calls)
        with pytest.raises(errors.UnsupportedParameterError, match=r"bmm1_scale.*0\.5\.3"):
            f(**{**args(key), "bmm1_scale": scale})
        assert len(spy.calls) == n


@pytest.mark.parametrize("key", [DEC, CTX])
def test_a_kv_cache_pair_needs_0_2_10(key: str) -> None:
    kv = args(key)["kv_cache"]
    pair = (kv[:, 0], kv[:, 1])
    for release in releases(key):
        f, spy = facade(key, release)
        if at_least(place(release), "0.2.10"):
            f(**{**args(key), "kv_cache": pair})
            assert spy.last["kv_cache"] is pair
            continue
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.2\.10"):
            f(**{**args(key), "kv_cache": pair})
        assert spy.calls == []


@pytest.mark.parametrize("release", releases(MLA))
def test_mla_3d_kv_cache_reaches_every_release_in_a_form_it_reads(release: str) -> None:
    f, spy = facade(MLA, release)
    kv3 = args(MLA)["kv_cache"][:, 0]
    f(**{**args(MLA), "kv_cache": kv3})
    sent = spy.last["kv_cache"]
    if at_least(place(release), "0.6.1"):
        assert sent is kv3  # the release unsqueezes it itself
    else:
        assert sent.shape == (3, 1, 32, 576) and sent.data_ptr() == kv3.data_ptr()


@pytest.mark.parametrize("key", TRTLLM)
def test_return_lse_needs_0_6_12(key: str) -> None:
    for release in releases(key):
        f, spy = facade(key, release)
        if at_least(place(release), "0.6.12"):
            _out, lse = f(**args(key), return_lse=True)
            assert lse.dtype == torch.float32
            continue
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.12"):
            f(**args(key), return_lse=True)
        assert spy.calls == []


@pytest.mark.parametrize(
    ("key", "backend", "first"),
    [
        (DEC, "xqa", "0.5.0"),
        (DEC, "cake", "0.7.1"),
        (MLA, "cute-dsl", "0.6.12"),
        (CTX, "cake", "0.7.1"),
    ],
)
def test_backends_by_release(key: str, backend: str, first: str) -> None:
    for release in releases(key):
        f, spy = facade(key, release)
        if at_least(place(release), first):
            f(**args(key), backend=backend)
            assert spy.last["backend"] == backend
            continue
        with pytest.raises(errors.UnsupportedParameterError, match=first.replace(".", r"\.")):
            f(**args(key), backend=backend)
        f(**args(key), backend="trtllm-gen")  # the only kernel there: dropped
        assert "backend" not in spy.raw_kwargs[-1] or at_least(place(release), "0.5.0")


@pytest.mark.parametrize(
    ("key", "cc", "served_from"),
    [
        (DEC, (9, 0), "0.5.0"),  # xqa
        (DEC, (10, 0), "0.2.9"),
        (CTX, (9, 0), None),
        (CTX, (10, 0), "0.2.9"),
        (MLA, (12, 0), "0.5.3"),  # xqa MLA
        (MLA, (9, 0), None),
    ],
)
def test_gpus_by_release(key: str, cc: tuple[int, int], served_from: str | None) -> None:
    entry = ENTRIES[key][0]
    for release in releases(key):
        f, _ = facade(key, release)
        a = f.adapter
        with assume_capability(cc):
            if served_from is not None and at_least(place(release), served_from):
                a.check_device(0)
            else:
                with pytest.raises(errors.UnsupportedDeviceError, match=f"SM{cc[0]}{cc[1]}"):
                    a.check_device(0)
        a.ns["_DEV"] = frozenset()
    assert entry.devices is not None


def test_bad_input_is_refused_before_the_call() -> None:
    f, spy = facade(DEC, "0.7.4")
    with pytest.raises(errors.InvalidArgumentError, match="query must be 3-D or 4-D"):
        f(**{**args(DEC), "query": torch.zeros(8)})
    with pytest.raises(errors.InvalidArgumentError, match="kv_cache must be a tensor or"):
        f(**{**args(DEC), "kv_cache": (torch.zeros(2),)})
    assert spy.calls == []


@pytest.mark.parametrize("key", TRTLLM)
def test_the_known_sm103_hang_is_refused_before_the_launch(
    key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Known issue sm103-trtllm-attention-hang (FI#2939): 0.6.7-0.6.7.post1's TRTLLM-gen
    attention kernels hang on SM103; SM100 and 0.6.7.post2 are served."""
    for release, cc, refused in (
        ("0.6.7", (10, 3), True),
        ("0.6.7.post1", (10, 3), True),
        ("0.6.7", (10, 0), False),
        ("0.6.7.post2", (10, 3), False),
    ):
        f, _ = facade(key, release)
        a = f.adapter
        with assume_capability(cc):
            if refused:
                with pytest.raises(errors.UnsupportedDeviceError, match="sm103-trtllm-attention"):
                    a.check_device(0)
                monkeypatch.setenv("FI_COMPAT_IGNORE_ISSUES", "other, sm103-trtllm-attention-hang")
                a.check_device(0)  # the user's call
                monkeypatch.delenv("FI_COMPAT_IGNORE_ISSUES")
            else:
                a.check_device(0)
