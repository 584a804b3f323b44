"""A facade's first call inside ``torch.compile``: warm it outside the trace.

A facade's first call does work Dynamo cannot trace: resolution imports FlashInfer
under a lock, the first call compiles the contract checks (``compile``/``exec``) and
registers the generated sources with :mod:`linecache`.  Under
``torch.compile(fullgraph=True)`` each of those is an error ("Unsupported context
manager", "Failed to trace builtin operator"), so until a facade is warm (prepared and
resolved) its code is a small *cold* variant:

    def rmsnorm(input, weight, eps=_d_eps, ...):
        from fi_compat._core.compiled import compiling, fail, warm
        if compiling():               # Dynamo is tracing this call
            _e = warm(17)             # run eagerly at trace time (a constant)
            if _e is not None:
                fail(_e)              # the typed error, raised in the trace
        return _body(input, weight, eps, ...)   # the current mode's code

:func:`warm` is marked as Dynamo's ``assume_constant_result`` (the attribute, so this
module needs no torch): Dynamo calls it with the facade's key at trace time and takes
its result as a constant, so the resolution, the compiled checks and the ``linecache``
registration happen in plain Python; it returns the facade function, whose code is then
the warm variant, and Dynamo traces that.  The cold code reads none of the generated
function's globals before :func:`warm` ran: Dynamo snapshots a function's globals dict on
the first read, and a snapshot taken earlier would show the cold values.  An error at
warm-up (FlashInfer missing, a release below the floor, an import failure) is raised
inside the trace as its class with its message: with ``fullgraph=True`` Dynamo reports it
("Observed exception", the message in the cause), without, it breaks the graph and the
eager call raises the typed error itself.  The per-device check (once per CUDA device)
goes the same way (:func:`device_verdict`).  Eager calls pay one import and one call on
the first call only (the warm variant has no such prelude).
"""

from __future__ import annotations

import itertools
import weakref

from .._trace import at_trace_time, compiling

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .adapter import Adapter

_ADAPTERS: weakref.WeakValueDictionary[int, Adapter] = weakref.WeakValueDictionary()
_KEYS = itertools.count(1)


def register(adapter: Adapter) -> int:
    """The adapter's key, passed to :func:`warm` and :func:`device_verdict` (an int: a
    constant to Dynamo, where the adapter itself is not one)."""
    key = next(_KEYS)
    _ADAPTERS[key] = adapter
    return key


def _failure(exc: BaseException) -> str:
    """``"<class name>: <message>"`` of a typed error, for :func:`fail` (Dynamo takes a
    string as a constant result; a class or a tuple it cannot guard)."""
    return f"{type(exc).__name__}: {exc}"


def fail(failure: str) -> None:
    """Raise, in the trace, the typed error :func:`_failure` described: its class, or
    for one with keyword attributes (``OptionalDependencyMissingError(..., package=)``)
    its nearest base constructible from the message alone."""
    from .. import errors

    name, _, message = failure.partition(": ")
    cls = getattr(errors, name)
    while "__init__" in cls.__dict__:
        cls = cls.__base__
    raise cls(message)


@at_trace_time
def warm(key: int) -> str | None:
    """Warm the facade of ``key`` at trace time: ``None``, or the error its first call
    raises before it looks at an argument (:func:`_failure`)."""
    from ..errors import FiCompatError

    try:
        _ADAPTERS[key].warm_up()
    except FiCompatError as exc:
        return _failure(exc)
    return None


def check_device(adapter: Adapter, index: int, sample: Any) -> None:
    """The generated code's per-device check (once per device): eagerly
    :meth:`Adapter.check_device`; in a trace, the same check run at trace time."""
    if compiling():
        bad = device_verdict(adapter.trace_key, index, getattr(sample, "device", None))
        if bad is not None:
            fail(bad)
        return
    adapter.check_device(index, sample)


@at_trace_time
def device_verdict(key: int, index: int, device: Any) -> str | None:
    """:meth:`Adapter.check_device` of the adapter registered as ``key`` at trace time:
    ``None`` (served) or the refusal (:func:`_failure`), raised by the traced caller.
    Every argument is a value Dynamo takes as a constant (torch 2.11's
    ``assume_constant_result`` refuses an object such as the adapter).  Not recorded
    in ``_DEV``: the trace read ``_DEV`` before, and Dynamo checks its guards against
    the state after the trace (an eager call on the device later records it; the graph
    then recompiles once, with the check skipped)."""
    from types import SimpleNamespace

    from ..errors import FiCompatError

    try:
        sample = None if device is None else SimpleNamespace(device=device)
        _ADAPTERS[key].check_device(index, sample, record=False)
    except FiCompatError as exc:
        return _failure(exc)
    return None
