"""Stable facade of ``flashinfer.comm``: the fused all-reduce, the MoE all-to-all and the
DCP all-to-all, one frozen signature each over every release that has them.

Facades (generated per installed release; call FlashInfer by keyword, refuse what the
release cannot do with a typed error naming the first release that can):
``allreduce_fusion`` / ``create_allreduce_fusion_workspace`` (0.6.0+; 0.6.8 inserted
``trigger_completion_at_end`` after ``launch_with_pdl``, so everything after
``launch_with_pdl`` is keyword-only here), ``trtllm_allreduce_fusion`` (0.2.9+),
``trtllm_create_ipc_workspace_for_all_reduce_fusion`` /
``trtllm_destroy_ipc_workspace_for_all_reduce_fusion`` (0.2.7.post1+),
``trtllm_custom_all_reduce`` (0.2.7.post1-0.6.18.post1; 0.7.0 removed it),
``MoeAlltoAll`` (``__init__`` / ``dispatch`` / ``combine`` /
``get_combine_payload_tensor_in_workspace``; a subclass of FlashInfer's class, built on
first access of the name) and ``moe_a2a_get_workspace_size_per_rank``
(0.6.0-0.7.2.post1; 0.7.4 removed them), ``decode_cp_a2a_*`` (0.6.10+).

Re-exported as FlashInfer's own object (it never drifted): ``Mapping``.  The enums
``AllReduceFusionPattern`` / ``QuantizationSFLayout`` resolve here as
:mod:`fi_compat.enums`' members (translated by name per release).  The submodules
:mod:`fi_compat.comm.mnnvl`, :mod:`fi_compat.comm.trtllm_alltoall` and
:mod:`fi_compat.comm.vllm_ar` hold the names FlashInfer exposes only there; every other
FlashInfer location of a covered name (``fi_compat.comm.trtllm_moe_alltoall.MoeAlltoAll``,
``fi_compat.comm.vllm_all_reduce``) resolves to the same object.

Nothing here imports FlashInfer or torch until a name is used.  Importing
``flashinfer.comm`` fails in known ways (cuda-python / cuda-tile missing, a torch build
without CUDA before 0.6.14, Python < 3.12 on 0.6.16-0.6.16.post3): the first call raises
``OptionalDependencyMissingError`` / ``FlashInferImportError`` saying which and the fix.
"""

from __future__ import annotations

from .._adapters.comm import MOE_A2A, MOE_A2A_CLASS, MOE_A2A_METHODS, REEXPORTS, SPECS
from .._core import lazy_facades
from .._core.classes import WrapperClass, lazy_classes
from ..enums import SfLayout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    import torch
    from torch import Tensor

    from ..enums import AllReduceFusionPattern, QuantizationSFLayout

__all__: list[str] = []  # every entry point, class and re-export joins it


# -- all-reduce fusion -----------------------------------------------------------------------


def allreduce_fusion(
    input: Tensor,
    workspace: Any,
    pattern: AllReduceFusionPattern | int,
    launch_with_pdl: bool = False,
    *,
    trigger_completion_at_end: bool = True,
    output: Tensor | None = None,
    residual_out: Tensor | None = None,
    norm_out: Tensor | None = None,
    quant_out: Tensor | None = None,
    scale_out: Tensor | None = None,
    residual_in: Tensor | None = None,
    rms_gamma: Tensor | None = None,
    rms_eps: float = 1e-6,
    scale_factor: Tensor | float | None = None,
    layout_code: QuantizationSFLayout | int | None = None,
    use_oneshot: bool | None = None,
    fp32_acc: bool = False,
    moe_reduction_device_num_experts: int | None = None,
    moe_reduction_scale_input: Tensor | None = None,
    moe_reduction_active_experts_token_input: Tensor | None = None,
    moe_reduction_token_input: Tensor | None = None,
    expanded_idx_to_permuted_idx: Tensor | None = None,
    expert_scale_factor: Tensor | None = None,
    shared_expert_output: Tensor | None = None,
    block_quant_group_size: int | None = None,
    weight_bias: float = 0.0,
    moe_finalize_backend: Literal["trtllm", "cake"] = "trtllm",
    **kwargs: Any,
) -> Tensor:
    """All-reduce of ``input`` ``[tokens, hidden]`` across the workspace's ranks, fused
    with a residual add, RMSNorm and FP8 / FP4 quantisation per ``pattern`` (the backend
    is the workspace's: :func:`create_allreduce_fusion_workspace`).

    Returns the most downstream output (``norm_out``, else ``quant_out``, else the
    all-reduce output), on every release.

    {positional}

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def create_allreduce_fusion_workspace(
    backend: Literal["trtllm", "mnnvl", "mnnvl-cutedsl", "auto"] = "auto",
    world_size: int | None = None,
    rank: int | None = None,
    max_token_num: int | None = None,
    hidden_dim: int | None = None,
    dtype: torch.dtype | None = None,
    gpus_per_node: int | None = None,
    comm_backend: Any = None,
    force_oneshot_support: bool = False,
    group: Any = None,
    *,
    top_k: int | None = None,
    rms_eps: float | None = None,
    weight_bias: float | None = None,
    routed_scaling_factor: float | None = None,
    include_shared_expert: bool | None = None,
    add_residual: bool | None = None,
    write_residual_output: bool | None = None,
    apply_rms_norm: bool | None = None,
    output_dtype: torch.dtype | None = None,
    dynamic_fp8: bool | None = None,
    write_norm_output: bool | None = None,
    config: Any = None,
    **kwargs: Any,
) -> Any:
    """The workspace :func:`allreduce_fusion` runs over (its type picks the backend:
    TRT-LLM IPC buffers or MNNVL fabric memory).  A collective: every rank calls it.

    {positional}

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def trtllm_allreduce_fusion(
    allreduce_in: Tensor,
    world_size: int,
    world_rank: int,
    token_num: int,
    hidden_dim: int,
    workspace_ptrs: Tensor,
    launch_with_pdl: bool,
    trigger_completion_at_end: bool,
    fp32_acc: bool,
    pattern_code: AllReduceFusionPattern | int,
    use_oneshot: bool | None,
    allreduce_out: Tensor | None,
    residual_in: Tensor | None,
    residual_out: Tensor | None,
    norm_out: Tensor | None,
    quant_out: Tensor | None,
    scale_out: Tensor | None,
    rms_gamma: Tensor | None,
    rms_eps: float | None,
    scale_factor: Tensor | float | None,
    layout_code: QuantizationSFLayout | int | None,
    metadata: dict[str, Any] | None = None,
    block_quant_group_size: int | None = None,
    weight_bias: float | None = None,
    **kwargs: Any,
) -> None:
    """The TRT-LLM fused all-reduce over flattened ``[token_num * hidden_dim]`` tensors
    and the IPC workspace of :func:`trtllm_create_ipc_workspace_for_all_reduce_fusion`
    (``workspace_ptrs``: its device tensor of peer pointers).  Writes the outputs in
    place.

    {positional}

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def trtllm_create_ipc_workspace_for_all_reduce_fusion(
    tp_rank: int,
    tp_size: int,
    max_token_num: int,
    hidden_dim: int,
    use_fp32_lamport: bool = False,
    group: Any = None,
    create_metadata: bool = False,
    comm_backend: Any = None,
    use_symm_dev_mem: bool = False,
    **kwargs: Any,
) -> Any:
    """Allocate the IPC buffers of :func:`trtllm_allreduce_fusion` (a collective):
    ``(ipc_handles, workspace_tensor)``, plus the metadata dict with
    ``create_metadata=True``.

    {positional}

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def trtllm_destroy_ipc_workspace_for_all_reduce_fusion(
    workspace: list[list[int]], group: Any = None, **kwargs: Any
) -> None:
    """Free the IPC buffers of :func:`trtllm_create_ipc_workspace_for_all_reduce_fusion`.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def trtllm_custom_all_reduce(
    inp: Tensor,
    out: Tensor,
    tp_size: int,
    tp_rank: int,
    token_num: int,
    fusion_op_code: int,
    strategy_code: int,
    config_code: int,
    launch_with_pdl: bool,
    flag_value: int,
    peer_comm_buffer_ptrs: Tensor,
    peer_barrier_ptrs_in: Tensor,
    peer_barrier_ptrs_out: Tensor,
    bias: Tensor | None,
    residual: Tensor | None,
    weight: Tensor | None,
    weight_pre_residual_norm: Tensor | None,
    eps: float | None,
    intermediate_buffer: Tensor | None,
    lamport_peer_comm_buffer_ptrs_0: Tensor | None,
    lamport_peer_comm_buffer_ptrs_1: Tensor | None,
    lamport_peer_comm_buffer_ptrs_2: Tensor | None,
    **kwargs: Any,
) -> None:
    """TRT-LLM's custom all-reduce (FlashInfer 0.2.7.post1-0.6.18.post1; 0.7.0 removed
    it: the error names :func:`allreduce_fusion` as the replacement).  The ``*_code``
    arguments are FlashInfer's ``AllReduceFusionOp`` / ``AllReduceStrategyType`` /
    ``AllReduceStrategyConfig`` integers (unchanged over that range).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


# -- MoE all-to-all (one-sided, MNNVL) ------------------------------------------------------


def moe_a2a_get_workspace_size_per_rank(
    ep_size: int,
    max_num_tokens: int,
    total_dispatch_payload_size_per_token: int,
    combine_payload_size_per_token: int,
    eplb_stats_num_experts: int = 0,
    *,
    backend: Literal["trtllm", "cake"] = "trtllm",
    **kwargs: Any,
) -> int:
    """Bytes of the per-rank workspace :class:`MoeAlltoAll` needs (0.6.0-0.7.2.post1).

    {positional}

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def _moe_a2a_init(
    self: Any,
    mapping: Any,
    max_num_tokens: int,
    top_k: int,
    num_experts: int,
    workspace_size_per_rank: int | None = None,
    hidden_size: int | None = None,
    mnnvl_config: Any = None,
    eplb_stats_num_experts: int = 0,
    enable_rank_mask: bool = False,
    *,
    backend: Literal["trtllm", "cake"] = "trtllm",
    **kwargs: Any,
) -> None:
    """Allocate the shared MNNVL workspace of the one-sided MoE all-to-all (a
    collective over ``mapping``'s expert-parallel ranks).

    {positional}

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated method


def _moe_a2a_dispatch(
    self: Any,
    token_selected_experts: Tensor,
    input_payloads: list[Tensor],
    runtime_max_tokens_per_rank: int,
    invalid_token_expert_id: int | None = None,
    expert_id_payload_index: int | None = None,
    eplb_local_stats: Tensor | None = None,
    active_rank_mask: Tensor | None = None,
    **kwargs: Any,
) -> list[Tensor]:
    """Send each token's payloads to the ranks of its selected experts; returns the
    received payloads ``[ep_size, runtime_max_tokens_per_rank, ...]`` each.

    {positional}

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated method


def _moe_a2a_combine(
    self: Any,
    payload: Tensor,
    runtime_max_tokens_per_rank: int,
    payload_in_workspace: bool = False,
    output_dtype: torch.dtype | None = None,
    output_scales: Tensor | None = None,
    output_scalar_scale: float = 1.0,
    sf_layout: SfLayout | int = SfLayout.layout_linear,
    output: Tensor | None = None,
    *,
    use_low_precision: bool = False,
    active_rank_mask: Tensor | None = None,
    **kwargs: Any,
) -> Tensor:
    """Return the experts' outputs to the tokens' ranks and reduce them per token.

    {positional}

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated method


def _moe_a2a_payload(
    self: Any,
    runtime_max_tokens_per_rank: int,
    hidden_size: int,
    dtype: torch.dtype,
    **kwargs: Any,
) -> Tensor:
    """The workspace region :meth:`combine` reads with ``payload_in_workspace=True``
    (experts write their output into it directly).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated method


# -- DCP all-to-all ---------------------------------------------------------------------------


def decode_cp_a2a_workspace_size(cp_size: int, **kwargs: Any) -> int:
    """Bytes per rank of the DCP all-to-all workspace.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def decode_cp_a2a_allocate_mnnvl_workspace(
    mapping: Any, *, mnnvl_config: Any = None, **kwargs: Any
) -> Tensor:
    """Allocate the DCP all-to-all workspace in MNNVL fabric memory (a collective over
    the context-parallel ranks of ``mapping``).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def decode_cp_a2a_init_workspace(
    workspace: Tensor, cp_rank: int, cp_size: int, **kwargs: Any
) -> None:
    """Reset this rank's FIFO buffers of the DCP all-to-all workspace (synchronous).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def decode_cp_a2a_alltoall(
    partial_o: Tensor,
    softmax_stats: Tensor,
    workspace: Tensor,
    cp_rank: int,
    cp_size: int,
    enable_pdl: bool | None = None,
    out: tuple[Tensor, Tensor] | None = None,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """Exchange the partial attention outputs and softmax statistics of decode context
    parallelism: returns ``(partial_o, softmax_stats)`` received from every CP rank.

    {positional}

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values(), reexports=REEXPORTS.values())

CLASSES = {
    MOE_A2A_CLASS: WrapperClass(
        facade=__name__,
        name=MOE_A2A_CLASS,
        module=MOE_A2A,
        methods={
            "__init__": (_moe_a2a_init, MOE_A2A_METHODS["__init__"]),
            "dispatch": (_moe_a2a_dispatch, MOE_A2A_METHODS["dispatch"]),
            "combine": (_moe_a2a_combine, MOE_A2A_METHODS["combine"]),
            "get_combine_payload_tensor_in_workspace": (
                _moe_a2a_payload,
                MOE_A2A_METHODS["get_combine_payload_tensor_in_workspace"],
            ),
        },
        doc="The one-sided MoE all-to-all over MNNVL (FlashInfer's ``MoeAlltoAll``, "
        "0.6.0-0.7.2.post1): a subclass of the installed class whose ``__init__``, "
        "``dispatch``, ``combine`` and ``get_combine_payload_tensor_in_workspace`` have "
        "one frozen signature on every release.",
    )
}
lazy_classes(globals(), CLASSES)

if TYPE_CHECKING:
    from ..enums import AllReduceFusionPattern as AllReduceFusionPattern
    from ..enums import QuantizationSFLayout as QuantizationSFLayout

    class MoeAlltoAll:
        __init__ = _moe_a2a_init
        dispatch = _moe_a2a_dispatch
        combine = _moe_a2a_combine
        get_combine_payload_tensor_in_workspace = _moe_a2a_payload

    Mapping: Any


# FlashInfer's submodules that hold names of their own, then the other locations of
# every covered name (generated data: fi_compat._locations; see fi_compat._locate)
from .._locate import install as _install_locations  # noqa: E402
from . import mnnvl as mnnvl  # noqa: E402
from . import trtllm_alltoall as trtllm_alltoall  # noqa: E402
from . import vllm_ar as vllm_ar  # noqa: E402

_install_locations(globals())
