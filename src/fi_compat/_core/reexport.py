"""Re-exported FlashInfer objects: a class or value fi_compat hands out as it is.

Some FlashInfer names are objects, not functions to adapt: the autotuner's classes
(``AutoTuner``, ``TuningConfig``), whose constructors never drifted over the releases
fi_compat serves them on.  A :class:`Reexport` row names one; the facade module lists it
in ``lazy_facades(..., reexports=...)``, and the name resolves on first access to
FlashInfer's own object (the same object: ``isinstance`` and FlashInfer's own helpers
work), imported then and cached.

The first release comes from the snapshot facts, as for an entry point (a class's
snapshot records its constructor: ``tools/snapshot.py flashinfer.autotuner:TuningConfig``).
Where the installed release predates it (or the ``floor``: the first release whose
constructor is the stable one), the access raises
:class:`~fi_compat.errors.UnsupportedFlashInferVersionError` naming that release, an
``ImportError``, so ``from fi_compat.autotuner import TuningConfig`` fails as an import
does.  Importing FlashInfer's module fails as a facade's first call does (a missing
optional package named, an installation problem explained: :mod:`.resolve`).
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

__all__ = ["Reexport"]

_UNSET: Any = object()


class Reexport:
    """FlashInfer's ``module.attr``, handed out as it is by ``facade.name``.

    ``floor``: the first release fi_compat hands it out on, where older releases have
    the name with another constructor (their releases are refused as below the floor);
    ``note``: what it is (docs); ``ref``: the release and change the floor follows."""

    # the parts of an entry point's behaviour a re-export shares (duck-typed: the
    # resolution code of :mod:`.resolve` reads these names)
    attr_on = EntryPoint.attr_on
    issues = EntryPoint.issues
    optional_dependency = EntryPoint.optional_dependency
    qualname = EntryPoint.qualname
    dotted = EntryPoint.dotted

    def __init__(
        self,
        *,
        facade: str,
        name: str,
        module: str,
        attr: str | None = None,
        floor: str | None = None,
        note: str = "",
        ref: str = "",
        feature: str = "",
        optional_deps: Sequence[OptionalDependency] = (),
    ) -> None:
        self.facade = facade
        self.name = name
        self.module = module
        self.attr = attr or name
        self.attr_spelled: tuple[tuple[str, str], ...] = ()
        self.floor = floor
        self.note = note
        self.ref = ref
        self.feature = feature
        self.optional_deps = tuple(optional_deps)
        self.removed_fix = ""
        self.until: str | None = None
        self.older_unserved = False
        self.since = facts.first(self)  # type: ignore[arg-type]  # duck-typed entry
        self._value: Any = _UNSET
        self._lock = _thread.allocate_lock()

    def exists_in(self, p: Placement) -> bool:
        return at_least(p, self.since) and (self.until is None or not at_least(p, self.until))

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
