"""Re-exports: FlashInfer's own object under a facade module's name, resolved lazily.

A FlashInfer class whose constructor and methods never changed (``flashinfer.comm``'s
``Mapping``, ``MnnvlConfig``: the signature snapshots of every release hold one
signature) needs no adaptation: the facade module gives FlashInfer's own class, so
``isinstance`` and FlashInfer's own functions that take it work unchanged.  A
:class:`ReExport` row names it; :func:`lazy_reexports` resolves it on first access of
the name (PEP 562), importing FlashInfer then and not at import of the facade module.

Where the installed release cannot give it (nothing installed, a release before its
first one or from the release that removed it, an import failure: a missing optional
package, a known import issue), the name resolves to a stand-in class: importing the
name works (engines import names unconditionally and choose a backend at run time),
and instantiating it or reading any attribute of it raises the typed error
(:mod:`fi_compat.errors`) that names the cause and the fix.
"""

from __future__ import annotations

import _thread

from .. import errors
from ..registry import NEWEST, at_least, place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from ..detection import Distribution
    from ..registry import Placement
    from .table import OptionalDependency


class ReExport:
    """One FlashInfer object a facade module gives as is.

    ``snapshot``: the signature snapshot (``_snapshots/<snapshot>.json``, its facts in
    :mod:`fi_compat._core._facts`) that says where the object exists -- its constructor's,
    so the static suite can check that it never drifted; ``removed_fix``: what to use
    from the release that removed it; ``optional_deps`` / ``feature``: as for an
    :class:`~fi_compat._core.table.EntryPoint` (the import's typed errors)."""

    def __init__(
        self,
        *,
        facade: str,
        name: str,
        module: str,
        snapshot: str,
        doc: str,
        optional_deps: Sequence[OptionalDependency] = (),
        feature: str = "",
        removed_fix: str = "",
    ) -> None:
        from ._facts import FACTS, REMOVED

        self.facade = facade
        self.name = name
        self.module = module
        self.attr = name
        self.snapshot = snapshot
        self.doc = doc
        self.optional_deps = tuple(optional_deps)
        self.feature = feature
        self.removed_fix = removed_fix
        self.since: str = FACTS[snapshot][0]
        self.until: str | None = REMOVED.get(snapshot)

    @property
    def dotted(self) -> str:
        return f"{self.facade}.{self.name}"

    @property
    def qualname(self) -> str:
        return f"{self.module}.{self.attr}"

    # what fi_compat._core.resolve reads of an entry point
    def attr_on(self, p: Placement | None) -> str:
        return self.attr

    def optional_dependency(
        self, p: Placement, module: str | None = None
    ) -> OptionalDependency | None:
        return next(
            (
                d
                for d in self.optional_deps
                if d.range.contains(p) and (module is None or d.module == module)
            ),
            None,
        )

    def optional_dependencies(self, p: Placement) -> list[OptionalDependency]:
        return [d for d in self.optional_deps if d.range.contains(p)]

    def issues(self, p: Placement | None = None) -> list[Any]:
        from ..device import TABLE

        root = self.feature.partition(".")[0]
        return [
            i
            for i in TABLE
            if (i.covers_feature(self.feature) or i.feature in ("import", f"import.{root}"))
            and (p is None or i.range.contains(p))
        ]

    def exists_in(self, p: Placement) -> bool:
        return at_least(p, self.since) and (self.until is None or not at_least(p, self.until))

    def problem(self, fi: Distribution | None) -> Exception | None:
        """The typed error of the release itself (no import), or None."""
        if fi is None:
            return errors.FlashInferNotInstalledError(
                f"{self.dotted} is FlashInfer's {self.qualname}, and no flashinfer-python "
                f"distribution is installed on sys.path. Fix: pip install "
                f"'flashinfer-python>={self.since},<={NEWEST}'"
            )
        pl = place(fi.version)
        if pl.kind in ("older", "invalid") or not at_least(pl, self.since):
            return errors.UnsupportedFlashInferVersionError(
                f"{self.dotted} is FlashInfer's {self.qualname}, which exists from "
                f"flashinfer-python {self.since} on; installed: {fi.version}. Fix: pip "
                f"install 'flashinfer-python>={self.since},<={NEWEST}'"
            )
        if self.until is not None and at_least(pl, self.until):
            from ..registry import KNOWN_RELEASES

            last = KNOWN_RELEASES[KNOWN_RELEASES.index(self.until) - 1]
            fix = self.removed_fix or f"pin 'flashinfer-python>={self.since},<{self.until}'"
            return errors.UnsupportedFlashInferVersionError(
                f"{self.dotted} (FlashInfer {self.qualname}) was removed in "
                f"flashinfer-python {self.until}; installed: {fi.version}. fi_compat gives "
                f"it on {self.since} to {last}. Fix: {fix}"
            )
        return None

    def resolve(self) -> Any:
        """FlashInfer's object (imports FlashInfer); the typed error otherwise."""
        from ..detection import detect
        from . import resolve

        fi = detect().flashinfer
        err = self.problem(fi)
        if err is not None:
            raise err
        assert fi is not None
        return resolve.import_target(_Resolution(self, fi))  # type: ignore[arg-type]


class _Resolution:
    """What :func:`fi_compat._core.resolve.import_target` reads of an adapter."""

    def __init__(self, entry: ReExport, dist: Distribution) -> None:
        self.entry = entry
        self.dist = dist
        self.release = dist.version
        self.placement = place(dist.version)


class _Unavailable(type):
    """The metaclass of a stand-in: every use of the class raises its error."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise cls.__fi_compat_error__

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise cls.__fi_compat_error__


def stand_in(spec: ReExport, exc: Exception) -> type:
    """The class the name resolves to where FlashInfer cannot give the object."""
    return _Unavailable(
        spec.name,
        (),
        {
            "__module__": spec.facade,
            "__qualname__": spec.name,
            "__doc__": f"Unavailable here: {exc}",
            "__fi_compat_error__": exc,
        },
    )


def build(spec: ReExport) -> Any:
    try:
        return spec.resolve()
    except ImportError as exc:  # every typed import / version error is one
        return stand_in(spec, exc)


def lazy_reexports(ns: dict[str, Any], specs: Iterable[ReExport] | Mapping[str, ReExport]) -> None:
    """Add re-exports to a facade module (after :func:`lazy_facades` /
    :func:`lazy_classes`): each resolves on first access of its name."""
    table = {s.name: s for s in (specs.values() if hasattr(specs, "values") else specs)}
    previous = ns.get("__getattr__")
    lock = _thread.allocate_lock()

    def __getattr__(name: str) -> Any:
        spec = table.get(name)
        if spec is not None:
            with lock:
                if name not in ns:
                    ns[name] = build(spec)
            return ns[name]
        if previous is not None:
            return previous(name)
        raise AttributeError(f"module {ns['__name__']!r} has no attribute {name!r}")

    ns["__all__"] = sorted({*ns.get("__all__", ()), *table})
    ns["__getattr__"] = __getattr__
    ns["__dir__"] = lambda: sorted({*ns, *ns["__all__"]})
