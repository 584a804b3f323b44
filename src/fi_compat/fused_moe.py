"""Stable facade of FlashInfer's fused MoE (``flashinfer.fused_moe``), 0.5.0-0.7.4.

One frozen signature per entry point over every release that has it; model code written
against it runs unchanged, positional or keyword, on each of them.  Importing this
module reads the installed ``flashinfer-python`` version from package metadata
(FlashInfer is imported on the first call) and builds every function for that release.
``<function>.adapter.describe()`` says what was chosen; ``<function>.raw()`` is
FlashInfer's own function.

* enum parameters take :mod:`fi_compat.enums` members (re-exported here), translated by
  member name to the release's integers or members;
* parameters added mid-list are dropped at their neutral values on older releases
  (else a typed error names the release), removed ones (``tile_tokens_dim``) are
  accepted keyword-only and handled per release, renamed ones (``gated_act_type``)
  are mapped by meaning;
* scale tensors are accepted as the caller has them and handed over in the layout the
  release reads (see each function); ``routing_logits`` in the dtype it accepts;
* :func:`supports_cutlass_moe` / :func:`supports_trtllm_moe` answer for this release
  and GPU from the one known-issues table;
* the autotuner's bucket arithmetic of ``flashinfer.fused_moe.utils``
  (:func:`get_hybrid_num_tokens_buckets`, :func:`map_to_hybrid_bucket_uncapped`) is
  served from 0.6.10, also as ``fi_compat.fused_moe.utils``; older releases tune over
  other buckets, so they get ``UnsupportedFlashInferVersionError`` naming 0.6.10.
"""

from __future__ import annotations

from ._adapters.fused_moe import BUCKETS, HELPERS, LAYOUTS, SPECS
from ._core import OMIT, lazy_facades
from .device import supports_cutlass_moe, supports_trtllm_moe
from .enums import (
    ActivationType,
    Fp8QuantizationType,
    GatedActType,
    RoutingMethodType,
    SfLayout,
    WeightLayout,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import torch
    from torch import Tensor

__all__ = [
    "ActivationType",
    "Fp8QuantizationType",
    "GatedActType",
    "RoutingMethodType",
    "SfLayout",
    "WeightLayout",
    "supports_cutlass_moe",
    "supports_trtllm_moe",
]  # and every entry point (lazy_facades)


# Docstring parts shared by several facades ({name} in a stub docstring, filled when the
# function is built), so the prose exists once.
DOCS = {
    "routing_logits_doc": """routing_logits : Tensor
        ``[num_tokens, num_experts]``; float32 or bfloat16.  fi_compat hands each
        release the dtype its launcher accepts for the routing method (before 0.6.8 the
        FP8 launchers demand float32 for ``DeepSeekV3`` and bfloat16 otherwise; every
        launcher demands bfloat16 with routing scales on input) and copies only then.""",
    "topk_ids_doc": """topk_ids : Tensor or (Tensor, Tensor)
        Precomputed routing, ``[num_tokens, top_k]`` (packed ids/scores, or a pair of
        ids and weights where the release takes one).""",
    "enums_doc": """routing_method_type, activation_type, weight_layout, fp8_quantization_type
        :mod:`fi_compat.enums` members (FlashInfer's own members work too), translated
        by name to the installed release's integers (they moved in 0.6.8, 0.6.11, 0.6.13,
        0.6.14, 0.6.16, 0.6.18).  A member the release lacks raises
        ``UnsupportedParameterError`` naming the first release that has it; raw ints are
        accepted only where they named the same member in every release.""",
    "fp4_scales_doc": """hidden_states : Tensor
        NVFP4 activations (``uint8``, two values per byte, ``[num_tokens, hidden // 2]``),
        MXFP8 (``float8_e4m3fn``) or bfloat16 (MXFP4 weights x BF16 activations).
    hidden_states_scale : Tensor, optional
        Activation block scales (NVFP4: one per 16 values; MXFP8: one per 32), as the
        caller has them: 2-D ``[num_tokens, hidden // block]`` or the flat 1-D buffer
        (viewed as 2-D, never copied) -- every release asserts the 2-D form, so 0.6.7-era
        code that passed the flat buffer runs unchanged.  ``None`` with bf16 activations.
    hidden_states_scale_layout : SfLayout, optional
        Linear is the only layout any release reads: fi_compat passes
        ``SfLayout.layout_linear`` on 0.7.0+ (whose ``None`` is deprecated) and refuses
        swizzled layouts on every release.""",
    "fp8_block_scales_doc": """hidden_states : Tensor
        ``float8_e4m3fn`` ``[num_tokens, hidden]``.
    hidden_states_scale : Tensor
        DeepSeek FP8 (default): float32 ``[hidden // 128, num_tokens]``, the layout
        every release reads (and what vLLM and SGLang pass: ``a_sf.t().contiguous()``).
        The dimensions are taken by position, never guessed from the sizes: a
        token-major ``[num_tokens, hidden // 128]`` or flat tensor is refused (pass
        ``a_sf.t()``), and at ``num_tokens == hidden // 128`` a tensor means what it
        means at any other size.  A strided tensor of that shape (``a_sf.t()``) is made
        contiguous, since the kernels read its memory row by row (one copy; none for a
        contiguous one).  ``MxFp8`` (0.6.4+): ``uint8`` ``[num_tokens, hidden // 32]``
        or flat, like the FP4 path.""",
    "output_doc": """output : Tensor, optional
        The result buffer: bfloat16 ``[num_tokens, hidden]`` (``hidden`` unpacked),
        contiguous, on ``hidden_states``' device, checked before the launch on every
        release (flashinfer 0.6.14's rule).  ``[num_tokens, valid_hidden_size]`` when
        ``valid_hidden_size`` is given; FP4 entry points also take a narrower buffer
        from 0.6.0 (its columns are written).  Where the release lacks ``output``
        (bf16 and fp8 entry points before 0.6.14) the finalised result is copied into
        it; with ``do_finalize=False`` it is left alone (the intermediates are
        returned, as 0.7.4 does).""",
    "tail_doc": """**kwargs
        Passed through to FlashInfer unchanged (options fi_compat does not know yet).

    Release behaviour (generated from the adapter table)
    ----------------------------------------------------
    {positional}
    {release_notes}

    Raises
    ------
    MissingArgumentError, InvalidArgumentError
        Before any launch, from metadata only: wrong ranks/shapes/devices of the routing
        inputs and ``hidden_states``, scale tensors of a shape no release reads, an
        ``output`` buffer of another shape, dtype or device, or not contiguous.
    UnsupportedParameterError
        A parameter or enum member the installed release lacks, left at a non-neutral
        value.
    FlashInferNotInstalledError, UnsupportedFlashInferVersionError, FlashInferImportError,
    OptionalDependencyMissingError
        At the first call, from the import of FlashInfer (explained with the known issue
        when one applies, e.g. ``cpu-torch-dsl-import-crash``).""",
}


def trtllm_fp4_block_scale_moe(
    routing_logits: Tensor,
    routing_bias: Tensor | None,
    hidden_states: Tensor,
    hidden_states_scale: Tensor | None,
    gemm1_weights: Tensor,
    gemm1_weights_scale: Tensor,
    gemm1_bias: Tensor | None,
    gemm1_alpha: Tensor | None,
    gemm1_beta: Tensor | None,
    gemm1_clamp_limit: Tensor | None,
    gemm2_weights: Tensor,
    gemm2_weights_scale: Tensor,
    gemm2_bias: Tensor | None,
    output1_scale_scalar: Tensor | None,
    output1_scale_gate_scalar: Tensor | None,
    output2_scale_scalar: Tensor | None,
    num_experts: int,
    top_k: int,
    n_group: int | None,
    topk_group: int | None,
    intermediate_size: int,
    local_expert_offset: int,
    local_num_experts: int,
    routed_scaling_factor: float | None,
    *,
    routing_method_type: RoutingMethodType | int = RoutingMethodType.Default,
    do_finalize: bool = True,
    enable_pdl: bool | None = None,
    activation_type: ActivationType | int = ActivationType.Swiglu,
    per_token_scale: Tensor | None = None,
    output: Tensor | None = None,
    tune_max_num_tokens: int = 8192,
    norm_topk_prob: bool = True,
    routing_replay_out: Tensor | None = None,
    num_fused_shared_experts: int | None = None,
    valid_hidden_size: int | None = None,
    valid_intermediate_size: int | None = None,
    hidden_states_scale_layout: SfLayout | int | None = None,
    workspace_buffer: Tensor | None = None,
    nvfp4_4over6: Any | None = OMIT,
    tile_tokens_dim: int | None = None,
    gated_act_type: GatedActType | int | None = None,
    **kwargs: Any,
) -> list[Tensor]:
    r"""TRTLLM-gen fused MoE with FP4 weights (NVFP4 / MXFP4), routing inside, 0.5.0+.

    The positional order is 0.7.4's; 0.5.x's ``tile_tokens_dim`` (positional there,
    never read by the kernel, removed in 0.6.0) and 0.5.0-0.6.2's ``gated_act_type``
    (renamed ``activation_type`` in 0.6.3) are keyword-only here.  FlashInfer is always
    called by keyword.  TRTLLM-gen MoE runs on SM10x (and SM12x from 0.6.7):
    ``supports_trtllm_moe()``.

    Parameters
    ----------
    {routing_logits_doc}
    {fp4_scales_doc}
    {enums_doc}
    activation_type : ActivationType
        ``Swiglu`` by default on every release.  Before 0.6.3 the parameter was
        ``gated_act_type`` with ``GatedActType`` values (SwiGlu=0, GeGlu=1): fi_compat
        maps ``Swiglu``/``Geglu`` by meaning; the raw integers 0 and 1 are refused
        (0 is SwiGlu there and Gelu here).
    gated_act_type : GatedActType, optional
        The pre-0.6.3 spelling, accepted on every release and mapped by meaning.
    tile_tokens_dim : int, optional
        Forwarded to 0.5.x, which only logs it (the default ``None`` satisfies 0.5.x's
        required parameter without its deprecation warning); dropped from 0.6.0 on.
    {output_doc}
    {tail_doc}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def trtllm_fp4_block_scale_routed_moe(
    topk_ids: Tensor | tuple[Tensor, Tensor],
    routing_bias: Tensor | None,
    hidden_states: Tensor,
    hidden_states_scale: Tensor | None,
    gemm1_weights: Tensor,
    gemm1_weights_scale: Tensor,
    gemm1_bias: Tensor | None,
    gemm1_alpha: Tensor | None,
    gemm1_beta: Tensor | None,
    gemm1_clamp_limit: Tensor | None,
    gemm2_weights: Tensor,
    gemm2_weights_scale: Tensor,
    gemm2_bias: Tensor | None,
    output1_scale_scalar: Tensor | None,
    output1_scale_gate_scalar: Tensor | None,
    output2_scale_scalar: Tensor | None,
    num_experts: int,
    top_k: int,
    n_group: int | None,
    topk_group: int | None,
    intermediate_size: int,
    local_expert_offset: int,
    local_num_experts: int,
    routed_scaling_factor: float | None,
    *,
    routing_method_type: RoutingMethodType | int = RoutingMethodType.Default,
    do_finalize: bool = True,
    enable_pdl: bool | None = None,
    activation_type: ActivationType | int = ActivationType.Swiglu,
    per_token_scale: Tensor | None = None,
    output: Tensor | None = None,
    tune_max_num_tokens: int = 8192,
    gemm1_lora_delta: Tensor | None = None,
    valid_hidden_size: int | None = None,
    valid_intermediate_size: int | None = None,
    num_fused_shared_experts: int | None = None,
    hidden_states_scale_layout: SfLayout | int | None = None,
    workspace_buffer: Tensor | None = None,
    nvfp4_4over6: Any | None = OMIT,
    routing_metadata: Any | None = None,
    tile_tokens_dim: int | None = None,
    gated_act_type: GatedActType | int | None = None,
    **kwargs: Any,
) -> list[Tensor]:
    r"""TRTLLM-gen fused MoE with FP4 weights and precomputed routing, 0.5.0+.

    Same conventions as :func:`trtllm_fp4_block_scale_moe` (order 0.7.4's; legacy
    ``tile_tokens_dim`` / ``gated_act_type`` keyword-only).

    Parameters
    ----------
    {topk_ids_doc}
    {fp4_scales_doc}
    {enums_doc}
    {output_doc}
    {tail_doc}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def trtllm_fp8_block_scale_moe(
    routing_logits: Tensor,
    routing_bias: Tensor | None,
    hidden_states: Tensor,
    hidden_states_scale: Tensor,
    gemm1_weights: Tensor,
    gemm1_weights_scale: Tensor,
    gemm2_weights: Tensor,
    gemm2_weights_scale: Tensor,
    num_experts: int,
    top_k: int,
    n_group: int | None,
    topk_group: int | None,
    intermediate_size: int,
    local_expert_offset: int,
    local_num_experts: int,
    routed_scaling_factor: float | None,
    *,
    routing_method_type: RoutingMethodType | int = RoutingMethodType.Default,
    use_shuffled_weight: bool = False,
    weight_layout: WeightLayout | int = WeightLayout.MajorK,
    do_finalize: bool = True,
    enable_pdl: bool | None = None,
    tune_max_num_tokens: int = 8192,
    fp8_quantization_type: Fp8QuantizationType | int = Fp8QuantizationType.DeepSeekFp8,
    num_fused_shared_experts: int | None = None,
    activation_type: ActivationType | int = ActivationType.Swiglu,
    norm_topk_prob: bool = True,
    routing_replay_out: Tensor | None = None,
    gemm1_alpha: Tensor | None = None,
    gemm1_beta: Tensor | None = None,
    gemm1_clamp_limit: Tensor | None = None,
    output: Tensor | None = None,
    valid_hidden_size: int | None = None,
    valid_intermediate_size: int | None = None,
    gemm1_bias: Tensor | None = None,
    gemm2_bias: Tensor | None = None,
    workspace_buffer: Tensor | None = None,
    tile_tokens_dim: int | None = None,
    **kwargs: Any,
) -> Tensor | list[Tensor]:
    r"""TRTLLM-gen fused MoE with FP8 block-scaled weights (DeepSeek FP8 or MXFP8), 0.5.0+.

    The positional order is 0.7.4's (``fp8_quantization_type`` 0.6.4, ``do_finalize``
    0.6.5, ``num_fused_shared_experts`` 0.6.15 ... were inserted mid-list);
    ``tile_tokens_dim`` is keyword-only.

    Parameters
    ----------
    {routing_logits_doc}
    {fp8_block_scales_doc}
    {enums_doc}
    use_shuffled_weight, do_finalize, tune_max_num_tokens
        Always forwarded, so the same call means the same on every release.
    {output_doc}
    {tail_doc}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def trtllm_fp8_block_scale_routed_moe(
    topk_ids: Tensor | tuple[Tensor, Tensor],
    routing_bias: Tensor | None,
    hidden_states: Tensor,
    hidden_states_scale: Tensor,
    gemm1_weights: Tensor,
    gemm1_weights_scale: Tensor,
    gemm2_weights: Tensor,
    gemm2_weights_scale: Tensor,
    num_experts: int,
    top_k: int,
    n_group: int | None,
    topk_group: int | None,
    intermediate_size: int,
    local_expert_offset: int,
    local_num_experts: int,
    routed_scaling_factor: float | None,
    routing_method_type: RoutingMethodType | int = RoutingMethodType.Default,
    use_shuffled_weight: bool = False,
    weight_layout: WeightLayout | int = WeightLayout.MajorK,
    *,
    do_finalize: bool = True,
    enable_pdl: bool | None = None,
    gemm1_lora_delta: Tensor | None = None,
    output: Tensor | None = None,
    tune_max_num_tokens: int = 8192,
    fp8_quantization_type: Fp8QuantizationType | int = Fp8QuantizationType.DeepSeekFp8,
    activation_type: ActivationType | int = ActivationType.Swiglu,
    gemm1_alpha: Tensor | None = None,
    gemm1_beta: Tensor | None = None,
    gemm1_clamp_limit: Tensor | None = None,
    valid_hidden_size: int | None = None,
    valid_intermediate_size: int | None = None,
    workspace_buffer: Tensor | None = None,
    **kwargs: Any,
) -> Tensor | list[Tensor]:
    r"""TRTLLM-gen fused MoE with FP8 block-scaled weights and precomputed routing, 0.6.3+.

    Parameters
    ----------
    {topk_ids_doc}
    {fp8_block_scales_doc}
    {enums_doc}
    {output_doc}
    {tail_doc}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def trtllm_fp8_per_tensor_scale_moe(
    routing_logits: Tensor,
    routing_bias: Tensor | None,
    hidden_states: Tensor,
    gemm1_weights: Tensor,
    output1_scales_scalar: Tensor,
    output1_scales_gate_scalar: Tensor,
    gemm2_weights: Tensor,
    output2_scales_scalar: Tensor,
    num_experts: int,
    top_k: int,
    n_group: int | None,
    topk_group: int | None,
    intermediate_size: int,
    local_expert_offset: int,
    local_num_experts: int,
    routed_scaling_factor: float | None,
    use_routing_scales_on_input: bool,
    *,
    routing_method_type: RoutingMethodType | int = RoutingMethodType.Default,
    do_finalize: bool = True,
    enable_pdl: bool | None = None,
    tune_max_num_tokens: int = 8192,
    activation_type: ActivationType | int = ActivationType.Swiglu,
    norm_topk_prob: bool = True,
    routing_replay_out: Tensor | None = None,
    output: Tensor | None = None,
    gemm1_clamp_limit: Tensor | None = None,
    workspace_buffer: Tensor | None = None,
    tile_tokens_dim: int | None = None,
    **kwargs: Any,
) -> Tensor | list[Tensor]:
    r"""TRTLLM-gen fused MoE with FP8 per-tensor-scaled weights, 0.5.0+.

    The positional order is 0.7.4's; ``tile_tokens_dim`` (0.5.x, default 8 then
    ``None``, only logged) is keyword-only.

    Parameters
    ----------
    {routing_logits_doc}
    {enums_doc}
    {output_doc}
    {tail_doc}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def trtllm_fp8_per_tensor_scale_routed_moe(
    topk_ids: Tensor | tuple[Tensor, Tensor],
    routing_bias: Tensor | None,
    hidden_states: Tensor,
    gemm1_weights: Tensor,
    output1_scales_scalar: Tensor,
    output1_scales_gate_scalar: Tensor,
    gemm2_weights: Tensor,
    output2_scales_scalar: Tensor,
    num_experts: int,
    top_k: int,
    n_group: int | None,
    topk_group: int | None,
    intermediate_size: int,
    local_expert_offset: int,
    local_num_experts: int,
    routed_scaling_factor: float | None,
    use_routing_scales_on_input: bool,
    routing_method_type: RoutingMethodType | int = RoutingMethodType.Default,
    do_finalize: bool = True,
    enable_pdl: bool | None = None,
    tune_max_num_tokens: int = 8192,
    activation_type: ActivationType | int = ActivationType.Swiglu,
    routing_replay_out: Tensor | None = None,
    output: Tensor | None = None,
    gemm1_clamp_limit: Tensor | None = None,
    workspace_buffer: Tensor | None = None,
    **kwargs: Any,
) -> Tensor | list[Tensor]:
    r"""TRTLLM-gen fused MoE with FP8 per-tensor scales and precomputed routing, 0.6.17+.

    Parameters
    ----------
    {topk_ids_doc}
    {enums_doc}
    {output_doc}
    {tail_doc}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def trtllm_bf16_moe(
    routing_logits: Tensor,
    routing_bias: Tensor | None,
    hidden_states: Tensor,
    gemm1_weights: Tensor,
    gemm2_weights: Tensor,
    num_experts: int,
    top_k: int,
    n_group: int | None,
    topk_group: int | None,
    intermediate_size: int,
    local_expert_offset: int,
    local_num_experts: int,
    *,
    routed_scaling_factor: float | None = None,
    routing_method_type: RoutingMethodType | int = RoutingMethodType.Default,
    use_shuffled_weight: bool = True,
    weight_layout: WeightLayout | int = WeightLayout.BlockMajorK,
    do_finalize: bool = True,
    enable_pdl: bool = True,
    tune_max_num_tokens: int = 8192,
    activation_type: ActivationType | int = ActivationType.Swiglu,
    norm_topk_prob: bool = True,
    routing_replay_out: Tensor | None = None,
    gemm1_alpha: Tensor | None = None,
    gemm1_beta: Tensor | None = None,
    gemm1_clamp_limit: Tensor | None = None,
    output: Tensor | None = None,
    workspace_buffer: Tensor | None = None,
    **kwargs: Any,
) -> Tensor | list[Tensor]:
    r"""TRTLLM-gen fused MoE with bfloat16 weights, routing inside, 0.5.3+.

    Parameters
    ----------
    {routing_logits_doc}
    {enums_doc}
    routed_scaling_factor : float, optional
        flashinfer>=0.6.0; earlier releases take no scaling factor (``None`` dropped,
        else ``UnsupportedParameterError``).
    {output_doc}
    {tail_doc}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def trtllm_bf16_routed_moe(
    topk_ids: Tensor | tuple[Tensor, Tensor],
    hidden_states: Tensor,
    gemm1_weights: Tensor,
    gemm2_weights: Tensor,
    num_experts: int,
    top_k: int,
    n_group: int | None,
    topk_group: int | None,
    intermediate_size: int,
    local_expert_offset: int,
    local_num_experts: int,
    routed_scaling_factor: float | None = None,
    routing_method_type: RoutingMethodType | int = RoutingMethodType.Default,
    use_shuffled_weight: bool = True,
    weight_layout: WeightLayout | int = WeightLayout.BlockMajorK,
    do_finalize: bool = True,
    enable_pdl: bool = True,
    *,
    gemm1_lora_delta: Tensor | None = None,
    tune_max_num_tokens: int = 8192,
    activation_type: ActivationType | int = ActivationType.Swiglu,
    routing_replay_out: Tensor | None = None,
    gemm1_alpha: Tensor | None = None,
    gemm1_beta: Tensor | None = None,
    gemm1_clamp_limit: Tensor | None = None,
    output: Tensor | None = None,
    workspace_buffer: Tensor | None = None,
    **kwargs: Any,
) -> Tensor | list[Tensor]:
    r"""TRTLLM-gen fused MoE with bfloat16 weights and precomputed routing, 0.6.5+.

    Parameters
    ----------
    {topk_ids_doc}
    {enums_doc}
    {output_doc}
    {tail_doc}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def trtllm_mxint4_block_scale_moe(
    routing_logits: Tensor,
    routing_bias: Tensor | None,
    hidden_states: Tensor,
    gemm1_weights: Tensor,
    gemm1_weights_scale: Tensor,
    gemm1_alpha: Tensor | None,
    gemm1_beta: Tensor | None,
    gemm1_clamp_limit: Tensor | None,
    gemm2_weights: Tensor,
    gemm2_weights_scale: Tensor,
    num_experts: int,
    top_k: int,
    n_group: int | None,
    topk_group: int | None,
    intermediate_size: int,
    local_expert_offset: int,
    local_num_experts: int,
    routed_scaling_factor: float | None,
    routing_method_type: RoutingMethodType | int = RoutingMethodType.Default,
    *,
    do_finalize: bool = True,
    enable_pdl: bool | None = None,
    output: Tensor | None = None,
    tune_max_num_tokens: int = 8192,
    norm_topk_prob: bool = True,
    routing_replay_out: Tensor | None = None,
    valid_hidden_size: int | None = None,
    valid_intermediate_size: int | None = None,
    workspace_buffer: Tensor | None = None,
    **kwargs: Any,
) -> list[Tensor]:
    r"""TRTLLM-gen fused MoE with MXINT4 block-scaled weights and bf16 activations, 0.6.0+.

    Parameters
    ----------
    {routing_logits_doc}
    {enums_doc}
    {output_doc}
    {tail_doc}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def cutlass_fused_moe(
    input: Tensor,
    token_selected_experts: Tensor,
    token_final_scales: Tensor,
    fc1_expert_weights: Tensor,
    fc2_expert_weights: Tensor,
    output_dtype: torch.dtype,
    quant_scales: list[Tensor],
    fc1_expert_biases: Tensor | None = None,
    fc2_expert_biases: Tensor | None = None,
    input_sf: Tensor | None = None,
    swiglu_alpha: Tensor | None = None,
    swiglu_beta: Tensor | None = None,
    swiglu_limit: Tensor | None = None,
    tp_size: int = 1,
    tp_rank: int = 0,
    ep_size: int = 1,
    ep_rank: int = 0,
    cluster_size: int = 1,
    cluster_rank: int = 0,
    output: Tensor | None = None,
    enable_alltoall: bool = False,
    use_deepseek_fp8_block_scale: bool = False,
    use_w4_group_scaling: bool = False,
    use_mxfp8_act_scaling: bool = False,
    min_latency_mode: bool = False,
    *,
    use_packed_weights: bool = False,
    use_wfp4afp8_humming: bool = False,
    tune_max_num_tokens: int = 8192,
    enable_pdl: bool | None = None,
    activation_type: ActivationType | int = ActivationType.Swiglu,
    swizzled_input_sf: bool = True,
    use_fused_finalize: bool | None = None,
    profile_ids: list[int] | None = None,
    workspace_buffer: Tensor | None = None,
    clamped_relu2_limit: Tensor | None = None,
    situ_beta: Tensor | None = None,
    situ_linear_beta: Tensor | None = None,
    backend: str = "cutlass",
    nvfp4_4over6: Any | None = OMIT,
    **kwargs: Any,
) -> Tensor | list[Tensor]:
    r"""CUTLASS fused MoE (SM89/SM90/SM100 family/SM110/SM120 family), 0.5.0+.

    Runs on the architectures ``supports_cutlass_moe()`` lists (its first call JIT-
    builds the CUTLASS module for the GPU unless ``flashinfer-jit-cache`` has it: on
    an H200 with 16 cores the SM90 build took > 9 minutes for a quarter of its 181
    compile steps, see tests/gpu/README.md).

    Parameters
    ----------
    input : Tensor
        ``[num_tokens, hidden]`` activations (bf16/fp16, or quantised with ``input_sf``).
    token_selected_experts, token_final_scales : Tensor
        ``[num_tokens, top_k]`` expert ids (int32) and routing weights (float32).
    activation_type : ActivationType
        Translated by name per release (``Swiglu`` by default everywhere).
    use_fused_finalize : bool, optional
        flashinfer>=0.6.15.  ``None`` means what 0.7.4 makes of it, on every release
        that has the parameter: fused unless ``torch.use_deterministic_algorithms(True)``
        (0.6.15-0.7.3 default to ``True`` whatever the mode; fi_compat resolves ``None``
        for them).  Releases without it finalize their own way: ``None`` is dropped,
        ``True``/``False`` raise ``UnsupportedParameterError``.
    backend : str
        ``"cutlass"`` (flashinfer>=0.7.1 also takes others; older releases drop
        ``"cutlass"`` and refuse the rest).
    {tail_doc}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


# -- helpers around the MoE kernels (top-level FlashInfer functions) -----------------


def shuffle_matrix_a(input_tensor: Tensor, epilogue_tile_m: int, **kwargs: Any) -> Tensor:
    """Reorder rows of a weight matrix for the TRTLLM-gen GEMMs (``flashinfer.shuffle_matrix_a``;
    module ``fp4_quantization``, ``quantization.fp4_quantization`` from 0.6.7).  Unchanged
    0.5.0-0.7.4."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def shuffle_matrix_sf_a(
    input_tensor: Tensor, epilogue_tile_m: int, num_elts_per_sf: int = 16, **kwargs: Any
) -> Tensor:
    """Reorder a block-scale matrix like :func:`shuffle_matrix_a` and interleave it
    (``flashinfer.shuffle_matrix_sf_a``).  Unchanged 0.5.0-0.7.4."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def block_scale_interleave(
    unswizzled_sf: Tensor, *, out: Tensor | None = None, **kwargs: Any
) -> Tensor:
    """Swizzle linear block scales into the 128x4 layout (``flashinfer.block_scale_interleave``).

    CUDA tensors only (a CPU tensor is refused before the call: FlashInfer 0.4.0+ reads
    the device's compute capability first).  ``out`` (flashinfer>=0.7.2.post1) is emulated
    before: the result is copied into ``out`` and ``out`` is returned."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def reorder_rows_for_gated_act_gemm(x: Tensor, **kwargs: Any) -> Tensor:
    """Interleave the gate and up halves of a gated-activation weight
    (``flashinfer.reorder_rows_for_gated_act_gemm``).  Unchanged 0.5.0-0.7.4."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


# -- MoE weight-layout helpers (FlashInfer's fused_moe.core / fused_moe / utils) ---------


def get_w2_permute_indices_with_cache(
    _cache_permute_indices: Any,  # the caller's memo dict (unchecked: handed on as a keyed view)
    dst_w2_weight: Tensor,
    epilogue_tile_m: int,
    num_elts_per_sf: int | None = None,
    is_gated_act_gemm: bool | None = None,
    **kwargs: Any,
) -> Tensor:
    """Row permutation of an FC2 weight (or, with ``num_elts_per_sf``, its block scales)
    for the TRTLLM-gen MoE kernels, memoised in ``_cache_permute_indices``
    (``flashinfer.fused_moe.core.get_w2_permute_indices_with_cache``).

    The dict is keyed as 0.7.4 keys it on every release, ``("w2", shape,
    epilogue_tile_m, num_elts_per_sf, is_gated_act_gemm)``: before 0.6.18 FlashInfer
    keyed it by shape only, and returned a cached permutation computed for another
    ``epilogue_tile_m``.  ``is_gated_act_gemm`` (0.7.0+) only separates cache entries.
    {release_notes}"""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def maybe_get_cached_w3_w1_permute_indices(
    _cache_permute_indices: Any,  # the caller's memo dict (unchecked: handed on as a keyed view)
    dst_w3_w1_weight: Tensor,
    epilogue_tile_m: int,
    num_elts_per_sf: int | None = None,
    is_gated_act_gemm: bool = True,
    **kwargs: Any,
) -> Tensor:
    """Row permutation of a fused FC1 (w3/w1) weight or its block scales: the
    gated-activation interleave (with ``is_gated_act_gemm``), then the TRTLLM-gen shuffle,
    memoised in ``_cache_permute_indices``
    (``flashinfer.fused_moe.core._maybe_get_cached_w3_w1_permute_indices``, also reachable
    here under that name).

    The dict is keyed as 0.7.4 keys it on every release, ``("w3_w1", shape,
    epilogue_tile_m, num_elts_per_sf, is_gated_act_gemm)``: before 0.6.18 FlashInfer keyed
    it by shape only and returned a permutation cached for another ``epilogue_tile_m`` or
    ``is_gated_act_gemm``.  ``is_gated_act_gemm=False`` needs flashinfer>=0.6.3.
    {release_notes}"""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def get_reorder_rows_for_gated_act_gemm_row_indices(x: Tensor, **kwargs: Any) -> Tensor:
    """The int64 row permutation :func:`reorder_rows_for_gated_act_gemm` applies
    (``flashinfer.fused_moe.core.get_reorder_rows_for_gated_act_gemm_row_indices``).
    {release_notes}"""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def convert_to_block_layout(input_tensor: Tensor, blockK: int, **kwargs: Any) -> Tensor:
    """``[M, K]`` -> contiguous ``[K // blockK, M, blockK]``
    (``flashinfer.fused_moe.convert_to_block_layout``).  {release_notes}"""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def get_shuffle_matrix_a_row_indices(
    input_tensor: Tensor, epilogue_tile_m: int, **kwargs: Any
) -> Tensor:
    """The int64 row permutation :func:`shuffle_matrix_a` applies (16- or 32-row blocks
    by ``epilogue_tile_m``; ``flashinfer.utils.get_shuffle_matrix_a_row_indices``).
    {release_notes}"""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def get_shuffle_matrix_sf_a_row_indices(
    input_tensor: Tensor, epilogue_tile_m: int, num_elts_per_sf: int = 16, **kwargs: Any
) -> Tensor:
    """The row permutation of a block-scale matrix
    (``flashinfer.utils.get_shuffle_matrix_sf_a_row_indices``).  bfloat16 input and
    ``num_elts_per_sf=32`` need flashinfer>=0.6.0, a column count not a multiple of 4
    needs 0.6.12 (refused before: the release asserts).  {release_notes}"""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def interleave_moe_scales_for_sm90_mixed_gemm(
    scales: Tensor, group_size: int = 32, **kwargs: Any
) -> Tensor:
    """Interleave MoE weight block scales for the SM90 mixed-input CUTLASS MoE GEMM
    (``flashinfer.fused_moe.interleave_moe_scales_for_sm90_mixed_gemm``).

    The result is the layout the installed release's kernel reads, so it differs by
    release: ``[E, K/128, rows * 128/group_size]`` on 0.6.10-0.6.12, ``[E, rows/64,
    K/128, folded_m, 128/bits]`` from 0.6.13.  Non-uint8 scales need flashinfer>=0.6.13.
    {release_notes}"""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def interleave_moe_weights_for_sm90_mixed_gemm(
    weight: Tensor, quant_type: str = "fp4", **kwargs: Any
) -> Tensor:
    """Interleave packed 4-bit MoE weights for the SM90 mixed-input CUTLASS MoE GEMM (a
    CUDA kernel; ``flashinfer.fused_moe.interleave_moe_weights_for_sm90_mixed_gemm``).
    ``quant_type="fp4_fp8"`` needs flashinfer>=0.6.13.  {release_notes}"""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def fused_topk_deepseek(
    scores: Tensor,
    bias: Tensor,
    n_group: int,
    topk_group: int,
    topk: int,
    routed_scaling_factor: float,
    topk_values: Tensor,
    topk_indices: Tensor,
    launch_with_pdl: bool = True,
    routing_replay_out: Tensor | None = None,
    *,
    backend: str = "default",
    **kwargs: Any,
) -> None:
    """DeepSeek-V3 grouped top-k routing, written into ``topk_values`` / ``topk_indices``
    (``flashinfer.fused_moe.fused_topk_deepseek``).  ``routing_replay_out`` needs
    flashinfer>=0.6.8, ``backend="cake"`` 0.7.0.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def get_hybrid_num_tokens_buckets(
    max_num_tokens: int, min_num_tokens: int = 1, **kwargs: Any
) -> tuple[int, ...]:
    """The autotuner's token-count buckets up to ``max_num_tokens``, ascending and
    distinct: doubling from ``min_num_tokens`` up to 256, steps of 256 to 2048, of 512 to
    4096, doubling from 8192, and ``max_num_tokens`` itself
    (``flashinfer.fused_moe.utils``, host arithmetic).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def map_to_hybrid_bucket_uncapped(x: int, **kwargs: Any) -> int:
    """The hybrid bucket of ``x`` tokens, rounding up (1 for ``x <= 0``), without a
    ``max_num_tokens`` clamp: the ``map_to_tuning_buckets`` of a ``DynamicTensorSpec``
    tuned over :func:`get_hybrid_num_tokens_buckets` (``flashinfer.fused_moe.utils``).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


# Each function is generated for the installed release on first access (PEP 562), so
# importing this module costs only the stubs above.
lazy_facades(
    globals(),
    [*SPECS.values(), *HELPERS.values(), *LAYOUTS.values(), *BUCKETS.values()],
    DOCS,
    aliases={"_maybe_get_cached_w3_w1_permute_indices": "maybe_get_cached_w3_w1_permute_indices"},
)


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
