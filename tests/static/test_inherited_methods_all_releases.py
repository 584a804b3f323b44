"""FlashInfer's own methods on the stable wrapper subclasses, on every release 0.2.0.post1-
0.7.4 (the audit: ``docs/wrappers.md``, from ``tests/support/internal_calls.json``).

The stable subclasses override ``plan`` / ``run`` (and ``begin_forward``,
``run_return_lse``, ``end_forward``, cascade's ``forward``); FlashInfer's ``forward`` /
``forward_return_lse`` stay FlashInfer's and call ``self.run`` / ``self.run_return_lse``
in their own release's convention.  Each is run here as the release wrote it (its
statements, read from the wheel or sdist) on the stable subclass of a stand-in of the
release's class, with ``run`` a spy bound to the release's signature; what the spy gets
must be what the release's own ``run`` gets from that call (bound against the release's
signature), the state the method writes on ``self`` must be written, and the result is
the stable one."""

from __future__ import annotations

import pytest
import torch

from fi_compat import errors
from fi_compat._core.classes import inherited_callers
from fi_compat.registry import KNOWN_RELEASES
from support.attention_cases import PAGED
from support.inherited import (
    DATA,
    ROWS,
    assert_release_meaning,
    call_for,
    callers,
    cells,
    ranges,
    record,
    release_call,
    scales_ignored,
    stable,
    stable_names,
    stand_in,
)

RANGES = ranges()


def _span(rs: list[str]) -> str:
    return rs[0] if len(rs) == 1 else f"{rs[0]}..{rs[-1]}"


def _first_of_each_record() -> list[tuple[str, str]]:
    """(class, release): the first release of each distinct audit record of a class."""
    seen: set[tuple[str, str]] = set()
    out = []
    for c, by_release in DATA["classes"].items():
        for r, rid in by_release.items():
            if rid is not None and (c, rid) not in seen:
                seen.add((c, rid))
                out.append((c, r))
    return out


@pytest.mark.parametrize(("cls", "release"), _first_of_each_record())
def test_inherited_callers_are_exactly_the_audited_ones(cls: str, release: str) -> None:
    """The subclass wraps the inherited methods whose bytecode calls a name it binds:
    the same set the static read of the release's source finds (one release per
    distinct record of the class; the records cover all 74); and none of the methods
    it overrides calls such a name on ``self`` (their only such call is ``super()``'s,
    which resolves among FlashInfer's classes), so the stable targets need no view."""
    stable_cls, _ = stable(cls, release)
    assert set(stable_cls._fi_compat_inside) == callers(cls, release)  # type: ignore[attr-defined]
    rec = record(cls, release)
    assert rec is not None
    for name, r in rec.items():
        if name in stable_names(cls) and "calls" in r:
            assert all(c.startswith("super().") for c in r["calls"]), (cls, name, r["calls"])
    # the bytecode reading agrees with the source reading on the stand-in's own methods
    base = stand_in(cls, release)
    assert set(inherited_callers(base, set(stable_names(cls)))) == callers(cls, release)


@pytest.mark.parametrize(
    ("cls", "method", "releases"),
    RANGES,
    ids=[f"{c}.{m}-{_span(rs)}" for c, m, rs in RANGES],
)
def test_inherited_method_keeps_its_release_meaning(
    cls: str, method: str, releases: list[str]
) -> None:
    """One test per (class, method, run of releases with the same method): on each
    release, the release's own method on the stable instance reaches the stable ``run``,
    bound by the release's signature; the spy standing in for the release's ``run``
    receives what that ``run`` receives from the method on the release itself (the
    0.2.0.post1-0.2.8 paged ``forward_return_lse`` positional scales: as 0.2.9+ pass them)."""
    for release in releases:
        rec = record(cls, release)
        assert rec is not None
        stable_cls, spies = stable(cls, release)
        base = stable_cls.__mro__[1]
        call_args, call_kw = call_for(cls, method, rec[method]["params"])
        if scales_ignored(cls, release):
            call_kw["v_scale"] = None  # refused there (see the next test)
        target, want, state = release_call(cls, release, getattr(base, method), call_args, call_kw)
        assert target == "run", (cls, method, release)
        w = object.__new__(stable_cls)
        res = getattr(w, method)(*call_args, **call_kw)
        assert type(w) is stable_cls  # switched back
        if want.get("args"):  # the release puts the scales into run's *args
            assert want["args"] == (call_kw["k_scale"], call_kw["v_scale"])
        assert_release_meaning(cls, release, w, spies["run"], want, state, res, call_args[0])


@pytest.mark.parametrize("method", ["forward", "forward_return_lse"])
def test_inherited_paged_v_scale_on_0_2_10_is_refused_as_from_run(method: str) -> None:
    """0.2.10 never applies ``v_scale`` in paged prefill: the stable ``run`` refuses it
    before the launch, also when FlashInfer's own method passes it (the same typed error
    as a direct ``run`` call)."""
    cls, release = PAGED, "0.2.10"
    stable_cls, spies = stable(cls, release)
    rec = record(cls, release)
    assert rec is not None
    call_args, call_kw = call_for(cls, method, rec[method]["params"])
    w = object.__new__(stable_cls)
    with pytest.raises(errors.InvalidArgumentError, match="v_scale"):
        getattr(w, method)(*call_args, **call_kw)
    assert type(w) is stable_cls and spies["run"].calls == []


@pytest.mark.parametrize("release", [r for r in KNOWN_RELEASES if record(PAGED, r) is not None])
def test_inherited_sglang_extend_forward_return_lse(release: str) -> None:
    """SGLang's extend path (0.2.5-era ``flashinfer_backend.py``):
    ``prefill_wrapper_paged.forward_return_lse(q, kv, causal=False, sm_scale=s,
    window_left=w, logits_soft_cap=c)``.  FlashInfer 0.2.0.post1-0.2.8 call
    ``self.run_return_lse(q, paged_kv_cache, k_scale, v_scale)`` from it, four positional
    arguments the frozen ``run`` refused (``PositionalMismatchError``); now ``(out, lse)``
    on every release, with the arguments where the release's ``run`` reads them."""
    stable_cls, spies = stable(PAGED, release)
    w = object.__new__(stable_cls)
    from support.attention_cases import args

    kw = args(f"{PAGED}.run")
    q, kv = kw["q"], kw["paged_kv_cache"]
    out, lse = w.forward_return_lse(
        q, kv, causal=False, sm_scale=0.0883, window_left=-1, logits_soft_cap=30.0
    )
    got = spies["run"].last
    assert got["return_lse"] is True and got["q"] is q and got["paged_kv_cache"] is kv
    assert got["k_scale"] is None and got["v_scale"] is None
    assert (w._causal, w._sm_scale, w._window_left, w._logits_soft_cap) == (
        False,
        0.0883,
        -1,
        30.0,
    )
    assert tuple(out.shape[:2]) == tuple(q.shape[:2])
    assert lse.dtype == torch.float32 and tuple(lse.shape) == tuple(q.shape[:2])


def test_inherited_user_calls_still_bind_by_the_frozen_signature() -> None:
    """Only FlashInfer's own methods get the release view: the same four positional
    arguments from user code are still the frozen ``run``'s typed error, on 0.2.5 as
    everywhere, and the class is the stable one again after an inherited call."""
    stable_cls, spies = stable(PAGED, "0.2.5")
    w = object.__new__(stable_cls)
    from support.attention_cases import args

    kw = args(f"{PAGED}.run")
    w.forward_return_lse(kw["q"], kw["paged_kv_cache"])
    assert type(w) is stable_cls
    with pytest.raises(errors.PositionalMismatchError):
        w.run_return_lse(kw["q"], kw["paged_kv_cache"], 1.5, 0.75)
    with pytest.raises(errors.PositionalMismatchError):
        w.run(kw["q"], kw["paged_kv_cache"], 1.5, 0.75)
    assert len(spies["run"].calls) == 1  # the inherited call only; nothing launched after


def test_inherited_view_is_left_on_error_and_kept_for_subclasses() -> None:
    """An error inside FlashInfer's method leaves the instance's class as it was; a
    user's subclass keeps its own methods in the view (FlashInfer's method reaches the
    stable ``run``, the rest of the subclass stays)."""
    stable_cls, spies = stable(PAGED, "0.6.7")

    class Mine(stable_cls):  # type: ignore[misc, valid-type]
        def helper(self) -> str:
            return "mine"

    from support.attention_cases import args

    kw = args(f"{PAGED}.run")
    w = object.__new__(Mine)
    out = w.forward(kw["q"], kw["paged_kv_cache"], causal=True)
    assert type(w) is Mine and spies["run"].last["q"] is kw["q"] and w._causal is True
    view = stable_cls._fi_compat_views[Mine]
    assert issubclass(view, Mine) and view.helper is Mine.helper
    assert isinstance(out, torch.Tensor)
    with pytest.raises(errors.InvalidArgumentError):
        w.forward(kw["q"][0], kw["paged_kv_cache"])  # a 2-D q: the stable run's check
    assert type(w) is Mine


@pytest.mark.parametrize(("installed", "written"), [("0.2.5", "0.7.4"), ("0.7.4", "0.2.5")])
def test_inherited_methods_of_a_written_for_class_bind_by_the_installed_release(
    installed: str, written: str
) -> None:
    """``fi_compat.written_for(X)``'s class binds the user's calls as X does; FlashInfer's
    own methods are the installed release's code and bind by the installed release,
    whatever X is."""
    from fi_compat._core.written import written_class
    from support.attention_cases import args

    stable_cls, spies = stable(PAGED, installed)
    cls = written_class(stable_cls, written)
    kw = args(f"{PAGED}.run")
    w = object.__new__(cls)
    out, lse = w.forward_return_lse(kw["q"], kw["paged_kv_cache"], k_scale=1.5, v_scale=0.75)
    assert out.shape[:2] == kw["q"].shape[:2] and lse.shape == kw["q"].shape[:2]
    got = spies["run"].last
    assert (got["k_scale"], got["v_scale"], got["return_lse"]) == (1.5, 0.75, True)
    assert type(w) is cls and issubclass(stable_cls._fi_compat_views[cls], cls)


def test_inherited_aliases_and_partialmethods_are_the_stable_ones() -> None:
    """FlashInfer's class-body ``begin_forward = plan`` and ``run_return_lse =
    functools.partialmethod(run, return_lse=True)`` name the base's ``plan`` / ``run``
    (FlashInfer's, unadapted); the subclass binds both names itself, on every release
    and class that has them: the stable ``plan``, and ``self.run(..., return_lse=True)``."""
    for cls, row in ROWS.items():
        releases = [r for r in KNOWN_RELEASES if record(cls, r) is not None]
        for release in releases:
            rec = record(cls, release)
            assert rec is not None
            for name, r in rec.items():
                if "alias_of" in r or "partialmethod" in r:
                    assert name in stable_names(cls), (cls, release, name)
        stable_cls, _ = stable(cls, releases[-1])  # the rows are per class, not release
        for old, new in row.aliases.items():
            assert stable_cls.__dict__[old] is stable_cls.__dict__[new], (cls, old)
        if "run_return_lse" in row.extra:
            assert stable_cls.__dict__["run_return_lse"] is row.extra["run_return_lse"]


def test_the_audit_table_in_docs_is_current() -> None:
    import subprocess
    import sys

    from conftest import ROOT

    r = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "internal_calls.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=str(ROOT),
    )
    assert r.returncode == 0, r.stderr


def test_every_release_and_wrapped_class_is_audited() -> None:
    assert set(DATA["classes"]) == set(ROWS)
    for cls, by_release in DATA["classes"].items():
        assert list(by_release) == list(KNOWN_RELEASES), cls
    assert len(cells()) > 0
