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
ENTRIES = [*SPECS.values(), *METHODS.values()]
