"""Call cases of ``fi_compat.rope.mla_rope_quantize_fp8``, shared by the static suite
(every release 0.2.11-0.7.4, spy bound to the snapshot signature) and the live contract
(spy bound to ``inspect.signature`` of the installed function).  The spy does what every
release's Python does around the kernel: ``quantize_dtype`` from the first given output
else e4m3fn, the missing outputs allocated, the four returned."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import errors, rope
from fi_compat._adapters.rope import MLA_DIMS_SINCE
from fi_compat._adapters.rope import MLA_SPECS as SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

NNZ, HEADS, ROPE, NOPE, SEQ = 5, 4, 64, 512, 32
OUTS = ("q_rope_out", "k_rope_out", "q_nope_out", "k_nope_out")
INS = ("q_rope", "k_rope", "q_nope", "k_nope")


class MlaRopeSpy(BindSpy):
    def __init__(self, name: str, release: str, signature: Any = None) -> None:
        super().__init__(signature or snapshot_signature(release, SPECS[name]))
        self.name, self.release = name, release

    def result(self, a: dict[str, Any]) -> Any:
        dt = a.get("quantize_dtype")
        if dt is None:
            given = [a[o] for o in OUTS if a.get(o) is not None]
            dt = given[0].dtype if given else torch.float8_e4m3fn
        return tuple(
            a[o] if a.get(o) is not None else torch.empty_like(a[i], dtype=dt)
            for i, o in zip(INS, OUTS, strict=True)
        )


def releases(name: str) -> list[str]:
    e = SPECS[name]
    rel = snapshots.load(e)["releases"]
    return [r for r, v in rel.items() if v is not None and at_least(place(r), e.since)]


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, MlaRopeSpy]:
    a = SPECS[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(rope, name))
    spy = MlaRopeSpy(name, release, signature)
    a._set_target(spy)
    return f, spy


def args(
    name: str, dtype: torch.dtype = torch.bfloat16, rope_dim: int = ROPE, nope: int = NOPE
) -> dict[str, Any]:
    g = torch.Generator().manual_seed(0)
    return {
        "q_rope": torch.randn(NNZ, HEADS, rope_dim, generator=g).to(dtype),
        "k_rope": torch.randn(NNZ, rope_dim, generator=g).to(dtype),
        "q_nope": torch.randn(NNZ, HEADS, nope, generator=g).to(dtype),
        "k_nope": torch.randn(NNZ, nope, generator=g).to(dtype),
        "cos_sin_cache": torch.randn(SEQ, rope_dim, generator=g),
        "pos_ids": torch.arange(NNZ, dtype=torch.int64),
    }


def _outs(kw: dict[str, Any], dt: torch.dtype) -> dict[str, Any]:
    return {o: torch.empty_like(kw[i], dtype=dt) for i, o in zip(INS, OUTS, strict=True)}


def case_calls_bind_and_outputs_pass_through(name: str, release: str, sig: Any = None) -> None:
    """Keyword calls and a positional call written for 0.2.11 (all 14 parameters) reach
    FlashInfer by keyword with the caller's tensors; the caller's outputs come back."""
    for dtype in (torch.float16, torch.bfloat16):
        kw = args(name, dtype)
        f, spy = facade(name, release, sig)
        got = f(**kw)
        assert all(spy.raw_kwargs[-1][n] is v for n, v in kw.items())
        assert [t.dtype for t in got] == [torch.float8_e4m3fn] * 4
        outs = _outs(kw, torch.float8_e5m2)
        full = [*kw.values(), False, None, 0.5, 2.0, *outs.values()]
        f, spy = facade(name, release, sig)
        got = f(*full)
        sent = spy.raw_kwargs[-1]
        assert sent["is_neox"] is False and sent["quant_scale_q"] == 0.5
        assert sent["quant_scale_kv"] == 2.0
        assert all(g is outs[o] for g, o in zip(got, OUTS, strict=True))


def case_enable_pdl_of_0_5_0(name: str, release: str, sig: Any = None) -> None:
    """``enable_pdl`` (0.5.0): False is what 0.2.11-0.4.1 always do (left out there);
    True is refused before 0.5.0, naming it."""
    kw = args(name)
    f, spy = facade(name, release, sig)
    f(**kw, enable_pdl=False)
    if at_least(place(release), "0.5.0"):
        f(**kw, enable_pdl=True)
        assert spy.raw_kwargs[-1]["enable_pdl"] is True
    else:
        assert "enable_pdl" not in spy.raw_kwargs[-1]
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.5\.0"):
            f(**kw, enable_pdl=True)
        assert len(spy.calls) == 1


def case_dims_beyond_deepseek_need_0_5_0(name: str, release: str, sig: Any = None) -> None:
    """rope_dim / nope_dim other than 64 / 512: 0.5.0's rope_quantize takes them; the
    mla_rope_quantize kernel of 0.2.11-0.4.1 checks both, so they are refused there."""
    for rope_dim, nope in ((64, 128), (128, 512), (32, 128)):
        kw = args(name, rope_dim=rope_dim, nope=nope)
        f, spy = facade(name, release, sig)
        if at_least(place(release), MLA_DIMS_SINCE):
            f(**kw)
            assert spy.raw_kwargs[-1]["q_nope"] is kw["q_nope"]
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=r"0\.5\.0"):
                f(**kw)
            assert spy.calls == []


def case_bad_input_is_refused(name: str, release: str, sig: Any = None) -> None:
    """What every release checks (cos_sin_cache float32 in rope.py; one input dtype, fp8
    outputs, the MLA layouts in csrc/rope.cu), refused before the call."""
    kw = args(name)
    f, spy = facade(name, release, sig)
    bad: list[tuple[dict[str, Any], str]] = [
        ({"cos_sin_cache": kw["cos_sin_cache"].half()}, "cos_sin_cache"),
        ({"q_nope": kw["q_nope"].half()}, "q_nope"),
        ({"k_rope": kw["k_rope"][:, None]}, "k_rope"),
        ({"q_rope": kw["q_rope"].float(), "k_rope": kw["k_rope"].float()}, "q_rope"),
        ({"pos_ids": kw["pos_ids"].float()}, "pos_ids"),
        ({"q_rope_out": torch.empty_like(kw["q_rope"])}, "q_rope_out"),
        ({"k_nope": kw["k_nope"][:3]}, "k_nope"),
    ]
    for change, msg in bad:
        with pytest.raises(errors.InvalidArgumentError, match=msg):
            f(**{**kw, **change})
    assert spy.calls == []


CASES = [
    case_calls_bind_and_outputs_pass_through,
    case_enable_pdl_of_0_5_0,
    case_dims_beyond_deepseek_need_0_5_0,
    case_bad_input_is_refused,
]
