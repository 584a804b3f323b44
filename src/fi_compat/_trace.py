"""Dynamo (``torch.compile``) awareness, without importing torch at import.

* :func:`compiling`: whether the caller is being traced (``torch.compiler.is_compiling``;
  a constant ``True`` inside a trace, so a branch on it costs the trace nothing);
* :func:`at_trace_time`: marks a function as Dynamo's ``assume_constant_result`` (the
  attribute ``torch._dynamo.assume_constant_result`` sets): Dynamo calls it during the
  trace, in plain Python, and keeps its result as a constant.  Its arguments and result
  must be constants to Dynamo (ints, strings, ``None``, tuples of them; a tensor's
  ``device``), never a function or a class.

A value computed at trace time must not be written to a cache the trace has read:
Dynamo guards on what the trace read and checks its guards against the state after the
trace (:mod:`fi_compat._core.compiled`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    _F = TypeVar("_F", bound=Callable[..., object])


def compiling() -> bool:
    """Whether Dynamo is tracing the caller."""
    import torch

    test = getattr(torch.compiler, "is_compiling", None)  # torch >= 2.3
    if test is None:  # pragma: no cover - older torch
        return bool(torch._dynamo.is_compiling())
    return bool(test())


def at_trace_time(fn: _F) -> _F:
    """Dynamo runs ``fn`` at trace time and keeps its result as a constant."""
    fn._dynamo_marked_constant = True  # type: ignore[attr-defined]
    return fn
