"""Real ``flashinfer.norm`` / ``flashinfer.activation`` kernels through fi_compat vs float32
torch references, on one release per interpreter (tests/gpu/README.md has the table).

Marked ``gpu``: skipped without CUDA.  ``FI_COMPAT_GPU_REPORT=path`` appends one JSON line
per check (release, max abs error, first-call seconds).
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
from fi_compat import activation, norm  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
DEV = "cuda"


def _report(name: str, **fields: Any) -> None:
    path = os.environ.get("FI_COMPAT_GPU_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"release": RELEASE, "test": name, **fields}) + "\n")


def _timed(fn: Any) -> tuple[Any, float]:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    r = fn()
    torch.cuda.synchronize()
    return r, time.perf_counter() - t0


def _rms_ref(x: torch.Tensor, w: torch.Tensor, eps: float, gemma: bool) -> torch.Tensor:
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return y * ((1 + w.float()) if gemma else w.float())


def _err(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.float() - b.float()).abs().max())


def _gen(seed: int) -> torch.Generator:
    return torch.Generator(device=DEV).manual_seed(seed)


@pytest.mark.parametrize("name", ["rmsnorm", "gemma_rmsnorm"])
@pytest.mark.parametrize("hidden", [128, 4096])
def test_rmsnorm_matches_reference(name: str, hidden: int) -> None:
    g = _gen(hidden)
    x = torch.randn(37, hidden, generator=g, device=DEV).to(torch.bfloat16)
    w = (torch.rand(hidden, generator=g, device=DEV) + 0.5).to(torch.bfloat16)
    f = getattr(norm, name)
    out, dt = _timed(lambda: f(x, w, 1e-6))
    e = _err(out, _rms_ref(x, w, 1e-6, name == "gemma_rmsnorm"))
    same = [torch.equal(out, f(x, w, 1e-6, enable_pdl=v)) for v in (True, False)]
    _report(f"{name}-{hidden}", max_err=e, seconds=round(dt, 2), pdl_bitwise_equal=all(same))
    assert e < 3e-2 and all(same), (e, same)


def test_rmsnorm_3d_strided_heads() -> None:
    """QK-norm on q taken out of a fused qkv tensor: native 3-D from 0.4.0, rows before."""
    g = _gen(3)
    qkv = torch.randn(19, 3, 8, 128, generator=g, device=DEV).to(torch.bfloat16)
    q = qkv[:, 0]
    w = (torch.rand(128, generator=g, device=DEV) + 0.5).to(torch.bfloat16)
    out, dt = _timed(lambda: norm.rmsnorm(q, w))
    e = _err(out, _rms_ref(q, w, 1e-6, False))
    _report(
        "rmsnorm-3d", max_err=e, seconds=round(dt, 2), native_3d=at_least(place(RELEASE), "0.4.0")
    )
    assert out.shape == q.shape and e < 3e-2, e


@pytest.mark.parametrize("name", ["fused_add_rmsnorm", "gemma_fused_add_rmsnorm"])
def test_fused_add_rmsnorm_in_place(name: str) -> None:
    g = _gen(5)
    x = torch.randn(23, 2048, generator=g, device=DEV).to(torch.bfloat16)
    r = torch.randn(23, 2048, generator=g, device=DEV).to(torch.bfloat16)
    w = (torch.rand(2048, generator=g, device=DEV) + 0.5).to(torch.bfloat16)
    s = x.float() + r.float()
    want = _rms_ref(s, w, 1e-6, name.startswith("gemma"))
    res, dt = _timed(lambda: getattr(norm, name)(x, r, w))
    e_out, e_res = _err(x, want), _err(r, s)
    _report(name, max_err=e_out, max_err_residual=e_res, seconds=round(dt, 2))
    assert res is None and e_out < 5e-2 and e_res < 2e-2, (e_out, e_res)


def test_layernorm_matches_reference() -> None:
    if not at_least(place(RELEASE), "0.5.0"):
        pytest.skip("layernorm is flashinfer>=0.5.0")
    g = _gen(7)
    x = torch.randn(17, 1024, generator=g, device=DEV).to(torch.bfloat16)
    gamma = torch.rand(1024, generator=g, device=DEV) + 0.5
    beta = torch.randn(1024, generator=g, device=DEV)
    out, dt = _timed(lambda: norm.layernorm(x, gamma, beta, 1e-6))
    want = torch.nn.functional.layer_norm(x.float(), (1024,), gamma, beta, 1e-6)
    e = _err(out, want)
    _report("layernorm", max_err=e, seconds=round(dt, 2))
    assert e < 5e-2, e


ACTS = {
    "silu_and_mul": torch.nn.functional.silu,
    "gelu_and_mul": torch.nn.functional.gelu,
    "gelu_tanh_and_mul": lambda t: torch.nn.functional.gelu(t, approximate="tanh"),
}


@pytest.mark.parametrize("name", list(ACTS))
def test_activation_matches_reference(name: str) -> None:
    g = _gen(11)
    x = torch.randn(29, 2 * 1536, generator=g, device=DEV).to(torch.bfloat16)
    f = getattr(activation, name)
    out, dt = _timed(lambda: f(x))
    want = ACTS[name](x[:, :1536].float()) * x[:, 1536:].float()
    e = _err(out, want)
    buf = torch.empty(29, 1536, dtype=torch.bfloat16, device=DEV)
    into = f(x, out=buf)
    same = [torch.equal(out, f(x, enable_pdl=v)) for v in (True, False)]
    _report(name, max_err=e, seconds=round(dt, 2), pdl_bitwise_equal=all(same))
    assert e < 3e-2 and into is buf and torch.equal(buf, out) and all(same), (e, same)


# -- RMSNorm + FP8 quantisation, QK RMSNorm (issue 24) ---------------------------------


@pytest.mark.parametrize("name", ["rmsnorm_quant", "fused_add_rmsnorm_quant"])
@pytest.mark.parametrize("scale_kind", ["float", "tensor"])
def test_rmsnorm_quant_matches_reference(name: str, scale_kind: str) -> None:
    """``out = (rms(x) * w / scale).to(e4m3)``: a float ``scale`` on every release 0.6.0+,
    a device tensor from 0.6.7 (refused before, naming 0.6.7)."""
    from fi_compat import errors

    if not at_least(place(RELEASE), "0.6.0"):
        pytest.skip(f"{name} is 0.6.0+")
    g = _gen(11)
    x = torch.randn(33, 1024, generator=g, device=DEV).to(torch.bfloat16)
    w = (torch.rand(1024, generator=g, device=DEV) + 0.5).to(torch.bfloat16)
    r = torch.randn(33, 1024, generator=g, device=DEV).to(torch.bfloat16)
    out = torch.empty(33, 1024, device=DEV, dtype=torch.float8_e4m3fn)
    scale: Any = 0.25 if scale_kind == "float" else torch.tensor([0.25], device=DEV)
    fused = name == "fused_add_rmsnorm_quant"
    args = (out, x.clone(), r.clone(), w, scale) if fused else (out, x, w, scale)
    if scale_kind == "tensor" and not at_least(place(RELEASE), "0.6.7"):
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.7"):
            getattr(norm, name)(*args)
        _report(f"{name}-tensor-scale", refused=True)
        return
    _, dt = _timed(lambda: getattr(norm, name)(*args))
    src = (r.float() + x.float()).to(torch.bfloat16) if fused else x
    want = (_rms_ref(src, w, 1e-6, False) / 0.25).to(torch.float8_e4m3fn)  # float32, once
    mism = int((out.float() != want.float()).sum())
    e = _err(out, want)
    if fused:
        assert torch.equal(args[2], src)  # the residual, in place
    _report(f"{name}-{scale_kind}", max_abs=e, mismatched=mism, first_call_s=round(dt, 2))
    # e4m3 has 3 mantissa bits: one code step where the bf16 rounding differs
    assert e <= float(want.float().abs().max()) / 8


def test_qk_rmsnorm_cute_on_strided_heads() -> None:
    from fi_compat import errors

    if not at_least(place(RELEASE), "0.6.7"):
        pytest.skip("qk_rmsnorm_cute is 0.6.7+")
    g = _gen(12)
    qkv = torch.randn(7, 3 * 8, 128, generator=g, device=DEV).to(torch.bfloat16)
    q = qkv[:, :8]  # [7, 8, 128], rows strided by the fused QKV heads
    w = (torch.rand(128, generator=g, device=DEV) + 0.5).to(torch.bfloat16)
    out = torch.empty(7, 8, 128, device=DEV, dtype=torch.bfloat16)
    try:
        _, dt = _timed(lambda: norm.qk_rmsnorm_cute(q, w, out, 1e-6, 1.0))
    except errors.OptionalDependencyMissingError as exc:
        pytest.skip(f"no CuTe DSL here: {exc}")
    want = _rms_ref(q, w, 1e-6, True)  # weight_bias=1.0: Gemma's (1 + w)
    e = _err(out, want)
    _report("qk_rmsnorm_cute", max_abs=e, first_call_s=round(dt, 2))
    assert e < 3e-2
