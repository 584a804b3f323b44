"""The generated fast path: the facade function itself, specialised for one release.

An extra Python call with ~30 arguments costs more than the whole per-call budget, so
the adapter does not run as a method per call: this module emits the facade function,
with the stub's exact signature, as Python source.  For a conforming call (every
parameter the release lacks or restricts at its default, index tensors already in the
native dtype, known keywords only) it runs the metadata checks, the release's
normalisers, one call to FlashInfer (positionally up to what the release's snapshot
signature allows, by keyword after; by keyword only on a release without a snapshot)
and the release's result hooks;
everything else goes to :meth:`Adapter.call_general` (the shared
:meth:`Adapter.translate`).

Defaults are detected by identity, or for builtin scalar defaults by ``type(x) is int
and x == d``: a user object's ``__eq__`` is never called and a tensor is never
compared.  Two variants are compiled, with and without the metadata checks
(:func:`fi_compat.set_validation` swaps ``__code__``).  Both sources are registered
with :mod:`linecache` when the facade is first called (importing linecache costs ~5 ms,
too much for import time), so a traceback through a facade shows the line; the source is
also ``<facade>.adapter.source`` (:func:`fi_compat.explain`).
"""

from __future__ import annotations

from types import FunctionType

from ..registry import at_least
from . import compiled, consts
from .table import OMIT, REQUIRED, SIMPLE, Emulation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .adapter import Adapter
    from .table import Kind

NOTYET: Any = type("NotYet", (), {"__repr__": lambda self: "<bound at the first call>"})()


class _Defer(Exception):
    """Raised inside the generated checks to hand the call to the general path."""


def _default_test(n: str, default: object) -> str:
    """A test that ``n`` is still its default, by identity or builtin-scalar value."""
    if default is REQUIRED:  # a required keyword-only parameter is never at a default
        return "False"
    if default is None or default is True or default is False:
        return f"{n} is {default!r}"  # a constant: cheaper than a global lookup
    if type(default) in (int, float, str):
        return f"({n} is _d_{n} or (type({n}) is {type(default).__name__} and {n} == _d_{n}))"
    return f"{n} is _d_{n}"


def _torch_names(expr: str, ns: dict[str, Any]) -> None:
    """Bind placeholders for the ``_torch_X`` names of a fast test (no ``re`` at import)."""
    word = ""
    for ch in expr + " ":
        if ch.isalnum() or ch == "_":
            word += ch
            continue
        if word.startswith("_torch_"):
            ns.setdefault(word, NOTYET)
        word = ""


Hook = tuple[Emulation, bool, bool, tuple[str, ...]]


def _hooks(adapter: Adapter) -> list[Hook]:
    """The emulations the generated code runs on this release, in the entry's order:
    ``(emulation, live, checks, guarded names)``.  ``live``: it may be needed here
    (``may_apply``, or it serves a parameter the release lacks), so a value off the
    default of any of its parameters runs ``needed`` and then ``before``/``after`` or
    ``check``; otherwise, with a ``check`` of its own, its ``check_params`` off the
    default run ``check`` (the same mistake, the same error, on every release)."""
    pl = adapter.placement
    if pl is None:
        return []
    absent = set(adapter.absent)
    out: list[Hook] = []
    for em in adapter.entry.emulations.values():
        live = em.may_apply(pl) or any(n in absent for n in em.params)
        checks = type(em).check is not Emulation.check
        if live:
            names = (*em.params, *em.guard_params)
        elif checks:
            names = tuple(em.params if em.check_params is None else em.check_params)
        else:
            continue
        out.append((em, live, checks, names))
    return out


def _fast_tests(hooks: list[Hook], other: set[str], ns: dict[str, Any]) -> dict[str, str]:
    """Guarded parameters that only emulations guard, each of which offers a fast test:
    ``name -> (test)``, the tests of several emulations joined by ``and``.  Their
    ``_torch_X`` globals are placeholders until :meth:`Adapter.prepare` binds them (a
    placeholder fails every ``is`` test, so the first call takes the general path)."""
    out: dict[str, str] = {}
    for _em, _live, _checks, names in hooks:
        for n in names:
            if n in other or n in out:
                continue
            tests = [em.fast_test(n) for em, _, _, ns_ in hooks if n in ns_]
            if tests and all(tests):
                expr = " and ".join(f"({t})" for t in tests).replace("{n}", n)
                _torch_names(expr, ns)
                out[n] = f"({expr})"
    return out


def _value_test(n: str, value: object, key: str, ns: dict[str, Any]) -> str:
    """``n`` is ``value`` (identity, or the same builtin scalar: :func:`is_default`)."""
    if value is None or value is True or value is False:
        return f"{n} is {value!r}"
    ns[key] = value
    if type(value) in (int, float, str):
        return f"({n} is {key} or (type({n}) is {type(value).__name__} and {n} == {key}))"
    return f"{n} is {key}"


def _tier_kind(n: str, p: Any, ns: dict[str, Any]) -> str | None:
    """The stable-kind test of :meth:`Adapter.check_kinds` for ``n``, inline (None:
    nothing to test); values it cannot tell cheaply take the general path."""
    k = p.kind
    if k is None:
        return None
    if k.enum is not None:  # members are translated by the enum tables
        return None if k.nullable or p.default is None else f"{n} is not None"
    t = _kind_test(n, k, ns)
    if t is None:
        return None
    if p.default is not REQUIRED and not k.accepts(p.default, type(None)):
        t = f"({n} is _d_{n} or {t})"  # check_kinds accepts the default itself (OMIT)
    return t


def _kind_test(n: str, k: Kind | None, ns: dict[str, Any]) -> str | None:
    """A cheap test that ``n`` has its stable kind (None: not checkable cheaply here).
    Exact types only (``type(x) is int``): subclasses take the general path, which
    accepts what :meth:`Kind.accepts` accepts."""
    if k is None or k.enum is not None:
        return None
    parts = []
    types = set(k.types)
    if type(None) in types:
        parts.append(f"{n} is None")
    if bool in types:
        parts.append(f"{n} is True or {n} is False")
    exact = {t for t in types if t is not type(None) and t is not bool}
    if float in exact:
        exact.add(int)
    if len(exact) == 1:
        parts.append(f"type({n}) is {next(iter(exact)).__name__}")
    elif exact:
        ns["_K_" + n] = frozenset(exact)
        parts.append(f"type({n}) in _K_{n}")
    if k.literals and str not in exact:
        ns["_L_" + n] = frozenset(k.literals)
        parts.append(f"(type({n}) is str and {n} in _L_{n})")
    if k.tensor:
        parts.append(f"type({n}) is _T")
    if k.dtype:
        ns.setdefault("_DT", NOTYET)
        parts.append(f"type({n}) is _DT")
    return f"({' or '.join(parts)})" if parts else None


def _omittable(e: Any, n: str) -> bool:
    """Left at its default, ``n`` can be left out of the call: a parameter a later
    release added (the release's default is the stable one: snapshot tests), or with
    ``EntryPoint.lean`` any optional parameter (hot methods such as a wrapper's ``run``:
    each keyword FlashInfer binds costs ~40-80 ns)."""
    p = e.params[n]
    return p.since is not None or (e.lean and p.default is not REQUIRED)


def _release_positional(adapter: Adapter) -> tuple[tuple[str, object], ...]:
    """The installed release's positional parameters (its own names, the receiver left
    out) with their defaults as written, in its order, where its signature is known from
    its snapshot (a release fi_compat was tested against); ``()`` otherwise (a
    pre-release, a release between or after the known ones: forwarded by keyword,
    which binds whatever order that release has).  Positional binding costs CPython a
    fraction of keyword binding, and a call with more than ~15 keywords is compiled as
    a dict build plus ``CALL_FUNCTION_EX``."""
    pl = adapter.placement
    if pl is None or pl.kind != "known" or pl.treated_as is None:
        return ()
    from . import facts

    slots = facts.release_slots(adapter.entry, pl.treated_as)
    if not slots:
        return ()
    out = list(slots)
    recv = adapter.entry.receiver
    if recv is not None and out[:1] and out[0][0] == recv:
        out = out[1:]  # the receiver is passed first, as received
    return tuple(out)


def _same_default(value: object, default: object) -> bool:
    """The release's default (its literal value, from :mod:`._facts`; ``...`` for none)
    is the stub's, by value."""
    return value is not ... and type(value) is type(default) and value == default


def build(adapter: Adapter, stub: FunctionType) -> Callable[..., Any]:
    """Generate the facade function with ``stub``'s signature, bound to ``adapter``."""
    e = adapter.entry
    e.bind_stub(stub)
    ns = adapter.ns
    ns.update({"_adapter": adapter, "_fn": adapter._trampoline, "_T": NOTYET})
    from .. import enums as _enums

    for n in adapter.enums:
        ns["_E_" + n] = {}  # filled when the target is published (first call)
        # the types the table is keyed by: the stable members, plain ints (the stable
        # integers) and None; anything else (an IntEnum of FlashInfer's or an engine's,
        # a bool) misses and takes the general path, which reads it by name
        ns["_ET_" + n] = (getattr(_enums, adapter.enums[n][0]), int, type(None))
    ns["_NOKEY"] = NOTYET
    recv = e.receiver
    sig: list[str] = [recv] if recv else []
    passed: list[str] = [recv] if recv else []  # the arguments, passed on as received
    code = stub.__code__
    star = code.co_varnames[code.co_argcount + code.co_kwonlyargcount] if e.varargs else "_args"
    star_done = False
    for n in e.order:
        p = e.params[n]
        if p.keyword_only and not star_done:
            sig.append(f"*{star}")
            passed.append(f"*{star}")
            star_done = True
        if p.default is REQUIRED:
            sig.append(n)
        else:
            ns["_d_" + n] = p.default
            sig.append(f"{n}=_d_{n}")
        passed.append(f"{n}={n}" if star_done else n)
    if not star_done:
        sig.append(f"*{star}")
        passed.append(f"*{star}")
    sig.append("**kwargs")
    passed.append("**kwargs")
    all_kw = ", ".join(f"{n!r}: {n}" for n in e.order)
    tail_args = f", {star}" + (f", {recv}" if recv else "")
    general = f"return _adapter.call_general({{{all_kw}}}, kwargs{tail_args})"
    lead = f"{recv}, " if recv else ""
    omit = {n for n in adapter.present if e.params[n].default is OMIT}
    hooks = _hooks(adapter)
    hooked = {n for _em, _live, _checks, names in hooks for n in names}
    slow = {*adapter.absent, *hooked, *adapter.restricted, *omit}
    guarded = [n for n in e.order if n in slow]
    fast = _fast_tests(hooks, {*adapter.absent, *adapter.restricted, *omit}, ns)
    # parameters added after the entry's first release that this release has: left at
    # their default (the release's default too, checked per release by the snapshot
    # tests) they are omitted, keeping the common call as cheap as on the oldest
    # release (each extra keyword costs ~40 ns)
    normalized = {n for _, outs, _ in adapter.normalizers for n in outs}
    tail = [
        n
        for n in adapter.present
        if _omittable(e, n)
        and n not in slow
        and not e.params[n].explicit
        and n not in normalized  # a normaliser may set it: always forwarded
    ]
    for n in adapter.native_dtypes:
        ns["_dt_" + n] = NOTYET  # the torch dtype, bound on the first call
    for i, (_args, _outs, fn) in enumerate(adapter.normalizers):
        ns[f"_N{i}"] = fn
    for i, (_args, fn) in enumerate(adapter.results):
        ns[f"_R{i}"] = fn
    # result hooks read the arguments as passed: keep those a normaliser or an inline
    # cast rebinds
    rebound = normalized | {n for n in adapter.native_dtypes if n in e.validate_args}
    # the general path gets the arguments as passed too (it normalises them itself), so
    # every argument a normaliser or a cast rebinds is kept as passed (one local each)
    kept = [n for n in e.order if n in rebound]
    general_kept = general
    for n in dict.fromkeys(kept):
        general_kept = general_kept.replace(f"{n!r}: {n},", f"{n!r}: _o_{n},", 1)
        general_kept = general_kept.replace(f"{n!r}: {n}}}", f"{n!r}: _o_{n}}}", 1)

    def finish(expr: str) -> str:
        for i, (args, _fn) in enumerate(adapter.results):
            vals = ", ".join(f"_o_{n}" if n in rebound else n for n in args)
            guard = adapter.result_guards[i]
            # a guarded hook: the guard is evaluated first, then one branch (one call)
            call = f"_R{i}({expr}, {vals})"
            expr = f"({call} if {guard} else {expr})" if guard else call
        return expr

    if e.validate is not None:
        ns["_validate"] = adapter.cold_validate
    ns["_check_dev"] = compiled.check_device
    ns["_Defer"] = _Defer
    ns["_DEV"] = frozenset()  # CUDA device indices this release was found to serve
    # forwarded arguments of a checkable kind that the metadata checks do not read
    # (``type(x) is torch.Tensor``; a subclass such as a Parameter takes the general path)
    checked = [
        t
        for n in adapter.present
        if n not in slow
        and n not in tail
        and n not in e.validate_args
        and n not in adapter.native_dtypes
        and (t := _kind_test(n, e.params[n].kind, ns))
    ]
    # kinds the metadata checks and the normalisers take on trust, tested before them:
    # a required tensor the checks read is not None (a check may let None through); a
    # normaliser's input has its stable kind (a normaliser may map any value)
    normalizer_args = {n for args, _outs, _fn in adapter.normalizers for n in args}
    pre_kinds = []
    for n in e.order:
        p = e.params[n]
        k = p.kind
        if k is None or k.enum is not None:
            continue
        if n in normalizer_args and (t := _tier_kind(n, p, ns)):
            pre_kinds.append(t)
        elif n in e.validate_args and not k.nullable and p.default is REQUIRED:
            pre_kinds.append(f"{n} is not None")
    tail_kinds = {n: t for n in tail if (t := _kind_test(n, e.params[n].kind, ns))}
    tail_checked = list(tail_kinds.values())

    rpos = _release_positional(adapter)
    back = {adapter.spelling[n]: n for n in adapter.present}

    def positional_call(fwd: list[str], value: dict[str, str]) -> str:
        """The arguments of a call forwarding ``fwd``: positionally up to the first
        positional slot of the release's signature that is not forwarded, by keyword
        after (all by keyword where the release's signature is not known)."""
        by = {adapter.spelling[n]: value[n] for n in fwd}
        args = []
        for rn, _src in rpos:
            if rn not in by:
                break
            args.append(by.pop(rn))
        args += [f"{rn}={v}" for rn, v in by.items()]
        return ", ".join(args)

    def _lean_positional(fwd: list[str]) -> list[str]:
        """``EntryPoint.lean``: the parameters (stable names) passed positionally, at any
        value: the release's positional slots in order while each is forwarded and, for
        an optional parameter, has the stub's default in that release (so that passing
        the default is what leaving it out was)."""
        out = []
        for rn, src in rpos:
            n = back.get(rn)
            if n is None or n not in fwd:
                break
            if n in tail and not _same_default(src, e.params[n].default):
                break
            out.append(n)
        return out

    def lines(validated: bool) -> list[str]:
        if adapter.problem is not None:
            return [f"    {general}"]
        body = [f"    if {star}:", f"        raise _adapter.too_many_positional({star})"]
        body += [f"    _o_{n} = {n}" for n in kept]
        # a default this release does not accept (a value_since row for the stub's own
        # default: an argument optional only from a later release) is tested before the
        # tiers, which take defaults as accepted
        for n in adapter.restricted:
            pl = adapter.placement
            assert pl is not None
            vs = {v: s for v, s in e.params[n].value_since.items() if not at_least(pl, s)}
            d = e.params[n].default
            if type(d) in SIMPLE and d in vs:
                ns[f"_VS_{n}"], ns["_SIMPLE"] = vs, SIMPLE
                body.append(f"    if type({n}) in _SIMPLE and {n} in _VS_{n}:")
                body.append(f"        {general_kept}")
        # what runs before the tiers (metadata checks, device check, normalisers, casts)
        # raises nothing of its own: any failure there goes to the general path, which
        # runs the reference's checks in the reference's order (the same error)
        # metadata checks, the kinds they and the normalisers take on trust, the device,
        # the normalisers (the blocks in ``try`` call neither FlashInfer nor the general
        # path); which error a bad call gets is decided by translate alone, which checks
        # the device last, after every argument check
        if validated and e.validate is not None:
            call = f"_validate({', '.join(e.validate_args)})"
            checks = [f"_dev = {call}"] if e.devices is not None else [call]
            if pre_kinds:
                checks.append(f"if not ({' and '.join(pre_kinds)}):")
                checks.append("    raise _Defer")
            if e.devices is not None:
                checks.append("if _dev not in _DEV:")
                checks.append(f"    _check_dev(_adapter, _dev, {e.validate_args[0]})")
            body.append("    try:")
            body += [f"        {line}" for line in checks]
            body.append("    except Exception:")
            body.append(f"        {general_kept}")
        elif validated and pre_kinds:
            body.append(f"    if not ({' and '.join(pre_kinds)}):")
            body.append(f"        {general_kept}")
        pre: list[str] = []
        for i, (args, outs, _fn) in enumerate(adapter.normalizers):
            lhs = f"{', '.join(outs)}, = " if outs else ""  # no outputs: a check
            call = f"{lhs}_N{i}({', '.join(args)})"
            guard = adapter.normalizer_guards[i]
            passes = adapter.normalizer_passes[i]
            if guard:  # a check of arguments that are usually left out: no call then
                pre.append(f"if {' or '.join(f'{n} is not None' for n in guard)}:")
                pre.append(f"    {call}")
            elif passes:  # a check whose common case is one inline test: no call then
                pre.append(f"if not ({passes}):")
                pre.append(f"    {call}")
            else:
                pre.append(call)
        conds = ["not kwargs"]
        # index tensors the metadata checks do not read: in the native dtype on the
        # first tiers, cast by the last one (after the emulations' checks, as translate)
        dtype_conds: dict[str, str] = {}
        for n in adapter.native_dtypes:
            if n in e.validate_args:  # checked just above: cast inline (cast() explains)
                test = f"type({n}) is not _T or {n}.dtype is not _dt_{n}"
                if e.params[n].optional:
                    test = f"{n} is not None and ({test})"
                pre.append(f"if {test}:")
                pre.append(f"    {n} = _adapter.cast({n!r}, {n})")
            else:
                dtype_conds[n] = f"({n} is None or (type({n}) is _T and {n}.dtype is _dt_{n}))"
        if pre:
            body.append("    try:")
            body += [f"        {line}" for line in pre]
            body.append("    except Exception:")
            body.append(f"        {general_kept}")
        if validated:
            conds += checked
        body.append(f"    if {' and '.join(conds)}:")
        if adapter.enums:  # by member identity: one dict probe each; else -> general
            body.append("        try:")
            body += [
                f"            _t_{n} = _E_{n}[{n} if type({n}) in _ET_{n} else _NOKEY]"
                for n in adapter.enums
            ]
            body.append("        except (KeyError, TypeError):")
            body.append(f"            {general_kept}")
        # at their defaults (tested just below), parameters a later release added are
        # left out of the call: the release's own default is the same (snapshot tests)
        later = {n for n in adapter.present if _omittable(e, n) and not e.params[n].explicit}
        fwd0 = [
            n
            for n in adapter.present
            if n not in omit
            and not (n in later and (n in tail or (n in guarded and n not in fast)))
        ]
        tiers: list[tuple[list[str], list[str], list[str]]] = [(guarded + tail, fwd0, [])]
        fwd1 = [n for n in adapter.present if n not in omit]
        lean_pos = set(_lean_positional(fwd1)) if e.lean else set()
        lean_kw = [n for n in tail if n not in lean_pos]
        if tail:
            # lean: the kinds of the omittable parameters are checked where one is given
            # (passed positionally: in the tier's test, at their default or of their kind)
            extra = tail_checked if validated and not e.lean else []
            if validated and e.lean:
                extra = [f"({n} is _d_{n} or {tail_kinds[n]})" for n in tail_kinds if n in lean_pos]
            tiers.append((guarded, fwd1, extra))
            if e.lean and not lean_kw:
                # every optional parameter has a positional slot whose default is the
                # stub's: one positional call, no per-call dict and no default tests
                del tiers[0]
        for names, fwd, extra in tiers:
            value = {n: f"{'_t_' if n in adapter.enums else ''}{n}" for n in fwd}
            call_args = positional_call(fwd, value)
            tests = [
                fast.get(n) or _default_test(n, e.params[n].default) for n in e.order if n in names
            ]
            # at its default an index tensor is None (no test); else its dtype is tested
            tests += [t for n, t in dtype_conds.items() if n not in names or n in fast]
            tests += extra
            invoke = finish(f"_fn({lead}{call_args})")
            pad = "            " if tests else "        "
            if tests:
                body.append(f"        if {' and '.join(tests)}:")
            if fwd is fwd1 and e.lean and lean_kw:
                # only what differs from the default goes to FlashInfer by keyword (each
                # keyword it binds costs): identity tests, no value comparison
                pos = [value[n] for n in _lean_positional(fwd)]
                fixed = [n for n in fwd if n not in tail and n not in lean_pos]
                body.append(
                    pad
                    + "_c = {"
                    + ", ".join(f"{adapter.spelling[n]!r}: {value[n]}" for n in fixed)
                    + "}"
                )
                for n in fwd:
                    if n in lean_kw:
                        body.append(f"{pad}if {n} is not _d_{n}:")
                        if validated and n in tail_kinds:
                            body.append(f"{pad}    if not {tail_kinds[n]}:")
                            body.append(f"{pad}        {general_kept}")
                        body.append(f"{pad}    _c[{adapter.spelling[n]!r}] = {value[n]}")
                invoke = finish(f"_fn({lead}{''.join(v + ', ' for v in pos)}**_c)")
            body.append(f"{pad}return {invoke}")
            if not tests:
                break  # every call returned above
        else:
            body += last_tier(validated, dtype_conds)
        body.append(f"    {general_kept}")
        return body

    def last_tier(validated: bool, dtype_conds: dict[str, str]) -> list[str]:
        """Everything else :meth:`Adapter.translate` accepts, specialised for this release:
        the stable kinds of what the tiers above left untested, each emulation's guard
        with ``needed`` / ``check`` / ``before`` / ``after`` called directly, the dropped
        parameters (hints, neutral values, served ones), the values a newer release
        takes, index-tensor casts; anything refused goes to the general path, which
        raises the same typed error."""
        pad = "            "
        out: list[str] = []
        already = {n for n in adapter.present if n not in slow and n not in tail}
        already -= set(adapter.native_dtypes)
        kinds = []
        for n in e.order:
            if n in e.validate_args or (validated and n in already):
                continue
            if not validated and n not in hooked:
                continue  # checks off: only what the hooks read
            t = _tier_kind(n, e.params[n], ns)
            if t is not None:
                kinds.append(t)
        out.append(f"        if {' and '.join(kinds) or 'True'}:")
        # ``needed`` / ``check`` of a hook that declares what it reads (``reads``) get a
        # dict of just those arguments (``_kr``); the full one (``_kw``, ~30 entries
        # for GDN prefill: ~1 µs) is built only for a hook that runs, or reads more
        small = sorted({n for em, *_r in hooks if em.reads is not None for n in em.reads})
        small_kw = ", ".join(f"{n!r}: {n}" for n in small)
        if hooks:
            out.append(f"{pad}_kw = None")
            if small:
                out.append(f"{pad}_kr = None")
            out.append(f"{pad}_on = ()")
        for i, (em, live, checks, names) in enumerate(hooks):
            ns[f"_EM{i}"] = em
            tests = []
            for n in names:
                ft = em.fast_test(n)
                if ft:
                    expr = f"({ft.replace('{n}', n)})"
                    _torch_names(expr, ns)
                else:
                    expr = _default_test(n, e.params[n].default)
                tests.append(expr)
            out.append(f"{pad}if not ({' and '.join(tests)}):")
            arg = "_kw" if em.reads is None else "_kr"
            out.append(f"{pad}    if {arg} is None:")
            out.append(f"{pad}        {arg} = {{{all_kw if em.reads is None else small_kw}}}")
            if live:
                out.append(f"{pad}    if _EM{i}.needed(_adapter, {arg}):")
                out.append(f"{pad}        _on += (_EM{i},)")
                if checks and em.guard_params:  # check: its own parameters only
                    own = " and ".join(tests[: len(em.params)])
                    out.append(f"{pad}    elif not ({own}):")
                    out.append(f"{pad}        _EM{i}.check(_adapter, {arg})")
                elif checks:
                    out.append(f"{pad}    else:")
                    out.append(f"{pad}        _EM{i}.check(_adapter, {arg})")
            else:
                out.append(f"{pad}    _EM{i}.check(_adapter, {arg})")
        # parameters the release lacks: dropped at the default, a neutral value or as a
        # hint; served by an emulation that runs; else refused (by the general path)
        for n in adapter.absent:
            p = e.params[n]
            if p.hint or n in adapter.result_serves:
                continue
            ok = [_default_test(n, p.default)]
            ok += [_value_test(n, x, f"_nu{j}_{n}", ns) for j, x in enumerate(p.neutral)]
            ok += [
                f"_EM{i} in _on"
                for i, (em, live, *_r) in enumerate(hooks)
                if live and n in em.params
            ]
            out.append(f"{pad}if not ({' or '.join(ok)}):")
            out.append(f"{pad}    {general_kept}")
        for n in adapter.restricted:  # values that need a newer release than this one
            pl = adapter.placement
            assert pl is not None
            p = e.params[n]
            ns[f"_VS_{n}"] = {v: s for v, s in p.value_since.items() if not at_least(pl, s)}
            ns["_SIMPLE"] = SIMPLE
            out.append(f"{pad}if type({n}) in _SIMPLE and {n} in _VS_{n}:")
            out.append(f"{pad}    {general_kept}")
        if any(live for _em, live, *_r in hooks):
            out.append(f"{pad}if _on:")
            if small:
                out.append(f"{pad}    if _kw is None:")
                out.append(f"{pad}        _kw = {{{all_kw}}}")
            out.append(f"{pad}    _st = []")
            out.append(f"{pad}    for _em in _on:")
            out.append(f"{pad}        _st.append(_em.before(_adapter, _kw))")
            out.append(f"{pad}    _c = _adapter.forward(_kw)")
            out.append(f"{pad}    _r = None")
            out.append(f"{pad}    if not any(_em.skip_call(_s) for _em, _s in zip(_on, _st)):")
            out.append(f"{pad}        _r = _fn({lead}**_c)")
            out.append(f"{pad}    for _em, _s in zip(_on[::-1], _st[::-1]):")
            out.append(f"{pad}        _r = _em.after(_adapter, _kw, _r, _s)")
            out.append(f"{pad}    return {finish('_r')}")
        for n in dtype_conds:
            test = f"{n} is not None and (type({n}) is not _T or {n}.dtype is not _dt_{n})"
            out.append(f"{pad}if {test}:")
            out.append(f"{pad}    {n} = _adapter.cast({n!r}, {n})")
        # forwarded exactly as translate forwards them (OMIT: left out)
        cond = [n for n in adapter.present if n in omit]
        value = {n: f"{'_t_' if n in adapter.enums else ''}{n}" for n in adapter.present}
        fixed = [n for n in adapter.present if n not in cond]
        by = {adapter.spelling[n]: n for n in fixed}
        pos = []
        for rn, _src in rpos:  # positionally where the release's signature is known
            if rn not in by:
                break
            pos.append(value[by.pop(rn)])
        if not cond:
            joined = ", ".join([*pos, *(f"{rn}={value[n]}" for rn, n in by.items())])
            out.append(f"{pad}return {finish(f'_fn({lead}{joined})')}")
            return out
        pairs = ", ".join(f"{rn!r}: {value[n]}" for rn, n in by.items())
        out.append(f"{pad}_c = {{{pairs}}}")
        for n in cond:
            out.append(f"{pad}if {n} is not _d_{n}:  # OMIT")
            out.append(f"{pad}    _c[{adapter.spelling[n]!r}] = {value[n]}")
        head = "".join(v + ", " for v in pos)
        out.append(f"{pad}return {finish(f'_fn({lead}{head}**_c)')}")
        return out

    fname = e.name.rpartition(".")[2]  # a method's entry is named "<Class>.<method>"
    head_line = f"def {fname}({', '.join(sig)}):\n"
    label = f"{e.dotted} [{adapter.range or adapter.problem}]"
    codes: dict[object, Any] = {}
    variants = {True: "", False: " checks off", "debug": " debug"}
    # the globals that hold constants to Dynamo once the facade is warm (release
    # defaults, literal sets, dtypes, the devices found to serve): loaded as constants
    # of the warm code (fi_compat._core.consts), so a compiled call has no guard on them
    fixed = [n for n, v in ns.items() if consts.literal(v) or n.startswith("_dt_")]
    for mode, tag in variants.items():
        body = lines(mode is True) if mode != "debug" else [f"    {general}"]
        src = head_line + "\n".join(body) + "\n"
        filename = f"<fi_compat {label}{tag}>"
        scope: dict[str, Any] = ns if mode is True else dict(ns)
        exec(compile(src, filename, "exec"), scope)
        codes[mode] = scope[fname].__code__
        adapter.sources[filename] = src
        if mode != "debug":  # compiled at warm-up (Adapter._settle)
            adapter.const_sources[mode] = (src, filename, fixed)
    adapter.source = next(iter(adapter.sources.values()))
    fn = ns[fname]
    # the cold variant (until the first call has prepared and resolved the facade):
    # under torch.compile it warms the facade at trace time and traces the warm code
    # (fi_compat._core.compiled), then, as eagerly, runs the current mode's code as
    # ``_body``.  It reads no global before ``warm`` (Dynamo snapshots the globals).
    args = ", ".join(passed)
    src = (
        head_line
        + "    from fi_compat._core.compiled import compiling, fail, warm\n"
        + "    if compiling():\n"
        + f"        _e = warm({adapter.trace_key})\n"
        + "        if _e is not None:\n"
        + "            fail(_e)\n"
        + f"    return _body({args})\n"
    )
    filename = f"<fi_compat {label} first call>"
    scope = dict(ns)
    exec(compile(src, filename, "exec"), scope)
    codes["cold"] = scope[fname].__code__
    adapter.sources[filename] = src
    runner = FunctionType(codes[True], ns, fname, fn.__defaults__, fn.__closure__)
    runner.__kwdefaults__ = fn.__kwdefaults__
    ns["_body"] = adapter.body = runner
    adapter.codes = codes
    return fn  # type: ignore[no-any-return]


def register_sources(adapter: Adapter) -> None:
    """Make the generated sources visible to tracebacks (:mod:`linecache`)."""
    import linecache

    for filename, src in adapter.sources.items():
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
