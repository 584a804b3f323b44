"""Device faults answered before launch: tensors off CUDA, GPUs a release has no kernel
for, TRTLLM-gen cubins that cannot be loaded (asked once per device, not per call)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import torch

from fi_compat import _device, errors
from fi_compat._adapters.fused_moe import MOE_FLOOR
from fi_compat._device import assume_capability
from fi_compat.registry import at_least, place
from support import quant_gemm_cases as quant_cases
from support.helpers import facade_for, inputs
from support.moe_helpers import args, moe_facade
from support.spy import Spy, snapshot_signature


@pytest.fixture
def cuda_only() -> Iterator[None]:
    """The product default: FlashInfer's kernels are CUDA-only."""
    saved = list(_device._cpu_ok)
    _device._cpu_ok[:] = [False]
    try:
        yield
    finally:
        _device._cpu_ok[:] = saved


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_gdn_tensors_off_cuda(cuda_only: None, device: str) -> None:
    spy = Spy(snapshot_signature("0.7.4"))
    fn, _ = facade_for("0.7.4", spy)
    kw = {k: v.to(device) for k, v in inputs().items() if k != "initial_state"}
    with pytest.raises(errors.UnsupportedDeviceError, match=f"q is on {device}.*CUDA devices only"):
        fn(**kw)
    assert spy.calls == []


@pytest.mark.parametrize("name", ["trtllm_fp4_block_scale_moe", "cutlass_fused_moe"])
def test_moe_tensors_off_cuda(cuda_only: None, name: str) -> None:
    f, spy, _ = moe_facade(name, "0.7.4")
    with pytest.raises(errors.UnsupportedDeviceError, match="CUDA devices only"):
        f(**args(name))
    assert spy.calls == []


@pytest.mark.parametrize(("q_on", "k_on"), [("cpu", "meta"), ("meta", "cpu")])
def test_cpu_and_meta_mixed_is_refused(cuda_only: None, q_on: str, k_on: str) -> None:
    spy = Spy(snapshot_signature("0.7.4"))
    fn, _ = facade_for("0.7.4", spy)
    base = inputs()
    kw = {k: v.to(q_on) for k, v in base.items() if k != "initial_state"}
    kw["k"] = base["k"].to(k_on)
    with pytest.raises(errors.UnsupportedDeviceError, match=f"q is on {q_on}"):
        fn(**kw)
    assert spy.calls == []


@pytest.mark.parametrize(
    ("name", "release", "cc", "match"),
    [
        ("trtllm_fp4_block_scale_moe", "0.7.4", (9, 0), "SM10x and SM12x only"),
        ("trtllm_fp4_block_scale_moe", "0.6.3", (12, 0), "SM10x only"),
        ("cutlass_fused_moe", "0.6.7", (10, 7), "not SM107"),
    ],
)
def test_gpus_the_release_cannot_serve(
    name: str, release: str, cc: tuple[int, int], match: str
) -> None:
    _, _, adapter = moe_facade(name, release)
    with assume_capability(cc), pytest.raises(errors.UnsupportedDeviceError, match=match):
        adapter.check_device(0)
    assert 0 not in adapter.ns["_DEV"]


def test_unloadable_cubins_are_answered_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from fi_compat import device

    asked: list[int] = []

    def unreachable(**kw: object) -> tuple[bool, str]:
        asked.append(1)
        return False, "artifact repository unreachable (URLError)"

    monkeypatch.setattr(device, "cubins_reachable", unreachable)
    monkeypatch.setenv("FLASHINFER_CUBIN_DIR", "/nonexistent/cubins")
    _, _, adapter = moe_facade("trtllm_bf16_moe", "0.7.4")
    with assume_capability((10, 0)), pytest.raises(errors.UnsupportedDeviceError, match="cubins"):
        adapter.check_device(0)
    assert asked == [1]
    _, _, ok = moe_facade("cutlass_fused_moe", "0.7.4")
    with assume_capability((10, 0)):
        ok.check_device(0)  # CUTLASS kernels are JIT-built, no cubins needed
    assert 0 in ok.ns["_DEV"] and asked == [1]
    assert torch.zeros(1).device.type == "cpu"


def _interleave_facades(release: str) -> list[tuple[str, Any, Any]]:
    """``block_scale_interleave`` through both facades that serve ``release``."""
    out = []
    if at_least(place(release), quant_cases.SPECS["block_scale_interleave"].since):
        f, spy, _ = quant_cases.facade("block_scale_interleave", release)
        out.append(("fi_compat.quantization", f, spy))
    if at_least(place(release), MOE_FLOOR):
        f, spy, _ = moe_facade("block_scale_interleave", release)
        out.append(("fi_compat.fused_moe", f, spy))
    return out


@pytest.mark.parametrize("release", quant_cases.releases("block_scale_interleave"))
def test_block_scale_interleave_host_tensors_by_release(cuda_only: None, release: str) -> None:
    """A CPU tensor reaches FlashInfer's host swizzle on 0.2.9-0.3.1.post1; from 0.4.0
    FlashInfer's function reads the device's compute capability first (bare ``ValueError:
    device must be a cuda device``), so both facades refuse it before the call."""
    sf = torch.zeros(128, 4, dtype=torch.uint8)
    for facade, f, spy in _interleave_facades(release):
        if not at_least(place(release), "0.4.0"):
            f(sf)
            assert spy.last["unswizzled_sf"] is sf, facade
            continue
        with pytest.raises(
            errors.UnsupportedDeviceError,
            match=r"unswizzled_sf is on cpu; .*CUDA devices only from flashinfer-python "
            r"0\.4\.0 on \(.*device must be a cuda device",
        ):
            f(sf)
        assert spy.calls == [], facade


def _rmsnorm(release: str) -> tuple[Any, Any, Any]:
    from fi_compat.detection import Distribution
    from support.elementwise_cases import ENTRIES, STUBS, KernelSpy

    a = ENTRIES["rmsnorm"].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(STUBS["rmsnorm"])
    spy = KernelSpy("rmsnorm", release, None)
    a._set_target(spy)
    return f, spy, a


@pytest.mark.parametrize("release", ["0.2.0.post1", "0.2.14.post1", "0.4.1", "0.6.7", "0.7.4"])
def test_argument_errors_come_before_the_device(cuda_only: None, release: str) -> None:
    """On a host without a usable GPU (CPU tensors), a misspelt keyword or a bad value is
    told as it is, by the call and by ``plan()``; the device refusal comes last."""
    f, spy, adapter = _rmsnorm(release)
    x = torch.randn(5, 16).bfloat16()
    w = torch.rand(16).bfloat16()
    for call in (f, adapter.plan):
        with pytest.raises(errors.UnknownArgumentError, match="'epps' \\(did you mean 'eps'"):
            call(x, w, epps=1e-6)
        with pytest.raises(errors.InvalidArgumentError, match="weight must have input's dtype"):
            call(x, w.float())
        with pytest.raises(errors.UnsupportedDeviceError, match="input is on cpu"):
            call(x, w)
    assert spy.calls == []
