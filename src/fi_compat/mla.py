"""Stable facade of ``flashinfer.mla``: ``BatchMLAPagedAttentionWrapper`` (multi-head
latent attention over a paged compressed-KV cache), one frozen signature per method over
every release 0.2.2-0.7.4.

The class is a subclass of the installed FlashInfer class, built when the name is first
accessed (that imports FlashInfer; importing this module does not).  Its ``__init__``,
``plan`` and ``run`` have 0.7.4's signatures and call FlashInfer by keyword.  The flat
CSR ``plan`` (``qo_indptr, kv_indptr, kv_indices, kv_len_arr, num_heads, head_dim_ckv,
head_dim_kpe, page_size, causal, sm_scale, q_data_type, kv_data_type``) works on every
release; 0.7.0's metadata / dense / packed forms and planning options need 0.7.0 (or
0.7.1) and are refused before with the release named.  ``run`` returns ``out``, or
``(out, lse)`` with ``return_lse=True`` (float32 ``[tokens, heads]``, base 2, or natural
log with ``return_lse_base_on_e=True``: emulated bit-identically before 0.5.3).
"""

from __future__ import annotations

from ._adapters import _attention
from ._adapters.mla import CLASS, METHODS, MODULE
from ._core.classes import lazy_classes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    import torch
    from torch import Tensor

__all__: list[str] = []  # every entry point and wrapper class joins it


def _init(
    self: Any,
    float_workspace_buffer: Tensor,
    use_cuda_graph: bool = False,
    qo_indptr: Tensor | None = None,
    kv_indptr: Tensor | None = None,
    kv_indices: Tensor | None = None,
    kv_len_arr: Tensor | None = None,
    backend: Literal[
        "auto",
        "fa2",
        "fa3",
        "cutlass",
        "cutile",
        "trtllm-gen",
        "xqa",
        "cute-dsl",
        "cute-dsl-monolithic",
        "cute-dsl-modular",
        "cute-dsl-rubin-mtp",
        "autotune",
    ] = "auto",
    **kwargs: Any,
) -> None:
    """Create an MLA wrapper over ``float_workspace_buffer`` (FlashInfer's ``__init__``).

    ``use_cuda_graph=True`` with the four index buffers preallocated makes ``run``
    capturable (``plan`` outside the graph).  ``backend="auto"``: fa3 on SM90, fa2
    elsewhere (0.2.2-0.7.0); 0.7.1+ choose among more backends by device and request.

    {release_notes}
    """


def _plan(
    self: Any,
    qo_indptr: Tensor | None = None,
    kv_indptr: Tensor | None = None,
    kv_indices: Tensor | None = None,
    kv_len_arr: Tensor | None = None,
    num_heads: int | None = None,
    head_dim_ckv: int | None = None,
    head_dim_kpe: int | None = None,
    page_size: int | None = None,
    causal: bool | None = None,
    sm_scale: float | None = None,
    q_data_type: torch.dtype | None = None,
    kv_data_type: torch.dtype | None = None,
    use_profiler: bool = False,
    *,
    metadata: Any = None,
    cum_seq_lens_q: Tensor | None = None,
    block_tables: Tensor | None = None,
    seq_lens: Tensor | None = None,
    max_q_len: int | None = None,
    query_layout: Literal["packed", "split"] | None = None,
    kv_cache_layout: Literal["packed", "split"] | None = None,
    lse_mode: Literal["none", "base2", "basee"] = "none",
    output_dtype: torch.dtype | None = None,
    output_scale: Literal["none", "per-tensor"] = "none",
    scale_mode: Literal["default", "kv-per-tensor", "bmm-scalar", "bmm-tensor"] = "default",
    skip_softmax: bool = False,
    enable_pdl: bool | None = None,
    use_sinks: bool = False,
    **kwargs: Any,
) -> None:
    """Plan an MLA batch (FlashInfer's ``plan``; not capturable in a CUDA graph).

    The flat CSR form: ``qo_indptr`` / ``kv_indptr`` ``[batch + 1]``, ``kv_indices``
    (pages), ``kv_len_arr`` ``[batch]`` (int32), then the head geometry and dtypes, all
    required before 0.7.0.

    {release_notes}
    """


def _run(
    self: Any,
    q_nope: Tensor | None = None,
    q_pe: Tensor | None = None,
    ckv_cache: Tensor | None = None,
    kpe_cache: Tensor | None = None,
    out: Tensor | None = None,
    lse: Tensor | None = None,
    return_lse: bool = False,
    profiler_buffer: Tensor | None = None,
    kv_len: Tensor | None = None,
    page_table: Tensor | None = None,
    return_lse_base_on_e: bool = False,
    o_scale: float | Tensor | None = None,
    *,
    query: Tensor | None = None,
    kv_cache: Tensor | None = None,
    ckv_scale: float | Tensor | None = None,
    ckv_scale_arr: Tensor | None = None,
    kpe_scale: float | Tensor | None = None,
    sinks: Tensor | None = None,
    skip_softmax_threshold_scale_factor: float | None = None,
    bmm1_scale: float | Tensor | None = None,
    bmm2_scale: float | Tensor | None = None,
    **kwargs: Any,
) -> Any:
    """MLA attention of ``q_nope`` ``[tokens, heads, head_dim_ckv]`` / ``q_pe``
    ``[tokens, heads, head_dim_kpe]`` over the planned pages of ``ckv_cache`` ``[pages,
    page_size, head_dim_ckv]`` / ``kpe_cache`` ``[pages, page_size, head_dim_kpe]``.

    Returns ``out`` ``[tokens, heads, head_dim_ckv]``, or ``(out, lse)`` with
    ``return_lse=True``, on every release.

    {release_notes}
    """


CLASSES = {
    CLASS: _attention.wrapper_class(
        __name__,
        MODULE,
        CLASS,
        METHODS,
        (_init, _plan, _run),
        legacy=False,
        doc="""Batch multi-head latent attention (MLA) over a paged compressed-KV cache:
        ``plan`` the batch once (outside CUDA graphs), then ``run`` once per layer with
        the query's ``q_nope`` / ``q_pe`` parts over the ``ckv`` / ``kpe`` caches.
        ``run`` returns ``out``, or ``(out, lse)`` with ``return_lse=True`` (float32
        ``[tokens, heads]``, base 2), on every release.""",
    )
}
lazy_classes(globals(), CLASSES)


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
