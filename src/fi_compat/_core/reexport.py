"""Re-exported FlashInfer objects: a class or value fi_compat hands out as it is.

Some FlashInfer names are objects, not functions to adapt: the autotuner's classes
(``AutoTuner``, ``TuningConfig``), ``flashinfer.comm``'s ``Mapping`` and the MNNVL
classes, whose constructors never drifted over the releases fi_compat serves them on
(the signature snapshots of those releases hold one parameter list).  A
:class:`Reexport` row names one; the facade module lists it in
``lazy_facades(..., reexports=...)``, and the name resolves on first access to
FlashInfer's own object (the same object: ``isinstance`` and FlashInfer's own functions
that take it work), imported then, not at import of the facade module.

The first release comes from the snapshot facts, as for an entry point (a class's
snapshot records its constructor: ``tools/snapshot.py flashinfer.autotuner:TuningConfig``;
``snapshot`` names another stem, e.g. ``comm.Mapping.__init__``), and so does the release
that removed it.  Where the installed release cannot give the object (nothing installed,
a release before its first one or the ``floor``, the first release whose constructor is
the stable one, or from the release that removed it; an import failure: a missing
optional package, a known import issue), the name resolves to a stand-in class, as a
wrapper class does (:mod:`.classes`): importing the name works (engines import names
unconditionally and choose a backend at run time), and calling it or reading any
attribute of it raises the typed error (an ``ImportError``, :mod:`fi_compat.errors`)
that names the cause and the fix, the same error a facade function's first call raises.
"""

from __future__ import annotations

import _thread

from ..registry import at_least, place
from . import facts
from .table import EntryPoint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ..detection import Distribution
    from ..registry import Placement
    from .table import OptionalDependency

__all__ = ["Reexport", "stand_in"]

_UNSET: Any = object()


class Reexport:
    """FlashInfer's ``module.attr``, handed out as it is by ``facade.name``.

    ``snapshot``: the snapshot stem (default ``<module>.<attr>`` without ``flashinfer.``);
    ``floor``: the first release fi_compat hands it out on, where older releases have
    the name with another constructor (their releases are refused as below the floor);
    ``note``: what it is (docs); ``ref``: the release and change the floor follows;
    ``removed_fix``: what to use from the release that removed it; ``feature`` /
    ``optional_deps``: as for an :class:`~fi_compat._core.table.EntryPoint` (the
    import's typed errors)."""

    # the parts of an entry point's behaviour a re-export shares (duck-typed: the
    # resolution code of :mod:`.resolve` reads these names)
    attr_on = EntryPoint.attr_on
    issues = EntryPoint.issues
    optional_dependency = EntryPoint.optional_dependency
    optional_dependencies = EntryPoint.optional_dependencies
    qualname = EntryPoint.qualname
    dotted = EntryPoint.dotted

    def __init__(
        self,
        *,
        facade: str,
        name: str,
        module: str,
        attr: str | None = None,
        snapshot: str | None = None,
        floor: str | None = None,
        note: str = "",
        ref: str = "",
        feature: str = "",
        optional_deps: Sequence[OptionalDependency] = (),
        removed_fix: str = "",
    ) -> None:
        self.facade = facade
        self.name = name
        self.module = module
        self.attr = attr or name
        self.snapshot = snapshot or facts.key(module, self.attr)
        self.attr_spelled: tuple[tuple[str, str], ...] = ()
        self.floor = floor
        self.note = note
        self.ref = ref
        self.feature = feature
        self.optional_deps = tuple(optional_deps)
        self.removed_fix = removed_fix
        self.until: str | None = None
        self.older_unserved = False
        self.since = facts.first(self)  # type: ignore[arg-type]  # duck-typed entry
        self._value: Any = _UNSET
        self._lock = _thread.allocate_lock()

    def exists_in(self, p: Placement) -> bool:
        return at_least(p, self.since) and (self.until is None or not at_least(p, self.until))

    def problem(self, fi: Distribution | None) -> Exception | None:
        """The typed error of the release ``fi`` itself (nothing imported), or None."""
        from . import resolve

        return resolve.problem_error(_Resolution(self, fi))  # type: ignore[arg-type]

    def resolve(self, fi: Distribution | None = None) -> Any:
        """FlashInfer's object on the installed release (imported once), or the typed
        error of the selection policy."""
        if self._value is not _UNSET and fi is None:
            return self._value
        from ..detection import detect

        with self._lock:
            if self._value is not _UNSET and fi is None:
                return self._value
            r = _Resolution(self, detect().flashinfer if fi is None else fi)
            from . import resolve

            err = resolve.problem_error(r)  # type: ignore[arg-type]
            if err is not None:
                raise err
            value = resolve.import_target(r)  # type: ignore[arg-type]
            if fi is None:
                self._value = value
            return value

    def value(self) -> Any:
        """What the facade module's name holds: :meth:`resolve`, or a stand-in raising
        its error."""
        try:
            return self.resolve()
        except ImportError as exc:  # every typed import / version error is one
            return stand_in(self, exc)


class _Resolution:
    """What :mod:`.resolve` reads of an adapter, for one re-export on one release."""

    def __init__(self, entry: Reexport, dist: Distribution | None) -> None:
        self.entry = entry
        self.dist = dist
        self.release = dist.version if dist else None
        self.sources: dict[str, str] = {}
        self.placement: Placement | None = None
        self.problem: str | None = None
        if dist is None:
            self.problem = "not-installed"
            return
        pl = self.placement = place(dist.version)
        if pl.kind in ("older", "invalid") or not at_least(pl, entry.since):
            self.problem = "below-floor"
        elif entry.until is not None and at_least(pl, entry.until):
            self.problem = "removed"


class _Unavailable(type):
    """The metaclass of a stand-in: every use of the class raises its error."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise cls.__fi_compat_error__

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise cls.__fi_compat_error__


def stand_in(spec: Reexport, exc: Exception) -> type:
    """The class ``spec``'s name holds where FlashInfer cannot give the object."""
    return _Unavailable(
        spec.name,
        (),
        {
            "__module__": spec.facade,
            "__qualname__": spec.name,
            "__doc__": f"Unavailable here: {exc}\n\n{spec.note}",
            "__fi_compat_error__": exc,
        },
    )
