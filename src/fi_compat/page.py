"""Stable facade of ``flashinfer.page``: the paged KV-cache helpers, one frozen signature
each over every release 0.2.0.post1-0.7.4.

``append_paged_kv_cache`` writes ragged keys / values into the page table (any integer
index dtype on every release: FlashInfer casts them to the int32 its kernel reads);
``get_batch_indices_positions`` turns an append ``indptr`` into per-token batch indices
and positions (0.6.0's output buffers and 0.6.8's ``-1`` / ``0`` padding rows on every
release); ``get_seq_lens`` gives the sequence lengths of a page table.
"""

from __future__ import annotations

from ._adapters.page import SPECS
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from torch import Tensor

__all__: list[str] = []  # every entry point joins it (lazy_facades)


def append_paged_kv_cache(
    append_key: Tensor,
    append_value: Tensor,
    batch_indices: Tensor,
    positions: Tensor,
    paged_kv_cache: Tensor | tuple[Tensor, Tensor],
    kv_indices: Tensor,
    kv_indptr: Tensor,
    kv_last_page_len: Tensor,
    kv_layout: Literal["NHD", "HND"] = "NHD",
    **kwargs: Any,
) -> None:
    """Append ragged keys / values to a paged KV cache, in place.

    Parameters
    ----------
    append_key, append_value : Tensor
        ``[nnz, num_kv_heads, head_dim]``, of the cache's dtype.
    batch_indices, positions : Tensor
        ``[nnz]``: the request and the position in it of each row
        (:func:`get_batch_indices_positions`).
    paged_kv_cache : Tensor or tuple of Tensor
        ``[pages, 2, page_size, heads, dim]`` (NHD) or a ``(k_cache, v_cache)`` pair.
    kv_indices, kv_indptr, kv_last_page_len : Tensor
        The page table, already covering the appended rows (int32 or int64).
    kv_layout : {"NHD", "HND"}
        The cache layout.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def get_batch_indices_positions(
    append_indptr: Tensor,
    seq_lens: Tensor,
    nnz: int,
    batch_indices: Tensor | None = None,
    positions: Tensor | None = None,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """Batch index and position of every row of a ragged append.

    Parameters
    ----------
    append_indptr : Tensor
        ``[batch_size + 1]``: rows ``append_indptr[i]:append_indptr[i + 1]`` belong to
        request ``i``.
    seq_lens : Tensor
        ``[batch_size]``: each request's KV length including the appended rows.
    nnz : int
        The number of rows (rows past ``append_indptr[-1]`` are padding).
    batch_indices, positions : Tensor, optional
        ``[nnz]`` int32 buffers to write into (every release).

    Returns
    -------
    tuple of Tensor
        ``(batch_indices, positions)``, int32 ``[nnz]``; padding rows hold ``-1`` and
        ``0`` (a given ``positions`` keeps its padding rows), on every release
        (0.6.0 added the buffers, 0.6.8 the padding values; older releases are
        served by filling the result on the device, no host sync).
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def get_seq_lens(
    kv_indptr: Tensor, kv_last_page_len: Tensor, page_size: int, **kwargs: Any
) -> Tensor:
    """Sequence lengths of a page table: ``(pages - 1) * page_size + kv_last_page_len``.

    Parameters
    ----------
    kv_indptr : Tensor
        ``[batch_size + 1]`` page-table indptr.
    kv_last_page_len : Tensor
        ``[batch_size]`` entries in each request's last page.
    page_size : int
        Entries per page.

    Returns
    -------
    Tensor
        ``[batch_size]`` sequence lengths.
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values())

# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
