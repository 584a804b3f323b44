"""Shared cases of the attention suites (``fi_compat.decode`` / ``fi_compat.prefill``):
each method or function built for one release with its innermost FlashInfer call
replaced by a spy bound to a real signature (the release's snapshot read from its wheel
or sdist, or ``inspect.signature`` of the installed method in the live contract).

For ``run`` the spy returns what the kernel returns: ``out`` ``[tokens, heads,
head_dim_vo]`` in q's dtype, and with ``return_lse`` an ``lse`` ``[tokens, heads]``
float32 whose values are ``0, 1, 2, ...`` (so the LSE emulations can be checked exactly),
finished as 0.7.1+ finish it where the release has ``lse_base`` / ``lse_layout``.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import cascade, decode, mla, prefill
from fi_compat._adapters import cascade as cas_tables
from fi_compat._adapters import decode as dec_tables
from fi_compat._adapters import mla as mla_tables
from fi_compat._adapters import prefill as pre_tables
from fi_compat._adapters import trtllm_attention as trt_tables
from fi_compat._core import EntryPoint
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

DEC, PAGED, RAGGED = dec_tables.CLASS, pre_tables.PAGED, pre_tables.RAGGED
CAS, MLA = cas_tables.CLASS, mla_tables.CLASS
SDEC, SPRE = cas_tables.SHARED_DECODE, cas_tables.SHARED_PREFILL
OLD_MLA = dec_tables.MLA_CLASS
GRAPH = dec_tables.GRAPH_CLASS

# key -> (entry, stub)
ENTRIES: dict[str, tuple[EntryPoint, Any]] = {
    f"{DEC}.__init__": (dec_tables.METHODS["__init__"], decode._init),
    f"{DEC}.plan": (dec_tables.METHODS["plan"], decode._plan),
    f"{DEC}.run": (dec_tables.METHODS["run"], decode._run),
    f"{GRAPH}.__init__": (dec_tables.GRAPH_INIT, decode._graph_init),
    "single_decode_with_kv_cache": (dec_tables.SINGLE, stub(decode, "single_decode_with_kv_cache")),
    "fast_decode_plan": (dec_tables.FAST_PLAN, stub(decode, "fast_decode_plan")),
    f"{PAGED}.__init__": (pre_tables.PAGED_METHODS["__init__"], prefill._paged_init),
    f"{PAGED}.plan": (pre_tables.PAGED_METHODS["plan"], prefill._paged_plan),
    f"{PAGED}.run": (pre_tables.PAGED_METHODS["run"], prefill._paged_run),
    f"{RAGGED}.__init__": (pre_tables.RAGGED_METHODS["__init__"], prefill._ragged_init),
    f"{RAGGED}.plan": (pre_tables.RAGGED_METHODS["plan"], prefill._ragged_plan),
    f"{RAGGED}.run": (pre_tables.RAGGED_METHODS["run"], prefill._ragged_run),
    "single_prefill_with_kv_cache": (
        pre_tables.SINGLE,
        stub(prefill, "single_prefill_with_kv_cache"),
    ),
    "merge_state": (cas_tables.SPECS["merge_state"], stub(cascade, "merge_state")),
    "merge_state_in_place": (
        cas_tables.SPECS["merge_state_in_place"],
        stub(cascade, "merge_state_in_place"),
    ),
    "merge_states": (cas_tables.SPECS["merge_states"], stub(cascade, "merge_states")),
    f"{CAS}.__init__": (cas_tables.METHODS["__init__"], cascade._init),
    f"{CAS}.plan": (cas_tables.METHODS["plan"], cascade._plan),
    f"{CAS}.run": (cas_tables.METHODS["run"], cascade._run),
    f"{SDEC}.__init__": (cas_tables.SHARED_DECODE_METHODS["__init__"], cascade._shared_init),
    f"{SDEC}.begin_forward": (
        cas_tables.SHARED_DECODE_METHODS["begin_forward"],
        cascade._shared_decode_begin_forward,
    ),
    f"{SDEC}.forward": (
        cas_tables.SHARED_DECODE_METHODS["forward"],
        cascade._shared_decode_forward,
    ),
    f"{SPRE}.__init__": (cas_tables.SHARED_PREFILL_METHODS["__init__"], cascade._shared_init),
    f"{SPRE}.begin_forward": (
        cas_tables.SHARED_PREFILL_METHODS["begin_forward"],
        cascade._shared_prefill_begin_forward,
    ),
    f"{SPRE}.forward": (
        cas_tables.SHARED_PREFILL_METHODS["forward"],
        cascade._shared_prefill_forward,
    ),
    f"{MLA}.__init__": (mla_tables.METHODS["__init__"], mla._init),
    f"{MLA}.plan": (mla_tables.METHODS["plan"], mla._plan),
    f"{MLA}.run": (mla_tables.METHODS["run"], mla._run),
    f"{OLD_MLA}.__init__": (dec_tables.MLA_METHODS["__init__"], decode._mla_init),
    f"{OLD_MLA}.plan": (dec_tables.MLA_METHODS["plan"], decode._mla_plan),
    f"{OLD_MLA}.run": (dec_tables.MLA_METHODS["run"], decode._mla_run),
    "trtllm_batch_decode_with_kv_cache": (
        trt_tables.DECODE,
        stub(decode, "trtllm_batch_decode_with_kv_cache"),
    ),
    "trtllm_batch_decode_with_kv_cache_mla": (
        trt_tables.MLA,
        stub(decode, "trtllm_batch_decode_with_kv_cache_mla"),
    ),
    "trtllm_batch_context_with_kv_cache": (
        trt_tables.CONTEXT,
        stub(prefill, "trtllm_batch_context_with_kv_cache"),
    ),
}
TRTLLM = (
    "trtllm_batch_decode_with_kv_cache",
    "trtllm_batch_decode_with_kv_cache_mla",
    "trtllm_batch_context_with_kv_cache",
)


def releases(key: str) -> list[str]:
    """The releases fi_compat serves ``key`` on (from its floor)."""
    e = ENTRIES[key][0]
    return [
        r
        for r, v in snapshots.load(e)["releases"].items()
        if v is not None and at_least(place(r), e.since)
    ]


CELLS = [(k, r) for k in ENTRIES for r in releases(k)]


class Receiver:
    """Stands in for the wrapper instance (the spy records it)."""


class AttnSpy(BindSpy):
    """A method or function spy: binds ``(self, *args, **kw)`` for methods (the receiver
    first) or ``(*args, **kw)`` for functions against the release's signature."""

    def __init__(self, signature: inspect.Signature, method: bool) -> None:
        super().__init__(signature)
        self.method = method
        self.receivers: list[Any] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.method:
            assert args, "the receiver first"
            self.receivers.append(args[0])
            params = list(self.signature.parameters.values())[1:]
            saved, self.signature = self.signature, self.signature.replace(parameters=params)
            try:  # the rest positionally up to the release's signature, by keyword after
                return super().__call__(*args[1:], **kwargs)
            finally:
                self.signature = saved
        return super().__call__(*args, **kwargs)

    def result(self, a: dict[str, Any]) -> Any:
        if "query" in a and "workspace_buffer" in a:  # the TRT-LLM functions
            q = a["query"]
            dim = a["kv_lora_rank"] if "kv_lora_rank" in a else q.shape[-1]
            out = torch.zeros(*q.shape[:-1], dim, dtype=q.dtype)
            if not a.get("return_lse"):
                return out
            return out, torch.zeros(q.shape[:-1], dtype=torch.float32)
        if a.get("q_nope") is not None:  # MLA run: out [tokens, heads, head_dim_ckv]
            q, v = a["q_nope"], a["ckv_cache" if "ckv_cache" in a else "paged_ckv_cache"]
        elif a.get("query") is not None:  # MLA run, packed inputs (0.7.0)
            q, v = a["query"], a["kv_cache"]
        elif "s_a" in a:  # merge_state: fresh (v_merged, s_merged)
            return a["v_a"].clone(), a["s_a"].clone()
        elif "s_other" in a:  # merge_state_in_place: writes v / s, returns None
            return None
        elif "v" in a and "s" in a and "q" not in a:  # merge_states
            return a["v"][:, 0].clone(), a["s"][:, 0].clone()
        elif "q" not in a:
            return None  # __init__ / plan
        elif "unique_kv_cache" in a:  # the shared-prefix forward: out like q
            return torch.zeros_like(a["q"])
        else:
            q, v = a["q"], a.get("v")
        if v is None:
            kv = a["paged_kv_cache"]
            v = kv[1] if isinstance(kv, tuple) else kv
        d = v.shape[-1]
        shape = (*q.shape[:-1], d)
        out = a.get("out")
        out = out.zero_() if out is not None else torch.zeros(shape, dtype=q.dtype)
        given = a.get("lse")
        if not a.get("return_lse") and given is None:
            return out
        rows = q.shape[0] if q.dim() == 3 else 1
        heads = q.shape[-2]
        lse = torch.arange(rows * heads, dtype=torch.float32).reshape(rows, heads)
        if q.dim() == 2:
            lse = lse[0]
        if a.get("lse_layout", "NH") == "HN":  # 0.7.1+: the release finishes it itself
            lse = lse.t().contiguous()
        if a.get("lse_base", "log2") == "ln" or a.get("return_lse_base_on_e"):
            lse = lse * 0.6931471805599453094
        if given is not None:  # written also without return_lse (0.2.3 decode.py)
            given.copy_(lse)
            lse = given
        return (out, lse) if a.get("return_lse") else out


def facade(key: str, release: str, signature: Any = None) -> tuple[Any, AttnSpy]:
    """The facade function of ``key`` built for ``release`` over a fresh spy."""
    entry, stub = ENTRIES[key]
    sig = signature or snapshot_signature(release, entry)
    a = entry.select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub)
    spy = AttnSpy(sig, entry.receiver is not None)
    a._set_target(spy)
    return f, spy


def _t(*shape: int, dtype: torch.dtype = torch.bfloat16, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


def _i(*vals: int) -> torch.Tensor:
    return torch.tensor(vals, dtype=torch.int32)


def args(key: str) -> dict[str, Any]:
    """Keyword arguments of a typical call, every value distinct (so a swapped binding
    shows); only parameters every release of the entry has."""
    bf = torch.bfloat16
    if key == f"{CAS}.__init__":
        return {"num_levels": 2, "float_workspace_buffer": torch.empty(64, dtype=torch.uint8)}
    if key == f"{CAS}.plan":
        return {
            "qo_indptr_arr": [_i(0, 5), _i(0, 3, 5)],
            "paged_kv_indptr_arr": [_i(0, 2), _i(0, 1, 2)],
            "paged_kv_indices_arr": [_i(0, 1), _i(2, 3)],
            "paged_kv_last_page_len": [_i(16), _i(4, 9)],
            "num_qo_heads": 8,
            "num_kv_heads": 2,
            "head_dim": 64,
            "page_size": 16,
            "causal": True,
            "sm_scale": 0.125,
            "q_data_type": bf,
        }
    u8 = torch.empty(64, dtype=torch.uint8)
    if key == "trtllm_batch_decode_with_kv_cache":
        return {
            "query": _t(2, 8, 64),
            "kv_cache": _t(4, 2, 2, 16, 64, seed=1),
            "workspace_buffer": u8,
            "block_tables": _i(0, 1, 2, 3).view(2, 2),
            "seq_lens": _i(20, 9),
            "max_seq_len": 32,
            "bmm1_scale": 0.125,
            "bmm2_scale": 2.0,
        }
    if key == "trtllm_batch_context_with_kv_cache":
        return {
            "query": _t(9, 8, 64),
            "kv_cache": _t(4, 2, 2, 16, 64, seed=1),
            "workspace_buffer": u8,
            "block_tables": _i(0, 1, 2, 3).view(2, 2),
            "seq_lens": _i(20, 9),
            "max_q_len": 5,
            "max_kv_len": 20,
            "bmm1_scale": 0.125,
            "bmm2_scale": 2.0,
            "batch_size": 2,
            "cum_seq_lens_q": _i(0, 4, 9),
            "cum_seq_lens_kv": _i(0, 20, 29),
        }
    if key == "trtllm_batch_decode_with_kv_cache_mla":
        return {
            "query": _t(2, 1, 16, 576),
            "kv_cache": _t(3, 1, 32, 576, seed=1),
            "workspace_buffer": u8,
            "qk_nope_head_dim": 128,
            "kv_lora_rank": 512,
            "qk_rope_head_dim": 64,
            "block_tables": _i(0, 1, 2, 0).view(2, 2),
            "seq_lens": _i(40, 7),
            "max_seq_len": 64,
        }
    if key == f"{OLD_MLA}.__init__":
        return {"float_workspace_buffer": torch.empty(64, dtype=torch.uint8)}
    if key == f"{OLD_MLA}.plan":
        return {
            "indptr": _i(0, 2, 3),
            "indices": _i(0, 1, 2),
            "last_page_len": _i(3, 4),
            "num_qo_heads": 16,
            "head_dim_compressed_kv": 512,
            "page_size": 16,
            "sm_scale": 0.0625,
            "window_left": 100,
            "logits_soft_cap": 30.0,
            "data_type": bf,
            "q_data_type": bf,
        }
    if key == f"{OLD_MLA}.run":
        return {
            "q_nope": _t(2, 16, 512),
            "q_pe": _t(2, 16, 64, seed=1),
            "paged_ckv_cache": _t(3, 16, 512, seed=2),
            "paged_kpe_cache": _t(3, 16, 64, seed=3),
            "return_lse": True,
        }
    if key == f"{MLA}.__init__":
        return {"float_workspace_buffer": torch.empty(64, dtype=torch.uint8)}
    if key == f"{MLA}.plan":
        return {
            "qo_indptr": _i(0, 1, 2),
            "kv_indptr": _i(0, 2, 3),
            "kv_indices": _i(0, 1, 2),
            "kv_len_arr": _i(40, 7),
            "num_heads": 16,
            "head_dim_ckv": 512,
            "head_dim_kpe": 64,
            "page_size": 32,
            "causal": False,
            "sm_scale": 0.0625,
            "q_data_type": bf,
            "kv_data_type": bf,
        }
    if key == f"{MLA}.run":
        return {
            "q_nope": _t(2, 16, 512),
            "q_pe": _t(2, 16, 64, seed=1),
            "ckv_cache": _t(3, 32, 512, seed=2),
            "kpe_cache": _t(3, 32, 64, seed=3),
            "return_lse": True,
        }
    if key == f"{CAS}.run":
        return {"q": _t(5, 8, 64), "paged_kv_cache": _t(4, 2, 16, 2, 64, seed=1)}
    if key in ("merge_state", "merge_state_in_place"):
        names = (
            ("v_a", "s_a", "v_b", "s_b")
            if key == "merge_state"
            else ("v", "s", "v_other", "s_other")
        )
        vals = (_t(5, 8, 64), _t(5, 8, dtype=torch.float32), _t(5, 8, 64, seed=1))
        return dict(zip(names, (*vals, _t(5, 8, dtype=torch.float32, seed=1)), strict=True))
    if key == "merge_states":
        return {"v": _t(5, 3, 8, 64), "s": _t(5, 3, 8, dtype=torch.float32)}
    if key in (f"{SDEC}.__init__", f"{SPRE}.__init__"):
        return {"float_workspace_buffer": torch.empty(64, dtype=torch.uint8), "kv_layout": "HND"}
    if key == f"{SDEC}.begin_forward":
        return {
            "unique_kv_indptr": _i(0, 2, 3),
            "unique_kv_indices": _i(0, 1, 2),
            "unique_kv_last_page_len": _i(3, 4),
            "num_qo_heads": 8,
            "num_kv_heads": 2,
            "head_dim": 64,
            "page_size": 16,
            "data_type": bf,
        }
    if key == f"{SPRE}.begin_forward":
        return {
            "qo_indptr": _i(0, 3, 5),
            "paged_kv_indptr": _i(0, 2, 3),
            "paged_kv_indices": _i(0, 1, 2),
            "paged_kv_last_page_len": _i(3, 4),
            "num_qo_heads": 8,
            "num_kv_heads": 2,
            "head_dim": 64,
            "page_size": 16,
        }
    if key in (f"{SDEC}.forward", f"{SPRE}.forward"):
        out = {
            "q": _t(2, 8, 64) if key.startswith(SDEC) else _t(5, 8, 64),
            "k_shared": _t(12, 2, 64, seed=1),
            "v_shared": _t(12, 2, 64, seed=2),
            "unique_kv_cache": _t(4, 2, 16, 2, 64, seed=3),
        }
        if key.startswith(SPRE):
            out.update(causal=True, use_fp16_qk_reduction=True, sm_scale=0.125, rope_theta=5e5)
        return out
    if key == f"{GRAPH}.__init__":
        return {
            "workspace_buffer": torch.empty(64, dtype=torch.uint8),
            "indptr_buffer": _i(0, 0, 0),
            "indices_buffer": _i(0, 0, 0, 0),
            "last_page_len_buffer": _i(0, 0),
            "kv_layout": "HND",
            "use_tensor_cores": True,
        }
    if key.endswith("__init__"):
        return {
            "float_workspace_buffer": torch.empty(64, dtype=torch.uint8),
            "kv_layout": "HND",
            "use_cuda_graph": False,
        }
    if key in (f"{DEC}.plan", "fast_decode_plan"):
        return {
            "indptr": _i(0, 2, 3),
            "indices": _i(0, 1, 2),
            "last_page_len": _i(3, 4),
            "num_qo_heads": 8,
            "num_kv_heads": 2,
            "head_dim": 64,
            "page_size": 16,
            "window_left": 100,
            "logits_soft_cap": 30.0,
            "q_data_type": bf,
            "kv_data_type": bf,
            "sm_scale": 0.125,
            "rope_scale": 2.0,
            "rope_theta": 5e5,
        }
    if key in (f"{DEC}.run", f"{PAGED}.run"):
        q = _t(2, 8, 64) if key.startswith(DEC) else _t(5, 8, 64)
        return {"q": q, "paged_kv_cache": _t(4, 2, 16, 2, 64, seed=1), "return_lse": True}
    if key == f"{PAGED}.plan":
        return {
            "qo_indptr": _i(0, 3, 5),
            "paged_kv_indptr": _i(0, 2, 3),
            "paged_kv_indices": _i(0, 1, 2),
            "paged_kv_last_page_len": _i(3, 4),
            "num_qo_heads": 8,
            "num_kv_heads": 2,
            "head_dim_qk": 64,
            "page_size": 16,
            "causal": True,
            "sm_scale": 0.125,
            "window_left": 100,
            "logits_soft_cap": 30.0,
            "q_data_type": bf,
            "kv_data_type": bf,
        }
    if key == f"{RAGGED}.plan":
        return {
            "qo_indptr": _i(0, 3, 5),
            "kv_indptr": _i(0, 4, 9),
            "num_qo_heads": 8,
            "num_kv_heads": 2,
            "head_dim_qk": 64,
            "causal": True,
            "sm_scale": 0.125,
            "window_left": 100,
            "logits_soft_cap": 30.0,
            "q_data_type": bf,
            "kv_data_type": bf,
        }
    if key == f"{RAGGED}.run":
        return {"q": _t(5, 8, 64), "k": _t(9, 2, 64, seed=1), "v": _t(9, 2, 64, seed=2)}
    if key == "single_decode_with_kv_cache":
        return {
            "q": _t(8, 64),
            "k": _t(10, 2, 64, seed=1),
            "v": _t(10, 2, 64, seed=2),
            "kv_layout": "NHD",
            "sm_scale": 0.125,
            "logits_soft_cap": 30.0,
        }
    assert key == "single_prefill_with_kv_cache", key
    return {
        "q": _t(5, 8, 64),
        "k": _t(9, 2, 64, seed=1),
        "v": _t(9, 2, 64, seed=2),
        "causal": True,
        "sm_scale": 0.125,
        "logits_soft_cap": 30.0,
    }


def same(a: Any, b: Any) -> bool:
    """The value fi_compat forwarded is the caller's: tensors by identity."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return a is b
    if type(a) in (list, tuple):
        return a is b or (
            type(a) is type(b)
            and len(a) == len(b)
            and all(same(x, y) for x, y in zip(a, b, strict=True))
        )
    return type(a) is type(b) and a == b
