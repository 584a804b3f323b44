"""Stable facade of ``flashinfer.prefill``: the paged-KV and ragged-KV batch prefill
wrappers and single prefill, one frozen signature per method over every release
0.2.0.post1-0.7.4.

The wrapper classes are subclasses of the installed FlashInfer classes, built when the
name is first accessed (that imports FlashInfer; importing this module does not), as in
:mod:`fi_compat.decode`.  ``plan`` keeps FlashInfer's positional-or-keyword parameters
in 0.7.4's order; where an older release's positional order differs (``head_dim`` /
``head_dim_vo`` in 0.2.1, ``o_data_type`` inserted before ``non_blocking`` in 0.6.0) a
positional call written for it either binds through ``fi_compat.written_for(release)``
or fails on the stable kind check (``o_data_type`` takes a dtype, a string or
``None``).  ``run`` returns ``out``, or ``(out, lse)`` with ``return_lse=True``: float32,
base 2, ``[tokens, heads]`` by default; ``lse_base="ln"`` and ``lse_layout="HN"`` give
0.7.4's forms on every release.  ``begin_forward`` is ``plan``; ``end_forward`` does
nothing on every release; ``forward`` / ``forward_return_lse`` are FlashInfer's own, their
``self.run(...)`` / ``self.run_return_lse(...)`` bound by the installed release's
signature (0.2.0.post1-0.2.8's positional ``k_scale, v_scale`` of the paged
``forward_return_lse`` as 0.2.9 passes them; ``docs/wrappers.md``).
"""

from __future__ import annotations

from ._adapters import _attention
from ._adapters.cudnn import SPECS as CUDNN
from ._adapters.prefill import (
    MODULE,
    PAGED,
    PAGED_METHODS,
    PAGED_OWN_VARARGS,
    RAGGED,
    RAGGED_METHODS,
    SPECS,
)
from ._adapters.trtllm_attention import PREFILL_SPECS as TRTLLM
from ._core import lazy_facades
from ._core.classes import lazy_classes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    import torch
    from torch import Tensor

__all__: list[str] = []  # every entry point and wrapper class joins it


def _paged_init(
    self: Any,
    float_workspace_buffer: Tensor,
    kv_layout: Literal["NHD", "HND"] = "NHD",
    use_cuda_graph: bool = False,
    qo_indptr_buf: Tensor | None = None,
    paged_kv_indptr_buf: Tensor | None = None,
    paged_kv_indices_buf: Tensor | None = None,
    paged_kv_last_page_len_buf: Tensor | None = None,
    custom_mask_buf: Tensor | None = None,
    mask_indptr_buf: Tensor | None = None,
    backend: str = "auto",
    *,
    jit_args: list[Any] | None = None,
    jit_kwargs: dict[str, Any] | None = None,
    variant_owns_mask: bool = False,
    max_total_num_rows: int | None = None,
    **kwargs: Any,
) -> None:
    """Create a paged-KV prefill wrapper (FlashInfer's ``__init__``).

    ``use_cuda_graph=True`` with ``qo_indptr_buf`` and the three ``paged_kv_*_buf``
    tensors preallocated makes ``run`` capturable, on every release.

    {release_notes}
    """


def _paged_plan(
    self: Any,
    qo_indptr: Tensor,
    paged_kv_indptr: Tensor,
    paged_kv_indices: Tensor,
    paged_kv_last_page_len: Tensor,
    num_qo_heads: int,
    num_kv_heads: int,
    head_dim_qk: int,
    page_size: int,
    *,
    head_dim_vo: int | None = None,
    custom_mask: Tensor | None = None,
    packed_custom_mask: Tensor | None = None,
    causal: bool = False,
    pos_encoding_mode: Literal["NONE", "ROPE_LLAMA", "ALIBI"] = "NONE",
    use_fp16_qk_reduction: bool = False,
    sm_scale: float | None = None,
    window_left: int = -1,
    logits_soft_cap: float | None = None,
    rope_scale: float | None = None,
    rope_theta: float | None = None,
    q_data_type: str | torch.dtype = "float16",
    kv_data_type: str | torch.dtype | None = None,
    o_data_type: str | torch.dtype | None = None,
    non_blocking: bool = True,
    prefix_len_ptr: Tensor | None = None,
    token_pos_in_items_ptr: Tensor | None = None,
    token_pos_in_items_len: int = 0,
    max_item_len_ptr: Tensor | None = None,
    seq_lens: Tensor | None = None,
    seq_lens_q: Tensor | None = None,
    block_tables: Tensor | None = None,
    max_token_per_sequence: int | None = None,
    max_sequence_kv: int | None = None,
    fixed_split_size: int | None = None,
    disable_split_kv: bool = False,
    uniform_q_len: int | None = None,
    use_token_head_sf: bool = False,
    **kwargs: Any,
) -> None:
    """Plan a paged-KV prefill batch (not capturable in a CUDA graph).

    {positional}

    {release_notes}
    """


def _paged_run(
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
    lse_base: Literal["log2", "ln"] = "log2",
    lse_layout: Literal["NH", "HN"] = "NH",
    enable_pdl: bool | None = None,
    window_left: int | None = None,
    sinks: Tensor | None = None,
    kv_cache_sf: Tensor | tuple[Tensor, Tensor] | None = None,
    skip_softmax_threshold_scale_factor: float | None = None,
    use_fp16_softmax: bool | None = None,
    uses_spcompress: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Prefill attention of ``q`` ``[tokens, num_qo_heads, head_dim_qk]`` over the
    planned pages.  Returns ``out``, or ``(out, lse)`` with ``return_lse=True``.

    {release_notes}
    """


def _ragged_init(
    self: Any,
    float_workspace_buffer: Tensor,
    kv_layout: Literal["NHD", "HND"] = "NHD",
    use_cuda_graph: bool = False,
    qo_indptr_buf: Tensor | None = None,
    kv_indptr_buf: Tensor | None = None,
    custom_mask_buf: Tensor | None = None,
    mask_indptr_buf: Tensor | None = None,
    backend: str = "auto",
    *,
    jit_args: list[Any] | None = None,
    jit_kwargs: dict[str, Any] | None = None,
    variant_owns_mask: bool = False,
    **kwargs: Any,
) -> None:
    """Create a ragged-KV prefill wrapper (FlashInfer's ``__init__``).

    {release_notes}
    """


def _ragged_plan(
    self: Any,
    qo_indptr: Tensor,
    kv_indptr: Tensor,
    num_qo_heads: int,
    num_kv_heads: int,
    head_dim_qk: int,
    *,
    head_dim_vo: int | None = None,
    custom_mask: Tensor | None = None,
    packed_custom_mask: Tensor | None = None,
    causal: bool = False,
    pos_encoding_mode: Literal["NONE", "ROPE_LLAMA", "ALIBI"] = "NONE",
    use_fp16_qk_reduction: bool = False,
    window_left: int = -1,
    logits_soft_cap: float | None = None,
    sm_scale: float | None = None,
    rope_scale: float | None = None,
    rope_theta: float | None = None,
    q_data_type: str | torch.dtype = "float16",
    kv_data_type: str | torch.dtype | None = None,
    o_data_type: str | torch.dtype | None = None,
    non_blocking: bool = True,
    prefix_len_ptr: Tensor | None = None,
    token_pos_in_items_ptr: Tensor | None = None,
    token_pos_in_items_len: int = 0,
    max_item_len_ptr: Tensor | None = None,
    fixed_split_size: int | None = None,
    disable_split_kv: bool = False,
    seq_lens: Tensor | None = None,
    seq_lens_q: Tensor | None = None,
    max_token_per_sequence: int | None = None,
    max_sequence_kv: int | None = None,
    v_indptr: Tensor | None = None,
    o_indptr: Tensor | None = None,
    qo_indptr_cpu: Tensor | None = None,
    kv_indptr_cpu: Tensor | None = None,
    uniform_q_len: int | None = None,
    use_token_head_sf: bool = False,
    **kwargs: Any,
) -> None:
    """Plan a ragged-KV prefill batch (not capturable in a CUDA graph).

    {positional}

    {release_notes}
    """


def _ragged_run(
    self: Any,
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    q_scale: float | Tensor | None = None,
    k_scale: float | Tensor | None = None,
    v_scale: float | Tensor | None = None,
    o_scale: float | None = None,
    out: Tensor | None = None,
    lse: Tensor | None = None,
    return_lse: bool = False,
    lse_base: Literal["log2", "ln"] = "log2",
    lse_layout: Literal["NH", "HN"] = "NH",
    enable_pdl: bool | None = None,
    kv_cache_sf: Tensor | tuple[Tensor, Tensor] | None = None,
    **kwargs: Any,
) -> Any:
    """Prefill attention of ``q`` over ragged ``k`` / ``v`` ``[tokens, heads, dim]``.
    Returns ``out``, or ``(out, lse)`` with ``return_lse=True``.  The scales are read by
    the cutlass backend and NVFP4 KV only (FlashInfer's fa2 / fa3 ignore them).

    {release_notes}
    """


def single_prefill_with_kv_cache(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    scale_q: Tensor | None = None,
    scale_k: Tensor | None = None,
    scale_v: Tensor | None = None,
    o_dtype: torch.dtype | None = None,
    custom_mask: Tensor | None = None,
    packed_custom_mask: Tensor | None = None,
    causal: bool = False,
    kv_layout: Literal["NHD", "HND"] = "NHD",
    pos_encoding_mode: Literal["NONE", "ROPE_LLAMA", "ALIBI"] = "NONE",
    use_fp16_qk_reduction: bool = False,
    sm_scale: float | None = None,
    window_left: int = -1,
    logits_soft_cap: float | None = None,
    rope_scale: float | None = None,
    rope_theta: float | None = None,
    backend: str = "auto",
    return_lse: bool = False,
    kv_cache_sf: tuple[Tensor, Tensor] | None = None,
    k_scale: float | Tensor | None = None,
    v_scale: float | Tensor | None = None,
    **kwargs: Any,
) -> Any:
    """Prefill attention of one request: ``q`` ``[qo_len, num_qo_heads, head_dim]`` over
    ``k`` / ``v`` ``[kv_len, num_kv_heads, head_dim]`` (NHD).  Returns ``out``, or
    ``(out, lse)`` with ``return_lse=True``.

    {positional}

    {release_notes}
    """


def trtllm_batch_context_with_kv_cache(
    query: Tensor,
    kv_cache: Tensor | tuple[Tensor, Tensor],
    workspace_buffer: Tensor,
    block_tables: Tensor,
    seq_lens: Tensor,
    max_q_len: int,
    max_kv_len: int,
    bmm1_scale: float | Tensor,
    bmm2_scale: float | Tensor,
    batch_size: int,
    cum_seq_lens_q: Tensor,
    cum_seq_lens_kv: Tensor,
    window_left: int = -1,
    out: Any = None,
    out_dtype: torch.dtype | str | None = None,
    o_sf_scale: float | None = None,
    o_sf_vec_size: int | None = None,
    *,
    kv_layout: Literal["HND", "NHD"] = "HND",
    enable_pdl: bool | None = None,
    sinks: Any = None,
    kv_cache_sf: Any = None,
    skip_softmax_threshold_scale_factor: float | None = None,
    uses_shared_paged_kv_idx: bool = True,
    causal: bool = True,
    lse: Tensor | None = None,
    return_lse: bool = False,
    multi_ctas_kv_counter_buffer: Tensor | None = None,
    use_fp16_softmax: bool | None = None,
    uses_spcompress: bool | None = None,
    backend: Literal["trtllm-gen", "cake"] = "trtllm-gen",
    window_right: int = -1,
    variable_window_token_starts: Tensor | None = None,
    variable_window_token_ends: Tensor | None = None,
    **kwargs: Any,
) -> Any:
    """TRT-LLM paged context (prefill) attention (FlashInfer's
    ``trtllm_batch_context_with_kv_cache``): ``query`` ``[tokens, heads, head_dim]``
    ragged by ``cum_seq_lens_q`` over the paged ``kv_cache``.  Returns ``out``, or ``(out,
    lse)`` with ``return_lse=True`` (0.6.12+).  Positional through ``o_sf_vec_size``;
    keyword-only after (0.5.0 inserted ``kv_layout`` and moved ``sinks``).

    {release_notes}
    """


def trtllm_ragged_attention_deepseek(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    workspace_buffer: Tensor,
    seq_lens: Tensor,
    max_q_len: int,
    max_kv_len: int,
    bmm1_scale: float | Tensor,
    bmm2_scale: float | Tensor,
    o_sf_scale: float,
    batch_size: int,
    window_left: int,
    cum_seq_lens_q: Tensor,
    cum_seq_lens_kv: Tensor,
    enable_pdl: bool | None,
    is_causal: bool,
    return_lse: bool,
    attention_sinks: Tensor | None = None,
    *,
    skip_softmax_threshold_scale_factor: float | None = None,
    out: Tensor | None = None,
    lse: Tensor | None = None,
    sage_attn_sfs: Any = (None, None, None, None),
    num_elts_per_sage_attn_blk: Any = (0, 0, 0, 0),
    backend: Literal["trtllm-gen", "cute-dsl"] = "trtllm-gen",
    q_seq_lens_cpu: Tensor | None = None,
    kv_seq_lens_cpu: Tensor | None = None,
    use_fp16_softmax: bool | None = None,
    uses_spcompress: bool | None = None,
    skip_all_rows_active_check: bool = True,
    **kwargs: Any,
) -> Any:
    """TRT-LLM ragged (packed) prefill attention for DeepSeek's MLA prefill shapes
    (``query`` / ``key`` ``[tokens, heads, 192]``, ``value`` ``[tokens, heads, 128]``).

    Positional up to ``attention_sinks`` (the slots no release moved); the rest is
    keyword-only, because 0.6.4 inserted ``skip_softmax_threshold_scale_factor`` before
    ``out`` / ``lse`` and 0.6.11 the SageAttention pair before ``backend``: a positional
    call written for another release's order is bound by ``fi_compat.written_for(X)``.
    ``skip_all_rows_active_check`` defaults to ``True`` (0.7.0's default; 0.6.18.post1's
    was ``False``, a host-synchronising empty-row check) and is always sent where it
    exists, so leaving it out means the same on every release.

    Returns ``out``, or ``(out, lse)`` with ``return_lse``.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def trtllm_fmha_v2_prefill(
    qkv: Tensor | tuple[Any, ...],
    input_layout: Literal[
        "PACKED_QKV", "CONTIGUOUS_Q_KV", "Q_PAGED_KV_NHD", "Q_PAGED_KV_HND", "SEPARATE_Q_K_V"
    ],
    workspace_buffer: Tensor,
    seq_lens: Tensor,
    max_q_len: int,
    max_kv_len: int,
    bmm1_scale: float,
    bmm2_scale: float,
    batch_size: int,
    cum_seq_lens_q: Tensor,
    cum_seq_lens_kv: Tensor,
    block_tables: Tensor | None = None,
    out: Tensor | None = None,
    out_dtype: torch.dtype | str | None = None,
    sinks: Any = None,
    pos_encoding_mode: str | None = None,
    logits_soft_cap_scale: float | None = None,
    mask_mode: str = "causal",
    window_left: int = -1,
    chunked_attention_size: int = 0,
    save_softmax_stats: bool = False,
    skip_softmax_threshold_scale_factor: float = 0,
    **kwargs: Any,
) -> Any:
    """TRT-LLM FMHA v2 prefill (FlashInfer's ``trtllm_fmha_v2_prefill``): ``qkv`` is a
    packed ``[tokens, 3, heads, head_dim]`` tensor, ``(query, kv)``, ``(query,
    paged_kv)`` or ``(query, key, value)`` as ``input_layout`` says; ``seq_lens``,
    ``cum_seq_lens_q`` / ``cum_seq_lens_kv`` describe the ragged batch, ``block_tables``
    the pages of a paged layout.  Returns ``out``, or ``(out, softmax_stats)`` with
    ``save_softmax_stats``.

    The signature never changed (0.6.7-0.7.4): every parameter is positional.  A paged
    ``(query, (k_cache, v_cache))`` pair needs 0.6.18; an FP8 query on SM90 is refused
    before 0.6.15 (FlashInfer's kernels hang there).  SM90 and SM12x.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def cudnn_batch_prefill_with_kv_cache(
    q: Tensor,
    k_cache: Tensor,
    v_cache: Tensor,
    scale: float,
    workspace_buffer: Tensor,
    *,
    max_token_per_sequence: int,
    max_sequence_kv: int,
    actual_seq_lens_q: Tensor | None = None,
    actual_seq_lens_kv: Tensor | None = None,
    block_tables: Tensor | None = None,
    causal: bool,
    return_lse: bool,
    q_scale: float | Tensor | None = None,
    k_scale: float | Tensor | None = None,
    v_scale: float | Tensor | None = None,
    batch_offsets_q: Tensor | None = None,
    batch_offsets_o: Tensor | None = None,
    batch_offsets_k: Tensor | None = None,
    batch_offsets_v: Tensor | None = None,
    batch_offsets_stats: Tensor | None = None,
    batch_offsets_units: Literal["elements", "tokens"] = "elements",
    out: Tensor | None = None,
    lse: Tensor | None = None,
    is_cuda_graph_compatible: bool = False,
    backend: Literal["cubin"] | None = None,
    o_data_type: torch.dtype | None = None,
    lse_base: Literal["log2", "ln"] = "log2",
    window_left: int | None = None,
    sinks: Tensor | None = None,
    **kwargs: Any,
) -> Any:
    """cuDNN batch prefill (FlashInfer's ``cudnn_batch_prefill_with_kv_cache``, also
    ``flashinfer.cudnn``): packed ``q`` ``[tokens, heads, head_dim]`` over a paged
    (``block_tables``) or ragged KV cache, through cuDNN's SDPA graph (where the
    ``cudnn`` package imports) or the prebuilt cubin (``backend="cubin"``).  Returns
    ``(out, lse)`` (``lse`` ``None`` without ``return_lse``).

    Positional up to ``workspace_buffer``, keyword-only after, as in FlashInfer.  The
    same call means the same on every release:

    * the LSE is base 2 (``lse_base="log2"``, 0.7.1's default; the graph path's
      natural-log stats are converted before 0.7.0 as 0.7.0 does); ``"ln"`` needs 0.7.1;
    * ``lse=None`` returns the padded ``(batch, max_token_per_sequence, heads)`` LSE
      (0.7.4's graph path would allocate it packed ``(tokens, heads)``: pass such a
      buffer as ``lse`` for that);
    * a batch of several requests needs ``batch_offsets_q`` / ``batch_offsets_o`` on
      the graph path (refused without; 0.2.9-0.6.15 returned wrong rows);
    * ``q_scale`` / ``k_scale`` / ``v_scale`` with an fp16/bf16 query are refused where
      the release ignores them (before 0.7.4, and on the cubin path).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), [*SPECS.values(), *TRTLLM.values(), *CUDNN.values()])


CLASSES = {
    PAGED: _attention.wrapper_class(
        __name__,
        MODULE,
        PAGED,
        PAGED_METHODS,
        (_paged_init, _paged_plan, _paged_run),
        own_varargs=PAGED_OWN_VARARGS,
        doc="""Batch prefill / append attention over a paged KV cache: ``plan`` the
        batch's query offsets and page table once (outside CUDA graphs), then ``run``
        once per layer.  ``run`` returns ``out``, or ``(out, lse)`` with
        ``return_lse=True`` (float32 base-2 LSE ``[tokens, num_qo_heads]`` by default),
        on every release.""",
        flashinfer_methods=("forward", "forward_return_lse"),
    ),
    RAGGED: _attention.wrapper_class(
        __name__,
        MODULE,
        RAGGED,
        RAGGED_METHODS,
        (_ragged_init, _ragged_plan, _ragged_run),
        doc="""Batch prefill attention over ragged (contiguous per request) keys and
        values: ``plan`` the batch's query and KV offsets once (outside CUDA graphs), then
        ``run`` once per layer.  ``run`` returns ``out``, or ``(out, lse)`` with
        ``return_lse=True`` (float32 base-2 LSE ``[tokens, num_qo_heads]`` by default),
        on every release.""",
        flashinfer_methods=("forward", "forward_return_lse"),
    ),
}
lazy_classes(globals(), CLASSES)


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
