"""The table language: what fi_compat knows about one FlashInfer entry point, as data.

An :class:`EntryPoint` names the FlashInfer module and attribute (a function, or a
``Class.method``), carries one :class:`Param` row per parameter of the stable signature
and the hooks that data cannot express (:class:`Emulation`, :class:`Normalizer`).  The
stable signature itself is written once, as a typed stub in the facade module; its
order, keyword-only split, defaults and scalar types are read from the stub's code
object and annotations (no ``inspect`` at import).

Per-release *facts* are not typed here: the first release of the entry point and of
every parameter, removals and gaps come from the committed signature snapshots
(:mod:`fi_compat._core.facts`).  A row says only what a snapshot cannot: neutral
values, renames by meaning, native index dtypes, emulations, hints, and ``ref`` (the
FlashInfer release and upstream change that needs it).
"""

from __future__ import annotations

from ..registry import Placement, VersionRange, at_least, place
from . import facts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from types import FunctionType
    from typing import Any, ClassVar

    from ..detection import Distribution
    from .adapter import Adapter
    from .contract import Contract, Said, Tensor

__all__ = [
    "OMIT",
    "REQUIRED",
    "Emulation",
    "EntryPoint",
    "Normalizer",
    "OptionalDependency",
    "Param",
    "ResultHook",
]


class _Sentinel:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


REQUIRED: Any = _Sentinel("<required>")
# a stable default meaning "not given: leave the release's own default" (never forwarded)
OMIT: Any = _Sentinel("OMIT")
SIMPLE = (str, int, float, bool, type(None))


def is_default(value: object, ref: object) -> bool:
    """``value`` is the plain default ``ref``: identity, or the same builtin scalar.

    Only builtin scalars (``type(x) is int`` ...) are compared by value, so a user
    object's ``__eq__`` (a tensor's, an engine enum's) is never called."""
    if value is ref:
        return True
    return type(value) in SIMPLE and type(value) is type(ref) and value == ref


class Kind:
    """The scalar/tensor type a stable parameter accepts, read from its annotation.

    ``types``: builtin types accepted exactly (``int`` admits int subclasses except
    bool, ``float`` admits int); ``tensor``: a ``torch.Tensor`` is accepted;
    ``literals``: the accepted values of a ``Literal[...]`` part; ``enum``: the stable
    enum class name (checked by the enum translation); ``dtype``: a ``torch.dtype`` is
    accepted.  ``None`` in ``types`` means optional.  An annotation with any part
    fi_compat cannot check (``Any``, ``list``) yields no Kind: the parameter is passed
    unchecked."""

    __slots__ = ("types", "tensor", "literals", "enum", "text", "dtype")

    def __init__(self, text: str) -> None:
        self.text = text
        self.types: tuple[type, ...] = ()
        self.tensor = False
        self.literals: tuple[object, ...] = ()
        self.enum: str | None = None
        self.dtype = False

    @property
    def nullable(self) -> bool:
        return type(None) in self.types

    def accepts(self, value: object, tensor_type: type) -> bool:
        t = type(value)
        if t in self.types:
            return True
        if value is None:
            return False
        if self.tensor and isinstance(value, tensor_type):
            return True
        if self.dtype and t.__name__ == "dtype" and t.__module__ == "torch":
            return True
        if int in self.types and isinstance(value, int) and t is not bool:
            return True  # int subclasses (an engine's IntEnum), never bool
        if float in self.types and (t is int or (isinstance(value, float))):
            return True
        return t is str and value in self.literals

    def describe(self) -> str:
        parts = [t.__name__ if t is not type(None) else "None" for t in self.types]
        if self.tensor:
            parts.insert(0, "torch.Tensor")
        if self.dtype:
            parts.insert(0, "torch.dtype")
        if self.literals:
            parts.append(" / ".join(repr(v) for v in self.literals))
        return " or ".join(parts)


_ATOMS: dict[str, type] = {"int": int, "bool": bool, "float": float, "str": str, "None": type(None)}


def _split_top(text: str, sep: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "[("
        depth -= ch in "])"
        if ch == sep and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [*out, cur.strip()]


def parse_kind(annotation: object, enum_names: frozenset[str]) -> Kind | None:
    """A :class:`Kind` from a stub annotation string (``from __future__ import
    annotations``); ``None`` for an explicit ``Any`` (unchecked by choice).  Anything
    else fi_compat cannot check is a ``ValueError``: a parameter is never left
    unchecked by accident."""
    if annotation is None:
        raise ValueError("no annotation (write `Any` to leave it unchecked)")
    if not isinstance(annotation, str):
        raise ValueError(
            f"annotation {annotation!r} is not a string (from __future__ import annotations)"
        )
    if annotation[:1] in "'\"" and annotation[-1:] == annotation[:1]:
        annotation = annotation[1:-1]  # a quoted annotation
    kind = Kind(annotation)
    types: list[type] = []
    for part in _split_top(annotation, "|"):
        if part in _ATOMS:
            types.append(_ATOMS[part])
        elif part in ("Tensor", "torch.Tensor"):
            kind.tensor = True
        elif part == "torch.dtype":
            kind.dtype = True
        elif part.startswith(("Sequence[", "list[", "tuple[")):
            types += [list, tuple]  # the items are FlashInfer's business
        elif part.startswith("dict["):
            types.append(dict)
        elif part in ("Any", "object"):
            return None  # explicitly unchecked
        elif part in enum_names:
            kind.enum = part
        elif part.startswith("Literal[") and part.endswith("]"):
            for lit in _split_top(part[8:-1], ","):
                if lit[:1] in "'\"" and lit[-1:] == lit[:1]:
                    kind.literals += (lit[1:-1],)
                elif lit in ("True", "False"):
                    types.append(bool)
                else:
                    raise ValueError(f"cannot check the literal {lit} in {annotation!r}")
        else:
            raise ValueError(
                f"cannot check {part!r} in the annotation {annotation!r} (the kinds: int, "
                f"float, bool, str, None, Tensor, torch.dtype, Literal[...], a fi_compat enum, "
                f"list/tuple/Sequence/dict[...]; `Any` leaves it unchecked)"
            )
    kind.types = tuple(dict.fromkeys(types))
    return kind


class Param:
    """One parameter of a stable signature: the policy for releases that treat it
    differently.  Which releases have it comes from the snapshots (``since``, ``until``
    and ``gaps`` are filled by :class:`EntryPoint`).

    neutral:      values besides the default that mean exactly what the releases
                  without the parameter always do (a default the newer release
                  normalises to that value, the only kernel family older releases
                  have); dropped on releases that lack it, any other value refused
    neutral_ref:  the release sources that show it (release, file and line or PR):
                  required with ``neutral`` (``docs/neutral-values.md`` lists them)
    value_since:  {value: first release accepting that value} for values newer than
                  the parameter itself (e.g. a new ``backend`` name)
    hint:         a semantics-free hint: dropped on releases that lack it, whatever
                  its value
    emulation:    name of the :class:`Emulation` that stands in where it is missing
    dtypes:       ((first release, dtype name), ...): the integer dtype the release
                  reads natively; other integer dtypes are cast before the call
                  (``None``: from that release on, any integer dtype is read as is)
    optional:     with ``dtypes``: ``None`` is a valid value (an index tensor the
                  call may leave out); otherwise a required index tensor is refused
                  as missing when ``None``, also with the metadata checks off
    enum:         name of the :mod:`fi_compat.enums` class whose members it takes;
                  translated by member name to the release's value at call time
    spelled:      ((first release, name, enum), ...): older spellings; before the
                  first entry's release the parameter is called ``name`` there and
                  takes members of ``enum`` (mapped by meaning, see ``enum_map``)
    enum_map:     {stable member name: older-domain member name} for ``spelled``
    explicit:     always forwarded where present, even at the default, because some
                  release's own default means something else
    own:          a fi_compat-only parameter (never forwarded; an emulation serves it)
    note:         what the parameter is for, shown in docs and errors
    ref:          the FlashInfer release and upstream change the policy follows
    """

    __slots__ = (
        "name",
        "since",
        "until",
        "gaps",
        "neutral",
        "neutral_ref",
        "value_since",
        "hint",
        "emulation",
        "dtypes",
        "note",
        "ref",
        "default",
        "keyword_only",
        "enum",
        "spelled",
        "enum_map",
        "explicit",
        "own",
        "optional",
        "kind",
    )

    def __init__(
        self,
        name: str,
        *,
        neutral: tuple[object, ...] = (),
        neutral_ref: str = "",
        value_since: Mapping[object, str] | None = None,
        hint: bool = False,
        emulation: str | None = None,
        dtypes: tuple[tuple[str, str | None], ...] = (),
        note: str = "",
        ref: str = "",
        enum: str | None = None,
        spelled: tuple[tuple[str, str, str | None], ...] = (),
        enum_map: Mapping[str, str] | None = None,
        explicit: bool = False,
        own: bool = False,
        optional: bool = False,
    ) -> None:
        self.name = name
        self.since: str | None = None  # None: from the entry point's first release
        self.until: str | None = None
        self.gaps: tuple[tuple[str, str], ...] = ()
        self.neutral = neutral
        self.neutral_ref = neutral_ref
        self.value_since = dict(value_since or {})
        self.hint = hint
        self.emulation = emulation
        self.dtypes = dtypes
        self.note = note
        self.ref = ref
        self.enum = enum
        self.spelled = spelled
        self.enum_map = dict(enum_map or {})
        self.explicit = explicit
        self.own = own
        self.optional = optional
        self.default: object = REQUIRED
        self.keyword_only = False
        self.kind: Kind | None = None

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

    def first_release_after(self, p: Placement | None) -> str | None:
        """The first release at or after ``p`` (or overall) that has the parameter."""
        if p is not None and self.gaps:
            for lo, hi in self.gaps:
                if at_least(p, lo) and not at_least(p, hi):
                    return hi
        return self.since


class Emulation:
    """A named hook that stands in for parameters a release lacks (or lacks here).

    Subclasses set ``name``, ``params`` (the stable parameters it serves) and
    ``boundaries`` (releases where its behaviour changes), and implement:

    * ``needed(adapter, kw)``: does this call need it (``kw`` has every stable parameter)?
    * ``may_apply(placement)``: can it be needed on this release at all (when its
      parameters are present)?  If so the fast path requires them at their defaults;
    * ``before(adapter, kw)``: rewrite ``kw`` into a call the release accepts; returns
      state for ``after``;
    * ``after(adapter, kw, result, state)``: rewrite the result;
    * ``check(adapter, kw)``: the consistency checks of its parameters, run whenever one
      is not at its default, also where the release serves them natively (so the same
      mistake gives the same error on every release);
    * ``fast_test(name)`` (optional): a cheap expression over the call's local ``name``
      that is true only for values this hook never needs (``"{n} is None or {n}.dtype
      is _torch_float32"``), so the fast path takes them instead of requiring the
      default.  ``_torch_X`` names are bound to ``torch.X`` at the first call;
    * ``skip_call(state)``: ``before`` decided that FlashInfer must not be called (the
      ``after`` chain then receives ``None`` and builds the result).

    The generated fast path binds every emulation per release to a guard (its
    parameters at their defaults, or passing ``fast_test``) plus code: where the guard
    fails it calls ``needed``, then ``before``/``after`` or ``check``, directly, as
    :meth:`Adapter.translate` does.  So a ``fast_test`` must also imply that ``check``
    passes.  ``check_params``: on a release where the hook is never needed, the
    parameters whose values ``check`` can refuse beyond the entry point's metadata
    checks (``None``: all of ``params``); only those guard the call there.
    ``guard_params``: other parameters whose values can make it needed while its own
    are at their defaults (they join its guard; ``check`` still runs only for its own).
    ``reads``: the arguments ``needed`` and ``check`` read (``kw["name"]`` only; they
    then get a dict of just those, which the generated code builds in a fraction of
    the full one's time); ``None``: they may read anything.  ``tests/static/
    test_emulation_reads.py`` derives it from their source and compares.
    """

    name = ""
    params: tuple[str, ...] = ()
    boundaries: tuple[str, ...] = ()
    check_params: tuple[str, ...] | None = None
    guard_params: tuple[str, ...] = ()
    reads: tuple[str, ...] | None = None

    def fast_test(self, name: str) -> str | None:
        return None

    def skip_call(self, state: object) -> bool:
        return False

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

    def check(self, adapter: Adapter, kw: dict[str, Any]) -> None:
        return None


class _Ranged:
    """``releases``: the range a hook runs on, where that is all that decides it (the
    adapter then calls ``build`` only there and runs nothing per call elsewhere, nor on a
    release it cannot place); its ends are boundaries of the support tables, and the
    default ``describe`` gives ``note`` inside it."""

    releases: VersionRange | None = None
    note = ""

    def runs_on(self, p: Placement | None) -> bool:
        return self.releases is None or (p is not None and self.releases.contains(p))

    def describe(self, p: Placement) -> str | None:
        """One line for the support matrix: what this hook does on release ``p``."""
        return self.note if self.note and self.runs_on(p) else None


class Normalizer(_Ranged):
    """A per-call rewrite of some arguments into the form the release reads (a scale
    tensor's layout, a dtype, a packed routing tensor), run on both paths.

    ``args``: the stable parameters it reads (for a method also the receiver's name,
    ``"self"``: the instance, e.g. to read the backend a wrapper was built with);
    ``out``: those it returns new values of (none: a check of the arguments against
    what the release can do).
    ``build(adapter)`` returns the function ``f(*args) -> tuple(out values)`` for that
    release, or ``None`` when the release needs nothing (then nothing runs per call).
    The function must be cheap and copy-free for inputs that already conform."""

    args: tuple[str, ...] = ()
    out: tuple[str, ...] = ()
    boundaries: tuple[str, ...] = ()
    # a check (no ``out``) that does nothing while all these are None: the call is
    # skipped then, so arguments that are rarely given cost one ``is not None`` each
    only_if_given: tuple[str, ...] = ()
    # a check (no ``out``): a Python expression over ``args`` that is true only for
    # values the check accepts (``"head_size in _ROPE_HEADS"``); the generated fast path
    # tests it inline and calls the check only where it is false, so the common call
    # costs that test, not a call.  ``passes_ns``: the globals the expression reads.
    passes: str = ""
    passes_ns: ClassVar[Mapping[str, object]] = {}

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        raise NotImplementedError


class ResultHook(_Ranged):
    """A per-call rewrite of FlashInfer's result into the one the newest release returns
    for the same arguments (an output dtype, a sentinel value, an extra output), run on
    both paths.

    ``args``: the stable parameters it reads, as the caller passed them (before any
    cast or normaliser; a method's receiver by its name, ``"self"``); ``serves``: stable
    parameters the release lacks that this hook implements (e.g. an extra output a
    newer release can return); ``build(adapter)`` returns ``f(result, *args) -> result``
    for that release, or ``None`` when the release already returns the newest result
    (then nothing runs per call).  ``guard`` (optional): a cheap expression over the
    call's parameters (and the receiver) that is false only where ``f`` would return
    the result unchanged; the generated code evaluates it before the call and calls
    ``f`` only where it is true (per-instance state a ``plan`` left, read with
    ``getattr``), the general path calls ``f`` always."""

    args: tuple[str, ...] = ()
    serves: tuple[str, ...] = ()
    boundaries: tuple[str, ...] = ()
    guard: str | None = None

    def build(self, adapter: Adapter) -> Callable[..., Any] | None:
        raise NotImplementedError


class OptionalDependency:
    """An optional package a FlashInfer module imports unguarded from some release on;
    ``extras``: the ``flashinfer-python[extra]`` names that install it on those releases
    (``()`` where the release's metadata has none: the fix names the package itself).

    ``minimum`` (a version): the release needs ``package>=minimum`` and imports it only
    inside the call (``flashinfer.fused_moe.cute_dsl.b12x_moe`` imports ``cutlass`` at
    the launch), so the import alone proves nothing: the generated code checks, once at
    resolution (the first call), that ``module`` is importable and the installed
    distribution (its metadata, nothing imported) is at least ``minimum``, and raises
    ``OptionalDependencyMissingError`` naming the package and the version otherwise."""

    __slots__ = ("range", "module", "package", "extras", "note", "minimum")

    def __init__(
        self,
        range: VersionRange,
        module: str,
        package: str,
        extras: tuple[str, ...],
        note: str,
        minimum: str | None = None,
    ) -> None:
        self.range = range
        self.module = module
        self.package = package
        self.extras = extras
        self.note = note
        self.minimum = minimum


class EntryPoint:
    """Everything fi_compat knows about one FlashInfer function or method, as data.

    ``attr`` is the attribute path inside ``module`` (``"Wrapper.plan"`` for a method);
    ``receiver`` names the stub's first parameter (``"self"``) for methods: it is passed
    positionally to FlashInfer's function and is not part of the table.
    ``validate(*validate_args)`` runs the metadata checks (shapes, dtypes, devices);
    with ``devices`` it returns the CUDA device index of the tensors, and the facade
    refuses, once per device and before any launch, a device the release cannot serve
    (CPU and ``meta`` tensors included: FlashInfer's kernels are CUDA-only).
    """

    # the Adapter class (fi_compat._core.adapter), set by the package fi_compat._core,
    # which imports both modules: the table language stays below the adapter in the
    # import graph (no import cycle)
    adapter_class: type[Adapter]

    def __init__(
        self,
        *,
        facade: str,
        name: str,
        module: str,
        attr: str | None = None,
        params: Sequence[Param],
        validate: Callable[..., object] | None = None,
        validate_args: tuple[str, ...] = (),
        prepare: Callable[[], None] | None = None,
        contracts: Mapping[str, Tensor] | None = None,
        emulations: Sequence[Emulation] = (),
        normalizers: Sequence[Normalizer] = (),
        results: Sequence[ResultHook] = (),
        optional_deps: Sequence[OptionalDependency] = (),
        feature: str = "",
        matrix_note: str = "",
        receiver: str | None = None,
        devices: Callable[[Placement, tuple[int, int]], str | None] | None = None,
        debug: Callable[[Adapter, dict[str, Any]], None] | None = None,
        floor: str | None = None,
        lean: bool = False,
        fallback: Callable[..., Any] | None = None,
        attr_spelled: tuple[tuple[str, str], ...] = (),
        host_tensors: bool | tuple[str, str] = False,
        removed_fix: str = "",
        said: Sequence[Said] = (),
        backend_query: str | None = None,
    ) -> None:
        self.facade = facade
        self.name = name
        self.module = module
        self.attr = attr or name
        # ((first release of ``attr``, the attribute's older name), ...): releases before
        # it define the function under the older name (the snapshot records ``"attr"``)
        self.attr_spelled = attr_spelled
        self.matrix_note = matrix_note  # one line for the support matrix (e.g. GPUs)
        # policy rows, keyed by name: only parameters that need a rule have one; the
        # parameter list itself (order, defaults, kinds) is the stub's (bind_stub)
        self.rows = {p.name: p for p in params}
        if len(self.rows) != len(params):
            raise ValueError(f"{name}: two policy rows for one parameter")
        self.validate = validate
        self.validate_args = validate_args
        self.prepare = prepare
        # contracts: declared tensor metadata (fi_compat._core.contract); compiled into
        # ``validate`` at the first call, ``validate`` then a hook run after it
        self.contract: Contract | None = None
        if contracts:
            from .contract import Contract

            self.contract = c = Contract(self, contracts, validate, validate_args, prepare)
            self.validate, self.validate_args, self.prepare = c.lazy, c.args, c.prepare
        # said: FlashInfer's own messages for checks fi_compat makes too, by release
        # (fi_compat._core.contract.Said): appended to fi_compat's errors there
        self.said = tuple(said)
        self.emulations = {e.name: e for e in emulations}
        self.normalizers = tuple(normalizers)
        self.results = tuple(results)
        self.optional_deps = tuple(optional_deps)
        self.feature = feature  # its name in the known-issues table (fi_compat._issues)
        self.receiver = receiver
        # devices(placement, capability) -> why that CUDA device cannot run it, or None;
        # with it, ``validate`` returns the CUDA index of its tensors (-1: not on CUDA)
        self.devices = devices
        # host_tensors: the function also takes CPU tensors (a host implementation, e.g.
        # the block-scale swizzle), so ``validate`` returning -1 is not refused; a pair
        # (release, why): only before that release (from it, a CPU tensor is refused
        # before the call, the message saying why)
        self.host_tensors = host_tensors
        # debug(adapter, kw): value checks that read tensor contents (host syncs), run on
        # every call in debug mode only (FI_COMPAT_DEBUG=1, fi_compat.set_debug)
        self.debug = debug
        # floor: the first release fi_compat serves, where the snapshots know older
        # releases that have the entry point with signatures its tables do not cover
        # (those are refused as below the floor, naming the floor)
        self.floor = floor
        self.older_unserved = False  # set by facts.first: the floor cut older releases off
        # lean: the fast path leaves every optional parameter at its default out of the
        # call (each release's default equals the stable one; the snapshot suite checks)
        self.lean = lean
        # fallback(receiver?, **stable kwargs): an exact emulation of the whole entry
        # point on known releases before ``since`` (``fast_decode_plan`` as a full plan)
        self.fallback = fallback
        self.varargs = False  # the stub has *args (see bind_stub)
        for p in params:
            if p.emulation is not None and p.emulation not in self.emulations:
                raise ValueError(f"{name}: {p.name} names unknown emulation {p.emulation!r}")
        # until: the first release that no longer has it (facts: the snapshot ends)
        self.until: str | None = None
        # removed_fix: what to use instead on releases from ``until`` (the error's fix)
        self.removed_fix = removed_fix
        # backend_query: the stable parameter naming the backend; the facade function
        # then has FlashInfer's ``is_backend_supported`` / ``is_compute_capability_supported``
        # answering for the installed release (fi_compat._core.backends)
        self.backend_query = backend_query
        self.since = facts.first(self)
        self.bound = False

    def __getattr__(self, name: str) -> Any:
        # ``params`` and ``order`` exist once the stub is bound (bind_stub): importing the
        # facade module binds every stub it declares (fi_compat._facades.entry_points does)
        if name in ("params", "order") and not self.__dict__.get("bound", True):
            raise AttributeError(
                f"{self.name}: the parameter list comes from the stub, and {self.facade} "
                f"has not bound it yet: import {self.facade} (or use "
                f"fi_compat._facades.entry_points())"
            )
        raise AttributeError(name)

    @property
    def qualname(self) -> str:
        return f"{self.module}.{self.attr}"

    def exists_in(self, p: Placement) -> bool:
        """Release ``p`` has the entry point (from ``since``, before ``until``)."""
        return at_least(p, self.since) and (self.until is None or not at_least(p, self.until))

    def attr_on(self, p: Placement | None) -> str:
        """The attribute path of the function on release ``p`` (see ``attr_spelled``)."""
        out = self.attr
        if p is not None:
            for since, name in reversed(self.attr_spelled):
                if not at_least(p, since):
                    out = name
        return out

    @property
    def dotted(self) -> str:
        """The facade's dotted name, ``fi_compat.gdn_prefill.chunk_gated_delta_rule``."""
        return f"{self.facade}.{self.name}"

    def bind_stub(self, stub: FunctionType) -> None:
        """Take the parameter list from the facade stub: order, keyword-only split,
        defaults and scalar kinds (its code object and annotation strings; no
        ``inspect``); a parameter without a policy row gets an empty one.  A row for a
        name the stub lacks, or an annotation fi_compat cannot check (other than an
        explicit ``Any``), is an error here, at import."""
        if self.bound:
            return
        from .. import enums

        self.stub = stub  # the typed signature; the facade module no longer holds it
        code = stub.__code__
        n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount
        names = code.co_varnames[: n_pos + n_kw]
        self.varargs = bool(code.co_flags & 0x04)  # CO_VARARGS
        first = 0
        if self.receiver is not None:
            if not names or names[0] != self.receiver:
                raise ValueError(f"{self.name}: a method stub starts with {self.receiver!r}")
            first = 1
        unknown = [n for n in self.rows if n not in names[first:]]
        if unknown:
            raise ValueError(
                f"{self.name}: policy rows for {unknown}, which the stub "
                f"{stub.__qualname__} does not have"
            )
        self.params = {n: self.rows.get(n) or Param(n) for n in names[first:]}
        self.order = tuple(names[first:])
        defaults = stub.__defaults__ or ()
        kwdefaults = stub.__kwdefaults__ or {}
        first_default = n_pos - len(defaults)
        ann = stub.__annotations__
        enum_names = frozenset(enums.__all__)
        for i, n in enumerate(names[first:], first):
            p = self.params[n]
            p.keyword_only = i >= n_pos
            if i >= n_pos:
                p.default = kwdefaults.get(n, REQUIRED)
            elif i >= first_default:
                p.default = defaults[i - first_default]
            try:
                p.kind = parse_kind(ann.get(n), enum_names)
            except ValueError as exc:
                raise ValueError(f"{self.name}: parameter {n}: {exc}") from None
        if self.contract is not None:
            self.contract.bind(self.params)
        unknown = [x.check for x in self.said if x.param not in self.params]
        if unknown:
            raise ValueError(f"{self.name}: FlashInfer wording for {unknown}: no such parameter")
        facts.apply(self)
        self.bound = True

    @property
    def positional(self) -> tuple[int, str | None]:
        """The positional rule (:func:`fi_compat._core.facts.positional_rule`): how many
        parameters may be passed positionally, and why the next one may not."""
        return facts.positional(self)

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
                extra.append(
                    "native dtype "
                    + ", ".join(f"{dt or 'any integer dtype'} from {s}" for s, dt in p.dtypes)
                )
            for value, since in p.value_since.items():
                extra.append(f"``{value!r}`` needs {since}")
            if not (what or extra):
                continue
            why = f" ({p.note})" if p.note and what else ""
            text = "; ".join(x for x in (what + why, *extra) if x)
            out += wrap(f"``{p.name}``: {text}.")
        return "\n".join(out)

    def generations(self) -> list[VersionRange]:
        """Disjoint ranges, covering ``since`` onwards, over which the adapter is constant."""
        from ..registry import KNOWN_RELEASES

        cuts = {self.since, *(s for s, _ in self.attr_spelled)}
        for p in self.params.values():
            cuts.update(p.boundaries())
        for e in self.emulations.values():
            cuts.update(e.boundaries)
        hooks: list[Normalizer | ResultHook] = [*self.normalizers, *self.results]
        for nm in hooks:
            cuts.update(nm.boundaries)
            if nm.releases is not None:
                cuts.update(b for b in (nm.releases.lo, nm.releases.hi) if b)
        for d in self.optional_deps:
            cuts.update(b for b in (d.range.lo, d.range.hi) if b)
        for issue in self.issues():
            cuts.update(b for b in (issue.range.lo, issue.range.hi) if b)
        lo = KNOWN_RELEASES.index(self.since)
        hi = len(KNOWN_RELEASES) if self.until is None else KNOWN_RELEASES.index(self.until)
        ordered = [r for r in KNOWN_RELEASES[lo:hi] if r in cuts]
        ends: list[str | None] = [*ordered[1:], self.until]
        return [VersionRange(a, b) for a, b in zip(ordered, ends, strict=True)]

    def select(self, fi: Distribution | None) -> Adapter:
        """The adapter for the detected distribution (error adapters raise at call time)."""
        from ..registry import KNOWN_RELEASES

        Adapter = self.adapter_class  # the class, wired by fi_compat._core
        if fi is None:
            return Adapter(self, None, None, problem="not-installed")
        pl = place(fi.version)
        if pl.kind == "invalid":  # not PEP 440: the policy's (and doctor's) verdict
            return Adapter(self, fi, pl, problem="invalid-version")
        if pl.kind == "older":
            return Adapter(self, fi, pl, problem="below-floor")
        if pl.pos < 2 * KNOWN_RELEASES.index(self.since):
            problem = "fallback" if self.fallback is not None else "below-floor"
            return Adapter(self, fi, pl, problem=problem)
        if self.until is not None and at_least(pl, self.until):
            return Adapter(self, fi, pl, problem="removed")
        rng = next(g for g in self.generations() if g.contains(pl))
        return Adapter(self, fi, pl, rng)

    def issues(self, p: Placement | None = None) -> list[Any]:
        """Known-issues rows for this entry point's feature (and its import), on ``p``."""
        from ..device import TABLE

        root = self.feature.partition(".")[0]
        return [
            i
            for i in TABLE
            if (i.covers_feature(self.feature) or i.feature in ("import", f"import.{root}"))
            and (p is None or i.range.contains(p))
        ]

    def optional_dependency(
        self, p: Placement, module: str | None = None
    ) -> OptionalDependency | None:
        """The optional package the release's module imports (that of ``module``, the
        missing module's name, where given)."""
        return next(
            (
                d
                for d in self.optional_deps
                if d.range.contains(p) and (module is None or d.module == module)
            ),
            None,
        )

    def optional_dependencies(self, p: Placement) -> list[OptionalDependency]:
        """Every optional package the release's module imports."""
        return [d for d in self.optional_deps if d.range.contains(p)]


def wrap(text: str, width: int = 88) -> list[str]:
    """``text`` as docstring lines: 4 spaces, continuation lines 8 (no textwrap import)."""
    lines, cur = [], "   "
    for word in text.split(" "):
        if len(cur) + 1 + len(word) > width and cur.strip():
            lines.append(cur)
            cur = "       "
        cur += " " + word
    return [*lines, cur]
