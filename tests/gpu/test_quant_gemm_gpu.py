"""Real FlashInfer GEMMs through fi_compat on the H200 (SM90) vs float32 torch references,
and the SM90 refusals of the kernels that have no SM90 code, on one release per
interpreter (tests/gpu/README.md has the table).

Marked ``gpu``: skipped without CUDA.  ``FI_COMPAT_GPU_REPORT=path`` appends one JSON line
per check.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest
import torch

pytestmark = pytest.mark.gpu

if not torch.cuda.is_available():  # pragma: no cover - CPU hosts
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

import fi_compat  # noqa: E402
from fi_compat import errors, gemm, quantization  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
DEV = "cuda"
SM = torch.cuda.get_device_capability()


def _report(name: str, **fields: Any) -> None:
    path = os.environ.get("FI_COMPAT_GPU_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"release": RELEASE, "test": name, **fields}) + "\n")


def _rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.float() - b.float()).abs().max() / b.float().abs().max())


def _fp8_operands(seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator(device=DEV).manual_seed(seed)
    a = torch.randn(2, 48, 128, generator=g, device=DEV).to(torch.float8_e4m3fn)
    bt = torch.randn(2, 64, 128, generator=g, device=DEV).to(torch.float8_e4m3fn)
    return a, bt, bt.transpose(-2, -1)  # B [b, k, n] column-major


def test_bmm_fp8_matches_reference() -> None:
    a, _, b = _fp8_operands(0)
    sa = torch.tensor([0.5], device=DEV)
    sb = torch.tensor([2.0], device=DEV)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = gemm.bmm_fp8(a, b, sa, sb, torch.bfloat16)
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    want = (a.float() * 0.5) @ (b.float() * 2.0)
    e = _rel_err(out, want)
    _report("bmm_fp8-cublas", rel_err=e, dtype=str(out.dtype), seconds=round(dt, 2))
    assert out.dtype == torch.bfloat16 and out.shape == (2, 48, 64) and e < 1e-2


def test_bmm_fp8_row_major_b_is_refused_where_the_kernel_would_misread_it() -> None:
    a, _, b = _fp8_operands(1)
    row_major = b.contiguous()  # same values, k-major strides broken
    sa = torch.tensor([1.0], device=DEV)
    with pytest.raises(errors.InvalidArgumentError, match="column-major"):
        gemm.bmm_fp8(a, row_major, sa, sa, torch.bfloat16)
    raw = gemm.bmm_fp8.raw()(A=a, B=row_major, A_scale=sa, B_scale=sa, dtype=torch.bfloat16)
    want = a.float() @ b.float()
    e = _rel_err(raw, want)
    _report("bmm_fp8-row-major-direct", direct_call_rel_err=e)


def test_mm_fp8_on_sm90() -> None:
    if not at_least(place(RELEASE), "0.4.1"):
        pytest.skip("mm_fp8 is 0.4.1+")
    g = torch.Generator(device=DEV).manual_seed(2)
    a = torch.randn(16, 128, generator=g, device=DEV).to(torch.float8_e4m3fn)
    b = torch.randn(64, 128, generator=g, device=DEV).to(torch.float8_e4m3fn)
    if not at_least(place(RELEASE), "0.7.2.post1"):
        with pytest.raises(errors.UnsupportedDeviceError, match=r"0\.7\.2\.post1"):
            gemm.mm_fp8(a, b, backend="trtllm_low_latency")
        _report("mm_fp8-sm90", refused=True)
        return
    out = gemm.mm_fp8(a, b, backend="cublas")
    e = _rel_err(out, a.float() @ b.float().T)
    _report("mm_fp8-cublas", rel_err=e, dtype=str(out.dtype))
    assert out.dtype == torch.bfloat16 and e < 1e-2


@pytest.mark.parametrize("name", ["fp4_quantize", "mxfp8_quantize", "mxfp4_quantize"])
def test_quantisers_are_refused_on_sm90_before_any_launch(name: str) -> None:
    if SM[0] >= 10:
        pytest.skip("an SM100+ GPU runs them")
    e = quantization.SPECS[name]
    if not at_least(place(RELEASE), e.since):
        pytest.skip(f"{name} is {e.since}+")
    x = torch.randn(128, 256, device=DEV).to(torch.bfloat16)
    kw = {"global_scale": torch.tensor([448.0 * 6], device=DEV)} if name == "fp4_quantize" else {}
    with pytest.raises(errors.UnsupportedDeviceError, match="SM100"):
        getattr(quantization, name)(x, **kw)
    _report(f"{name}-sm90", refused=True)
