"""One static suite over every registered entry point and every release of its range.

Driven by :func:`fi_compat._facades.entry_points` alone: a new entry point (a row in an
adapter module's ``ENTRIES``, a new facade module in ``FACADES``) is checked here with no
new test.  Each check reads the committed signature snapshots (``_snapshots/*.json``,
loaded once per process here) and the adapter fi_compat selects for each release:

* every forwarded name exists in the release, as a parameter that can go by keyword
  (never positional-only, never ``*args``), and every required parameter of the release
  is forwarded (a method's receiver is its first, positional, parameter);
* every stable parameter is present in the release, or absent with a policy that
  handles the absence (dropped at its default / a neutral value / as a hint, emulated,
  ``OMIT``, fi_compat's own);
* where the generated code leaves a forwarded parameter out of the call at its stable
  default (:func:`fi_compat._core.codegen._omittable`, ``EntryPoint.lean``), the
  release's own default is the stable one;
* the positional rule: the stub's positional parameters are
  :func:`fi_compat._core.facts.positional_rule`'s count;
* every stub annotation is a :class:`~fi_compat._core.table.Kind`, or an explicit ``Any``;
* importing every facade module imports neither torch nor FlashInfer.
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import run_python
from fi_compat import _snapshot_io as snapshots
from fi_compat._core import OMIT, REQUIRED, EntryPoint, codegen, enumtrans, facts
from fi_compat._core.adapter import Adapter
from fi_compat._core.classes import WrapperClass
from fi_compat._core.table import _split_top, parse_kind
from fi_compat._facades import FACADES, entry_points
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES, at_least, place
from support.spy import default_value

ENTRIES: dict[str, EntryPoint] = {e.dotted: e for e in entry_points()}
KEYWORD = ("pk", "ko")  # kinds fi_compat can pass by keyword


_SNAPSHOTS: dict[str, dict[str, Any]] = {}
_read = snapshots.load


def _cached_load(entry: EntryPoint) -> dict[str, Any]:
    key = str(snapshots.path_for(entry))
    if key not in _SNAPSHOTS:
        _SNAPSHOTS[key] = _read(entry)
    return _SNAPSHOTS[key]


@pytest.fixture(autouse=True, scope="module")
def _cached_snapshots() -> Iterator[None]:
    """Every snapshot JSON file parsed once (the checks only read them)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(snapshots, "load", _cached_load)
        yield


def releases(entry: EntryPoint) -> list[str]:
    """The releases fi_compat serves ``entry`` on: ``since`` up to ``until`` (excl.)."""
    lo = KNOWN_RELEASES.index(entry.since)
    hi = len(KNOWN_RELEASES) if entry.until is None else KNOWN_RELEASES.index(entry.until)
    return list(KNOWN_RELEASES[lo:hi])


def adapter_for(entry: EntryPoint, release: str) -> Adapter:
    return entry.select(Distribution("flashinfer-python", release, "<static>", ""))


def stub_of(entry: EntryPoint) -> Any:
    """The stub a facade module declares for ``entry``: a wrapper class's method (a
    :class:`WrapperClass` in the module), else the facade function's ``__wrapped__``."""
    mod = importlib.import_module(entry.facade)
    for value in list(vars(mod).values()):
        rows = value.values() if isinstance(value, dict) else (value,)
        for row in rows:
            if isinstance(row, WrapperClass):
                for stub, e in row.methods.values():
                    if e is entry:
                        return stub
    return getattr(mod, entry.name).__wrapped__


def release_params(entry: EntryPoint, release: str) -> list[list[Any]]:
    """The release's parameters without the receiver (checked to come first)."""
    params = snapshots.params(entry, release)
    assert params is not None, f"{entry.dotted}: no snapshot of {release} in its range"
    if entry.receiver is not None:
        assert params and params[0][0] == entry.receiver and params[0][1] in ("po", "pk"), (
            f"{entry.dotted} on {release}: the receiver {entry.receiver!r} is not the first "
            f"positional parameter ({params[:1]})"
        )
        params = params[1:]
    return params


def omitted_at_default(adapter: Adapter) -> set[str]:
    """Forwarded parameters the generated code leaves out of the call at their stable
    default (the tiers of :func:`fi_compat._core.codegen.build`)."""
    e = adapter.entry
    omit = {n for n in adapter.present if e.params[n].default is OMIT}
    hooks = codegen._hooks(adapter)
    hooked = {n for _em, _live, _checks, names in hooks for n in names}
    slow = {*adapter.absent, *hooked, *adapter.restricted, *omit}
    fast = codegen._fast_tests(hooks, {*adapter.absent, *adapter.restricted, *omit}, {})
    normalized = {n for _, outs, _ in adapter.normalizers for n in outs}
    later = {n for n in adapter.present if codegen._omittable(e, n) and not e.params[n].explicit}
    tail = {n for n in later if n not in slow and n not in normalized}
    return {n for n in later - omit if n in tail or (n in slow and n not in fast)}


def _same_default(stable: object, release: object) -> bool:
    if type(stable) is float and type(release) in (float, int):
        return math.isclose(stable, release, rel_tol=0, abs_tol=0) or stable == release
    if isinstance(stable, bool) or isinstance(release, bool):
        return type(stable) is type(release) and stable == release
    return stable is release or (type(stable) is type(release) and stable == release)


@pytest.mark.parametrize("dotted", list(ENTRIES))
def test_forwarded_names_exist_with_a_keyword_kind(dotted: str) -> None:
    e = ENTRIES[dotted]
    problems = []
    for release in releases(e):
        a = adapter_for(e, release)
        assert a.problem is None, (dotted, release, a.problem)
        params = release_params(e, release)
        kinds = {p[0]: p[1] for p in params if p[1] not in ("va", "vk")}
        sent = {a.spelling[n]: n for n in a.present}
        for rname, stable in sent.items():
            if rname not in kinds:
                problems.append(f"{release}: {stable} is sent as {rname!r}, which it lacks")
            elif kinds[rname] not in KEYWORD:
                problems.append(f"{release}: {rname} is {kinds[rname]}, sent by keyword")
        # a release parameter no stable one is sent to must have a default of its own
        for name, kind, default, _ann in params:
            if kind in ("va", "vk") or name in sent:
                continue
            if default is None:
                problems.append(f"{release}: required {name!r} is never sent")
    assert not problems, f"{dotted}:\n" + "\n".join(problems)


@pytest.mark.parametrize("dotted", list(ENTRIES))
def test_every_stable_parameter_is_present_or_handled_where_absent(dotted: str) -> None:
    e = ENTRIES[dotted]
    problems = []
    for name, p in e.params.items():
        if p.emulation is not None and name not in e.emulations[p.emulation].params:
            problems.append(f"{name}: names emulation {p.emulation!r}, which does not serve it")
        if p.own and p.emulation is None and not any(name in r.serves for r in e.results):
            problems.append(f"{name}: fi_compat's own, but nothing serves it")
        k = p.kind
        if k is not None and k.enum is None and not k.tensor:
            for v in p.neutral:  # a neutral value is a value the stable kind takes
                if not k.accepts(v, type(None)):
                    problems.append(f"{name}: neutral {v!r} is not {k.describe()}")
    for release in releases(e):
        a = adapter_for(e, release)
        have = {q[0] for q in release_params(e, release) if q[1] not in ("va", "vk")}
        for name in e.order:
            p = e.params[name]
            if name in a.present:
                assert a.spelling[name] in have, (dotted, release, name)
                continue
            # absent: what does a call that gives it do here?
            assert a.spelling.get(name) is None
            assert p.own or p.spelling(a.placement)[0] not in have, (
                f"{dotted}: {name} is in {release}'s signature but treated as absent"
            )
            served = any(name in em.params for em in e.emulations.values())
            served = served or name in a.result_serves or p.emulation is not None
            handled = (
                p.own
                or p.hint
                or served
                or p.default is OMIT
                or bool(p.neutral)
                or p.default is not REQUIRED  # dropped at its default
            )
            if not handled:
                problems.append(f"{release}: required {name} is absent and nothing serves it")
    assert not problems, f"{dotted}:\n" + "\n".join(problems)


@pytest.mark.parametrize("dotted", list(ENTRIES))
def test_parameters_left_out_at_their_default_mean_the_release_default(dotted: str) -> None:
    e = ENTRIES[dotted]
    problems = []
    for release in releases(e):
        a = adapter_for(e, release)
        if not (left_out := omitted_at_default(a)):
            continue
        defaults = {q[0]: q[2] for q in release_params(e, release)}
        for name in sorted(left_out):
            p = e.params[name]
            rname = a.spelling[name]
            src = defaults.get(rname)
            if src is None:
                # required there: a normaliser of this release must refuse the default
                # (``FlatPlanRequired``: optional only from 0.7.0), or a value_since row
                # that this release predates (the generated fast path tests it)
                since = (
                    p.value_since.get(p.default)
                    if p.default is not None or None in p.value_since
                    else None
                )
                refused = since is not None and not at_least(place(release), since)
                if not refused and not any(name in args for args, _outs, _fn in a.normalizers):
                    problems.append(f"{release}: {name} is left out, but {rname} is required")
                continue
            if p.hint:
                continue  # semantics-free: any value means the same
            release_default = default_value(src, release)
            stable = p.default
            if name in a.enums and stable is not None:
                stable = enumtrans.table(a, name, False).get(stable, stable)
            if not _same_default(stable, release_default):
                problems.append(
                    f"{release}: {name} is left out at {p.default!r}, but {rname}'s default "
                    f"there is {src} ({release_default!r})"
                )
    assert not problems, f"{dotted}:\n" + "\n".join(problems)


@pytest.mark.parametrize("dotted", list(ENTRIES))
def test_the_stub_follows_the_positional_rule(dotted: str) -> None:
    e = ENTRIES[dotted]
    n, why = facts.positional_rule(e)
    stub = stub_of(e)
    code = stub.__code__
    first = 1 if e.receiver is not None else 0
    assert code.co_argcount - first == n, (dotted, code.co_argcount - first, n, why)
    assert [p for p in e.order if not e.params[p].keyword_only] == list(e.order[:n])


@pytest.mark.parametrize("dotted", list(ENTRIES))
def test_every_annotation_is_a_kind_or_an_explicit_any(dotted: str) -> None:
    from fi_compat import enums

    e = ENTRIES[dotted]
    stub = stub_of(e)
    names = stub.__code__.co_varnames[: stub.__code__.co_argcount + stub.__code__.co_kwonlyargcount]
    first = 1 if e.receiver is not None else 0
    assert tuple(names[first:]) == e.order, dotted
    enum_names = frozenset(enums.__all__)
    for name in e.order:
        ann = stub.__annotations__.get(name)
        assert isinstance(ann, str), (dotted, name, ann)
        kind = parse_kind(ann, enum_names)  # raises for anything it cannot check
        p = e.params[name]
        if kind is None:
            assert p.kind is None
            parts = _split_top(ann.strip("'\""), "|")
            assert "Any" in parts or "object" in parts, (dotted, name, ann)
            continue
        assert p.kind is not None and p.kind.text == kind.text, (dotted, name)
        assert (kind.types, kind.tensor, kind.literals, kind.enum, kind.dtype) == (
            p.kind.types,
            p.kind.tensor,
            p.kind.literals,
            p.kind.enum,
            p.kind.dtype,
        ), (dotted, name)
        if p.default not in (REQUIRED, OMIT) and kind.enum is None and not kind.tensor:
            # the stable default is a value of the stable kind (a tensor default is None)
            assert kind.accepts(p.default, type(None)) or p.default is None, (dotted, name)


IMPORT_PROBE = """
import json, sys
from fi_compat._facades import FACADES, entry_points
import importlib
for name in FACADES:
    importlib.import_module("fi_compat." + name)
n = len(entry_points())
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "flashinfer"))
print(json.dumps({"heavy": heavy, "entries": n}))
"""


def test_importing_every_facade_module_imports_neither_torch_nor_flashinfer() -> None:
    r = run_python(IMPORT_PROBE, env={"FI_COMPAT_FLASHINFER_VERSION": KNOWN_RELEASES[-1]})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["heavy"] == [], out["heavy"]
    assert out["entries"] == len(ENTRIES)


def test_the_registry_names_every_adapter_module_once() -> None:
    adapters = [a for _fi, a in FACADES.values()]
    assert len(adapters) == len(set(adapters))
    assert len(ENTRIES) == len(entry_points())  # dotted names are unique


def test_the_default_check_catches_a_changed_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: a stable default that is not the release's is reported."""
    dotted = "fi_compat.sampling.sampling_from_probs"
    e = ENTRIES[dotted]
    a = adapter_for(e, releases(e)[-1])
    name = sorted(omitted_at_default(a))[0]
    monkeypatch.setattr(e.params[name], "default", "not-the-release-default")
    with pytest.raises(AssertionError, match="left out at"):
        test_parameters_left_out_at_their_default_mean_the_release_default(dotted)
