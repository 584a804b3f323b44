"""The BF16-state multi-token GDN kernel (``fi_compat.gdn_kernels.gated_delta_rule_mtp``,
FlashInfer's ``gdn_kernels.gdn_decode_bf16_state``, 0.6.8+) against the float32
recurrence (``tests/support/gdn_reference.py``), one release per interpreter.

The pool ``[N, HV, V, K]`` is bf16: the kernel keeps the state in bf16 between calls, so
the final state is compared with a bf16-sized tolerance.  Each call checks the output,
the addressed pool rows (the final state), that the other rows are untouched, and that
two calls with ``output=None`` return two buffers (0.6.11-0.6.17 return one cached
buffer per shape; fi_compat passes a fresh one there).

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
from fi_compat import gdn_kernels  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402
from support.gdn_reference import inputs, recurrence  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
DEV = "cuda"
B, T, H, HV, K = 4, 3, 2, 4, 128
if not at_least(place(RELEASE), "0.6.8"):
    pytest.skip(f"gdn_decode_bf16_state is 0.6.8+ (installed {RELEASE})", allow_module_level=True)


def _report(name: str, **fields: Any) -> None:
    path = os.environ.get("FI_COMPAT_GPU_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"release": RELEASE, "test": name, **fields}) + "\n")


def _inputs(dtype: torch.dtype, seed: int) -> dict[str, torch.Tensor]:
    return inputs(B, T, H, HV, K, dtype, seed, DEV)


def _call(x: dict[str, torch.Tensor], pool: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    return gdn_kernels.gated_delta_rule_mtp(  # type: ignore[no-any-return]
        x["A_log"],
        x["a"],
        x["dt_bias"],
        q=x["q"],
        k=x["k"],
        v=x["v"],
        b=x["b"],
        initial_state_source=pool,
        initial_state_indices=idx,
    )


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
def test_mtp_bf16_state_pool(dtype: torch.dtype) -> None:
    """fp16 inputs: 0.6.18+ convert them to bf16 (``as_bf16``); fi_compat passes bf16
    copies to 0.6.8-0.6.17, whose kernels would read the fp16 bits as bf16."""
    x = _inputs(dtype, 7)
    pool0 = (torch.randn(6, HV, K, K, device=DEV) * 0.1).to(torch.bfloat16)
    idx = torch.tensor([4, 1, 0, 3], dtype=torch.int32, device=DEV)
    xb = {n: (t.to(torch.bfloat16) if t.dtype == torch.float16 else t) for n, t in x.items()}
    want_o, want_s, _ = recurrence(xb, pool0[idx.long()])
    pool = pool0.clone()
    out = _call(x, pool, idx)
    torch.cuda.synchronize()
    eo = float((out.float() - want_o).abs().max())
    es = float((pool[idx.long()].float() - want_s).abs().max())
    others = torch.equal(pool[[2, 5]], pool0[[2, 5]])
    _report(f"mtp-bf16-state-{dtype}", max_err_out=eo, max_err_state=es, others=others)
    assert out.shape == (B, T, HV, K) and out.dtype == torch.bfloat16
    assert eo < 5e-2 and es < 2e-2 and others


def test_output_none_gives_a_new_buffer_each_call() -> None:
    x = _inputs(torch.bfloat16, 8)
    pool = (torch.randn(4, HV, K, K, device=DEV) * 0.1).to(torch.bfloat16)
    idx = torch.arange(B, dtype=torch.int32, device=DEV)
    first = _call(x, pool.clone(), idx)
    kept = first.clone()
    second = _call(_inputs(torch.bfloat16, 9), pool.clone(), idx)
    torch.cuda.synchronize()
    _report("mtp-output-none", aliased=first.data_ptr() == second.data_ptr())
    assert first.data_ptr() != second.data_ptr()
    assert torch.equal(first, kept)  # the second call did not overwrite the first result
