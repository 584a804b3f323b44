"""Shared hooks of the small elementwise facades (``fi_compat.norm``, ``fi_compat.activation``).

``enable_pdl`` (programmatic dependent launch, a launch attribute: it changes overlap,
never values) has three meanings across releases, read from the sources:

* 0.2.0.post1-0.2.2: no parameter;
* 0.2.3-0.2.6: ``enable_pdl: bool = False``: the value goes to the kernel as it is;
* 0.2.7+: ``Optional[bool] = None``: ``None`` means ``device_support_pdl(input.device)``
  (compute capability major >= 9, ``flashinfer/utils.py``); ``True`` is passed as it is
  (activation, every release) or, in ``flashinfer.norm`` from 0.6.8, also clamped to the
  device (``if enable_pdl is None or enable_pdl: enable_pdl = device_support_pdl(...)``).

fi_compat gives every release the newest meaning of its module; where the release has no
parameter the value is a hint (the result is the same, without the overlap).
"""

from __future__ import annotations

from .._core import Emulation, Normalizer
from .._device import _assumed, capability
from .._trace import compiling
from ..errors import InvalidArgumentError
from ..registry import at_least

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter, EntryPoint

FP16: frozenset[Any] = frozenset()


def prepare() -> None:
    global FP16
    import torch

    FP16 = frozenset((torch.float16, torch.bfloat16))


_PDL: dict[int, bool] = {}  # CUDA index -> SM90+ (bypassed under assume_capability)


def device_supports_pdl(x: Any) -> bool:
    """``flashinfer.utils.device_support_pdl``: SM90 and newer (False off CUDA); one
    dict probe per call after the first on a device."""
    v = None if _assumed else _PDL.get(x.get_device())
    if v is None:
        cc = capability(x.device)
        v = cc is not None and cc[0] >= 9
        if not _assumed and not compiling():  # a trace guards on what it read of _PDL
            _PDL[x.get_device()] = v
    return v


class EnablePdl(Normalizer):
    """``enable_pdl`` in the newest meaning of the module, on releases that read it
    another way.  ``clamp_from``: the release from which ``True`` is clamped to the
    device too (``None``: the module never clamps, ``True`` is passed as it is)."""

    out = ("enable_pdl",)
    boundaries: tuple[str, ...] = ("0.2.3", "0.2.7")

    def __init__(self, first: str, clamp_from: str | None = None) -> None:
        self.args = (first, "enable_pdl")
        self.clamp_from = clamp_from
        if clamp_from:
            self.boundaries = (*self.boundaries, clamp_from)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or "enable_pdl" not in adapter.present:
            return None  # absent: a hint, dropped
        none_native = at_least(pl, "0.2.7")
        clamp = self.clamp_from is not None and not at_least(pl, self.clamp_from)
        if none_native and not clamp:
            return None  # the release's meaning is the newest one
        if clamp:

            def clamped(x: Any, v: Any) -> tuple[Any, ...]:
                return (v is not False and device_supports_pdl(x),)

            return clamped

        def resolved(x: Any, v: Any) -> tuple[Any, ...]:
            return (device_supports_pdl(x) if v is None else v,)

        return resolved

    def describe(self, p: Any) -> str | None:
        if not at_least(p, "0.2.3"):
            return "`enable_pdl` dropped (no PDL before 0.2.3)"
        if not at_least(p, "0.2.7") and self.clamp_from:
            return (
                f"`enable_pdl` None/True resolved to the device (SM90+), as {self.clamp_from}+ do"
            )
        if not at_least(p, "0.2.7"):
            return "`enable_pdl=None` resolved to the device (SM90+), as 0.2.7+ do"
        if self.clamp_from and not at_least(p, self.clamp_from):
            return f"`enable_pdl=True` clamped to the device, as {self.clamp_from}+ do"
        return None


def check_device(where: str, first: str, x: Any, others: dict[str, Any]) -> int:
    """Every tensor in ``others`` on ``x``'s device; returns its CUDA index (-1 off CUDA)."""
    dev = x.get_device()
    for n, t in others.items():
        if t is not None and t.get_device() != dev:
            raise InvalidArgumentError(
                f"{where}: every tensor must be on {first}'s device ({x.device}); {n} is on "
                f"{t.device}"
            )
    return dev  # type: ignore[no-any-return]


def tensor(where: str, name: str, x: Any, optional: bool = False) -> None:
    import torch

    if x is None and optional:
        return
    if not isinstance(x, torch.Tensor):
        raise InvalidArgumentError(
            f"{where}: {name} must be a torch.Tensor{' or None' if optional else ''}, got "
            f"{type(x).__name__}"
        )


def half(where: str, name: str, x: Any) -> None:
    if x.dtype not in FP16:
        raise InvalidArgumentError(
            f"{where}: {name} must be float16 or bfloat16 (every release's kernels dispatch "
            f"on those two only), got {x.dtype}"
        )


def any_cuda_device(pl: Any, cc: tuple[int, int]) -> str | None:
    """These kernels are JIT-compiled for the GPU at hand on every release."""
    return None


class OutputCopy(Emulation):
    """``output=`` (``out=``) on releases without it: the result is copied into the
    caller's buffer and that buffer is returned (same values, one device copy,
    graph-capturable)."""

    name = "output_copy"

    def __init__(self, param: str) -> None:
        self.param = param
        self.params = (param,)
        self.entry: EntryPoint | None = None  # set once the entry point exists

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        return kw[self.param] is not None and self.param in adapter.absent

    def may_apply(self, p: Any) -> bool:
        assert self.entry is not None
        return not self.entry.params[self.param].present_in(p)

    def describe(self, p: Any) -> str | None:
        return f"{self.param}= emulated (result copied into it)" if self.may_apply(p) else None

    def after(self, adapter: Adapter, kw: dict[str, Any], result: Any, state: object) -> Any:
        out = kw[self.param]
        final = result[0] if isinstance(result, (list, tuple)) else result
        out.copy_(final)
        return [out] if isinstance(result, list) else out
