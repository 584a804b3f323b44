"""Real GDN prefill kernels through fi_compat vs a torch reference of the gated delta rule.

Marked ``gpu``: skipped without CUDA or without an importable ``flashinfer.gdn_prefill``.
Run one release per interpreter (see ../shared/GPU.md; tests/gpu/README.md has the
measured table).  ``FI_COMPAT_GPU_REPORT=path.json`` appends one JSON line per test with
the release, max abs errors and the first-call (JIT) time.

Reference: per sequence and head, in float32, with ``g`` as alpha (linear gate)::

    S = alpha_t * S;  S += beta_t * outer(v_t - S k_t, k_t);  o_t = scale * S q_t

``S`` is ``[V, K]`` (FlashInfer's ``[N, H, V, K]`` state layout from 0.6.3 on).
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import Any

import pytest
import torch

pytestmark = pytest.mark.gpu

if not torch.cuda.is_available():  # pragma: no cover - CPU hosts
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

try:
    import flashinfer.gdn_prefill
except Exception as exc:  # pragma: no cover
    pytest.skip(f"flashinfer.gdn_prefill not importable: {exc!r}", allow_module_level=True)

import fi_compat  # noqa: E402
from fi_compat import gdn_prefill  # noqa: E402
from fi_compat._adapters.gdn_prefill import _pool_native  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
H, D = 2, 128
CU = [0, 16, 40, 64]
N, T = len(CU) - 1, CU[-1]
_first_call: dict[str, float] = {}


def _report(name: str, **fields: Any) -> None:
    path = os.environ.get("FI_COMPAT_GPU_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"release": RELEASE, "test": name, **fields}) + "\n")


def make_inputs(seed: int = 0, cu: list[int] = CU) -> dict[str, torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    dev = "cuda"
    T, N = cu[-1], len(cu) - 1

    def rn(*s: int) -> torch.Tensor:
        return torch.randn(*s, generator=gen, device=dev)

    q = torch.nn.functional.normalize(rn(T, H, D), dim=-1).to(torch.bfloat16)
    k = torch.nn.functional.normalize(rn(T, H, D), dim=-1).to(torch.bfloat16)
    v = (rn(T, H, D) * 0.5).to(torch.bfloat16)
    g = torch.rand(T, H, generator=gen, device=dev) * 0.2 + 0.8  # alpha in (0.8, 1)
    beta = torch.rand(T, H, generator=gen, device=dev) * 0.5 + 0.25
    h0 = rn(N, H, D, D) * 0.05
    return {"q": q, "k": k, "v": v, "g": g, "beta": beta, "h0": h0}


def reference(
    x: dict[str, torch.Tensor], scale: float, h0: torch.Tensor | None, cu: list[int] = CU
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per sequence of ``cu``; a zero-length sequence's final state is its initial
    state (zero without one), as flashinfer 0.7.4 defines it."""
    q, k, v = (x[n].float() for n in ("q", "k", "v"))
    g, beta = x["g"].float(), x["beta"].float()
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


def _timed(name: str, fn: Any) -> Any:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    res = fn()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    _first_call.setdefault(name, dt)
    return res, dt


def _check(name: str, res: Any, ref: tuple[torch.Tensor, torch.Tensor], seconds: float) -> None:
    out, state = res
    e_out = (out.float() - ref[0]).abs().max().item()
    e_state = (state.float() - ref[1]).abs().max().item()
    _report(name, max_err_out=e_out, max_err_state=e_state, seconds=round(seconds, 2))
    assert e_out < 2e-2 and e_state < 2e-2, (e_out, e_state)


@pytest.mark.parametrize("cu_dtype", [torch.int32, torch.int64], ids=["int32", "int64"])
def test_positional_matches_reference(cu_dtype: torch.dtype) -> None:
    x = make_inputs()
    cu = torch.tensor(CU, dtype=cu_dtype, device="cuda")
    scale = 1 / math.sqrt(D)
    res, dt = _timed(
        "positional",
        lambda: gdn_prefill.chunk_gated_delta_rule(
            x["q"], x["k"], x["v"], x["g"], x["beta"], scale, x["h0"], True, cu
        ),
    )
    _check(f"positional-{cu_dtype}", res, reference(x, scale, x["h0"]), dt)


@pytest.mark.parametrize("cu_dtype", [torch.int32, torch.int64], ids=["int32", "int64"])
def test_keyword_matches_reference(cu_dtype: torch.dtype) -> None:
    x = make_inputs(1)
    cu = torch.tensor(CU, dtype=cu_dtype, device="cuda")
    res, dt = _timed(
        "keyword",
        lambda: gdn_prefill.chunk_gated_delta_rule(
            q=x["q"],
            k=x["k"],
            v=x["v"],
            g=x["g"],
            beta=x["beta"],
            initial_state=x["h0"],
            output_final_state=True,
            cu_seqlens=cu,
        ),
    )
    _check(f"keyword-{cu_dtype}", res, reference(x, 1 / math.sqrt(D), x["h0"]), dt)


def test_emulated_gate_domain_log() -> None:
    """gate_domain="log" (flashinfer 0.7.4) on any release: fi_compat exponentiates g."""
    x = make_inputs(2)
    cu = torch.tensor(CU, dtype=torch.int32, device="cuda")
    res, dt = _timed(
        "gate_domain",
        lambda: gdn_prefill.chunk_gated_delta_rule(
            x["q"],
            x["k"],
            x["v"],
            x["g"].log(),
            x["beta"],
            None,
            x["h0"],
            True,
            cu,
            gate_domain="log",
        ),
    )
    _check("gate_domain=log", res, reference(x, 1 / math.sqrt(D), x["h0"]), dt)


def test_state_indices_pool() -> None:
    """state_indices: native where the release serves this GPU, emulated elsewhere."""
    x = make_inputs(3)
    cu = torch.tensor(CU, dtype=torch.int32, device="cuda")
    pool = torch.randn(7, H, D, D, device="cuda") * 0.05
    idx = torch.tensor([5, 0, 3], dtype=torch.int32, device="cuda")
    before = pool.clone()
    res, dt = _timed(
        "state_indices",
        lambda: gdn_prefill.chunk_gated_delta_rule(
            x["q"],
            x["k"],
            x["v"],
            x["g"],
            x["beta"],
            None,
            pool,
            True,
            cu,
            output_state=pool,
            state_indices=idx,
        ),
    )
    out, st = res
    assert st.data_ptr() == pool.data_ptr()
    ref_out, ref_states = reference(x, 1 / math.sqrt(D), before[idx.long()])
    _check("state_indices", (out, pool[idx.long()]), (ref_out, ref_states), dt)
    rest = [i for i in range(7) if i not in (5, 0, 3)]
    assert torch.equal(pool[rest], before[rest])


def test_cuda_graph_capture_and_replay() -> None:
    x = make_inputs(4)
    cu = torch.tensor(CU, dtype=torch.int32, device="cuda")
    out = torch.empty(T, H, D, dtype=torch.bfloat16, device="cuda")
    state = torch.empty(N, H, D, D, dtype=torch.float32, device="cuda")

    def call() -> Any:
        return gdn_prefill.chunk_gated_delta_rule(
            x["q"],
            x["k"],
            x["v"],
            x["g"],
            x["beta"],
            None,
            x["h0"],
            True,
            cu,
            output=out,
            output_state=state,
        )

    call()  # warm-up (JIT, workspace allocation) outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    x["q"].copy_(make_inputs(5)["q"])
    out.zero_()
    graph.replay()
    torch.cuda.synchronize()
    _check("cuda_graph_replay", (out, state), reference(x, 1 / math.sqrt(D), x["h0"]), 0.0)


def test_qk_l2norm_flag_means_the_same_on_every_release() -> None:
    """``use_qk_l2norm_in_kernel=True`` with unnormalised q and k: through fi_compat the
    result is the reference on normalised q and k on every release (0.7.1+ normalise
    themselves; fi_compat normalises for 0.6.0-0.7.0, which ignore the flag).  The direct
    call is the negative control: on releases that ignore the flag it is far off."""
    x = make_inputs(seed=3)
    gen = torch.Generator(device="cuda").manual_seed(7)
    raw = {
        n: (torch.randn(T, H, D, generator=gen, device="cuda") * 3).to(torch.bfloat16)
        for n in ("q", "k")
    }
    cu = torch.tensor(CU, dtype=torch.int32, device="cuda")
    scale = 1 / math.sqrt(D)

    def norm(t: torch.Tensor) -> torch.Tensor:
        tf = t.float()
        return (tf * torch.rsqrt((tf * tf).sum(-1, keepdim=True) + 1e-6)).to(t.dtype)

    ref = reference({**x, "q": norm(raw["q"]), "k": norm(raw["k"])}, scale, x["h0"])
    args = (raw["q"], raw["k"], x["v"], x["g"], x["beta"], scale, x["h0"], True)
    res, dt = _timed(
        "qk_l2norm",
        lambda: gdn_prefill.chunk_gated_delta_rule(*args, cu, use_qk_l2norm_in_kernel=True),
    )
    _check("qk_l2norm", res, ref, dt)
    native = torch.int32 if at_least(place(RELEASE), "0.7.0") else torch.int64
    direct = flashinfer.gdn_prefill.chunk_gated_delta_rule(
        *args, cu.to(native), use_qk_l2norm_in_kernel=True
    )
    e_direct = (direct[0].float() - ref[0]).abs().max().item()
    _report("qk_l2norm-direct", max_err_out=e_direct)
    if at_least(place(RELEASE), "0.7.1"):
        assert e_direct < 2e-2, e_direct  # the release honours the flag itself
    else:  # the release ignores it (far off, or nonfinite: unnormalised keys can make
        # the recurrence expansive, 0.7.4's comment); fi_compat must not
        assert not e_direct < 0.1, e_direct


STATE_DTYPES = (torch.bfloat16, torch.float16, torch.float8_e4m3fn, torch.float8_e5m2)


@pytest.mark.parametrize("dt", STATE_DTYPES, ids=lambda d: str(d).removeprefix("torch."))
def test_state_dtype_means_the_same_on_every_release(dt: torch.dtype) -> None:
    """bf16/fp16/fp8 ``initial_state`` and ``output_state``: native from 0.7.0 on SM90;
    0.6.x's SM90 kernels take float32 only, so fi_compat runs them in float32 and
    rounds the final state once into ``output_state``.  Every release must match the
    float32 reference within the state dtype's own rounding."""
    x = make_inputs(seed=11)
    cu = torch.tensor(CU, dtype=torch.int32, device="cuda")
    h0 = x["h0"].to(dt)
    out_state = torch.empty(h0.shape, dtype=dt, device="cuda")
    ref = reference(x, 1 / math.sqrt(D), h0.float())
    res, dt_s = _timed(
        f"state-{dt}",
        lambda: gdn_prefill.chunk_gated_delta_rule(
            x["q"],
            x["k"],
            x["v"],
            x["g"],
            x["beta"],
            None,
            h0,
            True,
            cu,
            output_state=out_state,
        ),
    )
    out, st = res
    assert st is out_state and st.dtype == dt
    e_out = (out.float() - ref[0]).abs().max().item()
    e_state = (st.float() - ref[1]).abs().max().item()
    rounding = (ref[1].to(dt).float() - ref[1]).abs().max().item()
    _report(
        f"state-{dt}",
        max_err_out=e_out,
        max_err_state=e_state,
        rounding=rounding,
        seconds=round(dt_s, 2),
    )
    assert e_out < 2e-2 and e_state <= 2 * rounding + 2e-3, (e_out, e_state, rounding)
    if dt in (torch.float8_e4m3fn, torch.float8_e5m2):  # saturating, as 0.7.4 stores fp8
        big = torch.full((1, H, D, D), 2.0e5, device="cuda")
        sat = torch.empty(big.shape, dtype=dt, device="cuda")
        one = torch.tensor([0, 16], dtype=torch.int32, device="cuda")
        y = {n: t[:16] for n, t in x.items() if n != "h0"}
        gdn_prefill.chunk_gated_delta_rule(
            y["q"],
            y["k"],
            y["v"],
            torch.ones_like(y["g"]),
            y["beta"],
            None,
            big,
            True,
            one,
            output_state=sat,
        )
        top = torch.finfo(dt).max
        _report(
            f"state-{dt}-saturation",
            max=sat.float().abs().max().item(),
            nan=int(sat.float().isnan().sum()),
        )
        assert not sat.float().isnan().any() and sat.float().abs().max().item() == top


EMPTY_CU = [0, 16, 16, 40]


@pytest.mark.parametrize("with_h0", [True, False], ids=["h0", "zero-state"])
def test_zero_length_sequence_with_host_lengths(with_h0: bool) -> None:
    """A zero-length sequence, with ``cu_seqlens_cpu``: the same result on every release.
    0.6.0-0.6.13 never return from such a launch (fi_compat leaves the sequence out);
    0.6.14-0.7.4 leave its final-state row unwritten (fi_compat writes the initial
    state).  The outputs and every final state must match the reference; the empty
    sequence's final state is its initial state, bit for bit."""
    x = make_inputs(seed=13, cu=EMPTY_CU)
    cu = torch.tensor(EMPTY_CU, dtype=torch.int32, device="cuda")
    h0 = x["h0"] if with_h0 else None
    ref = reference(x, 1 / math.sqrt(D), h0, EMPTY_CU)
    res, dt_s = _timed(
        "empty",
        lambda: gdn_prefill.chunk_gated_delta_rule(
            x["q"],
            x["k"],
            x["v"],
            x["g"],
            x["beta"],
            None,
            h0,
            True,
            cu,
            cu_seqlens_cpu=EMPTY_CU,
        ),
    )
    st = res[1]
    want = h0[1] if h0 is not None else torch.zeros_like(st[1])
    exact = torch.equal(st[1], want)
    _check(f"empty-{'h0' if with_h0 else 'zero'}", res, ref, dt_s)
    assert exact
    if at_least(place(RELEASE), "0.6.14"):  # the control: what the release itself returns
        direct = flashinfer.gdn_prefill.chunk_gated_delta_rule(
            q=x["q"],
            k=x["k"],
            v=x["v"],
            g=x["g"],
            beta=x["beta"],
            initial_state=h0,
            output_final_state=True,
            cu_seqlens=cu if at_least(place(RELEASE), "0.7.0") else cu.long(),
        )
        e = (direct[1][1].float() - want).abs().max().item()
        _report(
            f"empty-{'h0' if with_h0 else 'zero'}-direct",
            empty_row_err=e,
            max_err_out=(direct[0].float() - ref[0]).abs().max().item(),
        )


FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)


def _saturated(x: torch.Tensor, dt: torch.dtype) -> torch.Tensor:
    """float32 -> float8 as flashinfer 0.7.x's native pools store it (PTX
    ``cvt.rn.satfinite``): clamp to +-finfo.max, round to nearest even."""
    top = torch.finfo(dt).max
    return x.clamp(-top, top).to(dt)


def _sha(x: torch.Tensor) -> str:
    import hashlib

    data = bytes(x.contiguous().view(torch.uint8).flatten().tolist())
    return hashlib.sha256(data).hexdigest()[:16]


@pytest.mark.parametrize("cu_list", [CU, EMPTY_CU], ids=["dense", "empty-seq"])
@pytest.mark.parametrize("dt", FP8, ids=lambda d: str(d).removeprefix("torch."))
def test_fp8_state_pool(dt: torch.dtype, cu_list: list[int]) -> None:
    """An fp8 state pool (``initial_state = output_state = pool``, ``state_indices``):
    emulated on 0.6.x's SM90 (rows gathered as float32, the float32 kernel, a
    saturating byte-wise scatter), native on 0.7.0+ (the CuTe-DSL kernel reads and
    stores fp8).  On every release the pool rows must be, bit for bit, the release's
    own float32 packed call on the same rows rounded once with saturation; untouched
    rows keep their bytes.  The inputs are scaled so that about 10% of the final-state
    entries lie beyond the fp8 range (where torch's e5m2 cast gives inf).  With
    ``empty-seq`` the second sequence is empty (``cu_seqlens_cpu`` given): its pool row
    is left as it was (its final state is its initial state)."""
    x = make_inputs(seed=17, cu=cu_list)
    scale = 1 / math.sqrt(D)
    top = torch.finfo(dt).max
    # final states are linear in (v, h0): scale both so that ~10% of |S| exceed top
    probe = reference(x, scale, x["h0"], cu_list)[1]
    c = top / torch.quantile(probe.abs().flatten(), 0.9).item()
    x["v"] = (x["v"].float() * c).to(torch.bfloat16)
    gen = torch.Generator(device="cuda").manual_seed(5)
    pool = _saturated(torch.randn(7, H, D, D, device="cuda", generator=gen) * 0.01 * c, dt)
    idx = torch.tensor([5, 0, 3], dtype=torch.int32, device="cuda")
    rows = idx.long()
    before = pool.clone()
    cu = torch.tensor(cu_list, dtype=torch.int32, device="cuda")
    host = {"cu_seqlens_cpu": cu_list} if cu_list is EMPTY_CU else {}
    res, dt_s = _timed(
        f"fp8-pool-{dt}",
        lambda: gdn_prefill.chunk_gated_delta_rule(
            x["q"],
            x["k"],
            x["v"],
            x["g"],
            x["beta"],
            None,
            pool,
            True,
            cu,
            output_state=pool,
            state_indices=idx,
            **host,
        ),
    )
    out, st = res
    assert st.data_ptr() == pool.data_ptr()
    # the control: the same rows as a packed float32 call (fi_compat passes it through;
    # with an empty sequence fi_compat's own handling applies, as for the pool call)
    h0 = before[rows].float()
    c_out, c_state = gdn_prefill.chunk_gated_delta_rule(
        x["q"], x["k"], x["v"], x["g"], x["beta"], None, h0, True, cu, **host
    )
    want = _saturated(c_state, dt)
    got = pool[rows]
    mismatch = int((got.view(torch.uint8) != want.view(torch.uint8)).sum())
    beyond = c_state.abs() > top
    rest = [i for i in range(7) if i not in rows.tolist()]
    untouched = torch.equal(pool[rest].view(torch.uint8), before[rest].view(torch.uint8))
    ref_out, ref_state = reference(x, scale, h0, cu_list)
    rel_state = ((c_state - ref_state).abs().max() / ref_state.abs().max()).item()
    rel_out = ((out.float() - ref_out).abs().max() / ref_out.abs().max()).item()
    empty_row_kept = (
        torch.equal(got[1].view(torch.uint8), before[rows[1]].view(torch.uint8))
        if cu_list is EMPTY_CU
        else None
    )
    _report(
        f"fp8-pool-{dt}-{'empty' if host else 'dense'}",
        native_pool=_pool_native(gdn_prefill.chunk_gated_delta_rule.adapter, x["q"]),
        bit_equal=mismatch == 0,
        mismatched_bytes=mismatch,
        saturated_fraction=round(beyond.float().mean().item(), 4),
        pool_max=got.float().abs().max().item(),
        nonfinite=int((~torch.isfinite(pool.float())).sum()),
        torch_cast_nonfinite=int((~torch.isfinite(c_state.to(dt).float())).sum()),
        max_err_vs_saturated=(got.float() - want.float()).abs().max().item(),
        rel_err_state_f32_vs_ref=rel_state,
        rel_err_out_vs_ref=rel_out,
        out_equal_to_f32_call=torch.equal(out, c_out),
        untouched_rows_kept=untouched,
        empty_row_kept=empty_row_kept,
        pool_rows_sha=_sha(got),
        f32_state_sha=_sha(c_state),
        seconds=round(dt_s, 2),
    )
    assert mismatch == 0, mismatch
    assert untouched and torch.isfinite(pool.float()).all()
    assert beyond.any() and bool((got.float().abs()[beyond] == top).all())
    assert rel_state < 2e-2 and rel_out < 2e-2, (rel_state, rel_out)
    if empty_row_kept is not None:
        assert empty_row_kept
