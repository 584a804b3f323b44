"""Arguments a wrapper's backend would drop without an error (``sinks`` on fa2 / fa3,
q / k / v scales where the kernels never apply them) are refused before the call, on
every release that has the parameter, reading the wrapper's planned backend; the
removed 0.2.x-0.6.x MLA decode wrapper raises the typed error from 0.7.0."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import errors
from fi_compat._adapters import decode as dec_tables
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES, at_least, place
from support.attention_cases import DEC, OLD_MLA, PAGED, RAGGED, Receiver, args, facade, releases


def wrapper(**attrs: Any) -> Receiver:
    r = Receiver()
    for k, v in attrs.items():
        setattr(r, k, v)
    return r


def _with(key: str, release: str, param: str) -> bool:
    return (
        release in releases(key)
        and at_least(place(release), "0.2.10")
        and param in (facade(key, release)[0].adapter.present)
    )


@pytest.mark.parametrize(
    "release", [r for r in releases(f"{DEC}.run") if _with(f"{DEC}.run", r, "sinks")]
)
def test_decode_sinks_need_a_backend_that_applies_them(release: str) -> None:
    f, spy = facade(f"{DEC}.run", release)
    sinks = torch.zeros(8)
    for w in (
        wrapper(_backend="fa2", _use_tensor_cores=True),
        wrapper(_backend="fa3", _use_tensor_cores=True),
        wrapper(_backend="auto", _use_tensor_cores=False),  # the CUDA-core decode kernels
    ):
        with pytest.raises(errors.InvalidArgumentError, match="ignore it without an error"):
            f(w, **args(f"{DEC}.run"), sinks=sinks)
    assert spy.calls == []
    for w in (
        wrapper(_backend="trtllm-gen", _use_tensor_cores=True),
        wrapper(_backend="fa2", _use_tensor_cores=True, _use_xqa_mtp_decode=True),
    ):
        f(w, **args(f"{DEC}.run"), sinks=sinks)
        assert spy.last["sinks"] is sinks
    f(wrapper(_backend="fa2"), **args(f"{DEC}.run"))  # no sinks: nothing to refuse


@pytest.mark.parametrize(
    "release", [r for r in releases(f"{PAGED}.run") if _with(f"{PAGED}.run", r, "sinks")]
)
def test_paged_prefill_sinks_and_scales(release: str) -> None:
    f, spy = facade(f"{PAGED}.run", release)
    a = args(f"{PAGED}.run")
    with pytest.raises(errors.InvalidArgumentError, match="'fa3' backend"):
        f(wrapper(_backend="fa3"), **a, sinks=torch.zeros(8))
    f(wrapper(_backend="trtllm-gen"), **a, sinks=torch.zeros(8))
    v_dropped = not at_least(place(release), "0.2.11")  # 0.2.10 never applies v_scale
    if v_dropped:
        with pytest.raises(errors.InvalidArgumentError, match="v_scale"):
            f(wrapper(_backend="fa2"), **a, v_scale=0.5)
    else:
        f(wrapper(_backend="fa2"), **a, v_scale=0.5)
        assert spy.last["v_scale"] == 0.5
    f(wrapper(_backend="fa2"), **a, k_scale=0.5)
    assert spy.last["k_scale"] == 0.5


@pytest.mark.parametrize(
    "release", [r for r in releases(f"{RAGGED}.run") if at_least(place(r), "0.6.0")]
)
def test_ragged_scales_on_fa2_need_what_the_release_applies_them_to(release: str) -> None:
    f, spy = facade(f"{RAGGED}.run", release)
    a = args(f"{RAGGED}.run")
    pl = place(release)
    fa2 = wrapper(_backend="fa2")
    with pytest.raises(errors.InvalidArgumentError, match="k_scale"):
        f(fa2, **a, k_scale=0.5)  # bf16 q / k / v: dropped on every release
    f(wrapper(_backend="cutlass"), **a, k_scale=0.5)  # applied there
    assert spy.last["k_scale"] == 0.5
    fp8 = {**a, "k": a["k"].to(torch.float8_e4m3fn), "v": a["v"].to(torch.float8_e4m3fn)}
    if at_least(pl, "0.7.0"):  # FP8 K / V with a 16-bit q: k / v scales applied
        f(fa2, **fp8, k_scale=0.5, v_scale=2.0)
        with pytest.raises(errors.InvalidArgumentError, match="q_scale"):
            f(fa2, **fp8, q_scale=0.5)
    else:
        with pytest.raises(errors.InvalidArgumentError):
            f(fa2, **fp8, k_scale=0.5)
    if at_least(pl, "0.6.10"):  # an NVFP4 cache: applied
        f(fa2, **a, k_scale=0.5, kv_cache_sf=torch.zeros(2))
        assert spy.last["k_scale"] == 0.5


def test_the_old_mla_decode_wrapper_is_refused_from_0_7_0() -> None:
    """FlashInfer 0.7.0 removed ``BatchDecodeMlaWithPagedKVCacheWrapper``."""
    e = dec_tables.MLA_METHODS["run"]
    assert e.since == "0.2.0.post1" and e.until == "0.7.0"
    for release in KNOWN_RELEASES:
        a = e.select(Distribution("flashinfer-python", release, "<t>", ""))
        removed = at_least(place(release), "0.7.0")
        assert (a.problem == "removed") == removed, release
        if removed:
            with pytest.raises(errors.UnsupportedFlashInferVersionError) as exc:
                a.resolve()
            msg = str(exc.value)
            assert "removed in flashinfer-python 0.7.0" in msg and "0.6.18.post1" in msg
            assert "fi_compat.mla.BatchMLAPagedAttentionWrapper" in msg


@pytest.mark.parametrize("release", releases(f"{OLD_MLA}.__init__"))
def test_old_mla_init_positional_buffer_in_0_2_0_order_is_refused(release: str) -> None:
    """0.2.1.post2 inserted ``use_tensor_cores`` at slot 2: a 0.2.0.post1 positional
    ``paged_kv_indptr_buffer`` would land in it."""
    f, spy = facade(f"{OLD_MLA}.__init__", release)
    buf = torch.zeros(3, dtype=torch.int32)
    with pytest.raises(errors.PositionalMismatchError):
        f(Receiver(), torch.empty(64, dtype=torch.uint8), True, buf)
    f(Receiver(), torch.empty(64, dtype=torch.uint8), True, paged_kv_indptr_buffer=buf)
    assert spy.last["paged_kv_indptr_buffer"] is buf
