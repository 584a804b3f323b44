"""``fi_compat.autotuner`` on every release, shared by the static suite (a spy bound to
the release's snapshot signature) and the live contract (the installed release)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from fi_compat import _snapshot_io as snapshots
from fi_compat import autotuner, errors
from fi_compat._adapters.autotuner import ALL_REEXPORTS, SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES, at_least, place
from support.spy import BindSpy, snapshot_signature, stub

AUTOTUNE = SPECS["autotune"]
OPTIONS = {
    "cache": ("0.6.7", "tactics.json"),
    "tuning_buckets": ("0.6.9", (64, 128)),
    "round_up": ("0.6.9", True),
    "skip_ops": ("0.6.13", {"fp4_gemm"}),
    "cuda_graph_profile_replays": ("0.7.0", 2),
    "tie_tolerance": ("0.7.4", 0.05),
}


class ContextSpy(BindSpy):
    """FlashInfer's ``autotune``: binds the call, returns a context manager that records
    being entered."""

    def __init__(self, signature: Any) -> None:
        super().__init__(signature)
        self.entered = 0

    def result(self, a: dict[str, Any]) -> Any:
        @contextlib.contextmanager
        def ctx() -> Iterator[None]:
            self.entered += 1
            yield

        return ctx()


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, Any, Any]:
    e = SPECS[name]
    a = e.select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(autotuner, name))
    spy = None
    if a.problem is None:
        spy = ContextSpy(signature or snapshot_signature(release, e))
        a._set_target(spy)
    return f, spy, a


def case_autotune(release: str, sig: Any = None) -> None:
    """0.2.6+: FlashInfer's context manager, options a release lacks dropped at None and
    refused otherwise (naming their first release); before 0.2.6: a no-op context
    manager with the same refusals."""
    pl = place(release)
    f, spy, a = facade("autotune", release, sig)
    if not at_least(pl, "0.2.6"):
        assert a.problem == "fallback" and spy is None
        with f() as got, f(False) as got2, f(tune_mode=True, cache=None):
            assert got is None and got2 is None  # nullcontext(): nothing to tune
    else:
        with f():
            pass
        assert spy is not None and spy.entered == 1
        assert spy.raw_kwargs[-1] == {"tune_mode": True}  # the options at None: left out
        with f(False):
            pass
        assert spy.raw_kwargs[-1]["tune_mode"] is False
    for name, (since, value) in OPTIONS.items():
        if at_least(pl, since):
            assert spy is not None
            with f(**{name: value}):
                pass
            assert spy.raw_kwargs[-1][name] == value
        else:
            with pytest.raises(errors.UnsupportedParameterError, match=since.replace(".", r"\.")):
                f(**{name: value})
            with f(**{name: None}):  # None inherits: the release's behaviour anyway
                pass
    with pytest.raises(TypeError):
        f(no_such_option=1)


def case_set_autotune_process_group(release: str, sig: Any = None) -> None:
    f, spy, _ = facade("set_autotune_process_group", release, sig)
    if not at_least(place(release), "0.6.16"):
        with pytest.raises(errors.UnsupportedFlashInferVersionError, match=r"0\.6\.16"):
            f(None)
        return
    assert spy is not None
    f(None)
    assert spy.raw_kwargs[-1] == {"group": None}


CASES = [case_autotune, case_set_autotune_process_group]
RELEASES = list(KNOWN_RELEASES)


def reexport_first(name: str) -> str:
    """The first release whose snapshot has the class (before any floor)."""
    r = next(x for x in ALL_REEXPORTS if x.name == name)
    rel = snapshots.DIR / f"autotuner.{r.attr}.json"
    import json

    data = json.loads(rel.read_text())
    return next(v for v in KNOWN_RELEASES if data["releases"].get(v) is not None)
