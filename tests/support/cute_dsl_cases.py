"""Call cases of ``fi_compat.cute_dsl`` (the CuTe-DSL NVFP4 MoE family), shared by the
static suite (every release, spy bound to the snapshot signature) and the live contract
(spy bound to ``inspect.signature`` of the installed function).  The spy returns what
the kernels return in shape and dtype: ``(packed uint8, scales uint8)`` for the
quantisers, the 6-D view for ``convert_sf_to_mma_layout`` (computed as 0.6.4-0.7.4's
``cute_dsl/utils.py`` does), ``out`` for the GEMM, a bf16 ``[tokens, hidden]`` for
the MoE."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import cute_dsl, enums, errors
from fi_compat._adapters.cute_dsl import METHODS, MOE_CLASS
from fi_compat._adapters.cute_dsl import SPECS as _ALL
from fi_compat._device import assume_capability
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

G, M, K, N, TOKENS, TOP_K, E = 2, 128, 128, 64, 4, 2, 4
SPECS = {n: e for n, e in _ALL.items() if n != "b12x_fused_moe"}  # b12x: b12x_cases.py


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
        if n == "convert_sf_to_mma_layout":
            sf, m, k, g, v = a["sf"], a["m"], a["k"], a["num_groups"], a["sf_vec_size"]
            sf_k = (k + v - 1) // v  # ceil_div, as cute_dsl/utils.py
            mt, kt = (m + 127) // 128, (sf_k + 3) // 4
            return sf.view(g, mt, kt, 32, 4, 4).permute(3, 4, 1, 5, 2, 0)
        if n == "grouped_gemm_nt_masked":
            return a["out"]
        if n == "cute_dsl_fused_moe_nvfp4":
            out = a.get("moe_output")
            return out if out is not None else torch.zeros(TOKENS, K, dtype=torch.bfloat16)
        x = a["a"]
        k = x.shape[-1] // (4 if n == "silu_and_mul_scaled_nvfp4_experts_quantize" else 2)
        return torch.zeros(*x.shape[:-1], k, dtype=torch.uint8), torch.zeros(
            x.shape[0], M * K // 16, dtype=torch.uint8
        )


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, KernelSpy, Any]:
    e = SPECS[name]
    a = e.select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(cute_dsl, name))
    spy = KernelSpy(name, signature or snapshot_signature(release, e))
    a._set_target(spy)
    return f, spy, a


def args(name: str) -> dict[str, Any]:
    """The required arguments, as the engines pass them (vLLM / SGLang call sites)."""
    mask = torch.tensor([M, M // 2], dtype=torch.int32)
    if name == "grouped_gemm_nt_masked":
        a = torch.zeros(M, K // 2, G, dtype=torch.uint8)
        b = torch.zeros(N, K // 2, G, dtype=torch.uint8)
        sf = torch.zeros(G * M * K // 16, dtype=torch.uint8)
        return {
            "lhs": (a, sf),
            "rhs": (b, sf),
            "out": torch.zeros(M, N, G, dtype=torch.bfloat16),
            "masked_m": mask,
            "ab_dtype": "float4_e2m1fn",
            "sf_dtype": "float8_e4m3fn",
            "c_dtype": "bfloat16",
            "sf_vec_size": 16,
        }
    if name == "convert_sf_to_mma_layout":
        return {
            "sf": torch.zeros(G * M, K // 16, dtype=torch.uint8),
            "m": M,
            "k": K,
            "num_groups": G,
        }
    if name == "nvfp4_batched_quantize":
        return {
            "a": torch.randn(G, M, K).to(torch.bfloat16),
            "a_global_sf": torch.ones(1, dtype=torch.float32),
        }
    if name == "cute_dsl_fused_moe_nvfp4":
        u8 = torch.zeros(E, 2 * K, K // 2, dtype=torch.uint8)
        return {
            "x": torch.zeros(TOKENS, K // 2, dtype=torch.uint8),
            "x_sf": torch.zeros(TOKENS * K // 16, dtype=torch.uint8),
            "token_selected_experts": torch.zeros(TOKENS, TOP_K, dtype=torch.int32),
            "token_final_scales": torch.ones(TOKENS, TOP_K, dtype=torch.float32),
            "w1_weight": u8,
            "w1_weight_sf": torch.zeros(E, 2 * K, K // 16, dtype=torch.uint8),
            "w1_alpha": torch.ones(E),
            "fc2_input_scale": torch.ones(1),
            "w2_weight": torch.zeros(E, K, K // 2, dtype=torch.uint8),
            "w2_weight_sf": torch.zeros(E, K, K // 16, dtype=torch.uint8),
            "w2_alpha": torch.ones(E),
            "num_experts": E,
            "top_k": TOP_K,
        }
    width = 2 * K if name == "silu_and_mul_scaled_nvfp4_experts_quantize" else K
    return {
        "a": torch.randn(G, M, width).to(torch.bfloat16),
        "mask": mask,
        "a_global_sf": torch.ones(G, dtype=torch.float32),
    }


def case_calls_bind_by_keyword(name: str, release: str, sig: Any = None) -> None:
    """Keyword and positional calls (the frozen positional prefix) reach FlashInfer by
    keyword with the same names; conforming tensors are passed as they are."""
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
        if isinstance(v, torch.Tensor | tuple):
            assert spy.last[n] is v, n  # conforming: passed as they are
    assert "nvfp4_4over6" not in spy.raw_kwargs[-1]  # left out: the release's own default


def case_scale_view_is_the_release_result(name: str, release: str, sig: Any = None) -> None:
    if name != "convert_sf_to_mma_layout":
        return
    f, spy, _ = facade(name, release, sig)
    sf = torch.arange(G * M * K // 16, dtype=torch.int32).view(G * M, K // 16)
    view = f(sf, M, K, G)
    assert view.shape == (32, 4, 1, 4, 2, G) and view.data_ptr() == sf.data_ptr()
    assert spy.last["num_groups"] == G and spy.last["sf_vec_size"] == 16


# parameter -> (a non-default value, its first release)
_NEWER = {
    "grouped_gemm_nt_masked": {
        "sm_count": (4, "0.2.14"),
        "dst_signals": (torch.zeros(G, dtype=torch.int32), "0.4.0"),
        "is_swap_ab": (True, "0.6.12"),
        "num_ranks": (2, "0.6.12"),
    },
    "scaled_fp4_grouped_quantize": {"nvfp4_4over6": (None, "0.7.1")},
    "silu_and_mul_scaled_nvfp4_experts_quantize": {"nvfp4_4over6": (None, "0.7.1")},
    "nvfp4_batched_quantize": {"nvfp4_4over6": (None, "0.7.1")},
    "cute_dsl_fused_moe_nvfp4": {
        "swiglu_limit": (7.0, "0.6.15"),
        "per_token_scale": (torch.ones(TOKENS), "0.6.16"),
        "situ_beta": (1.0, "0.6.18"),
        "localized_sm_count": (8, "0.7.2.post1"),
        "clamped_relu2_limit": (torch.ones(1), "0.7.4"),
    },
}


def case_newer_options_by_release(name: str, release: str, sig: Any = None) -> None:
    """A parameter the release lacks is dropped at its default and refused otherwise,
    naming its first release; where present it is forwarded."""
    pl = place(release)
    for p, (value, first) in _NEWER.get(name, {}).items():
        f, spy, _ = facade(name, release, sig)
        if at_least(pl, first):
            f(**args(name), **{p: value})
            assert spy.last[p] is value, p
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=first.replace(".", r"\.")):
                f(**args(name), **{p: value})
            assert not spy.calls, p


def case_activation_type_on_every_release(name: str, release: str, sig: Any = None) -> None:
    """``activation_type`` (0.6.15) is taken on every release: 0.6.14 gets it as
    ``activation="silu"`` / ``"relu2"``; 0.6.4-0.6.13 (SwiGLU only) at the default."""
    if name != "cute_dsl_fused_moe_nvfp4":
        return
    pl = place(release)
    act = enums.ActivationType
    values = enums.ActivationType.values_in(release)
    for member, text in ((act.Swiglu, "silu"), (act.Relu2, "relu2")):
        f, spy, _ = facade(name, release, sig)
        if at_least(pl, "0.6.15"):
            f(**args(name), activation_type=member)
            sent = spy.raw_kwargs[-1].get("activation_type", spy.last["activation_type"])
            assert sent == values[member.name]
            assert "activation" not in spy.raw_kwargs[-1]
        elif at_least(pl, "0.6.14"):
            f(**args(name), activation_type=member)
            assert spy.last["activation"] == text
            assert "activation_type" not in spy.raw_kwargs[-1]
        elif member is act.Swiglu:
            f(**args(name), activation_type=member)
            assert "activation" not in spy.raw_kwargs[-1]
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.14"):
                f(**args(name), activation_type=member)
    f, spy, _ = facade(name, release, sig)
    if at_least(pl, "0.6.14") and not at_least(pl, "0.6.15"):  # only the 0.6.15 domain
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.15"):
            f(**args(name), activation_type=act.Gelu)
        assert not spy.calls


def case_pdl_is_a_hint(name: str, release: str, sig: Any = None) -> None:
    """``enable_pdl`` (0.6.7) changes scheduling only: dropped before, whatever its value."""
    if name != "cute_dsl_fused_moe_nvfp4":
        return
    f, spy, _ = facade(name, release, sig)
    f(**args(name), enable_pdl=False)
    if at_least(place(release), "0.6.7"):
        assert spy.last["enable_pdl"] is False
    else:
        assert "enable_pdl" not in spy.raw_kwargs[-1]


def case_gpus(name: str, release: str, sig: Any = None) -> None:
    """SM90 refused before any launch; the CuTe-DSL kernels SM10x only (SM120 refused),
    the quantisers SM100 and newer; the scale view any device."""
    e = SPECS[name]
    _, _, a = facade(name, release, sig)
    if e.devices is None:  # a tensor view: any device, host tensors too
        assert e.host_tensors is True
        return
    with assume_capability((10, 0)):
        a.check_device(0)
    for cc, served in (((9, 0), False), ((12, 0), name in _SM100_AND_NEWER)):
        a.ns["_DEV"] = frozenset()
        with assume_capability(cc):
            if served:
                a.check_device(0)
            else:
                with pytest.raises(errors.UnsupportedDeviceError, match=f"SM{cc[0]}"):
                    a.check_device(0)


_SM100_AND_NEWER = (
    "scaled_fp4_grouped_quantize",
    "silu_and_mul_scaled_nvfp4_experts_quantize",
    "nvfp4_batched_quantize",
)


def case_bad_input_is_refused(name: str, release: str, sig: Any = None) -> None:
    """Declared contracts refuse before the call: fp32 activations for the quantisers,
    an int64 ``masked_m`` / ``mask``."""
    kw = args(name)
    f, spy, _ = facade(name, release, sig)
    if "a" in kw:
        with pytest.raises(errors.InvalidArgumentError, match="a"):
            f(**{**kw, "a": kw["a"].float()})
    for m in ("mask", "masked_m"):
        if m in kw:
            with pytest.raises(errors.InvalidArgumentError, match=m):
                f(**{**kw, m: kw[m].long()})
    assert not spy.calls


CASES = [
    case_calls_bind_by_keyword,
    case_scale_view_is_the_release_result,
    case_newer_options_by_release,
    case_activation_type_on_every_release,
    case_pdl_is_a_hint,
    case_gpus,
    case_bad_input_is_refused,
]


# -- CuteDslMoEWrapper -----------------------------------------------------------------


class Receiver:
    """Stands in for a ``CuteDslMoEWrapper`` instance (the spy records it)."""


class MethodSpy(BindSpy):
    """FlashInfer's method, ``(self, ...)``: records the receiver; the arguments bind by
    the release's signature as passed (positionally where fi_compat forwards so)."""

    def __init__(self, signature: Any) -> None:
        super().__init__(signature)
        self.receivers: list[Any] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        assert args and isinstance(args[0], Receiver), "the receiver first"
        self.receivers.append(args[0])
        super().__call__(*args, **kwargs)
        self.raw_kwargs[-1].pop(next(iter(self.signature.parameters)))  # the receiver
        sent = self.raw_kwargs[-1]
        return None if "num_experts" in sent else torch.zeros(TOKENS, K, dtype=torch.bfloat16)

    def result(self, a: dict[str, Any]) -> Any:
        return None


def method_releases(method: str) -> list[str]:
    e = METHODS[method]
    rel = snapshots.load(e)["releases"]
    return [r for r, v in rel.items() if v is not None and at_least(place(r), e.since)]


def method_facade(method: str, release: str, signature: Any = None) -> tuple[Any, MethodSpy]:
    e = METHODS[method]
    a = e.select(Distribution("flashinfer-python", release, "<test>", ""))
    stub_fn = cute_dsl.CLASSES[MOE_CLASS].methods[method][0]
    f = a.build(stub_fn)
    spy = MethodSpy(signature or snapshot_signature(release, e))
    a._set_target(spy)
    return f, spy


def method_args(method: str) -> dict[str, Any]:
    if method == "__init__":
        return {"num_experts": E, "top_k": TOP_K, "hidden_size": K, "intermediate_size": K}
    kw = args("cute_dsl_fused_moe_nvfp4")
    del kw["num_experts"], kw["top_k"]
    return kw


def mcase_calls_bind_by_keyword(method: str, release: str, sig: Any = None) -> None:
    """Keyword and positional calls reach FlashInfer's method by keyword, the receiver
    positionally; conforming tensors as they are."""
    kw = method_args(method)
    f, spy = method_facade(method, release, sig)
    me = Receiver()
    f(me, **kw)
    f(me, *kw.values())
    assert spy.receivers == [me, me]
    assert spy.raw_kwargs[0].keys() == spy.raw_kwargs[1].keys()
    for n, v in kw.items():
        assert spy.last[n] is v or spy.last[n] == v, n
    if method == "__init__":  # left out: the release's own default
        assert "output_dtype" not in spy.raw_kwargs[-1]


def mcase_max_num_tokens(method: str, release: str, sig: Any = None) -> None:
    """``max_num_tokens=None`` (0.6.14+'s default, ignored there) is the release's own
    default 4096 where the release sizes buffers by it and takes an int."""
    if method != "__init__":
        return
    for given, want in ((None, 4096), (1024, 1024)):
        f, spy = method_facade(method, release, sig)
        f(Receiver(), **method_args(method), max_num_tokens=given)
        native = at_least(place(release), "0.6.14")
        assert spy.last["max_num_tokens"] == (given if native else want)


def mcase_activation_type(method: str, release: str, sig: Any = None) -> None:
    if method != "__init__":
        return
    pl = place(release)
    act = enums.ActivationType
    f, spy = method_facade(method, release, sig)
    if at_least(pl, "0.6.15"):
        f(Receiver(), **method_args(method), activation_type=act.Relu2)
        assert spy.last["activation_type"] == act.values_in(release)["Relu2"]
    elif at_least(pl, "0.6.14"):
        f(Receiver(), **method_args(method), activation_type=act.Relu2)
        assert spy.last["activation"] == "relu2"
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.14"):
            f(Receiver(), **method_args(method), activation_type=act.Relu2)
        f(Receiver(), **method_args(method), activation_type=act.Swiglu)
        assert "activation" not in spy.raw_kwargs[-1]


_METHOD_NEWER = {
    "__init__": {
        "use_fused_finalize": (False, "0.6.16"),
        "quant_mode": ("w4a16", "0.6.18"),
        "swap_ab": (True, "0.7.4"),
    },
    "run": {"per_token_scale": (torch.ones(TOKENS), "0.6.16")},
}


def mcase_newer_options(method: str, release: str, sig: Any = None) -> None:
    pl = place(release)
    for p, (value, first) in _METHOD_NEWER[method].items():
        f, spy = method_facade(method, release, sig)
        if at_least(pl, first):
            f(Receiver(), **method_args(method), **{p: value})
            assert spy.last[p] is value, p
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=first.replace(".", r"\.")):
                f(Receiver(), **method_args(method), **{p: value})
            assert not spy.calls, p


METHOD_CASES = [
    mcase_calls_bind_by_keyword,
    mcase_max_num_tokens,
    mcase_activation_type,
    mcase_newer_options,
]
