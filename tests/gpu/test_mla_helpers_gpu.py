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
