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


# -- GEMMs of issue 24 (breadth) --------------------------------------------------------


def test_fp8_blockscale_gemm_sm90_matches_reference() -> None:
    """bf16 x bf16 (quantised inside, 1x128 blocks) and bf16 x fp8 weight with 128x128
    block scales, on SM90 (the only GPU it serves); elsewhere refused before the launch."""
    if not at_least(place(RELEASE), "0.6.0"):
        pytest.skip("fp8_blockscale_gemm_sm90 is 0.6.0+")
    g = torch.Generator(device=DEV).manual_seed(3)
    m, n, k = 16, 256, 512
    x = torch.randn(m, k, generator=g, device=DEV).to(torch.bfloat16)
    w = torch.randn(n, k, generator=g, device=DEV).to(torch.bfloat16)
    if SM != (9, 0):
        with pytest.raises(errors.UnsupportedDeviceError, match="SM90"):
            gemm.fp8_blockscale_gemm_sm90(x, w)
        _report("fp8_blockscale_gemm_sm90", refused=True, sm=list(SM))
        return
    want = x.float() @ w.float().T
    out = gemm.fp8_blockscale_gemm_sm90(x, w)
    e = _rel_err(out, want)
    # weight quantised per 128x128 block to e4m3, scales = amax / 448
    wb = w.float().view(n // 128, 128, k // 128, 128)
    sw = (wb.abs().amax(dim=(1, 3)) / 448.0).clamp(min=1e-12)
    wq = (wb / sw[:, None, :, None]).view(n, k).to(torch.float8_e4m3fn)
    out2 = gemm.fp8_blockscale_gemm_sm90(x, wq, None, sw.contiguous())
    deq = (wq.float().view(n // 128, 128, k // 128, 128) * sw[:, None, :, None]).view(n, k)
    e2 = _rel_err(out2, x.float() @ deq.T)
    with pytest.raises(errors.InvalidArgumentError, match="contiguous"):
        gemm.fp8_blockscale_gemm_sm90(x, w.T.contiguous().T)  # strided: misread by the kernel
    _report("fp8_blockscale_gemm_sm90", rel_err_bf16=e, rel_err_fp8_weight=e2)
    assert out.shape == (m, n) and out.dtype == torch.bfloat16 and e < 3e-2 and e2 < 3e-2


@pytest.mark.parametrize("bias", [False, True])
def test_tinygemm_bf16_matches_linear(bias: bool) -> None:
    if not at_least(place(RELEASE), "0.6.5"):
        pytest.skip("tinygemm_bf16 is 0.6.5+")
    g = torch.Generator(device=DEV).manual_seed(4)
    x = torch.randn(4, 256, generator=g, device=DEV).to(torch.bfloat16)
    w = torch.randn(128, 256, generator=g, device=DEV).to(torch.bfloat16)
    b = torch.randn(128, generator=g, device=DEV).to(torch.bfloat16) if bias else None
    out = torch.empty(4, 128, device=DEV, dtype=torch.bfloat16)
    assert gemm.tinygemm_bf16(x, w, out, b) is None
    want = torch.nn.functional.linear(x.float(), w.float(), None if b is None else b.float())
    e = _rel_err(out, want)
    _report("tinygemm_bf16", bias=bias, rel_err=e)
    assert e < 1e-2


def test_tinygemm_bf16_input_features_below_0_6_8() -> None:
    """k = 96 (not a multiple of 64): 0.6.8+ compute it, older releases are refused before
    the launch (their own check raises ValueError too)."""
    if not at_least(place(RELEASE), "0.6.5"):
        pytest.skip("tinygemm_bf16 is 0.6.5+")
    x = torch.randn(2, 96, device=DEV).to(torch.bfloat16)
    w = torch.randn(64, 96, device=DEV).to(torch.bfloat16)
    out = torch.empty(2, 64, device=DEV, dtype=torch.bfloat16)
    if not at_least(place(RELEASE), "0.6.8"):
        with pytest.raises(errors.InvalidArgumentError, match=r"0\.6\.8"):
            gemm.tinygemm_bf16(x, w, out)
        _report("tinygemm_bf16-k96", refused=True)
        return
    gemm.tinygemm_bf16(x, w, out)
    e = _rel_err(out, x.float() @ w.float().T)
    _report("tinygemm_bf16-k96", rel_err=e)
    assert e < 1e-2


@pytest.mark.parametrize(
    "name", ["mm_mxfp8", "gemm_fp8_nt_groupwise", "mm_bf16_fp4", "mm_fp4", "mm_bf16"]
)
def test_backend_queries_agree_with_the_device_policy(name: str) -> None:
    """``is_backend_supported`` on the GPU at hand: False where the facade refuses the
    GPU, FlashInfer's own answer (or True) otherwise; the facade agrees with itself."""
    e = gemm.SPECS[name]
    if not at_least(place(RELEASE), e.since):
        pytest.skip(f"{name} is {e.since}+")
    f = getattr(gemm, name)
    cc = SM[0] * 10 + SM[1]
    p = e.params["backend"]
    answers = {b: f.is_backend_supported(b, cc) for b in p.kind.literals if b != "auto"}
    refused = e.devices is not None and e.devices(place(RELEASE), SM) is not None
    if refused:
        assert not any(answers.values()) and not f.is_compute_capability_supported(cc)
    own = getattr(f.raw(), "is_backend_supported", None)
    _report(f"{name}-backend-query", cc=cc, answers=answers, flashinfer_has_query=own is not None)


def test_autotune_around_a_tuned_gemm() -> None:
    """``with autotune():`` around a GEMM FlashInfer tunes (bmm_fp8 through cuBLAS on
    SM90): the same result as outside it, on every release (a no-op before 0.2.6)."""
    from fi_compat import autotuner

    a, _, b = _fp8_operands(5)
    s = torch.tensor([1.0], device=DEV)
    plain = gemm.bmm_fp8(a, b, s, s, torch.bfloat16)
    with autotuner.autotune(True):
        tuned = gemm.bmm_fp8(a, b, s, s, torch.bfloat16)
    with autotuner.autotune(False):
        cached = gemm.bmm_fp8(a, b, s, s, torch.bfloat16)
    e = _rel_err(tuned, plain)
    _report("autotune-bmm_fp8", rel_diff_tuned=e, equal_cached=bool(torch.equal(cached, plain)))
    assert e < 1e-2
