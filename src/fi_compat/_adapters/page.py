"""Adapter tables for ``flashinfer.page`` (the paged KV-cache helpers).

Read from the released sources (``_snapshots/page.*.json``; ``flashinfer/page.py`` and
``csrc/page.cu`` of every release 0.2.0.post1-0.7.4):

* ``append_paged_kv_cache``: one signature on every release.  The kernel reads the five
  index tensors as ``int32_t*`` (``csrc/page.cu``), but every release casts them first
  (``_append_paged_kv_cache_kernel``: ``batch_indices = batch_indices.int()`` ...), so
  int32 and int64 are both read correctly everywhere: no dtype rule.  No release checks
  that ``append_key`` / ``append_value`` have the cache's dtype (the kernel reinterprets
  them as it, ``static_cast<c_type*>``): fi_compat refuses a mismatch.  The kernel
  dispatches on the cache's head_dim (which must equal ``append_key``'s) with
  ``DISPATCH_HEAD_DIM``: 64, 128, 256 or 512 in every release, any other a
  ``FLASHINFER_ERROR`` throw -- through the ``TORCH_LIBRARY`` binding of
  0.2.1.post1-0.3.1.post1 (``csrc/flashinfer_page_ops.cu``) the same throw that kills the
  process in RoPE (measured there, not for this kernel): the contract refuses it.
* ``get_batch_indices_positions``: a Triton kernel that reads ``append_indptr`` /
  ``seq_lens`` at their own integer dtype and writes int32.  0.6.0 added the output
  buffers ``batch_indices`` / ``positions``; 0.6.8 made the rows past
  ``append_indptr[-1]`` (``nnz`` padded, e.g. for a CUDA graph) ``-1`` / ``0`` (a given
  ``positions`` keeps them), uninitialised (``torch.empty``) before.  :class:`Padding`
  gives every release 0.6.8's result, on the device (no host sync).
* ``get_seq_lens``: tensor arithmetic, one signature, host tensors too.
"""

from __future__ import annotations

from .._core import EntryPoint, ResultHook
from .._core.contract import INDEX, Tensor
from ..errors import InvalidArgumentError
from ..registry import at_least
from . import _elementwise as ew
from ._attention import prepare
from .rope import HEAD_DIMS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement

FACADE, MODULE = "fi_compat.page", "flashinfer.page"
_TORCH: list[Any] = []  # the torch module (bound by _prepare: importing fi_compat does not)


def _bind_torch() -> Any:
    import torch

    _TORCH[:] = [torch]
    return torch


def _prepare() -> None:
    prepare()
    _bind_torch()


_INDEX = Tensor("_", dtypes=INDEX)
_APPEND = f"{FACADE}.append_paged_kv_cache"


def _check_cache(key: Any, *rest: Any) -> None:
    """The hook after the contract: ``paged_kv_cache`` (the last argument) is one 4-/5-D
    tensor or a ``(k, v)`` pair of 4-D ones, of ``append_key``'s dtype and device (no
    release checks the dtype: the kernel reinterprets the appended rows as the cache's)."""
    where = _APPEND
    kv = rest[-1]
    caches = kv if type(kv) is tuple else (kv,)
    for i, c in enumerate(caches):
        ew.tensor(where, "paged_kv_cache" if len(caches) == 1 else f"paged_kv_cache[{i}]", c)
    if len(caches) > 2 or {c.dim() for c in caches} - ({4} if len(caches) == 2 else {4, 5}):
        raise InvalidArgumentError(
            f"{where}: paged_kv_cache must be one 4-/5-D tensor or a (k, v) pair of 4-D "
            f"tensors, got {[tuple(c.shape) for c in caches]}"
        )
    if any(c.dtype is not key.dtype for c in caches):
        raise InvalidArgumentError(
            f"{where}: paged_kv_cache must have append_key's dtype {key.dtype} (every release "
            f"reads the appended rows as the cache's), got {caches[0].dtype}"
        )
    ew.check_device(
        where, "append_key", key, {f"paged_kv_cache[{i}]": c for i, c in enumerate(caches)}
    )


class Padding(ResultHook):
    """0.6.8's result on older releases: rows ``append_indptr[-1]:nnz`` hold
    ``batch_indices`` -1 and (where the call allocates it) ``positions`` 0; before 0.6.0,
    which has no output buffers, the caller's are filled from the result."""

    args = ("append_indptr", "nnz", "batch_indices", "positions")
    serves = ("batch_indices", "positions")
    boundaries = ("0.6.0", "0.6.8")

    def build(self, adapter: Adapter) -> Callable[..., Any] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.6.8"):
            return None
        copy = not at_least(pl, "0.6.0")

        def padded(res: Any, indptr: Any, nnz: int, bi: Any, pos: Any) -> Any:
            torch = _TORCH[0] if _TORCH else _bind_torch()
            b, p = res
            pad = torch.arange(nnz, device=b.device) >= indptr[-1]
            b.masked_fill_(pad, -1)
            if pos is None:
                p.masked_fill_(pad, 0)
            elif copy:  # the rows the kernel writes; the padding keeps the caller's
                p = pos.copy_(torch.where(pad, pos, p))
            return (bi.copy_(b) if copy and bi is not None else b), p

        return padded

    def describe(self, p: Placement) -> str | None:
        if at_least(p, "0.6.8"):
            return None
        out = "padding rows past append_indptr[-1] set to -1 / 0, as 0.6.8+"
        return out + ("; output buffers filled from the result" if not at_least(p, "0.6.0") else "")


def _entry(name: str, **kw: Any) -> EntryPoint:
    return EntryPoint(facade=FACADE, name=name, module=MODULE, params=(), feature="page", **kw)


SPECS: dict[str, EntryPoint] = {
    "append_paged_kv_cache": _entry(
        "append_paged_kv_cache",
        contracts={
            "append_key": Tensor(
                "nnz heads head_dim",
                sizes={"head_dim": HEAD_DIMS},
                sizes_why=(
                    "every flashinfer-python release 0.2.0.post1-0.7.4 appends those head "
                    "sizes only (AppendPagedKVCache's DISPATCH_HEAD_DIM, 0.7.4 page.cuh:502, "
                    "0.2.0.post1 :390; another one is a RuntimeError there, and takes the "
                    "throw that kills the process on 0.2.1.post1-0.3.1.post1). Fix: a paged "
                    "KV cache with head_dim 64, 128, 256 or 512, or append the rows another way"
                ),
            ),
            "append_value": Tensor("nnz heads head_dim", dtype="append_key"),
            **dict.fromkeys(
                ("batch_indices", "positions", "kv_indices", "kv_indptr", "kv_last_page_len"),
                _INDEX,
            ),
        },
        validate=_check_cache,
        validate_args=("paged_kv_cache",),
        prepare=_prepare,
        devices=ew.any_cuda_device,
    ),
    "get_batch_indices_positions": _entry(
        "get_batch_indices_positions",
        # the output buffers: int32 (0.6.0+ raise ValueError otherwise)
        contracts={
            "append_indptr": _INDEX,
            "seq_lens": _INDEX,
            "batch_indices": Tensor("_", dtypes="int32"),
            "positions": Tensor("_", dtypes="int32"),
        },
        prepare=_prepare,
        devices=ew.any_cuda_device,
        results=(Padding(),),
    ),
    "get_seq_lens": _entry("get_seq_lens", host_tensors=True),
}
ENTRIES = list(SPECS.values())
