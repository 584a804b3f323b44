"""FlashInfer's backend queries on a facade function: ``f.is_backend_supported(backend,
cc=None)`` and ``f.is_compute_capability_supported(cc)``.

FlashInfer's ``@backend_requirement`` decorator (``flashinfer/utils.py``, 0.5.0+) gives
a decorated API these attributes; engines call them as capability probes
(``mm_fp4.is_backend_supported("cutlass", 100)``).  An entry point with
``EntryPoint(backend_query="backend")`` gives its facade function the same two, answering
for the installed release:

* ``False`` where the facade refuses every call on this release (the release predates
  the function or removed it), where fi_compat refuses the backend name on this release
  (a name newer than the release: ``UnsupportedParameterError`` at the call), or where
  its device policy refuses the GPU ``cc`` (``UnsupportedDeviceError`` at the call);
* else FlashInfer's own answer where the installed release's function has the query
  (imported on first use);
* else (releases before the decorator reached the function) ``True``: the release
  accepts the name and fi_compat's device policy admits the GPU.  ``"auto"`` is ``False``
  there, as FlashInfer's own query answers for it (``"auto"`` is never one of its
  backend requirements).

``cc`` is FlashInfer's integer ``major * 10 + minor`` (``90``, ``100``, ``121``); a
``(major, minor)`` tuple is taken too.  ``None`` (the default) asks about the name only,
as FlashInfer's query does.  With no FlashInfer installed the query raises
:class:`~fi_compat.errors.FlashInferNotInstalledError`.
"""

from __future__ import annotations

from ..registry import at_least

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .adapter import Adapter

__all__ = ["attach", "backend_accepted"]


def _capability(cc: object) -> tuple[int, int]:
    if isinstance(cc, tuple) and len(cc) == 2:
        return int(cc[0]), int(cc[1])
    if isinstance(cc, int) and not isinstance(cc, bool):
        return divmod(cc, 10)
    raise TypeError(f"cc must be an int such as 90 or 100 (major * 10 + minor), got {cc!r}")


def _number(cc: tuple[int, int]) -> int:
    return cc[0] * 10 + cc[1]


def backend_accepted(adapter: Adapter, param: str, backend: object) -> bool:
    """The facade takes ``backend`` on this release (no ``UnsupportedParameterError``)."""
    p = adapter.entry.params[param]
    pl = adapter.placement
    assert pl is not None
    if type(backend) is not str:
        return False
    if not p.present_in(pl):  # dropped at the default or a neutral value, else refused
        return backend == p.default or backend in p.neutral
    stable = p.kind.literals if p.kind is not None else ()
    if stable and backend not in stable:
        return False
    since = p.value_since.get(backend)
    return since is None or at_least(pl, since)


def _served(adapter: Adapter) -> bool:
    if adapter.problem == "not-installed":
        err = adapter.problem_error()
        assert err is not None
        raise err
    return adapter.problem is None


def _device_ok(adapter: Adapter, cc: tuple[int, int]) -> bool:
    devices = adapter.entry.devices
    return devices is None or adapter.placement is None or devices(adapter.placement, cc) is None


def attach(adapter: Adapter, fn: Any, param: str) -> None:
    """Give the facade function ``fn`` the two queries of its release."""

    def is_backend_supported(backend: str, cc: int | tuple[int, int] | None = None) -> bool:
        if not _served(adapter) or not backend_accepted(adapter, param, backend):
            return False
        cap = None if cc is None else _capability(cc)
        if cap is not None and not _device_ok(adapter, cap):
            return False
        own: Callable[..., Any] | None = getattr(adapter.resolve(), "is_backend_supported", None)
        if own is not None:
            return bool(own(backend, None if cap is None else _number(cap)))
        return backend != "auto"

    def is_compute_capability_supported(cc: int | tuple[int, int]) -> bool:
        if not _served(adapter):
            return False
        cap = _capability(cc)
        if not _device_ok(adapter, cap):
            return False
        own: Callable[..., Any] | None = getattr(
            adapter.resolve(), "is_compute_capability_supported", None
        )
        return True if own is None else bool(own(_number(cap)))

    name = adapter.entry.dotted
    is_backend_supported.__qualname__ = f"{adapter.entry.name}.is_backend_supported"
    is_backend_supported.__doc__ = (
        f"Whether {name} runs ``backend`` (on GPU ``cc``, FlashInfer's integer "
        f"major * 10 + minor) on the installed release; see fi_compat._core.backends."
    )
    is_compute_capability_supported.__qualname__ = (
        f"{adapter.entry.name}.is_compute_capability_supported"
    )
    is_compute_capability_supported.__doc__ = (
        f"Whether some backend of {name} runs on GPU ``cc`` on the installed release."
    )
    fn.is_backend_supported = is_backend_supported
    fn.is_compute_capability_supported = is_compute_capability_supported
