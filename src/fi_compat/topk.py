"""Stable facade of ``flashinfer.topk``: radix top-k selection and the fused top-k +
index transforms of sparse attention's second stage (the DSA indexer), one frozen
signature each over every release that has them (0.6.0-0.7.4), and FlashInfer's own
``TopKTieBreak`` (0.6.9+).

Options appended by later releases (``deterministic`` 0.6.8, ``tie_break`` 0.6.9,
``dsa_graph_safe`` / ``row_starts`` 0.6.10, ``page_table_row_starts`` 0.6.17,
``page_size`` / ``out`` / ``out_raw_indices`` 0.6.18) are dropped at their default on
the releases without them (what those releases always do) and refused otherwise,
naming the first release that has them.  Before 0.6.9 ``TopKTieBreak`` is a stand-in
whose use raises ``UnsupportedFlashInferVersionError``; pass ``tie_break=0`` there.
"""

from __future__ import annotations

from ._adapters.topk import ALL_REEXPORTS, SPECS
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from torch import Tensor

__all__: list[str] = []  # every entry point and re-export joins it (lazy_facades)


def top_k(
    input: Tensor,
    k: int,
    sorted: bool = False,
    deterministic: bool = False,
    tie_break: int = 0,
    dsa_graph_safe: bool = False,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """Top-k selection per row (a drop-in for ``torch.topk`` over the last dimension).

    Parameters
    ----------
    input : Tensor
        ``[batch, d]`` float32, float16 or bfloat16.
    k : int
        Elements to select per row.
    sorted : bool
        Return them in descending order.
    deterministic : bool
        Repeatable output order (0.6.8+).
    tie_break : int
        ``TopKTieBreak``: 0 none, 1 prefer smaller indices, 2 larger (0.6.9+).
    dsa_graph_safe : bool
        Force the CUDA-graph-safe path (0.6.10+).

    Returns
    -------
    (values, indices) : tuple of Tensor
        ``[batch, k]`` of ``input``'s dtype, and int64 indices.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def top_k_page_table_transform(
    input: Tensor,
    src_page_table: Tensor,
    lengths: Tensor,
    k: int,
    row_to_batch: Tensor | None = None,
    deterministic: bool = False,
    tie_break: int = 0,
    dsa_graph_safe: bool = False,
    row_starts: Tensor | None = None,
    page_table_row_starts: Tensor | None = None,
    *,
    page_size: int = 1,
    out: Tensor | None = None,
    out_raw_indices: Tensor | None = None,
    **kwargs: Any,
) -> Tensor:
    """Fused top-k selection and page-table translation (sparse attention's second stage).

    Parameters
    ----------
    input : Tensor
        ``[num_rows, max_len]`` scores, float32, float16 or bfloat16.
    src_page_table : Tensor
        ``[batch, pages]`` int32.
    lengths : Tensor
        ``[num_rows]`` int32 KV lengths.
    k : int
        Elements to select per row.
    row_to_batch : Tensor, optional
        ``[num_rows]`` int32 row -> page-table row (None: the identity).
    deterministic, tie_break, dsa_graph_safe
        As for :func:`top_k` (0.6.8, 0.6.9, 0.6.10).
    row_starts : Tensor, optional
        ``[num_rows]`` int32 start of each score window (0.6.10+).
    page_table_row_starts : Tensor, optional
        ``[num_rows]`` int32 start of each page-table window (0.6.17+).
    page_size : int
        Score positions per page-table entry (0.6.18+).
    out, out_raw_indices : Tensor, optional
        Contiguous int32 ``[num_rows, k]`` buffers (0.6.18+).

    Returns
    -------
    Tensor
        ``[num_rows, k]`` int32 physical indices, ``-1`` past each row's length.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def top_k_ragged_transform(
    input: Tensor,
    offsets: Tensor,
    lengths: Tensor,
    k: int,
    deterministic: bool = False,
    tie_break: int = 0,
    dsa_graph_safe: bool = False,
    row_starts: Tensor | None = None,
    **kwargs: Any,
) -> Tensor:
    """Fused top-k selection and ragged offset (``indices + offsets[row]``).

    Parameters
    ----------
    input : Tensor
        ``[num_rows, max_len]`` scores, float32, float16 or bfloat16.
    offsets, lengths : Tensor
        ``[num_rows]`` int32.
    k : int
        Elements to select per row.
    deterministic, tie_break, dsa_graph_safe
        As for :func:`top_k` (0.6.8, 0.6.9, 0.6.10).
    row_starts : Tensor, optional
        ``[num_rows]`` int32 start of each score window (0.6.10+).

    Returns
    -------
    Tensor
        ``[num_rows, k]`` int32, ``-1`` past each row's length.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values(), reexports=ALL_REEXPORTS)


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
