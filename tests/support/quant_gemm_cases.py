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
        if n in QUANT:
            x = next(iter(a.values()))
            if n == "mxfp8_quantize":
                return x.to(torch.float8_e4m3fn), torch.zeros(M * K // 32, dtype=torch.uint8)
            return torch.zeros(*x.shape[:-1], x.shape[-1] // 2, dtype=torch.uint8), torch.zeros(
                M, K // 16, dtype=torch.uint8
            )
        if n == "bmm_fp8":
            return torch.zeros(a["A"].shape[0], a["A"].shape[1], a["B"].shape[2])
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
    f(*kw.values())
    assert spy.raw_kwargs[1].keys() == spy.raw_kwargs[2].keys()
    for n, v in kw.items():
        if isinstance(v, torch.Tensor):
            assert spy.last[n] is v, n  # conforming: passed as they are
    if "backend" in SPECS[name].params and _has(release, name, "backend"):
        sent = spy.raw_kwargs[-1].get("backend")
        default = SPECS[name].params["backend"].default
        if default == "auto" and name != "mm_fp4" and not at_least(place(release), "0.7.4"):
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
    }.get(name, False)
    with assume_capability((10, 0)):
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


CASES = [
    case_calls_bind_by_keyword,
    case_gpus_by_release,
    case_quantisation_policies,
    case_bad_input_is_refused,
]
