"""Head sizes and hidden sizes the kernels cannot compute, on the real kernels: refused by
fi_compat before the launch (a typed error; the process and the CUDA context survive),
while every size the release computes still matches a float32 torch reference.

* RoPE: ``DISPATCH_HEAD_DIM`` has 64/128/256/512 only in every release; another head size
  kills the process with SIGSEGV on 0.2.1.post1-0.3.1.post1 (measured on an H100 with
  0.3.1) and is a ``RuntimeError`` elsewhere.  ``apply_rope_with_cos_sin_cache`` routes
  other head sizes to ``RopeQuantize`` from 0.6.0, which is wrong or faults
  (``cudaErrorMisalignedAddress``) unless rotary_dim is a multiple of 32 (NeoX) / 16
  (interleaved) (measured on an H100 with 0.6.7 and 0.7.4).
* activation: ``d % 8 != 0`` faults with ``cudaErrorMisalignedAddress`` before 0.7.1
  (FlashInfer issue #2526, fixed by PR #5013; read from the sources).
* ``append_paged_kv_cache``: the same head-size dispatch as RoPE, every release.

Marked ``gpu``: skipped without CUDA.  ``FI_COMPAT_GPU_REPORT=path`` appends one JSON line
per check.  The allowed sizes run first, so a refusal that regressed (a crash or a
poisoned context) cannot hide a numerics result.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
import torch

pytestmark = pytest.mark.gpu

if not torch.cuda.is_available():  # pragma: no cover - CPU hosts
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

import fi_compat  # noqa: E402
from fi_compat import activation, page, rope  # noqa: E402
from fi_compat.errors import InvalidArgumentError, UnsupportedParameterError  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
DEV = "cuda"
NNZ, HQ, HK, THETA, POS0 = 16, 4, 2, 1e4, 100
ROUTED = at_least(place(RELEASE), "0.6.0")  # cos/sin cache: other heads -> RopeQuantize
NATIVE = (64, 128, 256, 512)
# (head_size, rotary_dim, is_neox) measured exact on 0.6.7 and 0.7.4 (H100)
EXACT = [
    (64, 64, True),
    (128, 64, True),
    (256, 128, False),
    (96, 96, True),
    (160, 160, True),
    (192, 96, True),
    (80, 80, False),
    (96, 48, False),
    (160, 80, False),
]
# measured wrong (NeoX 80/80, 96/48, 112/112, 160/80; interleaved 80/40, 112/56 in place
# on 0.6.7) or a device fault (NeoX 80/40, 112/56) on 0.6.7 / 0.7.4
BROKEN = [
    (80, 80, True),
    (96, 48, True),
    (112, 112, True),
    (160, 80, True),
    (80, 40, True),
    (112, 56, True),
    (80, 40, False),
    (112, 56, False),
]


def _report(name: str, **fields: Any) -> None:
    path = os.environ.get("FI_COMPAT_GPU_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"release": RELEASE, "test": name, **fields}) + "\n")


def _err(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.float() - b.float()).abs().max())


def _cache(rotary: int) -> torch.Tensor:
    """vLLM's float32 ``[max_pos, rotary]``: cos then sin of ``pos * theta^(-2j/rotary)``."""
    j = torch.arange(rotary // 2, dtype=torch.float64, device=DEV)
    ang = torch.arange(2 * POS0, dtype=torch.float64, device=DEV)[:, None] * THETA ** (
        -2 * j / rotary
    )
    return torch.cat([ang.cos(), ang.sin()], -1).float().contiguous()


def _ref(x: torch.Tensor, pos: torch.Tensor, cache: torch.Tensor, neox: bool) -> torch.Tensor:
    """``x`` ``[nnz, heads, head]``: the first ``rotary`` features rotated (NeoX halves or
    GPT-J pairs), the rest unchanged, in float32."""
    r = cache.shape[1]
    cos, sin = cache[pos.long(), : r // 2][:, None], cache[pos.long(), r // 2 :][:, None]
    xf = x.float()
    rot, rest = xf[..., :r], xf[..., r:]
    if neox:
        x1, x2 = rot[..., : r // 2], rot[..., r // 2 :]
        out = torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)
    else:
        xe, xo = rot[..., 0::2], rot[..., 1::2]
        out = torch.stack([xe * cos - xo * sin, xo * cos + xe * sin], -1).flatten(-2)
    return torch.cat([out, rest], -1)


def _inputs(head: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator(device=DEV).manual_seed(head)
    q = torch.randn(NNZ, HQ, head, generator=g, device=DEV).to(torch.bfloat16)
    k = torch.randn(NNZ, HK, head, generator=g, device=DEV).to(torch.bfloat16)
    pos = torch.arange(NNZ, dtype=torch.int32, device=DEV) + POS0
    return q, k, pos


def _cache_allowed(head: int, rotary: int, neox: bool) -> bool:
    if head in NATIVE:
        return True
    return ROUTED and rotary <= head and rotary % (32 if neox else 16) == 0


def _alive() -> bool:
    """No pending device fault: the context still works."""
    torch.cuda.synchronize()
    return bool((torch.ones(4, device=DEV).sum() == 4).item())


@pytest.mark.skipif(not at_least(place(RELEASE), "0.2.0.post2"), reason="vLLM signature")
@pytest.mark.parametrize(("head", "rotary", "neox"), EXACT)
def test_cos_sin_cache_sizes_the_release_computes_match(head: int, rotary: int, neox: bool) -> None:
    if not _cache_allowed(head, rotary, neox):
        pytest.skip(f"head {head} runs from 0.6.0 (RopeQuantize); refused on {RELEASE}")
    q, k, pos = _inputs(head)
    cache = _cache(rotary)
    query, key = q.reshape(NNZ, -1), k.reshape(NNZ, -1)
    qo, ko = rope.apply_rope_with_cos_sin_cache(pos, query, key, head, cache, is_neox=neox)
    qi, ki = query.clone(), key.clone()
    rope.apply_rope_with_cos_sin_cache_inplace(pos, qi, ki, head, cache, is_neox=neox)
    wq, wk = _ref(q, pos, cache, neox), _ref(k, pos, cache, neox)
    e = max(_err(qo.reshape(q.shape), wq), _err(ko.reshape(k.shape), wk))
    ei = max(_err(qi.reshape(q.shape), wq), _err(ki.reshape(k.shape), wk))
    _report("rope-cos-sin-cache-exact", head=head, rotary=rotary, neox=neox, err=e, err_inplace=ei)
    assert e < 5e-2 and ei < 5e-2, (e, ei)


@pytest.mark.skipif(not at_least(place(RELEASE), "0.2.0.post2"), reason="vLLM signature")
@pytest.mark.parametrize(
    ("head", "rotary", "neox"), BROKEN + [h for h in EXACT if h[0] not in NATIVE]
)
def test_cos_sin_cache_sizes_the_release_cannot_compute_are_refused(
    head: int, rotary: int, neox: bool
) -> None:
    if _cache_allowed(head, rotary, neox):
        pytest.skip(f"{(head, rotary, neox)} is computed on {RELEASE} (the test above)")
    q, k, pos = _inputs(head)
    cache = _cache(rotary)
    query, key = q.reshape(NNZ, -1), k.reshape(NNZ, -1)
    q0 = query.clone()
    want: type[Exception] = UnsupportedParameterError
    if not (rotary <= head and rotary % (32 if neox else 16) == 0):
        want = InvalidArgumentError  # no release computes it
    for fn in (rope.apply_rope_with_cos_sin_cache, rope.apply_rope_with_cos_sin_cache_inplace):
        with pytest.raises(want) as exc:
            fn(pos, query, key, head, cache, is_neox=neox)
        if want is UnsupportedParameterError:
            assert exc.value.minimum == "0.6.0"  # type: ignore[attr-defined]
    alive, untouched = _alive(), torch.equal(query, q0)
    _report(
        "rope-cos-sin-cache-refused",
        head=head,
        rotary=rotary,
        neox=neox,
        error=want.__name__,
        context_alive=alive,
        inputs_untouched=untouched,
    )
    assert alive and untouched


ROPE_FNS = {
    "apply_rope": lambda q, k, pos, r: rope.apply_rope(
        q, k, torch.tensor([0, NNZ], dtype=torch.int32, device=DEV), pos[:1], rotary_dim=r
    ),
    "apply_rope_pos_ids": lambda q, k, pos, r: rope.apply_rope_pos_ids(q, k, pos, rotary_dim=r),
    "apply_rope_pos_ids_inplace": lambda q, k, pos, r: rope.apply_rope_pos_ids_inplace(
        q, k, pos, rotary_dim=r
    ),
    "apply_llama31_rope_pos_ids": lambda q, k, pos, r: rope.apply_llama31_rope_pos_ids(
        q, k, pos, rotary_dim=r
    ),
}


@pytest.mark.parametrize("name", list(ROPE_FNS))
def test_rope_head_sizes_no_release_runs_are_refused(name: str) -> None:
    """0.2.1.post1-0.3.1.post1 die with SIGSEGV here without fi_compat's refusal."""
    for head in (80, 96, 112, 160, 192):
        for rotary in (None, head // 2):
            q, k, pos = _inputs(head)
            q0 = q.clone()
            with pytest.raises(InvalidArgumentError, match=f"head_dim = {head}"):
                ROPE_FNS[name](q, k, pos, rotary)
            alive = _alive()
            _report("rope-head-dim-refused", fn=name, head=head, rotary=rotary, context_alive=alive)
            assert alive and torch.equal(q, q0)


@pytest.mark.parametrize("d", [8, 4096, 4, 12, 3420])
def test_activation_hidden_sizes(d: int) -> None:
    """d % 8 != 0 before 0.7.1: refused (cudaErrorMisalignedAddress otherwise); else the
    kernel's result matches silu(x) * y."""
    g = torch.Generator(device=DEV).manual_seed(d)
    x = torch.randn(5, 2 * d, generator=g, device=DEV).to(torch.bfloat16)
    want = (torch.nn.functional.silu(x[:, :d].float()) * x[:, d:].float()).to(torch.bfloat16)
    if d % 8 and not at_least(place(RELEASE), "0.7.1"):
        with pytest.raises(UnsupportedParameterError, match=r"0\.7\.1") as exc:
            activation.silu_and_mul(x)
        alive = _alive()
        _report("silu_and_mul-refused", d=d, context_alive=alive)
        assert exc.value.minimum == "0.7.1" and alive
        return
    out = activation.silu_and_mul(x)
    alive = _alive()
    e = _err(out, want)
    _report("silu_and_mul", d=d, err=e, context_alive=alive)
    assert alive and e < 5e-2, e


def test_append_paged_kv_cache_head_dim_refused() -> None:
    head, pages, page_size = 80, 4, 16
    key = torch.randn(NNZ, HK, head, device=DEV).to(torch.float16)
    cache = torch.zeros(pages, 2, page_size, HK, head, device=DEV, dtype=torch.float16)
    i32 = torch.int32
    with pytest.raises(InvalidArgumentError, match=f"head_dim = {head}"):
        page.append_paged_kv_cache(
            key,
            key.clone(),
            torch.zeros(NNZ, dtype=i32, device=DEV),
            torch.arange(NNZ, dtype=i32, device=DEV),
            cache,
            torch.arange(pages, dtype=i32, device=DEV),
            torch.tensor([0, 1], dtype=i32, device=DEV),
            torch.tensor([NNZ], dtype=i32, device=DEV),
        )
    alive = _alive()
    _report("append_paged_kv_cache-refused", head=head, context_alive=alive)
    assert alive and not cache.any()
