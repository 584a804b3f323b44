"""Build a fused-MoE facade for any release (adapter selection as at import) bound to a
spy, and small CPU inputs of the right dtypes and shapes for every entry point."""

from __future__ import annotations

import inspect
from typing import Any

import torch

from fi_compat import fused_moe
from fi_compat._adapters.fused_moe import HELPERS, LAYOUTS, MOE_FLOOR, SPECS
from fi_compat._core import Adapter, EntryPoint
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES, at_least, place
from support.spy import MoeSpy, snapshot_signature, stub

ENTRIES: dict[str, EntryPoint] = {**SPECS, **HELPERS, **LAYOUTS}
T, H, E, K, INTER = 4, 256, 8, 2, 128  # tokens, hidden, experts, top_k, intermediate
F8 = torch.float8_e4m3fn


def moe_facade(
    name: str,
    release: str,
    signature: inspect.Signature | None = None,
    live: bool = False,
) -> tuple[Any, MoeSpy, Adapter]:
    """The facade ``name`` as fi_compat builds it for ``release``, its FlashInfer call
    going to a spy bound to ``signature`` (default: the release's snapshot)."""
    entry = ENTRIES[name]
    adapter = entry.select(Distribution("flashinfer-python", release, "<test>", ""))
    fn = adapter.build(stub(fused_moe, name))
    spy = MoeSpy(signature or snapshot_signature(release, entry), name, H)
    adapter._set_target(spy, live=live)
    return fn, spy, adapter


def _g(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _u8(*shape: int) -> torch.Tensor:
    return torch.randint(0, 256, shape, dtype=torch.uint8, generator=_g())


def _f8(*shape: int) -> torch.Tensor:
    return torch.rand(*shape, generator=_g()).to(F8)


ROUTING = {
    "num_experts": E,
    "top_k": K,
    "n_group": None,
    "topk_group": None,
    "intermediate_size": INTER,
    "local_expert_offset": 0,
    "local_num_experts": E,
    "routed_scaling_factor": None,
}


def args(name: str, *, mxfp8: bool = False) -> dict[str, Any]:
    """The required arguments of entry point ``name``, in the stable positional order
    (a fresh dict; the tensors are made once per process and never written to)."""
    key = (name, mxfp8)
    if key not in _ARGS:
        _ARGS[key] = _make_args(name, mxfp8=mxfp8)
    out = dict(_ARGS[key])
    if "_cache_permute_indices" in out:  # the memo dict is written to: one per call
        out["_cache_permute_indices"] = {}
    return out


_ARGS: dict[tuple[str, bool], dict[str, Any]] = {}


def _make_args(name: str, *, mxfp8: bool = False) -> dict[str, Any]:
    logits = torch.randn(T, E, generator=_g()).to(torch.bfloat16)
    topk = torch.randint(0, E, (T, K), dtype=torch.int32, generator=_g())
    first = {"topk_ids": topk} if "routed" in name else {"routing_logits": logits}
    if name.startswith("trtllm_fp4_block_scale"):
        hidden = _f8(T, H) if mxfp8 else _u8(T, H // 2)
        scale = _u8(T, H // 32) if mxfp8 else _f8(T, H // 16)
        return {
            **first,
            "routing_bias": None,
            "hidden_states": hidden,
            "hidden_states_scale": scale,
            "gemm1_weights": _u8(E, 2 * INTER, H // 2),
            "gemm1_weights_scale": _f8(E, 2 * INTER, H // 16),
            "gemm1_bias": None,
            "gemm1_alpha": None,
            "gemm1_beta": None,
            "gemm1_clamp_limit": None,
            "gemm2_weights": _u8(E, H, INTER // 2),
            "gemm2_weights_scale": _f8(E, H, INTER // 16),
            "gemm2_bias": None,
            "output1_scale_scalar": None,
            "output1_scale_gate_scalar": None,
            "output2_scale_scalar": None,
            **ROUTING,
        }
    if name.startswith("trtllm_fp8_block_scale"):
        return {
            **first,
            "routing_bias": None,
            "hidden_states": _f8(T, H),
            "hidden_states_scale": torch.rand(H // 128, T, generator=_g()),
            "gemm1_weights": _f8(E, 2 * INTER, H),
            "gemm1_weights_scale": torch.rand(E, 2 * INTER // 128, H // 128, generator=_g()),
            "gemm2_weights": _f8(E, H, INTER),
            "gemm2_weights_scale": torch.rand(E, H // 128, INTER // 128, generator=_g()),
            **ROUTING,
        }
    if name.startswith("trtllm_fp8_per_tensor"):
        return {
            **first,
            "routing_bias": None,
            "hidden_states": _f8(T, H),
            "gemm1_weights": _f8(E, 2 * INTER, H),
            "output1_scales_scalar": torch.ones(E),
            "output1_scales_gate_scalar": torch.ones(E),
            "gemm2_weights": _f8(E, H, INTER),
            "output2_scales_scalar": torch.ones(E),
            **ROUTING,
            "use_routing_scales_on_input": False,
        }
    if name == "trtllm_bf16_moe":
        return {
            **first,
            "routing_bias": None,
            "hidden_states": torch.randn(T, H, generator=_g()).to(torch.bfloat16),
            "gemm1_weights": torch.randn(E, 2 * INTER, H, generator=_g()).to(torch.bfloat16),
            "gemm2_weights": torch.randn(E, H, INTER, generator=_g()).to(torch.bfloat16),
            **{k: v for k, v in ROUTING.items() if k != "routed_scaling_factor"},
        }
    if name == "trtllm_bf16_routed_moe":
        return {
            **first,
            "hidden_states": torch.randn(T, H, generator=_g()).to(torch.bfloat16),
            "gemm1_weights": torch.randn(E, 2 * INTER, H, generator=_g()).to(torch.bfloat16),
            "gemm2_weights": torch.randn(E, H, INTER, generator=_g()).to(torch.bfloat16),
            **{k: v for k, v in ROUTING.items() if k != "routed_scaling_factor"},
        }
    if name == "trtllm_mxint4_block_scale_moe":
        return {
            **first,
            "routing_bias": None,
            "hidden_states": torch.randn(T, H, generator=_g()).to(torch.bfloat16),
            "gemm1_weights": _u8(E, 2 * INTER, H // 2),
            "gemm1_weights_scale": torch.ones(E, 2 * INTER, H // 32, dtype=torch.bfloat16),
            "gemm1_alpha": None,
            "gemm1_beta": None,
            "gemm1_clamp_limit": None,
            "gemm2_weights": _u8(E, H, INTER // 2),
            "gemm2_weights_scale": torch.ones(E, H, INTER // 32, dtype=torch.bfloat16),
            **ROUTING,
        }
    if name == "cutlass_fused_moe":
        return {
            "input": torch.randn(T, H, generator=_g()).to(torch.bfloat16),
            "token_selected_experts": topk,
            "token_final_scales": torch.rand(T, K, generator=_g()),
            "fc1_expert_weights": torch.randn(E, 2 * INTER, H, generator=_g()).to(torch.bfloat16),
            "fc2_expert_weights": torch.randn(E, H, INTER, generator=_g()).to(torch.bfloat16),
            "output_dtype": torch.bfloat16,
            "quant_scales": [],
        }
    if name == "shuffle_matrix_a":
        return {"input_tensor": _u8(256, 64), "epilogue_tile_m": 128}
    if name == "shuffle_matrix_sf_a":
        return {"input_tensor": _u8(256, 8), "epilogue_tile_m": 128}
    if name == "block_scale_interleave":
        return {"unswizzled_sf": _u8(128, 4)}
    if name == "reorder_rows_for_gated_act_gemm":
        return {"x": torch.randn(256, 64, generator=_g())}
    # the weight-layout helpers: FP4 weights [rows, K/2] (uint8), as the engines pass them
    if name == "get_w2_permute_indices_with_cache":
        return {"_cache_permute_indices": {}, "dst_w2_weight": _u8(H, INTER // 2),
                "epilogue_tile_m": 128}  # fmt: skip
    if name == "maybe_get_cached_w3_w1_permute_indices":
        return {"_cache_permute_indices": {}, "dst_w3_w1_weight": _u8(2 * INTER, H // 2),
                "epilogue_tile_m": 128}  # fmt: skip
    if name == "get_reorder_rows_for_gated_act_gemm_row_indices":
        return {"x": _u8(256, 64)}
    if name == "convert_to_block_layout":
        return {"input_tensor": _u8(256, 64), "blockK": 16}
    if name == "get_shuffle_matrix_a_row_indices":
        return {"input_tensor": _u8(256, 64), "epilogue_tile_m": 128}
    if name == "get_shuffle_matrix_sf_a_row_indices":
        return {"input_tensor": _u8(256, 8), "epilogue_tile_m": 128}
    if name == "interleave_moe_scales_for_sm90_mixed_gemm":
        return {"scales": _u8(E, 128, 8)}
    if name == "interleave_moe_weights_for_sm90_mixed_gemm":
        return {"weight": _u8(E, 128, 64)}
    if name == "fused_topk_deepseek":
        return {
            "scores": torch.randn(T, 256, generator=_g()),
            "bias": torch.zeros(256),
            "n_group": 8,
            "topk_group": 4,
            "topk": 8,
            "routed_scaling_factor": 2.5,
            "topk_values": torch.empty(T, 8),
            "topk_indices": torch.empty(T, 8, dtype=torch.int32),
        }
    raise KeyError(name)


def release_value(adapter: Adapter, param: str, member: str) -> Any:
    """What the release receives for stable member ``member`` of enum ``param``."""
    from fi_compat import enums

    stable = getattr(enums, adapter.entry.params[param].enum or "")
    return adapter.ns["_E_" + param][stable._members_[member]]


# the releases the MoE facades serve (their floor is 0.5.0; older releases are refused)
MOE_RELEASES = tuple(r for r in KNOWN_RELEASES if at_least(place(r), MOE_FLOOR))
