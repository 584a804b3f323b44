"""What one installed FlashInfer release's own ``chunk_gated_delta_rule`` does, called
directly (no fi_compat), for the cases where releases were seen to differ: zero-length
sequences and state dtypes.  One JSON line per case on stdout, flushed, each case
announced before it starts, so a hung kernel leaves the name of the case that hung::

    timeout 300 python3 tools/gpu/probe_gdn.py > probe-V.jsonl

Run it once per release (``source /tmp/fienv-V.sh`` first, see ../shared/GPU.md).  The
reference is the float32 gated delta rule of ``tests/gpu/test_gdn_prefill_gpu.py``; the
final state of a zero-length sequence is expected to be its initial state (or zero), as
flashinfer 0.7.4 documents it.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import sys
import time
from typing import Any

import torch

H, D = 2, 128


def emit(**rec: Any) -> None:
    print(json.dumps(rec), flush=True)


def inputs(cu: list[int], seed: int) -> dict[str, Any]:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    t, n = cu[-1], len(cu) - 1

    def rn(*s: int) -> torch.Tensor:
        return torch.randn(*s, generator=gen, device="cuda")

    return {
        "q": torch.nn.functional.normalize(rn(t, H, D), dim=-1).to(torch.bfloat16),
        "k": torch.nn.functional.normalize(rn(t, H, D), dim=-1).to(torch.bfloat16),
        "v": (rn(t, H, D) * 0.5).to(torch.bfloat16),
        "g": torch.rand(t, H, generator=gen, device="cuda") * 0.2 + 0.8,
        "beta": torch.rand(t, H, generator=gen, device="cuda") * 0.5 + 0.25,
        "h0": rn(n, H, D, D) * 0.05,
    }


def reference(x: dict[str, Any], cu: list[int], h0: Any) -> tuple[Any, Any]:
    q, k, v = (x[n].float() for n in ("q", "k", "v"))
    g, beta, scale = x["g"].float(), x["beta"].float(), 1 / math.sqrt(D)
    out = torch.zeros(cu[-1], H, D, device="cuda")
    states = torch.zeros(len(cu) - 1, H, D, D, device="cuda")
    for n in range(len(cu) - 1):
        s = h0[n].float().clone() if h0 is not None else torch.zeros(H, D, D, device="cuda")
        for t in range(cu[n], cu[n + 1]):
            s = g[t][:, None, None] * s
            pred = torch.einsum("hvk,hk->hv", s, k[t])
            s = s + beta[t][:, None, None] * torch.einsum("hv,hk->hvk", v[t] - pred, k[t])
            out[t] = scale * torch.einsum("hvk,hk->hv", s, q[t])
        states[n] = s
    return out, states


def err(a: Any, b: Any) -> float:
    return float((a.float() - b.float()).abs().max())


def call(cu: list[int], x: dict[str, Any], h0: Any, **kw: Any) -> Any:
    import flashinfer
    import flashinfer.gdn_prefill as gp
    from packaging.version import Version

    native = torch.int32 if Version(flashinfer.__version__) >= Version("0.7.0") else torch.int64
    cut = torch.tensor(cu, dtype=native, device="cuda")
    return gp.chunk_gated_delta_rule(
        q=x["q"],
        k=x["k"],
        v=x["v"],
        g=x["g"],
        beta=x["beta"],
        initial_state=h0,
        output_final_state=True,
        cu_seqlens=cut,
        **kw,
    )


def case(name: str, fn: Any) -> None:
    emit(case=name, phase="start", t=time.time())
    t0 = time.perf_counter()
    try:
        rec = fn()
        torch.cuda.synchronize()
        emit(case=name, phase="done", seconds=round(time.perf_counter() - t0, 2), **rec)
    except Exception as exc:  # the release's own refusal is a result here
        emit(case=name, phase="raised", error=f"{type(exc).__name__}: {str(exc)[:300]}")


def state_dtype(dt: Any, preallocated: bool) -> dict[str, Any]:
    cu = [0, 16, 40, 64]
    x = inputs(cu, 11)
    h0 = x["h0"].to(dt)
    ref_out, ref_state = reference(x, cu, h0.float())
    kw = {}
    if preallocated:
        kw["output_state"] = torch.empty(3, H, D, D, dtype=dt, device="cuda")
    out, st = call(cu, x, h0, **kw)
    return {
        "state_dtype": str(st.dtype),
        "err_out": err(out, ref_out),
        "err_state": err(st, ref_state),
        "err_state_vs_rounded_ref": err(st, ref_state.to(st.dtype)),
        "same_tensor": preallocated and st.data_ptr() == kw["output_state"].data_ptr(),
    }


def fp8_overflow(dt: Any) -> dict[str, Any]:
    """A final state beyond the fp8 range: saturated to the largest finite value, or NaN?"""
    cu = [0, 16]
    x = inputs(cu, 12)
    x["g"] = torch.ones_like(x["g"])
    h0 = torch.full((1, H, D, D), 2.0e5, device="cuda")
    o = torch.empty(1, H, D, D, dtype=dt, device="cuda")
    _, st = call(cu, x, h0, output_state=o)
    s = st.float()
    return {
        "max": float(s[s.isfinite()].max()) if bool(s.isfinite().any()) else None,
        "nan": int(s.isnan().sum()),
        "inf": int(s.isinf().sum()),
    }


def empty(cu: list[int], with_h0: bool) -> dict[str, Any]:
    x = inputs(cu, 13)
    h0 = x["h0"] if with_h0 else None
    ref_out, ref_state = reference(x, cu, h0)
    out, st = call(cu, x, h0)
    lens = [b - a for a, b in itertools.pairwise(cu)]
    e = [i for i, n in enumerate(lens) if n == 0]
    ne = [i for i, n in enumerate(lens) if n]
    return {
        "err_out": err(out, ref_out),
        "err_state_nonempty": err(st[ne], ref_state[ne]),
        "err_state_empty_vs_initial": err(st[e], ref_state[e]),
        "empty_state_finite": bool(st[e].isfinite().all()),
    }


def warmup() -> dict[str, Any]:
    """The first call (JIT) on three non-empty sequences, against the reference."""
    cu = [0, 16, 40, 64]
    x = inputs(cu, 10)
    out, st = call(cu, x, x["h0"])
    ref_out, ref_state = reference(x, cu, x["h0"])
    return {"err_out": err(out, ref_out), "err_state": err(st, ref_state)}


def main() -> None:
    import flashinfer

    emit(
        release=flashinfer.__version__,
        device=torch.cuda.get_device_name(),
        capability=list(torch.cuda.get_device_capability()),
    )
    case("warmup", warmup)
    for dt in (torch.bfloat16, torch.float16, torch.float8_e4m3fn, torch.float8_e5m2):
        for pre in (False, True):
            case(
                f"state-{dt}-{'prealloc' if pre else 'auto'}",
                functools.partial(state_dtype, dt, pre),
            )
    for dt in (torch.float8_e4m3fn, torch.float8_e5m2):
        case(f"fp8-overflow-{dt}", functools.partial(fp8_overflow, dt))
    # zero-length sequences last: on some releases they never return
    for cu in ([0, 16, 16, 40], [0, 16, 40, 40], [0, 0, 16, 40]):
        for h in (True, False):
            case(f"empty-{cu}-{'h0' if h else 'zero'}", functools.partial(empty, cu, h))


if __name__ == "__main__":
    sys.exit(main())
