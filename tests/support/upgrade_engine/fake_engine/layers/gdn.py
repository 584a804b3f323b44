"""Linear attention and norms: ``import flashinfer`` attribute chains, an aliased
module, a function imported inside the function that calls it."""

import flashinfer
import flashinfer.norm as fi_norm


def rms_norm(x, weight, eps: float):
    return fi_norm.rmsnorm(x, weight, eps)


def fused_add_rms_norm(x, residual, weight, eps: float):
    flashinfer.fused_add_rmsnorm(x, residual, weight, eps)
    return x, residual


def gdn_prefill(q, k, v, g, beta, scale, state, cu_seqlens):
    from flashinfer.gdn_prefill import chunk_gated_delta_rule

    return chunk_gated_delta_rule(
        q, k, v, g, beta, scale, state, True, cu_seqlens=cu_seqlens, use_qk_l2norm_in_kernel=True
    )


def sample(logits, top_k, top_p):
    return flashinfer.sampling.top_k_top_p_sampling_from_logits(logits, top_k, top_p)


def fp8_gemm_runner():
    # not covered by fi_compat: left to FlashInfer
    return flashinfer.gemm.gemm_base.get_fp8_blockscale_gemm_runner_sm90()
