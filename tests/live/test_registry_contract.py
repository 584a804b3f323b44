"""Every facade in the one registry (``fi_compat._facades.FACADES``) against the release
of the cell: its FlashInfer module imports (or fails the documented way), each entry
point the release has resolves to the real function, whose live signature is the
snapshot's, and the facade's adapter forwards exactly the live parameters."""

from __future__ import annotations

import importlib
import inspect
import os

import pytest

from fi_compat import _snapshot_io as snapshots
from fi_compat import errors
from fi_compat._facades import FACADES, entry_points
from fi_compat.detection import Distribution
from fi_compat.registry import place
from support.spy import snapshot_signature

CELL = os.environ.get("FI_COMPAT_CELL")
EXPECT = os.environ.get("FI_COMPAT_CELL_EXPECT", "live")
pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(CELL is None, reason="no FlashInfer release cell (run tools/matrix.py)"),
]


@pytest.mark.parametrize("module", list(FACADES))
def test_every_registered_entry_point_resolves_to_its_snapshot(module: str) -> None:
    assert CELL is not None
    checked = explained = 0
    here = [e for e in entry_points(module) if e.exists_in(place(CELL))]
    if not here:
        pytest.skip(f"fi_compat.{module} has no entry point in flashinfer-python {CELL}")
    for e in here:
        a = e.select(Distribution("flashinfer-python", CELL, "<cell>", ""))
        try:
            fn = a.resolve()
        except errors.OptionalDependencyMissingError as exc:
            # an optional package the release's module imports unguarded (the table says)
            deps = e.optional_dependencies(place(CELL))
            assert any(d.package in str(exc) for d in deps), (module, e.name, exc)
            pytest.skip(f"flashinfer-python {CELL}'s {e.module} needs {exc.package}")
        except errors.FlashInferImportError as exc:
            # the documented import outcomes of this cell (tools/matrix.py WHAT), or a
            # known issue of the entry point's module on this host (_issues.py)
            assert EXPECT != "live" or module != "fused_moe", (module, e.name)
            explained += any(f"known issue {i.id}" in str(exc) for i in e.issues(place(CELL)))
            continue
        via = (snapshots.load(e)["releases"][CELL] or {}).get("via")
        if via is not None:  # a **kwargs forwarder (0.6.15+ decode plan): its target
            fn = getattr(importlib.import_module(fn.__module__), e.attr.split(".")[0])
            fn = getattr(fn, via)
        live = inspect.signature(fn)
        snap = snapshot_signature(CELL, e)
        assert [(p.name, p.kind) for p in live.parameters.values()] == [
            (p.name, p.kind) for p in snap.parameters.values()
        ], e.name
        forwarded = {a.spelling[n] for n in a.present}
        named = {
            p.name: p
            for p in live.parameters.values()
            if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name != e.receiver
        }
        # every stable parameter the release has, by its name there; a parameter of the
        # release no stable one maps to (0.2.0.post1's jit_module) is optional
        assert forwarded <= set(named), (e.name, forwarded - set(named))
        assert all(named[n].default is not named[n].empty for n in set(named) - forwarded)
        checked += 1
    if EXPECT == "live":
        assert checked or explained, module
