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

Building the method facades needs no FlashInfer import (``fi_compat.adapters()`` and
``info`` list them); only the class object does.  When FlashInfer cannot be imported
(not installed, below the floor, an import failure) the name resolves to a stand-in
class whose instantiation raises the typed error, so engines may import the name
unconditionally and choose another backend at run time.
"""

from __future__ import annotations

import _thread

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
    method every release treats the same, written by hand); ``doc``: the class
    docstring; ``inherits``: the row of the stable class of FlashInfer's base class, whose
    generated methods (the same functions and adapters), aliases and extras this class
    shares where FlashInfer's subclass inherits them unchanged (the snapshots record
    ``"inherited_from"``)."""

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
    ) -> None:
        self.facade = facade
        self.name = name
        self.module = module
        self.methods = dict(methods)
        self.inherits = inherits
        self.aliases: dict[str, str] = {**(inherits.aliases if inherits else {}), **(aliases or {})}
        self.extra: dict[str, Any] = {**(inherits.extra if inherits else {}), **(extra or {})}
        self.doc = doc
        for stub, entry in self.methods.values():
            if entry.receiver is None or entry.module != module:
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
        ns: dict[str, Any] = {
            "__module__": self.facade,
            "__qualname__": self.name,
            "__doc__": self.doc or base.__doc__,
            "_fi_compat_base": base,
            "_fi_compat_written": {},  # release -> subclass (fi_compat.written_for)
            **fns,
            **self.extra,
        }
        for old, new in self.aliases.items():
            ns[old] = fns[new] if new in fns else self.extra[new]
        return type(self.name, (base,), ns)

    def _stand_in(self, exc: ImportError) -> type:
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            raise exc

        return type(
            self.name,
            (),
            {
                "__module__": self.facade,
                "__qualname__": self.name,
                "__doc__": f"Unavailable here: {exc}",
                "__init__": __init__,
                "__fi_compat_error__": exc,
            },
        )


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
    from .facade import _BUILDERS

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
