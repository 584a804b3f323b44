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
from ..errors import InvalidArgumentError
from . import _elementwise as ew

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_IDX = (("0.2.0.post1", "int32"), ("0.2.7", None))
_IDX_REF = "0.2.0.post1-0.2.6 rope.cu static_cast<int32_t*>; 0.2.7 IDTYPE dispatch"
_INDEX_PARAMS = ("indptr", "offsets", "pos_ids", "positions")


def _where(name: str) -> str:
    return f"fi_compat.rope.{name}"


_INT: frozenset[Any] = frozenset()


def _prepare() -> None:
    global _INT
    import torch

    ew.prepare()
    _INT = frozenset((torch.int32, torch.int64))


def _check_index(where: str, name: str, x: Any, d: int) -> None:
    ew.tensor(where, name, x)
    if x.dim() != 1 or x.dtype not in _INT:
        raise InvalidArgumentError(
            f"{where}: {name} must be a 1-D int32 or int64 tensor, got {tuple(x.shape)} {x.dtype}"
        )
    if x.get_device() != d:
        raise InvalidArgumentError(f"{where}: {name} must be on the device of q, got {x.device}")


def _validate_qk(name: str, names: tuple[str, ...]) -> Any:
    def validate(q: Any, k: Any, *index: Any) -> int:
        """``q`` / ``k``: ``[nnz, heads, head_dim]`` fp16/bf16, one nnz and head_dim and
        dtype, one device; the index tensors 1-D int32/int64 on it.  Returns the CUDA
        index (-1 off CUDA)."""
        try:
            d = q.get_device()
            ok = (
                q.dim() == 3
                and k.dim() == 3
                and q.dtype in ew.FP16
                and k.dtype is q.dtype
                and q.shape[0] == k.shape[0]
                and q.shape[2] == k.shape[2]
                and k.get_device() == d
            )
            for x in index:
                ok = ok and x.dtype in _INT and x.dim() == 1 and x.get_device() == d
        except (AttributeError, TypeError):
            ok = False
        if not ok:
            where = _where(name)
            ew.tensor(where, "q", q)
            ew.tensor(where, "k", k)
            for n, x in (("q", q), ("k", k)):
                if x.dim() != 3:
                    raise InvalidArgumentError(
                        f"{where}: {n} must be 3-D [nnz, num_heads, head_dim], got shape "
                        f"{tuple(x.shape)}"
                    )
            ew.half(where, "q", q)
            if k.dtype != q.dtype or k.shape[0] != q.shape[0] or k.shape[2] != q.shape[2]:
                raise InvalidArgumentError(
                    f"{where}: k must match q in dtype, nnz and head_dim: q {tuple(q.shape)} "
                    f"{q.dtype}, k {tuple(k.shape)} {k.dtype}"
                )
            ew.check_device(where, "q", q, {"k": k})
            for n, x in zip(names, index, strict=True):
                _check_index(where, n, x, d)
        return d  # type: ignore[no-any-return]

    return validate


def _validate_cache(name: str) -> Any:
    def validate(positions: Any, query: Any, key: Any, cos_sin_cache: Any) -> int:
        import torch

        try:
            d = query.get_device()
            ok = (
                query.dtype in ew.FP16
                and key.dtype is query.dtype
                and cos_sin_cache.dtype is torch.float32
                and cos_sin_cache.dim() == 2
                and positions.dtype in _INT
                and positions.dim() == 1
                and positions.shape[0] == query.shape[0] == key.shape[0]
                and key.get_device() == d
                and cos_sin_cache.get_device() == d
                and positions.get_device() == d
            )
        except (AttributeError, TypeError, IndexError):
            ok = False
        if not ok:
            where = _where(name)
            for n, x in (
                ("positions", positions),
                ("query", query),
                ("key", key),
                ("cos_sin_cache", cos_sin_cache),
            ):
                ew.tensor(where, n, x)
            ew.half(where, "query", query)
            if key.dtype != query.dtype:
                raise InvalidArgumentError(
                    f"{where}: key must have query's dtype {query.dtype}, got {key.dtype}"
                )
            if cos_sin_cache.dtype != torch.float32 or cos_sin_cache.dim() != 2:
                raise InvalidArgumentError(
                    f"{where}: cos_sin_cache must be 2-D float32 [max_position, rotary_dim] "
                    f"(cos half then sin half; every release requires float32), got "
                    f"{tuple(cos_sin_cache.shape)} {cos_sin_cache.dtype}"
                )
            _check_index(where, "positions", positions, positions.get_device())
            if positions.dim() != 1 or not (positions.shape[0] == query.shape[0] == key.shape[0]):
                raise InvalidArgumentError(
                    f"{where}: positions must be 1-D [nnz] with nnz = query.shape[0] = "
                    f"key.shape[0]; got positions {tuple(positions.shape)}, query "
                    f"{tuple(query.shape)}, key {tuple(key.shape)}"
                )
            ew.check_device(
                where,
                "query",
                query,
                {"key": key, "cos_sin_cache": cos_sin_cache, "positions": positions},
            )
        return d  # type: ignore[no-any-return]

    return validate


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
        validate=_validate_qk(name, index),
        validate_args=("q", "k", *index),
        prepare=_prepare,
        devices=ew.any_cuda_device,
        feature="rope",
    )


def _cache(name: str) -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.rope",
        name=name,
        module="flashinfer.rope",
        params=(_index("positions"),),
        validate=_validate_cache(name),
        validate_args=("positions", "query", "key", "cos_sin_cache"),
        prepare=_prepare,
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
