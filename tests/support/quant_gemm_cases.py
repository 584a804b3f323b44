"""Call cases of ``fi_compat.quantization`` and ``fi_compat.gemm``, shared by the static
suite (every release, spy bound to the snapshot signature) and the live contract (spy
bound to ``inspect.signature`` of the installed function).  The spy returns what the
kernels return in shape and dtype: ``(packed uint8, scales uint8)`` for the quantisers
(``float8_e4m3fn`` values for MXFP8), a float32 ``[M, K]`` for the dequantiser, the
product's shape in the requested dtype for the GEMMs."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import enums, errors, gemm, quantization
from fi_compat._adapters.gemm import SPECS as GEMM
from fi_compat._adapters.quantization import SPECS as QUANT
from fi_compat._device import assume_capability
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

SPECS = {**QUANT, **GEMM}
M, K, N = 8, 64, 32


def releases(name: str) -> list[str]:
    e = SPECS[name]
    rel = snapshots.load(e)["releases"]
    return [r for r, v in rel.items() if v is not None and at_least(place(r), e.since)]


class KernelSpy(BindSpy):
    def __init__(self, name: str, signature: Any) -> None:
        super().__init__(signature)
        self.name = name

    def result(self, a: dict[str, Any]) -> Any:
        n = self.name
        if n == "block_scale_interleave":
            y = a["unswizzled_sf"] + 1  # a stand-in for the swizzle
            return y if a.get("out") is None else a["out"].copy_(y)  # 0.7.2.post1+ out=
        if n == "e2m1_and_ufp8sf_scale_to_float":
            x = a["e2m1_tensor"]
            return torch.zeros(x.shape[0], x.shape[1] * 2)
        if n == "nvfp4_kv_dequantize":
            d = a["fp4_data"]
            return torch.zeros(d.shape[0], d.shape[1] * 2, dtype=a["output_dtype"])
        if n in QUANT:
            x = next(iter(a.values()))
            if n == "mxfp8_quantize":
                return x.to(torch.float8_e4m3fn), torch.zeros(M * K // 32, dtype=torch.uint8)
            return torch.zeros(*x.shape[:-1], x.shape[-1] // 2, dtype=torch.uint8), torch.zeros(
                M, K // 16, dtype=torch.uint8
            )
        if n == "bmm_fp8":
            return torch.zeros(a["A"].shape[0], a["A"].shape[1], a["B"].shape[2])
        if n == "tinygemm_bf16":
            return None  # in place
        if n == "prepare_bf16_fp4_weights":
            return a["b"], a["b_descale"], a["alpha"]
        if n == "fp8_blockscale_gemm_sm90":
            return torch.zeros(a["input"].shape[0], N, dtype=torch.bfloat16)
        return torch.zeros(a["a"].shape[0], N, dtype=torch.bfloat16)


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, KernelSpy, Any]:
    e = SPECS[name]
    a = e.select(Distribution("flashinfer-python", release, "<test>", ""))
    mod = quantization if name in QUANT else gemm
    f = a.build(stub(mod, name))
    spy = KernelSpy(name, signature or snapshot_signature(release, e))
    a._set_target(spy)
    return f, spy, a


def args(name: str) -> dict[str, Any]:
    x = torch.randn(M, K).to(torch.bfloat16)
    gs = torch.tensor([448.0 * 6 / 3.0])
    if name == "fp4_quantize":
        return {"input": x, "global_scale": gs}
    if name == "nvfp4_quantize":
        return {"a": x, "a_global_sf": gs}
    if name == "mxfp4_quantize":
        return {"a": x}
    if name == "nvfp4_kv_quantize":
        return {"input": x, "global_scale": gs}
    if name == "nvfp4_kv_dequantize":
        return {
            "fp4_data": torch.zeros(M, K // 2, dtype=torch.uint8),
            "block_scales": torch.zeros(M, K // 16, dtype=torch.uint8),
            "global_scale": gs,
        }
    if name == "mxfp8_quantize":
        return {"input": x}
    if name == "block_scale_interleave":
        return {"unswizzled_sf": torch.arange(M * K // 16, dtype=torch.uint8).view(M, -1)}
    if name == "e2m1_and_ufp8sf_scale_to_float":
        return {
            "e2m1_tensor": torch.zeros(M, K // 2, dtype=torch.uint8),
            "ufp8_scale_tensor": torch.zeros(M * K // 16, dtype=torch.uint8),
        }
    if name == "bmm_fp8":
        b = torch.randn(2, N, K).to(torch.float8_e4m3fn).transpose(-2, -1)  # column-major
        return {
            "A": torch.randn(2, M, K).to(torch.float8_e4m3fn),
            "B": b,
            "A_scale": torch.tensor([1.0]),
            "B_scale": torch.tensor([1.0]),
            "dtype": torch.bfloat16,
        }
    a8 = torch.randn(M, K).to(torch.float8_e4m3fn)
    if name == "mm_mxfp8":  # 1-D 128x4-swizzled e8m0 scales: round_up(rows, 128) * 4 bytes
        return {
            "a": a8,
            "b": torch.randn(N, K).to(torch.float8_e4m3fn).T,
            "a_descale": torch.zeros(128 * 4, dtype=torch.uint8),
            "b_descale": torch.zeros(128 * 4, dtype=torch.uint8),
        }
    if name == "fp8_blockscale_gemm_sm90":
        return {"input": x, "weight": torch.randn(N, K).to(torch.bfloat16)}
    if name == "gemm_fp8_nt_groupwise":
        return {
            "a": a8,
            "b": torch.randn(N, K).to(torch.float8_e4m3fn),
            "a_scale": torch.ones(1, M),
            "b_scale": torch.ones(1, 1),
            "scale_major_mode": "MN",
        }
    if name == "tinygemm_bf16":
        return {
            "input": x,
            "weight": torch.randn(N, K).to(torch.bfloat16),
            "out": torch.empty(M, N, dtype=torch.bfloat16),
        }
    if name == "mm_bf16_fp4":
        return {
            "a": x,
            "b": torch.zeros(N, K // 2, dtype=torch.uint8),
            "b_descale": torch.zeros(128 * 4, dtype=torch.uint8),
            "backend": "cudnn",
        }
    if name == "prepare_bf16_fp4_weights":
        return {
            "b": torch.zeros(N, K // 2, dtype=torch.uint8),
            "b_descale": torch.zeros(128 * 4, dtype=torch.uint8),
            "backend": "cudnn",
        }
    if name == "mm_fp8":
        return {"a": a8, "b": torch.randn(N, K).to(torch.float8_e4m3fn)}
    if name == "mm_fp4":
        u8 = torch.zeros(M, K // 2, dtype=torch.uint8)
        return {
            "a": u8,
            "b": torch.zeros(N, K // 2, dtype=torch.uint8).T,
            "a_descale": torch.zeros(M, K // 16, dtype=torch.uint8),
            "b_descale": torch.zeros(N, K // 16, dtype=torch.uint8).T,
        }
    return {"a": x, "b": torch.randn(N, K).to(torch.bfloat16).T}


def _has(release: str, name: str, param: str) -> bool:
    return param in {p[0] for p in snapshots.params(SPECS[name], release) or []}


def case_calls_bind_by_keyword(name: str, release: str, sig: Any = None) -> None:
    kw = args(name)
    f, spy, _ = facade(name, release, sig)
    f(**kw)  # the first call binds torch into the generated code (the general path)
    f(**kw)
    params = SPECS[name].params
    f(
        *(v for n, v in kw.items() if not params[n].keyword_only),
        **{n: v for n, v in kw.items() if params[n].keyword_only},
    )
    assert spy.raw_kwargs[1].keys() == spy.raw_kwargs[2].keys()
    for n, v in kw.items():
        if isinstance(v, torch.Tensor):
            assert spy.last[n] is v, n  # conforming: passed as they are
    if "backend" in SPECS[name].params and _has(release, name, "backend"):
        sent = spy.raw_kwargs[-1].get("backend")
        default = SPECS[name].params["backend"].default
        if default == "auto" and name in QUANT and not at_least(place(release), "0.7.4"):
            assert sent in (None, "cuda")  # the release's default, or auto resolved to it
        elif name == "mm_fp4" and not at_least(place(release), "0.6.0"):
            assert sent == "cudnn"  # auto is 0.6.0+; 0.2.9-0.5.3's default
        elif SPECS[name].params["backend"].explicit:
            assert sent == default


def case_gpus_by_release(name: str, release: str, sig: Any = None) -> None:
    """SM90 refused before any launch where the release has no SM90 kernel; SM100 (and
    SM90 for the cuBLAS GEMMs) served."""
    e = SPECS[name]
    if e.devices is None:
        return
    _, _, a = facade(name, release, sig)
    host = e.host_tensors  # True, or (the first release without the host path, why)
    if host is True or (isinstance(host, tuple) and not at_least(place(release), host[0])):
        a.check_device(-1)  # a CPU tensor is served (host code), also without allow_cpu
    pl = place(release)
    sm90 = {
        "bmm_fp8": True,
        "mm_fp8": at_least(pl, "0.7.2.post1"),
        "mm_bf16": at_least(pl, "0.6.8"),
        "block_scale_interleave": at_least(pl, "0.2.13"),  # 0.2.9-0.2.12: an SM100 module
        "fp8_blockscale_gemm_sm90": True,
        "tinygemm_bf16": True,
        "nvfp4_kv_dequantize": True,  # SM80+ (FlashInfer's own capability list)
    }.get(name, False)
    with assume_capability((10, 0)):
        if name == "fp8_blockscale_gemm_sm90":  # Hopper only, on every release
            with pytest.raises(errors.UnsupportedDeviceError, match="SM90"):
                a.check_device(0)
            a.ns["_DEV"] = frozenset()
        else:
            a.check_device(0)
    a.ns["_DEV"] = frozenset()
    with assume_capability((9, 0)):
        if sm90:
            a.check_device(0)
        else:
            with pytest.raises(errors.UnsupportedDeviceError, match="SM90"):
                a.check_device(0)
    if name == "bmm_fp8":
        a.ns["_DEV"] = frozenset()
        with assume_capability((8, 0)), pytest.raises(errors.UnsupportedDeviceError, match="SM89"):
            a.check_device(0)


def case_quantisation_policies(name: str, release: str, sig: Any = None) -> None:
    pl = place(release)
    kw = args(name)
    f, spy, _ = facade(name, release, sig)
    if name == "fp4_quantize":
        gs = kw["global_scale"]
        f(**kw, is_global_scale_inversed=True)
        sent = spy.raw_kwargs[-1]
        if at_least(pl, "0.6.11"):
            assert sent["is_global_scale_inversed"] is True and sent["global_scale"] is gs
            f(**kw, is_global_scale_inversed=True, backend="cute-dsl")
            sent = spy.raw_kwargs[-1]  # cute-dsl ignores the flag: the reciprocal
            assert sent["is_global_scale_inversed"] is False
            assert torch.equal(sent["global_scale"], 1 / gs)
        else:
            assert "is_global_scale_inversed" not in sent
            assert torch.equal(sent["global_scale"], 1 / gs)
        with pytest.raises(errors.InvalidArgumentError, match="required for NVFP4"):
            f(input=kw["input"])
        f(input=kw["input"], sf_vec_size=32, sf_use_ue8m0=True) if at_least(pl, "0.2.9") else None
        if at_least(pl, "0.2.9"):
            sent = spy.raw_kwargs[-1]["global_scale"]
            assert (sent is None) == at_least(pl, "0.2.13")
            if sent is not None:
                assert torch.equal(sent, torch.ones(1))
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=r"0\.2\.9"):
                f(input=kw["input"], global_scale=gs, sf_vec_size=32)
    if name == "nvfp4_quantize":
        lin = enums.SfLayout.layout_linear
        if at_least(pl, "0.6.7"):
            f(**kw, sfLayout=lin)
            sent = spy.last["sfLayout"]  # the release's member (live) or its value (static)
            assert getattr(sent, "name", sent) in ("layout_linear", 2)
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.7"):
                f(**kw, sfLayout=lin)
            f(**kw, sfLayout=lin, do_shuffle=True)  # the shuffled path honours it
    if name == "e2m1_and_ufp8sf_scale_to_float":
        f(**kw)
        assert torch.equal(spy.last["global_scale_tensor"], torch.ones(1))
    if name == "block_scale_interleave":
        x = kw["unswizzled_sf"]
        # the release's own name for the function (0.2.9-0.2.12: nvfp4_block_scale_interleave)
        record = snapshots.load(SPECS[name])["releases"][release]
        assert SPECS[name].attr_on(pl) == record.get("attr", "block_scale_interleave")
        buf = torch.empty_like(x)
        res = f(x, out=buf)
        assert res is buf and torch.equal(buf, x + 1)
        assert ("out" in spy.raw_kwargs[-1]) == at_least(pl, "0.7.2.post1")  # else copied
        assert torch.equal(f(x), x + 1) and "out" not in spy.raw_kwargs[-1]
    if "backend" in SPECS[name].params and name in QUANT:
        cute = SPECS[name].params["backend"].value_since["cute-dsl"]
        if at_least(pl, cute):
            f(**kw, backend="cute-dsl")
            assert spy.raw_kwargs[-1]["backend"] == "cute-dsl"
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=cute.replace(".", r"\.")):
                f(**kw, backend="cute-dsl")
            f(**kw, backend="cuda")
            assert "backend" not in spy.raw_kwargs[-1]


def case_bad_input_is_refused(name: str, release: str, sig: Any = None) -> None:
    kw = args(name)
    f, spy, _ = facade(name, release, sig)
    bad: list[tuple[dict[str, Any], str]] = []
    if name == "bmm_fp8":
        bad += [
            ({"B": kw["B"].contiguous()}, "B must be column-major"),
            ({"A": kw["A"].float()}, "float8_e4m3fn or float8_e5m2"),
            ({"A_scale": torch.ones(2)}, "one-element float32"),
            ({"B": kw["B"][:, :32]}, r"A must be \[b, m, k\]"),
        ]
    elif name in ("fp4_quantize", "nvfp4_quantize", "mxfp4_quantize", "mxfp8_quantize"):
        first = next(iter(kw))
        bad.append(({first: kw[first].float()}, "float16, bfloat16 or float8_e4m3fn"))
        if len(kw) > 1:
            scale = list(kw)[1]
            bad.append(({scale: kw[scale].half()}, "float32 tensor"))
    elif name == "mm_mxfp8":
        lin = torch.zeros(M, K // 32, dtype=torch.uint8)  # a 2-D linear layout
        bad += [
            ({"a_descale": lin}, "a_descale must be 1-D.*2-D linear"),
            ({"b_descale": lin}, "b_descale must be 1-D"),
            ({"a": kw["a"].float()}, "float8_e4m3fn"),
            ({"b": kw["b"][:32]}, "k"),
        ]
    elif name == "fp8_blockscale_gemm_sm90":
        bad += [
            ({"input": torch.randn(K, M).to(torch.bfloat16).T}, "contiguous"),
            ({"weight": kw["weight"].half()}, "bfloat16 or float8_e4m3fn"),
            ({"weight_scale": torch.ones(4, dtype=torch.float16)}, "float32"),
        ]
    elif name == "gemm_fp8_nt_groupwise":
        bad += [
            ({"scale_major_mode": None}, "needs scale_major_mode"),
            ({"b": kw["b"].to(torch.float8_e5m2)}, "b must have a's dtype"),
            ({"a_scale": kw["a_scale"].half()}, "float32"),
            ({"b": torch.randn(K, N).to(torch.float8_e4m3fn).T}, "contiguous"),
        ]
    elif name == "tinygemm_bf16":
        bad += [
            (
                {"weight": torch.randn(24, K).bfloat16(), "out": torch.empty(M, 24).bfloat16()},
                "multiple of 16",
            ),
            ({"out": torch.empty(N, M).bfloat16().T}, "contiguous"),
            ({"input": kw["input"].half()}, "bfloat16"),
        ]
    elif name == "mm_bf16_fp4":
        bad.append(({"a": kw["a"].half()}, "bfloat16"))
    elif name == "prepare_bf16_fp4_weights":
        bad.append(({"b": kw["b"].float()}, "uint8"))
    elif name in GEMM:
        bad.append(({"a": kw["a"][0]}, "must be 2-D"))
    elif name == "block_scale_interleave":
        bad += [
            ({"unswizzled_sf": kw["unswizzled_sf"].float()}, "must be a uint8 tensor"),
            ({"unswizzled_sf": [1, 2]}, "must be a torch.Tensor"),
        ]
    for change, msg in bad:
        with pytest.raises(errors.InvalidArgumentError, match=msg):
            f(**{**kw, **change})
    assert spy.calls == []


def _refused(minimum: str) -> Any:
    return pytest.raises(errors.UnsupportedParameterError, match=minimum.replace(".", r"\."))


def case_gemm_release_policies(name: str, release: str, sig: Any = None) -> None:
    """What the newer GEMM facades do differently per release: the positional prefix,
    options and backend names a release lacks, release-specific shape limits, the
    values always sent."""
    pl = place(release)
    kw = args(name)
    f, spy, _ = facade(name, release, sig)
    if name == "mm_mxfp8":
        pos = [kw["a"], kw["b"], kw["a_descale"], kw["b_descale"], None, torch.bfloat16]
        f(*pos)  # the stable prefix binds on every release
        assert spy.last["out_dtype"] is torch.bfloat16 and spy.last["backend"] == "auto"
        # slot 6 is backend on 0.6.4-0.6.6, use_8x4_sf_layout from 0.6.7: never positional
        with pytest.raises(errors.PositionalMismatchError, match="at most 6"):
            f(*pos, "cutlass")
        if at_least(pl, "0.6.7"):
            f(**kw, use_8x4_sf_layout=True, backend="trtllm")
            assert spy.raw_kwargs[-1]["use_8x4_sf_layout"] is True
        else:
            with _refused("0.6.7"):
                f(**kw, use_8x4_sf_layout=True)
            with _refused("0.6.7"):
                f(**kw, backend="trtllm")
            f(**kw, use_8x4_sf_layout=False)
            assert "use_8x4_sf_layout" not in spy.raw_kwargs[-1]
        if not at_least(pl, "0.6.13"):
            with _refused("0.6.13"):
                f(**kw, backend="cudnn")
    if name == "gemm_fp8_nt_groupwise":
        f(**kw)
        assert spy.raw_kwargs[-1]["scale_major_mode"] == "MN"  # always sent (0.2.6: default)
        if at_least(pl, "0.2.9"):
            f(**kw, backend="trtllm")
            assert spy.raw_kwargs[-1]["backend"] == "trtllm"
            f(**{**kw, "scale_major_mode": None}, backend="trtllm")  # only cutlass needs it
            assert spy.raw_kwargs[-1]["scale_major_mode"] is None
        else:  # 0.2.6-0.2.8: cutlass only, no backend parameter
            assert "backend" not in spy.raw_kwargs[-1]
            with _refused("0.2.9"):
                f(**kw, backend="trtllm")
        if not at_least(pl, "0.6.14"):
            with _refused("0.6.14"):
                f(**kw, backend="cutile")
    if name == "tinygemm_bf16":
        x = torch.randn(M, 32).to(torch.bfloat16)  # input features not a multiple of 64
        w = torch.randn(N, 32).to(torch.bfloat16)
        if at_least(pl, "0.6.8"):
            f(x, w, kw["out"])
            assert spy.last["input"] is x
        else:
            n = len(spy.calls)
            with pytest.raises(errors.InvalidArgumentError, match=r"multiple of 64.*0\.6\.8"):
                f(x, w, kw["out"])
            assert len(spy.calls) == n
        f(**kw, use_pdl=True)
        assert spy.raw_kwargs[-1]["use_pdl"] is True
    if name in ("mm_bf16_fp4", "prepare_bf16_fp4_weights"):
        with pytest.raises(TypeError, match="backend"):  # required, as in FlashInfer
            f(**{k: v for k, v in kw.items() if k != "backend"})
        if at_least(pl, "0.7.1"):
            f(**{**kw, "backend": "blackwell-native"})
            assert spy.raw_kwargs[-1]["backend"] == "blackwell-native"
        else:
            with _refused("0.7.1"):
                f(**{**kw, "backend": "cute-dsl-native"})


class _OwnQuery:
    """A FlashInfer function of a release with ``@backend_requirement``: its own answers."""

    def __init__(self) -> None:
        self.asked: list[tuple[Any, ...]] = []

    def __call__(self, **kw: Any) -> Any:
        return None

    def is_backend_supported(self, backend: str, cc: int | None = None) -> bool:
        self.asked.append((backend, cc))
        return backend == "cutlass"

    def is_compute_capability_supported(self, cc: int) -> bool:
        self.asked.append(("cc", cc))
        return cc == 100


def case_backend_queries(name: str, release: str, sig: Any = None) -> None:
    """``f.is_backend_supported(backend, cc)`` / ``f.is_compute_capability_supported(cc)``
    answer for the release: False for a name the release does not take or a GPU fi_compat
    refuses; FlashInfer's own answer where its function has the query; else True."""
    e = SPECS[name]
    if e.backend_query is None:
        assert not hasattr(facade(name, release, sig)[0], "is_backend_supported")
        return
    pl = place(release)
    f, _, a = facade(name, release, sig)
    p = e.params["backend"]
    literals = p.kind.literals if p.kind is not None else ()
    newer = [v for v, s in p.value_since.items() if not at_least(pl, s)]
    for v in newer:
        if p.present_in(pl):
            assert not f.is_backend_supported(v), v  # refused by the facade here
    assert not f.is_backend_supported("no-such-backend")
    taken = [v for v in literals if v not in newer and v != "auto" and p.present_in(pl)]
    for v in taken:
        assert f.is_backend_supported(v) is True  # the spy has no query: fi_compat's answer
        assert f.is_backend_supported(v, 100) is True
        assert f.is_backend_supported(v, (10, 0)) is True
    if not p.present_in(pl):  # bmm_fp8 before 0.2.9: the release's only backend
        assert f.is_backend_supported(p.default) is True
    if taken and e.devices is not None and e.devices(pl, (9, 0)) is not None:
        assert f.is_backend_supported(taken[0], 90) is False  # the device policy refuses
        assert f.is_compute_capability_supported(90) is False
    assert f.is_compute_capability_supported(100) is True
    own = _OwnQuery()
    a._set_target(own)
    if taken:
        assert f.is_backend_supported(taken[0], 100) == (taken[0] == "cutlass")
        assert own.asked[-1] == (taken[0], 100)  # FlashInfer's integer capability
    assert f.is_compute_capability_supported((10, 3)) is False and own.asked[-1] == ("cc", 103)
    for v in newer:  # never asked: the facade would refuse the name
        if p.present_in(pl):
            assert not f.is_backend_supported(v)
    assert all(q[0] not in newer for q in own.asked)


def case_nvfp4_kv_layouts(name: str, release: str, sig: Any = None) -> None:
    """The linear NVFP4 KV layout every release 0.6.7-0.7.4 reads (K a multiple of 16:
    ValueError inside; uint8 data / scales; a [1] float32 global scale), refused before
    the call; ``output_dtype`` left out is FlashInfer's default (not sent)."""
    if not name.startswith("nvfp4_kv_"):
        return
    kw = args(name)
    f, spy, _ = facade(name, release, sig)
    f(**kw)
    assert all(spy.raw_kwargs[-1][n] is v for n, v in kw.items())
    assert "output_dtype" not in spy.raw_kwargs[-1]
    gs2 = torch.ones(2)
    if name == "nvfp4_kv_quantize":
        bad = [
            ({"input": torch.randn(M, 24).bfloat16()}, "input"),
            ({"input": kw["input"].float()}, "input"),
        ]
    else:
        f(**kw, output_dtype=torch.float16)
        assert spy.raw_kwargs[-1]["output_dtype"] is torch.float16
        bad = [
            ({"fp4_data": kw["fp4_data"].view(torch.int8)}, "fp4_data"),
            ({"block_scales": torch.zeros(M, K // 8, dtype=torch.uint8)}, "block_scales"),
        ]
    bad.append(({"global_scale": gs2}, "global_scale"))
    calls = len(spy.calls)
    for change, msg in bad:
        with pytest.raises(errors.InvalidArgumentError, match=msg):
            f(**{**kw, **change})
    assert len(spy.calls) == calls


CASES = [
    case_calls_bind_by_keyword,
    case_nvfp4_kv_layouts,
    case_gpus_by_release,
    case_quantisation_policies,
    case_bad_input_is_refused,
    case_gemm_release_policies,
    case_backend_queries,
]
