"""Adapter tables for ``flashinfer.mla``: ``BatchMLAPagedAttentionWrapper`` (``__init__``,
``plan``, ``run``), served from 0.2.2.

Read from the released sources (every signature: ``_snapshots/mla.*.json``):

* Floor 0.2.2: 0.2.1 introduced the wrapper with ``backend="fa2"`` as its default and
  no ``"auto"``; 0.2.2 made ``"auto"`` the default (fa3 on SM90, fa2 elsewhere:
  ``determine_mla_backend``).
* ``backend`` values: ``fa2`` / ``fa3`` / ``auto`` 0.2.2, ``cutlass`` 0.2.6 (SM100
  only), ``cutile`` 0.7.0, ``trtllm-gen`` / ``xqa`` / ``cute-dsl*`` 0.7.1,
  ``cute-dsl-rubin-mtp`` / ``autotune`` 0.7.4 (0.7.x ``_BACKEND_TYPES``).
* ``plan``: ``use_profiler`` 0.2.3.  0.7.0 rewrote the wrapper around plan metadata
  (``flashinfer/mla/_batch_mla``): every flat argument got a default ``None`` (the
  ``metadata=`` object or the dense ``block_tables`` form can replace them) and the
  keyword-only planning options (``metadata``, ``cum_seq_lens_q``, ``block_tables``,
  ``seq_lens``, ``max_q_len``, ``query_layout``, ``kv_cache_layout``, ``lse_mode``,
  ``output_dtype``, ``output_scale``, ``scale_mode``, ``skip_softmax``; 0.7.1
  ``enable_pdl``, ``use_sinks``) appeared.  The flat CSR form (0.2.2-0.6.x's only
  form) keeps its meaning on 0.7.x ("legacy flat CSR": split query / KV layouts, LSE
  chosen at ``run``); before 0.7.0 the flat arguments are required
  (:class:`FlatPlanRequired`), so ``query_layout="split"`` / ``kv_cache_layout="split"``
  (what 0.7.x make of ``None`` for the flat form) are dropped there.
* ``run``: ``profiler_buffer`` 0.2.3; ``kv_len`` / ``page_table`` 0.2.6 (the cutlass
  backend's inputs); ``return_lse_base_on_e`` 0.5.3 (the kernels store the base-2 LSE
  and then ``*= math::loge2`` in float32, ``mla.cuh`` / ``mla_hopper.cuh``: emulated
  bit-identically by :class:`LseBaseE`); ``o_scale`` 0.6.12; ``ckv_scale`` /
  ``kpe_scale`` 0.6.14; ``ckv_scale_arr`` 0.6.18; ``query`` / ``kv_cache`` (packed
  inputs) 0.7.0; ``sinks``, ``skip_softmax_threshold_scale_factor``, ``bmm1_scale``,
  ``bmm2_scale`` 0.7.1.  ``return_lse=True`` returns ``(out, lse)``, ``lse`` float32
  ``[tokens, heads]`` in base 2 unless ``return_lse_base_on_e``.
"""

from __future__ import annotations

from .._core import Emulation, EntryPoint, Normalizer, Param
from ..errors import UnsupportedParameterError
from ..registry import at_least
from . import _elementwise as ew
from ._attention import LN2, method, prepare, validate_mla_run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement

MODULE = "flashinfer.mla"
CLASS = "BatchMLAPagedAttentionWrapper"
FACADE = "fi_compat.mla"
FLOOR = "0.2.2"


def _method(name: str, params: list[Param], **kw: Any) -> EntryPoint:
    return method(FACADE, MODULE, CLASS, name, params, "attention.mla", floor=FLOOR, **kw)


class FlatPlanRequired(Normalizer):
    """``plan`` / ``run`` without the flat tensors (0.7.0's metadata and packed forms):
    before 0.7.0 these are required positional parameters, so leaving one out is refused
    naming 0.7.0 instead of reaching FlashInfer as a ``TypeError``."""

    out = ()
    boundaries = ("0.7.0",)

    def __init__(self, method: str, names: tuple[str, ...]) -> None:
        self.method = method
        self.args = names

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.7.0"):
            return None
        names, where, release = self.args, adapter.entry.dotted, adapter.release

        def check(*values: Any) -> tuple[Any, ...]:
            for n, v in zip(names, values, strict=True):
                if v is None:
                    raise UnsupportedParameterError(
                        f"{where}: {n} is required on flashinfer-python {release} (leaving "
                        f"the flat {self.method} arguments out, for metadata= / packed "
                        f"inputs, needs flashinfer-python>=0.7.0). Fix: pass {n}",
                        parameter=n,
                        installed=str(release),
                        minimum="0.7.0",
                    )
            return ()

        return check

    def describe(self, p: Placement) -> str | None:
        if at_least(p, "0.7.0"):
            return None
        return f"`{self.method}`: the flat arguments are required (optional from 0.7.0)"


class LseBaseE(Emulation):
    """``run(return_lse_base_on_e=True)`` before 0.5.3: the base-2 LSE the release
    returns, times ``loge2`` in float32 in place, which is what the 0.5.3+ kernels do
    after storing it (bit-identical)."""

    name = "lse_base_e"
    reads = ("return_lse_base_on_e",)
    params = ("return_lse_base_on_e",)
    boundaries = ("0.5.3",)

    def may_apply(self, p: Placement) -> bool:
        return not at_least(p, "0.5.3")

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        pl = adapter.placement
        return pl is not None and not at_least(pl, "0.5.3") and kw["return_lse_base_on_e"]

    def describe(self, p: Placement) -> str | None:
        return None if at_least(p, "0.5.3") else "`return_lse_base_on_e` emulated"

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        return kw["return_lse"] is True or kw["lse"] is not None

    def after(self, adapter: Adapter, kw: dict[str, Any], result: Any, state: object) -> Any:
        if not state:
            return result
        if kw["return_lse"] is True:
            result[1].mul_(LN2)
        else:  # the caller's lse buffer, written without return_lse
            kw["lse"].mul_(LN2)
        return result


_BACKENDS: dict[object, str] = {
    "cutlass": "0.2.6",
    "cutile": "0.7.0",
    "trtllm-gen": "0.7.1",
    "xqa": "0.7.1",
    "cute-dsl": "0.7.1",
    "cute-dsl-monolithic": "0.7.1",
    "cute-dsl-modular": "0.7.1",
    "cute-dsl-rubin-mtp": "0.7.4",
    "autotune": "0.7.4",
}

INIT = _method(
    "__init__",
    [
        Param(
            "backend",
            value_since=_BACKENDS,
            ref="0.2.2 auto/fa2/fa3; 0.2.6 cutlass; 0.7.0 cutile; 0.7.1 trtllm-gen, xqa, "
            "cute-dsl; 0.7.4 autotune",
        ),
    ],
)

_FLAT = (
    "qo_indptr",
    "kv_indptr",
    "kv_indices",
    "kv_len_arr",
    "num_heads",
    "head_dim_ckv",
    "head_dim_kpe",
    "page_size",
    "causal",
    "sm_scale",
    "q_data_type",
    "kv_data_type",
)
_PLAN_070 = "0.7.0 plan metadata"

PLAN = _method(
    "plan",
    [
        *(Param(n) for n in _FLAT),
        Param("use_profiler", note="record a kernel profile", ref="0.2.3"),
        Param("metadata", note="MLAPlanMetadata", ref=_PLAN_070),
        Param("cum_seq_lens_q", note="dense metadata form", ref=_PLAN_070),
        Param("block_tables", note="dense metadata form", ref=_PLAN_070),
        Param("seq_lens", note="dense metadata form", ref=_PLAN_070),
        Param("max_q_len", note="dense metadata form", ref=_PLAN_070),
        *(
            # the flat form (required before 0.7.0) plans split inputs when the layout is
            # left out; 0.2.2-0.6.x take split inputs only
            Param(
                n,
                neutral=("split",),
                neutral_ref=f"0.7.0 mla/_batch_mla/_wrapper.py:{line} ({n} None -> 'split' "
                "for the flat form; same in 0.7.4 :637-639)",
                note=note,
                ref=_PLAN_070,
            )
            for n, line, note in (
                ("query_layout", "536-537", "packed or split query"),
                ("kv_cache_layout", "538-539", "packed or split KV cache"),
            )
        ),
        Param("lse_mode", note="LSE fixed at plan time", ref=_PLAN_070),
        Param("output_dtype", note="output dtype other than q's", ref=_PLAN_070),
        Param("output_scale", note="per-tensor output scale", ref=_PLAN_070),
        Param("scale_mode", note="FP8 scale form", ref=_PLAN_070),
        Param("skip_softmax", note="skip-softmax sparsity", ref=_PLAN_070),
        Param("enable_pdl", hint=True, note="programmatic dependent launch", ref="0.7.1"),
        Param("use_sinks", note="attention sinks", ref="0.7.1"),
    ],
    normalizers=(FlatPlanRequired("plan", _FLAT),),
)

RUN = _method(
    "run",
    [
        Param("profiler_buffer", note="profile output", ref="0.2.3"),
        Param("kv_len", note="cutlass backend input", ref="0.2.6"),
        Param("page_table", note="cutlass backend input", ref="0.2.6"),
        Param("return_lse_base_on_e", emulation="lse_base_e", ref="0.5.3 (kernel *= loge2)"),
        Param("o_scale", note="output scale", ref="0.6.12"),
        Param("query", note="packed query", ref="0.7.0"),
        Param("kv_cache", note="packed KV cache", ref="0.7.0"),
        Param("ckv_scale", note="FP8 KV scale", ref="0.6.14"),
        Param("ckv_scale_arr", note="FP8 KV scale per request", ref="0.6.18"),
        Param("kpe_scale", note="FP8 KV scale", ref="0.6.14"),
        Param("sinks", note="attention sinks", ref="0.7.1"),
        Param("skip_softmax_threshold_scale_factor", note="skip-softmax threshold", ref="0.7.1"),
        Param("bmm1_scale", note="trtllm-gen BMM1 scale", ref="0.7.1"),
        Param("bmm2_scale", note="trtllm-gen BMM2 scale", ref="0.7.1"),
    ],
    validate=validate_mla_run(f"{FACADE}.{CLASS}.run"),
    validate_args=("q_nope", "q_pe", "ckv_cache", "kpe_cache", "query", "kv_cache"),
    prepare=prepare,
    devices=ew.any_cuda_device,
    emulations=(LseBaseE(),),
    normalizers=(FlatPlanRequired("run", ("q_nope", "q_pe", "ckv_cache", "kpe_cache")),),
)

METHODS = {"__init__": INIT, "plan": PLAN, "run": RUN}
ENTRIES = list(METHODS.values())
