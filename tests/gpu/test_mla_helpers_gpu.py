"""Real MLA helper kernels through fi_compat vs torch references, on one release per
interpreter (0.6.0+ for ``concat_mla_k``; tests/gpu/README.md has the table).

``fi_compat.concat_ops.concat_mla_k``: DeepSeek's shape (128 heads, nope 128, rope 64),
1000 tokens, ``k`` compared bit for bit with ``torch.cat([k_nope, k_rope broadcast])`` in
float16 / bfloat16, and in fp8 e4m3fn / e5m2 from 0.6.11 (the typed refusal naming
0.6.11 before it, nothing launched).

Marked ``gpu``: skipped without CUDA.  ``FI_COMPAT_GPU_REPORT=path`` appends one JSON line
per check (release, mismatches, first-call seconds).
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
from fi_compat import errors  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
DEV = "cuda"
TOKENS, HEADS, NOPE, ROPE = 1000, 128, 128, 64


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


@pytest.mark.parametrize(
    "dtype",
    [torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2],
    ids=str,
)
def test_concat_mla_k_matches_torch_cat(dtype: torch.dtype) -> None:
    if not at_least(place(RELEASE), "0.6.0"):
        pytest.skip("flashinfer.concat_ops arrived in 0.6.0")
    from fi_compat.concat_ops import concat_mla_k

    g = torch.Generator(device=DEV).manual_seed(0)
    k_nope = torch.randn(TOKENS, HEADS, NOPE, generator=g, device=DEV).to(dtype)
    k_rope = torch.randn(TOKENS, 1, ROPE, generator=g, device=DEV).to(dtype)
    k = torch.zeros(TOKENS, HEADS, NOPE + ROPE, device=DEV).to(dtype)
    fp8 = dtype.itemsize == 1
    if fp8 and not at_least(place(RELEASE), "0.6.11"):
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.11"):
            concat_mla_k(k, k_nope, k_rope)
        _report("concat_mla_k", dtype=str(dtype), refused=True)
        return
    _, sec = _timed(lambda: concat_mla_k(k, k_nope, k_rope))
    want = torch.cat([k_nope, k_rope.expand(-1, HEADS, -1)], dim=-1)
    bad = (
        int((k.view(torch.uint8) != want.view(torch.uint8)).sum())
        if fp8
        else int((k != want).sum())
    )
    _report("concat_mla_k", dtype=str(dtype), mismatches=bad, sec=sec)
    assert bad == 0


def _rope_ref(x: torch.Tensor, cos_sin: torch.Tensor, pos: torch.Tensor, neox: bool) -> Any:
    """RoPE on the last dimension with ``cos_sin_cache[pos] = [cos | sin]`` (float32)."""
    half = x.shape[-1] // 2
    cs = cos_sin[pos.long()]
    cos, sin = cs[:, :half], cs[:, half:]
    if x.dim() == 3:
        cos, sin = cos[:, None], sin[:, None]
    x = x.float()
    if neox:
        a, b = x[..., :half], x[..., half:]
        return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, b * cos + a * sin], dim=-1).flatten(-2)


@pytest.mark.parametrize("neox", [True, False], ids=["neox", "interleaved"])
@pytest.mark.parametrize("dims", [(64, 512), (64, 128)], ids=["deepseek", "nope128"])
def test_mla_rope_quantize_fp8_matches_reference(neox: bool, dims: tuple[int, int]) -> None:
    """RoPE (float32 reference) then ``x * scale`` cast to e4m3fn, against the kernel's
    output read back in float32: equal within one e4m3 step (rounding of the kernel's
    own float math).  nope 128 needs 0.5.0 (the typed refusal before it)."""
    if not at_least(place(RELEASE), "0.2.11"):
        pytest.skip("mla_rope_quantize_fp8 arrived in 0.2.11")
    from fi_compat.rope import mla_rope_quantize_fp8

    rope_dim, nope = dims
    nnz, heads, seq = 37, 16, 4096
    g = torch.Generator(device=DEV).manual_seed(1)
    bf = torch.bfloat16
    q_rope = torch.randn(nnz, heads, rope_dim, generator=g, device=DEV).to(bf)
    k_rope = torch.randn(nnz, rope_dim, generator=g, device=DEV).to(bf)
    q_nope = torch.randn(nnz, heads, nope, generator=g, device=DEV).to(bf)
    k_nope = torch.randn(nnz, nope, generator=g, device=DEV).to(bf)
    inv = 1.0 / (10000 ** (torch.arange(0, rope_dim, 2, device=DEV).float() / rope_dim))
    t = torch.arange(seq, device=DEV).float()[:, None] * inv[None]
    cos_sin = torch.cat([t.cos(), t.sin()], dim=-1).contiguous()
    pos = torch.randint(0, seq, (nnz,), generator=g, device=DEV, dtype=torch.int32)
    sq, skv = 0.5, 2.0
    call = (q_rope, k_rope, q_nope, k_nope, cos_sin, pos, neox, None, sq, skv)
    if nope != 512 and not at_least(place(RELEASE), "0.5.0"):
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.5\.0"):
            mla_rope_quantize_fp8(*call)
        _report("mla_rope_quantize_fp8", dims=list(dims), neox=neox, refused=True)
        return
    outs, sec = _timed(lambda: mla_rope_quantize_fp8(*call))
    fp8 = torch.float8_e4m3fn
    want = [
        (_rope_ref(q_rope, cos_sin, pos, neox) * sq).to(fp8),
        (_rope_ref(k_rope, cos_sin, pos, neox) * skv).to(fp8),
        (q_nope.float() * sq).to(fp8),
        (k_nope.float() * skv).to(fp8),
    ]
    worst = []
    for got, ref in zip(outs, want, strict=True):
        assert got.dtype == fp8 and got.shape == ref.shape
        diff = (got.float() - ref.float()).abs()
        step = ref.float().abs().clamp(min=2**-6) * 2**-3  # one e4m3 step (3 mantissa bits)
        worst.append(float((diff / step).max()))
    _report("mla_rope_quantize_fp8", dims=list(dims), neox=neox, worst_steps=worst, sec=sec)
    assert max(worst) <= 1.0, worst
