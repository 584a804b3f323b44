"""Adapter tables for ``flashinfer.prefill``: ``BatchPrefillWithPagedKVCacheWrapper``,
``BatchPrefillWithRaggedKVCacheWrapper`` (``__init__``, ``plan``, ``run`` each) and
``single_prefill_with_kv_cache``.

Read from the released sources (every signature: ``_snapshots/prefill.*.json``; shared
conventions: :mod:`._attention`):

* ``__init__``: ``qk_indptr_buf`` renamed ``mask_indptr_buf`` and ``jit_module``
  replaced by ``jit_args`` in 0.2.0.post2; ``jit_kwargs`` 0.2.10 (default ``{}``, ``None``
  from 0.2.11: left out unless given); ``variant_owns_mask`` 0.7.0; paged
  ``max_total_num_rows`` 0.7.4.  ``backend``: ``fa2`` / ``fa3`` from the start,
  ``trtllm-gen`` 0.6.0, ``cute-dsl`` 0.6.18 (0.6.8-0.6.15 refuse ``return_lse`` there),
  ``cute-dsl-prims`` 0.7.0, ``cudnn`` 0.7.0 (the cuDNN path returns a natural-log LSE
  before 0.7.0 ``cudnn/prefill.py`` converts it: the same call would give another LSE).
* ``plan``: ``allow_fp16_qk_reduction`` renamed ``use_fp16_qk_reduction`` in
  0.2.0.post2; ``head_dim`` renamed ``head_dim_qk`` with ``head_dim_vo`` inserted after
  ``page_size`` in 0.2.1 (positional calls written for 0.2.0.x shift: the stable order
  is 0.7.4's); ``non_blocking``'s default flipped to ``True`` in 0.2.4 (always
  forwarded; ragged has it from 0.2.6); ``o_data_type`` inserted before ``non_blocking``
  in 0.6.0 (a 0.5.x positional call would put ``non_blocking`` into ``o_data_type``:
  ``o_data_type`` takes a dtype, a string or ``None``, so that call fails with a typed
  error naming ``fi_compat.written_for``); the multi-item scoring pointers 0.2.6; the
  trtllm-gen lengths 0.2.9 / 0.2.11.post2 (paged) and 0.6.2 (ragged);
  ``fixed_split_size`` / ``disable_split_kv`` 0.4.0 (``fixed_split_size=-1``, what 0.4.0+
  make of ``None``, dropped before); ``uniform_q_len`` 0.7.2.post1;
  ragged ``qo_indptr_cpu`` / ``kv_indptr_cpu`` and ``use_token_head_sf`` 0.7.4.
* ``run``: ``out`` / ``lse`` 0.2.1.post2; ``enable_pdl`` 0.2.7 (hint); paged ``q_scale``
  / ``k_scale`` / ``v_scale`` 0.2.9, ``window_left`` 0.2.9, ``sinks`` 0.2.10; ragged
  scales 0.6.0 (read by the cutlass backend and NVFP4 KV only); ``kv_cache_sf`` 0.6.10;
  ``lse_base`` / ``lse_layout`` 0.7.1 (emulated before: :class:`LseForm`, 0.7.4's own
  arithmetic); paged ``skip_softmax_threshold_scale_factor`` 0.6.4 and
  ``use_fp16_softmax`` / ``uses_spcompress`` 0.6.18 (``False`` dropped before:
  :func:`~._attention.sm107_variant`); paged ``kv_cache_sf`` 0.6.8.
* ``single_prefill_with_kv_cache``: ``scale_q`` / ``scale_k`` / ``scale_v`` / ``o_dtype``
  inserted after ``v`` and ``backend`` / ``return_lse`` reordered in 0.2.6;
  ``kv_cache_sf`` / ``k_scale`` / ``v_scale`` 0.6.10.
* Rows with no valid key (causal ``qo_len > kv_len``, ``kv_len == 0``, an all-zero
  custom-mask row) before 0.7.0: ``plan`` finds them and ``run`` /
  ``single_prefill_with_kv_cache`` write 0.7.0's ``out = 0`` / ``lse = -inf``
  (:mod:`._empty_rows`; FlashInfer #4452, fixed by PR #4401).
"""

from __future__ import annotations

from .._core import Emulation, EntryPoint, Param
from ..registry import at_least
from . import _elementwise as ew
from ._attention import (
    LN2,
    CallerBuffers,
    IgnoredByBackend,
    NoneMeans,
    fp16_qk_reduction,
    method,
    prepare,
    sm107_variant,
    validate_paged_run,
    validate_ragged_run,
    validate_single,
)
from ._empty_rows import PlanRows, RunRows, SingleRows
from .cudnn import SPECS as CUDNN
from .trtllm_attention import PREFILL_SPECS as TRTLLM

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, cast

    from .._core import Adapter
    from ..registry import Placement
else:

    def cast(_t: object, v: object) -> object:  # typing.cast without importing typing
        return v


MODULE = "flashinfer.prefill"
PAGED = "BatchPrefillWithPagedKVCacheWrapper"
RAGGED = "BatchPrefillWithRaggedKVCacheWrapper"
FACADE = "fi_compat.prefill"


class LseForm(Emulation):
    """``lse_base="ln"`` / ``lse_layout="HN"`` before 0.7.1: the kernels' base-2
    ``[tokens, heads]`` LSE finished as 0.7.4's ``prefill._finish_lse`` does (``mul_(ln2)``
    in place; ``"HN"``: one transpose into a contiguous ``[heads, tokens]`` tensor, the
    caller's ``lse`` buffer if given), so results are bit-identical."""

    name = "lse_form"
    reads = ("lse_base", "lse_layout")
    params = ("lse_base", "lse_layout")
    boundaries = ("0.7.1",)

    def may_apply(self, p: Placement) -> bool:
        return not at_least(p, "0.7.1")

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        pl = adapter.placement
        return (
            pl is not None
            and not at_least(pl, "0.7.1")
            and (kw["lse_base"] != "log2" or kw["lse_layout"] != "NH")
        )

    def describe(self, p: Placement) -> str | None:
        return None if at_least(p, "0.7.1") else "`lse_base` / `lse_layout` emulated"

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        if kw["return_lse"] is not True:
            return None  # no LSE is returned: nothing to finish (as 0.7.4)
        hn_out = None
        if kw["lse_layout"] == "HN":
            hn_out, kw["lse"] = kw["lse"], None  # the release writes [tokens, heads]
        return kw["lse_base"], kw["lse_layout"], hn_out

    def after(self, adapter: Adapter, kw: dict[str, Any], result: Any, state: object) -> Any:
        if state is None:
            return result
        base, layout, hn_out = cast("tuple[str, str, Any]", state)
        out, lse = result
        if layout == "NH":
            if base == "ln":
                lse.mul_(LN2)
            return out, lse
        import torch

        src = lse.t()
        if hn_out is None:
            hn_out = torch.empty(src.shape, dtype=lse.dtype, device=lse.device)
        if base == "ln":
            torch.mul(src, LN2, out=hn_out)
        else:
            hn_out.copy_(src)
        return out, hn_out


def _method(cls: str, name: str, params: list[Param], **kw: Any) -> EntryPoint:
    return method(FACADE, MODULE, cls, name, params, "attention.prefill", **kw)


_BACKEND: dict[object, str] = {
    "trtllm-gen": "0.6.0",
    "cute-dsl": "0.6.18",
    "cute-dsl-prims": "0.7.0",
    "cudnn": "0.7.0",
}
_BACKEND_REF = (
    "fa2/fa3 0.2.0; trtllm-gen 0.6.0; cute-dsl 0.6.18; cudnn 0.7.0 (natural-log LSE "
    "before: 0.7.0 cudnn/prefill.py)"
)


def _init(cls: str, buffers: list[str], extra: list[Param]) -> EntryPoint:
    return _method(
        cls,
        "__init__",
        [
            *(Param(b) for b in buffers),
            Param("mask_indptr_buf", spelled=(("0.2.0.post2", "qk_indptr_buf", None),)),
            Param("backend", value_since=_BACKEND, ref=_BACKEND_REF),
            Param("jit_args", note="custom JIT module arguments", ref="0.2.0.post2"),
            Param("jit_kwargs", note="custom JIT keyword arguments", ref="0.2.10"),
            Param("variant_owns_mask", note="custom variant owns the mask", ref="0.7.0"),
            *extra,
        ],
        normalizers=(NoneMeans("jit_kwargs", {}, "0.2.10", "0.2.11"),),
    )


def _common_plan_head(paged: bool) -> list[Param]:
    head = [Param("qo_indptr")]
    if paged:
        head += []
    else:
        head += [Param("kv_indptr")]
    head += [
        Param("head_dim_qk", spelled=(("0.2.1", "head_dim", None),), ref="0.2.1 rename"),
    ]
    if paged:
        head.append(Param("page_size"))
    head += [
        Param("head_dim_vo", note="value head size other than head_dim_qk", ref="0.2.1"),
        fp16_qk_reduction(),
    ]
    return head


def _dtypes() -> list[Param]:
    return [
        Param("o_data_type", note="output dtype other than q's", ref="0.6.0 (inserted)"),
        Param(
            "non_blocking",
            explicit=True,
            hint=True,  # host-to-device copy overlap only; ragged lacks it before 0.2.6
            ref="0.2.4 flipped the default False -> True: always forwarded",
        ),
    ]


def _items() -> list[Param]:
    ref = "0.2.6 multi-item scoring"
    return [
        Param("prefix_len_ptr", note="multi-item scoring", ref=ref),
        Param("token_pos_in_items_ptr", note="multi-item scoring", ref=ref),
        Param("token_pos_in_items_len", note="multi-item scoring", ref=ref),
        Param("max_item_len_ptr", note="multi-item scoring", ref=ref),
    ]


def _split() -> list[Param]:
    return [
        Param(
            "fixed_split_size",
            # 0.4.0+ turn None into -1 ("no fixed split"): the scheduler then searches
            # the chunk size as every earlier release does
            neutral=(-1,),
            neutral_ref=(
                "0.4.0 prefill.py:1686-1687 (paged), 2625-2626 (ragged): None -> -1; 0.4.0 "
                "include/flashinfer/attention/scheduler.cuh:568-575 (-1: "
                "PrefillBinarySearchKVChunkSize, 0.3.1's only path)"
            ),
            note="fixed split-KV chunk size",
            ref="0.4.0",
        ),
        Param("disable_split_kv", note="no split-KV scheduling", ref="0.4.0"),
    ]


def _trtllm(names: tuple[str, ...], ref: str) -> list[Param]:
    return [Param(n, note="trtllm-gen scheduling input", ref=ref) for n in names]


def _tail() -> list[Param]:
    return [
        Param("uniform_q_len", note="every request has this many query tokens", ref="0.7.2.post1"),
        Param("use_token_head_sf", note="per-token-head KV scale factors", ref="0.7.4"),
    ]


def _run_common(scales: list[str]) -> list[Param]:
    return [
        *(
            Param(s, note="quantisation scale", ref="paged q_scale 0.2.9; ragged 0.6.0")
            for s in scales
        ),
        Param("out", emulation="caller_buffers", ref="0.2.1.post2"),
        Param("lse", emulation="caller_buffers", ref="0.2.1.post2"),
        Param("lse_base", emulation="lse_form", ref="0.7.1"),
        Param("lse_layout", emulation="lse_form", ref="0.7.1"),
        Param("enable_pdl", hint=True, note="programmatic dependent launch", ref="0.2.7"),
    ]


def _paged_ignores_sinks(w: Any, pl: Placement, sinks: Any) -> bool:
    """Paged prefill ``run(sinks=...)``: only the trtllm-gen branch of ``paged_run``
    forwards it (0.2.10 prefill.py:217/565, 0.7.4 prefill.py:867); the fa2 and fa3
    branches drop it (0.7.4 prefill.py:878-966), and so does cudnn before 0.7.1, which
    raises from 0.7.1 (cute-dsl raises too)."""
    backend = getattr(w, "_backend", None)
    return backend in ("fa2", "fa3") or (backend == "cudnn" and not at_least(pl, "0.7.1"))


def _paged_ignores_scales(w: Any, pl: Placement, q: Any, k: Any, v: Any) -> bool:
    """Paged prefill ``q_scale`` / ``k_scale`` / ``v_scale``: 0.2.10 multiplies q and k
    into ``sm_scale`` but never applies ``v_scale`` (0.2.10 prefill.py:1985-1988), 0.2.11+
    apply all three on fa2 / fa3 / trtllm-gen; cudnn ignores all three before 0.6.0
    (0.5.3 prefill.py:2127-2150).  Before 0.2.10 not read here: passed as given."""
    if getattr(w, "_backend", None) == "cudnn" and not at_least(pl, "0.6.0"):
        return True
    return v is not None and at_least(pl, "0.2.10") and not at_least(pl, "0.2.11")


def _ragged_ignores_scales(
    w: Any, pl: Placement, q_scale: Any, k_scale: Any, v_scale: Any, q: Any, k: Any, sf: Any
) -> bool:
    """Ragged ``q_scale`` / ``k_scale`` / ``v_scale`` (0.6.0) on fa2 / fa3: ignored in
    0.6.0-0.6.9 (0.6.0 prefill.py:2985-3100); 0.6.10+ apply them with an NVFP4 cache
    (``kv_cache_sf``); 0.7.0+ also apply ``k_scale`` / ``v_scale`` to FP8 K / V with a
    16-bit q (0.7.4 prefill.py:6924-6931, 7485-7487).  Everything else is dropped."""
    if getattr(w, "_backend", None) not in ("fa2", "fa3"):
        return False
    if sf is not None and at_least(pl, "0.6.10"):
        return False
    if at_least(pl, "0.7.0") and q_scale is None:
        fp8 = getattr(getattr(k, "dtype", None), "itemsize", 0) == 1
        if fp8 and getattr(getattr(q, "dtype", None), "itemsize", 0) == 2:
            return False
    return True


PAGED_METHODS = {
    "__init__": _init(
        PAGED,
        [
            "qo_indptr_buf",
            "paged_kv_indptr_buf",
            "paged_kv_indices_buf",
            "paged_kv_last_page_len_buf",
        ],
        [Param("max_total_num_rows", note="row budget for CUDA-graph plans", ref="0.7.4")],
    ),
    "plan": _method(
        PAGED,
        "plan",
        [
            *_common_plan_head(paged=True),
            *_dtypes(),
            *_items(),
            *_trtllm(("seq_lens",), "0.2.9"),
            *_trtllm(("seq_lens_q",), "0.2.11.post2"),
            *_trtllm(("block_tables",), "0.2.9"),
            *_trtllm(("max_token_per_sequence", "max_sequence_kv"), "0.2.11.post2"),
            *_split(),
            *_tail(),
        ],
        results=(PlanRows("paged"),),
    ),
    "run": _method(
        PAGED,
        "run",
        [
            *_run_common(["q_scale", "k_scale", "v_scale"]),
            Param("window_left", note="per-run sliding window", ref="0.2.9"),
            Param("sinks", note="attention sinks", ref="0.2.10"),
            Param("kv_cache_sf", note="NVFP4 KV-cache scale factors", ref="0.6.8"),
            Param(
                "skip_softmax_threshold_scale_factor",
                note="skip-softmax sparsity threshold",
                ref="0.6.4",
            ),
            sm107_variant("use_fp16_softmax", "fp16 softmax accumulation"),
            sm107_variant("uses_spcompress", "sparse-compressed KV"),
        ],
        validate=validate_paged_run(f"{FACADE}.{PAGED}.run"),
        validate_args=("q", "paged_kv_cache"),
        prepare=prepare,
        devices=ew.any_cuda_device,
        emulations=(CallerBuffers(), LseForm()),
        results=(RunRows(layout=True),),
        normalizers=(
            IgnoredByBackend(
                ("sinks",),
                _paged_ignores_sinks,
                "create the wrapper with backend='trtllm-gen' (SM10x), which applies "
                "attention sinks",
                boundaries=("0.7.1",),
            ),
            IgnoredByBackend(
                ("q_scale", "k_scale", "v_scale"),
                _paged_ignores_scales,
                "scale q / k / v yourself, or use another backend (fa2 / fa3 apply them "
                "from 0.2.11; cudnn from 0.6.0)",
                boundaries=("0.2.11", "0.6.0"),
            ),
        ),
    ),
}


# FlashInfer's own ``forward_return_lse`` calls ``self.run_return_lse(q, paged_kv_cache,
# k_scale, v_scale)`` before 0.2.9: positionally, into ``run``'s ``*args`` (0.2.0.post1-
# 0.2.8 ``run(self, q, paged_kv_cache, *args, k_scale=None, v_scale=None, ...)``), which
# go to a custom JIT module only: the built-in kernels drop both scales (0.2.5
# prefill.py:1700 the call, 1656 ``*args`` to the JIT module, 1587 / 1670 the keyword
# scales applied).  #1254 (0.2.9, "correctly pass k_scale and v_scale to
# run() in forward_return_lse") passes them by keyword, as ``forward`` always did; the
# release view binds them so on every release (the same result as 0.2.9+ and as
# ``forward``).
PAGED_OWN_VARARGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "run": ("0.2.9", ("k_scale", "v_scale"))
}


RAGGED_METHODS = {
    "__init__": _init(RAGGED, ["qo_indptr_buf", "kv_indptr_buf"], []),
    "plan": _method(
        RAGGED,
        "plan",
        [
            *_common_plan_head(paged=False),
            *_dtypes(),
            *_items(),
            *_split(),
            *_trtllm(
                (
                    "seq_lens",
                    "seq_lens_q",
                    "max_token_per_sequence",
                    "max_sequence_kv",
                    "v_indptr",
                    "o_indptr",
                ),
                "0.6.2",
            ),
            *_trtllm(("qo_indptr_cpu", "kv_indptr_cpu"), "0.7.4 host copies of the indptrs"),
            *_tail(),
        ],
        results=(PlanRows("ragged"),),
    ),
    "run": _method(
        RAGGED,
        "run",
        [
            *_run_common(["q_scale", "k_scale", "v_scale", "o_scale"]),
            Param("kv_cache_sf", note="NVFP4 KV-cache scale factors", ref="0.6.10"),
        ],
        validate=validate_ragged_run(f"{FACADE}.{RAGGED}.run"),
        validate_args=("q", "k", "v"),
        prepare=prepare,
        devices=ew.any_cuda_device,
        emulations=(CallerBuffers(), LseForm()),
        results=(RunRows(layout=True),),
        normalizers=(
            IgnoredByBackend(
                ("q_scale", "k_scale", "v_scale"),
                _ragged_ignores_scales,
                "scale q / k / v yourself, or pass FP8 K / V with a 16-bit q (0.7.0+), or "
                "an NVFP4 cache with kv_cache_sf (0.6.10+)",
                boundaries=("0.6.10", "0.7.0"),
                also=("q", "k", "kv_cache_sf"),
            ),
        ),
    ),
}

SINGLE = EntryPoint(
    facade=FACADE,
    name="single_prefill_with_kv_cache",
    module=MODULE,
    params=[
        Param("scale_q", note="fp8 scale of q", ref="0.2.6 (inserted after v)"),
        Param("scale_k", note="fp8 scale of k", ref="0.2.6"),
        Param("scale_v", note="fp8 scale of v", ref="0.2.6"),
        Param("o_dtype", note="output dtype", ref="0.2.6"),
        fp16_qk_reduction(),
        Param("backend", value_since=_BACKEND, ref=_BACKEND_REF),
        Param("kv_cache_sf", note="NVFP4 KV-cache scale factors", ref="0.6.10"),
        Param("k_scale", note="NVFP4 / fp8 k scale", ref="0.6.10"),
        Param("v_scale", note="NVFP4 / fp8 v scale", ref="0.6.10"),
    ],
    validate=validate_single(f"{FACADE}.single_prefill_with_kv_cache", 3),
    validate_args=("q", "k", "v"),
    prepare=prepare,
    devices=ew.any_cuda_device,
    results=(SingleRows(),),
    feature="attention.prefill",
)

SPECS = {"single_prefill_with_kv_cache": SINGLE}
ENTRIES = [
    *PAGED_METHODS.values(),
    *RAGGED_METHODS.values(),
    SINGLE,
    *TRTLLM.values(),
    *CUDNN.values(),
]
