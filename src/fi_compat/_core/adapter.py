"""The adapter of one entry point for the detected release, and :meth:`Adapter.translate`.

``translate`` is the one mapping from stable arguments to the installed release's call,
shared by every path (functions, methods, "written for release X"); the generated fast
path (:mod:`fi_compat._core.codegen`) is a specialisation of it for conforming calls and
falls back to it for everything else.  In order, ``translate``:

1. checks every argument against its stable kind (scalars, enums, literal values,
   tensors): a wrong type is an ``InvalidArgumentError`` and ``None`` for a required
   argument a ``MissingArgumentError`` -- the same on every release;
2. runs the metadata checks and the per-release normalisers;
3. applies the parameter policy: drop at the default / a neutral value / a hint,
   emulate, or raise ``UnsupportedParameterError`` naming the first release that can;
4. translates enum members, casts index tensors to the release's native dtype, maps
   stable names to the release's names, and returns the keyword arguments plus the
   emulations' post-steps.
"""

from __future__ import annotations

import _thread

from .. import errors
from ..registry import NEWEST, at_least
from . import compiled, consts, enumtrans, resolve
from .contract import refusal
from .table import OMIT, REQUIRED, SIMPLE, is_default

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..detection import Distribution
    from ..registry import Placement, VersionRange
    from .contract import Said
    from .table import Emulation, EntryPoint, Param

NO_RECEIVER: Any = object()
_warned: set[tuple[str, str]] = set()


def _warn_once(key: tuple[str, str], message: str) -> None:
    if key in _warned:
        return
    _warned.add(key)
    import warnings

    warnings.warn(message, errors.UntestedFlashInferVersionWarning, stacklevel=4)


def short(val: object) -> str:
    """A value for an error message: tensors by shape, dtype and device, others by repr."""
    shape = getattr(val, "shape", None)
    if shape is not None:
        dev = getattr(val, "device", None)
        return f"<{type(val).__name__} {tuple(shape)} {getattr(val, 'dtype', '?')}" + (
            f" {dev}>" if dev is not None else ">"
        )
    text = repr(val)
    return text if len(text) <= 60 else text[:57] + "..."


def _brief(val: object) -> str:
    """``short`` through containers (the kwargs of a plan)."""
    if isinstance(val, dict):
        return "{" + ", ".join(f"{k!r}: {_brief(v)}" for k, v in val.items()) + "}"
    if isinstance(val, (list, tuple)) and not hasattr(val, "shape"):
        inner = ", ".join(_brief(v) for v in val)
        return f"[{inner}]" if isinstance(val, list) else f"({inner}{',' if len(val) == 1 else ''})"
    return short(val) if hasattr(val, "shape") else repr(val)


class CallPlan(dict):  # type: ignore[type-arg]
    """What :meth:`Adapter.plan` returns: a plain dict (the tensors themselves) whose
    ``repr`` shows each tensor as shape / dtype / device instead of its values."""

    def __repr__(self) -> str:
        return _brief(dict(self))


def is_integer_dtype(dt: Any) -> bool:
    return not dt.is_floating_point and not dt.is_complex and str(dt) != "torch.bool"


class Adapter:
    """One entry point on one release: what is forwarded, dropped, emulated, cast."""

    newest = NEWEST
    own_version = resolve.own_version()

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
        self.ns: dict[str, Any] = {}  # globals of the generated function
        self._prepared = False
        self._tensor: Any = type(None)  # torch.Tensor once prepared
        self.present: tuple[str, ...] = ()
        self.absent: tuple[str, ...] = ()
        self.native_dtypes: dict[str, str] = {}
        self.maybe_emulated: tuple[str, ...] = ()
        self.restricted: tuple[str, ...] = ()
        self.spelling: dict[str, str] = {}  # stable name -> the release's name
        self.enums: dict[str, tuple[str, str]] = {}  # name -> (stable, release) enum class
        self.normalizers: list[tuple[tuple[str, ...], tuple[str, ...], Callable[..., Any]]] = []
        self.normalizer_guards: list[tuple[str, ...]] = []  # Normalizer.only_if_given
        self.normalizer_passes: list[str] = []  # Normalizer.passes (fast path only)
        self.results: list[tuple[tuple[str, ...], Callable[..., Any]]] = []
        self.result_guards: list[str | None] = []  # ResultHook.guard, per result hook
        self.result_serves: frozenset[str] = frozenset()
        self.source = ""  # the generated code (fi_compat.explain)
        self.sources: dict[str, str] = {}  # linecache file name -> source, both variants
        self.codes: dict[object, Any] = {}  # True/False: checks on/off; "debug"; "cold"
        # True/False with the fixed globals as constants, bound when warm (consts.py):
        # the source, file name and names, compiled at warm-up
        self.const_sources: dict[object, tuple[str, str, list[str]]] = {}
        self.const_codes: dict[object, Any] = {}
        self.function: Any = None
        self.said: dict[str, Said] = {}  # check id -> FlashInfer's words on this release
        self.body: Any = None  # the current mode's code, called by the cold variant
        self._mode: object = True  # the key of ``codes`` that set_mode installed
        self.warm = False  # prepared and resolved: the facade runs the mode's code
        self._accepts: tuple[object, frozenset[str] | None] | None = None  # accepted_names
        # this adapter to code Dynamo traces (fi_compat._core.compiled): an int constant
        self.trace_key = compiled.register(self)
        if placement is None or problem is not None:
            return
        self.said = {x.check: x for x in entry.said if x.covers(placement)}
        ps = entry.params.values()
        self.present = tuple(p.name for p in ps if p.present_in(placement))
        self.absent = tuple(p.name for p in ps if not p.present_in(placement))
        self.native_dtypes = {
            p.name: dt for p in ps if p.name in self.present and (dt := p.native_dtype(placement))
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
        for nm in entry.normalizers:
            fn = nm.build(self) if nm.runs_on(placement) else None
            if fn is not None:
                if nm.passes and nm.out:
                    raise ValueError(f"{entry.name}: passes= is for a check (no out=)")
                self.normalizers.append((nm.args, nm.out, fn))
                self.normalizer_guards.append(nm.only_if_given)
                self.normalizer_passes.append(nm.passes)
                self.ns.update(nm.passes_ns)
        serves: set[str] = set()
        for rh in entry.results:
            rf = rh.build(self) if rh.runs_on(placement) else None
            if rf is not None:
                self.results.append((rh.args, rf))
                self.result_guards.append(rh.guard)
                serves.update(rh.serves)
        self.result_serves = frozenset(serves)
        from .._policy import version_verdict

        v = version_verdict(placement, self.release, entry.since)
        if v.status == "warn":  # strict mode turns "newer" into an error at call time
            _warn_once((entry.name, v.code), f"{entry.dotted}: {v.message}")

    def build(self, stub: Any) -> Any:
        """The facade function for this release, generated from ``stub``."""
        from .codegen import build

        fn: Any = build(self, stub)
        e = self.entry
        fn.__doc__ = stub.__doc__
        fn.__annotations__ = stub.__annotations__
        fn.__module__ = e.facade
        fn.__qualname__ = stub.__qualname__.replace("._", ".").lstrip("_")
        fn.__wrapped__ = stub  # inspect.signature() shows the stable signature
        fn.adapter = self  # introspection: <facade>.adapter.describe() / .source / .plan()
        fn.raw = self.resolve  # the raw FlashInfer function: <facade>.raw()
        if e.backend_query is not None:  # FlashInfer's backend queries, for this release
            from .backends import attach

            attach(self, fn, e.backend_query)
        self.function = fn
        self._settle()
        return fn

    def set_validation(self, enabled: bool) -> None:
        """Switch this facade's metadata checks on or off (swaps its code, zero cost)."""
        self.set_mode(validation=enabled, debug=False)

    def set_mode(self, *, validation: bool, debug: bool) -> None:
        """Install the code variant: debug (every call through :meth:`translate`, with
        the value checks), or the fast path with or without the metadata checks."""
        self._mode = "debug" if debug else bool(validation)
        if self.function is not None:
            self.body.__code__ = self.codes[self._mode]
            self._settle()

    def _settle(self) -> None:
        """The facade's code: the mode's once the facade is prepared and resolved (or
        serves a fallback), else the cold variant, which warms it outside a
        ``torch.compile`` trace (:mod:`fi_compat._core.compiled`).  Warm, the mode's
        code holds the current fixed globals as constants (:mod:`fi_compat._core.consts`:
        no Dynamo guard on them); called again whenever one of them changes."""
        self.warm = self._prepared and (self._target is not None or self.problem == "fallback")
        if self.function is None:
            return
        code = self.codes[self._mode if self.warm else "cold"]
        if self.warm and self._mode in self.const_sources:
            if self._mode not in self.const_codes:
                self.const_codes[self._mode] = consts.compile_with_consts(
                    *self.const_sources[self._mode]
                )
            fixed = self.const_codes[self._mode]
            if fixed is not None:
                code = consts.bind(fixed, self.ns) or code
        self.function.__code__ = code

    def warm_up(self) -> None:
        """What a first call does before it looks at an argument: the selection
        policy's verdict, the compiled checks, the import of FlashInfer's function
        (``torch.compile`` runs this at trace time; eager first calls import after the
        argument checks, in :meth:`translate`)."""
        err = resolve.problem_error(self)
        if err is not None:
            raise err
        self.prepare()
        if self.problem is None:
            self.resolve()

    # -- description ---------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """What was chosen and why (used by ``python -m fi_compat info``)."""
        pl = self.placement
        return {
            "entry_point": self.entry.dotted,
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

    def problem_error(self) -> Exception | None:
        return resolve.problem_error(self)

    # -- resolution ------------------------------------------------------------------
    def resolve(self) -> Callable[..., Any]:
        """Import FlashInfer's function once (thread-safe) and return it, raw."""
        target = self._target
        if target is not None:
            return target
        with self._lock:
            if self._target is None:
                err = resolve.problem_error(self)
                if err is not None:
                    raise err
                self._publish(resolve.import_target(self), live=True)
        assert self._target is not None
        return self._target

    def _publish(self, fn: Callable[..., Any] | None, live: bool = False) -> None:
        """Point the facade at ``fn`` (tests put a spy here); ``None`` re-arms resolution.

        Everything the fast path reads is in place before ``fn`` is visible to other
        threads: the enum tables first, then the generated function's target, then
        ``_target`` (which ``resolve`` and the general path test).  ``live``: ``fn`` is
        FlashInfer's own function, so enum values are the release's own members."""
        if fn is None:
            self._target = None
        elif not self._prepared:
            from .codegen import register_sources

            register_sources(self)
        if self.ns:
            for n in self.enums:
                self.ns["_E_" + n] = enumtrans.table(self, n, live) if fn is not None else {}
            self.ns["_fn"] = fn if fn is not None else self._trampoline
        self._target = fn
        self._settle()

    _set_target = _publish  # the name tests use to install a spy

    def _trampoline(self, *args: Any, **kw: Any) -> Any:
        fn = self.resolve()
        if not self._prepared:  # a first call on the fast path (no check to prepare it)
            self.prepare()  # warms the facade: the mode's code from the next call on
        return fn(*args, **kw)

    # -- per-call helpers (cold) ----------------------------------------------------------
    def prepare(self) -> None:
        """First call: bind torch dtypes into the generated function's globals."""
        import torch

        from .codegen import register_sources

        register_sources(self)
        if self.entry.prepare is not None:
            self.entry.prepare()
        ns = self.ns
        for n, dt in self.native_dtypes.items():
            ns["_dt_" + n] = getattr(torch, dt)
        for g in [g for g in ns if g.startswith("_torch_")]:  # emulations' fast tests
            ns[g] = getattr(torch, g[len("_torch_") :])
        ns["_T"] = self._tensor = torch.Tensor
        if "_DT" in ns:
            ns["_DT"] = torch.dtype
        if self.entry.validate is not None:
            ns["_validate"] = self.entry.validate
        self._prepared = True
        self._settle()

    def cold_validate(self, *args: Any) -> Any:
        """The first call's checks: the selection policy's verdict (strict mode, a
        release below the floor) comes before any argument check."""
        err = resolve.problem_error(self)
        if err is not None:
            raise err
        self.prepare()
        assert self.entry.validate is not None
        return self.entry.validate(*args)

    def check_device(self, index: int, sample: Any = None, record: bool = True) -> None:
        """Refuse a device the release cannot serve (once per device, then cached in
        ``_DEV``): not CUDA at all, or a GPU whose architecture the release lacks.
        ``sample``: the first checked tensor, named in the message.  ``record=False``:
        check only (at ``torch.compile`` trace time, where the trace has read ``_DEV``
        and Dynamo guards on what it read)."""
        from .. import _device

        e = self.entry
        first = e.validate_args[0] if e.validate_args else "the input"
        if index < 0:
            host = e.host_tensors
            until = host[0] if isinstance(host, tuple) else None
            pl = self.placement
            served = host is True or (
                until is not None and pl is not None and not at_least(pl, until)
            )
            if served or _device.cpu_allowed():
                if record:
                    self.ns["_DEV"] = self.ns["_DEV"] | {index}
                    self._settle()  # the warm code holds _DEV as a constant
                return
            where = str(getattr(sample, "device", "cpu or meta"))
            since = ""
            if isinstance(host, tuple):
                since = (
                    f" from flashinfer-python {until} on ({host[1]}; installed: "
                    f"{self.release}); releases before {until} run it on the host"
                )
            raise errors.UnsupportedDeviceError(
                f"{e.dotted}: {first} is on {where}; {e.qualname} runs on CUDA devices "
                f"only{since}. Fix: move the tensors to a CUDA device (all on one device)."
            )
        assert e.devices is not None and self.placement is not None
        import torch

        cc = _device.capability(torch.device("cuda", index))
        why = e.devices(self.placement, cc) if cc is not None else None
        if why is not None:
            raise errors.UnsupportedDeviceError(
                f"{e.dotted}: cuda:{index} is SM{cc[0]}{cc[1]}, and {why} (installed "  # type: ignore[index]
                f"flashinfer-python {self.release}). Nothing was launched."
            )
        hang = self.known_hang(cc)
        if hang is not None:
            raise errors.UnsupportedDeviceError(
                f"{e.dotted}: cuda:{index} is SM{cc[0]}{cc[1]}, where flashinfer-python "  # type: ignore[index]
                f"{self.release} has known issue {hang.id}: {hang.summary} ({hang.ref}). "
                f"Nothing was launched. Fix: {hang.workaround}; or set "
                f"FI_COMPAT_IGNORE_ISSUES={hang.id} to launch anyway."
            )
        if record:
            self.ns["_DEV"] = self.ns["_DEV"] | {index}
            self._settle()  # the warm code holds _DEV as a constant

    def known_hang(self, cc: tuple[int, int] | None) -> Any:
        """A confirmed known-issues row of kind ``hang`` for this entry point's feature on
        this release and GPU (a kernel that would never return: refused before the launch),
        unless ``FI_COMPAT_IGNORE_ISSUES`` (comma-separated ids) names it."""
        if cc is None or self.placement is None:
            return None
        from .._switches import names
        from ..device import TABLE

        ignored = set(names("FI_COMPAT_IGNORE_ISSUES", [i.id for i in TABLE], "known-issue ids"))
        f = self.entry.feature
        for issue in self.entry.issues(self.placement):
            if (
                issue.kind == "hang"
                and issue.confirmed
                and not issue.when
                and (f == issue.feature or f.startswith(issue.feature + "."))  # row covers it
                and issue.applies_to_arch(cc)
                and issue.id not in ignored
            ):
                return issue
        return None

    def cast(self, name: str, t: Any) -> Any:
        """An index tensor in the release's native dtype (a copy, as the release's own
        code would make); integers only."""
        if not self._prepared:
            self.prepare()
        if t is None:  # the inline cast of a required index tensor (checks off)
            raise errors.MissingArgumentError(f"{self.entry.dotted}: {name} is required")
        if not isinstance(t, self._tensor):
            raise errors.InvalidArgumentError(
                f"{self.entry.dotted}: {name} must be an integer torch.Tensor, got {short(t)}"
            )
        if not is_integer_dtype(t.dtype):
            raise errors.InvalidArgumentError(
                f"{self.entry.dotted}: {name} must have an integer dtype, got {t.dtype}"
            )
        target = self.ns["_dt_" + name]
        return t if t.dtype is target else t.to(target)

    def unsupported(
        self, p: Param, val: object, minimum: str, value: bool = False
    ) -> errors.UnsupportedParameterError:
        shown = short(val)
        what = f"{p.name}={shown}" if value or p.enum or type(val) in SIMPLE else p.name
        default = "" if value else f", or leave {p.name} at its default ({p.default!r})"
        why = f" ({p.note})" if p.note else ""
        return errors.UnsupportedParameterError(
            f"{self.entry.dotted}({what}) needs flashinfer-python>={minimum}{why}; installed: "
            f"{self.release}, which {'does not accept that value' if value else 'lacks it'} and "
            f"fi_compat cannot emulate it. Fix: pip install 'flashinfer-python>={minimum}'"
            f"{default}.",
            parameter=p.name,
            installed=str(self.release),
            minimum=minimum,
        )

    def stable_member(self, name: str, value: object) -> Any:
        """``value`` as the fi_compat member of enum parameter ``name`` (typed error if
        it names none; :func:`fi_compat._core.enumtrans.stable_member`)."""
        return enumtrans.stable_member(self, name, value)

    def check_kinds(self, kw: dict[str, Any]) -> None:
        """Every argument against its stable kind; the same error on every release."""
        tensor = self._tensor
        for name, p in self.entry.params.items():
            k = p.kind
            if k is None:
                continue
            val = kw[name]
            if k.enum is not None:  # members are the enum translation's business; None here
                if val is None and not k.nullable and p.default is not None:
                    enumtrans.stable_member(self, name, val)  # raises, naming the parameter
                continue
            if val is p.default or val is OMIT or k.accepts(val, tensor):
                continue
            where = f"{self.entry.dotted}"
            if val is None:
                raise errors.MissingArgumentError(
                    f"{where}: {name} is required (it takes {k.describe()}), got None"
                )
            if k.literals and type(val) is str:
                raise refusal(
                    f"{where}: {name}={val!r} is not a valid value; valid: {k.describe()}",
                    f"{name}.value",
                    value=val,
                )
            hint = (
                ""
                if p.keyword_only
                else " (a positional call written for another FlashInfer release? "
                "fi_compat.written_for(release) binds positional arguments by that "
                "release's order)"
            )
            raise refusal(
                f"{where}: {name} must be {k.describe()}, got {short(val)}{hint}",
                f"{name}.kind",
                value=val,
                type=type(val).__name__,
            )

    def in_flashinfer_words(self, exc: BaseException) -> None:
        """Append the installed release's own message for the check that refused the
        call (``exc.check``, an entry's :class:`~fi_compat._core.contract.Said` row for
        this release) to ``exc``'s message, once; ``exc.flashinfer_message`` holds it."""
        check = getattr(exc, "check", None)
        said = self.said.get(check) if check is not None else None
        if said is None or getattr(exc, "flashinfer_message", None) is not None:
            return
        text = said.render(getattr(exc, "facts", {}))
        if not text:
            return
        text = text.strip()
        exc.flashinfer_message = text  # type: ignore[attr-defined]
        head = str(exc.args[0]) if exc.args else ""
        exc.args = (f"{head} (flashinfer-python {self.release} says: {text})", *exc.args[1:])

    # -- the general path -------------------------------------------------------------
    def translate(
        self,
        kw: dict[str, Any],
        extra: dict[str, Any],
        receiver: Any = None,
        import_target: bool = False,
    ) -> tuple[dict[str, Any], list[tuple[Emulation, object]]]:
        """Stable arguments -> (keyword arguments of the release's call, post-steps).
        ``receiver``: the instance a method is called on (a normaliser may read it);
        ``import_target``: import FlashInfer's function once every argument check passed
        (the enum tables come with it), before the emulations' pre-steps.  A refusal
        carries the release's own words for it where it has them
        (:meth:`in_flashinfer_words`)."""
        try:
            return self._translate(kw, extra, receiver, import_target)
        except errors.FiCompatError as exc:
            if self.said:
                self.in_flashinfer_words(exc)
            raise

    def _translate(
        self,
        kw: dict[str, Any],
        extra: dict[str, Any],
        receiver: Any,
        import_target: bool,
    ) -> tuple[dict[str, Any], list[tuple[Emulation, object]]]:
        err = resolve.problem_error(self)
        if err is not None:
            raise err
        if not self._prepared:
            self.prepare()
        e = self.entry
        # the metadata checks first (their messages say the most), then every argument's
        # stable kind, the normalisers' and emulations' checks, the release's support of
        # each value and keyword, and the device last: on a host without a usable GPU
        # every argument error is still told as it is (nothing runs on the device before)
        dev: Any = None
        if e.validate is not None:
            try:
                dev = e.validate(*(kw[n] for n in e.validate_args))
            except errors.FiCompatError:
                raise
            except Exception:
                self.check_kinds(kw)  # it tripped on a value of the wrong kind: say which
                raise
        self.check_kinds(kw)
        if e.debug is not None:
            from .facade import debug_enabled

            if debug_enabled():
                e.debug(self, kw)
        recv = e.receiver
        for (args, outs, fn), guard in zip(self.normalizers, self.normalizer_guards, strict=True):
            if guard and all(kw[n] is None for n in guard):
                continue
            vals = (receiver if n == recv else kw[n] for n in args)
            kw.update(zip(outs, fn(*vals), strict=True))
        active = []
        for em in e.emulations.values():
            if em.needed(self, kw):
                active.append(em)
            elif any(not is_default(kw[n], e.params[n].default) for n in em.params):
                em.check(self, kw)  # served natively: the same checks, the same errors
        served = {n for em in active for n in em.params} | self.result_serves
        pl = self.placement
        assert pl is not None
        for name in self.absent:
            p = e.params[name]
            val = kw[name]
            if name in served:
                continue
            if p.enum is not None and not p.own and val is not None:
                val = enumtrans.stable_member(self, name, val)
            if is_default(val, p.default) or p.hint or any(is_default(val, x) for x in p.neutral):
                continue
            need = p.value_since.get(val) if type(val) in SIMPLE else None
            raise self.unsupported(p, val, need or p.first_release_after(pl) or e.since)
        for name in self.present:
            p = e.params[name]
            if p.value_since and type(kw[name]) in SIMPLE:
                need = p.value_since.get(kw[name])
                if need is not None and not at_least(pl, need):
                    raise self.unsupported(p, kw[name], need, value=True)
        if extra:
            self.check_extra(extra)  # a known release's names: from its snapshot
            self.check_respelled(kw, extra)
        if e.validate is not None and e.devices is not None and dev not in self.ns["_DEV"]:
            self.check_device(dev, kw[e.validate_args[0]])
        if import_target and self._target is None:
            self.resolve()  # the enum tables and the imported-release check come with it
            if extra and pl.kind != "known":
                self.check_extra(extra)  # other placements: the resolved function's names
        states = [(em, em.before(self, kw)) for em in active]
        call = self.forward(kw)
        call.update(extra)
        return call, states

    def forward(self, kw: dict[str, Any]) -> dict[str, Any]:
        """The release's keyword arguments for checked stable arguments ``kw`` (after the
        emulations' pre-steps): the parameters it has, enum members as its values,
        index tensors in its native dtype, under its names.  The last step of
        :meth:`translate`; the generated code calls it after an emulation's ``before``."""
        e = self.entry
        call = {n: kw[n] for n in self.present if kw[n] is not OMIT}
        for n in self.enums:
            v = call.get(n)
            p = e.params[n]
            if v is not None or not (p.default is None or (p.kind and p.kind.nullable)):
                call[n] = enumtrans.release_value(self, n, v)
        ns = self.ns
        for name in self.native_dtypes:
            t = call[name]
            if t is not None and t.dtype is not ns["_dt_" + name]:
                call[name] = self.cast(name, t)
        spelling = self.spelling
        return {spelling[n]: v for n, v in call.items()}

    def accepted_names(self) -> frozenset[str] | None:
        """The keyword names the installed release's function takes (``None``: any, it
        takes ``**kwargs``, or cannot be told).  A known release: its snapshot.  Any other
        placement (a pre-release, a release between two known ones, one newer than
        fi_compat knows): the resolved function's own signature, read once per target
        (its options may differ from the nearest snapshot's); unresolved (``plan``):
        ``None``."""
        from . import facts

        pl = self.placement
        if pl is None:
            return None
        if pl.kind == "known":
            sig = facts.signature(self.entry, pl.treated_as or str(self.release))
            if sig and any(q[1] == "vk" for q in sig):
                return None  # the release takes **kwargs itself
            return frozenset(q[0] for q in sig or [])
        target = self._target
        if target is None:
            return None
        cached = self._accepts
        if cached is not None and cached[0] is target:
            return cached[1]
        import inspect

        try:
            params = inspect.signature(target).parameters.values()
        except (TypeError, ValueError):  # no signature to read: FlashInfer decides
            names = None
        else:
            vk = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
            names = None if vk else frozenset(p.name for p in params)
        self._accepts = (target, names)
        return names

    def check_extra(self, extra: dict[str, Any]) -> None:
        """Keywords outside the stable signature go to FlashInfer as they are, if the
        installed release has them (options fi_compat does not know yet); a name the
        release's function lacks (:meth:`accepted_names`) is a typed error with the
        closest names, on every placement."""
        names = self.accepted_names()
        if names is None:
            return
        unknown = [k for k in extra if k not in names]
        if unknown:
            import difflib

            known = [*self.entry.order, *sorted(names - set(self.spelling.values()))]
            hints = {k: difflib.get_close_matches(k, known, n=2) for k in unknown}
            said = "; ".join(
                f"{k!r}" + (f" (did you mean {' or '.join(map(repr, h))}?)" if h else "")
                for k, h in hints.items()
            )
            raise errors.UnknownArgumentError(
                f"{self.entry.dotted}: unknown keyword argument {said}: neither the stable "
                f"signature nor flashinfer-python {self.release}'s {self.entry.qualname} "
                f"has it"
            )

    def check_respelled(self, kw: dict[str, Any], extra: dict[str, Any]) -> None:
        """An extra keyword that is the installed release's own name of a stable
        parameter (0.2.4's ``maybe_output_emitted_token_num`` for
        ``maybe_output_emitted_draft_token_num``) goes to FlashInfer as it is; given
        beside the stable name (off its default) one of the two values would be lost."""
        for n, r in self.spelling.items():
            if r != n and r in extra and not is_default(kw[n], self.entry.params[n].default):
                raise errors.InvalidArgumentError(
                    f"{self.entry.dotted}: keywords {n!r} and {r!r} (flashinfer-python "
                    f"{self.release}'s name of {n!r}) are one parameter, given twice (one "
                    f"value would be lost); pass only {n!r}"
                )

    def call_general(
        self,
        kw: dict[str, Any],
        extra: dict[str, Any],
        args: tuple[Any, ...] = (),
        receiver: Any = NO_RECEIVER,
    ) -> Any:
        """The general path: :meth:`translate`, the call, the emulations' post-steps."""
        if args:
            raise self.too_many_positional(args)
        if self.problem == "fallback":  # the release predates the entry point
            return self.call_fallback(kw, extra, receiver)
        recv_name = self.entry.receiver
        hooks = [  # the arguments as passed; a method's receiver by its name
            (rf, [receiver if n == recv_name else kw[n] for n in args]) for args, rf in self.results
        ]
        recv = None if receiver is NO_RECEIVER else receiver
        call, states = self.translate(kw, extra, recv, import_target=True)
        fn = self.ns["_fn"]
        if any(em.skip_call(st) for em, st in states):
            result = None
        else:
            result = fn(**call) if receiver is NO_RECEIVER else fn(receiver, **call)
        for em, st in reversed(states):
            result = em.after(self, kw, result, st)
        for rf, vals in hooks:
            result = rf(result, *vals)
        return result

    def call_fallback(self, kw: dict[str, Any], extra: dict[str, Any], receiver: Any) -> Any:
        """The entry point's exact emulation on a release that predates it (its stable
        arguments checked as on every release)."""
        if not self._prepared:
            self.prepare()
        self.check_kinds(kw)
        fallback = self.entry.fallback
        assert fallback is not None
        if receiver is NO_RECEIVER:
            return fallback(**kw, **extra)
        return fallback(receiver, **kw, **extra)

    def too_many_positional(self, args: tuple[Any, ...]) -> errors.PositionalMismatchError:
        e = self.entry
        n, why = e.positional
        short_name = f"{e.facade.removeprefix('fi_compat.')}.{e.name}"
        reason = (
            f"{why}, so a positional argument there means different things on different "
            f"flashinfer-python releases"
            if why
            else f"the rest are keyword-only, as in flashinfer-python {NEWEST}"
        )
        nxt = e.order[n] if n < len(e.order) else None
        by_kw = f"pass ``{nxt}`` and what follows by keyword" if nxt else "pass them by keyword"
        return errors.PositionalMismatchError(
            f"{e.dotted} takes at most {n} positional arguments; {n + len(args)} were given: "
            f"{reason}. Fix: {by_kw}; or, for code written positionally against one release, "
            f"fi_compat.written_for('<release>').{short_name}(...) binds by that release's "
            f"order."
        )

    def plan(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """What a call with these arguments would send to FlashInfer, without calling it:
        ``{"function", "kwargs", "emulations"}`` (emulations' pre-steps run)."""
        e = self.entry
        names = [n for n in e.order if not e.params[n].keyword_only]
        if len(args) > len(names):
            raise self.too_many_positional(args[len(names) :])
        kw = {n: e.params[n].default for n in e.order}
        kw.update(zip(names, args, strict=False))
        extra = {k: v for k, v in kwargs.items() if k not in kw}
        kw.update({k: v for k, v in kwargs.items() if k in kw})
        missing = [n for n, v in kw.items() if v is REQUIRED]
        if missing:
            raise errors.MissingArgumentError(f"{e.dotted}: missing {', '.join(missing)}")
        call, states = self.translate(kw, extra)
        return CallPlan(
            function=e.qualname,
            release=self.release,
            kwargs=call,
            emulations=[em.name for em, _ in states],
        )
