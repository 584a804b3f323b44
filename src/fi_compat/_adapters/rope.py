"""Adapter tables for ``flashinfer.rope`` (rotary embeddings).

Read from the released sources (``_snapshots/rope.*.json``; ``csrc/rope.cu``):

* ``apply_rope``, ``apply_rope_pos_ids``, ``apply_llama31_rope_pos_ids`` and their
  ``_inplace`` twins have one signature from 0.2.0.post1 to 0.7.4.
* the index tensors (``indptr``, ``offsets``, ``pos_ids``, ``positions``) are read as
  ``int32_t*`` without a dtype check in 0.2.0.post1-0.2.6 (``static_cast<int32_t*>
  (pos_ids.data_ptr())``): an int64 tensor there is silently misread.  0.2.7 dispatches
  on int32 and int64 (``DISPATCH_PYTORCH_IDTYPE_TO_CTYPE``).  fi_compat hands the older
  releases int32 (one cast when the caller has int64) and the newer ones what it has.
* ``apply_rope_with_cos_sin_cache(_inplace)`` was re-signed in 0.2.0.post2, from
  ``(q, k, cos_cache, sin_cache, pos_ids, interleave)`` to vLLM's ``(positions, query,
  key, head_size, cos_sin_cache, is_neox)``: fi_compat serves the new signature from
  0.2.0.post2 (a call in the old order fails the kind check of ``head_size``, an int);
  ``cos_sin_cache`` must be float32 on every release (``ValueError`` inside otherwise).
"""

from __future__ import annotations

from .._core import EntryPoint, Param
from .._core.contract import FP16, INDEX, Tensor
from . import _elementwise as ew

_IDX = (("0.2.0.post1", "int32"), ("0.2.7", None))
_IDX_REF = "0.2.0.post1-0.2.6 rope.cu static_cast<int32_t*>; 0.2.7 IDTYPE dispatch"
_INDEX_PARAMS = ("indptr", "offsets", "pos_ids", "positions")


_HALF = "every release's kernels dispatch on those two only"


def _qk_contract(index: tuple[str, ...]) -> dict[str, Tensor]:
    """``q`` / ``k``: ``[nnz, heads, head_dim]`` fp16/bf16, one nnz and head_dim and
    dtype; the index tensors 1-D int32/int64; one device."""
    return {
        "q": Tensor("nnz num_heads head_dim", dtypes=FP16, why=_HALF),
        "k": Tensor("nnz num_kv_heads head_dim", match="q"),
        **{n: Tensor("_", dtypes=INDEX) for n in index},
    }


def _cache_contract() -> dict[str, Tensor]:
    """vLLM's layout: ``query`` / ``key`` ``[nnz, ...]`` fp16/bf16, ``positions`` ``[nnz]``
    int32/int64, ``cos_sin_cache`` 2-D float32 (every release requires it)."""
    return {
        "query": Tensor("nnz ...", dtypes=FP16, why=_HALF),
        "key": Tensor("nnz ...", dtype="query"),
        "cos_sin_cache": Tensor(
            "max_position rotary_dim",
            dtypes="float32",
            why="cos half then sin half; every release requires float32",
        ),
        "positions": Tensor("nnz", dtypes=INDEX),
    }


def _index(name: str) -> Param:
    return Param(name, dtypes=_IDX, note="index tensor: int32 before 0.2.7", ref=_IDX_REF)


def _rope(name: str, index: tuple[str, ...], llama31: bool = False) -> EntryPoint:
    params = [Param("q"), Param("k"), *(_index(n) for n in index)]
    params += [Param("rotary_dim"), Param("interleave"), Param("rope_scale"), Param("rope_theta")]
    if llama31:
        params += [Param("low_freq_factor"), Param("high_freq_factor"), Param("old_context_len")]
    return EntryPoint(
        facade="fi_compat.rope",
        name=name,
        module="flashinfer.rope",
        params=params,
        contracts=_qk_contract(index),
        devices=ew.any_cuda_device,
        feature="rope",
    )


def _cache(name: str) -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.rope",
        name=name,
        module="flashinfer.rope",
        params=(_index("positions"),),
        contracts=_cache_contract(),
        devices=ew.any_cuda_device,
        feature="rope",
        # 0.2.0.post1 has the function with the pre-vLLM signature (q, k, cos_cache,
        # sin_cache, pos_ids, interleave), which no row here describes
        floor="0.2.0.post2",
    )


SPECS: dict[str, EntryPoint] = {
    "apply_rope": _rope("apply_rope", ("indptr", "offsets")),
    "apply_rope_inplace": _rope("apply_rope_inplace", ("indptr", "offsets")),
    "apply_rope_pos_ids": _rope("apply_rope_pos_ids", ("pos_ids",)),
    "apply_rope_pos_ids_inplace": _rope("apply_rope_pos_ids_inplace", ("pos_ids",)),
    "apply_llama31_rope_pos_ids": _rope("apply_llama31_rope_pos_ids", ("pos_ids",), True),
    "apply_llama31_rope_pos_ids_inplace": _rope(
        "apply_llama31_rope_pos_ids_inplace", ("pos_ids",), True
    ),
    "apply_rope_with_cos_sin_cache": _cache("apply_rope_with_cos_sin_cache"),
    "apply_rope_with_cos_sin_cache_inplace": _cache("apply_rope_with_cos_sin_cache_inplace"),
}
ENTRIES = list(SPECS.values())
