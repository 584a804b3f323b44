"""Call cases of ``fi_compat.concat_ops``, shared by the static suite (every release
0.6.0-0.7.4, spy bound to the snapshot signature) and the live contract (spy bound to
``inspect.signature`` of the installed function).  The spy writes ``k`` as the kernel
does (``[k_nope | k_rope]``, ``k_rope`` broadcast over the heads), so the facade's
in-place result is compared."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import concat_ops, errors
from fi_compat._adapters.concat_ops import FP8_SINCE, SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

TOKENS, HEADS, NOPE, ROPE = 3, 128, 128, 64


class ConcatSpy(BindSpy):
    def __init__(self, name: str, release: str, signature: Any = None) -> None:
        super().__init__(signature or snapshot_signature(release, SPECS[name]))
        self.name, self.release = name, release

    def result(self, a: dict[str, Any]) -> Any:
        a["k"][:, :, :NOPE] = a["k_nope"]
        a["k"][:, :, NOPE:] = a["k_rope"]
        return None


def releases(name: str) -> list[str]:
    e = SPECS[name]
    rel = snapshots.load(e)["releases"]
    return [r for r, v in rel.items() if v is not None and at_least(place(r), e.since)]


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, ConcatSpy]:
    a = SPECS[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(concat_ops, name))
    spy = ConcatSpy(name, release, signature)
    a._set_target(spy)
    return f, spy


def args(name: str, dtype: torch.dtype = torch.bfloat16) -> dict[str, Any]:
    g = torch.Generator().manual_seed(0)
    return {
        "k": torch.zeros(TOKENS, HEADS, NOPE + ROPE, dtype=dtype),
        "k_nope": torch.randn(TOKENS, HEADS, NOPE, generator=g).to(dtype),
        "k_rope": torch.randn(TOKENS, 1, ROPE, generator=g).to(dtype),
    }


def case_calls_bind_and_write_k(name: str, release: str, sig: Any = None) -> None:
    """Keyword and positional calls reach FlashInfer by keyword with the caller's
    tensors (``k`` written in place, nothing returned)."""
    for dtype in (torch.float16, torch.bfloat16):
        for call in ("kw", "pos"):
            kw = args(name, dtype)
            want = torch.cat([kw["k_nope"], kw["k_rope"].expand(-1, HEADS, -1)], dim=-1)
            f, spy = facade(name, release, sig)
            assert (f(**kw) if call == "kw" else f(*kw.values())) is None
            assert all(spy.raw_kwargs[-1][n] is v for n, v in kw.items())
            assert torch.equal(kw["k"], want)


def case_backend_of_0_7_0(name: str, release: str, sig: Any = None) -> None:
    """``backend`` (keyword-only, 0.7.0): ``"default"`` is what older releases always
    run (left out there); ``"cake"`` is refused before 0.7.0, naming it."""
    kw = args(name)
    f, spy = facade(name, release, sig)
    f(**kw, backend="default")
    if at_least(place(release), "0.7.0"):
        assert spy.raw_kwargs[-1].get("backend", "default") == "default"
        f(**kw, backend="cake")
        assert spy.raw_kwargs[-1]["backend"] == "cake"
    else:
        assert "backend" not in spy.raw_kwargs[-1]
        with pytest.raises(errors.UnsupportedParameterError, match=r"0\.7\.0"):
            f(**kw, backend="cake")
        assert len(spy.calls) == 1


def case_fp8_from_0_6_11(name: str, release: str, sig: Any = None) -> None:
    """fp8 ``k`` (e4m3fn / e5m2): dispatched from 0.6.11, refused before it (naming
    0.6.11) where the kernel takes float16 / bfloat16 only."""
    for dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        kw = {n: t.to(dtype) for n, t in args(name, torch.float32).items()}
        f, spy = facade(name, release, sig)
        if at_least(place(release), FP8_SINCE):
            f(**kw)
            assert spy.raw_kwargs[-1]["k"] is kw["k"]
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=r"0\.6\.11"):
                f(**kw)
            assert spy.calls == []


def case_bad_input_is_refused(name: str, release: str, sig: Any = None) -> None:
    """The one MLA shape every release's kernel checks (csrc/concat_mla.cu), one dtype,
    refused before the call."""
    kw = args(name)
    f, spy = facade(name, release, sig)
    bf = torch.bfloat16
    bad: list[tuple[dict[str, Any], str]] = [
        ({"k": torch.zeros(TOKENS, 64, NOPE + ROPE, dtype=bf)}, "heads"),
        ({"k_nope": kw["k_nope"].half()}, "k_nope"),
        ({"k_rope": torch.zeros(TOKENS, 2, ROPE, dtype=bf)}, "k_rope"),
        ({"k": torch.zeros(TOKENS, HEADS, 256, dtype=bf)}, "kdim"),
        ({"k": torch.zeros(TOKENS, HEADS, NOPE + ROPE)}, "k"),
        ({"k_nope": torch.zeros(TOKENS, HEADS, 2 * NOPE, dtype=bf)[:, :, ::2]}, "k_nope"),
        ({"k_rope": kw["k_rope"][:2]}, "k_rope"),
    ]
    for change, msg in bad:
        with pytest.raises(errors.InvalidArgumentError, match=msg):
            f(**{**kw, **change})
    assert spy.calls == []


CASES = [
    case_calls_bind_and_write_k,
    case_backend_of_0_7_0,
    case_fp8_from_0_6_11,
    case_bad_input_is_refused,
]
