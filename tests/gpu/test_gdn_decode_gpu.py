"""Real ``flashinfer.gdn_decode`` kernels through fi_compat vs the float32 recurrence, on
one release per interpreter (tests/gpu/README.md has the table).

The reference is ``tests/support/gdn_reference.py``.

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
from fi_compat import device, gdn_decode  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402
from support.gdn_reference import inputs, recurrence  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
DEV = "cuda"
B, H, HV, K = 4, 2, 4, 128
if not at_least(place(RELEASE), "0.6.2"):
    pytest.skip(f"flashinfer.gdn_decode is 0.6.2+ (installed {RELEASE})", allow_module_level=True)


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


def _err(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.float() - b.float()).abs().max())


def _inputs(t: int, dtype: torch.dtype, seed: int) -> dict[str, torch.Tensor]:
    return inputs(B, t, H, HV, K, dtype, seed, DEV)


def _reference(x: dict[str, torch.Tensor], s0: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The recurrence in float32 from ``s0`` ``[B, HV, V, K]``; (output, final state)."""
    out, final, _ = recurrence(x, s0)
    return out, final


def test_pretranspose_float32_state() -> None:
    x = _inputs(1, torch.bfloat16, 0)
    s0 = torch.randn(B, HV, K, K, device=DEV) * 0.1
    want_o, want_s = _reference(x, s0)
    state = s0.clone()
    (out, st), dt = _timed(
        lambda: gdn_decode.gated_delta_rule_decode_pretranspose(
            x["q"], x["k"], x["v"], state, x["A_log"], x["a"], x["dt_bias"], x["b"]
        )
    )
    eo, es = _err(out, want_o), _err(st, want_s)
    _report("pretranspose-f32", max_err_out=eo, max_err_state=es, seconds=round(dt, 2))
    assert st.data_ptr() == state.data_ptr()  # updated in place
    assert out.dtype == torch.bfloat16 and eo < 3e-2 and es < 3e-3


def test_pretranspose_fp16_inputs_give_the_fp16_result() -> None:
    """0.6.3-0.7.3 kernels misread fp16; fi_compat hands them bf16 copies."""
    x = _inputs(1, torch.float16, 1)
    s0 = torch.randn(B, HV, K, K, device=DEV) * 0.1
    want_o, want_s = _reference(x, s0)
    out, st = gdn_decode.gated_delta_rule_decode_pretranspose(
        x["q"], x["k"], x["v"], s0.clone(), x["A_log"], x["a"], x["dt_bias"], x["b"]
    )
    raw_o, _ = gdn_decode.gated_delta_rule_decode_pretranspose.raw()(
        q=x["q"], k=x["k"], v=x["v"], state=s0.clone(), A_log=x["A_log"], a=x["a"],
        dt_bias=x["dt_bias"], b=x["b"],
    )  # fmt: skip
    eo, es, raw = _err(out, want_o), _err(st, want_s), _err(raw_o, want_o)
    _report("pretranspose-fp16", max_err_out=eo, max_err_state=es, direct_call_err=raw)
    assert out.dtype == torch.float16 and eo < 3e-2 and es < 6e-3  # inputs rounded to bf16


def test_pretranspose_bf16_state() -> None:
    if not at_least(place(RELEASE), "0.6.4"):
        pytest.skip("bf16 state is 0.6.4+")
    x = _inputs(1, torch.bfloat16, 2)
    s0 = (torch.randn(B, HV, K, K, device=DEV) * 0.1).bfloat16()
    want_o, want_s = _reference(x, s0)
    known = device.known_issues(feature="gdn_decode", capability="current")
    if any(i.id == "gdn-decode-bf16-state-dsl-alignment" for i in known):
        # the release's kernel does not compile with the DSL of this host: pin the row
        with pytest.raises(Exception, match="alignment"):
            gdn_decode.gated_delta_rule_decode_pretranspose(
                x["q"], x["k"], x["v"], s0, x["A_log"], x["a"], x["dt_bias"], x["b"]
            )
        _report("pretranspose-bf16-state", known_issue="gdn-decode-bf16-state-dsl-alignment")
        return
    out, st = gdn_decode.gated_delta_rule_decode_pretranspose(
        x["q"], x["k"], x["v"], s0, x["A_log"], x["a"], x["dt_bias"], x["b"]
    )
    eo, es = _err(out, want_o), _err(st, want_s)
    _report("pretranspose-bf16-state", max_err_out=eo, max_err_state=es)
    assert eo < 3e-2 and es < 2e-2


@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64], ids=["int32", "int64"])
def test_pretranspose_bf16_pool(index_dtype: torch.dtype) -> None:
    """A bf16 pool addressed by int32 or int64 slots: the bf16-state kernels compile for
    int32 only (int64 fails to compile or bind on 0.6.8-0.7.4), fi_compat casts."""
    if not at_least(place(RELEASE), "0.6.8"):
        pytest.skip("the bf16 pool is 0.6.6+; its kernel compiles with this DSL from 0.6.8")
    x = _inputs(1, torch.bfloat16, 5)
    pool0 = (torch.randn(B + 2, HV, K, K, device=DEV) * 0.1).bfloat16()
    idx = torch.tensor([4, 1, 0, 3], dtype=index_dtype, device=DEV)
    want_o, want_s = _reference(x, pool0[idx.long()])
    pool = pool0.clone()
    out, _ = gdn_decode.gated_delta_rule_decode_pretranspose(
        x["q"], x["k"], x["v"], None, x["A_log"], x["a"], x["dt_bias"], x["b"],
        initial_state=pool, initial_state_indices=idx,
    )  # fmt: skip
    torch.cuda.synchronize()
    eo, es = _err(out, want_o), _err(pool[idx.long()], want_s)
    others = torch.equal(pool[[2, 5]], pool0[[2, 5]])
    _report(f"pretranspose-bf16-pool-{index_dtype}", max_err_out=eo, max_err_state=es)
    assert eo < 3e-2 and es < 2e-2 and others


def test_decode_kv_layout() -> None:
    x = _inputs(1, torch.bfloat16, 3)
    s0 = torch.randn(B, HV, K, K, device=DEV) * 0.1  # [B, HV, V, K] for the reference
    want_o, want_s = _reference(x, s0)
    kv = s0.transpose(-1, -2).contiguous()  # [B, HV, K, V]
    (out, st), dt = _timed(
        lambda: gdn_decode.gated_delta_rule_decode(
            x["q"], x["k"], x["v"], kv, x["A_log"], x["a"], x["dt_bias"], x["b"]
        )
    )
    eo, es = _err(out, want_o), _err(st.transpose(-1, -2), want_s)
    _report("decode-kv", max_err_out=eo, max_err_state=es, seconds=round(dt, 2))
    assert eo < 3e-2 and es < 3e-3


@pytest.mark.parametrize("disable", ["default", False])
def test_mtp_pool(disable: object) -> None:
    """T=3 tokens per request against a pool of 6; left at the default the pool is kept
    (every release), with ``False`` the addressed rows hold the final state."""
    t = 3
    x = _inputs(t, torch.bfloat16, 4)
    pool0 = torch.randn(6, HV, K, K, device=DEV) * 0.1
    idx = torch.tensor([4, 1, 0, 3], dtype=torch.int32, device=DEV)
    want_o, want_s = _reference(x, pool0[idx.long()])
    pool = pool0.clone()
    kw = {} if disable == "default" else {"disable_state_update": disable}
    (out, _), dt = _timed(
        lambda: gdn_decode.gated_delta_rule_mtp(
            x["q"], x["k"], x["v"], pool, idx, x["A_log"], x["a"], x["dt_bias"], x["b"], **kw
        )
    )
    eo = _err(out, want_o)
    if disable == "default":
        kept = torch.equal(pool, pool0)
        _report("mtp-default", max_err_out=eo, pool_unchanged=kept, seconds=round(dt, 2))
        assert kept
    else:
        es = _err(pool[idx.long()], want_s)
        others = torch.equal(pool[[2, 5]], pool0[[2, 5]])
        _report("mtp-update", max_err_out=eo, max_err_state=es, other_rows_unchanged=others)
        assert es < 3e-3 and others
    assert eo < 3e-2


def test_mtp_fp16_inputs() -> None:
    t = 2
    x = _inputs(t, torch.float16, 5)
    pool0 = torch.randn(4, HV, K, K, device=DEV) * 0.1
    idx = torch.tensor([0, 1, 2, 3], dtype=torch.int32, device=DEV)
    want_o, _ = _reference(x, pool0)
    out, _ = gdn_decode.gated_delta_rule_mtp(
        x["q"], x["k"], x["v"], pool0.clone(), idx, x["A_log"], x["a"], x["dt_bias"], x["b"]
    )
    eo = _err(out, want_o)
    _report("mtp-fp16", max_err_out=eo)
    assert out.dtype == torch.float16 and eo < 3e-2
