"""The call path shared by every facade: parameter tables, adapters, generated callers.

An entry point is described by data (:class:`EntryPoint`): the FlashInfer module and
function, its first release, and one :class:`Param` row per parameter of the stable
signature saying in which release it appeared, which values mean "as if absent", which
values need a newer release, which integer index tensors have a native dtype per release
range, and which :class:`Emulation` hook can stand in where the release lacks it.  The
stable signature itself is written once, as a typed stub in the facade module; its
order and defaults are read from the stub's code object (no ``inspect`` at import).

From that data and the detected release, :class:`Adapter` builds the facade function at
import time, as generated Python source with the stub's exact signature:

* a **fast path** taken when every parameter the release lacks (or restricts) is at its
  default, index tensors already have the release's native dtype and no extra keyword
  arguments were given: run the metadata checks, call FlashInfer by keyword, return;
* a **general path** (:meth:`Adapter.call_general`) for everything else: drop
  parameters left at neutral values, raise :class:`UnsupportedParameterError` naming the
  first release that has a parameter or value, run emulations, normalise index dtypes,
  pass unknown keywords through.

Nothing else runs per call: no ``inspect``, no metadata reads, no host syncs.  The real
FlashInfer function is imported on the first call (thread-safe) by a trampoline that
then replaces itself in the generated function's globals, so later calls pay one global
lookup.  Deviation from DESIGN.md's sketch: instead of an adapter object method per call
(an extra Python call with ~30 arguments costs more than the whole budget), the adapter
emits the facade function itself.
"""

from __future__ import annotations

import _thread
import os as _os

from . import errors
from .detection import Distribution, detect
from .registry import NEWEST, Placement, VersionRange, at_least, place, strict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from types import FunctionType
    from typing import Any, ParamSpec, TypeVar

    _P = ParamSpec("_P")
    _R = TypeVar("_R")

__all__ = ["OMIT", "REQUIRED", "Adapter", "Emulation", "EntryPoint", "OptionalDependency", "Param"]


class _Required:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<required>"


REQUIRED: Any = _Required()


class _Omit:
    __slots__ = ()

    def __repr__(self) -> str:
        return "OMIT"


# a stable default meaning "not given: leave the release's own default" (never forwarded)
OMIT: Any = _Omit()
_SIMPLE = (str, int, float, bool, type(None))


def _is(value: object, ref: object) -> bool:
    """``value`` equals a plain default (``None``/str/int/bool/float), tensors never do."""
    if value is ref:
        return True
    return type(value) in _SIMPLE and type(ref) in _SIMPLE and value == ref


class Param:
    """One parameter of a stable signature, as FlashInfer releases treat it.

    since:        first release that accepts it (``None``: every supported release)
    neutral:      values besides the default that mean "same as a release without it";
                  dropped on releases that lack the parameter
    value_since:  {value: first release accepting that value} for values newer than
                  the parameter itself (e.g. a new ``backend`` name)
    hint:         a semantics-free hint: dropped on releases that lack it, whatever
                  its value
    emulation:    name of the :class:`Emulation` that stands in where it is missing
    dtypes:       ((first release, dtype name), ...): the integer dtype the release
                  reads natively; other integer dtypes are cast before the call
    note:         the reason / upstream reference, shown in docs and errors
    until:        first release that no longer has it (removed there)
    enum:         name of the :mod:`fi_compat.enums` class whose members it takes;
                  translated by member name to the release's value at call time
    spelled:      ((first release, name, enum), ...): older spellings; before the
                  first entry's release the parameter is called ``name`` there and
                  takes members of ``enum`` (mapped by meaning, see ``enum_map``)
    enum_map:     {stable member name: older-domain member name} for ``spelled``
    explicit:     always forwarded where present, even at the default, because some
                  release's own default means something else
    own:          a fi_compat-only parameter (never forwarded; an emulation serves it)
    gaps:         ((from, to), ...): half-open release ranges that lack it again
    """

    __slots__ = (
        "name",
        "since",
        "neutral",
        "value_since",
        "hint",
        "emulation",
        "dtypes",
        "note",
        "default",
        "keyword_only",
        "until",
        "enum",
        "spelled",
        "enum_map",
        "explicit",
        "own",
        "gaps",
    )

    def __init__(
        self,
        name: str,
        since: str | None = None,
        *,
        neutral: tuple[object, ...] = (),
        value_since: Mapping[object, str] | None = None,
        hint: bool = False,
        emulation: str | None = None,
        dtypes: tuple[tuple[str, str], ...] = (),
        note: str = "",
        until: str | None = None,
        enum: str | None = None,
        spelled: tuple[tuple[str, str, str | None], ...] = (),
        enum_map: Mapping[str, str] | None = None,
        explicit: bool = False,
        own: bool = False,
        gaps: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.gaps = gaps
        self.name = name
        self.until = until
        self.enum = enum
        self.spelled = spelled
        self.enum_map = dict(enum_map or {})
        self.explicit = explicit
        self.own = own
        self.since = since
        self.neutral = neutral
        self.value_since = dict(value_since or {})
        self.hint = hint
        self.emulation = emulation
        self.dtypes = dtypes
        self.note = note
        self.default: object = REQUIRED
        self.keyword_only = False

    def present_in(self, p: Placement) -> bool:
        if self.own or (self.until is not None and at_least(p, self.until)):
            return False
        if any(at_least(p, lo) and not at_least(p, hi) for lo, hi in self.gaps):
            return False
        return self.since is None or at_least(p, self.since)

    def spelling(self, p: Placement) -> tuple[str, str | None]:
        """(the release's name for it, the enum class of its values there)."""
        out = (self.name, self.enum)
        for since, name, enum in reversed(self.spelled):
            if not at_least(p, since):
                out = (name, enum)
        return out

    def native_dtype(self, p: Placement) -> str | None:
        out = None
        for since, dt in self.dtypes:
            if at_least(p, since):
                out = dt
        return out

    def boundaries(self) -> list[str]:
        out = [self.since] if self.since else []
        out += [self.until] if self.until else []
        out += [s for s, _, _ in self.spelled]
        out += [b for gap in self.gaps for b in gap]
        out += list(self.value_since.values())
        out += [s for s, _ in self.dtypes]
        return out


class Emulation:
    """A named hook that stands in for parameters a release lacks (or lacks here).

    Subclasses set ``name``, ``params`` (the stable parameters it serves) and
    ``boundaries`` (releases where its behaviour changes), and implement:

    * ``needed(adapter, kw)``: does this call need it (``kw`` has every stable parameter)?
    * ``may_apply(placement)``: can it be needed on this release at all (when its
      parameters are present)?  If so the fast path requires them at their defaults;
    * ``before(adapter, kw)``: rewrite ``kw`` into a call the release accepts; returns
      state for ``after``;
    * ``after(adapter, kw, result, state)``: rewrite the result.
    """

    name = ""
    params: tuple[str, ...] = ()
    boundaries: tuple[str, ...] = ()

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        raise NotImplementedError

    def may_apply(self, p: Placement) -> bool:
        return False

    def describe(self, p: Placement) -> str | None:
        """One line for the support matrix: what this hook does on release ``p``."""
        return None

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        return None

    def after(self, adapter: Adapter, kw: dict[str, Any], result: Any, state: object) -> Any:
        return result


class OptionalDependency:
    """An optional package a FlashInfer module imports unguarded from some release on."""

    __slots__ = ("range", "module", "package", "extras", "note")

    def __init__(
        self, range: VersionRange, module: str, package: str, extras: tuple[str, ...], note: str
    ) -> None:
        self.range = range
        self.module = module
        self.package = package
        self.extras = extras
        self.note = note


_MODULE_PACKAGES = {
    "cutlass": "nvidia-cutlass-dsl",
    "cuda": "cuda-python",
    "tvm_ffi": "apache-tvm-ffi",
    "pynvml": "nvidia-ml-py",
    "cudnn": "nvidia-cudnn-frontend",
    "cuda_tile": "cuda-tile",
    "nccl4py": "nccl4py",
}


class EntryPoint:
    """Everything fi_compat knows about one FlashInfer function, as data."""

    def __init__(
        self,
        *,
        facade: str,
        name: str,
        module: str,
        attr: str | None = None,
        since: str,
        params: Sequence[Param],
        validate: Callable[..., None],
        validate_args: tuple[str, ...],
        prepare: Callable[[], None] | None = None,
        emulations: Sequence[Emulation] = (),
        optional_deps: Sequence[OptionalDependency] = (),
        boundaries: tuple[str, ...] = (),
        feature: str = "",
        normalize: Callable[[Adapter], Callable[..., tuple[Any, ...]] | None] | None = None,
        normalize_args: tuple[str, ...] = (),
        normalize_out: tuple[str, ...] = (),
        matrix_note: str = "",
        positional_from: str | None = None,
    ) -> None:
        self.facade = facade
        self.matrix_note = matrix_note  # one line for the support matrix (e.g. GPUs)
        # first release whose positional order is a prefix of the stable one (docs)
        self.positional_from = positional_from
        # normalize(adapter) -> f(*normalize_args) -> new values of normalize_out (or None
        # when the release needs nothing): runs on every call, before both paths, and
        # must be cheap and copy-free for inputs that already conform
        self.normalize = normalize
        self.normalize_args = normalize_args
        self.normalize_out = normalize_out
        self.name = name
        self.module = module
        self.attr = attr or name
        self.since = since
        self.params = {p.name: p for p in params}
        self.order = tuple(p.name for p in params)
        self.validate = validate
        self.validate_args = validate_args
        self.prepare = prepare
        self.emulations = {e.name: e for e in emulations}
        self.optional_deps = tuple(optional_deps)
        self.extra_boundaries = boundaries
        self.feature = feature  # its name in the known-issues table (fi_compat._issues)
        for p in params:
            if p.emulation is not None and p.emulation not in self.emulations:
                raise ValueError(f"{name}: {p.name} names unknown emulation {p.emulation!r}")
        self.bound = False

    @property
    def qualname(self) -> str:
        return f"{self.module}.{self.attr}"

    def bind_stub(self, stub: FunctionType) -> None:
        """Read positional order, keyword-only split and defaults from the facade stub."""
        code = stub.__code__
        n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount
        names = code.co_varnames[: n_pos + n_kw]
        if names != self.order:
            raise ValueError(f"{self.name}: stub parameters {names} != table {self.order}")
        defaults = stub.__defaults__ or ()
        kwdefaults = stub.__kwdefaults__ or {}
        first_default = n_pos - len(defaults)
        for i, n in enumerate(names):
            p = self.params[n]
            p.keyword_only = i >= n_pos
            if i >= n_pos:
                p.default = kwdefaults.get(n, REQUIRED)
            elif i >= first_default:
                p.default = defaults[i - first_default]
        self.bound = True

    def release_notes(self) -> str:
        """What each release range does with each parameter, from the table (docstrings)."""
        out = []
        for p in self.params.values():
            if p.own:
                what = "fi_compat only (never forwarded)"
            elif p.since or p.until or p.gaps:
                span = f">={p.since}" if p.since else f">={self.since}"
                span += f", <{p.until}" if p.until else ""
                span += "".join(f", not {lo}-{hi} (excl.)" for lo, hi in p.gaps)
                if p.hint:
                    rest = "dropped elsewhere (a hint)"
                elif p.emulation:
                    rest = "emulated elsewhere"
                elif p.default is OMIT:
                    rest = "elsewhere UnsupportedParameterError unless left out"
                else:
                    vals = ", ".join(dict.fromkeys(repr(v) for v in (p.default, *p.neutral)))
                    rest = f"elsewhere dropped at {vals}, else UnsupportedParameterError"
                what = f"flashinfer-python {span}; {rest}"
            else:
                what = ""
            extra = []
            if p.spelled:
                extra += [f"called ``{n}`` before {s}" for s, n, _ in p.spelled]
            if p.enum:
                extra.append(f"``{p.enum}`` member, translated by name per release")
            if p.explicit:
                extra.append("always forwarded explicitly")
            if p.dtypes:
                extra.append("native dtype " + ", ".join(f"{dt} from {s}" for s, dt in p.dtypes))
            for value, since in p.value_since.items():
                extra.append(f"``{value!r}`` needs {since}")
            if not (what or extra):
                continue
            why = f" ({p.note})" if p.note and what else ""
            text = "; ".join(x for x in (what + why, *extra) if x)
            out += _wrap(f"``{p.name}``: {text}.")
        return "\n".join(out)

    def generations(self) -> list[VersionRange]:
        """Disjoint ranges, covering ``since`` onwards, over which the adapter is constant."""
        from .registry import KNOWN_RELEASES

        cuts = {self.since, *self.extra_boundaries}
        for p in self.params.values():
            cuts.update(p.boundaries())
        for e in self.emulations.values():
            cuts.update(e.boundaries)
        for d in self.optional_deps:
            cuts.update(b for b in (d.range.lo, d.range.hi) if b)
        for issue in self.issues():
            cuts.update(b for b in (issue.range.lo, issue.range.hi) if b)
        lo = KNOWN_RELEASES.index(self.since)
        ordered = [r for r in KNOWN_RELEASES[lo:] if r in cuts]
        return [VersionRange(a, b) for a, b in zip(ordered, [*ordered[1:], None], strict=True)]

    def select(self, fi: Distribution | None) -> Adapter:
        """The adapter for the detected distribution (error adapters raise at call time)."""
        if fi is None:
            return Adapter(self, None, None, problem="not-installed")
        pl = place(fi.version)
        if pl.kind in ("older", "invalid") or pl.pos < 2 * _known_index(self.since):
            return Adapter(self, fi, pl, problem="below-floor")
        rng = next(g for g in self.generations() if g.contains(pl))
        return Adapter(self, fi, pl, rng)

    def issues(self, p: Placement | None = None) -> list[Any]:
        """Known-issues rows for this entry point's feature (and its import), on ``p``."""
        from .device import TABLE

        root = self.feature.partition(".")[0]
        return [
            i
            for i in TABLE
            if (i.covers_feature(self.feature) or i.feature in ("import", f"import.{root}"))
            and (p is None or i.range.contains(p))
        ]

    def optional_dependency(self, p: Placement) -> OptionalDependency | None:
        return next((d for d in self.optional_deps if d.range.contains(p)), None)


def _wrap(text: str, width: int = 88) -> list[str]:
    """``text`` as docstring lines: 4 spaces, continuation lines 8 (no textwrap import)."""
    lines, cur = [], "   "
    for word in text.split(" "):
        if len(cur) + 1 + len(word) > width and cur.strip():
            lines.append(cur)
            cur = "       "
        cur += " " + word
    return [*lines, cur]


def _known_index(release: str) -> int:
    from .registry import KNOWN_RELEASES

    return KNOWN_RELEASES.index(release)


_warned: set[tuple[str, str]] = set()


def _warn_once(key: tuple[str, str], message: str) -> None:
    if key in _warned:
        return
    _warned.add(key)
    import warnings

    warnings.warn(message, errors.UntestedFlashInferVersionWarning, stacklevel=3)


class Adapter:
    """The adapter of one entry point for the detected release; builds the facade."""

    def __init__(
        self,
        entry: EntryPoint,
        dist: Distribution | None,
        placement: Placement | None,
        range: VersionRange | None = None,
        problem: str | None = None,
    ) -> None:
        self.entry = entry
        self.dist = dist
        self.placement = placement
        self.range = range
        self.problem = problem
        self.release = dist.version if dist else None
        self._lock = _thread.allocate_lock()
        self._target: Callable[..., Any] | None = None
        self._ns: dict[str, Any] = {}
        self._prepared = False
        self._codes: dict[bool, Any] = {}
        self.present: tuple[str, ...] = ()
        self.absent: tuple[str, ...] = ()
        self.native_dtypes: dict[str, str] = {}
        self.maybe_emulated: tuple[str, ...] = ()
        self.restricted: tuple[str, ...] = ()
        self.spelling: dict[str, str] = {}  # stable name -> the release's name
        self.enums: dict[str, tuple[str, str]] = {}  # name -> (stable, release) enum class
        self._normalize: Callable[..., tuple[Any, ...]] | None = None
        if placement is not None and problem is None:
            ps = entry.params.values()
            self.present = tuple(p.name for p in ps if p.present_in(placement))
            self.absent = tuple(p.name for p in ps if not p.present_in(placement))
            self.native_dtypes = {
                p.name: dt
                for p in ps
                if p.name in self.present and (dt := p.native_dtype(placement))
            }
            self.maybe_emulated = tuple(
                n for e in entry.emulations.values() if e.may_apply(placement) for n in e.params
            )
            # present, but some values need a newer release: the fast path needs the default
            self.restricted = tuple(
                p.name
                for p in ps
                if p.name in self.present
                and any(not at_least(placement, s) for s in p.value_since.values())
            )
            for n in self.present:
                p = entry.params[n]
                rname, renum = p.spelling(placement)
                self.spelling[n] = rname
                if p.enum is not None and renum is not None:
                    self.enums[n] = (p.enum, renum)
            if entry.normalize is not None:
                self._normalize = entry.normalize(self)
            if placement.kind == "newer":
                _warn_once(
                    (entry.name, "newer"),
                    f"flashinfer-python {self.release} is newer than the newest release "
                    f"fi_compat {_own_version()} knows ({NEWEST}); {entry.facade}.{entry.name} "
                    f"uses the {NEWEST} adapter. Set {_strict_env()}=1 to make this an error.",
                )
            elif placement.kind in ("prerelease", "between"):
                _warn_once(
                    (entry.name, placement.kind),
                    f"flashinfer-python {self.release} is not a release fi_compat has tested; "
                    f"{entry.facade}.{entry.name} treats it as {placement.treated_as}.",
                )

    # -- description ---------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """What was chosen and why (used by ``python -m fi_compat info``)."""
        pl = self.placement
        return {
            "entry_point": f"{self.entry.facade}.{self.entry.name}",
            "flashinfer_function": self.entry.qualname,
            "installed": self.release,
            "placement": pl.kind if pl else None,
            "treated_as": pl.treated_as if pl else None,
            "adapter_range": str(self.range) if self.range else None,
            "problem": self.problem,
            "forwarded": list(self.present),
            "absent_in_release": list(self.absent),
            "native_dtypes": dict(self.native_dtypes),
            "renamed": {n: r for n, r in self.spelling.items() if n != r},
            "enums": {n: f"{a}->{b}" for n, (a, b) in self.enums.items()},
            "resolved": self._target is not None,
        }

    # -- resolution ------------------------------------------------------------------
    def _problem_error(self) -> Exception | None:
        e = self.entry
        if self.problem == "not-installed":
            return errors.FlashInferNotInstalledError(
                f"{e.facade}.{e.name} needs FlashInfer, and no flashinfer-python distribution "
                f"is installed on sys.path. Install one fi_compat supports (>= {e.since}), e.g. "
                f"pip install 'flashinfer-python=={NEWEST}'"
            )
        if self.problem == "below-floor":
            return errors.UnsupportedFlashInferVersionError(
                f"{e.facade}.{e.name} (FlashInfer {e.qualname}) exists from flashinfer-python "
                f"{e.since} on; installed: {self.release}. Supported: {e.since} to {NEWEST} "
                f"(newer releases with a warning). Fix: pip install "
                f"'flashinfer-python>={e.since},<={NEWEST}'"
            )
        pl = self.placement
        if pl is not None and pl.kind == "newer" and strict():
            return errors.UntestedFlashInferVersionError(
                f"flashinfer-python {self.release} is newer than the newest release fi_compat "
                f"{_own_version()} knows ({NEWEST}) and {_strict_env()} is set. Upgrade "
                f"fi_compat, pin flashinfer-python<={NEWEST}, or unset {_strict_env()}."
            )
        return None

    def resolve(self) -> Callable[..., Any]:
        """Import FlashInfer's function once (thread-safe) and return it, raw."""
        target = self._target
        if target is not None:
            return target
        with self._lock:
            if self._target is None:
                err = self._problem_error()
                if err is not None:
                    raise err
                self._set_target(self._import(), live=True)
        assert self._target is not None
        return self._target

    def _import(self) -> Callable[..., Any]:
        import importlib

        e = self.entry
        rel = self.release
        try:
            mod = importlib.import_module(e.module)
        except ModuleNotFoundError as exc:
            root = (exc.name or "").partition(".")[0]
            if root == "flashinfer":
                raise errors.FlashInferImportError(
                    f"flashinfer-python {rel} is recorded as installed (metadata in "
                    f"{self.dist.location if self.dist else '?'}) but {exc.name!r} cannot be "
                    f"imported: the installation is incomplete. Reinstall it: "
                    f"pip install --force-reinstall 'flashinfer-python=={rel}'"
                ) from exc
            raise self._missing_dependency(root, exc) from exc
        except Exception as exc:  # AssertionError/RuntimeError from torch.cuda at import
            why, fix = "", "see the traceback above"
            from .doctor import check_packaging  # a cubin / jit-cache mismatch, explained

            for f in check_packaging(detect(), dict(_os.environ)):
                if f.severity == "error":
                    why, fix = f" ({f.title}: {f.explanation})", f.fix
            for issue in e.issues(self.placement):
                if issue.kind == "import":
                    why, fix = (
                        f" (known issue {issue.id}: {issue.summary}; {issue.ref})",
                        (issue.workaround),
                    )
            raise errors.FlashInferImportError(
                f"import {e.module} failed on flashinfer-python {rel} with "
                f"{type(exc).__name__}: {exc}{why}. Fix: {fix}."
            ) from exc
        try:
            return getattr(mod, e.attr)  # type: ignore[no-any-return]
        except AttributeError as exc:
            raise errors.UnsupportedFlashInferVersionError(
                f"{e.qualname} does not exist in flashinfer-python {rel}"
            ) from exc

    def _missing_dependency(self, root: str, exc: ImportError) -> Exception:
        e = self.entry
        pkg = _MODULE_PACKAGES.get(root, root)
        dep = self.entry.optional_dependency(self.placement) if self.placement else None
        if dep is not None and dep.module == root:
            extras = " or ".join(f"'flashinfer-python[{x}]=={self.release}'" for x in dep.extras)
            return errors.OptionalDependencyMissingError(
                f"{e.module} in flashinfer-python {self.release} needs the optional package "
                f"{dep.package} ({dep.note}), which is not installed ({exc}). Fix: pip install "
                f"{extras} (or pip install {dep.package})",
                package=dep.package,
                extra=dep.extras[0] if dep.extras else None,
            )
        return errors.OptionalDependencyMissingError(
            f"{e.module} in flashinfer-python {self.release} failed to import because "
            f"{root!r} is missing ({exc}). Fix: pip install {pkg}",
            package=pkg,
        )

    def _set_target(self, fn: Callable[..., Any] | None, live: bool = False) -> None:
        """Point the facade at ``fn`` (tests put a spy here); ``None`` re-arms resolution.

        ``live``: ``fn`` is FlashInfer's own function, so enum values are passed as the
        members of the release's own enum classes (some releases require the member,
        not an int); otherwise as the integers of the snapshot table."""
        self._target = fn
        if self._ns:
            self._ns["_fn"] = fn if fn is not None else self._trampoline
            for n in self.enums:
                self._ns["_E_" + n] = self._enum_table(n, live) if fn is not None else {}

    # -- enums ---------------------------------------------------------------------------
    def _enum_table(self, name: str, live: bool) -> dict[Any, Any]:
        """{stable member: the value the release takes} for enum parameter ``name``."""
        from . import enums

        p = self.entry.params[name]
        stable_name, release_name = self.enums[name]
        stable = getattr(enums, stable_name)
        assert self.placement is not None
        values = _release_enum_values(release_name, self.placement)
        cls = _live_enum(release_name) if live else None
        if cls is not None:  # the installed release's own class is the truth
            values = {m.name: m for m in cls}
        if values is None:
            return {}
        mapping = p.enum_map if release_name != stable_name else {}
        out: dict[Any, Any] = {None: None} if p.default is None else {}
        for m in stable:
            rname = mapping.get(m.name) if mapping else m.name
            if rname is not None and rname in values:
                out[m] = values[rname]
        return out

    def stable_member(self, name: str, value: object) -> Any:
        """``value`` (a fi_compat member, FlashInfer's member, or a documented raw int) as
        the fi_compat member of parameter ``name``'s enum; typed error otherwise."""
        from . import enums

        p = self.entry.params[name]
        assert p.enum is not None
        stable = getattr(enums, p.enum)
        if type(value) is stable:
            return value
        e = self.entry
        where = f"{e.facade}.{e.name}({name}=...)"
        fi_name = enums.flashinfer_member_name(value, p.enum)
        if fi_name is not None:
            if fi_name in stable._members_:
                return stable[fi_name]
            raise errors.InvalidArgumentError(
                f"{where}: FlashInfer's {p.enum}.{fi_name} has no fi_compat counterpart; "
                f"fi_compat {_own_version()} knows {', '.join(stable._members_)}"
            )
        for _, _, old_enum in p.spelled:  # the parameter's older domain, by meaning
            if old_enum is None:
                continue
            old = getattr(enums, old_enum)
            old_name = getattr(value, "name", None) if type(value) is old else None
            old_name = old_name or enums.flashinfer_member_name(value, old_enum)
            if old_name is not None:
                back = {v: k for k, v in p.enum_map.items()}
                if old_name in back:
                    return stable[back[old_name]]
        if type(value) is int:
            ambiguous = self._ambiguous_ints(p)
            if value in ambiguous:
                raise errors.InvalidArgumentError(
                    f"{where}: the raw integer {value} is ambiguous here: {ambiguous[value]}. "
                    f"Pass a member instead, e.g. fi_compat.enums.{p.enum}."
                    f"{stable.stable_ints().get(value, 'Swiglu')}"
                )
            stable_ints = stable.stable_ints()
            if value in stable_ints:
                return stable[stable_ints[value]]
            meanings = stable.meanings(value)
            told = "; ".join(f"{n} in {_span(rs)}" for n, rs in meanings.items()) or "nothing"
            raise errors.InvalidArgumentError(
                f"{where}: the raw integer {value} has meant different members across "
                f"FlashInfer releases ({told}), so fi_compat will not guess. Pass "
                f"fi_compat.enums.{p.enum}.<name> (integers accepted: "
                f"{', '.join(f'{v}={n}' for v, n in stable_ints.items())})"
            )
        raise errors.InvalidArgumentError(
            f"{where}: expected a fi_compat.enums.{p.enum} member, FlashInfer's {p.enum} "
            f"member or one of its stable integers; got {_short(value)}"
        )

    def _ambiguous_ints(self, p: Param) -> dict[int, str]:
        """Integers valid in both the parameter's older and current domain, with
        different meanings (e.g. gated_act_type 0=SwiGlu vs activation_type 0=Gelu)."""
        from . import enums

        assert p.enum is not None
        new = getattr(enums, p.enum).stable_ints()
        out: dict[int, str] = {}
        for since, old_name, old_enum in p.spelled:
            if old_enum is None:
                continue
            for v, n in getattr(enums, old_enum).stable_ints().items():
                if v in new and p.enum_map.get(new[v]) != n:
                    out[v] = (
                        f"{old_name}={v} meant {old_enum}.{n} before {since}, "
                        f"{p.name}={v} means {p.enum}.{new[v]}"
                    )
        return out

    def enum_value(self, name: str, value: object) -> Any:
        """The release's value for enum parameter ``name`` (general path)."""
        member = self.stable_member(name, value)
        table = self._ns.get("_E_" + name)
        if table and member in table:
            return table[member]
        from . import enums

        assert self.placement is not None
        p = self.entry.params[name]
        stable_name, release_name = self.enums[name]
        rname = p.enum_map.get(member.name) if release_name != stable_name else member.name
        first = getattr(enums, release_name).first_release(rname) if rname else None
        if rname is None or first is None or not at_least(self.placement, first):
            need = getattr(enums, stable_name).first_release(member.name)
            if rname is None:  # only the newer spelling has it
                need = next(s for s, _, _ in p.spelled)
            raise self._unsupported(p, member, need or NEWEST, value=True)
        raise errors.FiCompatError(  # table and snapshot disagree: a broken install?
            f"{self.entry.name}: {release_name}.{rname} is in the snapshot of "
            f"{self.release} but not in the installed FlashInfer class"
        )

    def _trampoline(self, **kw: Any) -> Any:
        return self.resolve()(**kw)

    # -- the general path --------------------------------------------------------------
    def call_general(self, kw: dict[str, Any], extra: dict[str, Any]) -> Any:
        err = self._problem_error()
        if err is not None:
            raise err
        if not self._prepared:
            self._prepare()
        e = self.entry
        present = self.present
        active = [em for em in e.emulations.values() if em.needed(self, kw)]
        served = {n for em in active for n in em.params}
        for name in self.absent:
            p = e.params[name]
            val = kw[name]
            if name in served:
                continue
            if p.enum is not None and not p.own and val is not None:
                val = self.stable_member(name, val)
            if _is(val, p.default) or p.hint or any(_is(val, x) for x in p.neutral):
                continue
            need = p.value_since.get(val) if type(val) in _SIMPLE else None
            pl = self.placement
            gap = next((hi for lo, hi in p.gaps if pl and at_least(pl, lo)), None)
            raise self._unsupported(p, val, need or gap or p.since or e.since)
        for name in present:
            p = e.params[name]
            if p.value_since and type(kw[name]) in _SIMPLE:
                need = p.value_since.get(kw[name])
                if need is not None and self.placement and not at_least(self.placement, need):
                    raise self._unsupported(p, kw[name], need, value=True)
        states = [(em, em.before(self, kw)) for em in active]
        if self._target is None and self.enums:
            self.resolve()  # the enum tables follow the target
        call = {n: kw[n] for n in present if kw[n] is not OMIT}
        for n in self.enums:
            if call.get(n) is not None:
                call[n] = self.enum_value(n, call[n])
        ns = self._ns
        for name in self.native_dtypes:
            t = call[name]
            if t is not None and t.dtype is not ns["_dt_" + name]:
                call[name] = self._cast(name, t)
        spelling = self.spelling
        call = {spelling[n]: v for n, v in call.items()}
        if extra:
            call.update(extra)
        result = ns["_fn"](**call)
        for em, st in reversed(states):
            result = em.after(self, kw, result, st)
        return result

    def _unsupported(
        self, p: Param, val: object, minimum: str, value: bool = False
    ) -> errors.UnsupportedParameterError:
        e = self.entry
        shown = _short(val)
        what = f"{p.name}={shown}" if value or p.enum or type(val) in _SIMPLE else p.name
        default = "" if value else f", or leave {p.name} at its default ({p.default!r})"
        why = f" ({p.note})" if p.note else ""
        return errors.UnsupportedParameterError(
            f"{e.facade}.{e.name}({what}) needs flashinfer-python>={minimum}{why}; installed: "
            f"{self.release}, which {'does not accept that value' if value else 'lacks it'} and "
            f"fi_compat cannot emulate it. Fix: pip install 'flashinfer-python>={minimum}'"
            f"{default}.",
            parameter=p.name,
            installed=str(self.release),
            minimum=minimum,
        )

    # -- code generation -------------------------------------------------------------------
    def build(self, stub: FunctionType) -> Callable[..., Any]:
        """Generate the facade function with ``stub``'s signature, bound to this adapter."""
        e = self.entry
        if not e.bound:
            e.bind_stub(stub)
        ns: dict[str, Any] = {"_adapter": self, "_fn": self._trampoline, "_NOTYET": object()}
        for n in self.enums:
            ns["_E_" + n] = {}  # filled when the target is set (first call)
        sig: list[str] = []
        for i, n in enumerate(e.order):
            p = e.params[n]
            if p.keyword_only and (i == 0 or not e.params[e.order[i - 1]].keyword_only):
                sig.append("*")
            if p.default is REQUIRED:
                sig.append(n)
            else:
                ns["_d_" + n] = p.default
                sig.append(f"{n}=_d_{n}")
        sig.append("**kwargs")
        all_kw = ", ".join(f"{n!r}: {n}" for n in e.order)
        body: list[str] = []
        if self.problem is None:
            ns["_validate"] = self._cold_validate
            body.append(f"    _validate({', '.join(e.validate_args)})")
            if self._normalize is not None:
                ns["_normalize"] = self._normalize
                outs = ", ".join(e.normalize_out)
                body.append(f"    {outs}, = _normalize({', '.join(e.normalize_args)})")
            omit = {n for n in self.present if e.params[n].default is OMIT}
            slow = {*self.absent, *self.maybe_emulated, *self.restricted, *omit}
            guarded = [n for n in e.order if n in slow]
            # parameters added after the entry's first release that this release has:
            # left at their default (== the release's default, checked per release by
            # the snapshot tests) they are omitted, keeping the common call as cheap as
            # on the oldest release (each extra keyword costs ~40 ns).
            tail = [
                n
                for n in self.present
                if e.params[n].since is not None and n not in slow and not e.params[n].explicit
            ]
            conds = ["not kwargs"]
            for n in self.native_dtypes:
                ns["_dt_" + n] = ns["_NOTYET"]  # real dtype set on the first call
                if n in e.validate_args:  # checked to be an integer tensor: cast inline
                    body.append(f"    if {n}.dtype is not _dt_{n}:")
                    body.append(f"        {n} = _adapter._cast({n!r}, {n})")
                else:
                    conds.append(f"({n} is None or {n}.dtype is _dt_{n})")
            body.append(f"    if {' and '.join(conds)}:")
            if self.enums:  # by member name: one dict probe each; anything else -> general
                body.append("        try:")
                for n in self.enums:
                    body.append(f"            _t_{n} = _E_{n}[{n}]")
                body.append("        except (KeyError, TypeError):")
                body.append(f"            return _adapter.call_general({{{all_kw}}}, kwargs)")
            tiers = [(guarded + tail, [n for n in self.present if n not in tail and n not in omit])]
            if tail:
                tiers.append((guarded, [n for n in self.present if n not in omit]))
            for i, (names, fwd) in enumerate(tiers):
                ns[f"_G{i}"] = tuple(e.params[n].default for n in names)
                args = ", ".join(
                    f"{self.spelling[n]}={'_t_' if n in self.enums else ''}{n}" for n in fwd
                )
                call = f"return _fn({args})"
                if names:
                    ordered = [n for n in e.order if n in names]
                    body.append(f"        if ({', '.join(ordered)},) == _G{i}:")
                    ns[f"_G{i}"] = tuple(e.params[n].default for n in ordered)
                    body.append(f"            {call}")
                else:
                    body.append(f"        {call}")
        body.append(f"    return _adapter.call_general({{{all_kw}}}, kwargs)")
        head = f"def {e.name}({', '.join(sig)}):\n"
        label = f"<fi_compat {e.facade}.{e.name} [{self.range or self.problem}]>"
        src = head + "\n".join(body) + "\n"
        code = compile(src, label, "exec")
        # the same function without the metadata checks (fi_compat.set_validation(False))
        lean = head + "\n".join(b for b in body if not b.startswith("    _validate(")) + "\n"
        lean_ns: dict[str, Any] = dict(ns)  # defaults only; the code runs in ns
        exec(compile(lean, label, "exec"), lean_ns)
        self._codes = {False: lean_ns[e.name].__code__}
        exec(code, ns)
        fn = ns[e.name]
        self._codes[True] = fn.__code__
        self._fn_obj = fn
        if not _validation[0]:
            fn.__code__ = self._codes[False]
        fn.__doc__ = stub.__doc__
        fn.__annotations__ = stub.__annotations__
        fn.__module__ = e.facade
        fn.__wrapped__ = stub  # inspect.signature() shows the stable signature
        fn.adapter = self  # introspection: fi_compat.<facade>.<name>.adapter.describe()
        fn.raw = self.resolve  # the raw FlashInfer function: <facade>.<name>.raw()
        self._ns = ns
        self._source = src
        return fn  # type: ignore[no-any-return]

    def set_validation(self, enabled: bool) -> None:
        """Switch this facade's metadata checks on or off (swaps its code, zero cost)."""
        fn = getattr(self, "_fn_obj", None)
        if fn is not None:
            fn.__code__ = self._codes[bool(enabled)]

    def _prepare(self) -> None:
        """First call: bind torch dtypes into the generated function's globals."""
        import torch

        if self.entry.prepare is not None:
            self.entry.prepare()
        ns = self._ns
        for n, dt in self.native_dtypes.items():
            ns["_dt_" + n] = getattr(torch, dt)
        ns["_validate"] = self.entry.validate
        self._prepared = True

    def _cast(self, name: str, t: Any) -> Any:
        """Cast an index tensor to the release's native dtype (a copy, as the release's
        own code would make); integers only."""
        if not self._prepared:
            self._prepare()
        if not _is_integer(t.dtype):
            raise errors.InvalidArgumentError(
                f"{self.entry.name}: {name} must have an integer dtype, got {t.dtype}"
            )
        target = self._ns["_dt_" + name]
        return t if t.dtype is target else t.to(target)

    def _cold_validate(self, *args: Any) -> None:
        self._prepare()
        self.entry.validate(*args)


def _release_enum_values(cls_name: str, p: Placement) -> dict[str, Any] | None:
    """Member values of FlashInfer's ``cls_name`` on the release at or below ``p``."""
    from . import enums
    from .registry import KNOWN_RELEASES

    release = KNOWN_RELEASES[min(p.pos // 2, len(KNOWN_RELEASES) - 1)]
    values = getattr(enums, cls_name).values_in(release)
    return dict(values) if values is not None else None


_ENUM_MODULES = (
    "flashinfer.tllm_enums",  # 0.6.7+
    "flashinfer.fused_moe.core",
    "flashinfer.fused_moe",
    "flashinfer.fp4_quantization",  # SfLayout before 0.6.7
)


def _live_enum(cls_name: str) -> Any:
    """The installed FlashInfer's own enum class ``cls_name`` (None if not found)."""
    import importlib

    for mod in _ENUM_MODULES:
        try:
            cls = getattr(importlib.import_module(mod), cls_name, None)
        except Exception:  # absent in this release
            continue
        if cls is not None and hasattr(cls, "__members__"):
            return cls
    return None


def _span(releases: Sequence[str]) -> str:
    return releases[0] if len(releases) == 1 else f"{releases[0]}-{releases[-1]}"


def _is_integer(dt: Any) -> bool:
    return not dt.is_floating_point and not dt.is_complex and str(dt) != "torch.bool"


def _short(val: object) -> str:
    shape = getattr(val, "shape", None)
    if shape is not None:
        return f"<tensor {tuple(shape)} {getattr(val, 'dtype', '?')}>"
    return repr(val)


def _own_version() -> str:
    from ._version import __version__

    return __version__


def _strict_env() -> str:
    from .registry import STRICT_ENV

    return STRICT_ENV


def make_facade(
    stub: Callable[_P, _R], entry: EntryPoint, docs: Mapping[str, str] | None = None
) -> Callable[_P, _R]:
    """Build the facade function for ``entry`` against the detected FlashInfer release.

    ``docs``: {name: text} filled into ``{name}`` of the stub's docstring (parts shared
    by several facades); ``{release_notes}`` / ``{positional}`` come from the table."""
    entry.bind_stub(stub)  # type: ignore[arg-type]
    doc = stub.__doc__
    for key, text in (docs or {}).items():
        doc = doc.replace("{" + key + "}", text) if doc else doc
    stub.__doc__ = doc
    if doc and "{release_notes}" in doc:  # generated from the table, never hand-kept
        doc = doc.replace("{release_notes}", entry.release_notes().lstrip())
        pos = ""
        if entry.positional_from:
            pos = "\n".join(
                _wrap(
                    f"Positional calls written against flashinfer-python "
                    f"{entry.positional_from} or later mean the same here; code written "
                    f"positionally against an older release must name its arguments "
                    f"from the first parameter inserted since."
                )
            ).lstrip()
        stub.__doc__ = doc.replace("{positional}", pos)
    adapter = entry.select(detect().flashinfer)
    _ADAPTERS[f"{entry.facade}.{entry.name}"] = adapter
    return adapter.build(stub)  # type: ignore[arg-type]


def lazy_facades(
    ns: dict[str, Any],
    table: Mapping[str, tuple[Callable[..., Any], EntryPoint]],
    docs: Mapping[str, str] | None = None,
) -> None:
    """Build the facade functions of module namespace ``ns`` on first access.

    ``table``: {public name: (stub, entry)}; ``docs`` as for :func:`make_facade`.
    Installs the module's ``__getattr__`` (PEP 562), so importing a facade module with
    many entry points costs only its stubs; each function is generated (and its adapter
    chosen) when first looked up, then lives in the module's globals.  :func:`adapters`
    builds all of them."""
    lock = _thread.allocate_lock()
    for stub, entry in table.values():  # the tables know their signature from import on
        entry.bind_stub(stub)  # type: ignore[arg-type]

    def build(name: str) -> Any:
        with lock:
            if name not in ns:
                stub, entry = table[name]
                ns[name] = make_facade(stub, entry, docs)
        return ns[name]

    def __getattr__(name: str) -> Any:
        if name in table:
            return build(name)
        raise AttributeError(f"module {ns['__name__']!r} has no attribute {name!r}")

    def build_all() -> None:
        for name in table:
            build(name)

    ns["__getattr__"] = __getattr__
    ns["__dir__"] = lambda: sorted({*ns, *table})
    _BUILDERS[ns["__name__"]] = build_all


# facade modules with lazily built functions: module name -> build them all
_BUILDERS: dict[str, Callable[[], None]] = {}


# fi_compat.set_validation(); FI_COMPAT_VALIDATE=0 starts with the checks off
_validation = [
    _os.environ.get("FI_COMPAT_VALIDATE", "1").strip().lower() not in ("0", "false", "no", "off")
]


def set_validation(enabled: bool) -> None:
    """Turn the metadata checks of every facade on or off (default on).

    Off, a call skips the shape/rank/dtype/device checks (saving their cost, ~2 µs on a
    small CPU) and bad input reaches FlashInfer, which reports it in its own way, or
    not at all.  Parameter policies (drop / emulate / UnsupportedParameterError) and
    dtype normalisation stay on.  Applies to facades built later too.
    """
    _validation[0] = bool(enabled)
    for a in _ADAPTERS.values():
        a.set_validation(enabled)


# every facade built in this process: "fi_compat.gdn_prefill.chunk_gated_delta_rule" -> Adapter
_ADAPTERS: dict[str, Adapter] = {}


def adapters(build: bool = True) -> dict[str, Adapter]:
    """The adapters of every facade function of the imported facade modules, keyed by
    dotted name (``build=False``: only those built so far)."""
    if build:
        for build_all in list(_BUILDERS.values()):
            build_all()
    return dict(_ADAPTERS)
