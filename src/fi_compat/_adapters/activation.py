"""Adapter tables for ``flashinfer.activation`` (fused gated activations, ``act(x1) * x2``).

Read from the released sources (``_snapshots/activation.*.json``): ``silu_and_mul``,
``gelu_and_mul`` and ``gelu_tanh_and_mul`` are ``(input, out=None)`` from 0.2.0.post1;
0.2.3 appends ``enable_pdl=False`` and 0.2.7 makes it ``Optional[bool] = None``
(``None``: the device decides, ``True`` passed as it is; see :mod:`._elementwise`).
``input`` is ``[..., 2 * d]`` (the first half goes through the activation), ``out``
``[..., d]`` in the input's dtype; the kernels dispatch on fp16/bf16 only.

``d`` not a multiple of 8, 0.2.0.post1-0.7.0.post1: the kernel loads and stores 8
elements at a time (``vec_size = 16 / sizeof(T)``, 0.3.1 ``activation.cuh:30``, 0.7.0.post1
``:32``) from the ``y`` half at ``offset + d`` and into the output row at ``token * d``,
so ``d % 8 == 4`` puts every such 16-byte access at an 8-byte address:
``cudaErrorMisalignedAddress``, a sticky error that poisons the CUDA context (FlashInfer
issue #2526, ``d = 3420`` of Qwen2.5-VL's vision tower).  Their Python guard only asks
for ``2 * d * itemsize % 16 == 0`` (0.7.0.post1 ``activation.py:103``), which admits it
(and ``d = 4`` gets ``blockDim = 0``).  0.7.1 (PR #5013) picks the widest vector that
divides ``d`` and takes any even last dimension.  :class:`HiddenSizeVectors` refuses
``d % 8 != 0`` before 0.7.1 with ``UnsupportedParameterError`` naming 0.7.1.
"""

from __future__ import annotations

from .._core import EntryPoint, Normalizer, Param
from .._core.contract import FP16, Tensor
from ..errors import UnsupportedParameterError
from ..registry import at_least
from . import _elementwise as ew
from ._elementwise import EnablePdl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement

ANY_EVEN = "0.7.1"  # PR #5013: vec_size = the widest power of 2 dividing d


class HiddenSizeVectors(Normalizer):
    """``d`` (half the last dimension of ``input``) not a multiple of 8 before 0.7.1:
    refused before the launch (see the module docstring).  The fast path tests
    ``input.shape[-1] % 16`` inline."""

    args = ("input",)
    out = ()
    boundaries = (ANY_EVEN,)
    passes = "input.shape[-1] % 16 == 0"

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, ANY_EVEN):
            return None
        where, release = adapter.entry.dotted, str(adapter.release)

        def check(x: Any) -> tuple[Any, ...]:
            n = x.shape[-1]
            if n % 16 == 0:
                return ()
            d = n // 2
            raise UnsupportedParameterError(
                f"{where}(input=[..., {n}]): hidden size d = {d} is not a multiple of 8, "
                f"which needs flashinfer-python>={ANY_EVEN}; installed: {release}, whose "
                f"kernel moves 8 elements at a time and faults on the misaligned half "
                f"(cudaErrorMisalignedAddress, FlashInfer issue #2526; {ANY_EVEN}, PR #5013, "
                f"takes any even last dimension). Fix: pip install "
                f"'flashinfer-python>={ANY_EVEN}', or pad d to a multiple of 8",
                parameter="input",
                installed=release,
                minimum=ANY_EVEN,
            )

        return check

    def describe(self, p: Placement) -> str | None:
        if at_least(p, ANY_EVEN):
            return None
        return "hidden size d % 8 != 0 refused (misaligned vector loads; needs 0.7.1)"


def _act(name: str) -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.activation",
        name=name,
        module="flashinfer.activation",
        params=(
            Param(
                "enable_pdl",
                hint=True,
                note="programmatic dependent launch",
                ref="0.2.3 enable_pdl; 0.2.7 None = device_support_pdl",
            ),
        ),
        contracts={
            "input": Tensor(
                "*batch 2*d", dtypes=FP16, why="every release's kernels dispatch on those two only"
            ),
            "out": Tensor("*batch d", dtype="input"),
        },
        prepare=ew.prepare,
        normalizers=(EnablePdl("input"), HiddenSizeVectors()),
        devices=ew.any_cuda_device,
        feature="activation",
    )


SPECS: dict[str, EntryPoint] = {
    n: _act(n) for n in ("silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul")
}
ENTRIES = list(SPECS.values())
