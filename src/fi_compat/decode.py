"""Stable facade of ``flashinfer.decode``: the paged-KV batch decode wrapper and single
decode, one frozen signature per method over every release 0.2.0.post1-0.7.4.

``BatchDecodeWithPagedKVCacheWrapper`` is a subclass of the installed FlashInfer class,
built when the name is first accessed (that imports FlashInfer; importing this module
does not): ``isinstance`` with FlashInfer's class holds, FlashInfer's helpers that take
the wrapper work, and it can be subclassed.  Its ``__init__``, ``plan`` and ``run`` have
0.7.4's signatures, call FlashInfer by keyword and follow the drop / refuse policy per
parameter (each method's docstring lists it); ``plan`` is keyword-only after
``page_size`` (a positional call written for 0.5.x, whose ``sm_scale`` would land in
``rope_scale`` on 0.6.0+, fails loudly; ``fi_compat.written_for("0.5.3")`` binds it).
``run`` returns ``out``, or ``(out, lse)`` with ``return_lse=True`` (float32 base-2 LSE
``[tokens, heads]``) on every release.  ``begin_forward`` is ``plan``; ``end_forward``
does nothing, on every release (0.7.0 removed it); ``forward`` / ``forward_return_lse``
are FlashInfer's own, their ``self.run(...)`` bound by the installed release's signature
(the release view of :mod:`fi_compat._core.classes`; ``docs/wrappers.md``).
"""

from __future__ import annotations

from ._adapters import _attention
from ._adapters.decode import (
    CLASS,
    GRAPH_CLASS,
    GRAPH_INIT,
    METHODS,
    MLA_CLASS,
    MLA_METHODS,
    MODULE,
    SPECS,
    STABLE_PLAN,
)
from ._adapters.trtllm_attention import DECODE_SPECS as TRTLLM
from ._core import OMIT, lazy_facades
from ._core.classes import WrapperClass, lazy_classes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    import torch
    from torch import Tensor

__all__: list[str] = []  # every entry point and wrapper class joins it


def _init(
    self: Any,
    float_workspace_buffer: Tensor,
    kv_layout: Literal["NHD", "HND"] = "NHD",
    use_cuda_graph: bool = False,
    use_tensor_cores: bool = False,
    paged_kv_indptr_buffer: Tensor | None = None,
    paged_kv_indices_buffer: Tensor | None = None,
    paged_kv_last_page_len_buffer: Tensor | None = None,
    *,
    backend: Literal["auto", "fa2", "fa3", "trtllm-gen", "cute-dsl", "cudnn"] = "auto",
    jit_args: list[Any] | None = None,
    jit_kwargs: dict[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """Create a decode wrapper over ``float_workspace_buffer`` (FlashInfer's ``__init__``).

    ``use_cuda_graph=True`` with the three ``*_buffer`` tensors preallocated makes ``run``
    capturable (``plan`` outside the graph), on every release.

    {release_notes}
    """


def _plan(
    self: Any,
    indptr: Tensor,
    indices: Tensor,
    last_page_len: Tensor,
    num_qo_heads: int,
    num_kv_heads: int,
    head_dim: int,
    page_size: int,
    *,
    pos_encoding_mode: Literal["NONE", "ROPE_LLAMA", "ALIBI"] = "NONE",
    window_left: int = -1,
    window_right: int = 0,
    logits_soft_cap: float | None = None,
    q_data_type: str | torch.dtype | None = "float16",
    kv_data_type: str | torch.dtype | None = None,
    o_data_type: str | torch.dtype | None = None,
    data_type: str | torch.dtype | None = None,
    sm_scale: float | None = None,
    rope_scale: float | None = None,
    rope_theta: float | None = None,
    non_blocking: bool = True,
    block_tables: Tensor | None = None,
    seq_lens: Tensor | None = None,
    fixed_split_size: int | None = None,
    disable_split_kv: bool = False,
    q_len_per_req: int = 1,
    is_causal: bool | None = None,
    use_token_head_sf: bool = False,
    **kwargs: Any,
) -> None:
    """Plan a decode batch (FlashInfer's ``plan``; not capturable in a CUDA graph).

    ``indptr`` / ``indices`` / ``last_page_len``: the page table (int32).  Everything
    after ``page_size`` is keyword-only.  ``q_data_type`` defaults to ``"float16"`` on
    every release (``data_type`` sets only the KV dtype then): pass it.

    {release_notes}
    """


def _run(
    self: Any,
    q: Tensor,
    paged_kv_cache: Tensor | tuple[Tensor, Tensor],
    *,
    q_scale: float | Tensor | None = None,
    k_scale: float | Tensor | None = None,
    v_scale: float | Tensor | None = None,
    out: Tensor | None = None,
    lse: Tensor | None = None,
    return_lse: bool = False,
    enable_pdl: bool | None = None,
    window_left: int | None = None,
    sinks: Tensor | None = None,
    q_len_per_req: int | None = OMIT,
    skip_softmax_threshold_scale_factor: float | None = None,
    kv_cache_sf: Tensor | tuple[Tensor, Tensor] | None = None,
    **kwargs: Any,
) -> Any:
    """Decode attention of ``q`` ``[batch, num_qo_heads, head_dim]`` over the planned pages.

    Returns ``out``, or ``(out, lse)`` with ``return_lse=True`` (``lse`` float32
    ``[batch, num_qo_heads]``, base 2), on every release.  Capturable in a CUDA graph
    when the wrapper was made with ``use_cuda_graph=True``.

    {release_notes}
    """


def single_decode_with_kv_cache(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    kv_layout: Literal["NHD", "HND"] = "NHD",
    pos_encoding_mode: Literal["NONE", "ROPE_LLAMA", "ALIBI"] = "NONE",
    use_tensor_cores: bool = False,
    q_scale: float | None = None,
    k_scale: float | None = None,
    v_scale: float | None = None,
    window_left: int = -1,
    logits_soft_cap: float | None = None,
    sm_scale: float | None = None,
    rope_scale: float | None = None,
    rope_theta: float | None = None,
    return_lse: bool = False,
    **kwargs: Any,
) -> Any:
    """Decode attention of one request: ``q`` ``[num_qo_heads, head_dim]`` over ``k`` /
    ``v`` ``[kv_len, num_kv_heads, head_dim]`` (NHD) or ``[num_kv_heads, kv_len,
    head_dim]`` (HND).  Returns ``out``, or ``(out, lse)`` with ``return_lse=True``.

    {release_notes}
    """


def fast_decode_plan(
    self: Any,
    indptr: Tensor,
    indices: Tensor,
    last_page_len: Tensor,
    num_qo_heads: int,
    num_kv_heads: int,
    head_dim: int,
    page_size: int,
    pos_encoding_mode: Literal["NONE", "ROPE_LLAMA", "ALIBI"] = "NONE",
    window_left: int = -1,
    logits_soft_cap: float | None = None,
    q_data_type: str | torch.dtype | None = None,
    kv_data_type: str | torch.dtype | None = None,
    data_type: str | torch.dtype | None = None,
    sm_scale: float | None = None,
    rope_scale: float | None = None,
    rope_theta: float | None = None,
    non_blocking: bool = True,
    fixed_split_size: int | None = None,
    disable_split_kv: bool = False,
    *,
    q_len_per_req: int = 1,
    global_override_indptr_cpu: Tensor | None = None,
    **kwargs: Any,
) -> None:
    """Re-plan a decode wrapper (``self``: a ``BatchDecodeWithPagedKVCacheWrapper``, this
    module's or FlashInfer's) that was planned before, cheaply: FlashInfer's
    ``fast_decode_plan`` (engines bind it as ``functools.partial(fast_decode_plan, w)``
    for CUDA-graph decode).  Before 0.4.0, which has none, the wrapper's full ``plan``
    computes the same plan.  Unlike ``plan``, ``q_data_type=None`` takes ``data_type``,
    then float16, as FlashInfer's own ``fast_decode_plan`` does.

    {positional}

    {release_notes}
    """


def trtllm_batch_decode_with_kv_cache(
    query: Tensor,
    kv_cache: Tensor | tuple[Tensor, Tensor],
    workspace_buffer: Tensor,
    block_tables: Tensor,
    seq_lens: Tensor,
    max_seq_len: int,
    bmm1_scale: float | Tensor = 1.0,
    bmm2_scale: float | Tensor = 1.0,
    window_left: int = -1,
    out: Any = None,
    out_dtype: torch.dtype | str | None = None,
    o_sf_scale: float | None = None,
    o_sf_vec_size: int | None = None,
    sinks: Any = None,
    *,
    kv_layout: Literal["HND", "NHD"] = "HND",
    enable_pdl: bool | None = None,
    backend: Literal["auto", "trtllm-gen", "xqa", "cake"] = "auto",
    q_len_per_req: int | None = 1,
    o_scale: float | None = 1.0,
    mask: Tensor | None = None,
    max_q_len: int | None = None,
    cum_seq_lens_q: Tensor | None = None,
    skip_softmax_threshold_scale_factor: float | None = None,
    kv_cache_sf: Any = None,
    uses_shared_paged_kv_idx: bool = True,
    lse: Tensor | None = None,
    return_lse: bool = False,
    bmm1_scale_log2: Tensor | None = None,
    multi_ctas_kv_counter_buffer: Tensor | None = None,
    enable_block_sparse_attention: bool = False,
    cp_world: int = 1,
    cp_rank: int = 0,
    causal_seqlens_kv_global: Tensor | None = None,
    bf16q_fp8kv_transform_mode: Literal["k_only", "separate_kv"] | None = None,
    request_order: Tensor | None = None,
    request_order_plan: Any = None,
    sparse_top_k: int = 0,
    length_aware_schedule: bool = False,
    **kwargs: Any,
) -> Any:
    """TRT-LLM paged decode (FlashInfer's ``trtllm_batch_decode_with_kv_cache``):
    ``query`` ``[tokens, heads, head_dim]`` over ``kv_cache`` (one tensor or a
    ``(k_cache, v_cache)`` pair) with ``block_tables`` ``[batch, pages]`` and
    ``seq_lens`` ``[batch]``.  Returns ``out``, or ``(out, lse)`` with
    ``return_lse=True`` (0.6.12+).  Positional through ``sinks``; keyword-only after
    (0.5.0 inserted ``kv_layout`` before ``enable_pdl``).

    {release_notes}
    """


def xqa_batch_decode_with_kv_cache(
    query: Tensor,
    kv_cache: Tensor | tuple[Tensor, Tensor],
    workspace_buffer: Tensor,
    block_tables: Tensor,
    seq_lens: Tensor,
    max_seq_len: int,
    bmm1_scale: float | Tensor = 1.0,
    bmm2_scale: float | Tensor = 1.0,
    window_left: int = -1,
    out: Tensor | None = None,
    sinks: Tensor | None = None,
    kv_layout: Literal["NHD", "HND"] = "NHD",
    enable_pdl: bool | None = None,
    q_len_per_req: int = 1,
    o_scale: float = 1.0,
    mask: Tensor | None = None,
    kv_cache_sf: Any = None,
    q_cu_seq_lens: Tensor | None = None,
    **kwargs: Any,
) -> Any:
    """XQA paged decode (FlashInfer's ``xqa_batch_decode_with_kv_cache``, the kernels
    ``trtllm_batch_decode_with_kv_cache(backend="xqa")`` runs): ``query`` ``[tokens,
    heads, head_dim]`` (``tokens = batch * q_len_per_req``) over ``kv_cache`` (one tensor
    ``[pages, 1 or 2, ...]`` or a ``(k_cache, v_cache)`` pair) with ``block_tables``
    ``[batch, pages]`` and ``seq_lens`` ``[batch]``.  Returns ``out``.

    Every parameter is positional: later releases only appended (``o_scale`` 0.5.3,
    ``mask`` 0.6.0, ``kv_cache_sf`` 0.6.7, ``q_cu_seq_lens`` 0.6.16).  ``bmm1_scale`` /
    ``bmm2_scale`` default to 1.0 (0.5.3's; required before, so always sent).
    ``q_len_per_req`` other than 1 (speculative decoding) needs 0.6.0; NVFP4
    ``kv_cache_sf`` needs 0.6.14 (0.6.7-0.6.13 scale the query by the packed head
    size).  SM90, SM10x and SM12x.

    {release_notes}
    """


def trtllm_batch_decode_with_kv_cache_mla(
    query: Tensor,
    kv_cache: Tensor,
    workspace_buffer: Tensor,
    qk_nope_head_dim: int,
    kv_lora_rank: int,
    qk_rope_head_dim: int,
    block_tables: Tensor,
    seq_lens: Tensor | None,
    max_seq_len: int,
    *,
    sparse_mla_top_k: int = 0,
    out: Tensor | None = None,
    bmm1_scale: float | Tensor = 1.0,
    bmm2_scale: float | Tensor = 1.0,
    sinks: Any = None,
    skip_softmax_threshold_scale_factor: float | None = None,
    enable_pdl: bool | None = None,
    backend: Literal["auto", "trtllm-gen", "xqa", "cute-dsl", "sparse", "cake"] = "auto",
    is_var_seq: bool = True,
    uses_shared_paged_kv_idx: bool = True,
    lse: Tensor | None = None,
    return_lse: bool = False,
    cute_dsl_impl: str = "auto",
    kv_scale_format: str = "auto",
    cum_seq_lens_q: Tensor | None = None,
    max_q_len: int | None = None,
    multi_ctas_kv_counter_buffer: Tensor | None = None,
    sparse_mla_top_k_lens: Tensor | None = None,
    enable_dcp: bool = False,
    cp_world: int = 1,
    cp_rank: int = 0,
    causal_seqlens_kv_global: Tensor | None = None,
    use_fp16_softmax: bool | None = None,
    return_lse_base: Literal["basee", "base2"] | None = None,
    **kwargs: Any,
) -> Any:
    """TRT-LLM MLA decode (FlashInfer's ``trtllm_batch_decode_with_kv_cache_mla``):
    ``query`` ``[batch, q_len, heads, kv_lora_rank + qk_rope_head_dim]`` over the
    compressed ``kv_cache`` (3-D ``[pages, page_size, dim]`` or 4-D ``[pages, 1,
    page_size, dim]``, on every release).  Positional through ``max_seq_len``;
    keyword-only after (0.6.0 inserted ``sparse_mla_top_k`` before ``out``).

    {release_notes}
    """


def trtllm_batch_decode_sparse_mla_dsv4(
    query: Tensor,
    swa_kv_cache: Tensor,
    workspace_buffer: Tensor,
    sparse_indices: Tensor | None = None,
    compressed_kv_cache: Tensor | None = None,
    sparse_topk_lens: Tensor | None = None,
    seq_lens: Tensor | None = None,
    out: Tensor | None = None,
    bmm1_scale: float | Tensor = 1.0,
    bmm2_scale: float | Tensor = 1.0,
    sinks: Tensor | None = None,
    kv_layout: Literal["HND", "NHD"] = "HND",
    cum_seq_lens_q: Tensor | None = None,
    max_q_len: int | None = None,
    enable_pdl: bool | None = None,
    swa_topk_lens: Tensor | None = None,
    extra_sparse_indices: Tensor | None = None,
    extra_sparse_topk_lens: Tensor | None = None,
    backend: Literal["auto", "trtllm-gen", "cute-dsl", "sparse", "cake"] = "auto",
    hca_swa_indices: Tensor | None = None,
    hca_compressed_block_tables: Tensor | None = None,
    hca_seq_lens: Tensor | None = None,
    hca_is_causal: bool = True,
    hca_use_persistent: bool = False,
    hca_sparse_indices_format: Literal["compressed-page-aligned"] | None = None,
    remapped_sparse_indices_buffer: Tensor | None = None,
    sparse_indices_are_storage_offsets: bool | None = None,
    dsv4_inv_rope_cos_sin_cache: Tensor | None = None,
    dsv4_output_scale: Tensor | None = None,
    sparse_topk_lens_offset: int = 0,
    multi_ctas_kv_counter_buffer: Tensor | None = None,
    *,
    kv_cache_format: Literal[
        "fp8",
        "nvfp4",
        "fp8_dsv41",
        "fp8_dsv41_fp4_ca",
        "fp8_dsv41_inline",
        "fp8_dsv41_inline_fp4_ca",
    ] = "fp8",
    **kwargs: Any,
) -> Any:
    """DeepSeek V4 sparse MLA decode (FlashInfer's ``trtllm_batch_decode_sparse_mla_dsv4``):
    ``query`` ``[batch, q_len, heads, 512]`` (or ``[sum_q, heads, 512]`` with
    ``cum_seq_lens_q`` / ``max_q_len``), BF16 or FP8 E4M3, over a sliding-window pool
    ``swa_kv_cache`` and a compressed pool ``compressed_kv_cache``.  On SM100/SM103 the
    trtllm-gen kernels read the combined ``sparse_indices`` table (128 SWA columns, then
    the compressed top-k) with ``sparse_topk_lens`` (including the 128) and
    ``seq_lens``; on SM120/SM121 (0.6.14+) the packed ``sparse`` kernels read
    ``sparse_indices`` / ``swa_topk_lens`` and, optionally, ``extra_sparse_indices`` /
    ``extra_sparse_topk_lens`` into ``compressed_kv_cache``.  Returns ``out`` (BF16), or
    ``(out_fp8, out_scale)`` with the RopeQuant epilogue
    (``dsv4_inv_rope_cos_sin_cache``, 0.7.0).

    Every parameter is positional up to ``multi_ctas_kv_counter_buffer``: later
    releases only appended.  ``sparse_indices`` may be left out (``None``, the
    ``backend="cute-dsl"`` HCA metadata path) from 0.6.18, and ``compressed_kv_cache``
    / ``sparse_topk_lens`` / ``seq_lens`` (the SM12x path) from 0.6.14; before, they
    are required.  Before 0.6.18 (no ``backend``) the GPU picks the kernel:
    ``backend="trtllm-gen"`` on SM100/SM103 and ``"sparse"`` on SM120/SM121 (0.6.14+)
    name it and are accepted there.

    {release_notes}
    """


def _graph_init(
    self: Any,
    workspace_buffer: Tensor,
    indptr_buffer: Tensor,
    indices_buffer: Tensor,
    last_page_len_buffer: Tensor,
    kv_layout: Literal["NHD", "HND"] = "NHD",
    use_tensor_cores: bool = False,
    **kwargs: Any,
) -> None:
    """Create a CUDA-graph decode wrapper (FlashInfer's
    ``CUDAGraphBatchDecodeWithPagedKVCacheWrapper``: the decode wrapper with
    ``use_cuda_graph=True`` over the three preallocated page-table buffers).

    Parameters
    ----------
    workspace_buffer : Tensor
        The float workspace (128 MB recommended), on the device of the inputs.
    indptr_buffer, indices_buffer, last_page_len_buffer : Tensor
        int32 buffers of ``[max_batch_size + 1]``, ``[max_num_pages]`` and
        ``[max_batch_size]`` that ``plan`` copies the page table into.
    kv_layout : {"NHD", "HND"}
        The layout of the paged KV cache.
    use_tensor_cores : bool
        Use the prefill (tensor-core) kernels, faster for large GQA groups.

    ``plan`` / ``run`` / ``begin_forward`` are this module's
    ``BatchDecodeWithPagedKVCacheWrapper``'s (FlashInfer's class inherits them on every
    release); ``run`` is capturable, ``plan`` is not.

    {release_notes}
    """


def _mla_init(
    self: Any,
    float_workspace_buffer: Tensor,
    use_cuda_graph: bool = False,
    *,
    use_tensor_cores: bool = False,
    paged_kv_indptr_buffer: Tensor | None = None,
    paged_kv_indices_buffer: Tensor | None = None,
    paged_kv_last_page_len_buffer: Tensor | None = None,
    **kwargs: Any,
) -> None:
    """Create an MLA decode wrapper (FlashInfer's ``BatchDecodeMlaWithPagedKVCacheWrapper``,
    0.2.0.post1-0.6.18.post1; 0.7.0 removed it: use
    ``fi_compat.mla.BatchMLAPagedAttentionWrapper``).  Keyword-only after
    ``use_cuda_graph`` (0.2.1.post2 inserted ``use_tensor_cores`` at slot 2).

    {release_notes}
    """


def _mla_plan(
    self: Any,
    indptr: Tensor,
    indices: Tensor,
    last_page_len: Tensor,
    num_qo_heads: int,
    head_dim_compressed_kv: int,
    page_size: int,
    sm_scale: float,
    window_left: int = -1,
    logits_soft_cap: float | None = None,
    data_type: str | torch.dtype = "float16",
    q_data_type: str | torch.dtype | None = None,
    rope_scale: float | None = None,
    rope_theta: float | None = None,
    **kwargs: Any,
) -> None:
    """Plan an MLA decode batch over the compressed-KV page table.

    {release_notes}
    """


def _mla_run(
    self: Any,
    q_nope: Tensor,
    q_pe: Tensor,
    paged_ckv_cache: Tensor,
    paged_kpe_cache: Tensor,
    q_scale: float | None = None,
    k_scale: float | None = None,
    v_scale: float | None = None,
    *,
    out: Tensor | None = None,
    lse: Tensor | None = None,
    return_lse: bool = False,
    enable_pdl: bool = False,
    **kwargs: Any,
) -> Any:
    """MLA decode of ``q_nope`` / ``q_pe`` over the planned pages.  Returns ``out``, or
    ``(out, lse)`` with ``return_lse=True``.  Keyword-only after ``v_scale`` (0.2.1.post2
    inserted ``out`` / ``lse`` before ``return_lse``).

    {release_notes}
    """


lazy_facades(globals(), [*SPECS.values(), *TRTLLM.values()])
CLASSES = {
    CLASS: _attention.wrapper_class(
        __name__,
        MODULE,
        CLASS,
        METHODS,
        (_init, _plan, _run),
        doc="""Batch decode attention (one query token per request) over a paged KV cache:
        ``plan`` the batch's page table once (outside CUDA graphs), then ``run`` once per
        layer.  ``run`` returns ``out``, or ``(out, lse)`` with ``return_lse=True``
        (float32 base-2 LSE ``[batch, num_qo_heads]``), on every release.""",
        flashinfer_methods=("forward", "forward_return_lse"),
    ),
    MLA_CLASS: _attention.wrapper_class(
        __name__,
        MODULE,
        MLA_CLASS,
        MLA_METHODS,
        (_mla_init, _mla_plan, _mla_run),
        doc="""Batch MLA decode over a paged compressed-KV cache (FlashInfer's first MLA
        decode wrapper; ``fi_compat.mla.BatchMLAPagedAttentionWrapper`` serves every
        release): ``plan`` once per batch, ``run`` once per layer.""",
    ),
}
CLASSES[GRAPH_CLASS] = WrapperClass(
    facade=__name__,
    name=GRAPH_CLASS,
    module=MODULE,
    methods={"__init__": (_graph_init, GRAPH_INIT)},
    inherits=CLASSES[CLASS],  # plan, run, begin_forward ...: FlashInfer's inherited ones
    doc="""Batch decode attention for CUDA-graph capture: the decode wrapper with
    ``use_cuda_graph=True`` over three preallocated page-table buffers; ``plan`` outside
    the graph, ``run`` inside it.  Not a subclass of this module's
    ``BatchDecodeWithPagedKVCacheWrapper`` (FlashInfer's classes are related, the stable
    ones are not).""",
)
lazy_classes(globals(), CLASSES)
STABLE_PLAN[:] = [lambda: CLASSES[CLASS].functions()["plan"]]  # fast_decode_plan before 0.4.0


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
