"""Adapter tables for ``flashinfer.decode``: ``BatchDecodeWithPagedKVCacheWrapper``
(``__init__``, ``plan``, ``run``) and ``single_decode_with_kv_cache``.

Read from the released sources (every signature: ``_snapshots/decode.*.json``; the
shared return / LSE conventions: :mod:`._attention`):

* ``__init__``: ``jit_args`` 0.2.0.post2, ``backend`` 0.2.9 (values: ``auto`` / ``fa2`` /
  ``trtllm-gen`` 0.2.9, ``fa3`` 0.6.0 (0.2.9-0.5.x take ``fa3`` and run fa2),
  ``cute-dsl`` 0.6.13, ``cudnn`` 0.7.4; before 0.2.9 every decode runs FlashInfer's own
  FA2-family kernels, so ``backend="fa2"`` is dropped there), ``jit_kwargs`` 0.7.4.
* ``plan``: ``non_blocking``'s default flipped to ``True`` in 0.2.4 (always forwarded);
  ``block_tables`` / ``seq_lens`` 0.2.9; ``fixed_split_size`` / ``disable_split_kv``
  0.4.0 (``fixed_split_size=-1``, what 0.4.0+ make of ``None``, is dropped before 0.4.0,
  refused for a CUDA-core wrapper as 0.4.0+ refuse it: :class:`SplitNeedsTensorCores`);
  ``o_data_type`` 0.6.0, inserted mid-list (positional calls written for 0.5.x
  shift from ``data_type`` on: the stable ``plan`` is keyword-only after ``page_size``,
  as FlashInfer's own from 0.6.15, whose forwarder maps deprecated positional extras in
  0.6.0's order); ``q_len_per_req`` 0.6.13 (``> 1`` needs 0.7.0:
  :class:`~._attention.MultiTokenDecode`); ``window_right`` 0.6.15; ``is_causal`` 0.7.0
  (``None`` = ``q_len_per_req > 1``); ``use_token_head_sf`` 0.7.4.  From 0.6.15 the
  public ``plan`` forwards ``**kwargs`` to ``_plan_impl``, whose signature the snapshot
  records.
* ``run``: ``out`` / ``lse`` 0.2.1.post2; ``enable_pdl`` 0.2.7 (hint); ``window_left``
  0.2.9 (must equal the planned value except on trtllm-gen); ``sinks`` 0.2.10;
  ``q_len_per_req`` 0.3.0 (default 1, ``None`` from 0.6.13: left out unless given);
  ``skip_softmax_threshold_scale_factor`` 0.6.4; ``kv_cache_sf`` 0.6.8, called
  ``kv_block_scales`` in 0.6.7.
* ``single_decode_with_kv_cache``: ``return_lse`` 0.2.6.
* Requests without keys (``kv_len == 0``) before 0.7.0: ``plan`` / ``fast_decode_plan``
  find them and ``run`` writes 0.7.0's ``lse = -inf`` (and ``out = 0`` on fa3)
  (:mod:`._empty_rows`; FlashInfer #4452, fixed by PR #4401).
* ``BatchDecodeMlaWithPagedKVCacheWrapper`` (0.2.0.post1-0.6.18.post1; removed in 0.7.0,
  where ``fi_compat.mla.BatchMLAPagedAttentionWrapper`` serves MLA): ``use_tensor_cores``
  inserted at slot 2 of ``__init__`` in 0.2.1.post2 (keyword-only here after
  ``use_cuda_graph``); ``run`` got ``out`` / ``lse`` before ``return_lse`` in 0.2.1.post2
  (keyword-only here after ``v_scale``; copied into before) and ``enable_pdl`` in 0.2.7
  (its own docstring: "fake placeholder (sm80)": a hint).
* ``fast_decode_plan(wrapper, ...)`` (0.4.0; ``q_len_per_req`` inserted before
  ``global_override_indptr_cpu`` in 0.6.16): before 0.4.0 the wrapper's full ``plan``
  (:func:`plan_in_full`), with ``fast_decode_plan``'s dtype defaults.
"""

from __future__ import annotations

from .._core import EntryPoint, Normalizer, Param
from ..errors import InvalidArgumentError
from ..registry import at_least
from . import _elementwise as ew
from ._attention import (
    CallerBuffers,
    IgnoredByBackend,
    MultiTokenDecode,
    method,
    prepare,
    validate_mla_run,
    validate_paged_run,
    validate_single,
)
from ._empty_rows import PlanRows, RunRows
from .trtllm_attention import DECODE_SPECS as TRTLLM

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement

MODULE = "flashinfer.decode"
CLASS = "BatchDecodeWithPagedKVCacheWrapper"
FACADE = "fi_compat.decode"


def _method(name: str, params: list[Param], **kw: Any) -> EntryPoint:
    return method(FACADE, MODULE, CLASS, name, params, "attention.decode", **kw)


_BACKENDS: dict[object, str] = {
    # "fa2" from 0.2.9, the parameter's first release: 0.2.9-0.5.x list it ("auto/fa2 or
    # trtllm-gen", 0.2.9 decode.py:695) and test the name against "trtllm-gen" only
    # (0.2.9 decode.py:734, 763, 954, 1204), so it runs fa2 as 0.6.0+ do
    "fa3": "0.6.0",  # 0.2.9-0.5.x accept it and run fa2 (0.5.3 decode.py:1031)
    "cute-dsl": "0.6.13",
    "cudnn": "0.7.4",
}

INIT = _method(
    "__init__",
    [
        Param(
            "backend",
            value_since=_BACKENDS,
            # before 0.2.9 a decode runs FlashInfer's FA2-family kernels only: the
            # tensor-core path builds the fa2 prefill module, the other the CUDA-core
            # decode kernel; 0.6.0+ run the same for "fa2" (only "auto" is resolved)
            neutral=("fa2",),
            neutral_ref=(
                "0.2.8 decode.py:926-932 (tensor cores: get_batch_prefill_module('fa2')), "
                ":966 (else get_batch_decode_module); 0.6.0 decode.py:1041-1053 (only "
                "'auto' goes to determine_attention_backend; 'fa2' builds the fa2 module)"
            ),
            note="kernel family; before 0.2.9 FlashInfer's FA2-family kernels",
            ref="0.2.9 backend (trtllm-gen, fa2); 0.6.0 fa3; 0.6.13 cute-dsl; 0.7.4 cudnn",
        ),
        Param("jit_args", note="custom JIT module arguments", ref="0.2.0.post2"),
        Param("jit_kwargs", note="custom JIT module keyword arguments", ref="0.7.4"),
    ],
)


class SplitNeedsTensorCores(Normalizer):
    """``plan(fixed_split_size=...)`` on a wrapper without tensor cores: 0.4.0-0.7.4
    raise ``ValueError("fixed_split_size is only supported by tensor core decode")``
    for any value but ``None`` (0.4.0 decode.py:966, 0.7.4 decode.py:2508), ``-1``
    included.  Before 0.4.0 the table drops ``-1`` (its neutral value), so the same
    refusal is made here, before the plan, where the release lacks the parameter."""

    args = ("self", "fixed_split_size")
    out = ()
    only_if_given = ("fixed_split_size",)
    boundaries = ("0.4.0",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.4.0"):
            return None  # the release checks it itself, before any launch
        where = adapter.entry.dotted

        def check(receiver: Any, fixed_split_size: Any) -> tuple[Any, ...]:
            if getattr(receiver, "_use_tensor_cores", None) is False:
                raise InvalidArgumentError(
                    f"{where}(fixed_split_size={fixed_split_size!r}): fixed_split_size is "
                    f"only supported by tensor-core decode (FlashInfer 0.4.0+ refuse it "
                    f"for this wrapper). Fix: leave fixed_split_size=None, or create the "
                    f"wrapper with use_tensor_cores=True"
                )
            return ()

        return check

    def describe(self, p: Placement) -> str | None:
        if at_least(p, "0.4.0"):
            return None
        return "`fixed_split_size=-1` refused without tensor cores (as 0.4.0+ refuse it)"


PLAN = _method(
    "plan",
    [
        Param("window_right", note="right sliding-window size", ref="0.6.15"),
        Param(
            "o_data_type",
            note="output dtype other than q's",
            ref="0.6.0 (inserted before data_type: positional calls shift)",
        ),
        Param(
            "non_blocking",
            explicit=True,
            ref="0.2.4 flipped the default False -> True: always forwarded",
        ),
        Param("block_tables", note="trtllm-gen block tables", ref="0.2.9"),
        Param("seq_lens", note="trtllm-gen sequence lengths", ref="0.2.9"),
        Param(
            "fixed_split_size",
            # 0.4.0+ turn None into -1 ("no fixed split"): the scheduler then searches
            # the chunk size as every earlier release does
            neutral=(-1,),
            neutral_ref=(
                "0.4.0 decode.py:970-971 (None -> -1); 0.4.0 include/flashinfer/"
                "attention/scheduler.cuh:568-575 (-1: PrefillBinarySearchKVChunkSize, "
                "0.3.1's only path); refused without tensor cores as 0.4.0 decode.py:966 does"
            ),
            note="fixed split-KV chunk size",
            ref="0.4.0",
        ),
        Param("disable_split_kv", note="no split-KV scheduling", ref="0.4.0"),
        Param("q_len_per_req", note="query tokens per request", ref="0.6.13; causal 0.7.0"),
        Param(
            "is_causal",
            # None means q_len_per_req > 1 and an explicit value must agree (0.7.0); a
            # release without it decodes one query row (q_len_per_req > 1 is refused)
            neutral=(False,),
            neutral_ref="0.7.0 decode.py:1550-1552 (None -> q_len_per_req > 1; else must equal)",
            note="causal mask for multi-token decode",
            ref="0.7.0 (None = q_len_per_req > 1)",
        ),
        Param("use_token_head_sf", note="per-token-head KV scale factors", ref="0.7.4"),
    ],
    normalizers=(MultiTokenDecode(), SplitNeedsTensorCores()),
    results=(PlanRows("decode"),),
)


def _decode_ignores_sinks(w: Any, pl: Any, sinks: Any) -> bool:
    """``run(sinks=...)`` reaches only the trtllm-gen, cute-dsl (0.6.15+), cudnn (0.7.1+)
    and 0.7.4's XQA multi-token kernels: the fa2 / fa3 prefill-kernel path (``_backend``
    after ``plan``) and the CUDA-core decode kernels leave it out of their arguments in
    every release 0.2.10-0.7.4 (0.2.10 decode.py:1292-1321, 0.7.4 decode.py:3833-3879;
    no fa2 / fa3 binding has a sink parameter)."""
    if getattr(w, "_use_xqa_mtp_decode", False):
        return False
    backend = getattr(w, "_backend", None)
    if backend in ("fa2", "fa3"):
        return True
    return backend in ("auto", None) and not getattr(w, "_use_tensor_cores", True)


RUN = _method(
    "run",
    [
        Param("out", emulation="caller_buffers", ref="0.2.1.post2"),
        Param("lse", emulation="caller_buffers", ref="0.2.1.post2"),
        Param("enable_pdl", hint=True, note="programmatic dependent launch", ref="0.2.7"),
        Param("window_left", note="per-run sliding window", ref="0.2.9"),
        Param("sinks", note="attention sinks", ref="0.2.10"),
        Param(
            "q_len_per_req",
            neutral=(1, None),
            neutral_ref="0.3.0 decode.py:1149, 1250 (default 1: one query row per request, "
            "read by trtllm-gen only); 0.6.13 decode.py:1478-1497 (None: q's rows per request)",
            ref="0.3.0; default None from 0.6.13",
        ),
        Param(
            "skip_softmax_threshold_scale_factor",
            note="skip-softmax sparsity threshold",
            ref="0.6.4",
        ),
        Param(
            "kv_cache_sf",
            spelled=(("0.6.8", "kv_block_scales", None),),
            note="NVFP4 KV-cache scale factors",
            ref="0.6.7 kv_block_scales, renamed 0.6.8",
        ),
    ],
    validate=validate_paged_run(f"{FACADE}.{CLASS}.run"),
    validate_args=("q", "paged_kv_cache"),
    prepare=prepare,
    devices=ew.any_cuda_device,
    emulations=(CallerBuffers(),),
    results=(RunRows(layout=False),),
    normalizers=(
        IgnoredByBackend(
            ("sinks",),
            _decode_ignores_sinks,
            "create the wrapper with backend='trtllm-gen' (SM10x), 'cute-dsl' (0.6.15+) or "
            "'cudnn' (0.7.1+), which apply attention sinks",
        ),
    ),
)

SINGLE = EntryPoint(
    facade=FACADE,
    name="single_decode_with_kv_cache",
    module=MODULE,
    params=[
        Param("return_lse", note="also return the base-2 LSE", ref="0.2.6"),
    ],
    validate=validate_single(f"{FACADE}.single_decode_with_kv_cache", 2),
    validate_args=("q", "k", "v"),
    prepare=prepare,
    devices=ew.any_cuda_device,
    feature="attention.decode",
)


# the stable wrapper's plan function, for FlashInfer's own wrapper instances: a getter
# that fi_compat.decode, which builds the stable class, installs (no import back to it)
STABLE_PLAN: list[Callable[[], Any]] = []


def plan_in_full(
    self: Any,
    indptr: Any,
    indices: Any,
    last_page_len: Any,
    num_qo_heads: int,
    num_kv_heads: int,
    head_dim: int,
    page_size: int,
    pos_encoding_mode: str,
    window_left: int,
    logits_soft_cap: float | None,
    q_data_type: Any,
    kv_data_type: Any,
    data_type: Any,
    sm_scale: float | None,
    rope_scale: float | None,
    rope_theta: float | None,
    non_blocking: bool,
    fixed_split_size: int | None,
    disable_split_kv: bool,
    q_len_per_req: int,
    global_override_indptr_cpu: Any,
    **extra: Any,
) -> None:
    """``fast_decode_plan`` before 0.4.0: the wrapper's full (stable) ``plan`` with the
    same arguments, which computes the same plan.  ``fast_decode_plan``'s own dtype
    defaults are kept (0.4.1 ``decode.py``: ``data_type`` sets q's dtype, then float16),
    which differ from ``plan``'s (q float16 unless given); ``global_override_indptr_cpu``
    only spares the host copy of ``indptr`` that ``plan`` makes."""
    if q_data_type is None:
        q_data_type = data_type if data_type is not None else "float16"
    if kv_data_type is None:
        kv_data_type = data_type if data_type is not None else q_data_type
    cls = type(self)
    # the stable subclass (or a user's subclass of it), else FlashInfer's own wrapper:
    # the stable plan function takes it as well
    plan = cls.plan if "_fi_compat_base" in dir(cls) else STABLE_PLAN[0]()
    plan(
        self, indptr, indices, last_page_len, num_qo_heads, num_kv_heads, head_dim, page_size,
        pos_encoding_mode=pos_encoding_mode, window_left=window_left,
        logits_soft_cap=logits_soft_cap, q_data_type=q_data_type, kv_data_type=kv_data_type,
        sm_scale=sm_scale, rope_scale=rope_scale, rope_theta=rope_theta,
        non_blocking=non_blocking, fixed_split_size=fixed_split_size,
        disable_split_kv=disable_split_kv, q_len_per_req=q_len_per_req, **extra,
    )  # fmt: skip


_FAST_PLAN_PARAMS = [
    "indptr",
    "indices",
    "last_page_len",
    "num_qo_heads",
    "num_kv_heads",
    "head_dim",
    "page_size",
    "pos_encoding_mode",
    "window_left",
    "logits_soft_cap",
    "q_data_type",
    "kv_data_type",
    "data_type",
    "sm_scale",
    "rope_scale",
    "rope_theta",
    "non_blocking",
    "fixed_split_size",
    "disable_split_kv",
]

FAST_PLAN = EntryPoint(
    facade=FACADE,
    name="fast_decode_plan",
    module=MODULE,
    params=[
        *(Param(n) for n in _FAST_PLAN_PARAMS),
        Param("q_len_per_req", note="query tokens per request", ref="0.6.16; causal 0.7.0"),
        Param("global_override_indptr_cpu", note="host copy of indptr"),
    ],
    receiver="self",
    lean=True,
    normalizers=(MultiTokenDecode(),),
    results=(PlanRows("fast_decode"),),
    fallback=plan_in_full,
    feature="attention.decode",
    matrix_note="before 0.4.0: the wrapper's full plan (fi_compat)",
)

MLA_CLASS = "BatchDecodeMlaWithPagedKVCacheWrapper"
_MLA_REMOVED = (
    "use fi_compat.mla.BatchMLAPagedAttentionWrapper (FlashInfer 0.7.0 removed the MLA "
    "decode wrapper), or pin 'flashinfer-python<0.7.0'"
)


def _mla_method(name: str, params: list[Param], **kw: Any) -> EntryPoint:
    return method(
        FACADE, MODULE, MLA_CLASS, name, params, "attention.decode", removed_fix=_MLA_REMOVED, **kw
    )


_validate_mla = validate_mla_run(f"{FACADE}.{MLA_CLASS}.run")

MLA_METHODS = {
    "__init__": _mla_method(
        "__init__",
        [
            Param("use_tensor_cores", ref="0.2.1.post2 (inserted at slot 2)"),
        ],
    ),
    "plan": _mla_method(
        "plan",
        [
            *(Param(n) for n in ("indptr", "indices", "last_page_len", "num_qo_heads")),
            *(Param(n) for n in ("head_dim_compressed_kv", "page_size", "sm_scale")),
            *(Param(n) for n in ("window_left", "logits_soft_cap", "data_type")),
            *(Param(n) for n in ("q_data_type", "rope_scale", "rope_theta")),
        ],
    ),
    "run": _mla_method(
        "run",
        [
            *(Param(n) for n in ("q_nope", "q_pe", "paged_ckv_cache", "paged_kpe_cache")),
            *(Param(n) for n in ("q_scale", "k_scale", "v_scale")),
            Param("out", emulation="caller_buffers", ref="0.2.1.post2"),
            Param("lse", emulation="caller_buffers", ref="0.2.1.post2"),
            Param("enable_pdl", hint=True, note="a placeholder (sm80)", ref="0.2.7"),
        ],
        validate=lambda q_nope, q_pe, ckv, kpe: _validate_mla(q_nope, q_pe, ckv, kpe, None, None),
        validate_args=("q_nope", "q_pe", "paged_ckv_cache", "paged_kpe_cache"),
        prepare=prepare,
        devices=ew.any_cuda_device,
        emulations=(CallerBuffers(),),
    ),
}

METHODS = {"__init__": INIT, "plan": PLAN, "run": RUN}
SPECS = {"single_decode_with_kv_cache": SINGLE, "fast_decode_plan": FAST_PLAN}

# CUDAGraphBatchDecodeWithPagedKVCacheWrapper: one __init__ signature 0.2.0.post1-0.7.4
# (it calls the base's with use_cuda_graph=True); plan / run are the base's on every
# release (snapshots: "inherited_from"), so the stable class shares PLAN / RUN
GRAPH_CLASS = "CUDAGraphBatchDecodeWithPagedKVCacheWrapper"
GRAPH_INIT = method(FACADE, MODULE, GRAPH_CLASS, "__init__", [], "attention.decode")

ENTRIES = [
    *METHODS.values(),
    SINGLE,
    FAST_PLAN,
    *TRTLLM.values(),
    *MLA_METHODS.values(),
    GRAPH_INIT,
]
