"""``fi_compat.norm`` and ``fi_compat.activation`` on every release 0.2.0.post1-0.7.4 that
has each function, against the release's real signature (the snapshot read from its
wheel or sdist).  The spy computes what the kernel computes (in float32, from the
arguments it was given, refusing 3-D input where the release's kernel does), so the
tests check values, not only the binding."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import activation, errors, norm, snapshots
from fi_compat._adapters.activation import SPECS as ACT
from fi_compat._adapters.norm import SPECS as NORM
from fi_compat._device import assume_capability
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES, at_least, place
from spy import BindSpy, snapshot_signature

STUBS = {
    **{n: getattr(norm, "_" + n) for n in NORM},
    **{n: getattr(activation, "_" + n) for n in ACT},
}
ENTRIES = {**NORM, **ACT}


def _releases(name: str) -> list[str]:
    e = ENTRIES[name]
    return [r for r, v in snapshots.load(e)["releases"].items() if v is not None]


CELLS = [(n, r) for n in ENTRIES for r in _releases(n)]


def _rms(x: torch.Tensor, w: torch.Tensor, eps: float, gemma: bool = False) -> torch.Tensor:
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return (y * ((1 + w.float()) if gemma else w.float())).to(x.dtype)


class KernelSpy(BindSpy):
    """Bound to ``signature`` (default: the release's snapshot; the live contract passes
    ``inspect.signature`` of the installed function)."""

    def __init__(self, name: str, release: str, signature: Any = None) -> None:
        super().__init__(signature or snapshot_signature(release, ENTRIES[name]))
        self.name, self.release = name, release

    def result(self, a: dict[str, Any]) -> Any:
        x = a["input"]
        if self.name in ("rmsnorm", "gemma_rmsnorm"):
            if x.dim() != 2 and not (
                self.name == "rmsnorm" and at_least(place(self.release), "0.4.0")
            ):
                raise RuntimeError("CHECK_DIM(2, input)")  # the release's kernel check
            y = _rms(x, a["weight"], a["eps"], self.name == "gemma_rmsnorm")
            out = a["out"] if a["out"] is not None else torch.empty_like(x)
            return out.copy_(y)
        if self.name.endswith("fused_add_rmsnorm"):
            a["residual"].add_(x)
            x.copy_(_rms(a["residual"], a["weight"], a["eps"], self.name.startswith("gemma")))
            return None
        if self.name == "layernorm":
            return torch.nn.functional.layer_norm(
                x.float(), x.shape[-1:], a["gemma"], a["beta"], a["eps"]
            ).to(x.dtype)
        d = x.shape[-1] // 2
        act = {
            "silu_and_mul": torch.nn.functional.silu,
            "gelu_and_mul": torch.nn.functional.gelu,
            "gelu_tanh_and_mul": lambda t: torch.nn.functional.gelu(t, approximate="tanh"),
        }[self.name]
        y = (act(x[..., :d].float()) * x[..., d:].float()).to(x.dtype)
        out = a["out"] if a["out"] is not None else torch.empty(y.shape, dtype=x.dtype)
        return out.copy_(y)


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, KernelSpy]:
    a = ENTRIES[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(STUBS[name])
    spy = KernelSpy(name, release, signature)
    a._set_target(spy)
    return f, spy


def _args(name: str, rows: int = 5, hidden: int = 16) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(rows, hidden, generator=g).to(torch.bfloat16)
    if name == "layernorm":
        return {"input": x, "gemma": torch.rand(hidden) + 0.5, "beta": torch.randn(hidden)}
    if name in ACT:
        return {"input": x}
    w = (torch.rand(hidden, generator=g) + 0.5).to(torch.bfloat16)
    if name.endswith("fused_add_rmsnorm"):
        return {
            "input": x,
            "residual": torch.randn(rows, hidden, generator=g).to(x.dtype),
            "weight": w,
        }
    return {"input": x, "weight": w}


@pytest.mark.parametrize(("name", "release"), CELLS)
def test_positional_and_keyword_calls_give_the_kernel_result(name: str, release: str) -> None:
    kw = _args(name)
    want = KernelSpy(name, release).result(
        {**{k: v.clone() for k, v in kw.items()}, "eps": 1e-6, "out": None}
    )
    f, spy = facade(name, release)
    got_kw = f(**{k: v.clone() for k, v in kw.items()})
    f2, spy2 = facade(name, release)
    got_pos = f2(*(v.clone() for v in kw.values()))
    assert spy.raw_kwargs and spy2.raw_kwargs  # by keyword only (the spy refuses positions)
    if name.endswith("fused_add_rmsnorm"):
        assert got_kw is None and got_pos is None
    else:
        assert torch.equal(got_kw, want) and torch.equal(got_pos, want)


def newest_pdl(name: str, v: Any, cc: tuple[int, int]) -> bool:
    """What ``enable_pdl=v`` means in the module's newest release on a GPU ``cc``: norm
    clamps None/True to the device (0.6.8+), activation lets None decide by device."""
    if name in NORM:
        return v is not False and cc[0] >= 9
    return cc[0] >= 9 if v is None else bool(v)


def _pdl_effect(name: str, release: str, sent: dict[str, Any], cc: tuple[int, int]) -> bool:
    """What the release does with the ``enable_pdl`` it was sent (its own source)."""
    if "enable_pdl" not in sent:  # left out: the release's own default
        v = None if at_least(place(release), "0.2.7") else False
    else:
        v = sent["enable_pdl"]
    device = cc[0] >= 9
    if not at_least(place(release), "0.2.7"):
        assert type(v) is bool, (release, v)  # 0.2.3-0.2.6 take a bool
        return v
    if name in NORM and at_least(place(release), "0.6.8"):
        return v is not False and device  # clamped to the device
    return device if v is None else bool(v)


@pytest.mark.parametrize(("name", "release"), [c for c in CELLS if c[0] != "layernorm"])
def test_enable_pdl_means_the_newest_meaning_on_every_release(name: str, release: str) -> None:
    for cc in ((8, 0), (9, 0)):
        for v in (None, True, False):
            f, spy = facade(name, release)
            with assume_capability(cc):
                f(**_args(name), enable_pdl=v)
            sent = spy.raw_kwargs[-1]
            if not at_least(place(release), "0.2.3"):
                assert "enable_pdl" not in sent  # no PDL: a hint, dropped
                continue
            newest = newest_pdl(name, v, cc)
            assert _pdl_effect(name, release, sent, cc) == newest, (cc, v, sent)


@pytest.mark.parametrize("release", _releases("rmsnorm"))
def test_rmsnorm_takes_3d_input_on_every_release(release: str) -> None:
    g = torch.Generator().manual_seed(2)
    qkv = torch.randn(4, 3, 2, 16, generator=g).to(torch.bfloat16)
    q = qkv[:, 0]  # [4, 2, 16], heads contiguous, rows strided by 3 heads
    w = (torch.rand(16, generator=g) + 0.5).to(torch.bfloat16)
    want = _rms(q, w, 1e-6)
    f, spy = facade("rmsnorm", release)
    got = f(q, w)
    assert got.shape == (4, 2, 16) and torch.equal(got, want)
    out = torch.empty(4, 2, 16, dtype=torch.bfloat16)
    f, spy = facade("rmsnorm", release)
    assert f(q, w, out=out) is out and torch.equal(out, want)
    out_t = torch.empty(2, 4, 16, dtype=torch.bfloat16).transpose(0, 1)  # not viewable as rows
    f, spy = facade("rmsnorm", release)
    assert f(q, w, out=out_t) is out_t and torch.equal(out_t, want)
    sent = spy.last["input"]
    assert sent.dim() == (3 if at_least(place(release), "0.4.0") else 2)


BAD = [
    ("rmsnorm", {"weight": torch.ones(16)}, "weight must have input's dtype"),
    ("rmsnorm", {"input": torch.randn(5, 16)}, "float16 or bfloat16"),
    ("rmsnorm", {"weight": torch.ones(8, dtype=torch.bfloat16)}, "weight must be 1-D"),
    ("rmsnorm", {"out": torch.empty(5, 8, dtype=torch.bfloat16)}, "out must have input's shape"),
    ("gemma_rmsnorm", {"input": torch.randn(5, 2, 16).bfloat16()}, "input must be 2-D"),
    ("fused_add_rmsnorm", {"residual": torch.randn(5, 16)}, "residual must have input's shape"),
    ("silu_and_mul", {"input": torch.randn(5, 15).bfloat16()}, "even last dimension"),
    ("gelu_and_mul", {"out": torch.empty(5, 16, dtype=torch.bfloat16)}, "out must be"),
    ("layernorm", {"gemma": torch.ones(16, dtype=torch.bfloat16)}, "gemma must be float32"),
]


@pytest.mark.parametrize(("name", "change", "msg"), BAD)
@pytest.mark.parametrize("release", ["0.2.0.post1", "0.2.5", "0.4.1", "0.6.7", "0.7.4"])
def test_bad_input_is_refused_before_the_call(
    name: str, change: dict[str, Any], msg: str, release: str
) -> None:
    if release not in _releases(name):  # layernorm before 0.5.0: below its first release
        a = ENTRIES[name].select(Distribution("flashinfer-python", release, "<test>", ""))
        with pytest.raises(errors.UnsupportedFlashInferVersionError, match=r"0\.5\.0"):
            a.build(STUBS[name])(**_args(name))
        return
    f, spy = facade(name, release)
    with pytest.raises(errors.InvalidArgumentError, match=msg):
        f(**{**_args(name), **change})
    assert spy.calls == []


def test_every_function_covers_every_release_that_has_it() -> None:
    for name, e in ENTRIES.items():
        rel = _releases(name)
        assert rel == list(KNOWN_RELEASES[KNOWN_RELEASES.index(e.since) :]), name
        assert e.since == ("0.5.0" if name == "layernorm" else "0.2.0.post1"), name
