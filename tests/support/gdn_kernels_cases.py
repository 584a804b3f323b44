"""Call cases of ``fi_compat.gdn_kernels`` (the bf16-state ``gated_delta_rule_mtp`` of
``flashinfer.gdn_kernels.gdn_decode_bf16_state``), shared by the static suite (every
release, spy bound to the snapshot signature) and the live contract (spy bound to
``inspect.signature`` of the installed function).  The spy returns the output
``[B, T, HV, V]`` as the kernels do: into ``output`` when given, else a new tensor in
the dtype of the ``q`` it received (a cached one on 0.6.11-0.6.17, as those releases
return: the same object per batch size)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import errors, gdn_kernels
from fi_compat._adapters.gdn_kernels import SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

B, H, HV, K, T, POOL = 2, 2, 4, 128, 3, 5
NAME = "gated_delta_rule_mtp"


def releases(name: str = NAME) -> list[str]:
    rel = snapshots.load(SPECS[name])["releases"]
    return [r for r, v in rel.items() if v is not None]


class MtpSpy(BindSpy):
    def __init__(self, signature: Any, release: str) -> None:
        super().__init__(signature)
        pl = place(release)
        self.cached = at_least(pl, "0.6.11") and not at_least(pl, "0.6.18")
        self.cache: dict[int, Any] = {}

    def result(self, a: dict[str, Any]) -> Any:
        q, v = a["q"], a["v"]
        out = a["output"]
        if out is None:
            shape = (*v.shape[:3], v.shape[3])
            if self.cached:  # what 0.6.11-0.6.17 hand back: one buffer per batch size
                out = self.cache.setdefault(q.shape[0], torch.empty(shape, dtype=q.dtype))
            else:
                out = torch.empty(shape, dtype=q.dtype)
        out.fill_(0.5)
        return out


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, MtpSpy]:
    a = SPECS[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(gdn_kernels, name))
    spy = MtpSpy(signature or snapshot_signature(release, SPECS[name]), release)
    a._set_target(spy)
    return f, spy


def args(name: str = NAME, t: int = T, dtype: torch.dtype = torch.bfloat16) -> dict[str, Any]:
    return {
        "A_log": torch.zeros(HV),
        "a": torch.randn(B, t, HV).to(dtype),
        "dt_bias": torch.zeros(HV),
        "q": torch.randn(B, t, H, K).to(dtype),
        "k": torch.randn(B, t, H, K).to(dtype),
        "v": torch.randn(B, t, HV, K).to(dtype),
        "b": torch.randn(B, t, HV).to(dtype),
        "initial_state_source": torch.zeros(POOL, HV, K, K, dtype=torch.bfloat16),
        "initial_state_indices": torch.tensor([3, 1], dtype=torch.int32),
    }


def case_calls_bind_by_name(name: str, release: str, sig: Any = None) -> None:
    """Keyword and positional (the 11 stable slots) calls reach the same parameters;
    conforming tensors pass as they are."""
    kw = args(name)
    f, spy = facade(name, release, sig)
    out = f(**kw)
    vals = list(kw.values())
    f(*vals[:3], 1.0, 20.0, *vals[3:])  # the 11 stable positional slots
    assert spy.raw_kwargs[0].keys() <= spy.raw_kwargs[1].keys()
    assert spy.calls[0].keys() == spy.calls[1].keys()
    sent = spy.last
    for n, t in kw.items():
        assert sent[n] is t, n
    assert out.dtype == torch.bfloat16 and out.shape == (B, T, HV, K)
    assert sent["disable_state_update"] is False


def case_fp16_is_computed_as_bf16(name: str, release: str, sig: Any = None) -> None:
    """fp16 inputs reach the kernel as bf16 (0.6.18's own conversion; copies before),
    float32 gate parameters stay, bf16 ones are widened before 0.6.18."""
    pl = place(release)
    kw = args(name, dtype=torch.float16)
    kw["dt_bias"] = torch.zeros(HV, dtype=torch.bfloat16)
    f, spy = facade(name, release, sig)
    out = f(**kw)
    sent = spy.last
    native = at_least(pl, "0.6.18")
    for n in ("q", "k", "v", "a", "b"):
        if native:
            assert sent[n] is kw[n]
        else:
            assert sent[n].dtype == torch.bfloat16
            assert torch.equal(sent[n], kw[n].to(torch.bfloat16))
    assert sent["dt_bias"].dtype == (torch.bfloat16 if native else torch.float32)
    if not native:
        assert out.dtype == torch.bfloat16


def case_strided_inputs_by_release(name: str, release: str, sig: Any = None) -> None:
    """A fused-QKV view (q, k, v slices of one tensor) and a transposed ``a``: contiguous
    copies with the same values before 0.6.14 (static kernel layouts), as they are after."""
    kw = args(name)
    qkv = torch.randn(B, T, 2 * H + HV, K).to(torch.bfloat16)
    kw["q"], kw["k"], kw["v"] = qkv[:, :, :H], qkv[:, :, H : 2 * H], qkv[:, :, 2 * H :]
    kw["a"] = torch.randn(B, HV, T).to(torch.bfloat16).transpose(1, 2)
    assert not kw["q"].is_contiguous() and not kw["a"].is_contiguous()
    f, spy = facade(name, release, sig)
    f(**kw)
    sent = spy.last
    native = at_least(place(release), "0.6.14")
    for n in ("q", "k", "v", "a"):
        if native:
            assert sent[n] is kw[n], n
        else:
            assert sent[n].is_contiguous() and torch.equal(sent[n], kw[n]), n
    assert sent["b"] is kw["b"]  # contiguous: passed as it is


def case_output_none_is_fresh(name: str, release: str, sig: Any = None) -> None:
    """``output=None`` never returns a tensor a later call overwrites."""
    kw = args(name)
    f, spy = facade(name, release, sig)
    first = f(**kw)
    second = f(**kw)
    assert first is not second and first.data_ptr() != second.data_ptr()
    pl = place(release)
    passed = spy.raw_kwargs[-1].get("output")
    if at_least(pl, "0.6.11") and not at_least(pl, "0.6.18"):
        assert passed is not None and passed.dtype == torch.bfloat16
        assert passed.shape == (B, T, HV, K)
    else:
        assert passed is None
    mine = torch.empty(B, T, HV, K, dtype=torch.bfloat16)
    assert f(**kw, output=mine) is mine


def case_indices_required(name: str, release: str, sig: Any = None) -> None:
    """``initial_state_indices=None`` is refused on every release (0.6.11+ assert it);
    int64 indices are cast to int32 on every release (the kernels compile for int32 only)."""
    kw = args(name)
    f, spy = facade(name, release, sig)
    with pytest.raises(errors.MissingArgumentError, match="initial_state_indices"):
        f(**{**kw, "initial_state_indices": None})
    for n in ("q", "b", "initial_state_source"):
        with pytest.raises(errors.MissingArgumentError, match=n):
            f(**{**kw, n: None})
    assert spy.calls == []
    f(**{**kw, "initial_state_indices": kw["initial_state_indices"].long()})
    got = spy.last["initial_state_indices"]
    assert got.dtype == torch.int32
    assert got.tolist() == [3, 1]


def case_pool_layout_by_release(name: str, release: str, sig: Any = None) -> None:
    """A padded pool (slot stride > HV*V*K) needs 0.6.12; a pool whose slots are not
    contiguous needs 0.6.14."""
    pl = place(release)
    kw = args(name)
    f, spy = facade(name, release, sig)
    padded = torch.zeros(POOL, HV + 1, K, K, dtype=torch.bfloat16)[:, :HV]
    assert not padded.is_contiguous()
    if at_least(pl, "0.6.12"):
        f(**{**kw, "initial_state_source": padded})
        assert spy.last["initial_state_source"] is padded
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=r">=0\.6\.12"):
            f(**{**kw, "initial_state_source": padded})
    odd = torch.zeros(POOL, K, HV, K, dtype=torch.bfloat16).transpose(1, 2)
    if at_least(pl, "0.6.14"):
        f(**{**kw, "initial_state_source": odd})
        assert spy.last["initial_state_source"] is odd
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=r">=0\.6\.1[24]"):
            f(**{**kw, "initial_state_source": odd})


def case_intermediate_buffer_by_release(name: str, release: str, sig: Any = None) -> None:
    """0.7.4's buffer (``[B, S >= T, ...]`` by batch row, a leading view allowed): exact
    ``[B, T, ...]`` contiguous from 0.6.11, the rest from 0.7.4, nothing before 0.6.11."""
    pl = place(release)
    kw = args(name)
    f, spy = facade(name, release, sig)
    exact = torch.zeros(B, T, HV, K, K, dtype=torch.bfloat16)
    wide = torch.zeros(B, T + 2, HV, K, K, dtype=torch.bfloat16)
    view = wide[:, :T]
    if not at_least(pl, "0.6.11"):
        for buf in (exact, wide, view):
            with pytest.raises(errors.UnsupportedParameterError, match=r">=0\.6\.11"):
                f(**kw, intermediate_states_buffer=buf)
        assert spy.calls == []
        return
    f(**kw, intermediate_states_buffer=exact)
    assert spy.last["intermediate_states_buffer"] is exact
    for buf in (wide, view):
        if at_least(pl, "0.7.4"):
            f(**kw, intermediate_states_buffer=buf)
            assert spy.last["intermediate_states_buffer"] is buf
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=r">=0\.7\.4"):
                f(**kw, intermediate_states_buffer=buf)
    with pytest.raises(errors.InvalidArgumentError, match="must be >= T"):
        f(**kw, intermediate_states_buffer=exact[:, :1])


def case_newer_parameters_by_release(name: str, release: str, sig: Any = None) -> None:
    """``output_state_indices`` (0.6.9) and the 0.6.14 parameters: dropped at their
    defaults, refused otherwise, naming the release."""
    pl = place(release)
    kw = args(name)
    f, spy = facade(name, release, sig)
    f(**kw, output_state_indices=None, disable_output=False, recovery_steps=0)
    assert "disable_output" not in spy.raw_kwargs[-1] or at_least(pl, "0.6.14")
    out_idx = torch.tensor([0, 4], dtype=torch.int32)
    if at_least(pl, "0.6.9"):
        f(**kw, output_state_indices=out_idx)
        assert spy.last["output_state_indices"] is out_idx
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.9"):
            f(**kw, output_state_indices=out_idx)
    acc = torch.tensor([1, 2], dtype=torch.int32)
    if at_least(pl, "0.6.14"):
        f(**kw, accepted_steps=acc, disable_output=True)
        assert spy.last["accepted_steps"] is acc and spy.last["disable_output"] is True
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.14"):
            f(**kw, accepted_steps=acc)


def case_bad_input_is_refused(name: str, release: str, sig: Any = None) -> None:
    kw = args(name)
    f, spy = facade(name, release, sig)
    bad: list[tuple[dict[str, Any], str]] = [
        ({"q": kw["q"].float()}, "q"),
        ({"k": kw["k"].half()}, "share one dtype"),
        (
            {"q": torch.randn(B, T, 3, K).bfloat16(), "k": torch.randn(B, T, 3, K).bfloat16()},
            "multiple of q's",
        ),
        ({"initial_state_source": kw["initial_state_source"].float()}, "bf16 pool|bfloat16"),
        ({"initial_state_source": kw["initial_state_source"][:, :, :64]}, "V, K"),
        (
            {"q": torch.randn(B, T, H, 64).bfloat16(), "k": torch.randn(B, T, H, 64).bfloat16()},
            "128",
        ),
        ({"output": torch.empty(B, T, HV, K, dtype=torch.float16)}, "output"),
        ({"a": kw["a"][:, :2]}, "a"),
    ]
    for change, msg in bad:
        with pytest.raises(errors.InvalidArgumentError, match=msg):
            f(**{**kw, **change})
    assert spy.calls == []


CASES = [
    case_calls_bind_by_name,
    case_fp16_is_computed_as_bf16,
    case_strided_inputs_by_release,
    case_output_none_is_fresh,
    case_indices_required,
    case_pool_layout_by_release,
    case_intermediate_buffer_by_release,
    case_newer_parameters_by_release,
    case_bad_input_is_refused,
]
