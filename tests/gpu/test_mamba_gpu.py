"""Real ``flashinfer.mamba.selective_state_update`` through fi_compat vs a float32 torch
reference, on one release per interpreter (0.6.1+; SM90-capable GPUs).

The reference (Mamba2 decode, per request ``b`` with state row ``s = idx[b]``, head
``h``, group ``h // (nheads / ngroups)``): ``dt' = softplus(dt + dt_bias)``;
``state[s, h] <- state[s, h] * exp(dt' A[h]) + dt' B[b, g] x[b, h]``;
``y = state[s, h] @ C[b, g] + D[h] x[b, h]``, times ``silu(z)`` when given.  Rows of the
pool that no request names stay untouched.

Checks: int32 and int64 ``state_batch_indices`` give the same result on every release
(0.6.1-0.6.2 read int64 as int32 without fi_compat's cast), and a positional call written
for 0.6.5 (``out`` at slot 12) writes into ``out`` on every release that has ``out``.

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
from fi_compat import mamba  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
DEV = "cuda"
CACHE, BATCH, NHEADS, DIM, DSTATE, NGROUPS = 8, 4, 8, 64, 128, 2
if not at_least(place(RELEASE), "0.6.1"):
    pytest.skip(f"flashinfer.mamba is 0.6.1+ (installed {RELEASE})", allow_module_level=True)


def _report(name: str, **fields: Any) -> None:
    path = os.environ.get("FI_COMPAT_GPU_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"release": RELEASE, "test": name, **fields}) + "\n")


def _inputs(seed: int, index_dtype: torch.dtype, with_z: bool) -> dict[str, Any]:
    g = torch.Generator(device=DEV).manual_seed(seed)

    def r(*shape: int, scale: float = 1.0) -> torch.Tensor:
        return torch.randn(*shape, generator=g, device=DEV) * scale

    bf = torch.bfloat16
    return {
        "state": r(CACHE, NHEADS, DIM, DSTATE, scale=0.5).to(bf),
        "x": r(BATCH, NHEADS, DIM).to(bf),
        # Mamba2 (vLLM): dt, dt_bias, A and D are per-head values broadcast over dim/dstate
        "dt": r(BATCH, NHEADS, 1, scale=0.5).to(bf).expand(BATCH, NHEADS, DIM),
        "A": (-torch.rand(NHEADS, 1, 1, generator=g, device=DEV) - 0.1).expand(NHEADS, DIM, DSTATE),
        "B": r(BATCH, NGROUPS, DSTATE).to(bf),
        "C": r(BATCH, NGROUPS, DSTATE).to(bf),
        # D and dt_bias in dt's dtype, B / C / z in x's: every release's kernel reads them so
        "D": r(NHEADS, 1).to(bf).expand(NHEADS, DIM),
        "z": r(BATCH, NHEADS, DIM).to(bf) if with_z else None,
        "dt_bias": r(NHEADS, 1, scale=0.5).to(bf).expand(NHEADS, DIM),
        "dt_softplus": True,
        "state_batch_indices": torch.tensor([5, 0, 7, 2], device=DEV, dtype=index_dtype),
        "pad_slot_id": -1,
    }


def _reference(kw: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
    state = kw["state"].float().clone()
    idx = kw["state_batch_indices"].long()
    rep = NHEADS // NGROUPS
    dt = kw["dt"].float() + kw["dt_bias"].float()
    dt = torch.nn.functional.softplus(dt)  # [b, h, d]
    A = kw["A"].float()  # [h, d, n]
    Bm = kw["B"].float().repeat_interleave(rep, dim=1)  # [b, h, n]
    Cm = kw["C"].float().repeat_interleave(rep, dim=1)
    x = kw["x"].float()
    s = state[idx]  # [b, h, d, n]
    s = s * torch.exp(dt[..., None] * A) + dt[..., None] * Bm[:, :, None, :] * x[..., None]
    y = (s * Cm[:, :, None, :]).sum(-1) + kw["D"].float() * x
    if kw["z"] is not None:
        y = y * torch.nn.functional.silu(kw["z"].float())
    state[idx] = s
    return y, state


@pytest.mark.parametrize("with_z", [False, True], ids=["no_z", "z"])
@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64], ids=["i32", "i64"])
def test_selective_state_update_matches_the_reference(
    index_dtype: torch.dtype, with_z: bool
) -> None:
    kw = _inputs(0, index_dtype, with_z)
    y_ref, state_ref = _reference(kw)
    state = kw["state"]
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    y = mamba.selective_state_update(**kw)
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    err_y = float((y.float() - y_ref).abs().max())
    err_s = float((state.float() - state_ref).abs().max())
    _report(
        f"selective_state_update[{index_dtype}, z={with_z}]",
        max_err_out=err_y,
        max_err_state=err_s,
        first_call_s=first,
    )
    assert y.shape == kw["x"].shape and y.dtype == kw["x"].dtype
    assert err_y < 5e-2 * max(1.0, float(y_ref.abs().max())), err_y
    assert err_s < 5e-2 * max(1.0, float(state_ref.abs().max())), err_s
    untouched = [r for r in range(CACHE) if r not in (5, 0, 7, 2)]
    assert torch.equal(state[untouched].float(), state_ref[untouched])


def test_positional_call_written_for_0_6_5_writes_out() -> None:
    if not at_least(place(RELEASE), "0.6.2"):
        pytest.skip("out is 0.6.2+")
    kw = _inputs(1, torch.int32, False)
    y_ref, _ = _reference(kw)
    out = torch.empty_like(kw["x"])
    w = fi_compat.written_for("0.6.5")
    names = ("state", "x", "dt", "A", "B", "C", "D", "z", "dt_bias", "dt_softplus")
    pos = [kw[n] for n in names] + [kw["state_batch_indices"], -1, out]
    y = w.mamba.selective_state_update(*pos)
    torch.cuda.synchronize()
    err = float((out.float() - y_ref).abs().max())
    _report("selective_state_update[written_for 0.6.5, out]", max_err_out=err)
    assert y is out
    assert err < 5e-2 * max(1.0, float(y_ref.abs().max())), err
