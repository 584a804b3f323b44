"""Calls written for one FlashInfer release: ``fi_compat.written_for("0.5.3")``.

Model code is written against one release: its positional order, its parameter names,
its defaults.  ``written_for(X).<facade module>.<function>(*args, **kwargs)`` keeps that
meaning on every installed release:

* positional arguments bind by release X's signature (from its snapshot);
* keyword names of release X map to the stable names by meaning (a stable parameter of
  the same name wins, e.g. the legacy ``gated_act_type``; otherwise the parameter's
  older spelling, e.g. ``gated_act_type`` -> ``activation_type`` before 0.6.3);
* parameters the caller leaves out take release X's default where that default means
  something else than the stable one and the installed release has the parameter
  (enum defaults by member name; fi_compat-only legacy parameters are not defaulted:
  their X default names the stable default);
* then the stable facade translates the call to the installed release as usual.

The binding is computed once per (function, X) from the snapshot; each call costs a
``zip`` and one facade call.  Too many positional arguments for release X is a
:class:`~fi_compat.errors.PositionalMismatchError`.
"""

from __future__ import annotations

from .. import errors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .table import EntryPoint


def _default_meaning(entry: EntryPoint, name: str, source: str, release: str) -> Any:
    """Release ``release``'s default (its source text) as a stable value; ``NotImplemented``
    when it is no plain literal or enum member."""
    import ast

    from .. import enums
    from ..registry import place

    if source == "_UNSET":
        return NotImplemented
    try:
        return ast.literal_eval(source)
    except (ValueError, SyntaxError):
        pass
    p = entry.params[name]
    parts = source.removesuffix(".value").split(".")
    if p.enum is None or len(parts) != 2:
        return NotImplemented
    cls, member = parts
    stable = getattr(enums, p.enum)
    _, renum = p.spelling(place(release))
    if cls != renum and cls != p.enum:
        return NotImplemented
    if renum != p.enum:  # the older domain, by meaning
        back = {v: k for k, v in p.enum_map.items()}
        member = back.get(member, member)
    return stable._members_.get(member, NotImplemented)


def _binding(
    facade: Callable[..., Any], release: str, varargs_as: tuple[str, ...], installed: bool
) -> tuple[list[str], dict[str, str], dict[str, Any]]:
    """How release ``release`` binds a call of ``facade``: its positional parameters
    (stable names; then ``varargs_as``), its names -> stable names, and the defaults it
    gives omitted parameters where they mean something else than the stable ones
    (``installed``: ``release`` is the installed one, so a parameter whose stable default
    is ``OMIT``, left out of the call, takes that release's default anyway)."""
    from ..registry import KNOWN_RELEASES, place
    from . import facts
    from .table import OMIT, is_default

    entry: EntryPoint = facade.adapter.entry  # type: ignore[attr-defined]
    if release not in KNOWN_RELEASES:
        raise errors.InvalidArgumentError(
            f"fi_compat.written_for({release!r}): not a flashinfer-python release fi_compat "
            f"has a snapshot of; known: {KNOWN_RELEASES[0]} ... {KNOWN_RELEASES[-1]}"
        )
    sig = facts.signature(entry, release)
    if sig is None:
        raise errors.UnsupportedFlashInferVersionError(
            f"fi_compat.written_for({release!r}).{entry.dotted.removeprefix('fi_compat.')}: "
            f"{entry.qualname} does not exist in flashinfer-python {release} (first: "
            f"{entry.since})"
        )
    pl = place(release)
    rename = {p.spelling(pl)[0]: n for n, p in entry.params.items() if p.present_in(pl)}
    rename.update({n: n for n in entry.params if n in {q[0] for q in sig}})
    receiver = entry.receiver
    spelled = [q[0] for q in sig if q[1] in ("po", "pk")]  # release X's names, in order
    if receiver is not None and spelled[:1] == [receiver]:
        spelled = spelled[1:]
    positional = [rename.get(n, n) for n in spelled]
    positional += [n for n in varargs_as if n not in positional]
    defaults: dict[str, Any] = {}
    for q in sig:
        name = rename.get(q[0], q[0])
        p = entry.params.get(name)
        if p is None or p.own or q[2] is None or q[1] in ("va", "vk"):
            continue
        value = _default_meaning(entry, name, q[2], release)
        if value is NotImplemented or value is OMIT or is_default(value, p.default):
            continue
        if name not in facade.adapter.present:  # type: ignore[attr-defined]
            continue  # a default, not a request: dropped where the release lacks it
        if installed and p.default is OMIT:
            continue
        defaults[name] = value
    return positional, rename, defaults


def binds_as_stable(
    facade: Callable[..., Any], release: str, varargs_as: tuple[str, ...] = ()
) -> bool:
    """Whether the installed release ``release`` binds every call of ``facade`` as the
    stable signature does: the same positional parameters, its own names stable, no
    default of another meaning.  Then ``binder(..., installed=True)`` would only add
    its cost."""
    entry: EntryPoint = facade.adapter.entry  # type: ignore[attr-defined]
    positional, rename, defaults = _binding(facade, release, varargs_as, True)
    stable = [n for n in entry.order if not entry.params[n].keyword_only]
    return not defaults and positional == stable and all(k == v for k, v in rename.items())


def binder(
    facade: Callable[..., Any],
    release: str,
    *,
    varargs_as: tuple[str, ...] = (),
    where: str | None = None,
    installed: bool = False,
) -> Callable[..., Any]:
    """The function that calls ``facade`` with arguments written for ``release``.

    ``varargs_as``: stable names that positional arguments after the release's named
    ones bind to (where the release's ``*args`` would take them); ``where``: the name
    its errors give the call (default ``fi_compat.written_for(release).<facade>``);
    ``installed``: ``release`` is the installed release (FlashInfer's own calls)."""
    entry: EntryPoint = facade.adapter.entry  # type: ignore[attr-defined]
    cache: dict[object, Callable[..., Any]] = facade.__dict__.setdefault("_written_for", {})
    key = (
        release
        if not varargs_as and where is None and not installed
        else (release, varargs_as, where, installed)
    )
    hit = cache.get(key)
    if hit is not None:
        return hit
    positional, rename, defaults = _binding(facade, release, varargs_as, installed)
    receiver = entry.receiver
    n_pos = len(positional)
    index = {n: i for i, n in enumerate(positional)}
    if where is None:
        where = f"fi_compat.written_for({release!r}).{entry.dotted.removeprefix('fi_compat.')}"

    def call(*args: Any, **kwargs: Any) -> Any:
        if receiver is not None:  # a method: (self, *args)
            recv, args = args[0], args[1:]
        if len(args) > n_pos:
            raise errors.PositionalMismatchError(
                f"{where} takes at most {n_pos} positional arguments (flashinfer-python "
                f"{release}'s {entry.qualname}), got {len(args)}"
            )
        kw = dict(zip(positional, args, strict=False))  # len(args) <= n_pos, checked
        given: dict[str, str] = {}  # stable name -> the keyword that gave it
        for k, v in kwargs.items():
            n = rename.get(k, k)
            if n in given or index.get(n, n_pos) < len(args):
                raise duplicate(k, n, given.get(n))
            given[n] = k
            kw[n] = v
        for n, v in defaults.items():
            if n not in kw:
                kw[n] = v
        return facade(**kw) if receiver is None else facade(recv, **kw)

    def duplicate(k: str, n: str, other: str | None) -> errors.InvalidArgumentError:
        """Two spellings of one parameter (release X's and the stable one, e.g. 0.2.4's
        ``maybe_output_emitted_token_num`` and ``maybe_output_emitted_draft_token_num``),
        or a keyword for a slot already given positionally: one value would be lost."""
        if other is not None:
            what = f"keywords {other!r} and {k!r} are one parameter ({n!r})"
        else:
            i = positional.index(n)
            spelled = next((a for a, b in rename.items() if b == n and a != n), n)
            what = (
                f"keyword {k!r} and positional argument {i + 1} ({spelled!r} in "
                f"flashinfer-python {release}) are one parameter ({n!r})"
            )
        return errors.InvalidArgumentError(
            f"{where}: {what}, given twice (one value would be lost); pass it once"
        )

    call.__name__ = entry.name.rpartition(".")[2]
    call.__qualname__ = f"written_for({release!r}).{entry.name}"
    call.__doc__ = f"{entry.dotted}, arguments bound as flashinfer-python {release} binds them."
    cache[key] = call
    return call


def written_class(cls: type, release: str) -> type:
    """A subclass of the stable wrapper class ``cls`` whose generated methods bind their
    arguments as flashinfer-python ``release`` does (aliases such as ``begin_forward``
    follow their method); built once per (class, release)."""
    cache: dict[str, type] = cls.__dict__["_fi_compat_written"]
    hit = cache.get(release)
    if hit is not None:
        return hit
    ns: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
    bound: dict[Any, Any] = {}
    for attr, fn in cls.__dict__.items():
        if hasattr(fn, "adapter"):
            if fn not in bound:
                bound[fn] = binder(fn, release)
            ns[attr] = bound[fn]
    out = type(cls.__name__, (cls,), ns)
    cache[release] = out
    return out


class _Module:
    def __init__(self, release: str, module: Any) -> None:
        self._release = release
        self._module = module

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self._module, name)
        if isinstance(fn, type) and "_fi_compat_base" in fn.__dict__:
            return written_class(fn, self._release)
        if not hasattr(fn, "adapter"):
            return fn  # helpers, enums: the same for every release
        return binder(fn, self._release)

    def __repr__(self) -> str:
        return f"<{self._module.__name__} written for flashinfer-python {self._release}>"


class WrittenFor:
    """``fi_compat.written_for(release)``: facade modules whose functions bind their
    arguments as flashinfer-python ``release`` does (see the module docstring)."""

    def __init__(self, release: str) -> None:
        from ..registry import KNOWN_RELEASES

        if release not in KNOWN_RELEASES:
            raise errors.InvalidArgumentError(
                f"fi_compat.written_for({release!r}): not a flashinfer-python release "
                f"fi_compat has a snapshot of ({KNOWN_RELEASES[0]} ... {KNOWN_RELEASES[-1]})"
            )
        self.release = release

    def __getattr__(self, module: str) -> _Module:
        import importlib

        from .._facades import FACADES

        if module not in FACADES:
            raise AttributeError(f"fi_compat has no facade module {module!r}")
        return _Module(self.release, importlib.import_module(f"fi_compat.{module}"))

    def __repr__(self) -> str:
        return f"fi_compat.written_for({self.release!r})"


def written_for(release: str) -> WrittenFor:
    """Facades that bind arguments as flashinfer-python ``release`` does."""
    return WrittenFor(release)
