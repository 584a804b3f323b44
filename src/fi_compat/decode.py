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
does nothing, on every release (0.7.0 removed it); ``forward`` is FlashInfer's own.
"""

from __future__ import annotations

from ._adapters import _attention
from ._adapters.decode import CLASS, METHODS, MODULE, SPECS
from ._core import OMIT, lazy_facades
from ._core.classes import WrapperClass, lazy_classes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    import torch
    from torch import Tensor

__all__ = ["BatchDecodeWithPagedKVCacheWrapper", "fast_decode_plan", "single_decode_with_kv_cache"]


def _init(
    self: Any,
    float_workspace_buffer: Tensor,
    kv_layout: Literal["NHD", "HND"] = "NHD",
    use_cuda_graph: bool = False,
    use_tensor_cores: bool = False,
    paged_kv_indptr_buffer: Tensor | None = None,
    paged_kv_indices_buffer: Tensor | None = None,
    paged_kv_last_page_len_buffer: Tensor | None = None,
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


def _single_decode_with_kv_cache(
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


def _fast_decode_plan(
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


lazy_facades(
    globals(),
    {
        "single_decode_with_kv_cache": (
            _single_decode_with_kv_cache,
            SPECS["single_decode_with_kv_cache"],
        ),
        "fast_decode_plan": (_fast_decode_plan, SPECS["fast_decode_plan"]),
    },
)
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
        aliases={"begin_forward": "plan"},
        extra={
            "end_forward": _attention.end_forward,
            "run_return_lse": _attention.run_return_lse,
        },
    )
}
lazy_classes(globals(), CLASSES)

if TYPE_CHECKING:
    single_decode_with_kv_cache = _single_decode_with_kv_cache
    fast_decode_plan = _fast_decode_plan

    class BatchDecodeWithPagedKVCacheWrapper:
        __init__ = _init
        plan = _plan
        begin_forward = _plan
        run = _run

        def end_forward(self) -> None: ...
