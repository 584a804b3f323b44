"""Adapter tables for ``flashinfer.topk`` (radix top-k selection and the fused top-k +
index transforms of sparse attention's second stage: the DSA indexer of DeepSeek V3.2).

Read from the released sources (``_snapshots/topk.*.json``; ``flashinfer/topk.py`` of
0.6.0-0.7.4, the module's first release is 0.6.0):

* ``top_k(input, k, sorted=False)`` (0.6.0); appended, every one positional:
  ``deterministic`` 0.6.8, ``tie_break`` 0.6.9, ``dsa_graph_safe`` 0.6.10.
* ``top_k_page_table_transform(input, src_page_table, lengths, k, row_to_batch=None)``
  (0.6.0); appended: ``deterministic`` 0.6.8, ``tie_break`` 0.6.9, ``dsa_graph_safe``
  and ``row_starts`` 0.6.10, ``page_table_row_starts`` 0.6.17; keyword-only
  ``page_size``, ``out``, ``out_raw_indices`` 0.6.18.
* ``top_k_ragged_transform(input, offsets, lengths, k)`` (0.6.0); appended:
  ``deterministic`` 0.6.8, ``tie_break`` 0.6.9, ``dsa_graph_safe`` and ``row_starts``
  0.6.10.
* ``TopKTieBreak`` (0.6.9): an ``IntEnum`` ``NONE = 0``, ``SMALL = 1``, ``LARGE = 2`` on
  every release 0.6.9-0.7.4 (snapshot ``topk.TopKTieBreak``): no drift, so it is
  re-exported as it is, not a :class:`fi_compat.enums.StableEnum`.

Every appended option's default is what the releases without it always do, so the
default (and only the default) is dropped there; any other value is refused, naming the
first release (``ref`` cites the source of each default).  Dtypes and shapes come from
the docstrings and checks of 0.6.0 and 0.7.4: ``input`` ``[num_rows, len]`` float32 /
float16 / bfloat16 (0.6.0 topk.py:43 asserts them), the index tensors int32 (the kernels
read ``int32_t*``; ``[num_rows]`` per row), ``out`` / ``out_raw_indices`` contiguous
int32 ``[num_rows, k]`` (0.6.18 topk.py: ``check_shape_dtype_device`` and
``is_contiguous``).
"""

from __future__ import annotations

from .._core import EntryPoint, Param
from .._core.contract import Tensor
from .._core.reexport import Reexport
from . import _elementwise as ew

FACADE, MODULE = "fi_compat.topk", "flashinfer.topk"
_SCORES = Tensor("rows len", dtypes=("float32", "float16", "bfloat16"))
_ROWS = Tensor("rows", dtypes="int32")
_OUT = Tensor("rows _", dtypes="int32", contiguous=True)


def _common() -> tuple[Param, ...]:
    return (
        Param(
            "deterministic",
            ref=(
                "0.6.8 topk.py top_k: default False (the non-deterministic radix path, "
                "the only one 0.6.0-0.6.7 have)"
            ),
            note="repeatable output order",
        ),
        Param(
            "tie_break",
            ref=(
                "0.6.9 topk.py TopKTieBreak: NONE = 0 (legacy behavior), the default; "
                "0.6.0-0.6.8 break no ties"
            ),
            note="TopKTieBreak: 0 none, 1 smaller index, 2 larger index",
        ),
        Param(
            "dsa_graph_safe",
            ref=(
                "0.6.10 topk.py: default False (no forced FilteredTopK / VEC_SIZE=1 path: "
                "the dispatch of 0.6.0-0.6.9)"
            ),
            note="force the CUDA-graph-safe path",
        ),
    )


def _row_starts() -> Param:
    return Param(
        "row_starts",
        ref="0.6.10 topk.py: None is equivalent to all zeros (0.6.0-0.6.9 start at 0)",
        note="per-row start of the score window",
    )


SPECS: dict[str, EntryPoint] = {
    "top_k": EntryPoint(
        facade=FACADE,
        name="top_k",
        module=MODULE,
        params=_common(),
        contracts={"input": _SCORES},
        devices=ew.any_cuda_device,
        feature="topk",
    ),
    "top_k_page_table_transform": EntryPoint(
        facade=FACADE,
        name="top_k_page_table_transform",
        module=MODULE,
        params=(
            *_common(),
            _row_starts(),
            Param(
                "page_table_row_starts",
                ref="0.6.17 topk.py: None defaults to row_starts (0.6.10-0.6.16's window)",
                note="per-row start in the page table",
            ),
            Param(
                "page_size",
                ref="0.6.18 topk.py: 1 preserves the one-entry-per-score behavior",
                note="score positions per page-table entry",
            ),
            Param(
                "out",
                ref="0.6.18 topk.py: None allocates the [num_rows, k] int32 result",
                note="caller's output buffer",
            ),
            Param(
                "out_raw_indices",
                ref="0.6.18 topk.py: None writes no raw indices",
                note="buffer for the untranslated indices",
            ),
        ),
        contracts={
            "input": _SCORES,
            "src_page_table": Tensor("batch pages", dtypes="int32"),
            "lengths": _ROWS,
            "row_to_batch": _ROWS,
            "row_starts": _ROWS,
            "page_table_row_starts": _ROWS,
            "out": _OUT,
            "out_raw_indices": _OUT,
        },
        devices=ew.any_cuda_device,
        feature="topk",
    ),
    "top_k_ragged_transform": EntryPoint(
        facade=FACADE,
        name="top_k_ragged_transform",
        module=MODULE,
        params=(*_common(), _row_starts()),
        contracts={
            "input": _SCORES,
            "offsets": _ROWS,
            "lengths": _ROWS,
            "row_starts": _ROWS,
        },
        devices=ew.any_cuda_device,
        feature="topk",
    ),
}
ENTRIES = list(SPECS.values())

ALL_REEXPORTS: list[Reexport] = [
    Reexport(
        facade=FACADE,
        name="TopKTieBreak",
        module=MODULE,
        note="tie-break modes of the top-k kernels (NONE 0, SMALL 1, LARGE 2)",
        feature="topk",
    ),
]
