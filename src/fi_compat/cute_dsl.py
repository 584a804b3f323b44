"""Stable facade of FlashInfer's CuTe-DSL NVFP4 MoE family: the masked grouped GEMM
(``grouped_gemm_nt_masked``, 0.2.11.post3+), its scale-factor view
(``convert_sf_to_mma_layout``, 0.6.4+), the masked per-expert NVFP4 quantisers
(``scaled_fp4_grouped_quantize`` and ``silu_and_mul_scaled_nvfp4_experts_quantize``
0.5.0+, ``nvfp4_batched_quantize`` 0.4.0+) and the fused MoE
(``cute_dsl_fused_moe_nvfp4`` and the class ``CuteDslMoEWrapper``, 0.6.4+), one frozen
signature each (0.7.4's) over every release that has the function.

FlashInfer's own locations resolve to these objects too: ``fi_compat.cute_dsl.blockscaled_gemm``,
``fi_compat.cute_dsl.utils``, ``fi_compat.scaled_fp4_grouped_quantize``,
``fi_compat.activation.silu_and_mul_scaled_nvfp4_experts_quantize``,
``fi_compat.fused_moe.cute_dsl_fused_moe_nvfp4``, ``fi_compat.fused_moe.CuteDslMoEWrapper``
(``fi_compat._locations``).

The GEMM, the scale view and the fused MoE need the optional package
``nvidia-cutlass-dsl`` (a missing one is an ``OptionalDependencyMissingError`` with the
pip line); the GEMM and the MoE run on SM10x (SM100 / SM103; SM107 from 0.7.4) only,
the quantisers on SM100 and newer: other GPUs are refused before the launch.
``activation_type`` of ``cute_dsl_fused_moe_nvfp4`` (0.6.15) is taken on every release:
0.6.14 gets it as ``activation="silu"`` / ``"relu2"``, older releases (SwiGLU only) at
the default.
"""

from __future__ import annotations

from ._adapters.cute_dsl import (
    B12X_CLASS,
    B12X_METHODS,
    B12X_MODULE,
    METHODS,
    MOE_CLASS,
    MOE_MODULE,
    SPECS,
)
from ._core import OMIT, lazy_facades
from ._core.classes import WrapperClass, lazy_classes
from .enums import ActivationType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import torch
    from torch import Tensor

__all__: list[str] = []  # every entry point and wrapper class


def grouped_gemm_nt_masked(
    lhs: Any,
    rhs: Any,
    out: Tensor,
    masked_m: Tensor,
    *,
    ab_dtype: str,
    sf_dtype: str,
    c_dtype: str,
    sf_vec_size: int,
    topk_weights: Tensor | None = None,
    idx_src_info: Tensor | None = None,
    rank_src_info: Tensor | None = None,
    out_ptrs: Tensor | None = None,
    num_ranks: int = 0,
    dst_signals: Tensor | None = None,
    sm_count: int | None = None,
    barrier_flag_local: Tensor | None = None,
    barrier_flag_multicast: Tensor | None = None,
    is_combine_fusion: bool = False,
    is_swap_ab: bool = False,
    **kwargs: Any,
) -> Any:
    """Masked batched block-scaled GEMM ``out[:, :, g] = A_g @ B_g^T`` over the first
    ``masked_m[g]`` rows of each group; ``lhs`` / ``rhs`` are ``(values, scale factors)``
    pairs (``flashinfer.cute_dsl.blockscaled_gemm.grouped_gemm_nt_masked``).  Further
    keywords (``alpha``, ``alpha_dtype``) go to FlashInfer as they are.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def convert_sf_to_mma_layout(
    sf: Tensor,
    m: int,
    k: int,
    num_groups: int = 1,
    sf_vec_size: int = 16,
    **kwargs: Any,
) -> Tensor:
    """The 6-D MMA view ``(32, 4, m_tiles, 4, k_tiles, num_groups)`` of swizzled
    (128x4) scale factors, as the CuTe-DSL grouped GEMM reads them; a strided view, no
    copy.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def scaled_fp4_grouped_quantize(
    a: Tensor,
    mask: Tensor,
    a_global_sf: Tensor,
    nvfp4_4over6: Any = OMIT,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """NVFP4 quantisation of ``a`` ``[groups, m, k]`` (fp16 / bf16), only the first
    ``mask[g]`` rows of each group; ``(values, scale factors)`` in the layouts the
    masked grouped GEMM reads.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def silu_and_mul_scaled_nvfp4_experts_quantize(
    a: Tensor,
    mask: Tensor,
    a_global_sf: Tensor,
    nvfp4_4over6: Any = OMIT,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """``silu(gate) * up`` of ``a`` ``[experts, m, 2 * k]`` (gate half first), NVFP4
    quantised per expert over the first ``mask[e]`` rows; ``(values, scale factors)``.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def nvfp4_batched_quantize(
    a: Tensor,
    a_global_sf: Tensor,
    sf_vec_size: int = 16,
    *,
    nvfp4_4over6: Any = OMIT,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """NVFP4 quantisation of every batch of ``a`` ``[batch, m, k]`` (fp16 / bf16):
    ``(values [batch, m, k / 2], swizzled scale factors per batch)``.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def cute_dsl_fused_moe_nvfp4(
    x: Tensor,
    x_sf: Tensor | None,
    token_selected_experts: Tensor,
    token_final_scales: Tensor,
    w1_weight: Tensor,
    w1_weight_sf: Tensor,
    w1_alpha: Tensor,
    fc2_input_scale: Tensor | None,
    w2_weight: Tensor,
    w2_weight_sf: Tensor,
    w2_alpha: Tensor,
    num_experts: int,
    top_k: int,
    num_local_experts: int | None = None,
    local_expert_offset: int = 0,
    output_dtype: torch.dtype = OMIT,
    use_fused_finalize: bool = True,
    moe_output: Tensor | None = None,
    aux_stream: Any = None,
    enable_pdl: bool = True,
    activation_type: ActivationType = ActivationType.Swiglu,
    swiglu_alpha: float = OMIT,
    swiglu_beta: float = OMIT,
    swiglu_limit: float = OMIT,
    situ_beta: float | None = None,
    situ_linear_beta: float | None = None,
    *,
    quant_mode: str = "w4a4",
    per_token_scale: Tensor | None = None,
    localized_weights: Any = None,
    localized_streams: Any = None,
    localized_sm_count: int | None = None,
    localized_memset_stream: Any = None,
    localized_allow_nonlocalized: bool = False,
    autotune_use_cuda_graph: bool = False,
    nvfp4_4over6: Any = OMIT,
    clamped_relu2_limit: Tensor | None = None,
    **kwargs: Any,
) -> Tensor:
    """The CuTe-DSL NVFP4 MoE: ``x`` (NVFP4 values with ``x_sf``, or bf16 with
    ``x_sf=None`` where the release quantises itself) routed to ``top_k`` of
    ``num_experts`` experts, GEMM1 + activation + GEMM2 + finalize; returns the
    ``[tokens, hidden]`` output (``moe_output`` when given).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def _moe_init(
    self: Any,
    num_experts: int,
    top_k: int,
    hidden_size: int,
    intermediate_size: int,
    use_cuda_graph: bool = False,
    max_num_tokens: int | None = None,
    num_local_experts: int | None = None,
    local_expert_offset: int = 0,
    tile_size: int = 128,
    sf_vec_size: int = 16,
    output_dtype: torch.dtype = OMIT,
    device: str = "cuda",
    enable_pdl: bool = True,
    activation_type: ActivationType = ActivationType.Swiglu,
    swiglu_alpha: float = OMIT,
    swiglu_beta: float = OMIT,
    swiglu_limit: float = OMIT,
    *,
    situ_beta: float | None = None,
    situ_linear_beta: float | None = None,
    use_fused_finalize: bool = True,
    quant_mode: str = "w4a4",
    clamped_relu2_limit: Tensor | None = None,
    swap_ab: bool = False,
    **kwargs: Any,
) -> None:
    """Configure the CuTe-DSL NVFP4 MoE for ``num_experts`` experts (``num_local_experts``
    of them on this rank from ``local_expert_offset``), ``top_k`` per token.
    ``max_num_tokens`` sizes the CUDA-graph buffers of 0.6.4-0.6.13 (``None``: their
    default 4096) and is ignored from 0.6.14.

    {release_notes}
    """


def _moe_run(
    self: Any,
    x: Tensor,
    x_sf: Tensor | None,
    token_selected_experts: Tensor,
    token_final_scales: Tensor,
    w1_weight: Tensor,
    w1_weight_sf: Tensor,
    w1_alpha: Tensor,
    fc2_input_scale: Tensor | None,
    w2_weight: Tensor,
    w2_weight_sf: Tensor,
    w2_alpha: Tensor,
    tactic: Any = None,
    *,
    per_token_scale: Tensor | None = None,
    nvfp4_4over6: Any = OMIT,
    **kwargs: Any,
) -> Tensor:
    """Run the configured MoE on ``x`` routed by ``token_selected_experts`` /
    ``token_final_scales``; returns the ``[tokens, hidden]`` output.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated method


def b12x_fused_moe(
    x: Tensor,
    w1_weight: Tensor,
    w1_weight_sf: Tensor,
    w2_weight: Tensor,
    w2_weight_sf: Tensor,
    token_selected_experts: Tensor,
    token_final_scales: Tensor,
    num_experts: int,
    top_k: int,
    *,
    w1_alpha: Tensor,
    w2_alpha: Tensor,
    fc2_input_scale: Tensor | None = None,
    input_global_scale: Tensor | None = None,
    num_local_experts: int | None = None,
    expert_map: Tensor | None = None,
    output: Tensor | None = None,
    output_dtype: Any = OMIT,
    activation: str = "silu",
    swiglu_alpha: float = 1.702,
    swiglu_beta: float = 1.0,
    swiglu_limit: float | None = None,
    activation_precision: str = "fp4",
    quant_mode: str | None = None,
    source_format: str = "modelopt",
    **kwargs: Any,
) -> Tensor:
    """The b12x NVFP4 MoE on SM120 / SM121 (FlashInfer's ``b12x_fused_moe``): bf16 ``x``
    ``[tokens, hidden]`` routed by ``token_selected_experts`` / ``token_final_scales``
    ``[tokens, top_k]`` through the FP4 expert weights; returns ``[tokens, hidden]``
    (``output_dtype``, bf16 unless given).  Needs ``nvidia-cutlass-dsl`` at the release's
    minimum, checked at the first call.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def _b12x_init(
    self: Any,
    num_experts: int,
    top_k: int,
    hidden_size: int,
    intermediate_size: int,
    *,
    use_cuda_graph: bool = False,
    max_num_tokens: int = 4096,
    num_local_experts: int | None = None,
    expert_map: Tensor | None = None,
    output_dtype: Any = OMIT,
    device: Any = "cuda",
    activation: str = "silu",
    swiglu_alpha: float = 1.702,
    swiglu_beta: float = 1.0,
    swiglu_limit: float | None = None,
    activation_precision: str = "fp4",
    quant_mode: str | None = None,
    source_format: str = "modelopt",
    shared_static_workspace: Any = None,
    shared_dynamic_workspace: Any = None,
    shared_output: Tensor | None = None,
    **kwargs: Any,
) -> None:
    """Configure the b12x MoE (buffers for ``use_cuda_graph`` sized by
    ``max_num_tokens``).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated method


def _b12x_run(
    self: Any,
    x: Tensor,
    w1_weight: Tensor,
    w1_weight_sf: Tensor,
    w2_weight: Tensor,
    w2_weight_sf: Tensor,
    token_selected_experts: Tensor,
    token_final_scales: Tensor,
    *,
    w1_alpha: Tensor,
    w2_alpha: Tensor,
    fc2_input_scale: Tensor | None = None,
    input_global_scale: Tensor | None = None,
    **kwargs: Any,
) -> Tensor:
    """Run the configured b12x MoE on ``x``; returns the ``[tokens, hidden]`` output.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated method


# Each function is generated for the installed release on first access (PEP 562), so
# importing this module costs only the stubs above.
lazy_facades(globals(), SPECS.values())
CLASSES = {
    MOE_CLASS: WrapperClass(
        facade=__name__,
        name=MOE_CLASS,
        module=MOE_MODULE,
        methods={
            "__init__": (_moe_init, METHODS["__init__"]),
            "run": (_moe_run, METHODS["run"]),
        },
        doc="""The CuTe-DSL NVFP4 MoE as an object (FlashInfer's ``CuteDslMoEWrapper``,
        0.6.4+; SM10x, needs ``nvidia-cutlass-dsl``): a subclass of the installed class
        whose ``__init__`` and ``run`` have one frozen signature on every release.""",
    ),
    B12X_CLASS: WrapperClass(
        facade=__name__,
        name=B12X_CLASS,
        module=B12X_MODULE,
        methods={
            "__init__": (_b12x_init, B12X_METHODS["__init__"]),
            "run": (_b12x_run, B12X_METHODS["run"]),
        },
        doc="""The b12x NVFP4 MoE as an object (FlashInfer's ``B12xMoEWrapper``, 0.6.9+;
        SM120 / SM121, needs ``nvidia-cutlass-dsl`` at the release's minimum): a subclass
        of the installed class whose ``__init__`` and ``run`` have one frozen signature on
        every release.""",
    ),
}
lazy_classes(globals(), CLASSES)


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
