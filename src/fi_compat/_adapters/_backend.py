"""Shared hooks of the quantisation and GEMM facades: a ``backend`` default that arrived
after the parameter, and the GPUs a kernel family runs on."""

from __future__ import annotations

from .._core import Normalizer
from ..registry import at_least

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement


class BackendAuto(Normalizer):
    """``backend="auto"`` (the stable default) on releases that have ``backend`` but not
    ``"auto"``: sent as ``target``, what ``"auto"`` resolves to where it exists (or the
    release's own default).  ``until``: the first release with ``"auto"``."""

    args = ("backend",)
    out = ("backend",)

    def __init__(self, target: str, until: str, why: str) -> None:
        self.target = target
        self.until = until
        self.why = why
        self.boundaries = (until,)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, self.until) or "backend" not in adapter.present:
            return None
        target = self.target

        def resolved(backend: Any) -> tuple[Any, ...]:
            return (target if backend == "auto" and type(backend) is str else backend,)

        return resolved

    def describe(self, p: Placement) -> str | None:
        if at_least(p, self.until):
            return None
        return f'`backend="auto"` sent as `"{self.target}"` ({self.why})'


def sm100_only(
    what: str, since: str | None = None
) -> Callable[[Placement, tuple[int, int]], str | None]:
    """A ``devices`` hook: SM100 and newer (compute capability major >= 10); ``since``:
    the release from which older GPUs are served too (None: never)."""

    def devices(pl: Placement, cc: tuple[int, int]) -> str | None:
        if cc[0] >= 10 or (since is not None and at_least(pl, since)):
            return None
        tail = f"; SM{cc[0]}{cc[1]} is served from {since}" if since else ""
        return f"{what}{tail}"

    return devices


# Where each attention backend runs, read from the released sources (the table of
# ``docs/attention-backends.md``; which release accepts which name is the entry
# points' ``backend`` row).
ATTENTION_BACKEND_GPUS: dict[str, str] = {
    "auto": "picked per GPU at plan / call time (fa3 on SM90, fa2 elsewhere for the "
    "FA wrappers; trtllm-gen on SM10x, xqa elsewhere for the TRT-LLM decode functions)",
    "fa2": "any CUDA GPU FlashInfer JIT-builds for (the GPU at hand)",
    "fa3": "SM90 only (`utils.is_sm90a_supported`: major 9, CUDA >= 12.3)",
    "trtllm-gen": "SM10x (SM100 / SM103; precompiled cubins, `flashinfer-cubin` or download)",
    "cudnn": "where cuDNN's fused attention runs (needs the cuDNN frontend package)",
    "cute-dsl": "SM10x (CuTe DSL kernels; needs `nvidia-cutlass-dsl`)",
    "cutlass": "SM10x (MLA only)",
    "xqa": "SM90 / SM10x / SM12x (decode, `jit/xqa.py` supported majors 9-12); SM12x (MLA)",
}
