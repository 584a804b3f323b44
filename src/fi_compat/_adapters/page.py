"""Adapter tables for ``flashinfer.page`` (the paged KV-cache helpers).

Read from the released sources (``_snapshots/page.*.json``; ``flashinfer/page.py`` and
``csrc/page.cu`` of every release 0.2.0.post1-0.7.4):

* ``append_paged_kv_cache``: one signature on every release.  The kernel reads the five
  index tensors as ``int32_t*`` (``csrc/page.cu``), but every release casts them first
  (``_append_paged_kv_cache_kernel``: ``batch_indices = batch_indices.int()`` ...), so
  int32 and int64 are both read correctly everywhere: no dtype rule.  No release checks
  that ``append_key`` / ``append_value`` have the cache's dtype (the kernel reinterprets
  them as it, ``static_cast<c_type*>``): fi_compat refuses a mismatch.
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
from ..errors import InvalidArgumentError
from ..registry import at_least
from . import _elementwise as ew
from ._attention import prepare

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement

FACADE, MODULE = "fi_compat.page", "flashinfer.page"
_INT: list[Any] = []  # torch.int32, torch.int64 (bound by _prepare at the first call)
_TORCH: list[Any] = []  # the torch module (bound by _prepare: importing fi_compat does not)


def _bind_torch() -> Any:
    import torch

    _INT[:] = [torch.int32, torch.int64]
    _TORCH[:] = [torch]
    return torch


def _prepare() -> None:
    prepare()
    _bind_torch()


def _index(where: str, n: str, t: Any, dev: int, int32: bool = False) -> None:
    """``t``: a 1-D integer (with ``int32``: int32) tensor on CUDA device ``dev``."""
    ew.tensor(where, n, t)
    if t.dim() != 1 or t.dtype not in _INT[: 1 if int32 else 2]:
        want = "int32" if int32 else "int32 or int64"
        raise InvalidArgumentError(
            f"{where}: {n} must be a 1-D {want} tensor, got {tuple(t.shape)} {t.dtype}"
        )
    if t.get_device() != dev:
        raise InvalidArgumentError(f"{where}: {n} must be on the device {dev}, got {t.device}")


def _validate_append(key: Any, value: Any, kv: Any, *index: Any) -> int:
    """``append_key`` / ``append_value`` ``[nnz, heads, dim]`` of the cache's dtype, the
    cache one 4-/5-D tensor or a ``(k, v)`` pair of 4-D ones, the index tensors 1-D
    integer, all on one device."""
    where = f"{FACADE}.append_paged_kv_cache"
    caches = kv if type(kv) is tuple else (kv,)
    for n, t in (
        ("append_key", key),
        ("append_value", value),
        *(("paged_kv_cache", c) for c in caches),
    ):
        ew.tensor(where, n, t)
    dims = {c.dim() for c in caches} - ({4} if len(caches) == 2 else {4, 5})
    if key.dim() != 3 or value.shape != key.shape or dims or len(caches) > 2:
        raise InvalidArgumentError(
            f"{where}: append_key / append_value must be [nnz, heads, head_dim] and "
            f"paged_kv_cache one 4-/5-D tensor or a (k, v) pair of 4-D tensors, got "
            f"{tuple(key.shape)}, {tuple(value.shape)}, {[tuple(c.shape) for c in caches]}"
        )
    if {value.dtype, *(c.dtype for c in caches)} != {key.dtype}:
        raise InvalidArgumentError(
            f"{where}: append_value and paged_kv_cache must have append_key's dtype "
            f"{key.dtype} (every release reads them as the cache's), got {value.dtype}, "
            f"{caches[0].dtype}"
        )
    others = {"append_value": value, **{f"paged_kv_cache[{i}]": c for i, c in enumerate(caches)}}
    dev = ew.check_device(where, "append_key", key, others)
    names = ("batch_indices", "positions", "kv_indices", "kv_indptr", "kv_last_page_len")
    for n, t in zip(names, index, strict=True):
        _index(where, n, t, dev)
    return dev


def _validate_positions(indptr: Any, seq_lens: Any, batch_indices: Any, pos: Any) -> int:
    """``append_indptr`` / ``seq_lens`` 1-D integer, the output buffers 1-D int32
    (0.6.0+ raise ``ValueError`` otherwise), one CUDA device (a Triton kernel)."""
    where = f"{FACADE}.get_batch_indices_positions"
    ew.tensor(where, "append_indptr", indptr)
    dev: int = indptr.get_device()
    for n, t in (("append_indptr", indptr), ("seq_lens", seq_lens)):
        _index(where, n, t, dev)
    for n, t in (("batch_indices", batch_indices), ("positions", pos)):
        if t is not None:
            _index(where, n, t, dev, int32=True)
    return dev


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
        validate=_validate_append,
        validate_args=(
            *("append_key", "append_value", "paged_kv_cache", "batch_indices", "positions"),
            *("kv_indices", "kv_indptr", "kv_last_page_len"),
        ),
        prepare=_prepare,
        devices=ew.any_cuda_device,
    ),
    "get_batch_indices_positions": _entry(
        "get_batch_indices_positions",
        validate=_validate_positions,
        validate_args=("append_indptr", "seq_lens", "batch_indices", "positions"),
        prepare=_prepare,
        devices=ew.any_cuda_device,
        results=(Padding(),),
    ),
    "get_seq_lens": _entry("get_seq_lens", host_tensors=True),
}
ENTRIES = list(SPECS.values())
