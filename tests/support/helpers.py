"""Build a facade for any release (adapter selection as at import), and CPU inputs."""

from __future__ import annotations

from typing import Any

import torch

from fi_compat import gdn_prefill
from fi_compat._adapters.gdn_prefill import SPEC
from fi_compat._core import Adapter
from fi_compat.detection import Distribution
from support.spy import stub

T, HQ, HV, D = 12, 2, 4, 16  # GVA: num_v_heads > num_q_heads == num_k_heads
H = max(HQ, HV)


def facade_for(release: str, target: Any) -> tuple[Any, Adapter]:
    adapter = SPEC.select(Distribution("flashinfer-python", release, "<test>", ""))
    fn = adapter.build(stub(gdn_prefill, "chunk_gated_delta_rule"))
    adapter._set_target(target)
    return fn, adapter


def inputs(
    dtype: torch.dtype = torch.bfloat16, cu_dtype: torch.dtype = torch.int32, seed: int = 0
) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {
        "q": torch.randn(T, HQ, D, generator=g).to(dtype),
        "k": torch.randn(T, HQ, D, generator=g).to(dtype),
        "v": torch.randn(T, HV, D, generator=g).to(dtype),
        "g": torch.rand(T, H, generator=g) * 0.5 + 0.5,
        "beta": torch.rand(T, H, generator=g),
        "cu_seqlens": torch.tensor([0, 5, 12], dtype=cu_dtype),
        "initial_state": torch.randn(2, H, D, D, generator=g),
    }
