"""``fi_compat.utils`` on every release that has each helper, against each release's
snapshot signature: the engines' calls (SGLang ``device_support_pdl(q.device)``,
TRT-LLM / SGLang ``get_device_sm_count(device)``, SGLang
``get_trtllm_gen_multi_ctas_kv_counter_bytes(batch_size, num_qo_heads, sm_count)``,
vLLM / aphrodite ``FP4Tensor(data, scale, ...)``), positional and by keyword, reach
FlashInfer's function with the same values; before the first release the typed error."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from fi_compat import _snapshot_io as snapshots
from fi_compat import errors, utils
from fi_compat._adapters.utils import ALL_REEXPORTS, SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES, at_least, place
from support.spy import BindSpy, snapshot_signature, stub

FIRST = {
    "device_support_pdl": "0.2.7",
    "get_device_sm_count": "0.2.9",
    "get_trtllm_gen_multi_ctas_kv_counter_bytes": "0.6.15",
    "get_compute_capability": "0.2.0.post1",
    "is_sm100a_supported": "0.2.6",
}
# computed where the release lacks it (EntryPoint fallback), not refused
FALLBACK = {"is_sm100a_supported"}
# the engines' arguments, positionally (every call site passes them so)
ARGS: dict[str, tuple[Any, ...]] = {
    "device_support_pdl": ("cuda:0",),
    "get_device_sm_count": ("cuda:1",),
    "get_trtllm_gen_multi_ctas_kv_counter_bytes": (8, 32, 132),
    "get_compute_capability": ("cuda:0",),
    "is_sm100a_supported": ("cuda:0",),
}


class Echo(BindSpy):
    def result(self, a: dict[str, Any]) -> Any:
        return dict(a)


def _releases(name: str) -> list[str]:
    rel = snapshots.load(SPECS[name])["releases"]
    return [r for r, v in rel.items() if v is not None]


CELLS = [(n, r) for n in SPECS for r in _releases(n)]


@pytest.mark.parametrize(("name", "release"), CELLS)
def test_calls_reach_flashinfer_by_the_release_signature(name: str, release: str) -> None:
    e = SPECS[name]
    a = e.select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(utils, name))
    spy = Echo(snapshot_signature(release, e))
    a._set_target(spy)
    kw = dict(zip(e.order, ARGS[name], strict=True))
    assert f(*ARGS[name]) == kw
    assert f(**kw) == kw


@pytest.mark.parametrize("name", list(SPECS))
def test_first_release_and_typed_error_before(name: str) -> None:
    e = SPECS[name]
    assert e.since == FIRST[name]
    assert _releases(name) == list(KNOWN_RELEASES[KNOWN_RELEASES.index(FIRST[name]) :])
    if FIRST[name] == KNOWN_RELEASES[0] or name in FALLBACK:
        return  # on every release / computed before (test_is_sm100a_supported_before_0_2_6)
    before = KNOWN_RELEASES[KNOWN_RELEASES.index(FIRST[name]) - 1]
    a = e.select(Distribution("flashinfer-python", before, "<test>", ""))
    f = a.build(stub(utils, name))
    with pytest.raises(errors.UnsupportedFlashInferVersionError, match=FIRST[name]):
        f(*ARGS[name])


def test_fp4_tensor_is_flashinfer_class_from_0_2_9(monkeypatch: pytest.MonkeyPatch) -> None:
    """``FP4Tensor`` is FlashInfer's own class from 0.2.9 (its constructor one signature
    on every release, the snapshot says), a typed error before."""
    (row,) = ALL_REEXPORTS
    assert row.name == "FP4Tensor" and row.since == "0.2.9"
    rel = snapshots.load(row)["releases"]  # type: ignore[arg-type]
    assert {v["signature"] for v in rel.values() if v is not None} == {"s0"}
    pkg = types.ModuleType("flashinfer")
    pkg.__path__ = []
    mod = types.ModuleType("flashinfer.utils")
    mod.FP4Tensor = type("FP4Tensor", (), {})  # type: ignore[attr-defined]
    pkg.utils = mod  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "flashinfer", pkg)
    monkeypatch.setitem(sys.modules, "flashinfer.utils", mod)
    for release in ("0.2.8", "0.2.9", "0.7.4"):
        dist = Distribution("flashinfer-python", release, "<override>", "")
        if at_least(place(release), "0.2.9"):
            assert row.resolve(dist) is mod.FP4Tensor
        else:
            with pytest.raises(errors.UnsupportedFlashInferVersionError, match=r"0\.2\.9"):
                row.resolve(dist)


@pytest.mark.parametrize(
    ("cc", "cuda", "expected"),
    [
        ((10, 0), "12.8", True),
        ((10, 3), "13.0", True),
        ((10, 0), "12.6", False),
        ((9, 0), None, False),
    ],
)
def test_is_sm100a_supported_before_0_2_6(
    monkeypatch: pytest.MonkeyPatch, cc: tuple[int, int], cuda: str | None, expected: bool
) -> None:
    """0.2.0.post1-0.2.5 lack ``is_sm100a_supported``: the facade computes it as
    0.2.7-0.7.4 ``flashinfer/utils.py`` do (``major == 10`` and torch's CUDA >= 12.8,
    the version read only for major 10), never importing FlashInfer."""
    import torch

    e = SPECS["is_sm100a_supported"]
    asked: list[int | None] = []
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda i=None: asked.append(i) or cc)
    monkeypatch.setattr(torch.version, "cuda", cuda)
    for release in ("0.2.0.post1", "0.2.5"):
        a = e.select(Distribution("flashinfer-python", release, "<test>", ""))
        assert a.problem == "fallback"
        f = a.build(stub(utils, "is_sm100a_supported"))
        assert f(torch.device("cuda", 1)) is expected
        assert f(device=torch.device("cuda", 1)) is expected
    assert asked == [1, 1, 1, 1]
    with pytest.raises(ValueError, match="cuda device"):  # get_compute_capability's check
        f(torch.device("cpu"))


def test_a_first_call_on_the_fast_path_warms_the_facade(monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper without checks never runs the general path: its first call resolves
    FlashInfer's function through the trampoline, which prepares the facade too, so the
    next calls run the mode's code, not the cold variant (2 us more per call)."""
    from fi_compat._core import resolve

    name = "get_trtllm_gen_multi_ctas_kv_counter_bytes"
    e = SPECS[name]
    a = e.select(Distribution("flashinfer-python", "0.7.4", "<test>", ""))
    f = a.build(stub(utils, name))
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(resolve, "import_target", lambda _a: lambda *x: calls.append(x) or 8)
    assert not a.warm and "first call" in f.__code__.co_filename
    assert f(8, 32, 132) == 8 and a.warm
    assert "first call" not in f.__code__.co_filename
    assert f(8, 32, 132) == 8 and calls == [(8, 32, 132)] * 2
