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
from ..errors import InvalidArgumentError
from . import _elementwise as ew
from ._elementwise import EnablePdl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _validator(name: str) -> Any:
    where = f"fi_compat.activation.{name}"

    def validate(input: Any, out: Any) -> int:
        """Metadata only; returns the CUDA index of the tensors (-1 off CUDA)."""
        try:
            d = input.get_device()
            shape = input.shape
            ok = (
                input.dtype in ew.FP16
                and shape[-1] % 2 == 0
                and (
                    out is None
                    or (
                        out.shape[-1] * 2 == shape[-1]
                        and out.shape[:-1] == shape[:-1]
                        and out.dtype is input.dtype
                        and out.get_device() == d
                    )
                )
            )
        except (AttributeError, TypeError, IndexError):
            ok = False
        if not ok:
            _diagnose(where, input, out)
        return d  # type: ignore[no-any-return]

    return validate


def _diagnose(where: str, x: Any, out: Any) -> None:
    ew.tensor(where, "input", x)
    ew.tensor(where, "out", out, optional=True)
    if x.dim() == 0 or x.shape[-1] % 2:
        raise InvalidArgumentError(
            f"{where}: input must be [..., 2 * d] (an even last dimension), got shape "
            f"{tuple(x.shape)}"
        )
    ew.half(where, "input", x)
    if out is not None:
        want = (*x.shape[:-1], x.shape[-1] // 2)
        if tuple(out.shape) != want or out.dtype != x.dtype:
            raise InvalidArgumentError(
                f"{where}: out must be {want} {x.dtype} (input's leading dims, half its last), "
                f"got {tuple(out.shape)} {out.dtype}"
            )
        ew.check_device(where, "input", x, {"out": out})
    raise InvalidArgumentError(f"{where}: invalid arguments")  # pragma: no cover


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
        validate=_validator(name),
        validate_args=("input", "out"),
        prepare=ew.prepare,
        normalizers=(EnablePdl("input"),),
        devices=ew.any_cuda_device,
        feature="activation",
    )


SPECS: dict[str, EntryPoint] = {
    n: _act(n) for n in ("silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul")
}
ENTRIES = list(SPECS.values())
