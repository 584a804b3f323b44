"""Real CUTLASS fused-MoE kernels through fi_compat vs a float32 torch reference MoE.

Marked ``gpu``: skipped without CUDA or without an importable ``flashinfer.fused_moe``.
Run one release per interpreter (``../shared/GPU.md``).  ``FI_COMPAT_GPU_REPORT=path.json``
appends one JSON line per call with the release, the errors against the reference, the
return type, the exception if any, and the wall time; the first call of the process is
flagged ``first_call`` (it includes the JIT build of ``fused_moe_90`` on SM90, which is
~150-220 CUDA translation units: expect tens of minutes, start pytest with
``setsid nohup`` and poll, GPU.md).

What the kernels take, read from the wheels' sources (0.5.0-0.7.4 alike):

* ``token_selected_experts`` int32 ``[T, top_k]`` (``CHECK_INPUT_TYPE(..., dl_int32)``),
  ``token_final_scales`` float32 ``[T, top_k]``.
* ``fc1_expert_weights`` ``[E, 2*I, H]`` with rows ``[0, I)`` the *linear* ("up", w3)
  half and rows ``[I, 2I)`` the *gate* (w1) half: the activation kernel reads the gate at
  ``gemm_result + inter_size`` and computes ``silu(gate) * linear``; the SM80 fused-gated
  kernel reads the gate weights at ``fc1 + (2*e + 1)*I*H``.  So ``fc1 = cat([w3, w1])``,
  the reverse of vLLM's ``w13`` (hence vLLM's ``swap_w13_to_w31``).
  ``test_bf16_keyword_matches_reference`` pins this with a negative control.
* ``fc2_expert_weights`` ``[E, H, I]``; output ``[T, H]`` of ``output_dtype``.
* Alignment (TMA, 128 bits): ``H`` and ``I`` multiples of 8 for bf16, 16 for fp8.
* FP8 per-tensor (input and weights ``float8_e4m3fn``, ``output_dtype`` bf16): four
  float32 ``quant_scales``: ``[fc1_dequant [E] = a1*w1_scale[e],
  fc2_quant [] or [E] = 1/a2, fc2_dequant [E] = a2*w2_scale[e], fc1_input_dequant [] = a1]``
  where ``x_fp8 = x / a1`` (caller-quantised) and the intermediate is quantised in-kernel
  with ``1/a2``; ``fc1_input_dequant`` is only read by the (unused) LoRA path but must be a
  0-d tensor.
* Return: FlashInfer returns ``[output, num_active_experts_per_node,
  experts_to_token_score, active_expert_global_ids]`` (a list, despite ``-> torch.Tensor``)
  when ``min_latency_mode=False``; the tests accept a tensor or a list/tuple and report
  which one fi_compat gave.

Reference, per routed (token, expert) pair, in float32::

    g = x @ fc1[e].T;  h = silu(g[:, I:]) * g[:, :I];  out += scale * (h @ fc2[e].T)
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from typing import Any

import pytest
import torch

pytestmark = pytest.mark.gpu

if not torch.cuda.is_available():  # pragma: no cover - CPU hosts
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

try:
    import flashinfer.fused_moe
except Exception as exc:  # pragma: no cover
    pytest.skip(f"flashinfer.fused_moe not importable: {exc!r}", allow_module_level=True)

import fi_compat  # noqa: E402
from fi_compat import fused_moe  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
E, TOP_K, H, INTER = 8, 2, 256, 512
FP8_MAX = 448.0
TOKENS = [16, 64]
# bf16: errors relative to max |ref| (rel_max) and to ||ref|| (rel_fro).
BF16_TOL = {"rel_max": 2e-2, "rel_fro": 1e-2}
# fp8 against a reference that applies the same quantisations (x, weights, intermediate).
FP8_EMULATED_TOL = {"rel_max": 8e-2, "rel_fro": 3e-2}
# fp8 against the unquantised float32 reference (four e4m3 roundings, ~3% rms each).
FP8_UNQUANTISED_TOL = {"rel_fro": 0.15}
_first_call: list[float] = []


def _report(name: str, **fields: Any) -> None:
    path = os.environ.get("FI_COMPAT_GPU_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"release": RELEASE, "test": name, **fields}) + "\n")


def make_moe(tokens: int, seed: int = 0) -> dict[str, torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(seed)

    def rn(*s: int) -> torch.Tensor:
        return torch.randn(*s, generator=gen, device="cuda")

    x = rn(tokens, H).to(torch.bfloat16)
    w1 = (rn(E, 2 * INTER, H) / math.sqrt(H)).to(torch.bfloat16)  # rows [up; gate]
    w2 = (rn(E, H, INTER) / math.sqrt(INTER)).to(torch.bfloat16)
    probs = torch.softmax(rn(tokens, E), dim=-1)
    scales, experts = probs.topk(TOP_K, dim=-1)
    scales = scales / scales.sum(dim=-1, keepdim=True)
    return {
        "x": x,
        "w1": w1,
        "w2": w2,
        "experts": experts.to(torch.int32).contiguous(),
        "scales": scales.float().contiguous(),
    }


def reference(
    x: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    experts: torch.Tensor,
    scales: torch.Tensor,
    *,
    gate_first: bool = False,
    act_quant: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> torch.Tensor:
    """Float32 MoE; ``gate_first=True`` is the wrong ([gate; up]) layout, for a control."""
    xf, w1f, w2f = x.float(), w1.float(), w2.float()
    out = torch.zeros(x.shape[0], H, dtype=torch.float32, device="cuda")
    for e in range(E):
        tok, slot = (experts == e).nonzero(as_tuple=True)
        if tok.numel() == 0:
            continue
        g = xf[tok] @ w1f[e].t()
        first, second = g[:, :INTER], g[:, INTER:]
        gate, up = (first, second) if gate_first else (second, first)
        h = torch.nn.functional.silu(gate) * up
        if act_quant is not None:
            h = act_quant(h)
        out.index_add_(0, tok, (h @ w2f[e].t()) * scales[tok, slot].unsqueeze(1))
    return out


def intermediate_amax(
    x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, experts: torch.Tensor
) -> float:
    amax = [0.0]

    def record(h: torch.Tensor) -> torch.Tensor:
        amax[0] = max(amax[0], h.abs().max().item())
        return h

    reference(x, w1, w2, experts, torch.ones(experts.shape, device="cuda"), act_quant=record)
    return amax[0]


def _errors(out: torch.Tensor, ref: torch.Tensor) -> dict[str, float]:
    d = out.float() - ref
    max_abs = d.abs().max().item()
    return {
        "max_abs": max_abs,
        "rel_max": max_abs / ref.abs().max().item(),
        "rel_fro": (d.norm() / ref.norm()).item(),
    }


def _output(res: Any) -> tuple[torch.Tensor, str]:
    """The output tensor and a name for the return type (fi_compat may normalise it)."""
    if isinstance(res, torch.Tensor):
        return res, "Tensor"
    if isinstance(res, (list, tuple)) and res and isinstance(res[0], torch.Tensor):
        return res[0], f"{type(res).__name__}[{len(res)}]"
    raise AssertionError(f"unexpected return type {type(res)!r}")


def _call(name: str, fn: Callable[[], Any]) -> tuple[torch.Tensor, str, float]:
    """Run one call; report the exception (then re-raise) or return output, type, seconds."""
    first = not _first_call
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    try:
        res = fn()
        torch.cuda.synchronize()
    except Exception as exc:
        dt = time.perf_counter() - t0
        _report(name, error=f"{type(exc).__name__}: {exc}"[:2000], seconds=round(dt, 2))
        raise
    dt = time.perf_counter() - t0
    _first_call.append(dt)
    out, kind = _output(res)
    if first:
        _report(name, first_call=True, seconds=round(dt, 2))
    return out, kind, dt


def _check(name: str, errs: dict[str, float], tol: dict[str, float], **extra: Any) -> None:
    _report(name, **{k: float(f"{v:.3g}") for k, v in errs.items()}, **extra)
    bad = {k: (errs[k], t) for k, t in tol.items() if not errs[k] < t}
    assert not bad, f"{name}: error above tolerance {bad}"


def _keyword_call(m: dict[str, torch.Tensor], output: torch.Tensor | None = None, **kw: Any) -> Any:
    return fused_moe.cutlass_fused_moe(
        input=m["x"],
        token_selected_experts=m["experts"],
        token_final_scales=m["scales"],
        fc1_expert_weights=m["w1"],
        fc2_expert_weights=m["w2"],
        output_dtype=torch.bfloat16,
        quant_scales=kw.pop("quant_scales", []),
        output=output,
        activation_type=fused_moe.ActivationType.Swiglu,
        **kw,
    )


@pytest.mark.parametrize("tokens", TOKENS, ids=lambda t: f"T{t}")
def test_bf16_keyword_matches_reference(tokens: int) -> None:
    m = make_moe(tokens)
    buf = torch.empty(tokens, H, dtype=torch.bfloat16, device="cuda")
    out, kind, dt = _call(f"bf16-keyword-T{tokens}", lambda: _keyword_call(m, buf))
    assert out.shape == (tokens, H) and out.dtype == torch.bfloat16
    assert out.data_ptr() == buf.data_ptr(), "output= buffer not used"
    args = (m["x"], m["w1"], m["w2"], m["experts"], m["scales"])
    errs = _errors(out, reference(*args))
    wrong = _errors(out, reference(*args, gate_first=True))
    _check(
        f"bf16-keyword-T{tokens}",
        errs,
        BF16_TOL,
        return_type=kind,
        seconds=round(dt, 4),
        rel_fro_if_gate_first=float(f"{wrong['rel_fro']:.3g}"),
    )
    # Negative control: fc1 rows [0, I) are "up", rows [I, 2I) are "gate", not the reverse.
    assert wrong["rel_fro"] > 0.3, wrong


@pytest.mark.parametrize("tokens", TOKENS, ids=lambda t: f"T{t}")
def test_bf16_positional_equals_keyword(tokens: int) -> None:
    m = make_moe(tokens, seed=1)
    swiglu = fused_moe.ActivationType.Swiglu
    buf = torch.empty(tokens, H, dtype=torch.bfloat16, device="cuda")
    x, ex, sc, w1, w2 = m["x"], m["experts"], m["scales"], m["w1"], m["w2"]
    short, _, _ = _call(
        f"bf16-positional7-T{tokens}",
        lambda: fused_moe.cutlass_fused_moe(x, ex, sc, w1, w2, torch.bfloat16, []),
    )
    # Every parameter through activation_type (slot 29 of the 0.7.4 order) positionally;
    # tune_max_num_tokens (slot 27) is not at its default, so a shifted mapping shows up.
    long, _, _ = _call(
        f"bf16-positional30-T{tokens}",
        lambda: fused_moe.cutlass_fused_moe(
            *(x, ex, sc, w1, w2, torch.bfloat16, []),  # 0-6
            *(None, None, None, None, None, None),  # 7-12 biases, input_sf, swiglu_*
            *(1, 0, 1, 0, 1, 0),  # 13-18 tp, ep, cluster size/rank
            buf,  # 19 output
            *(False,) * 7,  # 20-26 enable_alltoall ... use_wfp4afp8_humming
            4096,  # 27 tune_max_num_tokens
            None,  # 28 enable_pdl
            swiglu,  # 29 activation_type
        ),
    )
    assert long.data_ptr() == buf.data_ptr()
    kw, kind, _ = _call(f"bf16-keyword-T{tokens}-s1", lambda: _keyword_call(m))
    # top_k=2 keeps the fused-finalize atomics order-independent (0 + a + b), so these are
    # bit-identical unless the calls reached FlashInfer with different arguments.
    assert torch.equal(short, kw), _errors(short, kw.float())
    assert torch.equal(long, kw), _errors(long, kw.float())
    errs = _errors(kw, reference(x, w1, w2, ex, sc))
    _check(f"bf16-positional-vs-keyword-T{tokens}", errs, BF16_TOL, return_type=kind)


def _quantize(t: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return (t.float() / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)


@pytest.mark.skipif(torch.cuda.get_device_capability() < (8, 9), reason="FP8 needs SM89 or newer")
@pytest.mark.parametrize("tokens", TOKENS, ids=lambda t: f"T{t}")
def test_fp8_per_tensor_matches_reference(tokens: int) -> None:
    m = make_moe(tokens, seed=2)
    x, w1, w2, ex, sc = m["x"], m["w1"], m["w2"], m["experts"], m["scales"]
    a1 = x.float().abs().max() / FP8_MAX  # static per-tensor input scale, 0-d
    w1_s = w1.float().abs().amax(dim=(1, 2)) / FP8_MAX  # per expert [E]
    w2_s = w2.float().abs().amax(dim=(1, 2)) / FP8_MAX
    x_q = _quantize(x, a1)
    w1_q = _quantize(w1, w1_s[:, None, None])
    w2_q = _quantize(w2, w2_s[:, None, None])
    x_dq = x_q.float() * a1
    w1_dq = w1_q.float() * w1_s[:, None, None]
    w2_dq = w2_q.float() * w2_s[:, None, None]
    a2 = torch.tensor(intermediate_amax(x_dq, w1_dq, w2_dq, ex) / FP8_MAX, device="cuda")
    quant_scales = [
        (a1 * w1_s).float().contiguous(),  # fc1_dequant [E]
        (1.0 / a2).float().reshape(()),  # fc2_quant, 0-d (per tensor)
        (a2 * w2_s).float().contiguous(),  # fc2_dequant [E]
        a1.float().reshape(()),  # fc1_input_dequant, 0-d
    ]
    q = {"x": x_q, "w1": w1_q, "w2": w2_q, "experts": ex, "scales": sc}
    out, kind, dt = _call(
        f"fp8-keyword-T{tokens}", lambda: _keyword_call(q, quant_scales=quant_scales)
    )
    assert out.shape == (tokens, H) and out.dtype == torch.bfloat16

    def act_quant(h: torch.Tensor) -> torch.Tensor:
        return _quantize(h, a2).float() * a2

    emulated = reference(x_dq, w1_dq, w2_dq, ex, sc, act_quant=act_quant)
    unquantised = reference(x, w1, w2, ex, sc)
    e_unq = _errors(out, unquantised)
    _check(
        f"fp8-vs-emulated-T{tokens}",
        _errors(out, emulated),
        FP8_EMULATED_TOL,
        return_type=kind,
        seconds=round(dt, 4),
        rel_fro_vs_unquantised=float(f"{e_unq['rel_fro']:.3g}"),
    )
    _check(f"fp8-vs-unquantised-T{tokens}", e_unq, FP8_UNQUANTISED_TOL)


def _raw_swiglu() -> Any:
    # flashinfer.fused_moe exports ActivationType from 0.6.7; core has it from 0.5.0.
    mod = flashinfer.fused_moe
    enum = getattr(mod, "ActivationType", None) or mod.core.ActivationType
    return enum.Swiglu


def test_steady_state_time_and_direct_equality() -> None:
    """Per-call time through fi_compat and direct, same process; identical outputs."""
    m = make_moe(64, seed=3)
    out_c = torch.empty(64, H, dtype=torch.bfloat16, device="cuda")
    out_d = torch.empty_like(out_c)
    swiglu = _raw_swiglu()

    def compat() -> Any:
        return _keyword_call(m, out_c)

    def direct() -> Any:
        return flashinfer.fused_moe.cutlass_fused_moe(
            input=m["x"],
            token_selected_experts=m["experts"],
            token_final_scales=m["scales"],
            fc1_expert_weights=m["w1"],
            fc2_expert_weights=m["w2"],
            output_dtype=torch.bfloat16,
            quant_scales=[],
            output=out_d,
            activation_type=swiglu,
        )

    _call("steady-warmup", compat)
    for _ in range(3):
        compat()
        direct()
    times: dict[str, float] = {}
    n = 20
    for label, fn in (("fi_compat", compat), ("direct", direct)) * 2:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        times[label] = min(times.get(label, math.inf), (time.perf_counter() - t0) / n)
    _report(
        "steady-state-T64",
        fi_compat_ms=round(times["fi_compat"] * 1e3, 4),
        direct_ms=round(times["direct"] * 1e3, 4),
        ratio=round(times["fi_compat"] / times["direct"], 3),
        first_call_s=round(_first_call[0], 2) if _first_call else None,
    )
    assert torch.equal(out_c, out_d)
