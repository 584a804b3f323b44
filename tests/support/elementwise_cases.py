"""``fi_compat.norm`` and ``fi_compat.activation`` on every release 0.2.0.post1-0.7.4 that
has each function, against the release's real signature (the snapshot read from its
wheel or sdist).  The spy computes what the kernel computes (in float32, from the
arguments it was given, refusing 3-D input where the release's kernel does), so the
tests check values, not only the binding.

``rmsnorm_fp4quant`` (0.6.0+): the spy quantises like the release's CuTe-DSL kernel (its
allocation, bf16 rounding of ``x * weight`` before 0.7.4, e4m3 / ue8m0 block scales,
the 128x4 swizzle, and the swizzle padding: zeroed by 0.7.4, left as it was before)."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import activation, errors, norm
from fi_compat._adapters.activation import SPECS as ACT
from fi_compat._adapters.norm import SPECS as NORM
from fi_compat._device import assume_capability
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES, at_least, place
from support.spy import BindSpy, snapshot_signature, stub

STUBS = {
    **{n: stub(norm, n) for n in NORM},
    **{n: stub(activation, n) for n in ACT},
}
ENTRIES = {**NORM, **ACT}


def _releases(name: str) -> list[str]:
    e = ENTRIES[name]
    return [r for r, v in snapshots.load(e)["releases"].items() if v is not None]


CELLS = [(n, r) for n in ENTRIES for r in _releases(n)]
FP4Q = "rmsnorm_fp4quant"
FP8Q = ("rmsnorm_quant", "fused_add_rmsnorm_quant")
QK = "qk_rmsnorm_cute"
# where the function writes its result (in place), or None: it returns it
WRITES = {"rmsnorm_quant": "out", "fused_add_rmsnorm_quant": "out", QK: "output"}


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
        if self.name in FP8Q:
            scale = a["scale"]
            if isinstance(scale, torch.Tensor):  # 0.6.7+: a one-element device tensor
                assert at_least(place(self.release), "0.6.7"), "a host float before 0.6.7"
                scale = scale.float().reshape(1)
            if self.name == "fused_add_rmsnorm_quant":
                a["residual"].add_(x)
                x = a["residual"]
            y = _rms(x, a["weight"], a["eps"]).float() / scale
            a["out"].copy_(y.to(a["out"].dtype))
            return None
        if self.name == QK:
            xf = x.float()
            y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + a["eps"])
            a["output"].copy_((y * (a["weight_bias"] + a["weight"].float())).to(x.dtype))
            return None
        if self.name == FP4Q:
            return _fp4quant_kernel(a, self.release)
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


_E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def _sf_offsets(rows: int, cols: int, k_tiles: int) -> torch.Tensor:
    """Byte offsets of scale ``[r, k]`` in the 128x4 swizzle (every release's formula:
    ``m_tile * k_tiles * 512 + k_tile * 512 + (r % 32) * 16 + (r % 128) // 32 * 4 + k % 4``)."""
    r = torch.arange(rows).unsqueeze(1)
    k = torch.arange(cols).unsqueeze(0)
    return (r // 128) * k_tiles * 512 + (k // 4) * 512 + (r % 32) * 16 + (r % 128) // 32 * 4 + k % 4


def _fp4quant_kernel(a: dict[str, Any], release: str) -> tuple[torch.Tensor, torch.Tensor]:
    """What ``flashinfer.cute_dsl.rmsnorm_fp4quant`` of ``release`` does with ``a``."""
    x, w, bs = a["input"], a["weight"], a["block_size"]
    newest = at_least(place(release), "0.7.4")
    h = x.shape[-1]
    rows = x.numel() // h
    assert h % bs == 0 and h >= 64 and bs in (16, 32)  # the release's asserts
    fmt = a["scale_format"] or ("ue8m0" if bs == 32 else "e4m3")
    y, sf = a["y_fp4"], a["block_scale"]
    if newest:  # 0.7.4 asserts it; before, a strided block_scale is written to a copy
        assert y is None or y.is_contiguous(), "y_fp4 must be contiguous"
        assert sf is None or sf.is_contiguous(), "block_scale must be contiguous"
    if y is None:
        y = torch.empty((*x.shape[:-1], h // 2), dtype=torch.float4_e2m1fn_x2)
    k_tiles = (h // bs + 3) // 4
    size = (rows + 127) // 128 * k_tiles * 512
    if sf is None:  # torch.empty: stands in as 0xAB bytes
        dt = torch.uint8 if fmt == "ue8m0" else torch.float8_e4m3fn
        shape = (size,) if a["is_sf_swizzled_layout"] else (*x.shape[:-1], h // bs)
        sf = torch.full(shape, 0xAB, dtype=torch.uint8).view(dt)
    xf = x.float().reshape(rows, h)
    rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + a["eps"])
    # before 0.7.4 (and for fp16 on every release) x * w is rounded to the input type
    rounded = x.dtype == torch.float16 or not newest
    xw = (x.reshape(rows, h) * w).float() if rounded else xf * w.float()
    yb = (xw * rstd).view(rows, h // bs, bs)
    amax = yb.abs().amax(-1)
    gs = 1.0 if a["global_scale"] is None else float(a["global_scale"][0])
    if fmt == "ue8m0" and bs == 32:  # the 16-element path writes e4m3 whatever the format
        e = torch.where(amax > 0, torch.ceil(torch.log2(amax / 6)), torch.tensor(-127.0))
        e = (e + 127).clamp(0, 254)
        scale_bytes = e.to(torch.uint8)
        inv = torch.exp2(127 - e)
    else:
        s8 = (gs * amax / 6).clamp(max=448).to(torch.float8_e4m3fn)
        scale_bytes = s8.view(torch.uint8)
        sf32 = s8.float()
        inv = torch.where(sf32 > 0, gs / sf32, torch.zeros(()))
    q = yb * inv.unsqueeze(-1)
    idx = (q.abs().clamp(max=6).unsqueeze(-1) - _E2M1).abs().argmin(-1)
    code = (idx | ((q < 0).long() << 3)).view(rows, h // 2, 2)
    packed = (code[..., 0] | (code[..., 1] << 4)).to(torch.uint8)
    y.view(torch.uint8).view(rows, h // 2).copy_(packed)
    target = sf if sf.is_contiguous() else sf.contiguous()
    flat = target.view(torch.uint8).reshape(-1)
    if a["is_sf_swizzled_layout"]:
        if newest:  # zero_swizzled_sf_padding: the whole padded tile grid
            full = torch.zeros((rows + 127) // 128 * 128, k_tiles * 4, dtype=torch.uint8)
            full[:rows, : h // bs] = scale_bytes
            flat[_sf_offsets(full.shape[0], full.shape[1], k_tiles).reshape(-1)] = full.reshape(-1)
        else:
            flat[_sf_offsets(rows, h // bs, k_tiles).reshape(-1)] = scale_bytes.reshape(-1)
    else:
        flat.copy_(scale_bytes.reshape(-1))
    return y, sf


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, KernelSpy]:
    a = ENTRIES[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(STUBS[name])
    spy = KernelSpy(name, release, signature)
    a._set_target(spy)
    return f, spy


def _args(name: str, rows: int = 5, hidden: int = 16) -> dict[str, torch.Tensor]:
    if name == FP4Q:  # hidden: a multiple of the block and at least 64
        hidden = max(hidden, 64)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(rows, hidden, generator=g).to(torch.bfloat16)
    if name == "layernorm":
        return {"input": x, "gemma": torch.rand(hidden) + 0.5, "beta": torch.randn(hidden)}
    if name in ACT:
        return {"input": x}
    w = (torch.rand(hidden, generator=g) + 0.5).to(torch.bfloat16)
    if name in FP8Q:  # the positional order: out, input, (residual,) weight, scale
        out = {"out": torch.empty(rows, hidden, dtype=torch.float8_e4m3fn), "input": x}
        if name == "fused_add_rmsnorm_quant":
            out["residual"] = torch.randn(rows, hidden, generator=g).to(x.dtype)
        return {**out, "weight": w, "scale": 0.5}
    if name == QK:
        q = torch.randn(rows, 3, 2, hidden, generator=g).to(torch.bfloat16)[:, 0]  # strided
        return {"input": q, "weight": w, "output": torch.empty(rows, 2, hidden).bfloat16()}
    if name.endswith("fused_add_rmsnorm"):
        return {
            "input": x,
            "residual": torch.randn(rows, hidden, generator=g).to(x.dtype),
            "weight": w,
        }
    return {"input": x, "weight": w}


def _clone(v: Any) -> Any:
    return v.clone() if isinstance(v, torch.Tensor) else v


@pytest.mark.parametrize(("name", "release"), CELLS)
def test_positional_and_keyword_calls_give_the_kernel_result(name: str, release: str) -> None:
    kw = _args(name)
    want = KernelSpy(name, release)(**{k: _clone(v) for k, v in kw.items()})
    f, spy = facade(name, release)
    got_kw = f(**{k: _clone(v) for k, v in kw.items()})
    f2, spy2 = facade(name, release)
    got_pos = f2(*(_clone(v) for v in kw.values()))
    assert spy.raw_kwargs and spy2.raw_kwargs  # by keyword only (the spy refuses positions)
    if name == FP4Q:
        for got in (got_kw, got_pos):
            assert got[0].dtype == torch.float4_e2m1fn_x2 and got[0].shape == (5, 32)
            assert got[1].dtype == torch.float8_e4m3fn and got[1].shape == (5, 4)
            assert all(_u8(g).equal(_u8(x)) for g, x in zip(got, want, strict=True))
    elif name in WRITES:  # in place: compare what each call wrote
        assert got_kw is None and got_pos is None
        buf = WRITES[name]
        want_kw = KernelSpy(name, release)
        ref = {k: _clone(v) for k, v in kw.items()}
        want_kw(**ref)
        for s in (spy, spy2):
            assert torch.equal(s.last[buf].float(), ref[buf].float())
            if name == "fused_add_rmsnorm_quant":
                assert torch.equal(s.last["residual"], ref["residual"])
    elif name.endswith("fused_add_rmsnorm"):
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


@pytest.mark.parametrize(
    ("name", "release"), [c for c in CELLS if c[0] not in ("layernorm", QK)]
)  # qk_rmsnorm_cute: a bool passed as it is on every release (tested below)
def test_enable_pdl_means_the_newest_meaning_on_every_release(name: str, release: str) -> None:
    for cc in ((8, 0), (9, 0)):
        for v in (None, True, False):
            f, spy = facade(name, release)
            with assume_capability(cc):
                f(**_args(name), enable_pdl=v)
            sent = spy.raw_kwargs[-1]
            if "enable_pdl" not in spy.signature.parameters:
                # no PDL (before 0.2.3; rmsnorm_fp4quant before 0.6.8): a hint, dropped
                assert "enable_pdl" not in sent
                assert not at_least(place(release), "0.6.8" if name == FP4Q else "0.2.3")
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
    ("rmsnorm_quant", {"out": torch.empty(5, 16).bfloat16()}, "float8_e4m3fn or float8_e5m2"),
    ("rmsnorm_quant", {"weight": torch.ones(16)}, "weight must have input's dtype"),
    ("rmsnorm_quant", {"input": torch.randn(5, 16)}, "float16 or bfloat16"),
    ("fused_add_rmsnorm_quant", {"residual": torch.randn(5, 16).half()}, "residual"),
    (QK, {"input": torch.randn(5, 4, 16).bfloat16()}, "output"),  # another shape: mismatch
    (QK, {"weight": torch.ones(16)}, "weight must have input's dtype"),
    (QK, {"input": torch.randn(5, 2, 32).bfloat16()[..., ::2]}, "stride"),
]


@pytest.mark.parametrize(("name", "change", "msg"), BAD)
@pytest.mark.parametrize("release", ["0.2.0.post1", "0.2.5", "0.4.1", "0.6.7", "0.7.4"])
def test_bad_input_is_refused_before_the_call(
    name: str, change: dict[str, Any], msg: str, release: str
) -> None:
    if release not in _releases(name):  # before the function's first release
        a = ENTRIES[name].select(Distribution("flashinfer-python", release, "<test>", ""))
        since = ENTRIES[name].since.replace(".", r"\.")
        with pytest.raises(errors.UnsupportedFlashInferVersionError, match=since):
            a.build(STUBS[name])(**_args(name))
        return
    f, spy = facade(name, release)
    with pytest.raises(errors.InvalidArgumentError, match=msg):
        f(**{**_args(name), **change})
    assert spy.calls == []


@pytest.mark.parametrize(("name", "release"), [c for c in CELLS if c[0] in ACT])
def test_activation_hidden_size_the_kernel_cannot_align(name: str, release: str) -> None:
    """A hidden size d % 8 != 0 before 0.7.1 (whose kernel moves 8 elements at a time and
    faults on the misaligned second half, FI#2526) is refused before the launch with
    UnsupportedParameterError naming 0.7.1 (FI#5013), also with the metadata checks off;
    0.7.1+ compute every even last dimension, and d % 8 == 0 runs on every release."""
    fixed = at_least(place(release), "0.7.1")
    for d in (4, 12, 3420, 6, 1):
        kw = _args(name, hidden=2 * d)
        if fixed:
            want = KernelSpy(name, release)(**{k: v.clone() for k, v in kw.items()})
            f, spy = facade(name, release)
            assert torch.equal(f(**kw), want) and torch.equal(f(*kw.values()), want)
            continue
        for checks in (True, False):
            f, spy = facade(name, release)
            f.adapter.set_validation(checks)
            for positional in (False, True):
                with pytest.raises(errors.UnsupportedParameterError, match=rf"d = {d} ") as e:
                    f(*kw.values()) if positional else f(**kw)
                assert (e.value.minimum, e.value.parameter) == ("0.7.1", "input")
            assert spy.calls == []
    for d in (8, 16, 4096):
        kw = _args(name, hidden=2 * d)
        f, spy = facade(name, release)
        assert torch.equal(f(**kw), KernelSpy(name, release)(**kw))
    if not fixed:  # the common case: one inline test, no call
        assert "if not (input.shape[-1] % 16 == 0):" in f.adapter.source


def test_every_function_covers_every_release_that_has_it() -> None:
    for name, e in ENTRIES.items():
        rel = _releases(name)
        assert rel == list(KNOWN_RELEASES[KNOWN_RELEASES.index(e.since) :]), name
        first = {"layernorm": "0.5.0", FP4Q: "0.6.0", QK: "0.6.7"}
        first.update(dict.fromkeys(FP8Q, "0.6.0"))
        first = first.get(name, "0.2.0.post1")
        assert e.since == first, name


# -- rmsnorm_quant / fused_add_rmsnorm_quant / qk_rmsnorm_cute ----------------------------


@pytest.mark.parametrize(("name", "release"), [c for c in CELLS if c[0] in FP8Q])
def test_fp8_quant_scale_is_a_float_everywhere_and_a_tensor_from_0_6_7(
    name: str, release: str
) -> None:
    """``scale``: a host float on every release; a one-element tensor from 0.6.7 (the
    kernel reads it on the device), refused before (0.6.0-0.6.6 take a double)."""
    kw = _args(name)
    f, spy = facade(name, release)
    f(**kw)
    assert spy.raw_kwargs[-1]["scale"] == 0.5
    t = torch.tensor([0.5])
    if at_least(place(release), "0.6.7"):
        f(**{**kw, "scale": t})
        assert spy.raw_kwargs[-1]["scale"] is t  # passed as it is (no host read)
    else:
        n = len(spy.calls)
        with pytest.raises(errors.UnsupportedParameterError, match=r"scale=<a tensor>.*0\.6\.7"):
            f(**{**kw, "scale": t})
        assert len(spy.calls) == n


@pytest.mark.parametrize("release", _releases(QK))
def test_qk_rmsnorm_cute_passes_enable_pdl_and_weight_bias_as_they_are(release: str) -> None:
    for v in (True, False):
        f, spy = facade(QK, release)
        with assume_capability((8, 0)):
            f(**_args(QK), enable_pdl=v, weight_bias=1.0)
        assert spy.raw_kwargs[-1]["enable_pdl"] is v
        assert spy.raw_kwargs[-1]["weight_bias"] == 1.0
    f, spy = facade(QK, release)
    with pytest.raises(errors.InvalidArgumentError, match="must be 3-D"):
        f(**{**_args(QK), "input": torch.randn(5, 16).bfloat16()})


# -- rmsnorm_fp4quant -------------------------------------------------------------------

FP4Q_RELEASES = _releases(FP4Q)


def _u8(t: torch.Tensor) -> torch.Tensor:
    return t.view(torch.uint8)


def _fp4q_args(rows: int = 5, hidden: int = 64, dtype: Any = torch.bfloat16) -> dict[str, Any]:
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(rows, hidden, generator=g) * 3).to(dtype)
    x[0, :16] *= 1e-3  # a block of small values (a small block scale)
    w = (torch.rand(hidden, generator=g) + 0.5).to(dtype)
    return {"input": x, "weight": w}


def case_fp4quant_calls(release: str, sig: Any = None) -> None:
    """Keyword binding against the release's signature; preallocated outputs and the
    scale passed as they are and returned; 3-D input; every format."""
    f, spy = facade(FP4Q, release, sig)
    kw = _fp4q_args()
    y = torch.empty(5, 32, dtype=torch.uint8)
    sf = torch.empty(5, 4, dtype=torch.float8_e4m3fn)
    gs = torch.tensor([2.5])
    got = f(**kw, y_fp4=y, block_scale=sf, global_scale=gs, eps=1e-5)
    assert got[0] is y and got[1] is sf
    sent = spy.raw_kwargs[-1]
    assert sent["y_fp4"] is y and sent["block_scale"] is sf and sent["global_scale"] is gs
    assert sent["input"] is kw["input"] and sent["weight"] is kw["weight"]
    assert sent["eps"] == 1e-5 and set(sent) <= set(spy.signature.parameters)
    want = KernelSpy(FP4Q, release)(
        **{k: v.clone() for k, v in kw.items()}, global_scale=gs, eps=1e-5
    )
    assert _u8(y).equal(_u8(want[0])) and _u8(sf).equal(_u8(want[1]))
    # positional: the stable order is every release's (0.6.8 appended enable_pdl)
    f, spy = facade(FP4Q, release, sig)
    f(kw["input"], kw["weight"], None, None, gs, 1e-5, 32, "e4m3", False)
    a = spy.last
    assert (a["global_scale"], a["eps"], a["block_size"], a["scale_format"]) == (
        gs,
        1e-5,
        32,
        "e4m3",
    )
    # 3-D input [batch, seq, hidden]: outputs of the input's leading shape
    x3 = kw["input"].view(1, 5, 64)
    for bsz, fmt, dt in (
        (16, None, torch.float8_e4m3fn),
        (32, None, torch.uint8),
        (32, "e4m3", torch.float8_e4m3fn),
    ):
        f, spy = facade(FP4Q, release, sig)
        y3, s3 = f(x3, kw["weight"], block_size=bsz, scale_format=fmt)
        assert y3.shape == (1, 5, 32) and y3.dtype == torch.float4_e2m1fn_x2
        assert s3.shape == (1, 5, 64 // bsz) and s3.dtype == dt
        want = KernelSpy(FP4Q, release)(
            input=kw["input"], weight=kw["weight"], block_size=bsz, scale_format=fmt
        )
        assert _u8(y3).reshape(5, 32).equal(_u8(want[0]))
        assert _u8(s3).reshape(5, -1).equal(_u8(want[1]))
    # 3-D input with [B * S, ...] outputs: every release views them as rows
    y2, s2 = torch.empty(5, 32, dtype=torch.uint8), torch.empty(5, 4, dtype=torch.uint8)
    f, spy = facade(FP4Q, release, sig)
    got = f(x3, kw["weight"], y2, s2)
    assert got[0] is y2 and got[1] is s2 and spy.last["y_fp4"] is y2


def _padding_mask(rows: int, cols: int) -> torch.Tensor:
    """True at the bytes of the swizzled buffer that hold no scale of the rows x cols."""
    k_tiles = (cols + 3) // 4
    mask = torch.ones((rows + 127) // 128 * k_tiles * 512, dtype=torch.bool)
    mask[_sf_offsets(rows, cols, k_tiles).reshape(-1)] = False
    return mask


def case_fp4quant_swizzled_padding(
    release: str, sig: Any = None, rows: int = 5, hidden: int = 80
) -> None:
    """The padding of a swizzled block_scale is zero after the call on every release
    (0.7.4's kernel zeroes it; fi_compat before); the scales are the release's own."""
    kw = _fp4q_args(rows, hidden)
    ref = KernelSpy(FP4Q, release)(**kw, is_sf_swizzled_layout=True)[1]
    pad = _padding_mask(rows, hidden // 16)
    size = pad.numel()
    # a caller's buffer full of garbage (0xFF: e4m3 NaN)
    sf = torch.full((size,), 0xFF, dtype=torch.uint8).view(torch.float8_e4m3fn)
    f, spy = facade(FP4Q, release, sig)
    y, got = f(**kw, block_scale=sf, is_sf_swizzled_layout=True)
    assert got is sf and spy.last["block_scale"] is sf and y.shape == (rows, hidden // 2)
    assert (_u8(sf)[pad] == 0).all()
    assert _u8(sf)[~pad].equal(_u8(ref)[~pad])
    # a larger buffer (2-D [rows padded, columns padded]): the bytes past the layout stay
    big = torch.full((size + 512,), 0xFF, dtype=torch.uint8)
    f, spy = facade(FP4Q, release, sig)
    f(**kw, block_scale=big, is_sf_swizzled_layout=True)
    assert (big[:size][pad] == 0).all() and (big[size:] == 0xFF).all()
    # allocated: zeroed padding too, the release's dtype and size
    f, spy = facade(FP4Q, release, sig)
    _, got = f(**kw, is_sf_swizzled_layout=True)
    assert got.dtype == torch.float8_e4m3fn and got.shape == (size,)
    assert (_u8(got)[pad] == 0).all() and _u8(got)[~pad].equal(_u8(ref)[~pad])
    padded = bool(pad.any())
    emulated = padded and not at_least(place(release), "0.7.4")
    assert (spy.last["block_scale"] is not None) == emulated  # else FlashInfer allocates


def case_fp4quant_pdl(release: str, sig: Any = None) -> None:
    """``enable_pdl``: the release's own meaning from 0.6.8 (None/True: PDL where the
    device has it, 0.7.4's); dropped (no PDL) before."""
    for v in (None, True, False):
        f, spy = facade(FP4Q, release, sig)
        f(**_fp4q_args(), enable_pdl=v)
        sent = spy.raw_kwargs[-1]
        if at_least(place(release), "0.6.8"):
            assert "enable_pdl" in spy.signature.parameters
            assert sent.get("enable_pdl", None) is v
        else:
            assert "enable_pdl" not in spy.signature.parameters and "enable_pdl" not in sent


def case_fp4quant_gpus(release: str, sig: Any = None) -> None:
    """SM100+ served, older GPUs refused before any launch, on every release."""
    a = ENTRIES[FP4Q].select(Distribution("flashinfer-python", release, "<test>", ""))
    a.build(STUBS[FP4Q])
    for cc in ((10, 0), (10, 3), (12, 0)):
        a.ns["_DEV"] = frozenset()
        with assume_capability(cc):
            a.check_device(0)
    for cc, label in (((9, 0), "SM90"), ((8, 9), "SM89")):
        a.ns["_DEV"] = frozenset()
        with assume_capability(cc), pytest.raises(errors.UnsupportedDeviceError, match=label) as ei:
            a.check_device(0)
        assert "CuTe-DSL kernel for Blackwell" in str(ei.value)


def _fp4q_bad() -> list[tuple[dict[str, Any], str]]:
    bf = torch.bfloat16
    x = _fp4q_args()["input"]
    return [
        ({"input": torch.randn(5, 64)}, "float16 or bfloat16"),
        ({"weight": torch.ones(64)}, "weight must have input's dtype"),
        ({"weight": torch.ones(32, dtype=bf)}, "weight must be 1-D"),
        ({"input": torch.randn(64).to(bf)}, "input must be 2-D or 3-D"),
        ({"input": torch.randn(1, 2, 5, 64).to(bf)}, "input must be 2-D or 3-D"),
        ({"input": torch.randn(5, 48).to(bf), "weight": torch.ones(48, dtype=bf)}, "at least 64"),
        ({"input": torch.randn(5, 72).to(bf), "weight": torch.ones(72, dtype=bf)}, "multiple of"),
        (
            {
                "input": torch.randn(5, 80).to(bf),
                "weight": torch.ones(80, dtype=bf),
                "block_size": 32,
            },
            "multiple of",
        ),
        ({"block_size": 8}, "block_size must be 16"),
        ({"block_size": True}, "block_size must be 16"),
        ({"block_size": 16.0}, "block_size must be 16"),
        ({"scale_format": "fp8"}, "scale_format must be None"),
        ({"scale_format": "ue8m0"}, "needs block_size=32"),
        ({"is_sf_swizzled_layout": 1}, "must be a bool"),
        ({"y_fp4": torch.empty(5, 64, dtype=torch.uint8)}, "y_fp4 must be uint8"),
        ({"y_fp4": torch.empty(5, 32, dtype=bf)}, "y_fp4 must be uint8"),
        ({"y_fp4": torch.empty(32, 5, dtype=torch.uint8).t()}, "y_fp4 must be contiguous"),
        (
            {"block_scale": torch.empty(4, 5, dtype=torch.uint8).t()},
            "block_scale must be contiguous",
        ),
        ({"block_scale": torch.empty(5, 4, dtype=bf)}, "1-byte dtype"),
        ({"block_scale": torch.empty(5, 8, dtype=torch.uint8)}, "block_scale must have shape"),
        (
            {"block_scale": torch.empty(511, dtype=torch.uint8), "is_sf_swizzled_layout": True},
            "512 bytes",
        ),
        (
            {"global_scale": torch.tensor([1.0], dtype=torch.float16)},
            "global_scale must be a float32",
        ),
        ({"global_scale": torch.tensor(1.0)}, r"reshape\(1\)"),
        ({"global_scale": 1.0}, "global_scale must be"),
        (
            {
                "input": torch.empty(2**16, 2**15, dtype=bf, device="meta"),
                "weight": torch.empty(2**15, dtype=bf, device="meta"),
            },
            "fewer than 2\\*\\*31",
        ),
        (
            {"input": x.view(1, 5, 64), "y_fp4": torch.empty(5, 64, dtype=torch.uint8)},
            "y_fp4 must be",
        ),
        ({"y_fp4": torch.empty(1, 5, 32, dtype=torch.uint8)}, "y_fp4 must be"),
        (
            {"input": x.view(1, 5, 64), "block_scale": torch.empty(5, 2, dtype=torch.uint8)},
            "block_scale must have shape",
        ),
    ]


def case_fp4quant_bad_input(release: str, sig: Any = None) -> None:
    """Refused before the call (the spy sees nothing), the same error on every release."""
    for change, msg in _fp4q_bad():
        f, spy = facade(FP4Q, release, sig)
        with pytest.raises(errors.InvalidArgumentError, match=msg):
            f(**{**_fp4q_args(), **change})
        assert spy.calls == [], change


FP4Q_CASES = [case_fp4quant_calls, case_fp4quant_pdl, case_fp4quant_gpus, case_fp4quant_bad_input]


@pytest.mark.parametrize("case", FP4Q_CASES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("release", FP4Q_RELEASES)
def test_rmsnorm_fp4quant_on_every_release(case: Any, release: str) -> None:
    case(release)


@pytest.mark.parametrize(("rows", "hidden"), [(5, 80), (130, 64), (128, 64), (128, 80), (3, 96)])
@pytest.mark.parametrize("release", FP4Q_RELEASES)
def test_rmsnorm_fp4quant_swizzled_padding_is_zero_on_every_release(
    release: str, rows: int, hidden: int
) -> None:
    case_fp4quant_swizzled_padding(release, None, rows, hidden)


def test_rmsnorm_fp4quant_spy_knows_the_padding_difference() -> None:
    """The spy is the release's kernel: 0.7.2.post1 leaves the padding, 0.7.4 zeroes it
    (so the padding test above fails where fi_compat would not zero it)."""
    kw = _fp4q_args(5, 80)
    pad = _padding_mask(5, 5)
    for release, zero in (("0.7.2.post1", False), ("0.7.4", True)):
        sf = torch.full((pad.numel(),), 0xFF, dtype=torch.uint8)
        KernelSpy(FP4Q, release)(**kw, block_scale=sf, is_sf_swizzled_layout=True)
        assert bool((sf[pad] == 0).all()) is zero and bool((sf[pad] == 0xFF).all()) is not zero


def test_rmsnorm_fp4quant_entry_point() -> None:
    e = ENTRIES[FP4Q]
    assert e.since == "0.6.0"
    assert list(KNOWN_RELEASES[KNOWN_RELEASES.index("0.6.0") :]) == FP4Q_RELEASES
    assert e.params["enable_pdl"].since == "0.6.8" and e.params["enable_pdl"].hint
    sig = inspect.signature(norm.rmsnorm_fp4quant)
    assert list(sig.parameters)[:10] == [
        "input", "weight", "y_fp4", "block_scale", "global_scale", "eps", "block_size",
        "scale_format", "is_sf_swizzled_layout", "enable_pdl",
    ]  # fmt: skip
    assert FP4Q in norm.__all__


def _fake_flashinfer(root: Path, release: str) -> None:
    """A ``flashinfer`` whose ``cute_dsl.rmsnorm_fp4quant`` imports ``cutlass`` at the
    top, as every release's does."""
    pkg = root / "flashinfer"
    (pkg / "cute_dsl").mkdir(parents=True)
    (pkg / "__init__.py").write_text(f"__version__ = {release!r}\n")
    (pkg / "cute_dsl" / "__init__.py").write_text("")
    (pkg / "cute_dsl" / "rmsnorm_fp4quant.py").write_text(
        "import cutlass\ndef rmsnorm_fp4quant(*a, **k):\n    raise AssertionError('reached')\n"
    )


@pytest.mark.parametrize("release", FP4Q_RELEASES)
def test_rmsnorm_fp4quant_without_the_cute_dsl(
    release: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cutlass`` missing: OptionalDependencyMissingError naming nvidia-cutlass-dsl (an
    ImportError), raised by the first call, after the argument checks."""
    _fake_flashinfer(tmp_path, release)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "cutlass", None)  # not importable, whatever is installed
    for m in [m for m in sys.modules if m == "flashinfer" or m.startswith("flashinfer.")]:
        monkeypatch.delitem(sys.modules, m)
    try:
        a = ENTRIES[FP4Q].select(Distribution("flashinfer-python", release, "<test>", ""))
        f = a.build(STUBS[FP4Q])
        with pytest.raises(errors.InvalidArgumentError):
            f(**{**_fp4q_args(), "block_size": 8})  # checked before the import
        with pytest.raises(errors.OptionalDependencyMissingError) as ei:
            f(**_fp4q_args())
        err = ei.value
        assert isinstance(err, ImportError) and isinstance(err.__cause__, ModuleNotFoundError)
        # the cu12 / cu13 extras exist in the metadata from 0.6.8 (a plain dependency before)
        want_extra = "cu12" if at_least(place(release), "0.6.8") else None
        assert err.package == "nvidia-cutlass-dsl" and err.extra == want_extra
        assert ("[cu12]" in str(err)) == (want_extra is not None)
        assert "nvidia-cutlass-dsl" in str(err) and "flashinfer.cute_dsl.rmsnorm_fp4quant" in str(
            err
        )
    finally:
        for m in [m for m in sys.modules if m == "flashinfer" or m.startswith("flashinfer.")]:
            del sys.modules[m]
