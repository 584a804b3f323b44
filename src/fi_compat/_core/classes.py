"""Wrapper classes: a stable subclass of the installed FlashInfer class, built lazily.

FlashInfer's attention API is classes (``BatchDecodeWithPagedKVCacheWrapper``: ``plan``
once per batch, ``run`` per layer) whose methods change signature release by release.
A :class:`WrapperClass` row lists the class's stable methods, each an
:class:`~fi_compat._core.table.EntryPoint` with ``receiver="self"`` and a stub, and the
old method names kept as aliases.  On first access of the class name in its facade
module (PEP 562), fi_compat imports FlashInfer's class and builds

    class BatchDecodeWithPagedKVCacheWrapper(flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper):
        __init__ = <generated, frozen signature>   # calls the base's __init__ by keyword
        plan = <generated>                          # calls the base's plan by keyword
        run = <generated>
        begin_forward = plan                        # old names, where the table says so

so ``isinstance(w, flashinfer.BatchDecodeWithPagedKVCacheWrapper)`` holds, FlashInfer's
helpers that take the wrapper (``fast_decode_plan(w, ...)``) and its own methods that
call ``self.run(...)`` work, private state FlashInfer writes on ``self`` stays where
FlashInfer reads it, and users may subclass.  Each generated method is an ordinary
facade function (the same fast path, translation, errors and ``explain``) whose
FlashInfer target is the base class's function, called as ``Base.plan(self, **kw)``.
Per-instance state an emulation needs from ``plan`` to ``run`` lives on ``self`` under
``_fi_compat_*`` names.

FlashInfer's own methods that the subclass inherits unchanged (``forward``,
``forward_return_lse``) call ``self.run(...)`` / ``self.run_return_lse(...)`` in their
release's convention, positional arguments included.  The subclass wraps each inherited
method whose code calls a name it overrides (read from the method's bytecode when the
class is built) so that the method runs with the instance switched, for the duration of
the call, to a *release view* of its class: the same class but for the overridden
names, which there bind their arguments by the installed release's own signature (its
snapshot, as ``fi_compat.written_for(installed)`` binds them) and then run the stable
method by keyword, with its checks, normalisations and emulations.  Calls from user code
are untouched and bind by the frozen signature; the stable ``plan`` / ``run`` carry no
extra cost (the switch is ``__class__`` assignment inside the inherited method only).
The audit of every release (which methods, which calls): ``docs/wrappers.md``.

Building the method facades needs no FlashInfer import (``fi_compat.adapters()`` and
``info`` list them); only the class object does.  When FlashInfer cannot be imported
(not installed, below the floor, an import failure) the name resolves to a stand-in
class whose instantiation raises the typed error, so engines may import the name
unconditionally and choose another backend at run time.
"""

from __future__ import annotations

import _thread
import functools
import types

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from .table import EntryPoint


class WrapperClass:
    """One FlashInfer class: its stable methods and the old names kept for them.

    ``methods``: {method name: (stub, entry)}, each entry with ``receiver="self"`` and
    ``attr="<Class>.<method>"``; ``aliases``: {old name: stable method name} (e.g.
    ``begin_forward`` -> ``plan``); ``extra``: plain attributes of the subclass (a
    method every release treats the same, written by hand); ``doc``: what the class is
    for, the head of its docstring (:meth:`docstring` adds which methods are fi_compat's
    and which FlashInfer's); ``inherits``: the row of the stable class of FlashInfer's
    base class, whose generated methods (the same functions and adapters), aliases and
    extras this class shares where FlashInfer's subclass inherits them unchanged (the
    snapshots record ``"inherited_from"``); ``own_varargs``: {method: (release,
    names)}: before ``release``, FlashInfer's own methods pass ``names`` positionally
    after the method's named positional parameters (into its ``*args``), meaning those
    parameters (in the release view, they bind to them); ``flashinfer_methods``:
    FlashInfer's own methods the class inherits that call one of the names above on
    ``self`` in some release (``forward``; the audit of ``docs/wrappers.md``, which a
    static test holds this to): they run in the release view, and the docstrings say
    so; ``static``: the methods that are FlashInfer ``@staticmethod`` s (their entries
    have no receiver; the subclass binds the generated function as a static method, and a
    stand-in class keeps them, each raising the typed error when called)."""

    def __init__(
        self,
        *,
        facade: str,
        name: str,
        module: str,
        methods: Mapping[str, tuple[Callable[..., Any], EntryPoint]],
        aliases: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
        doc: str = "",
        inherits: WrapperClass | None = None,
        own_varargs: Mapping[str, tuple[str, tuple[str, ...]]] | None = None,
        flashinfer_methods: tuple[str, ...] = (),
        static: tuple[str, ...] = (),
    ) -> None:
        self.facade = facade
        self.static: frozenset[str] = frozenset(static) | (
            inherits.static if inherits else frozenset()
        )
        self.name = name
        self.module = module
        self.methods = dict(methods)
        self.inherits = inherits
        self.aliases: dict[str, str] = {**(inherits.aliases if inherits else {}), **(aliases or {})}
        self.extra: dict[str, Any] = {**(inherits.extra if inherits else {}), **(extra or {})}
        self.own_varargs: dict[str, tuple[str, tuple[str, ...]]] = {
            **(inherits.own_varargs if inherits else {}),
            **(own_varargs or {}),
        }
        self.doc = doc
        self.flashinfer_methods: tuple[str, ...] = tuple(
            dict.fromkeys([*(inherits.flashinfer_methods if inherits else ()), *flashinfer_methods])
        )
        for method, (stub, entry) in self.methods.items():
            if (entry.receiver is None) != (method in self.static) or entry.module != module:
                raise ValueError(f"{name}: {entry.name} is no method entry of {module}")
            entry.bind_stub(stub)  # type: ignore[arg-type]
        self._functions: dict[str, Any] | None = None
        self._cls: type | None = None
        self._lock = _thread.allocate_lock()

    def functions(self) -> dict[str, Any]:
        """The generated methods (no FlashInfer import), built once."""
        if self._functions is None:
            from .facade import make_facade

            out = {}
            for method, (stub, entry) in self.methods.items():
                fn = make_facade(stub, entry)
                fn.__qualname__ = f"{self.name}.{method}"
                fn.__name__ = method
                out[method] = fn
            if self.inherits is not None:  # after its own: _make resolves the first
                out.update((m, f) for m, f in self.inherits.functions().items() if m not in out)
            self._functions = out
        return self._functions

    def stubs(self) -> dict[str, tuple[Callable[..., Any], EntryPoint]]:
        """{method: (stub, entry)}: the class's own and, after them, those it inherits
        from the :attr:`inherits` row (what :meth:`functions` generates from)."""
        out = dict(self.methods)
        if self.inherits is not None:
            out.update((m, v) for m, v in self.inherits.stubs().items() if m not in out)
        return out

    def docstring(self) -> str:
        """The class docstring (``__doc__`` and the generated ``.pyi``), the same with
        any FlashInfer release or none: :attr:`doc`, then which methods are fi_compat's
        (the same on every release) and which are the installed FlashInfer class's own."""
        stubs = self.stubs()
        entry = stubs["__init__"][1] if "__init__" in stubs else next(iter(stubs.values()))[1]
        span = f"flashinfer-python {entry.since} and later" + (
            f" (removed in {entry.until})" if entry.until else ""
        )
        code = ", ".join(f"``{m}``" for m in stubs)
        items = [
            f"{code}: the frozen signatures below; each checks its arguments, drops or "
            "refuses each parameter a release lacks as its docstring lists, and calls "
            "FlashInfer's own by keyword."
        ]
        items += [f"``{old}``: ``{new}`` (its older name)." for old, new in self.aliases.items()]
        for name, value in self.extra.items():
            first = " ".join((getattr(value, "__doc__", None) or "").split("\n\n")[0].split())
            if first[:1].isupper() and first[1:2].islower():
                first = first[0].lower() + first[1:]
            items.append(f"``{name}``: {first}")
        own = (
            [
                f"{', '.join(f'``{m}``' for m in self.flashinfer_methods)}: the installed "
                "release's own (its signature and docstring); their calls of the methods "
                "above on ``self`` bind by the installed release's signature, then fi_compat's "
                "method runs, with its checks (fi_compat's ``docs/wrappers.md``)."
            ]
            if self.flashinfer_methods
            else []
        )
        own.append(
            "every other attribute (properties, helpers such as ``reset_workspace_buffer``, "
            "private state): the installed release's, unchanged; not part of fi_compat's "
            "frozen API."
        )
        parts = [
            " ".join(self.doc.split()),
            f"A subclass of the installed ``{self.module}.{self.name}`` (``isinstance`` with "
            f"it holds), built when the name is first accessed; {span}.",
            "fi_compat's methods, the same on every release:",
            "\n".join(_bullet(t) for t in items),
            "FlashInfer's own, inherited from the installed release's class:",
            "\n".join(_bullet(t) for t in own),
        ]
        return "\n\n".join(_fill(p) if not p.startswith("* ") else p for p in parts) + "\n"

    def build(self) -> type:
        """The stable subclass of the installed FlashInfer class (thread-safe, once)."""
        if self._cls is not None:
            return self._cls
        with self._lock:
            if self._cls is None:
                self._cls = self._make()
        return self._cls

    def _make(self) -> type:
        fns = self.functions()
        first = next(iter(fns.values()))
        try:
            first.adapter.resolve()  # typed errors for every import / version problem
            base = _import_class(self.module, self.name)
        except ImportError as exc:
            return self._stand_in(exc)
        return self.subclass(base, fns)

    def subclass(self, base: type, fns: Mapping[str, Any]) -> type:
        """The stable subclass of ``base`` with the generated methods ``fns`` (built for
        one release; tests pass stand-ins of FlashInfer's class)."""
        ns: dict[str, Any] = {
            "__module__": self.facade,
            "__qualname__": self.name,
            "__doc__": self.docstring(),
            "_fi_compat_base": base,
            "_fi_compat_written": {},  # release -> subclass (fi_compat.written_for)
            **{m: staticmethod(f) if m in self.static else f for m, f in fns.items()},
            **self.extra,
        }
        for old, new in self.aliases.items():
            ns[old] = ns[new]
        views: dict[type, type] = {}
        bound = {m: f for m, f in fns.items() if m not in self.static}
        native = functools.partial(self._native, bound)
        names = {*bound, *self.extra, *self.aliases}
        inside = inherited_callers(base, names)
        for name, fn in inside.items():
            ns[name] = _in_release_view(fn, views, native)
            ns[name].__doc__ = _release_view_doc(name, fn, names)
        ns["_fi_compat_inside"] = tuple(sorted(inside))  # the wrapped inherited methods
        ns["_fi_compat_views"] = views
        return type(self.name, (base,), ns)

    def _native(self, fns: Mapping[str, Any], cls: type) -> type:
        """The release view of ``cls`` (the stable class or a subclass of it): each
        generated method (but ``__init__``) and its aliases bound by the installed
        release's signature, then the stable method; the rest is ``cls``'s."""
        from ..registry import at_least
        from .written import binder, binds_as_stable

        ns: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
        for method, fn in fns.items():
            if method == "__init__":
                continue
            adapter = fn.adapter
            pl = adapter.placement
            release = pl.treated_as if pl is not None else None
            if release is None or adapter.problem is not None:
                ns[method] = fn  # nothing to bind by: the stable method raises the error
                continue
            varargs: tuple[str, ...] = ()
            own = self.own_varargs.get(method)
            if own is not None and not at_least(pl, own[0]):
                varargs = own[1]
            if binds_as_stable(fn, release, varargs):
                ns[method] = fn  # the stable method itself (over a written_for class's)
                continue
            ns[method] = binder(
                fn,
                release,
                varargs_as=varargs,
                where=(
                    f"{self.facade}.{self.name}.{method}, called by FlashInfer's own method "
                    f"({adapter.release})"
                ),
                installed=True,
            )
        for old, new in self.aliases.items():
            if new in ns:
                ns[old] = ns[new]
        return type(cls.__name__, (cls,), ns)

    def _stand_in(self, exc: ImportError) -> type:
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            raise exc

        statics = {m: staticmethod(f) for m, f in self.functions().items() if m in self.static}
        return type(
            self.name,
            (),
            {
                "__module__": self.facade,
                "__qualname__": self.name,
                "__doc__": f"Unavailable here: {exc}\n\n{self.docstring()}",
                "__init__": __init__,
                "__fi_compat_error__": exc,
                **statics,  # each raises the typed error when called
            },
        )


def _fill(text: str, width: int = 88, first: str = "", rest: str = "") -> str:
    """``text`` wrapped at ``width``, its first line after ``first``, the others after
    ``rest`` (no textwrap import)."""
    lines: list[str] = []
    cur: list[str] = []
    size = len(first)
    for word in text.split():
        if cur and size + 1 + len(word) > width:
            lines.append(" ".join(cur))
            cur, size = [], len(rest)
        size += len(word) + (1 if cur else 0)
        cur.append(word)
    lines.append(" ".join(cur))
    return "\n".join((first if i == 0 else rest) + line for i, line in enumerate(lines))


def _bullet(text: str) -> str:
    return _fill(text, first="* ", rest="  ")


def _release_view_doc(name: str, fn: Any, bound: set[str]) -> str:
    """The docstring of FlashInfer's inherited method ``name`` on the stable subclass
    (``help()``): what runs, then FlashInfer's own docstring."""
    import inspect

    calls = ", ".join(f"``self.{n}``" for n in sorted(self_attrs(fn) & bound))
    theirs = inspect.cleandoc(fn.__doc__ or "")
    note = _fill(
        f"FlashInfer's own ``{name}`` (the installed release's, inherited), run by fi_compat "
        f"in the release view: its calls of {calls} bind by the installed release's "
        "signature, then fi_compat's method runs, with its checks (fi_compat's "
        "docs/wrappers.md)." + (" FlashInfer's docstring follows." if theirs else "")
    )
    return f"{note}\n\n{theirs}" if theirs else note


def inherited_callers(base: type, names: set[str]) -> dict[str, Any]:
    """The plain functions ``base`` binds (its own or inherited, ``object`` aside) that
    the subclass does not override (``names``) and whose code calls ``self.<name>`` for
    one of ``names``: FlashInfer's own methods that reach the stable ones."""
    out: dict[str, Any] = {}
    seen: set[str] = set()
    for klass in base.__mro__[:-1]:
        for attr, fn in vars(klass).items():
            if attr in seen:
                continue
            seen.add(attr)
            if attr in names or not isinstance(fn, types.FunctionType):
                continue
            if self_attrs(fn) & names:
                out[attr] = fn
    return out


# an instruction that leaves the local it names on the stack (3.10-3.14 spellings; the
# superinstructions load two, the second on top)
_LOADS = frozenset(
    (
        "LOAD_FAST",
        "LOAD_FAST_CHECK",
        "LOAD_FAST_BORROW",
        "LOAD_DEREF",
        "LOAD_FAST_LOAD_FAST",
        "LOAD_FAST_BORROW_LOAD_FAST_BORROW",
    )
)


def self_attrs(fn: Any) -> set[str]:
    """The attributes ``fn`` reads on its first parameter (``self.run``), from its
    bytecode and its nested functions' (closures name ``self`` the same); decorated
    functions are read through ``__wrapped__``.  Cold: when a class is built."""
    import dis

    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    code = getattr(fn, "__code__", None)
    if code is None or not code.co_argcount:
        return set()
    me = code.co_varnames[0]
    out: set[str] = set()
    todo = [code]
    while todo:
        c = todo.pop()
        prev = None
        for ins in dis.get_instructions(c):
            if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and prev is not None:
                loaded = prev.argval[-1] if isinstance(prev.argval, tuple) else prev.argval
                if prev.opname in _LOADS and loaded == me:
                    out.add(ins.argval)
            prev = ins
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


def _in_release_view(
    fn: Callable[..., Any], views: dict[type, type], native: Callable[[type], type]
) -> Callable[..., Any]:
    """``fn`` (an inherited FlashInfer method) run with ``self`` switched to the release
    view of its class (built once per class) and switched back after, also on error."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        cls = self.__class__
        view = views.get(cls)
        if view is None:
            view = views[cls] = native(cls)
            views[view] = view  # a nested inherited call finds itself already inside
        if view is cls:
            return fn(self, *args, **kwargs)
        self.__class__ = view
        try:
            return fn(self, *args, **kwargs)
        finally:
            self.__class__ = cls

    functools.update_wrapper(method, fn)
    return method


def _import_class(module: str, name: str) -> type:
    import importlib

    cls = getattr(importlib.import_module(module), name)
    if not isinstance(cls, type):
        raise TypeError(f"{module}.{name} is not a class")
    return cls


def lazy_classes(ns: dict[str, Any], classes: Mapping[str, WrapperClass]) -> None:
    """Add wrapper classes to a facade module built with :func:`lazy_facades` (or none):
    each is built on first access of its name; ``fi_compat.adapters()`` builds only the
    method facades (no FlashInfer import)."""
    from .facade import _BUILDERS, _DECLARED

    _DECLARED.setdefault(ns["__name__"], {})["classes"] = classes
    previous = ns.get("__getattr__")
    lock = _thread.allocate_lock()

    def __getattr__(name: str) -> Any:
        spec = classes.get(name)
        if spec is not None:
            with lock:
                if name not in ns:
                    ns[name] = spec.build()
            return ns[name]
        if previous is not None:
            return previous(name)
        raise AttributeError(f"module {ns['__name__']!r} has no attribute {name!r}")

    prev_builder = _BUILDERS.get(ns["__name__"])

    def build_all() -> None:
        if prev_builder is not None:
            prev_builder()
        for spec in classes.values():
            spec.functions()

    ns["__all__"] = sorted({*ns.get("__all__", ()), *classes})
    ns["__getattr__"] = __getattr__
    ns["__dir__"] = lambda: sorted({*ns, *ns["__all__"]})
    _BUILDERS[ns["__name__"]] = build_all
