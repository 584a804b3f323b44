"""Adapter table for ``flashinfer.cudnn.cudnn_batch_prefill_with_kv_cache`` (also
exported by ``flashinfer.prefill``), served from its first release, 0.2.7.post1.

Read from the releases' ``cudnn/prefill.py`` (signatures: ``_snapshots/cudnn.*.json``):

* Two paths: the cuDNN graph (SDPA; 0.2.9+, taken where the ``cudnn`` Python package
  imports, ``CUDNN_AVAILABLE``, and ``backend != "cubin"``) and the prebuilt cubin (the
  only one in 0.2.7.post1-0.2.8).  Positional ``q, k_cache, v_cache, scale,
  workspace_buffer``, keyword-only after on every release.
* 0.2.7.post1: ``assert causal``; with a CUDA ``actual_seq_lens_q`` its
  ``actual_seq_lens_q_gpu`` is never bound (0.2.8 copies with ``.to(q.device)``).
  The cubin path asserts ``return_lse`` on every release (0.2.9+ graph path: either).
* 0.2.9-0.5.3: the graph declares q/k/v/o as ``BFLOAT16`` whatever their dtype; 0.6.0
  reads the tensors' dtypes.
* The graph declares packed q/out with a one-token batch stride, so a batch of more
  than one request without ``batch_offsets_q`` / ``batch_offsets_o`` reads and writes
  every request after the first at the wrong rows; 0.6.16 raises ``ValueError`` for it,
  0.2.9-0.6.15 return wrong results: refused on every release.
* 0.6.16: ``actual_seq_lens_q`` / ``actual_seq_lens_kv`` optional (derived from
  ``batch_offsets_units="tokens"`` indptrs); required before.
* LSE base: the graph path returns cuDNN's natural-log stats through 0.6.18.post1;
  0.7.0 multiplies them by ``log2e`` (base 2, as every other FlashInfer backend) and
  0.7.1 adds ``lse_base`` (``"log2"``, default; ``"ln"``: the native stats).  The cubin
  path returns base 2 on every release (0.7.1: "the cubin cuDNN prefill path only
  returns base-2 LSE").  fi_compat's ``lse_base="log2"`` is served before 0.7.0 with
  0.7.0's own conversion (``lse.mul_(log2e)``, the same constant): bit-identical.
* LSE shape: with ``lse=None`` every release allocates the padded ``(batch,
  max_token_per_sequence, heads)`` buffer, except 0.7.4's graph path, which allocates
  it packed ``(tokens, heads)``; fi_compat allocates the padded one there too (0.7.4
  takes a caller's padded buffer), so the same call returns the same shape.
* ``q_scale`` / ``k_scale`` / ``v_scale`` (0.6.0): FP8 descales through 0.7.2.post1,
  ignored for fp16/bf16 queries; 0.7.4's graph path folds them into the score scale /
  the output for fp16/bf16 (and takes Python floats).  A scale with an fp16/bf16 query
  is refused where it would be ignored.
"""

from __future__ import annotations

import sys

from .._core import EntryPoint, Normalizer, Param, ResultHook
from ..errors import InvalidArgumentError, UnsupportedParameterError
from ..registry import at_least
from . import _elementwise as ew
from .trtllm_attention import KindSince

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement

MODULE = "flashinfer.cudnn.prefill"
# flashinfer/utils.py (0.7.0): the constant 0.7.0-0.7.4 convert the stats with
LOG2E = 1.44269504088896340736
_SCALES = ("q_scale", "k_scale", "v_scale")


def cudnn_graph_available() -> bool:
    """The installed release took the cuDNN graph path at import (its module's
    ``CUDNN_AVAILABLE``: the ``cudnn`` package imported); read after the facade resolved
    FlashInfer's function, which imports that module."""
    mod = sys.modules.get(MODULE)
    return bool(getattr(mod, "CUDNN_AVAILABLE", False))


def _graph(pl: Placement, backend: Any) -> bool:
    return at_least(pl, "0.2.9") and backend != "cubin" and cudnn_graph_available()


def _is_tensor(v: Any) -> bool:
    return hasattr(v, "dim") and hasattr(v, "get_device")


def _is_none(v: Any) -> bool:
    return v is None


def _falsy(v: Any) -> bool:
    return not v


def _cuda(v: Any) -> bool:
    return _is_tensor(v) and bool(v.is_cuda)


def _host_scalar(v: Any) -> bool:
    return v is not None and not _is_tensor(v)


def _batch(actual_seq_lens_q: Any, batch_offsets_q: Any) -> int:
    if actual_seq_lens_q is not None:
        return int(actual_seq_lens_q.shape[0])
    return int(batch_offsets_q.shape[0]) - 1


class GraphPath(Normalizer):
    """What the cuDNN graph path of a release reads differently from the call, refused
    before the launch: a batch without ragged offsets (every release; 0.6.16 raises,
    0.2.9-0.6.15 corrupt), a non-bf16 query before 0.6.0 (read as bf16), and
    calibration scales with an fp16/bf16 query where the release ignores them (before
    0.7.4, and the cubin path of every release)."""

    args = ("q", "actual_seq_lens_q", "batch_offsets_q", "batch_offsets_o", "backend", *_SCALES)
    out = ()
    boundaries = ("0.2.9", "0.6.0", "0.6.16", "0.7.4")

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None:
            return None
        where, release = adapter.entry.dotted, str(adapter.release)
        bf16_only = not at_least(pl, "0.6.0")
        half_scales = at_least(pl, "0.7.4")
        has_scales = at_least(pl, "0.6.0")  # before: the parameters are refused as absent

        def check(
            q: Any, lens_q: Any, off_q: Any, off_o: Any, backend: Any, *scales: Any
        ) -> tuple[Any, ...]:
            graph = _graph(pl, backend)
            dtype = str(q.dtype)
            if graph and (off_q is None or off_o is None) and _batch(lens_q, off_q) > 1:
                raise InvalidArgumentError(
                    f"{where}: batch_offsets_q and batch_offsets_o are required for a batch "
                    f"of more than one request on the cuDNN graph path (packed q/out are "
                    f"addressed by those offsets; flashinfer-python 0.6.16+ raise "
                    f"ValueError, 0.2.9-0.6.15 return wrong rows). Fix: pass cumulative "
                    f"element offsets (batch + 1,), or token-unit indptrs with "
                    f"batch_offsets_units='tokens' (0.6.16+)"
                )
            if graph and bf16_only and dtype != "torch.bfloat16":
                raise UnsupportedParameterError(
                    f"{where}: q of dtype {dtype} on flashinfer-python {release}, whose cuDNN "
                    f"graph declares q/k/v/out as bfloat16 (0.6.0 reads the dtypes). Fix: "
                    f"pip install 'flashinfer-python>=0.6.0', or bfloat16 tensors",
                    parameter="q",
                    installed=release,
                    minimum="0.6.0",
                )
            half = dtype in ("torch.float16", "torch.bfloat16")
            if has_scales and half and not (half_scales and graph):
                given = [n for n, s in zip(_SCALES, scales, strict=True) if s is not None]
                if given:
                    raise UnsupportedParameterError(
                        f"{where}: {', '.join(given)} with a {dtype} query would be ignored "
                        f"on flashinfer-python {release} (FP8 descales only; 0.7.4's cuDNN "
                        f"graph path applies them to fp16/bf16). Fix: fold them into scale "
                        f"(and scale the output), or pip install 'flashinfer-python>=0.7.4' "
                        f"with the cudnn package",
                        parameter=given[0],
                        installed=release,
                        minimum="0.7.4",
                    )
            return ()

        return check

    def describe(self, p: Placement) -> str | None:
        out = ["multi-request batch without offsets refused (graph path)"]
        if not at_least(p, "0.6.0"):
            out.append("non-bf16 q refused (graph path)")
        if not at_least(p, "0.7.4"):
            out.append("q/k/v scales with fp16/bf16 q refused")
        return "; ".join(out)


class LseBase2(ResultHook):
    """``lse_base="log2"`` before 0.7.0: the graph path's natural-log stats multiplied
    by ``log2e`` in place, as 0.7.0's ``_batch_prefill_with_kv_cache`` does
    (``lse.mul_(log2e)``); the cubin path is base 2 already."""

    args = ("return_lse", "backend")
    boundaries = ("0.7.0",)

    def build(self, adapter: Adapter) -> Callable[..., Any] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.7.0"):
            return None

        def base2(res: Any, return_lse: Any, backend: Any) -> Any:
            if return_lse and _graph(pl, backend) and res[1] is not None:
                res[1].mul_(LOG2E)
            return res

        return base2

    def describe(self, p: Placement) -> str | None:
        return None if at_least(p, "0.7.0") else "LSE converted to base 2 (graph path), as 0.7.0+"


class PaddedLse(Normalizer):
    """0.7.4's graph path allocates a packed ``(tokens, heads)`` LSE where every other
    release allocates ``(batch, max_token_per_sequence, heads)``: fi_compat allocates
    the padded buffer there (0.7.4 writes a caller's padded buffer), so ``lse=None``
    returns the same shape on every release.  A caller's ``lse`` (packed or padded) and
    ``batch_offsets_stats`` (which addresses a packed buffer) pass as given."""

    args = (
        "return_lse",
        "lse",
        "batch_offsets_stats",
        "q",
        "actual_seq_lens_q",
        "batch_offsets_q",
        "max_token_per_sequence",
    )
    out = ("lse",)
    boundaries = ("0.7.4",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or not at_least(pl, "0.7.4"):
            return None

        def padded(
            return_lse: Any, lse: Any, stats: Any, q: Any, lens_q: Any, off_q: Any, max_q: Any
        ) -> tuple[Any, ...]:
            if not return_lse or lse is not None or stats is not None:
                return (lse,)
            import torch

            # zeros, not empty: the rows past a request's length are never written, and
            # the result should not depend on what the allocator hands back
            shape = (_batch(lens_q, off_q), max_q, q.shape[1])
            return (torch.zeros(shape, device=q.device, dtype=torch.float32),)

        return padded

    def describe(self, p: Placement) -> str | None:
        return "padded LSE allocated (0.7.4 allocates it packed)" if at_least(p, "0.7.4") else None


def _validate(q: Any, k_cache: Any, v_cache: Any, workspace_buffer: Any) -> int:
    where = "fi_compat.prefill.cudnn_batch_prefill_with_kv_cache"
    for name, t in (("q", q), ("k_cache", k_cache), ("v_cache", v_cache)):
        ew.tensor(where, name, t)
    if q.dim() not in (3, 4):
        raise InvalidArgumentError(
            f"{where}: q must be [tokens, heads, head_dim] (3-D), got shape {tuple(q.shape)}"
        )
    if k_cache.dim() not in (3, 4) or v_cache.dim() != k_cache.dim():
        raise InvalidArgumentError(
            f"{where}: k_cache / v_cache must both be paged [pages, kv_heads, page_size, "
            f"head_dim] (4-D) or ragged [tokens, kv_heads, head_dim] (3-D), got shapes "
            f"{tuple(k_cache.shape)} and {tuple(v_cache.shape)}"
        )
    ew.tensor(where, "workspace_buffer", workspace_buffer)
    others = {"k_cache": k_cache, "v_cache": v_cache, "workspace_buffer": workspace_buffer}
    return ew.check_device(where, "q", q, others)


CUDNN = EntryPoint(
    facade="fi_compat.prefill",
    name="cudnn_batch_prefill_with_kv_cache",
    module="flashinfer.cudnn",
    params=[
        Param(
            "causal",
            ref="0.2.7.post1 cudnn/prefill.py: assert causal; False from 0.2.8",
        ),
        Param(
            "return_lse",
            ref="0.2.7.post1-0.2.8 (and the cubin path of every release): assert "
            "return_lse; False from 0.2.9's graph path",
        ),
        *(
            Param(
                n,
                explicit=True,
                note="per-request lengths (None: from token-unit offsets, 0.6.16)",
                ref="required before 0.6.16; a CUDA tensor from 0.2.8",
            )
            for n in ("actual_seq_lens_q", "actual_seq_lens_kv")
        ),
        *(
            Param(n, note="calibration scale", ref="0.6.0 (FP8); fp16/bf16 and floats 0.7.4")
            for n in _SCALES
        ),
        Param("batch_offsets_stats", note="ragged LSE offsets", ref="0.2.9"),
        Param("backend", note="None (graph if cudnn imports) or 'cubin'", ref="0.2.9"),
        Param("o_data_type", note="output dtype", ref="0.6.0"),
        Param("batch_offsets_units", note="offsets in elements or tokens", ref="0.6.16"),
        Param(
            "lse_base",
            note="LSE base",
            ref="0.7.1; base 2 from 0.7.0 (graph path), served before by 0.7.0's "
            "lse.mul_(log2e); 'ln' (native stats) 0.7.1",
        ),
        Param("window_left", note="left attention window (graph path)", ref="0.7.4"),
        Param("sinks", note="attention sinks (graph path)", ref="0.7.4"),
    ],
    validate=_validate,
    validate_args=("q", "k_cache", "v_cache", "workspace_buffer"),
    prepare=ew.prepare,
    normalizers=(
        KindSince("causal", "0.2.8", _falsy, "False (non-causal)"),
        KindSince("return_lse", "0.2.9", _falsy, "False"),
        *(
            KindSince(n, "0.2.8", _cuda, "a CUDA tensor")
            for n in ("actual_seq_lens_q", "actual_seq_lens_kv")
        ),
        *(
            KindSince(n, "0.6.16", _is_none, "None (lengths from token-unit offsets)")
            for n in ("actual_seq_lens_q", "actual_seq_lens_kv")
        ),
        *(KindSince(n, "0.7.4", _host_scalar, "a Python float") for n in _SCALES),
        GraphPath(),
        PaddedLse(),
    ),
    results=(LseBase2(),),
    host_tensors=True,
    feature="attention.cudnn",
    matrix_note="cuDNN SDPA graph (cudnn package) or the cubin path",
)

SPECS = {CUDNN.name: CUDNN}
