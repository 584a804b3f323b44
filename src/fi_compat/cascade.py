"""Stable facade of ``flashinfer.cascade``: merging attention states and the multi-level
cascade wrapper, one frozen signature each over every release 0.2.0.post1-0.7.4.

``merge_state`` / ``merge_state_in_place`` / ``merge_states`` take ``(v, s)`` pairs where
``s`` is the base-2 LSE the attention ``run(..., return_lse=True)`` returns (float32,
``v``'s shape without the head dimension).  ``MultiLevelCascadeAttentionWrapper`` is a
subclass of the installed FlashInfer class, built on first access of the name, as in
:mod:`fi_compat.decode`; ``begin_forward`` is ``plan`` and ``forward`` is ``run``.

``BatchDecodeWithSharedPrefixPagedKVCacheWrapper`` and
``BatchPrefillWithSharedPrefixPagedKVCacheWrapper`` (every release 0.2.0.post1-0.7.4) are
subclasses of FlashInfer's classes the same way:
``begin_forward`` plans the per-request pages, ``forward(q, k_shared, v_shared,
unique_kv_cache)`` attends over the shared prefix (contiguous K/V) and each request's
own pages and merges the two inside the release; ``end_forward`` does nothing, on every
release (0.7.0 removed it).
"""

from __future__ import annotations

from ._adapters import _attention
from ._adapters.cascade import (
    CLASS,
    METHODS,
    MODULE,
    SHARED_DECODE,
    SHARED_DECODE_METHODS,
    SHARED_PREFILL,
    SHARED_PREFILL_METHODS,
    SPECS,
)
from ._core import lazy_facades
from ._core.classes import WrapperClass, lazy_classes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    import torch
    from torch import Tensor

__all__: list[str] = []  # every entry point and wrapper class joins it


def merge_state(v_a: Tensor, s_a: Tensor, v_b: Tensor, s_b: Tensor, **kwargs: Any) -> Any:
    """Merge two attention states: ``(v, s)`` of ``v_a`` over one KV part and ``v_b`` over
    another, ``v`` ``[seq, heads, dim]``, ``s`` float32 ``[seq, heads]`` (base 2).
    Returns ``(v_merged, s_merged)``.

    {release_notes}
    """


def merge_state_in_place(
    v: Tensor,
    s: Tensor,
    v_other: Tensor,
    s_other: Tensor,
    mask: Tensor | None = None,
    **kwargs: Any,
) -> None:
    """Merge ``(v_other, s_other)`` into ``(v, s)`` in place (rows where ``mask`` is set,
    all rows without it).

    {release_notes}
    """


def merge_states(v: Tensor, s: Tensor, **kwargs: Any) -> Any:
    """Merge ``num_states`` states: ``v`` ``[seq, num_states, heads, dim]``, ``s`` float32
    ``[seq, num_states, heads]``.  Returns ``(v_merged, s_merged)``.

    {release_notes}
    """


def _init(
    self: Any,
    num_levels: int,
    float_workspace_buffer: Tensor,
    kv_layout: Literal["NHD", "HND"] = "NHD",
    use_cuda_graph: bool = False,
    qo_indptr_buf_arr: list[Tensor] | None = None,
    paged_kv_indptr_buf_arr: list[Tensor] | None = None,
    paged_kv_indices_buf_arr: list[Tensor] | None = None,
    paged_kv_last_page_len_buf_arr: list[Tensor] | None = None,
    **kwargs: Any,
) -> None:
    """Create a ``num_levels``-level cascade wrapper (FlashInfer's ``__init__``).

    {release_notes}
    """


def _plan(
    self: Any,
    qo_indptr_arr: list[Tensor],
    paged_kv_indptr_arr: list[Tensor],
    paged_kv_indices_arr: list[Tensor],
    paged_kv_last_page_len: list[Tensor],
    num_qo_heads: int,
    num_kv_heads: int,
    head_dim: int,
    page_size: int,
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
    **kwargs: Any,
) -> None:
    """Plan the levels (one index array per level).

    {release_notes}
    """


def _run(
    self: Any, q: Tensor, paged_kv_cache: Tensor | tuple[Tensor, Tensor], **kwargs: Any
) -> Any:
    """Cascade attention of ``q`` ``[tokens, num_qo_heads, head_dim]``; returns ``out``.

    {release_notes}
    """


def _shared_init(
    self: Any,
    float_workspace_buffer: Tensor,
    kv_layout: Literal["NHD", "HND"] = "NHD",
    **kwargs: Any,
) -> None:
    """Create the wrapper over one float workspace buffer (FlashInfer's ``__init__``; it
    builds the release's own paged wrapper inside).

    {release_notes}
    """


def _shared_decode_begin_forward(
    self: Any,
    unique_kv_indptr: Tensor,
    unique_kv_indices: Tensor,
    unique_kv_last_page_len: Tensor,
    num_qo_heads: int,
    num_kv_heads: int,
    head_dim: int,
    page_size: int,
    data_type: str | torch.dtype = "float16",
    **kwargs: Any,
) -> None:
    """Plan decode over each request's own pages (after the shared prefix): the page
    table as ``BatchDecodeWithPagedKVCacheWrapper.plan`` takes it, ``data_type`` the
    KV cache's dtype.

    {release_notes}
    """


def _shared_decode_forward(
    self: Any,
    q: Tensor,
    k_shared: Tensor,
    v_shared: Tensor,
    unique_kv_cache: Tensor | tuple[Tensor, Tensor],
    **kwargs: Any,
) -> Any:
    """Decode attention of ``q`` ``[batch, num_qo_heads, head_dim]`` over the shared
    prefix ``k_shared`` / ``v_shared`` (``[shared_len, num_kv_heads, head_dim]`` NHD,
    ``[num_kv_heads, shared_len, head_dim]`` HND) and each request's pages
    ``unique_kv_cache``; returns ``out`` like ``q``.

    {release_notes}
    """


def _shared_prefill_begin_forward(
    self: Any,
    qo_indptr: Tensor,
    paged_kv_indptr: Tensor,
    paged_kv_indices: Tensor,
    paged_kv_last_page_len: Tensor,
    num_qo_heads: int,
    num_kv_heads: int,
    head_dim: int,
    page_size: int,
    **kwargs: Any,
) -> None:
    """Plan prefill over each request's own pages (after the shared prefix), as
    ``BatchPrefillWithPagedKVCacheWrapper.plan`` takes them.

    {release_notes}
    """


def _shared_prefill_forward(
    self: Any,
    q: Tensor,
    k_shared: Tensor,
    v_shared: Tensor,
    unique_kv_cache: Tensor | tuple[Tensor, Tensor],
    causal: bool = False,
    use_fp16_qk_reduction: bool = False,
    sm_scale: float | None = None,
    rope_scale: float | None = None,
    rope_theta: float | None = None,
    **kwargs: Any,
) -> Any:
    """Prefill attention of ``q`` ``[qo_indptr[-1], num_qo_heads, head_dim]`` over the
    shared prefix (never causal) and each request's pages (``causal`` applies to
    them); returns ``out`` like ``q``.

    {release_notes}
    """


lazy_facades(globals(), SPECS.values())
CLASSES = {
    CLASS: WrapperClass(
        facade=__name__,
        name=CLASS,
        module=MODULE,
        methods={
            "__init__": (_init, METHODS["__init__"]),
            "plan": (_plan, METHODS["plan"]),
            "run": (_run, METHODS["run"]),
        },
        aliases={"begin_forward": "plan", "forward": "run"},
        doc="""Multi-level cascade attention over one paged KV table (shared prefixes
        at the upper levels, each request's own pages at the last): ``plan`` the levels'
        query offsets and page tables once, then ``run`` once per layer; the levels'
        states merge as ``merge_state`` merges them.""",
    ),
    SHARED_DECODE: WrapperClass(
        facade=__name__,
        name=SHARED_DECODE,
        module=MODULE,
        methods={
            "__init__": (_shared_init, SHARED_DECODE_METHODS["__init__"]),
            "begin_forward": (
                _shared_decode_begin_forward,
                SHARED_DECODE_METHODS["begin_forward"],
            ),
            "forward": (_shared_decode_forward, SHARED_DECODE_METHODS["forward"]),
        },
        extra={"end_forward": _attention.end_forward},
        doc="""Batch decode over one shared prefix (contiguous K/V tensors) plus each
        request's own pages: ``begin_forward`` once per batch, ``forward`` per layer
        (FlashInfer merges the two parts' states inside;
        ``MultiLevelCascadeAttentionWrapper`` is the general form).""",
    ),
    SHARED_PREFILL: WrapperClass(
        facade=__name__,
        name=SHARED_PREFILL,
        module=MODULE,
        methods={
            "__init__": (_shared_init, SHARED_PREFILL_METHODS["__init__"]),
            "begin_forward": (
                _shared_prefill_begin_forward,
                SHARED_PREFILL_METHODS["begin_forward"],
            ),
            "forward": (_shared_prefill_forward, SHARED_PREFILL_METHODS["forward"]),
        },
        extra={"end_forward": _attention.end_forward},
        doc="""Batch prefill / append over one shared prefix (contiguous K/V tensors)
        plus each request's own pages: ``begin_forward`` once per batch, ``forward`` per
        layer (FlashInfer merges the two parts' states inside;
        ``MultiLevelCascadeAttentionWrapper`` is the general form).""",
    ),
}
lazy_classes(globals(), CLASSES)


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
