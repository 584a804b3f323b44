"""Adapter tables for FlashInfer's TRT-LLM attention functions:
``flashinfer.decode.trtllm_batch_decode_with_kv_cache``,
``flashinfer.prefill.trtllm_batch_context_with_kv_cache`` and
``trtllm_batch_decode_with_kv_cache_mla`` (``flashinfer.decode`` until 0.5.3,
``flashinfer.mla`` from 0.6.0; both export it), served from 0.2.9, and
``trtllm_batch_decode_sparse_mla_dsv4`` (defined in ``flashinfer.mla._core``, exported by
``flashinfer.decode`` and ``flashinfer.mla``), served from 0.6.12.

Read from the released sources (every signature: ``_snapshots/decode.trtllm_*.json``,
``prefill.trtllm_*.json``):

* Floor 0.2.9: the functions were re-signed then (0.2.6-0.2.8's decode took
  ``num_heads, num_kv_heads, scale, block_size, kv_cache_dtype, k_scale, v_scale``;
  0.2.8's MLA ``scale``/``block_size``).
* Every parameter is positional-or-keyword in FlashInfer, and later releases inserted
  parameters mid-list: decode ``kv_layout`` before ``enable_pdl`` (0.5.0), MLA
  ``sparse_mla_top_k`` before ``out`` (0.6.0), context ``kv_layout`` before
  ``enable_pdl`` and ``sinks`` moved after it (0.5.0).  The stable signatures are
  positional up to the last slot no release moved (decode ``sinks``, context
  ``o_sf_vec_size``, MLA ``max_seq_len``) and keyword-only after, so a positional call
  written for an older order fails instead of shifting (``fi_compat.written_for(X)``
  binds it).
* ``bmm1_scale`` / ``bmm2_scale``: ``float`` and required before 0.5.3 in decode (always
  forwarded; stable default 1.0, 0.5.3's), ``float | Tensor`` (device scales) from
  0.5.3 in all three: a tensor before 0.5.3 is refused (:class:`KindSince`).  0.2.9-0.5.2
  MLA took device scales as ``bmm1_scale_log2_tensor`` / ``bmm2_scale_tensor``, which
  0.5.3 removed: not part of the stable signature.
* ``kv_cache`` as a ``(k_cache, v_cache)`` pair: 0.2.10 (decode, context).
* MLA ``kv_cache``: a 3-D ``[pages, page_size, dim]`` cache is taken from 0.6.1
  (``_check_trtllm_gen_mla_shape``: ``kv_cache.unsqueeze(1)``); before, the 4-D ``[pages,
  1, page_size, dim]`` form only: fi_compat passes the same view (:class:`MlaKvCache3d`).
* ``lse`` / ``return_lse``: 0.6.12 (refused before; the kernels wrote none).
  ``enable_pdl``: 0.2.11.post3 (a hint).  ``kv_cache_sf``: 0.6.7 (0.6.7 also had the
  deprecated ``kv_block_scales``).
* Backends: decode ``backend`` 0.5.0 (``auto`` = trtllm-gen on SM10x, else ``xqa``;
  ``cake`` 0.7.1); before 0.5.0 trtllm-gen only.  MLA ``backend`` 0.5.3 (``xqa``:
  SM12x), ``cute-dsl`` 0.6.12, ``sparse`` 0.6.18, ``cake`` 0.7.1.  Context ``backend``
  0.7.1 (``trtllm-gen``, ``cake``).
"""

from __future__ import annotations

from .._core import EntryPoint, Normalizer, Param
from .._core.contract import Tensor
from ..errors import InvalidArgumentError, UnsupportedParameterError
from ..registry import at_least
from . import _elementwise as ew
from ._attention import sm107_variant

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement

FLOOR = "0.2.9"


class KindSince(Normalizer):
    """A value of another kind than the parameter first took (a tensor where a float
    was taken, a pair where a tensor was) needs release ``since``: refused before it,
    naming the release, instead of failing inside FlashInfer."""

    out = ()

    def __init__(self, name: str, since: str, test: Callable[[Any], bool], what: str) -> None:
        self.args = (name,)
        self.since, self.test, self.what = since, test, what
        self.boundaries = (since,)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, self.since):
            return None
        name, since, test, what = self.args[0], self.since, self.test, self.what
        where, release = adapter.entry.dotted, adapter.release

        def check(v: Any) -> tuple[Any, ...]:
            if test(v):
                raise UnsupportedParameterError(
                    f"{where}({name}=<{what}>) needs flashinfer-python>={since}; installed: "
                    f"{release}. Fix: pip install 'flashinfer-python>={since}', or pass "
                    f"{name} in the older form",
                    parameter=name,
                    installed=str(release),
                    minimum=since,
                )
            return ()

        return check

    def describe(self, p: Placement) -> str | None:
        return None if at_least(p, self.since) else f"`{self.args[0]}` as {self.what} refused"


def _is_tensor(v: Any) -> bool:
    return hasattr(v, "dim") and hasattr(v, "get_device")


def _is_pair(v: Any) -> bool:
    return type(v) is tuple or type(v) is list


def _device_scales(name: str) -> KindSince:
    return KindSince(name, "0.5.3", _is_tensor, "a device tensor")


class MlaKvCache3d(Normalizer):
    """A 3-D MLA ``kv_cache`` ``[pages, page_size, dim]`` before 0.6.1, which reads the
    4-D ``[pages, 1, page_size, dim]`` form only: the same view 0.6.1+ make
    (``kv_cache.unsqueeze(1)``, no copy)."""

    args = out = ("kv_cache",)
    boundaries = ("0.6.1",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.6.1"):
            return None

        def view(kv: Any) -> tuple[Any, ...]:
            return (kv.unsqueeze(1) if _is_tensor(kv) and kv.dim() == 3 else kv,)

        return view

    def describe(self, p: Placement) -> str | None:
        return None if at_least(p, "0.6.1") else "3-D `kv_cache` passed as its 4-D view"


def _validate(where: str, dims: tuple[int, ...]) -> Callable[..., int]:
    """``query`` of ``dims`` dims, ``kv_cache`` a tensor or a pair, ``block_tables`` /
    ``workspace_buffer`` tensors, all on one device; returns its CUDA index."""

    def validate(query: Any, kv_cache: Any, workspace_buffer: Any, block_tables: Any) -> int:
        ew.tensor(where, "query", query)
        if query.dim() not in dims:
            raise InvalidArgumentError(
                f"{where}: query must be {' or '.join(f'{d}-D' for d in dims)}, got shape "
                f"{tuple(query.shape)}"
            )
        others = {"workspace_buffer": workspace_buffer, "block_tables": block_tables}
        if _is_pair(kv_cache):
            if len(kv_cache) != 2 or not all(_is_tensor(t) for t in kv_cache):
                raise InvalidArgumentError(
                    f"{where}: kv_cache must be a tensor or a (k_cache, v_cache) pair of tensors"
                )
            others.update({"kv_cache[0]": kv_cache[0], "kv_cache[1]": kv_cache[1]})
        else:
            ew.tensor(where, "kv_cache", kv_cache)
            others["kv_cache"] = kv_cache
        ew.tensor(where, "workspace_buffer", workspace_buffer)
        ew.tensor(where, "block_tables", block_tables)
        return ew.check_device(where, "query", query, others)

    return validate


def _sm(
    families: tuple[int, ...], what: str, wider: tuple[str, tuple[int, ...]] | None = None
) -> Any:
    """A ``devices`` hook: compute-capability majors ``families``; ``wider``: (release,
    majors) served from that release on."""

    def devices(pl: Placement, cc: tuple[int, int]) -> str | None:
        ok = families
        if wider is not None and at_least(pl, wider[0]):
            ok = wider[1]
        if cc[0] in ok:
            return None
        return what + (
            f" (from {wider[0]}: SM{'/'.join(f'{m}x' for m in wider[1])})" if wider else ""
        )

    return devices


def _entry(module: str, name: str, params: list[Param], **kw: Any) -> EntryPoint:
    facade = "fi_compat.prefill" if module == "flashinfer.prefill" else "fi_compat.decode"
    kw.setdefault("floor", FLOOR)
    kw.setdefault("feature", "attention.trtllm")
    return EntryPoint(
        facade=facade, name=name, module=module, params=params, prepare=ew.prepare, **kw
    )


_SCALES_REF = "float, required before 0.5.3 (always forwarded); a tensor from 0.5.3"
_BMM = [
    Param("bmm1_scale", explicit=True, ref=_SCALES_REF),
    Param("bmm2_scale", explicit=True, ref=_SCALES_REF),
]


def _p(*names: str) -> list[Param]:
    return [Param(n) for n in names]


DECODE = _entry(
    "flashinfer.decode",
    "trtllm_batch_decode_with_kv_cache",
    [
        *_p("query", "kv_cache", "workspace_buffer", "block_tables", "seq_lens", "max_seq_len"),
        *_BMM,
        *_p("window_left", "out", "out_dtype", "o_sf_scale", "o_sf_vec_size"),
        Param("sinks", note="attention sinks", ref="0.2.10"),
        Param("kv_layout", note="NHD cache layout", ref="0.5.0"),
        Param("enable_pdl", hint=True, note="programmatic dependent launch", ref="0.2.11.post3"),
        Param(
            "backend",
            neutral=("trtllm-gen",),  # the only kernel before 0.5.0
            neutral_ref="0.5.0 decode.py:2200 (backend='trtllm-gen': the trtllm-gen "
            "kernels 0.2.9-0.4.1 always run)",
            value_since={"xqa": "0.5.0", "cake": "0.7.1"},
            ref="0.5.0 (auto: trtllm-gen on SM10x, else xqa); cake 0.7.1",
        ),
        Param("q_len_per_req", note="query tokens per request", ref="0.3.0"),
        Param("o_scale", note="output scale", ref="0.5.3"),
        *(
            Param(n, note="speculative decoding inputs", ref="0.6.0")
            for n in ("mask", "max_q_len", "cum_seq_lens_q")
        ),
        Param("skip_softmax_threshold_scale_factor", note="skip-softmax", ref="0.6.4"),
        Param("kv_cache_sf", note="NVFP4 KV-cache scale factors", ref="0.6.7"),
        Param("uses_shared_paged_kv_idx", note="one page table for K and V", ref="0.6.7"),
        Param("lse", note="LSE buffer", ref="0.6.12"),
        Param("return_lse", note="also return the LSE", ref="0.6.12"),
        *_p("bmm1_scale_log2", "multi_ctas_kv_counter_buffer"),
        *_p("enable_block_sparse_attention", "cp_world", "cp_rank"),
        *_p("causal_seqlens_kv_global", "bf16q_fp8kv_transform_mode"),
        *_p("request_order", "request_order_plan", "sparse_top_k", "length_aware_schedule"),
    ],
    validate=_validate("fi_compat.decode.trtllm_batch_decode_with_kv_cache", (3, 4)),
    validate_args=("query", "kv_cache", "workspace_buffer", "block_tables"),
    normalizers=(
        _device_scales("bmm1_scale"),
        _device_scales("bmm2_scale"),
        KindSince("kv_cache", "0.2.10", _is_pair, "a (k_cache, v_cache) pair"),
    ),
    devices=_sm(
        (10,),
        "the TRT-LLM decode kernels (trtllm-gen) are built for SM10x only before 0.5.0",
        ("0.5.0", (9, 10, 12)),
    ),
    matrix_note="trtllm-gen: SM10x; xqa (0.5.0+): SM90/SM10x/SM12x",
)

CONTEXT = _entry(
    "flashinfer.prefill",
    "trtllm_batch_context_with_kv_cache",
    [
        *_p("query", "kv_cache", "workspace_buffer", "block_tables", "seq_lens"),
        *_p("max_q_len", "max_kv_len"),
        Param("bmm1_scale", ref="a tensor from 0.5.3"),
        Param("bmm2_scale", ref="a tensor from 0.5.3"),
        *_p("batch_size", "cum_seq_lens_q", "cum_seq_lens_kv", "window_left", "out"),
        *_p("out_dtype", "o_sf_scale", "o_sf_vec_size"),
        Param("kv_layout", note="NHD cache layout", ref="0.5.0"),
        Param("enable_pdl", hint=True, note="programmatic dependent launch", ref="0.2.11.post3"),
        Param("sinks", note="attention sinks", ref="0.2.10"),
        Param(
            "kv_cache_sf",
            note="NVFP4 KV-cache scale factors",
            ref="0.6.8 (0.6.7 spelled it kv_block_scales)",
            spelled=(("0.6.8", "kv_block_scales", None),),
        ),
        Param("skip_softmax_threshold_scale_factor", note="skip-softmax", ref="0.6.4"),
        Param("uses_shared_paged_kv_idx", note="one page table for K and V", ref="0.6.7"),
        Param("causal", note="non-causal context attention", ref="0.6.11"),
        Param("lse", note="LSE buffer", ref="0.6.12"),
        Param("return_lse", note="also return the LSE", ref="0.6.12"),
        Param("multi_ctas_kv_counter_buffer"),
        sm107_variant("use_fp16_softmax", "fp16 softmax accumulation"),
        sm107_variant("uses_spcompress", "sparse-compressed KV"),
        Param(
            "backend",  # the stable default, trtllm-gen, is the only kernel before 0.7.1
            value_since={"cake": "0.7.1"},
            ref="0.7.1",
        ),
        *_p("window_right", "variable_window_token_starts", "variable_window_token_ends"),
    ],
    validate=_validate("fi_compat.prefill.trtllm_batch_context_with_kv_cache", (3,)),
    validate_args=("query", "kv_cache", "workspace_buffer", "block_tables"),
    normalizers=(
        _device_scales("bmm1_scale"),
        _device_scales("bmm2_scale"),
        KindSince("kv_cache", "0.2.10", _is_pair, "a (k_cache, v_cache) pair"),
    ),
    devices=_sm((10,), "the TRT-LLM context kernels (trtllm-gen) are built for SM10x only"),
    matrix_note="trtllm-gen: SM10x",
)

MLA = _entry(
    "flashinfer.decode",
    "trtllm_batch_decode_with_kv_cache_mla",
    [
        *_p("query", "kv_cache", "workspace_buffer", "qk_nope_head_dim", "kv_lora_rank"),
        *_p("qk_rope_head_dim", "block_tables", "seq_lens", "max_seq_len"),
        Param("sparse_mla_top_k", note="sparse MLA", ref="0.6.0"),
        Param("bmm1_scale", ref="a tensor from 0.5.3"),
        Param("bmm2_scale", ref="a tensor from 0.5.3"),
        Param("sinks", note="attention sinks", ref="0.2.10"),
        Param("skip_softmax_threshold_scale_factor", note="skip-softmax", ref="0.6.4"),
        Param("enable_pdl", hint=True, note="programmatic dependent launch", ref="0.2.11.post3"),
        Param(
            "backend",
            neutral=("trtllm-gen",),  # the only kernel before 0.5.3
            neutral_ref="0.5.3 decode.py:2617 (backend='trtllm-gen': the trtllm-gen "
            "kernels 0.2.9-0.5.2 always run)",
            value_since={"xqa": "0.5.3", "cute-dsl": "0.6.12", "sparse": "0.6.18", "cake": "0.7.1"},
            ref="0.5.3 (auto: trtllm-gen on SM10x, xqa on SM12x); cute-dsl 0.6.12",
        ),
        Param("is_var_seq", ref="0.6.8"),
        Param("uses_shared_paged_kv_idx", note="one page table for K and V", ref="0.6.7"),
        Param("lse", note="LSE buffer", ref="0.6.12"),
        Param("return_lse", note="also return the LSE", ref="0.6.12"),
        Param("cute_dsl_impl", ref="0.6.12"),
        *_p("kv_scale_format", "cum_seq_lens_q", "max_q_len", "multi_ctas_kv_counter_buffer"),
        *_p("sparse_mla_top_k_lens", "enable_dcp", "cp_world", "cp_rank"),
        Param("causal_seqlens_kv_global"),
        sm107_variant("use_fp16_softmax", "fp16 softmax accumulation"),
        Param("return_lse_base", note="LSE base", ref="0.7.1"),
    ],
    validate=_validate("fi_compat.decode.trtllm_batch_decode_with_kv_cache_mla", (3, 4)),
    validate_args=("query", "kv_cache", "workspace_buffer", "block_tables"),
    normalizers=(_device_scales("bmm1_scale"), _device_scales("bmm2_scale"), MlaKvCache3d()),
    devices=_sm(
        (10,),
        "the TRT-LLM MLA decode kernels (trtllm-gen) are built for SM10x only",
        ("0.5.3", (10, 12)),
    ),
    matrix_note="trtllm-gen: SM10x; xqa (0.5.3+): SM12x",
)

# trtllm_ragged_attention_deepseek (flashinfer.prefill, 0.2.14): every parameter
# positional-or-keyword in FlashInfer; skip_softmax_threshold_scale_factor was inserted
# before out / lse in 0.6.4 and sage_attn_sfs / num_elts_per_sage_attn_blk before backend
# (0.6.10) in 0.6.11, so the stable signature is positional up to attention_sinks (the last
# slot no release moved) and keyword-only after.  enable_pdl=None resolves to the device
# in prefill.py of every release (0.2.14 prefill.py: ``if enable_pdl is None:
# device_support_pdl``).  skip_all_rows_active_check (0.6.18.post1) defaults to False there
# (empty-row detection, a host sync) and to True from 0.7.0 (no check: what every release
# before 0.6.18.post1 does): fi_compat's default is True and is always sent where the
# parameter exists, so an omitted argument means the same on every release.
RAGGED = _entry(
    "flashinfer.prefill",
    "trtllm_ragged_attention_deepseek",
    [
        *_p("query", "key", "value", "workspace_buffer", "seq_lens", "max_q_len"),
        *_p("max_kv_len"),
        Param("bmm1_scale", ref="a tensor from 0.5.3"),
        Param("bmm2_scale", ref="a tensor from 0.5.3"),
        *_p("o_sf_scale", "batch_size", "window_left", "cum_seq_lens_q", "cum_seq_lens_kv"),
        Param("enable_pdl", note="programmatic dependent launch (None: the device's)"),
        *_p("is_causal", "return_lse", "attention_sinks"),
        Param("skip_softmax_threshold_scale_factor", note="skip-softmax", ref="0.6.4"),
        Param("sage_attn_sfs", note="SageAttention scale factors", ref="0.6.11"),
        Param("num_elts_per_sage_attn_blk", note="SageAttention block sizes", ref="0.6.11"),
        Param(
            "backend",  # trtllm-gen, the stable default, is the only kernel before 0.6.10
            value_since={"cute-dsl": "0.6.10"},
            ref="0.6.10 (trtllm-gen or cute-dsl)",
        ),
        *(
            Param(n, note="trusted CPU mirror of the lengths", ref="0.6.18")
            for n in ("q_seq_lens_cpu", "kv_seq_lens_cpu")
        ),
        sm107_variant("use_fp16_softmax", "fp16 softmax accumulation"),
        sm107_variant("uses_spcompress", "sparse-compressed KV"),
        Param(
            "skip_all_rows_active_check",
            explicit=True,
            note="assume no empty rows (no host sync)",
            ref="0.6.18.post1 prefill.py: default False; 0.7.0: default True, the "
            "behaviour of every release before 0.6.18.post1 (no empty-row check)",
        ),
    ],
    normalizers=(_device_scales("bmm1_scale"), _device_scales("bmm2_scale")),
)


def _not_one(v: Any) -> bool:
    return v is not None and v != 1


def _given(v: Any) -> bool:
    return v is not None


# xqa_batch_decode_with_kv_cache (flashinfer.decode, 0.5.0): the XQA decode kernels
# directly (what trtllm_batch_decode_with_kv_cache(backend="xqa") runs).  Every later
# parameter was appended (o_scale 0.5.3, mask 0.6.0, kv_cache_sf 0.6.7, q_cu_seq_lens
# 0.6.16), so the whole list is positional.  Read from the releases' decode.py:
# * bmm1_scale / bmm2_scale: required before 0.5.3 (always forwarded; 1.0 is 0.5.3's
#   default); 0.5.0-0.5.2 read a tensor with ``.item()``, 0.5.3+ on the device: the same
#   value either way.
# * q_len_per_req: 0.5.0-0.5.3 ``assert q_len_per_req == 1`` ("xqa not support
#   speculative decoding yet"); 0.6.0 serves query rows ``batch * q_len_per_req``.
# * kv_cache_sf (NVFP4 KV, 0.6.7): 0.6.7-0.6.13 take ``head_dim = k_cache.shape[3]``,
#   the packed half of an NVFP4 head, for the q scale (``bmm1_scale / kv_scale *
#   head_dim**0.5``); 0.6.14 reads ``query.shape[-1]``: NVFP4 needs 0.6.14.
# * The kernels: SM90/SM10x/SM12x on every release (xqa.py ``get_compute_capability``
#   check); NVFP4 KV SM12x only (0.6.7 xqa.py assert).
XQA = _entry(
    "flashinfer.decode",
    "xqa_batch_decode_with_kv_cache",
    [
        *_BMM,
        Param("sinks", note="attention sinks"),
        Param("kv_layout", note="NHD or HND cache layout"),
        Param("enable_pdl", note="programmatic dependent launch (None: the device's)"),
        Param(
            "q_len_per_req",
            note="query tokens per request (speculative decoding)",
            ref="0.5.0-0.5.3 decode.py: assert q_len_per_req == 1; other values 0.6.0",
        ),
        Param("o_scale", note="output scale", ref="0.5.3"),
        Param("mask", note="speculative-decoding draft mask", ref="0.6.0"),
        Param(
            "kv_cache_sf",
            note="NVFP4 KV-cache scale factors",
            ref="0.6.7; 0.6.7-0.6.13 scale q by the packed head size (decode.py "
            "head_dim = k_cache.shape[3]), fixed in 0.6.14 (query.shape[-1])",
        ),
        Param("q_cu_seq_lens", note="ragged draft lengths", ref="0.6.16"),
    ],
    validate=_validate("fi_compat.decode.xqa_batch_decode_with_kv_cache", (3,)),
    validate_args=("query", "kv_cache", "workspace_buffer", "block_tables"),
    normalizers=(
        KindSince("q_len_per_req", "0.6.0", _not_one, "a value other than 1 (speculative)"),
        KindSince("kv_cache_sf", "0.6.14", _given, "NVFP4 scale factors"),
    ),
    devices=_sm((9, 10, 12), "the XQA decode kernels are built for SM90, SM10x and SM12x"),
    floor="0.5.0",
    feature="attention.xqa",
    matrix_note="xqa: SM90/SM10x/SM12x (NVFP4 KV: SM12x)",
)


def _separate_paged_kv(v: Any) -> bool:
    return _is_pair(v) and len(v) == 2 and _is_pair(v[1])


class Fp8HangsOnSm90(Normalizer):
    """0.6.9-0.6.14 prefill.py log "The FP8 (e4m3) kernels are currently known to hang
    on SM90" for an e4m3 query and launch anyway (0.6.7-0.6.8.post1 launch the same
    FMHA v2 kernel family without the warning); 0.6.15 removed the warning.  Refused
    before the launch on SM90 before 0.6.15."""

    args = ("qkv",)
    out = ()
    boundaries = ("0.6.15",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.6.15"):
            return None
        release, where = adapter.release, adapter.entry.dotted

        def check(qkv: Any) -> tuple[Any, ...]:
            q = qkv[0] if _is_pair(qkv) and len(qkv) else qkv
            if _is_tensor(q) and str(q.dtype) == "torch.float8_e4m3fn" and q.is_cuda:
                import torch

                if torch.cuda.get_device_capability(q.device)[0] == 9:
                    raise UnsupportedParameterError(
                        f"{where}: an FP8 (e4m3) query on SM90 hangs on flashinfer-python "
                        f"{release} (its prefill.py: 'The FP8 (e4m3) kernels are currently "
                        f"known to hang on SM90', 0.6.9-0.6.14). Fix: pip install "
                        f"'flashinfer-python>=0.6.15', or a bf16/fp16 query",
                        parameter="qkv",
                        installed=str(release),
                        minimum="0.6.15",
                    )
            return ()

        return check

    def describe(self, p: Placement) -> str | None:
        return None if at_least(p, "0.6.15") else "FP8 query refused on SM90 (kernels hang)"


# trtllm_fmha_v2_prefill (flashinfer.prefill, 0.6.7): TRT-LLM's FMHA v2 prefill kernels
# (JIT-compiled for SM90 and SM12x: jit/attention/modules.py gen_fmha_v2_module,
# ``supported_major_versions=[9, 12]``).  The signature never changed (0.6.7-0.7.4, every
# parameter positional-or-keyword).  Behaviour read from prefill.py:
# * 0.6.7-0.6.10.post1 copy a Q_PAGED_KV_NHD cache to HND before the kernel; 0.6.11
#   reads NHD natively: the same result.
# * 0.6.18: a paged ``qkv`` may be ``(query, (k_cache, v_cache))`` with ``[B, 2, M]``
#   block tables; before, only the stacked 5-D pool (refused there).
# * FP8 (e4m3) queries hang on SM90 before 0.6.15 (:class:`Fp8HangsOnSm90`).
FMHA_V2 = _entry(
    "flashinfer.prefill",
    "trtllm_fmha_v2_prefill",
    [
        Param("qkv", ref="a (query, (k_cache, v_cache)) paged pair from 0.6.18"),
    ],
    normalizers=(
        KindSince("qkv", "0.6.18", _separate_paged_kv, "(query, (k_cache, v_cache))"),
        Fp8HangsOnSm90(),
    ),
    devices=_sm((9, 12), "the FMHA v2 kernels are built for SM90 and SM12x only"),
    floor="0.6.7",
    feature="attention.fmha_v2",
    matrix_note="fmha_v2: SM90/SM12x",
)


class RequiredBefore(Normalizer):
    """Tensor arguments the stable signature lets the caller leave out (``None``) that
    older releases require: ``None`` there is refused before the call, naming the first
    release that takes the call without it (each release's own check would raise a
    ``ValueError`` or fail on ``None`` inside FlashInfer)."""

    out = ()

    def __init__(self, since: dict[str, tuple[str, str]]) -> None:
        self.args = tuple(since)
        self.since = since  # {name: (first release taking None, what None is for)}
        self.boundaries = tuple(dict.fromkeys(s for s, _ in since.values()))
        self.passes = " and ".join(f"{n} is not None" for n in since)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None:
            return None
        need = [(n, s, w) for n, (s, w) in self.since.items() if not at_least(pl, s)]
        if not need:
            return None
        names = self.args
        where, release = adapter.entry.dotted, adapter.release

        def check(*values: Any) -> tuple[Any, ...]:
            given = dict(zip(names, values, strict=True))
            for n, since, why in need:
                if given[n] is None:
                    raise UnsupportedParameterError(
                        f"{where}: {n} is required on flashinfer-python {release} (leaving "
                        f"it out, {why}, needs flashinfer-python>={since}). Fix: pass {n}, "
                        f"or pip install 'flashinfer-python>={since}'",
                        parameter=n,
                        installed=str(release),
                        minimum=since,
                    )
            return ()

        return check

    def describe(self, p: Placement) -> str | None:
        need = [n for n, (s, _) in self.since.items() if not at_least(p, s)]
        return f"required (no None): {', '.join(f'`{n}`' for n in need)}" if need else None


def _device_capability(t: Any) -> tuple[int, int] | None:
    """The compute capability of CUDA tensor ``t``'s device (None off CUDA)."""
    if not _is_tensor(t) or not t.is_cuda:
        return None
    import torch

    return tuple(torch.cuda.get_device_capability(t.device))  # type: ignore[return-value]


_DSV4_TRTLLM_GEN = ((10, 0), (10, 3))  # 0.6.18 mla/_core.py:1044 is_sm100_family
_DSV4_SPARSE = ((12, 0), (12, 1))  # 0.6.18 mla/_core.py:1045 is_sm120_family


class Dsv4BackendByDevice(Normalizer):
    """``backend`` (0.6.18) before 0.6.18, where the kernel is chosen by the device alone:
    0.6.12-0.6.13 always run the trtllm-gen kernels (0.6.12 mla/_core.py:462-621, no
    dispatch);
    0.6.14-0.6.17 run trtllm-gen on SM10x and the packed ``sparse`` kernels on SM12x
    (0.6.14 mla/_core.py:1011-1020 ``_resolve_dsv4_sparse_mla_backend``).  A name is
    passed on as ``"auto"`` (then dropped) where the release runs that very kernel on the
    query's GPU and 0.6.18 accepts the name there (``trtllm-gen``: SM100/SM103,
    ``sparse``: SM120/SM121, 0.6.18 mla/_core.py:1044-1066); any other name, or a query
    off CUDA, stays and is refused naming 0.6.18."""

    args = ("query", "backend")
    out = ("backend",)
    boundaries = ("0.6.14", "0.6.18")

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.6.18"):
            return None
        sparse = at_least(pl, "0.6.14")

        def backend_of(query: Any, backend: Any) -> tuple[Any, ...]:
            if backend == "auto" or backend not in ("trtllm-gen", "sparse"):
                return (backend,)
            cc = _device_capability(query)
            if backend == "trtllm-gen" and cc in _DSV4_TRTLLM_GEN:
                return ("auto",)
            if backend == "sparse" and sparse and cc in _DSV4_SPARSE:
                return ("auto",)
            return (backend,)

        return backend_of

    def describe(self, p: Placement) -> str | None:
        if at_least(p, "0.6.18"):
            return None
        if at_least(p, "0.6.14"):
            return "`backend` 'trtllm-gen' (SM100/SM103) / 'sparse' (SM120/SM121) dropped"
        return "`backend` 'trtllm-gen' (SM100/SM103) dropped"


def _dsv4_devices(pl: Placement, cc: tuple[int, int]) -> str | None:
    """0.6.12-0.6.13: the trtllm-gen kernels (SM10x); 0.6.14-0.6.17: SM10x or SM12x
    (``_resolve_dsv4_sparse_mla_backend`` raises otherwise); 0.6.18-0.7.1: SM100, SM103,
    SM120, SM121; 0.7.2: also SM107 (mla/_core.py ``is_sm100_family``)."""
    if not at_least(pl, "0.6.14"):
        if cc[0] == 10:
            return None
        return "the DeepSeek V4 sparse MLA kernels (trtllm-gen) are built for SM10x only"
    if not at_least(pl, "0.6.18"):
        if cc[0] in (10, 12):
            return None
        return "the DeepSeek V4 sparse MLA decode serves SM10x (trtllm-gen) and SM12x (sparse)"
    ok = _DSV4_TRTLLM_GEN + _DSV4_SPARSE + (((10, 7),) if at_least(pl, "0.7.2") else ())
    if tuple(cc) in ok:
        return None
    return "the DeepSeek V4 sparse MLA decode serves SM100/SM103 and SM120/SM121" + (
        " (SM107 from 0.7.2)" if not at_least(pl, "0.7.2") else " and SM107"
    )


_DSV4_HCA = "HCA (backend='cute-dsl') metadata"
_DSV4_070 = "0.7.0 (trtllm-gen strided KV pools, RopeQuant epilogue)"

# trtllm_batch_decode_sparse_mla_dsv4 (0.6.12): every parameter positional-or-keyword
# and every later one appended (0.6.14 swa_topk_lens / extra_sparse_*; 0.6.18 backend and
# the hca_* metadata; 0.7.0 remapped_sparse_indices_buffer .. dsv4_output_scale and the
# keyword-only kv_cache_format; 0.7.1 sparse_topk_lens_offset,
# multi_ctas_kv_counter_buffer), so the whole list is positional.  Read from the
# releases' mla/_core.py:
# * 0.6.14 gave compressed_kv_cache / sparse_topk_lens / seq_lens the default None (the
#   SM12x sparse path needs none of them) and 0.6.18 sparse_indices (the explicit HCA
#   metadata path); before, required (:class:`RequiredBefore`).
# * backend before 0.6.18: the device picks the kernel (:class:`Dsv4BackendByDevice`).
# * 0.6.12-0.6.17 keep the multi-CTA KV counters in workspace_buffer; 0.6.18 moved them
#   to an internal buffer allocated per call, 0.7.1 lets the caller pass it
#   (multi_ctas_kv_counter_buffer, refused before 0.7.1).
DSV4 = _entry(
    "flashinfer.decode",
    "trtllm_batch_decode_sparse_mla_dsv4",
    [
        *(
            Param(n, ref="None (the SM12x sparse path) from 0.6.14; required before")
            for n in ("compressed_kv_cache", "sparse_topk_lens", "seq_lens")
        ),
        Param("sparse_indices", ref=f"None ({_DSV4_HCA}) from 0.6.18; required before"),
        *(
            Param(n, note="SM12x sparse segments", ref="0.6.14")
            for n in ("swa_topk_lens", "extra_sparse_indices", "extra_sparse_topk_lens")
        ),
        Param(
            "backend",
            value_since={"cake": "0.7.1"},
            note="kernel family",
            ref="0.6.18 (auto: trtllm-gen on SM100/SM103, sparse on SM120/SM121; "
            "cute-dsl: HCA); cake 0.7.1; before 0.6.18 the device picks the kernel",
        ),
        *(
            Param(n, note=_DSV4_HCA, ref="0.6.18")
            for n in (
                "hca_swa_indices",
                "hca_compressed_block_tables",
                "hca_seq_lens",
                "hca_is_causal",
                "hca_use_persistent",
                "hca_sparse_indices_format",
            )
        ),
        *(
            Param(n, ref=_DSV4_070)
            for n in (
                "remapped_sparse_indices_buffer",
                "sparse_indices_are_storage_offsets",
                "dsv4_inv_rope_cos_sin_cache",
                "dsv4_output_scale",
            )
        ),
        Param("sparse_topk_lens_offset", note="backend='cake' length offset", ref="0.7.1"),
        Param("multi_ctas_kv_counter_buffer", note="caller-owned KV-split counters", ref="0.7.1"),
        Param(
            "kv_cache_format",
            value_since={
                "nvfp4": "0.7.0",
                "fp8_dsv41": "0.7.1",
                "fp8_dsv41_fp4_ca": "0.7.1",
                "fp8_dsv41_inline": "0.7.4",
                "fp8_dsv41_inline_fp4_ca": "0.7.4",
            },
            note="SM12x packed cache format ('fp8', the 584-byte ABI, is the only one "
            "before 0.7.0)",
            ref="0.7.0 fp8/nvfp4; 0.7.1 fp8_dsv41*; 0.7.4 *_inline*",
        ),
    ],
    contracts={
        "query": Tensor(
            "... heads head_dim",
            rank=(3, 4),
            dtypes=("bfloat16", "float8_e4m3fn"),
            sizes={"head_dim": (512,)},
            sizes_why="DeepSeek V4 sparse MLA: every release and backend reads a 512-wide "
            "query head (mla/_core.py 'Expected query head dim 512')",
            why="every release: [batch, q_len, heads, 512] or [sum_q, heads, 512], BF16 or "
            "FP8 E4M3",
        ),
        "swa_kv_cache": Tensor(rank=(3, 4), why="every release: 3-D (HND shorthand) or 4-D"),
        "workspace_buffer": Tensor(),
        "compressed_kv_cache": Tensor(rank=(3, 4), why="every release: 3-D or 4-D"),
    },
    normalizers=(
        RequiredBefore(
            {
                "sparse_indices": ("0.6.18", "the backend='cute-dsl' HCA metadata path"),
                "compressed_kv_cache": ("0.6.14", "the SM12x sparse path"),
                "sparse_topk_lens": ("0.6.14", "the SM12x sparse path"),
                "seq_lens": ("0.6.14", "the SM12x sparse path"),
            }
        ),
        Dsv4BackendByDevice(),
    ),
    devices=_dsv4_devices,
    floor="0.6.12",
    feature="attention.trtllm",
    matrix_note="trtllm-gen: SM100/SM103 (SM107 0.7.2+); sparse (0.6.14+): SM120/SM121",
)

DECODE_SPECS = {e.name: e for e in (DECODE, MLA, XQA, DSV4)}
PREFILL_SPECS = {CONTEXT.name: CONTEXT, RAGGED.name: RAGGED, FMHA_V2.name: FMHA_V2}
