"""MoE calls: module-level imports from flashinfer.fused_moe, a long positional call
(written for the pinned release), and the lazy wrappers with keywords."""

from flashinfer.fused_moe import RoutingMethodType, trtllm_fp4_block_scale_moe
from flashinfer.fused_moe.core import ActivationType

from fake_engine.utils.flashinfer import autotune, flashinfer_cutlass_fused_moe


def fp4_moe(x, x_scale, router_logits, w13, w13_scale, w2, w2_scale, scales, cfg):
    # every argument by position, as the 0.6.x kernels' callers wrote them
    return trtllm_fp4_block_scale_moe(
        router_logits,
        None,
        x,
        x_scale,
        w13,
        w13_scale,
        None,
        None,
        None,
        None,
        w2,
        w2_scale,
        None,
        scales[0],
        scales[1],
        scales[2],
        cfg.num_experts,
        cfg.top_k,
        None,
        None,
        cfg.intermediate_size,
        0,
        cfg.num_experts,
        None,
        RoutingMethodType.Renormalize,
        True,
        True,
        ActivationType.Swiglu,
        None,
    )


def cutlass_moe(x, topk_ids, topk_weights, w13, w2, out_dtype, quant_scales):
    with autotune(False):
        return flashinfer_cutlass_fused_moe(
            input=x,
            token_selected_experts=topk_ids,
            token_final_scales=topk_weights,
            fc1_expert_weights=w13,
            fc2_expert_weights=w2,
            output_dtype=out_dtype,
            quant_scales=quant_scales,
            tune_max_num_tokens=8192,
        )
