"""Call cases of ``fi_compat.decode.trtllm_batch_decode_sparse_mla_dsv4`` (0.6.12+), shared
by the static suite (every release, spy bound to the snapshot signature) and the live
contract (spy bound to ``inspect.signature`` of the installed function).

The engine calls are vLLM's (``vllm/models/deepseek_v4/nvidia/flashinfer_sparse.py``,
``engine-usage.md``): every argument by keyword, SM100 trtllm-gen route (the combined
sparse table, ``sparse_topk_lens``, ``seq_lens``, ``kv_layout="HND"``, ragged or dense
query), and the SM12x packed route of FlashInfer's own benchmarks (``sparse_indices`` +
``swa_topk_lens``, no compressed pool)."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import decode, errors
from fi_compat._adapters import trtllm_attention
from fi_compat._adapters.trtllm_attention import DSV4
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

SPECS = {DSV4.name: DSV4}
B, Q, H, D, PAGES, PAGE, TOPK = 2, 1, 64, 512, 4, 64, 256


class Dsv4Spy(BindSpy):
    """FlashInfer's result: ``out`` (BF16, the query's shape) or a new one."""

    def __init__(self, release: str, signature: Any = None) -> None:
        super().__init__(signature or snapshot_signature(release, DSV4))

    def result(self, a: dict[str, Any]) -> Any:
        if a["out"] is not None:
            return a["out"]
        return torch.zeros(a["query"].shape, dtype=torch.bfloat16)


def releases(name: str = DSV4.name) -> list[str]:
    rel = snapshots.load(DSV4)["releases"]
    return [r for r, v in rel.items() if v is not None and at_least(place(r), DSV4.since)]


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, Dsv4Spy]:
    a = DSV4.select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(decode, name))
    spy = Dsv4Spy(release, signature)
    a._set_target(spy)
    return f, spy


def _i32(*v: int) -> torch.Tensor:
    return torch.tensor(v, dtype=torch.int32)


def args(name: str = DSV4.name) -> dict[str, Any]:
    """vLLM's SM100 decode call (dense ``[B, 1, H, 512]`` query)."""
    bf16 = torch.bfloat16
    return {
        "query": torch.zeros(B, Q, H, D, dtype=bf16),
        "swa_kv_cache": torch.zeros(PAGES, 1, PAGE, D, dtype=bf16),
        "workspace_buffer": torch.zeros(1024, dtype=torch.uint8),
        "sparse_indices": torch.zeros(B * Q, TOPK, dtype=torch.int32),
        "compressed_kv_cache": torch.zeros(PAGES, 1, PAGE, D, dtype=bf16),
        "sparse_topk_lens": torch.full((B * Q,), TOPK, dtype=torch.int32),
        "seq_lens": _i32(100, 200),
    }


def _refused(since: str) -> Any:
    return pytest.raises(errors.UnsupportedParameterError, match=since.replace(".", r"\."))


def _gpu(cc: tuple[int, int] | None) -> Any:
    """The query's GPU as :class:`Dsv4BackendByDevice` reads it (CPU tensors here)."""
    return mock.patch.object(trtllm_attention, "_device_capability", lambda t: cc)


def case_vllm_keyword_call(name: str, release: str, sig: Any = None) -> None:
    """vLLM's call (every argument by keyword, scales, sinks, ``kv_layout="HND"``) and
    the same call positionally reach the same parameters on every release; the
    options appended later are left out of the call at their defaults."""
    kw = args(name)
    f, spy = facade(name, release, sig)
    sinks = torch.zeros(H, dtype=torch.float32)
    out = torch.empty(B, Q, H, D, dtype=torch.bfloat16)
    call = {**kw, "bmm1_scale": 0.04, "bmm2_scale": 1.0, "sinks": sinks, "kv_layout": "HND"}
    assert f(**call, out=out) is out
    first = dict(spy.last)
    assert first["sinks"] is sinks and first["bmm1_scale"] == 0.04 and first["out"] is out
    assert all(first[k] is v for k, v in kw.items())
    values = list(kw.values())
    assert f(*values, out, 0.04, 1.0, sinks, "HND") is out
    assert all(spy.last[k] is first[k] for k in first)
    # ragged query: cum_seq_lens_q / max_q_len (slots 13 and 14 on every release)
    ragged = {**kw, "query": torch.zeros(B * 2, H, D, dtype=torch.bfloat16)}
    f(**ragged, cum_seq_lens_q=_i32(0, 2, 4), max_q_len=2, enable_pdl=True)
    assert spy.last["max_q_len"] == 2 and spy.last["enable_pdl"] is True
    assert set(spy.raw_kwargs[-1]) <= set(kw) | {
        "out",
        "bmm1_scale",
        "bmm2_scale",
        "sinks",
        "kv_layout",
        "cum_seq_lens_q",
        "max_q_len",
        "enable_pdl",
    }


def case_tables_left_out(name: str, release: str, sig: Any = None) -> None:
    """``compressed_kv_cache`` / ``sparse_topk_lens`` / ``seq_lens`` left out (the SM12x
    packed route, FlashInfer's own benchmark call) need 0.6.14 and ``sparse_indices``
    left out (HCA metadata) 0.6.18: required before, refused naming the release."""
    kw = args(name)
    p = place(release)
    sm12x = {
        "query": kw["query"],
        "swa_kv_cache": torch.zeros(PAGES, PAGE, 1, 584, dtype=torch.uint8),
        "workspace_buffer": kw["workspace_buffer"],
        "sparse_indices": kw["sparse_indices"][:, :128],
        "swa_topk_lens": torch.full((B * Q,), 128, dtype=torch.int32),
        "kv_layout": "NHD",
    }
    f, spy = facade(name, release, sig)
    if at_least(p, "0.6.14"):
        f(**sm12x)
        assert spy.last["compressed_kv_cache"] is None and spy.last["seq_lens"] is None
        assert spy.last["swa_topk_lens"] is sm12x["swa_topk_lens"]
    else:
        with _refused("0.6.14"):
            f(**sm12x)
        with _refused("0.6.14"):
            f(**{k: v for k, v in kw.items() if k != "seq_lens"})
        assert spy.calls == []
    no_table = {k: v for k, v in kw.items() if k != "sparse_indices"}
    f, spy = facade(name, release, sig)
    if at_least(p, "0.6.18"):
        f(**no_table, backend="cute-dsl")
        assert spy.last["sparse_indices"] is None and spy.last["backend"] == "cute-dsl"
    else:
        with _refused("0.6.18"):
            f(**no_table)
        assert spy.calls == []


def case_backend_before_0_6_18(name: str, release: str, sig: Any = None) -> None:
    """``backend`` (0.6.18): before it the GPU picks the kernel, so ``"trtllm-gen"`` on
    SM100/SM103 and ``"sparse"`` on SM120/SM121 (0.6.14+) name what the release runs and
    are dropped; any other GPU or name is refused naming 0.6.18 (``"cake"``: 0.7.1,
    its own first release)."""
    kw = args(name)
    p = place(release)
    for cc, backend, served in (
        ((10, 0), "trtllm-gen", True),
        ((10, 3), "trtllm-gen", True),
        ((12, 0), "sparse", at_least(p, "0.6.14")),
        ((12, 1), "trtllm-gen", False),
        ((10, 0), "sparse", False),
        ((10, 0), "cute-dsl", False),
        (None, "trtllm-gen", False),
    ):
        f, spy = facade(name, release, sig)
        with _gpu(cc):
            if at_least(p, "0.6.18"):
                f(**kw, backend=backend)
                assert spy.last["backend"] == backend
            elif served:
                f(**kw, backend=backend)
                assert "backend" not in spy.last
            else:
                with _refused("0.6.18"):
                    f(**kw, backend=backend)
                assert spy.calls == []
    f, spy = facade(name, release, sig)
    if at_least(p, "0.7.1"):
        f(**kw, backend="cake")
        assert spy.last["backend"] == "cake"
    else:
        with _refused("0.7.1"):
            f(**kw, backend="cake")


def case_options_of_newer_releases(name: str, release: str, sig: Any = None) -> None:
    """The options appended later need their first release; the defaults pass
    everywhere; ``kv_cache_format`` values need theirs."""
    kw = args(name)
    p = place(release)
    t = torch.zeros(B * Q, dtype=torch.int32)
    rows: list[tuple[str, Any, str]] = [
        ("swa_topk_lens", t, "0.6.14"),
        ("extra_sparse_indices", torch.zeros(B * Q, 64, dtype=torch.int32), "0.6.14"),
        ("hca_seq_lens", t, "0.6.18"),
        ("hca_is_causal", False, "0.6.18"),
        ("hca_use_persistent", True, "0.6.18"),
        ("hca_sparse_indices_format", "compressed-page-aligned", "0.6.18"),
        ("sparse_indices_are_storage_offsets", True, "0.7.0"),
        ("dsv4_inv_rope_cos_sin_cache", torch.zeros(4096, 64), "0.7.0"),
        ("sparse_topk_lens_offset", 128, "0.7.1"),
        ("multi_ctas_kv_counter_buffer", torch.zeros(64, dtype=torch.uint8), "0.7.1"),
        ("kv_cache_format", "nvfp4", "0.7.0"),
        ("kv_cache_format", "fp8_dsv41", "0.7.1"),
        ("kv_cache_format", "fp8_dsv41_inline", "0.7.4"),
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
    f(
        **kw,
        swa_topk_lens=None,
        backend="auto",
        hca_is_causal=True,
        hca_use_persistent=False,
        sparse_topk_lens_offset=0,
        kv_cache_format="fp8",
    )
    assert len(spy.calls) == 1


def case_query_contract(name: str, release: str, sig: Any = None) -> None:
    """A query that no release reads (not 512 wide, 2-D, float16) is refused before
    the call on every release."""
    kw = args(name)
    f, spy = facade(name, release, sig)
    for bad in (
        torch.zeros(B, Q, H, 576, dtype=torch.bfloat16),
        torch.zeros(B, D, dtype=torch.bfloat16),
        torch.zeros(B, Q, H, D, dtype=torch.float16),
    ):
        with pytest.raises(errors.InvalidArgumentError, match="query"):
            f(**{**kw, "query": bad})
    assert spy.calls == []
    f(**{**kw, "query": kw["query"].to(torch.float8_e4m3fn)})
    assert len(spy.calls) == 1


CASES: dict[str, list[Any]] = {
    DSV4.name: [
        case_vllm_keyword_call,
        case_tables_left_out,
        case_backend_before_0_6_18,
        case_options_of_newer_releases,
        case_query_contract,
    ],
}
