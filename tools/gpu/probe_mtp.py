#!/usr/bin/env python3
"""GPU probe: the BF16-state MTP kernel (``flashinfer.gdn_kernels.gdn_decode_bf16_state.
gated_delta_rule_mtp``, 0.6.8+) called directly and through ``fi_compat.gdn_kernels``, on
the inputs where fi_compat's policy for older releases differs from passing them through.

For each case one JSON line: the largest error against the float32 recurrence
(``tests/support/gdn_reference.py``) of the direct call and of the fi_compat call, or the
exception each raised.  Cases:

  fp16          float16 q/k/v/a/b (0.6.18 converts them, ``as_bf16``; fi_compat passes bf16
                copies to 0.6.8-0.6.17)
  strided       a contiguous call, then the same shapes as views of a fused QKV tensor
                (0.6.8-0.6.13 compile the first call's static layout, cache key without
                strides; fi_compat passes contiguous copies there)
  output_none   two calls with ``output=None``: does the second overwrite the first result
                (0.6.11-0.6.17 return one cached buffer per shape; fi_compat passes a new one)
  int64_index   int64 ``initial_state_indices`` (fi_compat casts to int32)
  slot_order    a pool whose slots are not contiguous (``[N, K, HV, V]`` transposed):
                fi_compat refuses it before 0.6.14
  decode_pool_{bf16,f32}_{int32,int64}
                ``flashinfer.gdn_decode.gated_delta_rule_decode_pretranspose`` (T = 1) on a
                pool ``initial_state`` with int32 / int64 ``initial_state_indices`` (its
                bf16-pool path hands the indices to the same bf16-state kernels)

Every (case, route) runs in its own interpreter: 0.6.8-0.6.17 key their compiled
kernels without dtypes, so one call's kernel would be reused by the next.

Usage (device, checkout root): ``source /tmp/fienv-V.sh; PYTHONPATH=src:tests:$PYTHONPATH
python3 tools/gpu/probe_mtp.py --out r.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import torch

import fi_compat
from fi_compat import gdn_kernels
from support.gdn_reference import call_mtp, inputs, recurrence

B, T, H, HV, K = 4, 3, 2, 4, 128
DEV = "cuda"
CASES = ["fp16", "strided", "output_none", "int64_index", "slot_order"] + [
    f"decode_pool_{s}_{i}" for s in ("bf16", "f32") for i in ("int32", "int64")
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--one", nargs=2, metavar=("CASE", "ROUTE"), help="run one, print its line")
    opts = ap.parse_args()
    if opts.one is None:
        with open(opts.out, "a") as fh:
            for case in CASES:
                for route in ("direct", "fi_compat"):
                    cmd = [sys.executable, __file__, "--out", opts.out, "--one", case, route]
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
                    lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
                    line = (
                        lines[-1]
                        if lines
                        else json.dumps(
                            {
                                "case": case,
                                "route": route,
                                "outcome": f"rc={r.returncode}",
                                "stderr": r.stderr[-400:],
                            }
                        )
                    )
                    print(line, flush=True)
                    fh.write(line + "\n")
        return
    import flashinfer.gdn_decode as fi_decode
    from flashinfer.gdn_kernels import gdn_decode_bf16_state as home

    from fi_compat import gdn_decode

    release = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
    direct: Callable[..., Any] = home.gated_delta_rule_mtp
    routes: dict[str, Callable[..., Any]] = {
        "direct": direct,
        "fi_compat": gdn_kernels.gated_delta_rule_mtp,
    }

    call = call_mtp

    def pool0(seed: int) -> torch.Tensor:
        g = torch.Generator(device=DEV).manual_seed(seed)
        return (torch.randn(B + 2, HV, K, K, generator=g, device=DEV) * 0.1).to(torch.bfloat16)

    idx = torch.tensor([4, 1, 0, 3], dtype=torch.int32, device=DEV)

    def err(
        out: torch.Tensor, pool: torch.Tensor, x: dict[str, torch.Tensor], p0: torch.Tensor
    ) -> dict[str, float]:
        xb = {n: (t.to(torch.bfloat16) if t.dtype == torch.float16 else t) for n, t in x.items()}
        want_o, want_s, _ = recurrence(xb, p0[idx.long()])
        torch.cuda.synchronize()
        return {
            "out": float((out.float() - want_o).abs().max()),
            "state": float((pool[idx.long()].float() - want_s).abs().max()),
        }

    def run(route: str, case: str) -> dict[str, Any]:
        f = routes[route]
        if case == "fp16":
            x, p0 = inputs(B, T, H, HV, K, torch.float16, 11, DEV), pool0(1)
            pool = p0.clone()
            return err(call(f, x, pool, idx), pool, x, p0)
        if case == "strided":
            x, p0 = inputs(B, T, H, HV, K, torch.bfloat16, 12, DEV), pool0(2)
            call(f, x, p0.clone(), idx)  # compiles (or finds) the contiguous-layout kernel
            qkv = torch.cat([x["q"], x["k"], x["v"]], dim=2)  # [B, T, 2H + HV, K]
            xs = {**x, "q": qkv[:, :, :H], "k": qkv[:, :, H : 2 * H], "v": qkv[:, :, 2 * H :]}
            pool = p0.clone()
            return err(call(f, xs, pool, idx), pool, x, p0)
        if case == "output_none":
            x1 = inputs(B, T, H, HV, K, torch.bfloat16, 13, DEV)
            x2 = inputs(B, T, H, HV, K, torch.bfloat16, 14, DEV)
            p0 = pool0(3)
            pool = p0.clone()
            first = call(f, x1, pool, idx)
            e = err(first, pool, x1, p0)
            second = call(f, x2, p0.clone(), idx)
            torch.cuda.synchronize()
            want_o = recurrence(x1, p0[idx.long()])[0]
            return {
                **e,
                "aliased": first.data_ptr() == second.data_ptr(),
                "first_after_second": float((first.float() - want_o).abs().max()),
            }
        if case == "int64_index":
            x, p0 = inputs(B, T, H, HV, K, torch.bfloat16, 15, DEV), pool0(4)
            pool = p0.clone()
            return err(call(f, x, pool, idx.long()), pool, x, p0)
        if case == "slot_order":
            x, p0 = inputs(B, T, H, HV, K, torch.bfloat16, 16, DEV), pool0(5)
            odd = (
                p0.transpose(1, 2).contiguous().transpose(1, 2)
            )  # same values, HV outermost stride
            assert not odd.is_contiguous() and torch.equal(odd, p0)
            return err(call(f, x, odd, idx), odd, x, p0)
        if case.startswith("decode_pool_"):
            _, _, sdt, idt = case.split("_")
            x = inputs(B, 1, H, HV, K, torch.bfloat16, 17, DEV)
            p0 = pool0(6).to(torch.bfloat16 if sdt == "bf16" else torch.float32)
            pool = p0.clone()
            ix = idx.to(torch.int64 if idt == "int64" else torch.int32)
            g = fi_decode.gated_delta_rule_decode_pretranspose
            if route == "fi_compat":
                g = gdn_decode.gated_delta_rule_decode_pretranspose
            out, _ = g(q=x["q"], k=x["k"], v=x["v"], state=None, A_log=x["A_log"], a=x["a"],
                       dt_bias=x["dt_bias"], b=x["b"], initial_state=pool,
                       initial_state_indices=ix)  # fmt: skip
            return err(out, pool, x, p0)
        raise ValueError(case)

    case, route = opts.one
    try:
        res: dict[str, Any] = {"outcome": "ran", **run(route, case)}
    except Exception as exc:
        res = {"outcome": f"{type(exc).__name__}: {str(exc)[:300]}"}
    print(json.dumps({"release": release, "case": case, "route": route, **res}), flush=True)


if __name__ == "__main__":
    main()
