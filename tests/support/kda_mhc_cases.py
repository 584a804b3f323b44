"""Call cases of ``fi_compat.kda_decode`` and ``fi_compat.mhc``, shared by the static
suite (every release of each range, spy bound to the snapshot signature) and the live
contract (spy bound to ``inspect.signature`` of the installed function).  The spy
returns what the kernels do: ``recurrent_kda`` ``(output [B, T, HV, V], state or
None)``, ``fused_kda_decode`` ``[1, rows, H, 128]``, ``mhc_post`` a tensor shaped like
``residual``, ``mhc_pre_big_fuse`` ``(post_mix, comb_mix, layer_input)``."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import errors, kda_decode, mhc
from fi_compat._adapters.kda_decode import SPECS as KDA
from fi_compat._adapters.mhc import SPECS as MHC
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

SPECS = {**KDA, **MHC}
MODULES = {**dict.fromkeys(KDA, kda_decode), **dict.fromkeys(MHC, mhc)}
B, H, HV, K, ROWS, SLOTS, T, HID = 2, 2, 4, 128, 3, 5, 6, 64


def releases(name: str) -> list[str]:
    rel = snapshots.load(SPECS[name])["releases"]
    return [r for r, v in rel.items() if v is not None]


class KdaMhcSpy(BindSpy):
    def __init__(self, name: str, signature: Any) -> None:
        super().__init__(signature)
        self.name = name

    def result(self, a: dict[str, Any]) -> Any:
        if self.name == "recurrent_kda":
            v = a["v"]
            out = a["output"] if a["output"] is not None else torch.zeros_like(v)
            return out, (a["initial_state"] if a["output_final_state"] else None)
        if self.name == "fused_kda_decode":
            if a["output"] is not None:
                return a["output"]
            return torch.zeros(1, a["x"].shape[0], H, 128, dtype=torch.bfloat16)
        if self.name == "mhc_post":
            return torch.zeros_like(a["residual"])
        r = a["residual"]
        outer = tuple(r.shape[:-2])
        return (
            torch.zeros(*outer, 4, 1),
            torch.zeros(*outer, 4, 4),
            torch.zeros(*outer, r.shape[-1], dtype=torch.bfloat16),
        )


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, KdaMhcSpy]:
    a = SPECS[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(MODULES[name], name))
    spy = KdaMhcSpy(name, signature or snapshot_signature(release, SPECS[name]))
    a._set_target(spy)
    return f, spy


def args(name: str) -> dict[str, Any]:
    bf = torch.bfloat16
    if name == "recurrent_kda":
        return {
            "q": torch.randn(B, 1, H, K).to(bf),
            "k": torch.randn(B, 1, H, K).to(bf),
            "v": torch.randn(B, 1, HV, K).to(bf),
            "g": torch.randn(B, 1, HV, K).to(bf),
            "beta": torch.rand(B, 1, HV).to(bf),
            "initial_state": torch.zeros(SLOTS, HV, K, K, dtype=bf),
            "ssm_state_indices": torch.tensor([3, 1], dtype=torch.int32),
        }
    if name == "fused_kda_decode":
        c = 3 * H * 128
        return {
            "x": torch.randn(ROWS, c).to(bf),
            "weight": torch.randn(3, 4, H * 128),
            "conv_state": torch.zeros(SLOTS, c, 3, dtype=bf),
            "raw_gate": torch.randn(1, ROWS, H, 128).to(bf),
            "raw_beta": torch.randn(1, ROWS, H).to(bf),
            "A_log": torch.zeros(H),
            "dt_bias": torch.zeros(H * 128),
            "state_indices": torch.tensor([1, 0, 4], dtype=torch.int32),
            "state": torch.zeros(SLOTS, H, 128, 128),
            "output_gate": torch.randn(ROWS, H, 128).to(bf),
            "norm_weight": torch.ones(128),
        }
    if name == "mhc_post":
        return {
            "x": torch.randn(T, HID).to(bf),
            "residual": torch.randn(T, 4, HID).to(bf),
            "post_layer_mix": torch.rand(T, 4),
            "comb_res_mix": torch.rand(T, 4, 4),
        }
    return {
        "dot_mix": torch.randn(T, 24),
        "sqrsum": torch.rand(T),
        "residual": torch.randn(T, 4, HID).to(bf),
        "mhc_scale": torch.ones(3),
        "mhc_base": torch.zeros(24),
        "k": 1,
    }


def case_calls_bind_by_keyword(name: str, release: str, sig: Any = None) -> None:
    """Every argument reaches FlashInfer under its own name, by keyword, as it was
    passed (no copies); positionally passed arguments too, up to the stable prefix."""
    f, spy = facade(name, release, sig)
    kw = args(name)
    f(**kw)
    for n, value in kw.items():
        assert spy.last[n] is value, n
    assert set(spy.raw_kwargs[-1]) <= set(spy.signature.parameters)
    n_pos, _why = SPECS[name].positional
    order = [n for n in SPECS[name].order if n in kw]
    head = [p for p in SPECS[name].order[:n_pos]]
    if order == head[: len(order)]:
        f(*[kw[n] for n in order])
        for n in order:
            assert spy.last[n] is kw[n], n


def case_backend_by_release(name: str, release: str, sig: Any = None) -> None:
    """``backend`` left out means ``"cute-dsl"`` everywhere: sent from its first release
    (0.7.1+ would resolve their ``None`` default to it), dropped before (the only
    kernels); ``"cake"`` is refused before its first release, ``"auto"`` (recurrent)
    before 0.7.0."""
    if name not in KDA:
        pytest.skip("no backend")
    first = "0.6.18" if name == "recurrent_kda" else "0.7.1"
    f, spy = facade(name, release, sig)
    kw = args(name)
    f(**kw)
    has = at_least(place(release), first)
    if has:  # what the release binds: sent (recurrent_kda) or its own equal default
        assert spy.last["backend"] == "cute-dsl"
    else:
        assert "backend" not in spy.raw_kwargs[-1]
    n = len(spy.calls)
    if has:
        f(**kw, backend="cake")
        assert spy.last["backend"] == "cake"
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=first.replace(".", r"\.")):
            f(**kw, backend="cake")
        assert len(spy.calls) == n
    if name == "recurrent_kda" and has and not at_least(place(release), "0.7.0"):
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.7\.0"):
            f(**kw, backend="auto")


def case_newer_options_are_refused_before_their_release(
    name: str, release: str, sig: Any = None
) -> None:
    """``recurrent_kda``'s pool pair (0.6.16) and frozen-state verification (0.7.0),
    ``fused_kda_decode``'s ``state_indices_mode`` (0.7.1): sent where the release has
    them, refused before, naming the release."""
    rows = {
        "recurrent_kda": [
            ("initial_state_indices", torch.tensor([0, 1], dtype=torch.int32), "0.6.16"),
            ("disable_state_update", True, "0.7.0"),
        ],
        "fused_kda_decode": [("state_indices_mode", "positive_unique", "0.7.1")],
    }.get(name)
    if rows is None:
        pytest.skip("one signature on every release")
    f, spy = facade(name, release, sig)
    kw = args(name)
    for param, value, first in rows:
        n = len(spy.calls)
        if at_least(place(release), first):
            f(**kw, **{param: value})
            assert spy.last[param] is value
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=first.replace(".", r"\.")):
                f(**kw, **{param: value})
            assert len(spy.calls) == n


def case_bad_input_is_refused(name: str, release: str, sig: Any = None) -> None:
    """What every release refuses (int64 slots where int32 is read, an ``HC`` axis other
    than 4) is refused before the call, by the typed error."""
    f, spy = facade(name, release, sig)
    kw = args(name)
    bad = {
        "recurrent_kda": ("ssm_state_indices", torch.tensor([3, 1])),
        "fused_kda_decode": ("state_indices", torch.tensor([1, 0, 4])),
        "mhc_post": ("residual", torch.randn(T, 3, HID).bfloat16()),
        "mhc_pre_big_fuse": ("residual", torch.randn(T, 2, HID).bfloat16()),
    }[name]
    with pytest.raises(errors.InvalidArgumentError, match=bad[0]):
        f(**(kw | {bad[0]: bad[1]}))
    assert spy.calls == []


CASES = [
    case_calls_bind_by_keyword,
    case_backend_by_release,
    case_newer_options_are_refused_before_their_release,
    case_bad_input_is_refused,
]
