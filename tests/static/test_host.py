"""Host facts without importing torch: ``info`` stays fast, the capability read from the
driver (NVML) only where it is what torch would report."""

from __future__ import annotations

import ctypes
import json
from typing import Any

import pytest

from conftest import run_python
from fi_compat._host import UNKNOWN, capability_without_torch, torch_build

CUDA = {"version": "2.11.0+cu130", "cuda": "13.0", "hip": None, "location": "/x"}


class FakeNVML:
    """The five NVML calls ``capability_without_torch`` makes, over a list of devices."""

    def __init__(self, caps: list[tuple[int, int]], fail: str = "") -> None:
        self.caps, self.fail, self.shutdown = caps, fail, 0

    def _rc(self, name: str) -> int:
        return 999 if self.fail == name else 0

    def nvmlInit_v2(self) -> int:
        return self._rc("init")

    def nvmlShutdown(self) -> int:
        self.shutdown += 1
        return 0

    def nvmlDeviceGetCount_v2(self, count: Any) -> int:
        count._obj.value = len(self.caps)
        return self._rc("count")

    def nvmlDeviceGetHandleByIndex_v2(self, i: int, handle: Any) -> int:
        handle._obj.value = i + 1
        return self._rc("handle")

    def nvmlDeviceGetCudaComputeCapability(self, h: Any, major: Any, minor: Any) -> int:
        major._obj.value, minor._obj.value = self.caps[h.value - 1]
        return self._rc("cc")


def test_torch_build_reads_the_installed_torch() -> None:
    import torch

    b = torch_build()
    assert b["version"] == torch.__version__ and b["cuda"] == torch.version.cuda


def test_info_imports_neither_torch_nor_flashinfer() -> None:
    r = run_python(
        "import json, sys; from fi_compat.cli.info import collect; d = collect(); "
        "print(json.dumps([d['torch']['version'], 'torch' in sys.modules, "
        "'flashinfer' in sys.modules]))"
    )
    assert r.returncode == 0, r.stderr
    version, torch_imported, fi_imported = json.loads(r.stdout.strip().splitlines()[-1])
    assert version and not torch_imported and not fi_imported


@pytest.mark.parametrize(
    ("build", "want"),
    [
        ({"version": None, "cuda": None, "hip": None, "location": None}, None),  # no torch
        ({"version": "2.13.0+cpu", "cuda": None, "hip": None, "location": "/x"}, None),
        ({"version": "2.9.0+rocm6.4", "cuda": None, "hip": "6.4", "location": "/x"}, UNKNOWN),
    ],
)
def test_builds_without_a_cuda_device(build: dict[str, Any], want: object) -> None:
    assert capability_without_torch({}, FakeNVML([(9, 0)]), build) == want


@pytest.mark.parametrize(
    ("env", "caps", "want"),
    [
        ({}, [(9, 0)], (9, 0)),
        ({}, [(10, 0), (10, 0)], (10, 0)),
        ({"CUDA_VISIBLE_DEVICES": "1"}, [(9, 0), (9, 0)], (9, 0)),
        ({"CUDA_VISIBLE_DEVICES": ""}, [(9, 0)], None),  # CUDA: no device visible
        ({"CUDA_VISIBLE_DEVICES": "-1"}, [(9, 0)], None),
        ({"CUDA_VISIBLE_DEVICES": "GPU-1b2c"}, [(9, 0)], UNKNOWN),  # UUIDs: only CUDA maps
        ({"CUDA_VISIBLE_DEVICES": "3"}, [(9, 0)], UNKNOWN),  # out of range
        # mixed GPUs: CUDA's default order (fastest first) is not NVML's (PCI bus)
        ({}, [(9, 0), (12, 0)], UNKNOWN),
        (
            {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "1"},
            [(9, 0), (12, 0)],
            (12, 0),
        ),
    ],
)
def test_capability_from_nvml(
    env: dict[str, str], caps: list[tuple[int, int]], want: object
) -> None:
    lib = FakeNVML(caps)
    assert capability_without_torch(env, lib, CUDA) == want
    assert lib.shutdown == (1 if env.get("CUDA_VISIBLE_DEVICES", "0")[:1].isdigit() else 0)


@pytest.mark.parametrize("fail", ["init", "count", "handle", "cc"])
def test_any_nvml_failure_defers_to_torch(fail: str) -> None:
    assert capability_without_torch({}, FakeNVML([(9, 0)], fail), CUDA) == UNKNOWN


def test_fake_matches_ctypes_byref() -> None:
    """The fake writes through ``ctypes.byref`` as the C library does."""
    v = ctypes.c_uint(0)
    FakeNVML([(9, 0), (9, 0)]).nvmlDeviceGetCount_v2(ctypes.byref(v))
    assert v.value == 2
