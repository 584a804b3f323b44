"""Compute capability of a tensor's device, cached, with a what-if override.

Minimal on purpose (the device/known-issues layer builds on it): ``capability(device)``
returns ``(major, minor)`` for a CUDA device and ``None`` for anything else (CPU tensors,
a CPU-only torch).  It asks ``torch.cuda`` once per device index, never at import.
``assume_capability((10, 0))`` makes every query answer that capability, for tests and
"what would happen on SM100" questions without a GPU.
"""

from __future__ import annotations

from ._trace import at_trace_time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import torch

__all__ = ["ALLOW_CPU_ENV", "assume_capability", "capability", "cpu_allowed"]

# FI_COMPAT_ALLOW_CPU=1: tensors off CUDA pass the device check (for a stand-in of
# FlashInfer's kernel in tests; FlashInfer's own kernels are CUDA-only)
ALLOW_CPU_ENV = "FI_COMPAT_ALLOW_CPU"
_cpu_ok: list[bool] = []


def cpu_allowed() -> bool:
    """Whether CPU/meta tensors may reach the (stand-in) kernel; read once."""
    if not _cpu_ok:
        from ._switches import flag

        _cpu_ok.append(flag(ALLOW_CPU_ENV, False))
    return _cpu_ok[0]


_cache: dict[int, tuple[int, int]] = {}
_assumed: list[tuple[int, int] | None] = []


def capability(device: torch.device) -> tuple[int, int] | None:
    """(major, minor) of a CUDA device, ``None`` for non-CUDA devices."""
    if _assumed:
        return _assumed[-1]
    if device.type != "cuda":
        return None
    import torch

    idx = device.index if device.index is not None else torch.cuda.current_device()
    cc = _cache.get(idx)
    if cc is None:
        from ._trace import compiling

        if compiling():  # asked at trace time; not cached (the trace has read _cache)
            return _ask(idx)
        cc = _cache[idx] = _ask(idx)
    return cc


@at_trace_time  # torch.cuda.get_device_capability cannot be traced (a non-tensor op)
def _ask(idx: int) -> tuple[int, int]:
    import torch

    major, minor = torch.cuda.get_device_capability(idx)
    return int(major), int(minor)


class assume_capability:
    """Context manager: every ``capability()`` query answers ``cc`` (``None`` = no GPU)."""

    def __init__(self, cc: tuple[int, int] | None) -> None:
        self.cc = cc

    def __enter__(self) -> None:
        _assumed.append(self.cc)

    def __exit__(self, *exc: object) -> None:
        _assumed.pop()
