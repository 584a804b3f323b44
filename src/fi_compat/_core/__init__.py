"""The core: table language, the shared translation, resolution, the generated fast path.

* :mod:`.table` -- :class:`Param`, :class:`EntryPoint` and the hooks
  (:class:`Emulation`, :class:`Normalizer`, :class:`ResultHook`): what fi_compat knows, as data;
* :mod:`.facts` -- per-release facts derived from the committed signature snapshots;
* :mod:`.adapter` -- one entry point on one release and :meth:`Adapter.translate`,
  the one mapping from stable arguments to the release's call;
* :mod:`.resolve` -- importing FlashInfer once, and explaining every failure;
* :mod:`.codegen` -- the generated fast path (registered with :mod:`linecache`);
* :mod:`.compiled` -- a facade's first call inside ``torch.compile``, warmed at trace time;
* :mod:`.enumtrans` -- stable enum members to each release's values;
* :mod:`.facade` -- building facades (eager or lazy), the validation switch, ``explain``;
* :mod:`.classes` -- wrapper classes: the stable subclass of a FlashInfer class, built lazily;
* :mod:`.written` -- ``written_for(release)``: calls bound as an older release binds them.

The core knows no FlashInfer module and no entry point by name, and never imports the
CLI (:mod:`fi_compat.cli`).
"""

from __future__ import annotations

from .adapter import Adapter
from .facade import adapters, explain, lazy_facades, make_facade, set_debug, set_validation
from .table import (
    OMIT,
    REQUIRED,
    Emulation,
    EntryPoint,
    Normalizer,
    OptionalDependency,
    Param,
    ResultHook,
)
from .written import written_for

EntryPoint.adapter_class = Adapter  # EntryPoint.select builds one (table never imports adapter)

__all__ = [
    "OMIT",
    "REQUIRED",
    "Adapter",
    "Emulation",
    "EntryPoint",
    "Normalizer",
    "OptionalDependency",
    "Param",
    "ResultHook",
    "adapters",
    "explain",
    "lazy_facades",
    "make_facade",
    "set_debug",
    "set_validation",
    "written_for",
]
