"""Call cases of ``fi_compat.prefill.trtllm_ragged_attention_deepseek``, shared by the
static suite (every release 0.2.14-0.7.4, spy bound to the snapshot signature) and the
live contract (spy bound to ``inspect.signature`` of the installed function).  The spy
returns ``out`` (or ``(out, lse)``), as the release does."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import errors, prefill
from fi_compat._adapters.trtllm_attention import RAGGED
from fi_compat._core.written import binder
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

SPECS = {RAGGED.name: RAGGED}
B, HEADS, TQ, TK = 2, 4, 6, 10


class RaggedSpy(BindSpy):
    def __init__(self, name: str, release: str, signature: Any = None) -> None:
        super().__init__(signature or snapshot_signature(release, SPECS[name]))
        self.name, self.release = name, release

    def result(self, a: dict[str, Any]) -> Any:
        out = a.get("out")
        if out is None:
            out = torch.zeros(a["query"].shape[0], HEADS, 128, dtype=a["query"].dtype)
        return (out, torch.zeros(TQ, HEADS)) if a["return_lse"] else out


def releases(name: str) -> list[str]:
    e = SPECS[name]
    rel = snapshots.load(e)["releases"]
    return [r for r, v in rel.items() if v is not None and at_least(place(r), e.since)]


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, RaggedSpy]:
    a = SPECS[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(prefill, name))
    spy = RaggedSpy(name, release, signature)
    a._set_target(spy)
    return f, spy


def args(name: str) -> dict[str, Any]:
    i32 = torch.int32
    return {
        "query": torch.randn(TQ, HEADS, 192).bfloat16(),
        "key": torch.randn(TK, HEADS, 192).bfloat16(),
        "value": torch.randn(TK, HEADS, 128).bfloat16(),
        "workspace_buffer": torch.zeros(1024, dtype=torch.uint8),
        "seq_lens": torch.tensor([4, 6], dtype=i32),
        "max_q_len": 4,
        "max_kv_len": 6,
        "bmm1_scale": 0.1,
        "bmm2_scale": 1.0,
        "o_sf_scale": -1.0,
        "batch_size": B,
        "window_left": -1,
        "cum_seq_lens_q": torch.tensor([0, 2, 6], dtype=i32),
        "cum_seq_lens_kv": torch.tensor([0, 4, 10], dtype=i32),
        "enable_pdl": False,
        "is_causal": True,
        "return_lse": False,
    }


def case_calls_bind_by_keyword(name: str, release: str, sig: Any = None) -> None:
    """The 18 stable positional slots (query .. attention_sinks) and keywords reach
    FlashInfer by keyword; ``out`` passes by keyword only."""
    kw = args(name)
    sinks = torch.zeros(HEADS)
    f, spy = facade(name, release, sig)
    out = torch.empty(TQ, HEADS, 128).bfloat16()
    assert f(*kw.values(), sinks, out=out) is out
    sent = spy.raw_kwargs[-1]
    assert all(sent[n] is v for n, v in kw.items() if isinstance(v, torch.Tensor))
    assert sent["attention_sinks"] is sinks and sent["out"] is out
    with pytest.raises(TypeError):
        f(*kw.values(), sinks, out)  # slot 18: out before 0.6.4, the threshold after


def case_skip_all_rows_active_check_means_the_same(
    name: str, release: str, sig: Any = None
) -> None:
    """Left out: no empty-row check on every release (0.7.0's default True, what every
    release before 0.6.18.post1 does); sent as True on 0.6.18.post1, whose default is
    False.  False is refused before 0.6.18.post1, naming it."""
    kw = args(name)
    f, spy = facade(name, release, sig)
    f(**kw)
    has = at_least(place(release), "0.6.18.post1")
    assert spy.raw_kwargs[-1].get("skip_all_rows_active_check", None) is (True if has else None)
    if has:
        f(**kw, skip_all_rows_active_check=False)
        assert spy.raw_kwargs[-1]["skip_all_rows_active_check"] is False
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.18\.post1"):
            f(**kw, skip_all_rows_active_check=False)


def case_options_of_newer_releases(name: str, release: str, sig: Any = None) -> None:
    """Options a release lacks: their default left out there, another value refused
    naming the first release; device scales (tensors) need 0.5.3."""
    kw = args(name)
    p = place(release)
    rows = [
        ("skip_softmax_threshold_scale_factor", 0.5, "0.6.4"),
        ("backend", "cute-dsl", "0.6.10"),
        ("q_seq_lens_cpu", torch.tensor([2, 4]), "0.6.18"),
    ]
    for opt, value, since in rows:
        f, spy = facade(name, release, sig)
        if at_least(p, since):
            f(**kw, **{opt: value})
            assert spy.raw_kwargs[-1][opt] is value
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=since.replace(".", r"\.")):
                f(**kw, **{opt: value})
            assert spy.calls == []
    scale = torch.tensor([0.1])
    f, spy = facade(name, release, sig)
    if at_least(p, "0.5.3"):
        f(**{**kw, "bmm1_scale": scale})
        assert spy.raw_kwargs[-1]["bmm1_scale"] is scale
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.5\.3"):
            f(**{**kw, "bmm1_scale": scale})


def case_positional_calls_written_for_other_orders(
    name: str, release: str, sig: Any = None
) -> None:
    """A positional call written for 0.6.3 (``..., attention_sinks, out, lse``) and one
    written for 0.7.4 (``..., attention_sinks, skip_softmax_threshold_scale_factor, out,
    lse``) bind by their release's order through ``written_for`` on every release: the
    same tensors reach ``out`` / ``lse``, never the threshold slot."""
    kw = args(name)
    out, lse = torch.empty(TQ, HEADS, 128).bfloat16(), torch.empty(TQ, HEADS)
    calls = {
        "0.6.3": [*kw.values(), None, out, lse],
        "0.7.4": [*kw.values(), None, None, out, lse],
    }
    for written, call in calls.items():
        f, spy = facade(name, release, sig)
        got = binder(f, written)(*call)
        sent = spy.raw_kwargs[-1]
        assert got is out and sent["out"] is out and sent["lse"] is lse, (written, release)
        assert sent.get("skip_softmax_threshold_scale_factor") is None


CASES = [
    case_calls_bind_by_keyword,
    case_skip_all_rows_active_check_means_the_same,
    case_options_of_newer_releases,
    case_positional_calls_written_for_other_orders,
]
