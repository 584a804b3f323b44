"""Adapter tables for ``flashinfer.cascade``: the state merges (``merge_state``,
``merge_state_in_place``, ``merge_states``) and ``MultiLevelCascadeAttentionWrapper``.

Read from the released sources (``_snapshots/cascade.*.json``): the three merges have one
signature in every release 0.2.0.post1-0.7.4 (``v`` / ``s`` pairs, ``s`` the base-2 LSE
that the attention ``run(..., return_lse=True)`` returns; an ``lse_base="ln"`` LSE must
not be fed to them).  The wrapper's ``plan`` renamed ``allow_fp16_qk_reduction`` to
``use_fp16_qk_reduction`` in 0.2.0.post2 and appended ``kv_data_type`` in 0.2.9;
``begin_forward`` is ``plan`` and ``forward`` is ``run`` on every release.  Before 0.7.0
two ``-inf`` states merge to NaN and ``merge_states`` of ``-inf`` states ends at the
sentinel ``s = -5e4``: the merges return 0.7.0's ``v = 0`` / ``s = -inf`` there
(:mod:`._empty_rows`; FlashInfer PR #4401).

The shared-prefix wrappers (``BatchDecodeWithSharedPrefixPagedKVCacheWrapper``,
``BatchPrefillWithSharedPrefixPagedKVCacheWrapper``; FlashInfer's docstring says "will be
deprecated", but every release 0.2.0.post1-0.7.4 has both) compose FlashInfer's own
paged wrapper, ``single_prefill_with_kv_cache(return_lse=True)`` over the shared K/V and
``merge_state_in_place``, all inside the release: their methods are ``__init__``,
``begin_forward`` and ``forward`` (no ``plan`` / ``run``).  Their history: the prefill
``forward`` renamed ``allow_fp16_qk_reduction`` to ``use_fp16_qk_reduction`` in
0.2.0.post2; 0.7.0 removed the no-op ``end_forward`` (kept here, a no-op on every
release) and gave the prefill class ``prewarm_paged_kv_stride_variant`` (FlashInfer's,
inherited where the release has it).
"""

from __future__ import annotations

from .._core import EntryPoint, Param, ResultHook
from ..errors import InvalidArgumentError
from . import _elementwise as ew
from ._attention import fp16_qk_reduction, method, prepare, validate_paged_run
from ._empty_rows import MergeInPlace, MergeMany, MergeTwo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MODULE = "flashinfer.cascade"
CLASS = "MultiLevelCascadeAttentionWrapper"
FACADE = "fi_compat.cascade"


def _validate_pairs(name: str, names: tuple[str, ...], v_dims: int) -> Callable[..., int]:
    """``(v, s)`` pairs named ``names``: ``v`` ``v_dims``-D, ``s`` (a base-2 LSE) float32
    of ``v``'s shape without the last dimension, all on one device; returns its CUDA
    index."""
    where = f"{FACADE}.{name}"

    def validate(*ts: Any) -> int:
        for i in range(0, len(ts), 2):
            (vn, v), (sn, s) = (names[i], ts[i]), (names[i + 1], ts[i + 1])
            ew.tensor(where, vn, v)
            ew.tensor(where, sn, s)
            if v.dim() != v_dims or tuple(s.shape) != tuple(v.shape[:-1]):
                raise InvalidArgumentError(
                    f"{where}: {vn} must be {v_dims}-D and {sn} its shape without the last "
                    f"dimension, got {tuple(v.shape)} and {tuple(s.shape)}"
                )
            if str(s.dtype) != "torch.float32":
                raise InvalidArgumentError(
                    f"{where}: {sn} (a base-2 LSE) must be float32, got {s.dtype}"
                )
        return ew.check_device(where, names[0], ts[0], dict(zip(names[1:], ts[1:], strict=True)))

    return validate


def _merge(name: str, params: list[str], v_dims: int, fix: ResultHook) -> EntryPoint:
    pairs = tuple(p for p in params if p != "mask")
    return EntryPoint(
        facade=FACADE,
        name=name,
        module=MODULE,
        params=[Param(p) for p in params],
        validate=_validate_pairs(name, pairs, v_dims),
        validate_args=pairs,
        prepare=prepare,
        devices=ew.any_cuda_device,
        results=(fix,),
        feature="attention.cascade",
    )


def _method(name: str, params: list[Param], **kw: Any) -> EntryPoint:
    return method(FACADE, MODULE, CLASS, name, params, "attention.cascade", **kw)


SPECS = {
    "merge_state": _merge("merge_state", ["v_a", "s_a", "v_b", "s_b"], 3, MergeTwo()),
    "merge_state_in_place": _merge(
        "merge_state_in_place", ["v", "s", "v_other", "s_other", "mask"], 3, MergeInPlace()
    ),
    "merge_states": _merge("merge_states", ["v", "s"], 4, MergeMany()),
}

METHODS = {
    "__init__": _method(
        "__init__",
        [],
    ),
    "plan": _method(
        "plan",
        [
            fp16_qk_reduction(),
            Param("kv_data_type", note="KV dtype other than q's", ref="0.2.9"),
        ],
    ),
    "run": _method(
        "run",
        [Param("q"), Param("paged_kv_cache")],
        validate=validate_paged_run(f"{FACADE}.{CLASS}.run"),
        validate_args=("q", "paged_kv_cache"),
        prepare=prepare,
        devices=ew.any_cuda_device,
    ),
}


# -- the shared-prefix wrappers (cascade.py of every release 0.2.0.post1-0.7.4) -----------

SHARED_DECODE = "BatchDecodeWithSharedPrefixPagedKVCacheWrapper"
SHARED_PREFILL = "BatchPrefillWithSharedPrefixPagedKVCacheWrapper"


def _validate_shared(where: str) -> Callable[..., int]:
    """``q`` and ``unique_kv_cache`` as a paged ``run`` takes them; ``k_shared`` /
    ``v_shared`` 3-D of one shape (``[shared_len, kv_heads, head_dim]`` NHD or
    ``[kv_heads, shared_len, head_dim]`` HND, as FlashInfer hands them to
    ``single_prefill_with_kv_cache`` with the wrapper's ``kv_layout``) on ``q``'s device;
    returns its CUDA index."""
    paged = validate_paged_run(where)

    def validate(q: Any, k_shared: Any, v_shared: Any, unique_kv_cache: Any) -> int:
        device = paged(q, unique_kv_cache)
        for name, t in (("k_shared", k_shared), ("v_shared", v_shared)):
            ew.tensor(where, name, t)
            if t.dim() != 3 or tuple(t.shape) != tuple(k_shared.shape):
                raise InvalidArgumentError(
                    f"{where}: k_shared and v_shared must be 3-D of one shape "
                    f"[shared_len, num_kv_heads, head_dim] (NHD) or [num_kv_heads, "
                    f"shared_len, head_dim] (HND), got {tuple(k_shared.shape)} and "
                    f"{tuple(v_shared.shape)}"
                )
        ew.check_device(where, "q", q, {"k_shared": k_shared, "v_shared": v_shared})
        return device

    return validate


def _shared(cls: str, name: str, params: list[Param], **kw: Any) -> EntryPoint:
    return method(FACADE, MODULE, cls, name, params, "attention.cascade", **kw)


def _shared_forward(cls: str, params: list[Param]) -> EntryPoint:
    return _shared(
        cls,
        "forward",
        [Param("q"), Param("k_shared"), Param("v_shared"), Param("unique_kv_cache"), *params],
        validate=_validate_shared(f"{FACADE}.{cls}.forward"),
        validate_args=("q", "k_shared", "v_shared", "unique_kv_cache"),
        prepare=prepare,
        devices=ew.any_cuda_device,
    )


SHARED_DECODE_METHODS = {
    "__init__": _shared(SHARED_DECODE, "__init__", []),
    "begin_forward": _shared(SHARED_DECODE, "begin_forward", []),
    "forward": _shared_forward(SHARED_DECODE, []),
}
SHARED_PREFILL_METHODS = {
    "__init__": _shared(SHARED_PREFILL, "__init__", []),
    "begin_forward": _shared(SHARED_PREFILL, "begin_forward", []),
    # 0.2.0.post1's forward calls it allow_fp16_qk_reduction
    "forward": _shared_forward(SHARED_PREFILL, [fp16_qk_reduction()]),
}
ENTRIES = [
    *SPECS.values(),
    *METHODS.values(),
    *SHARED_DECODE_METHODS.values(),
    *SHARED_PREFILL_METHODS.values(),
]
