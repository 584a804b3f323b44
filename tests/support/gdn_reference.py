"""The gated delta rule of FlashInfer's GDN decode kernels, in float32, for the GPU tests.

Per request and value head ``hv`` (q/k head ``hv // (HV / H)``), state ``S[v, k]``: q and
k L2-normalised (``x / sqrt(sum x^2 + 1e-6)``), ``q *= K ** -0.5``;
``g = exp(-exp(A_log) * softplus(a + dt_bias))``, ``beta = sigmoid(b)``;
``S <- g S``; ``S <- S + beta (v - S k) k^T``; ``o = S q``, token by token.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


def inputs(
    b: int, t: int, h: int, hv: int, k: int, dtype: torch.dtype, seed: int, device: str = "cuda"
) -> dict[str, torch.Tensor]:
    """Random decode inputs in ``dtype`` (``A_log`` and ``dt_bias`` float32), seeded."""
    g = torch.Generator(device=device).manual_seed(seed)

    def r(*shape: int, scale: float = 1.0) -> torch.Tensor:
        return torch.randn(*shape, generator=g, device=device) * scale

    return {
        "q": r(b, t, h, k).to(dtype),
        "k": r(b, t, h, k).to(dtype),
        "v": r(b, t, hv, k).to(dtype),
        "A_log": r(hv, scale=0.5),
        "a": r(b, t, hv).to(dtype),
        "dt_bias": r(hv, scale=0.5),
        "b": r(b, t, hv).to(dtype),
    }


def call_mtp(
    f: Callable[..., Any],
    x: dict[str, torch.Tensor],
    pool: torch.Tensor,
    idx: torch.Tensor,
    **kw: Any,
) -> Any:
    """``f`` (a BF16-state ``gated_delta_rule_mtp``) on ``x`` against the pool ``[N, HV, V,
    K]`` at slots ``idx``: the gate parameters positionally, the rest by keyword."""
    return f(
        x["A_log"], x["a"], x["dt_bias"], q=x["q"], k=x["k"], v=x["v"], b=x["b"],
        initial_state_source=pool, initial_state_indices=idx, **kw,
    )  # fmt: skip


def recurrence(
    x: dict[str, torch.Tensor], s0: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
    """From ``s0`` ``[B, HV, V, K]`` and ``x`` (``q``, ``k`` ``[B, T, H, K]``, ``v``
    ``[B, T, HV, V]``, ``A_log``, ``dt_bias`` ``[HV]``, ``a``, ``b`` ``[B, T, HV]``):
    (output ``[B, T, HV, V]``, final state, the state after each token)."""
    q, k, v = (x[n].float() for n in ("q", "k", "v"))
    rep = v.shape[2] // q.shape[2]
    q = q.repeat_interleave(rep, dim=2)
    k = k.repeat_interleave(rep, dim=2)
    q = q / torch.sqrt((q * q).sum(-1, keepdim=True) + 1e-6) * q.shape[-1] ** -0.5
    k = k / torch.sqrt((k * k).sum(-1, keepdim=True) + 1e-6)
    sp = torch.nn.functional.softplus(x["a"].float() + x["dt_bias"].float())
    gate = torch.exp(-torch.exp(x["A_log"].float()) * sp)  # [B, T, HV]
    beta = torch.sigmoid(x["b"].float())
    s = s0.float().clone()
    outs, states = [], []
    for t in range(q.shape[1]):
        s = s * gate[:, t, :, None, None]
        kt = k[:, t]  # [B, HV, K]
        pred = torch.einsum("bhvk,bhk->bhv", s, kt)
        u = beta[:, t, :, None] * (v[:, t] - pred)
        s = s + u[..., :, None] * kt[..., None, :]
        outs.append(torch.einsum("bhvk,bhk->bhv", s, q[:, t]))
        states.append(s)
    return torch.stack(outs, 1), s, states
