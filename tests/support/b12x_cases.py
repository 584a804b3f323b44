"""Call cases of ``fi_compat.cute_dsl.b12x_fused_moe`` and ``B12xMoEWrapper`` (SM12x
NVFP4 MoE, 0.6.9+), shared by the static suite (spy bound to each release's snapshot
signature) and the live contract (``inspect.signature`` of the installed function).
The arguments are those of vLLM's call sites
(``vllm/model_executor/layers/fused_moe/experts/flashinfer_b12x_moe.py``: the wrapper
built by keyword with ``use_cuda_graph`` / ``max_num_tokens`` / ``num_local_experts`` /
``activation``, ``run`` called by keyword)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import cute_dsl, errors
from fi_compat._adapters.cute_dsl import B12X, B12X_CLASS, B12X_METHODS
from fi_compat._device import assume_capability
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

TOKENS, HIDDEN, INTER, E, TOP_K = 4, 128, 64, 8, 2
FN = "b12x_fused_moe"


def entry(key: str) -> Any:
    return B12X if key == FN else B12X_METHODS[key]


def releases(key: str) -> list[str]:
    e = entry(key)
    rel = snapshots.load(e)["releases"]
    return [r for r, v in rel.items() if v is not None and at_least(place(r), e.since)]


class Receiver:
    """Stands in for a ``B12xMoEWrapper`` instance (the spy records it)."""


class Spy(BindSpy):
    def __init__(self, signature: Any, method: bool) -> None:
        super().__init__(signature)
        self.method = method
        self.receivers: list[Any] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.method:
            assert args and isinstance(args[0], Receiver), "the receiver first"
            self.receivers.append(args[0])
            out = super().__call__(*args, **kwargs)
            self.raw_kwargs[-1].pop(next(iter(self.signature.parameters)))  # the receiver
            return out
        return super().__call__(*args, **kwargs)

    def result(self, a: dict[str, Any]) -> Any:
        if "x" not in a:
            return None  # __init__
        return torch.zeros(TOKENS, HIDDEN, dtype=torch.bfloat16)


def facade(key: str, release: str, signature: Any = None) -> tuple[Any, Spy, Any]:
    e = entry(key)
    a = e.select(Distribution("flashinfer-python", release, "<test>", ""))
    stub_fn = stub(cute_dsl, FN) if key == FN else cute_dsl.CLASSES[B12X_CLASS].methods[key][0]
    f = a.build(stub_fn)
    spy = Spy(signature or snapshot_signature(release, e), e.receiver is not None)
    a._set_target(spy)
    return f, spy, a


def args(key: str) -> dict[str, Any]:
    """The required arguments, as vLLM passes them (all by keyword)."""
    if key == "__init__":
        return {
            "num_experts": E,
            "top_k": TOP_K,
            "hidden_size": HIDDEN,
            "intermediate_size": INTER,
            "use_cuda_graph": True,
            "max_num_tokens": 64,
            "num_local_experts": E,
            "activation": "silu",
        }
    kw = {
        "x": torch.zeros(TOKENS, HIDDEN, dtype=torch.bfloat16),
        "w1_weight": torch.zeros(E, 2 * INTER, HIDDEN // 2, dtype=torch.uint8),
        "w1_weight_sf": torch.zeros(E, 2 * INTER, HIDDEN // 16, dtype=torch.uint8),
        "w2_weight": torch.zeros(E, HIDDEN, INTER // 2, dtype=torch.uint8),
        "w2_weight_sf": torch.zeros(E, HIDDEN, INTER // 16, dtype=torch.uint8),
        "token_selected_experts": torch.zeros(TOKENS, TOP_K, dtype=torch.int32),
        "token_final_scales": torch.ones(TOKENS, TOP_K, dtype=torch.float32),
        "w1_alpha": torch.ones(E),
        "w2_alpha": torch.ones(E),
        "fc2_input_scale": torch.ones(1),
    }
    if key == FN:
        kw.update(num_experts=E, top_k=TOP_K)
    return kw


def _call(f: Any, key: str, *a: Any, **kw: Any) -> Any:
    return f(Receiver(), *a, **kw) if key != FN else f(*a, **kw)


def case_calls_bind_by_keyword(key: str, release: str, sig: Any = None) -> None:
    """Keyword and positional calls (the frozen positional prefix) reach FlashInfer with
    the same names; conforming tensors as they are; ``output_dtype`` left out (the
    release's own default, bf16 on every release)."""
    kw = args(key)
    f, spy, _ = facade(key, release, sig)
    _call(f, key, **kw)
    params = entry(key).params
    _call(
        f,
        key,
        *(v for n, v in kw.items() if not params[n].keyword_only),
        **{n: v for n, v in kw.items() if params[n].keyword_only},
    )
    assert spy.raw_kwargs[0].keys() == spy.raw_kwargs[1].keys()
    for n, v in kw.items():
        assert spy.last[n] is v or spy.last[n] == v, n
    assert "output_dtype" not in spy.raw_kwargs[-1]


# key -> parameter -> (a non-default value, its first release)
_NEWER: dict[str, dict[str, tuple[Any, str]]] = {
    FN: {
        "activation_precision": ("bf16", "0.6.11.post1"),
        "quant_mode": ("w4a16", "0.6.11.post3"),
        "swiglu_limit": (7.0, "0.6.15"),
        "input_global_scale": (torch.ones(1), "0.6.17"),
        "expert_map": (torch.arange(E, dtype=torch.int32), "0.7.1"),
    },
    "__init__": {
        "activation_precision": ("bf16", "0.6.11.post1"),
        "source_format": ("b12x", "0.6.11.post3"),
        "swiglu_alpha": (1.0, "0.6.15"),
        "shared_output": (torch.zeros(1), "0.7.0"),
        "expert_map": (torch.arange(E, dtype=torch.int32), "0.7.1"),
    },
    "run": {"input_global_scale": (torch.ones(1), "0.6.17")},
}


def case_newer_options_by_release(key: str, release: str, sig: Any = None) -> None:
    """A parameter the release lacks is dropped at its default and refused otherwise,
    naming its first release; where present it is forwarded."""
    pl = place(release)
    for p, (value, first) in _NEWER[key].items():
        f, spy, _ = facade(key, release, sig)
        if at_least(pl, first):
            _call(f, key, **args(key), **{p: value})
            assert spy.last[p] is value, p
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=first.replace(".", r"\.")):
                _call(f, key, **args(key), **{p: value})
            assert not spy.calls, p


def case_newer_values(key: str, release: str, sig: Any = None) -> None:
    """``fc2_input_scale=None`` needs 0.6.11.post1 (required before); the activations
    ``gelu_tanh`` / ``swigluoai_uninterleave`` need 0.6.15."""
    pl = place(release)
    checks = []
    if key != "__init__":
        checks.append(("fc2_input_scale", None, "0.6.11.post1"))
    if key != "run":
        checks.append(("activation", "swigluoai_uninterleave", "0.6.15"))
    for p, value, first in checks:
        f, spy, _ = facade(key, release, sig)
        kw = {**args(key), p: value}
        if at_least(pl, first):
            _call(f, key, **kw)
            assert spy.last[p] == value, p
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=first.replace(".", r"\.")):
                _call(f, key, **kw)
            assert not spy.calls, p


def case_gpus(key: str, release: str, sig: Any = None) -> None:
    """SM120 / SM121 only (``supported_compute_capability([120, 121])``), refused
    elsewhere before any launch."""
    if key == "__init__":
        return  # no tensors: run checks the GPU
    _, _, a = facade(key, release, sig)
    for cc in ((12, 0), (12, 1)):
        a.ns["_DEV"] = frozenset()
        with assume_capability(cc):
            a.check_device(0)
    for cc in ((9, 0), (10, 0), (10, 3)):
        a.ns["_DEV"] = frozenset()
        with assume_capability(cc), pytest.raises(errors.UnsupportedDeviceError, match="SM120"):
            a.check_device(0)


CASES = [case_calls_bind_by_keyword, case_newer_options_by_release, case_newer_values, case_gpus]
