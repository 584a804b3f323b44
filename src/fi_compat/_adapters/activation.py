"""Adapter tables for ``flashinfer.activation`` (fused gated activations, ``act(x1) * x2``).

Read from the released sources (``_snapshots/activation.*.json``): ``silu_and_mul``,
``gelu_and_mul`` and ``gelu_tanh_and_mul`` are ``(input, out=None)`` from 0.2.0.post1;
0.2.3 appends ``enable_pdl=False`` and 0.2.7 makes it ``Optional[bool] = None``
(``None``: the device decides, ``True`` passed as it is; see :mod:`._elementwise`).
``input`` is ``[..., 2 * d]`` (the first half goes through the activation), ``out``
``[..., d]`` in the input's dtype; the kernels dispatch on fp16/bf16 only.
"""

from __future__ import annotations

from .._core import EntryPoint, Param
from .._core.contract import FP16, Tensor
from . import _elementwise as ew
from ._elementwise import EnablePdl


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
        normalizers=(EnablePdl("input"),),
        devices=ew.any_cuda_device,
        feature="activation",
    )


SPECS: dict[str, EntryPoint] = {
    n: _act(n) for n in ("silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul")
}
ENTRIES = list(SPECS.values())
