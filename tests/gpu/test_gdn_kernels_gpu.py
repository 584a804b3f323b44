"""The BF16-state multi-token GDN kernel (``fi_compat.gdn_kernels.gated_delta_rule_mtp``,
FlashInfer's ``gdn_kernels.gdn_decode_bf16_state``, 0.6.8+) against the float32
recurrence (``tests/support/gdn_reference.py``), one release per interpreter.

The pool ``[N, HV, V, K]`` is bf16: the kernel keeps the state in bf16 between calls, so
the final state is compared with a bf16-sized tolerance.  Each call checks the output,
the addressed pool rows (the final state) and that the other rows are untouched, on the
ILP, wide-vector and one-token kernels, with fp16 inputs and int64 slots; the verify form
checks the per-step states and the kept pool; two calls with ``output=None`` return two
buffers (0.6.11-0.6.17 return one cached buffer per shape; fi_compat passes a fresh one
there).  Results of 2026-12-06: ``tests/gpu/README.md``.

Marked ``gpu``: skipped without CUDA.  ``FI_COMPAT_GPU_REPORT=path`` appends one JSON line
per check.
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
from fi_compat import errors, gdn_kernels  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402
from support.gdn_reference import call_mtp, inputs, recurrence  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
DEV = "cuda"
B, T, H, HV, K = 4, 3, 2, 4, 128  # the default (ILP kernel) shape
if not at_least(place(RELEASE), "0.6.8"):
    pytest.skip(f"gdn_decode_bf16_state is 0.6.8+ (installed {RELEASE})", allow_module_level=True)


def _report(name: str, **fields: Any) -> None:
    path = os.environ.get("FI_COMPAT_GPU_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"release": RELEASE, "test": name, **fields}) + "\n")


def _inputs(
    dtype: torch.dtype, seed: int, b: int = B, t: int = T, h: int = H, hv: int = HV
) -> dict[str, torch.Tensor]:
    return inputs(b, t, h, hv, K, dtype, seed, DEV)


def _call(
    x: dict[str, torch.Tensor], pool: torch.Tensor, idx: torch.Tensor, **kw: Any
) -> torch.Tensor:
    return call_mtp(gdn_kernels.gated_delta_rule_mtp, x, pool, idx, **kw)  # type: ignore[no-any-return]


def _pool(n: int, hv: int, seed: int) -> torch.Tensor:
    g = torch.Generator(device=DEV).manual_seed(seed)
    return (torch.randn(n, hv, K, K, generator=g, device=DEV) * 0.1).to(torch.bfloat16)


def _err(got: torch.Tensor, want: torch.Tensor) -> float:
    return float((got.float() - want).abs().max())


# (batch, tokens, q/k heads, v heads): B*HV < 128 takes the ILP kernel, B*HV >= 128 at
# T >= 2 the wide-vector kernel (``_select_wide_vec_tile_v``, 0.6.8+), T = 1 its own path.
SHAPES = {"ilp": (4, 3, 2, 4), "wide_vec": (8, 3, 4, 16), "one_token": (4, 1, 2, 4)}
CASES = [
    ("ilp", torch.bfloat16),
    ("ilp", torch.float16),
    ("wide_vec", torch.bfloat16),
    ("one_token", torch.bfloat16),
]


@pytest.mark.parametrize(("shape", "dtype"), CASES, ids=[f"{s}-{str(d)[6:]}" for s, d in CASES])
def test_mtp_bf16_state_pool(shape: str, dtype: torch.dtype) -> None:
    """The pool rows addressed are updated in place, the others untouched.  fp16 inputs:
    0.6.18+ convert them to bf16 (``as_bf16``); fi_compat passes bf16 copies to
    0.6.8-0.6.17, whose kernels would read the fp16 bits as bf16."""
    b, t, h, hv = SHAPES[shape]
    x = _inputs(dtype, 7, b, t, h, hv)
    pool0 = _pool(b + 2, hv, 1)
    idx = torch.randperm(b + 2, device=DEV)[:b].to(torch.int32)
    untouched = sorted(set(range(b + 2)) - set(idx.tolist()))
    xb = {n: (v.to(torch.bfloat16) if v.dtype == torch.float16 else v) for n, v in x.items()}
    want_o, want_s, _ = recurrence(xb, pool0[idx.long()])
    pool = pool0.clone()
    out = _call(x, pool, idx)
    torch.cuda.synchronize()
    eo, es = _err(out, want_o), _err(pool[idx.long()], want_s)
    others = torch.equal(pool[untouched], pool0[untouched])
    _report(f"mtp-pool-{shape}-{dtype}", max_err_out=eo, max_err_state=es, others=others)
    assert out.shape == (b, t, hv, K) and out.dtype == torch.bfloat16
    assert eo < 5e-2 and es < 2e-2 and others


def test_verify_writes_every_step_and_leaves_the_pool() -> None:
    """The speculative-verification form: the state after each token goes to a
    contiguous ``[B, T, HV, V, K]`` buffer, ``disable_state_update=True`` keeps the pool;
    the caller's ``output`` is written and returned."""
    x = _inputs(torch.bfloat16, 10)
    pool0 = _pool(B + 1, HV, 2)
    idx = torch.arange(1, B + 1, dtype=torch.int32, device=DEV)
    want_o, _, want_steps = recurrence(x, pool0[idx.long()])
    pool = pool0.clone()
    steps = torch.zeros(B, T, HV, K, K, dtype=torch.bfloat16, device=DEV)
    out = torch.empty(B, T, HV, K, dtype=torch.bfloat16, device=DEV)
    kw = {"intermediate_states_buffer": steps, "disable_state_update": True, "output": out}
    if not at_least(place(RELEASE), "0.6.11"):  # 0.6.8-0.6.10 index the buffer by pool slot
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.11"):
            _call(x, pool, idx, **kw)
        return
    got = _call(x, pool, idx, **kw)
    torch.cuda.synchronize()
    eo = _err(out, want_o)
    es = max(_err(steps[:, i], want_steps[i]) for i in range(T))
    kept = torch.equal(pool, pool0)
    _report(
        "mtp-verify",
        max_err_out=eo,
        max_err_steps=es,
        pool_kept=kept,
        same_output=got.data_ptr() == out.data_ptr(),
    )
    assert got.data_ptr() == out.data_ptr()
    assert eo < 5e-2 and es < 2e-2 and kept


def test_output_none_gives_a_new_buffer_each_call() -> None:
    x = _inputs(torch.bfloat16, 8)
    pool = _pool(B, HV, 3)
    idx = torch.arange(B, dtype=torch.int32, device=DEV)
    first = _call(x, pool.clone(), idx)
    kept = first.clone()
    second = _call(_inputs(torch.bfloat16, 9), pool.clone(), idx)
    torch.cuda.synchronize()
    _report("mtp-output-none", aliased=first.data_ptr() == second.data_ptr())
    assert first.data_ptr() != second.data_ptr()
    assert torch.equal(first, kept)  # the second call did not overwrite the first result


def test_int64_slot_indices_give_the_int32_result() -> None:
    """Every release's kernels compile for int32 slots only (0.6.18+ raise
    ``DSLUserCodeError`` for int64 at compile): fi_compat casts them on every release."""
    x = _inputs(torch.bfloat16, 11)
    pool0 = _pool(B + 2, HV, 4)
    idx = torch.tensor([5, 0, 2, 3], dtype=torch.int64, device=DEV)
    want_o, want_s, _ = recurrence(x, pool0[idx])
    pool = pool0.clone()
    out = _call(x, pool, idx)
    torch.cuda.synchronize()
    eo, es = _err(out, want_o), _err(pool[idx], want_s)
    _report("mtp-int64-indices", max_err_out=eo, max_err_state=es)
    assert eo < 5e-2 and es < 2e-2
