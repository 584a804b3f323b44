"""Call cases of the attention kernels outside the wrappers:
``fi_compat.decode.xqa_batch_decode_with_kv_cache`` (0.5.0+),
``fi_compat.prefill.trtllm_fmha_v2_prefill`` (0.6.7+) and
``fi_compat.prefill.cudnn_batch_prefill_with_kv_cache`` (0.2.7.post1+), shared by the
static suite (every release of each, spy bound to the snapshot signature) and the live
contract (spy bound to ``inspect.signature`` of the installed function).

The engine calls are the engines' own (``engine-usage.md`` call sites): vLLM/aphrodite's
ViT cuDNN wrapper (five positional, keywords after; ``causal=False, return_lse=False``),
SGLang's / FlashInfer's cuDNN prefill wrapper call (keywords, ``return_lse``),
SGLang's FMHA v2 paged call (all keywords), and the positional xqa calls of FlashInfer's
own decode test and an engine's decode route (``q, pools, workspace, block_tables,
seq_lens, longest, bmm1, bmm2, **extra``)."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import decode, errors, prefill
from fi_compat._adapters import cudnn as cudnn_adapter
from fi_compat._adapters.cudnn import CUDNN, LOG2E
from fi_compat._adapters.trtllm_attention import FMHA_V2, XQA
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

SPECS = {e.name: e for e in (XQA, FMHA_V2, CUDNN)}
MODULES = {XQA.name: decode, FMHA_V2.name: prefill, CUDNN.name: prefill}
B, HQ, HKV, D, PAGE = 2, 4, 2, 128, 16
TQ = 6  # query tokens of the prefill batch: lengths 2 and 4


class KernelSpy(BindSpy):
    """FlashInfer's result shape: xqa ``out``; FMHA v2 ``out``; cuDNN ``(out, lse)``
    with ``lse`` allocated as the release does where the call leaves it out (filled
    with 1.0, so a conversion is visible)."""

    def __init__(self, name: str, release: str, signature: Any = None) -> None:
        super().__init__(signature or snapshot_signature(release, SPECS[name]))
        self.name = name

    def result(self, a: dict[str, Any]) -> Any:
        if self.name == XQA.name:
            return a["out"] if a["out"] is not None else torch.zeros_like(a["query"])
        if self.name == FMHA_V2.name:
            return a["out"] if a["out"] is not None else torch.zeros(TQ, HQ, D)
        out = a["out"] if a["out"] is not None else torch.zeros(TQ, HQ, D)
        if not a["return_lse"]:
            return out, None
        lse = a["lse"] if a["lse"] is not None else torch.ones(TQ, HQ)
        return out, lse


def releases(name: str) -> list[str]:
    e = SPECS[name]
    rel = snapshots.load(e)["releases"]
    return [r for r, v in rel.items() if v is not None and at_least(place(r), e.since)]


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, KernelSpy]:
    a = SPECS[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(MODULES[name], name))
    spy = KernelSpy(name, release, signature)
    a._set_target(spy)
    return f, spy


def _i32(*v: int) -> torch.Tensor:
    return torch.tensor(v, dtype=torch.int32)


def args(name: str) -> dict[str, Any]:
    bf16 = torch.bfloat16
    if name == XQA.name:
        return {
            "query": torch.randn(B, HQ, D).to(bf16),
            "kv_cache": torch.zeros(4, 2, PAGE, HKV, D, dtype=bf16),
            "workspace_buffer": torch.zeros(1024, dtype=torch.uint8),
            "block_tables": _i32(0, 1, 2, 3).view(B, 2),
            "seq_lens": _i32(20, 32),
            "max_seq_len": 32,
        }
    if name == FMHA_V2.name:
        return {
            "qkv": (torch.randn(TQ, HQ, D).to(bf16), torch.zeros(4, 2, HKV, PAGE, D, dtype=bf16)),
            "input_layout": "Q_PAGED_KV_HND",
            "workspace_buffer": torch.zeros(1024, dtype=torch.uint8),
            "seq_lens": _i32(2, 4),
            "max_q_len": 4,
            "max_kv_len": 4,
            "bmm1_scale": D**-0.5,
            "bmm2_scale": 1.0,
            "batch_size": B,
            "cum_seq_lens_q": _i32(0, 2, 6),
            "cum_seq_lens_kv": _i32(0, 2, 6),
        }
    return {
        "q": torch.randn(TQ, HQ, D).to(bf16),
        "k_cache": torch.zeros(4, HKV, PAGE, D, dtype=bf16),
        "v_cache": torch.zeros(4, HKV, PAGE, D, dtype=bf16),
        "scale": D**-0.5,
        "workspace_buffer": torch.zeros(1024, dtype=torch.uint8),
        "max_token_per_sequence": 4,
        "max_sequence_kv": 32,
        "actual_seq_lens_q": _i32(2, 4).view(B, 1, 1, 1),
        "actual_seq_lens_kv": _i32(20, 32).view(B, 1, 1, 1),
        "block_tables": _i32(0, 1, 2, 3).view(B, 2),
        "causal": True,
        "return_lse": True,
        "batch_offsets_q": _i32(0, 2, 6) * HQ * D,
        "batch_offsets_o": _i32(0, 2, 6) * HQ * D,
    }


def _refused(since: str) -> Any:
    return pytest.raises(errors.UnsupportedParameterError, match=since.replace(".", r"\."))


def _graph(on: bool) -> Any:
    """The release's ``CUDNN_AVAILABLE`` as the adapter reads it (the module is not
    imported in the static suite)."""
    return mock.patch.object(cudnn_adapter, "cudnn_graph_available", lambda: on)


# xqa_batch_decode_with_kv_cache ---------------------------------------------------------


def case_xqa_positional_calls_bind_the_same_names(name: str, release: str, sig: Any = None) -> None:
    """FlashInfer's own decode test (``..., bmm1, bmm2, window_left, out=, enable_pdl=,
    sinks=, kv_layout=, q_len_per_req=``) and an engine's route (eight positional,
    ``**extra``) reach the same parameters on every release; the scales, required
    before 0.5.3, are always sent."""
    kw = args(name)
    f, spy = facade(name, release, sig)
    out = torch.empty_like(kw["query"])
    assert f(*kw.values(), 0.1, 2.0, 7, out=out, enable_pdl=False, kv_layout="HND") is out
    sent = spy.last
    assert (sent["bmm1_scale"], sent["bmm2_scale"], sent["window_left"]) == (0.1, 2.0, 7)
    assert sent["out"] is out and sent["kv_layout"] == "HND" and sent["enable_pdl"] is False
    f(*kw.values(), 0.1, 1.0, window_left=127, sinks=torch.zeros(HQ))
    assert spy.last["window_left"] == 127 and spy.last["sinks"] is not None
    f(**kw)  # scales left out: 1.0 sent (0.5.0-0.5.2 have no default)
    assert spy.raw_kwargs[-1]["bmm1_scale"] == 1.0 and spy.raw_kwargs[-1]["bmm2_scale"] == 1.0
    f(*kw.values(), 1.0, 1.0, -1, None, None, "NHD", None, 1)  # 14 slots, every release
    assert spy.last["q_len_per_req"] == 1 and spy.last["kv_layout"] == "NHD"


def case_xqa_options_of_newer_releases(name: str, release: str, sig: Any = None) -> None:
    """Speculative ``q_len_per_req`` needs 0.6.0 (``assert q_len_per_req == 1`` before),
    NVFP4 ``kv_cache_sf`` 0.6.14 (0.6.7-0.6.13 scale q by the packed head size), and
    the appended options their first release; the defaults pass everywhere."""
    kw = args(name)
    p = place(release)
    rows: list[tuple[str, Any, str]] = [
        ("q_len_per_req", 2, "0.6.0"),
        ("o_scale", 0.5, "0.5.3"),
        ("mask", torch.ones(B, 1, dtype=torch.bool), "0.6.0"),
        ("kv_cache_sf", torch.zeros(4, 2, PAGE, HKV, D // 16, dtype=torch.uint8), "0.6.14"),
        ("q_cu_seq_lens", _i32(0, 1, 2), "0.6.16"),
    ]
    for opt, value, since in rows:
        f, spy = facade(name, release, sig)
        if at_least(p, since):
            f(**kw, **{opt: value})
            assert spy.last[opt] is value
        else:
            with _refused(since):
                f(**kw, **{opt: value})
            assert spy.calls == []
    f, spy = facade(name, release, sig)
    f(**kw, q_len_per_req=1, o_scale=1.0, mask=None, kv_cache_sf=None)
    assert len(spy.calls) == 1


# trtllm_fmha_v2_prefill -----------------------------------------------------------------


def case_fmha_v2_sglang_paged_call(name: str, release: str, sig: Any = None) -> None:
    """SGLang's ``trtllm_mha_backend`` call (every argument by keyword, paged HND
    pool, ``out_dtype``, ``mask_mode="causal"``) and the same call positionally reach
    the same parameters on every release."""
    kw = args(name)
    f, spy = facade(name, release, sig)
    f(**kw, block_tables=_i32(0, 1, 2, 3).view(B, 2), out_dtype=torch.bfloat16)
    first = dict(spy.last)
    assert first["mask_mode"] == "causal" and first["out_dtype"] is torch.bfloat16
    f(*kw.values(), _i32(0, 1, 2, 3).view(B, 2), None, torch.bfloat16)
    second = spy.last
    assert all(second[k] is first[k] for k in kw if k != "qkv") and second["qkv"] is kw["qkv"]
    f(*kw.values(), None, None, None, None, None, None, "padding", -1, 0, True, 0.0)
    assert spy.last["save_softmax_stats"] is True and spy.last["mask_mode"] == "padding"


def case_fmha_v2_separate_paged_pair(name: str, release: str, sig: Any = None) -> None:
    """``(query, (k_cache, v_cache))`` with ``[B, 2, M]`` block tables needs 0.6.18."""
    kw = args(name)
    q = kw["qkv"][0]
    pool = torch.zeros(8, HKV, PAGE, D, dtype=torch.bfloat16)
    call = {**kw, "qkv": (q, (pool[:4], pool[4:])), "block_tables": _i32(*range(8)).view(B, 2, 2)}
    f, spy = facade(name, release, sig)
    if at_least(place(release), "0.6.18"):
        f(**call)
        assert spy.last["qkv"] is call["qkv"]
    else:
        with _refused("0.6.18"):
            f(**call)
        assert spy.calls == []


# cudnn_batch_prefill_with_kv_cache ------------------------------------------------------


def _cudnn_vit_call(f: Any, kw: dict[str, Any]) -> Any:
    """vLLM / aphrodite ``vit_attn_wrappers.py``: five positional, keywords after."""
    return f(
        kw["q"],
        kw["k_cache"],
        kw["v_cache"],
        kw["scale"],
        kw["workspace_buffer"],
        max_token_per_sequence=4,
        max_sequence_kv=4,
        actual_seq_lens_q=kw["actual_seq_lens_q"],
        actual_seq_lens_kv=kw["actual_seq_lens_q"],
        causal=False,
        return_lse=False,
        batch_offsets_q=kw["batch_offsets_q"],
        batch_offsets_o=kw["batch_offsets_o"],
        batch_offsets_k=kw["batch_offsets_q"],
        batch_offsets_v=kw["batch_offsets_q"],
    )


def case_cudnn_engine_calls(name: str, release: str, sig: Any = None) -> None:
    """The ViT call (non-causal, no LSE) needs 0.2.8 (``assert causal``) and 0.2.9
    (``assert return_lse`` on 0.2.7.post1-0.2.8's cubin-only path); the wrapper-style
    paged call (keywords, ``return_lse=True``) binds on every release; scale and
    workspace are FlashInfer's positional slots 4 and 5 everywhere."""
    kw = args(name)
    p = place(release)
    f, spy = facade(name, release, sig)
    if not at_least(p, "0.2.8"):
        with _refused("0.2.8"):
            _cudnn_vit_call(f, kw)
    elif not at_least(p, "0.2.9"):
        with _refused("0.2.9"):
            _cudnn_vit_call(f, kw)
    else:
        _out, lse = _cudnn_vit_call(f, kw)
        assert lse is None and spy.last["causal"] is False and spy.last["return_lse"] is False
        assert spy.positional[-1] == ("q", "k_cache", "v_cache", "scale", "workspace_buffer")
    f, spy = facade(name, release, sig)
    _out, lse = f(*list(kw.values())[:5], **dict(list(kw.items())[5:]))
    assert spy.last["scale"] == D**-0.5 and spy.last["block_tables"] is kw["block_tables"]
    assert spy.last["actual_seq_lens_q"] is kw["actual_seq_lens_q"] and lse is not None


def case_cudnn_lse_is_base_2_on_every_release(name: str, release: str, sig: Any = None) -> None:
    """The graph path's natural-log stats are multiplied by log2(e) before 0.7.0 (as
    0.7.0 does); from 0.7.0 and on the cubin path the release's LSE is returned as it
    is.  ``lse_base="ln"`` needs 0.7.1."""
    kw = args(name)
    p = place(release)
    for graph, backend in ((True, None), (True, "cubin"), (False, None)):
        if backend is not None and not at_least(p, "0.2.9"):
            continue
        f, _spy = facade(name, release, sig)
        extra = {"backend": backend} if backend else {}
        with _graph(graph):
            _out, lse = f(**kw, lse=torch.ones(B, 4, HQ), **extra)
        converted = graph and backend is None and at_least(p, "0.2.9") and not at_least(p, "0.7.0")
        assert torch.equal(lse, torch.full((B, 4, HQ), LOG2E if converted else 1.0)), (
            graph,
            backend,
        )
    f, spy = facade(name, release, sig)
    if at_least(p, "0.7.1"):
        f(**kw, lse_base="ln")
        assert spy.last["lse_base"] == "ln"
    else:
        with _refused("0.7.1"):
            f(**kw, lse_base="ln")


def case_cudnn_lse_left_out_is_padded(name: str, release: str, sig: Any = None) -> None:
    """``lse=None``: 0.7.4 is handed the padded buffer every other release allocates
    (0.7.4's graph path would allocate it packed); a caller's buffer passes as given."""
    kw = args(name)
    f, spy = facade(name, release, sig)
    with _graph(True):
        f(**kw)
    lse = spy.raw_kwargs[-1].get("lse")
    if at_least(place(release), "0.7.4"):
        assert lse is not None and tuple(lse.shape) == (B, 4, HQ) and lse.dtype == torch.float32
    else:
        assert lse is None
    packed = torch.empty(TQ, HQ)
    f(**kw, lse=packed)
    assert spy.raw_kwargs[-1]["lse"] is packed
    if at_least(place(release), "0.2.9"):  # ragged stats offsets address a packed buffer
        f(**kw, batch_offsets_stats=_i32(0, 2, 6) * HQ)
        assert spy.raw_kwargs[-1].get("lse") is None


def case_cudnn_batch_without_offsets(name: str, release: str, sig: Any = None) -> None:
    """A batch of two without ``batch_offsets_q`` / ``batch_offsets_o`` on the graph path
    is refused on every release (0.6.16 raises, 0.2.9-0.6.15 return wrong rows); one
    request, the cubin path, or a release without the graph path pass."""
    kw = args(name)
    bare = {k: v for k, v in kw.items() if not k.startswith("batch_offsets")}
    f, spy = facade(name, release, sig)
    with _graph(True):
        if at_least(place(release), "0.2.9"):
            with pytest.raises(errors.InvalidArgumentError, match="batch_offsets_q"):
                f(**bare)
            f(**bare, backend="cubin")
            one = {**bare, "actual_seq_lens_q": _i32(2).view(1, 1, 1, 1)}
            f(**{**one, "actual_seq_lens_kv": _i32(20).view(1, 1, 1, 1)})
            assert len(spy.calls) == 2
        else:
            f(**bare)
            assert len(spy.calls) == 1


def case_cudnn_scales_and_dtypes(name: str, release: str, sig: Any = None) -> None:
    """``q_scale`` (0.6.0) with a bf16 query: ignored before 0.7.4 and on the cubin
    path, so refused there naming 0.7.4; a Python float needs 0.7.4; an fp16 query on
    the graph path needs 0.6.0 (0.2.9-0.5.3 declare bfloat16)."""
    kw = args(name)
    p = place(release)
    scale = torch.ones(1)
    f, spy = facade(name, release, sig)
    with _graph(True):
        if not at_least(p, "0.6.0"):
            with _refused("0.6.0"):
                f(**kw, q_scale=scale)
        elif at_least(p, "0.7.4"):
            f(**kw, q_scale=scale, v_scale=0.5)
            assert spy.last["q_scale"] is scale and spy.last["v_scale"] == 0.5
            with _refused("0.7.4"):
                f(**kw, q_scale=scale, backend="cubin")
        else:
            with _refused("0.7.4"):
                f(**kw, q_scale=scale)
            with _refused("0.7.4"):
                f(**kw, k_scale=0.5)
        fp16 = {**kw, "q": kw["q"].half(), "k_cache": kw["k_cache"].half()}
        fp16["v_cache"] = kw["v_cache"].half()
        if at_least(p, "0.2.9") and not at_least(p, "0.6.0"):
            with _refused("0.6.0"):
                f(**fp16)
        else:
            f(**fp16)
            assert spy.last["q"].dtype == torch.float16


def case_cudnn_lengths_from_offsets(name: str, release: str, sig: Any = None) -> None:
    """Lengths left out (token-unit offsets, ``batch_offsets_units="tokens"``) need
    0.6.16; before it they are required (refused, naming 0.6.16)."""
    kw = args(name)
    call = {k: v for k, v in kw.items() if k not in ("actual_seq_lens_q", "actual_seq_lens_kv")}
    call.update(batch_offsets_q=_i32(0, 2, 6), batch_offsets_o=_i32(0, 2, 6), block_tables=None)
    call.update(batch_offsets_k=_i32(0, 20, 52), k_cache=torch.zeros(52, HKV, D).bfloat16())
    call["v_cache"] = call["k_cache"]
    f, spy = facade(name, release, sig)
    if at_least(place(release), "0.6.16"):
        f(**call, batch_offsets_units="tokens")
        assert spy.last["actual_seq_lens_q"] is None and spy.last["batch_offsets_units"] == "tokens"
    else:
        with _refused("0.6.16"):
            f(**call)


CASES: dict[str, list[Any]] = {
    XQA.name: [case_xqa_positional_calls_bind_the_same_names, case_xqa_options_of_newer_releases],
    FMHA_V2.name: [case_fmha_v2_sglang_paged_call, case_fmha_v2_separate_paged_pair],
    CUDNN.name: [
        case_cudnn_engine_calls,
        case_cudnn_lse_is_base_2_on_every_release,
        case_cudnn_lse_left_out_is_padded,
        case_cudnn_batch_without_offsets,
        case_cudnn_scales_and_dtypes,
        case_cudnn_lengths_from_offsets,
    ],
}
