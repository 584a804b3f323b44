"""``fi_compat.norm`` / ``fi_compat.activation`` against the release of the cell: each
function resolves to FlashInfer's own, and the call cases of the static suite run with
the innermost call replaced by a spy bound to ``inspect.signature`` of that function."""

from __future__ import annotations

import inspect
import os

import pytest

from fi_compat import errors
from fi_compat._device import assume_capability
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.elementwise_cases import (
    ENTRIES,
    FP4Q,
    FP4Q_CASES,
    QK,
    _args,
    _pdl_effect,
    case_fp4quant_swizzled_padding,
    facade,
    newest_pdl,
)
from support.live import CELL, EXPECT, MARKS

pytestmark = MARKS


@pytest.mark.parametrize("name", list(ENTRIES))
def test_live_calls_bind_and_mean_the_same(name: str) -> None:
    assert CELL is not None
    e = ENTRIES[name]
    if not at_least(place(CELL), e.since):
        pytest.skip(f"{name} is not in flashinfer-python {CELL}")
    a = e.select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    expect = EXPECT
    dsl = os.environ.get("FI_COMPAT_CELL_DSL") == "1"
    if name in (FP4Q, QK) and not dsl and expect != "cubin-mismatch":
        # every release imports cutlass at the top of flashinfer.cute_dsl.rmsnorm_fp4quant
        # and of flashinfer.norm.kernels (qk_rmsnorm_cute)
        with pytest.raises(errors.OptionalDependencyMissingError) as ei:
            a.resolve()
        assert ei.value.package == "nvidia-cutlass-dsl" and "nvidia-cutlass-dsl" in str(ei.value)
        return
    try:
        real = a.resolve()
    except errors.FlashInferImportError as exc:  # the cell's documented import outcome
        assert EXPECT != "live", exc
        pytest.skip(f"{e.module} does not import here: {exc}")
    sig = inspect.signature(real)
    f, spy = facade(name, CELL, sig)
    f(**_args(name))
    f2, spy2 = facade(name, CELL, sig)
    f2(*_args(name).values())
    assert spy.calls and spy2.calls
    if name in ("layernorm", QK):  # no enable_pdl / a bool passed as it is (static suite)
        return
    for cc in ((8, 0), (9, 0)):
        for v in (None, True, False):
            f, spy = facade(name, CELL, sig)
            with assume_capability(cc):
                f(**_args(name), enable_pdl=v)
            sent = spy.raw_kwargs[-1]
            if "enable_pdl" not in sig.parameters:
                assert not at_least(place(CELL), "0.6.8" if name == FP4Q else "0.2.3")
                assert "enable_pdl" not in sent
                continue
            newest = newest_pdl(name, v, cc)
            assert _pdl_effect(name, CELL, sent, cc) == newest, (cc, v, sent)


def _fp4q_signature() -> inspect.Signature:
    assert CELL is not None
    if not at_least(place(CELL), ENTRIES[FP4Q].since):
        pytest.skip(f"{FP4Q} is not in flashinfer-python {CELL}")
    if os.environ.get("FI_COMPAT_CELL_DSL") != "1":
        pytest.skip("no nvidia-cutlass-dsl here (test_live_calls_bind_and_mean_the_same checks)")
    a = ENTRIES[FP4Q].select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    return inspect.signature(a.resolve())


@pytest.mark.parametrize("case", FP4Q_CASES, ids=lambda c: c.__name__)
def test_rmsnorm_fp4quant_live(case: object) -> None:
    """The static suite's rmsnorm_fp4quant cases against the live signature."""
    sig = _fp4q_signature()
    assert CELL is not None
    case(CELL, sig)  # type: ignore[operator]


@pytest.mark.parametrize(("rows", "hidden"), [(5, 80), (130, 64), (128, 64)])
def test_rmsnorm_fp4quant_live_swizzled_padding(rows: int, hidden: int) -> None:
    sig = _fp4q_signature()
    assert CELL is not None
    case_fp4quant_swizzled_padding(CELL, sig, rows, hidden)
