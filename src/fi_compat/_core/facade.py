"""Facade construction (eager and lazy), the validation switch, and introspection.

``make_facade(stub, entry)`` selects the adapter for the detected release and returns
the generated function; ``lazy_facades(globals(), entries)`` does it on first attribute
access (PEP 562) for modules with many entry points.  Every facade built in the process
is recorded, for ``fi_compat.adapters()``, ``set_validation`` and ``explain``.
"""

from __future__ import annotations

import _thread

from .._switches import flag
from ..detection import detect
from .table import wrap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any, ParamSpec, TypeVar

    from .adapter import Adapter
    from .reexport import Reexport
    from .table import EntryPoint

    _P = ParamSpec("_P")
    _R = TypeVar("_R")

# fi_compat.set_validation(); FI_COMPAT_VALIDATE=0 starts with the checks off
_validation = [flag("FI_COMPAT_VALIDATE", True)]
# fi_compat.set_debug(); FI_COMPAT_DEBUG=1 starts with the value checks on
_debug = [flag("FI_COMPAT_DEBUG", False)]
# every facade built in this process: dotted name -> (adapter, function)
_BUILT: dict[str, tuple[Adapter, Any]] = {}
# facade modules with lazily built functions: module name -> build them all
_BUILDERS: dict[str, Callable[[], None]] = {}
# what each facade module declares (tools/stubs.py writes its .pyi from it): module name ->
# {"functions": {name: (stub, entry)}, "aliases": {name: public name}, "docs": {...},
#  "classes": {name: WrapperClass}, "objects": {name: re-exported FlashInfer object}}
_DECLARED: dict[str, dict[str, Any]] = {}


def declared(module: str) -> dict[str, Any]:
    """What the facade module ``module`` (imported) declares: its entry points' stubs
    (``"functions"``: {name: (stub, entry)}), the other names of them (``"aliases"``),
    the shared docstring parts (``"docs"``) and its wrapper classes (``"classes"``:
    {name: :class:`~fi_compat._core.classes.WrapperClass`}).  Cold; no FlashInfer import."""
    d = _DECLARED.get(module, {})
    return {
        "functions": dict(d.get("functions", {})),
        "aliases": dict(d.get("aliases", {})),
        "docs": dict(d.get("docs") or {}),
        "classes": dict(d.get("classes", {})),
        "objects": dict(d.get("objects") or {}),
    }


def fill_docs(stub: Any, entry: EntryPoint, docs: Mapping[str, str] | None) -> None:
    """Fill ``{name}`` parts of the stub's docstring (:func:`filled_doc`)."""
    if stub.__doc__:
        stub.__doc__ = filled_doc(stub.__doc__, entry, docs)


def filled_doc(doc: str, entry: EntryPoint, docs: Mapping[str, str] | None) -> str:
    """``doc`` with its ``{name}`` parts filled: shared ``docs`` and, from the table,
    ``{release_notes}`` and ``{positional}``."""
    for key, text in (docs or {}).items():
        doc = doc.replace("{" + key + "}", text)
    if "{release_notes}" in doc:
        doc = doc.replace("{release_notes}", entry.release_notes().lstrip())
    if "{positional}" in doc:
        doc = doc.replace("{positional}", "\n".join(wrap(positional_text(entry))).lstrip())
    return doc


def positional_text(entry: EntryPoint) -> str:
    """The positional rule of ``entry`` in words (docstrings)."""
    n, why = entry.positional
    names = entry.order[:n]
    head = (
        f"Positional arguments: the first {n} (through ``{names[-1]}``) mean the same on "
        f"every release; the rest are keyword-only"
        if n
        else "Every argument is keyword-only"
    )
    if why is None:
        return head + ", as in the newest release."
    return (
        f"{head}, because {why}. Code written positionally against one release binds "
        f"through ``fi_compat.written_for(release)``."
    )


def make_facade(
    stub: Callable[_P, _R], entry: EntryPoint, docs: Mapping[str, str] | None = None
) -> Callable[_P, _R]:
    """Build the facade function for ``entry`` against the detected FlashInfer release."""
    entry.bind_stub(stub)  # type: ignore[arg-type]
    fill_docs(stub, entry, docs)
    adapter = entry.select(detect().flashinfer)
    fn = adapter.build(stub)
    adapter.set_mode(validation=_validation[0], debug=_debug[0])
    _BUILT[entry.dotted] = (adapter, fn)
    return fn  # type: ignore[no-any-return]


def lazy_facades(
    ns: dict[str, Any],
    entries: Iterable[EntryPoint],
    docs: Mapping[str, str] | None = None,
    aliases: Mapping[str, str] | None = None,
    reexports: Iterable[Reexport] = (),
) -> None:
    """Build the facade functions of module namespace ``ns`` on first access.

    Each entry point's stub is the module-level function of the entry point's name (the
    one place the name is written): it is taken out of ``ns`` here and comes back as the
    generated function when first looked up (PEP 562 ``__getattr__``), so importing a
    facade module with many entry points costs only its stubs.  ``aliases``: {other name:
    public name} (the same function under a FlashInfer release's older name).
    ``reexports``: FlashInfer objects handed out as they are (:mod:`.reexport`), resolved
    on first access (a stand-in raising the typed error where the release cannot give
    one).  The names join the module's ``__all__`` (the literal ``__all__`` lists only
    what is not an entry point).  A missing stub is an import error."""
    alias = dict(aliases or {})
    objects = {r.name: r for r in reexports}
    lock = _thread.allocate_lock()
    table: dict[str, tuple[Callable[..., Any], EntryPoint]] = {}
    for entry in entries:
        stub = ns.pop(entry.name, None)
        if not callable(stub) or getattr(stub, "__name__", None) != entry.name:
            raise ValueError(
                f"{ns['__name__']} declares no stub for its entry point {entry.dotted}: "
                f"define `def {entry.name}(...)` (the typed signature) before lazy_facades()"
            )
        entry.bind_stub(stub)  # the tables know their signature from import on
        table[entry.name] = (stub, entry)
    ns["__all__"] = sorted({*ns.get("__all__", ()), *table, *alias, *objects})
    _DECLARED.setdefault(ns["__name__"], {}).update(
        functions=table, aliases=alias, docs=docs, objects=objects
    )

    def build(name: str) -> Any:
        with lock:
            if name not in ns:
                stub, entry = table[name]
                ns[name] = make_facade(stub, entry, docs)
        return ns[name]

    def __getattr__(name: str) -> Any:
        if name in table:
            return build(name)
        if name in alias:
            ns[name] = build(alias[name])
            return ns[name]
        if name in objects:
            ns[name] = objects[name].value()  # FlashInfer's object, or a stand-in
            return ns[name]
        raise AttributeError(f"module {ns['__name__']!r} has no attribute {name!r}")

    def build_all() -> None:
        for name in table:
            build(name)

    ns["__getattr__"] = __getattr__
    ns["__dir__"] = lambda: sorted({*ns, *table, *alias, *objects})
    _BUILDERS[ns["__name__"]] = build_all


def set_validation(enabled: bool) -> None:
    """Turn the metadata checks of every facade on or off (default on).

    Off, a call skips the shape/rank/dtype/device and scalar-kind checks of the fast
    path (saving their cost) and bad input reaches FlashInfer, which reports it in its
    own way, or not at all.  Parameter policies (drop / emulate /
    UnsupportedParameterError), dtype normalisation and the general path's checks stay
    on.  Applies to facades built later too."""
    _validation[0] = bool(enabled)
    for adapter, _fn in _BUILT.values():
        adapter.set_mode(validation=_validation[0], debug=_debug[0])


def set_debug(enabled: bool) -> None:
    """Turn the debug checks of every facade on or off (default off; ``FI_COMPAT_DEBUG=1``).

    On, every call goes through the general path and also checks what metadata cannot
    show, reading tensor values (host syncs; not for production or CUDA-graph capture):
    ``cu_seqlens`` starting at 0, non-decreasing and ending at the token count, int64
    offsets that fit the int32 a 0.7.x release reads, pool and expert indices in range.
    Each entry point's module docstring lists its checks."""
    _debug[0] = bool(enabled)
    for adapter, _fn in _BUILT.values():
        adapter.set_mode(validation=_validation[0], debug=_debug[0])


def debug_enabled() -> bool:
    return _debug[0]


def adapters(build: bool = True) -> dict[str, Adapter]:
    """The adapters of every facade function of the imported facade modules, keyed by
    dotted name (``build=False``: only those built so far)."""
    if build:
        for build_all in list(_BUILDERS.values()):
            build_all()
    return {k: a for k, (a, _) in _BUILT.items()}


def explain(facade: Any) -> str:
    """What ``facade`` runs on the installed release: the adapter's choice and the
    generated code (the same text a traceback through it shows).  A wrapper class (or a
    subclass of one): each of its fi_compat methods so, under its frozen signature."""
    if isinstance(facade, type):
        return _explain_class(facade)
    adapter = getattr(facade, "adapter", None)
    if adapter is None:
        raise TypeError(f"{facade!r} is not a fi_compat facade")
    d = adapter.describe()
    head = [f"# {k}: {v}" for k, v in d.items() if v not in (None, [], {})]
    return "\n".join(head) + "\n" + str(adapter.source)


def _explain_class(cls: type) -> str:
    import inspect

    for k in cls.__mro__:  # a user's subclass: its fi_compat base
        spec = _DECLARED.get(k.__module__, {}).get("classes", {}).get(k.__qualname__)
        if spec is not None:
            break
    else:
        raise TypeError(f"{cls!r} is not a fi_compat wrapper class")
    out = [f"# class {spec.facade}.{spec.name}: fi_compat's methods over {spec.module}.{spec.name}"]
    out += [f"# {old} = {new} (its older name)" for old, new in spec.aliases.items()]
    stubs = spec.stubs()
    for method, fn in spec.functions().items():
        sig = inspect.signature(stubs[method][0])
        params = [  # the annotations as written, not quoted; no ``self``
            p.replace(annotation=_Text(p.annotation)) if isinstance(p.annotation, str) else p
            for p in sig.parameters.values()
            if p.name != "self"
        ]
        ret = sig.return_annotation
        sig = sig.replace(
            parameters=params, return_annotation=_Text(ret) if isinstance(ret, str) else ret
        )
        out += ["", f"## {spec.name}.{method}{sig}", explain(fn)]
    return "\n".join(out)


class _Text(str):
    """An annotation string shown as written (``inspect`` shows other objects' repr)."""

    def __repr__(self) -> str:
        return str(self)
