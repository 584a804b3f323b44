"""Call cases of ``fi_compat.mamba.selective_state_update``, shared by the static suite
(every release 0.6.1-0.7.4, spy bound to the snapshot signature) and the live contract
(spy bound to ``inspect.signature`` of the installed function).  The spy returns what
the kernel does: ``out`` when given, else a new tensor shaped like ``x``."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import errors, mamba
from fi_compat._adapters.mamba import SPECS
from fi_compat._core.written import binder
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

NAME = "selective_state_update"
CACHE, BATCH, NHEADS, DIM, DSTATE, NGROUPS = 6, 2, 4, 16, 8, 1
STABLE = (
    "state", "x", "dt", "A", "B", "C", "D", "z", "dt_bias", "dt_softplus",
    "state_batch_indices", "pad_slot_id",
)  # fmt: skip


def releases(name: str = NAME) -> list[str]:
    rel = snapshots.load(SPECS[name])["releases"]
    return [r for r, v in rel.items() if v is not None]


class SsuSpy(BindSpy):
    def result(self, a: dict[str, Any]) -> Any:
        out = a.get("out")
        return out if out is not None else torch.zeros_like(a["x"])


def facade(release: str, signature: Any = None) -> tuple[Any, SsuSpy]:
    a = SPECS[NAME].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(mamba, NAME))
    spy = SsuSpy(signature or snapshot_signature(release, SPECS[NAME]))
    a._set_target(spy)
    return f, spy


def args(name: str = NAME, index_dtype: torch.dtype = torch.int32) -> dict[str, Any]:
    """Mamba2 decode as vLLM calls it: A, D and dt_bias broadcast views of per-head
    values, dt broadcast over dim."""
    return {
        "state": torch.zeros(CACHE, NHEADS, DIM, DSTATE, dtype=torch.bfloat16),
        "x": torch.randn(BATCH, NHEADS, DIM).bfloat16(),
        "dt": torch.randn(BATCH, NHEADS, 1).bfloat16().expand(BATCH, NHEADS, DIM),
        "A": -torch.rand(NHEADS, 1, 1).expand(NHEADS, DIM, DSTATE),
        "B": torch.randn(BATCH, NGROUPS, DSTATE).bfloat16(),
        "C": torch.randn(BATCH, NGROUPS, DSTATE).bfloat16(),
        "D": torch.randn(NHEADS, 1).bfloat16().expand(NHEADS, DIM),
        "z": None,
        "dt_bias": torch.randn(NHEADS, 1).bfloat16().expand(NHEADS, DIM),
        "dt_softplus": True,
        "state_batch_indices": torch.tensor([4, 1], dtype=index_dtype),
        "pad_slot_id": -1,
    }


def case_calls_bind_by_keyword(release: str, sig: Any = None) -> None:
    """Every stable argument reaches FlashInfer under its own name, by keyword; the
    output comes back; int64 indices reach 0.6.1-0.6.2 as int32 (their kernel reads
    ``int const*``), later releases as they are (no copy)."""
    for dt in (torch.int32, torch.int64):
        f, spy = facade(release, sig)
        kw = args(index_dtype=dt)
        out = f(**kw)
        got = spy.last
        assert out.shape == kw["x"].shape
        for n in STABLE:
            if n == "state_batch_indices":
                continue
            assert got[n] is kw[n], n
        idx = got["state_batch_indices"]
        assert idx.tolist() == [4, 1]
        if at_least(place(release), "0.6.3") or dt is torch.int32:
            assert idx is kw["state_batch_indices"]
        else:
            assert idx.dtype is torch.int32
        assert set(spy.raw_kwargs[-1]) <= set(spy.signature.parameters)


def case_positional_prefix_is_frozen_at_pad_slot_id(release: str, sig: Any = None) -> None:
    """0.6.6 inserted ``state_scale`` where 0.6.2-0.6.5 have ``out``: the stable order
    stops at ``pad_slot_id``, and a 13th positional argument is refused before any
    launch (naming written_for), whatever the release."""
    f, spy = facade(release, sig)
    kw = args()
    pos = [kw[n] for n in STABLE]
    f(*pos)
    assert spy.last["pad_slot_id"] == -1 and spy.last["state_batch_indices"] is pos[10]
    n = len(spy.calls)
    with pytest.raises(errors.PositionalMismatchError, match="written_for"):
        f(*pos, torch.empty_like(kw["x"]))
    assert len(spy.calls) == n


def case_written_for_0_6_5_keeps_out(release: str, sig: Any = None) -> None:
    """A positional call written for 0.6.5 (``..., pad_slot_id, out, disable_state_update``)
    keeps ``out`` as the output buffer on every release (0.6.6+ would read it as
    ``state_scale``); on 0.6.1, which has no ``out``, it is refused before the launch."""
    f, spy = facade(release, sig)
    kw = args()
    out = torch.empty_like(kw["x"])
    call = binder(f, "0.6.5")
    if not at_least(place(release), "0.6.2"):
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.2"):
            call(*[kw[n] for n in STABLE], out)
        assert spy.calls == []
        return
    got = call(*[kw[n] for n in STABLE], out, False)
    assert got is out and spy.last["out"] is out
    if "state_scale" in spy.signature.parameters:
        assert spy.last["state_scale"] is None
    if "disable_state_update" in spy.signature.parameters:
        assert spy.last["disable_state_update"] is False


def case_written_for_0_6_7_keeps_state_scale(release: str, sig: Any = None) -> None:
    """A positional call written for 0.6.7 (``..., pad_slot_id, state_scale, out``) keeps
    its meaning: ``None`` for ``state_scale`` is dropped where the release lacks it (its
    default), ``out`` stays the output; a tensor ``state_scale`` is refused before
    0.6.6, naming 0.6.6."""
    f, spy = facade(release, sig)
    kw = args()
    out = torch.empty_like(kw["x"])
    call = binder(f, "0.6.7")
    pos = [kw[n] for n in STABLE]
    if at_least(place(release), "0.6.2"):
        assert call(*pos, None, out) is out and spy.last["out"] is out
        if "state_scale" in spy.signature.parameters:
            assert spy.last["state_scale"] is None
    n = len(spy.calls)
    scale = torch.ones(CACHE, NHEADS, DIM)
    if at_least(place(release), "0.6.6"):
        call(*pos, scale)
        assert spy.last["state_scale"] is scale
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.6"):
            call(*pos, scale)
        assert len(spy.calls) == n


def case_backend_by_release(release: str, sig: Any = None) -> None:
    """``backend="flashinfer"`` is FlashInfer's kernel, the only one before 0.7.0 (dropped
    there); ``"cake"`` needs 0.7.0."""
    f, spy = facade(release, sig)
    kw = args()
    f(**kw, backend="flashinfer")
    if at_least(place(release), "0.7.0"):
        assert spy.last["backend"] == "flashinfer"
        f(**kw, backend="cake")
        assert spy.last["backend"] == "cake"
    else:
        assert "backend" not in spy.raw_kwargs[-1]
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.7\.0"):
            f(**kw, backend="cake")


def case_newer_options_are_refused_before_their_release(release: str, sig: Any = None) -> None:
    """Varlen ``cu_seqlens`` (0.6.7) and ``algorithm`` other than ``"auto"`` (0.6.5) reach
    the releases that have them and are refused, naming the release, before."""
    f, spy = facade(release, sig)
    kw = args()
    cu = torch.tensor([0, 1, 2], dtype=torch.int32)
    for name, value, first in (("cu_seqlens", cu, "0.6.7"), ("algorithm", "simple", "0.6.5")):
        n = len(spy.calls)
        if at_least(place(release), first):
            f(**kw, **{name: value})
            assert spy.last[name] is value
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=first.replace(".", r"\.")):
                f(**kw, **{name: value})
            assert len(spy.calls) == n


def case_bad_input_is_refused(release: str, sig: Any = None) -> None:
    """A float index tensor, a 2-D state, and a D / dt_bias of another dtype than dt (or
    B, C, z, out of another than x) are refused before the launch on every release: 0.6.3+
    raise an untyped RuntimeError in validate_dtype_consistency, 0.6.1-0.6.2 read the
    memory as dt's (x's) dtype."""
    f, spy = facade(release, sig)
    kw = args()
    for name, value in (
        ("D", kw["D"].float()),
        ("dt_bias", kw["dt_bias"].half()),
        ("B", kw["B"].float()),
        ("z", torch.zeros(BATCH, NHEADS, DIM)),
        ("out", torch.zeros(BATCH, NHEADS, DIM, dtype=torch.float16)),
    ):
        if name == "out" and not at_least(place(release), "0.6.2"):
            continue
        with pytest.raises(errors.InvalidArgumentError, match=f"{name} must have"):
            f(**(kw | {name: value}))
    with pytest.raises(errors.InvalidArgumentError, match="state_batch_indices"):
        f(**(kw | {"state_batch_indices": torch.tensor([4.0, 1.0])}))
    with pytest.raises(errors.InvalidArgumentError, match="state"):
        f(**(kw | {"state": torch.zeros(CACHE, DIM)}))
    assert spy.calls == []


CASES = [
    case_calls_bind_by_keyword,
    case_positional_prefix_is_frozen_at_pad_slot_id,
    case_written_for_0_6_5_keeps_out,
    case_written_for_0_6_7_keeps_state_scale,
    case_backend_by_release,
    case_newer_options_are_refused_before_their_release,
    case_bad_input_is_refused,
]
