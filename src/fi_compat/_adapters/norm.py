"""Adapter tables for ``flashinfer.norm`` (RMSNorm, Gemma RMSNorm, fused add, LayerNorm).

Read from the released sources (``_snapshots/norm.*.json`` has every signature):

* ``rmsnorm``, ``fused_add_rmsnorm``, ``gemma_rmsnorm``, ``gemma_fused_add_rmsnorm``:
  unchanged from 0.2.0.post1 but for ``enable_pdl`` (0.2.3, default ``None`` from 0.2.7,
  ``True`` clamped to the device from 0.6.8: see :mod:`._elementwise`).
* ``rmsnorm`` takes 3-D ``[batch, heads, head_size]`` input from 0.4.0 (``csrc/norm.cu``:
  ``CHECK_DIM(2, input)`` before, a per-head kernel after); before 0.4.0 fi_compat runs
  it as the 2-D ``[batch * heads, head_size]`` problem, the same rows.
* ``layernorm`` from 0.5.0 (bf16 input, float32 ``gemma`` / ``beta``).
* every kernel dispatches on fp16/bf16 input only, and reads ``weight`` as the input's
  type (``static_cast<c_type*>(weight.data_ptr())``; 0.2.x-0.3.x never check it), so a
  weight of another dtype is refused before the call on every release.
"""

from __future__ import annotations

from .._core import Emulation, EntryPoint, Param
from ..errors import InvalidArgumentError
from ..registry import at_least
from . import _elementwise as ew
from ._elementwise import EnablePdl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, cast

    from .._core import Adapter
else:

    def cast(_t: object, v: object) -> object:  # typing.cast without importing typing
        return v


_PDL_REF = "0.2.3 enable_pdl; 0.2.7 None = device_support_pdl; 0.6.8 True clamped too"


def _where(name: str) -> str:
    return f"fi_compat.norm.{name}"


def _check_rows(name: str, x: Any, weight: Any, dims: tuple[int, ...]) -> None:
    where = _where(name)
    ew.tensor(where, "input", x)
    ew.tensor(where, "weight", weight)
    if x.dim() not in dims:
        raise InvalidArgumentError(
            f"{where}: input must be {' or '.join(f'{d}-D' for d in dims)} "
            f"[..., hidden_size], got shape {tuple(x.shape)}"
        )
    ew.half(where, "input", x)
    if weight.dim() != 1 or weight.shape[0] != x.shape[-1]:
        raise InvalidArgumentError(
            f"{where}: weight must be 1-D [hidden_size] = ({x.shape[-1]},), got shape "
            f"{tuple(weight.shape)}"
        )
    if weight.dtype != x.dtype:
        raise InvalidArgumentError(
            f"{where}: weight must have input's dtype ({x.dtype}; the kernel reads it as "
            f"that type), got {weight.dtype}"
        )


def _check_like(where: str, name: str, t: Any, x: Any) -> None:
    ew.tensor(where, name, t)
    if tuple(t.shape) != tuple(x.shape) or t.dtype != x.dtype:
        raise InvalidArgumentError(
            f"{where}: {name} must have input's shape and dtype {tuple(x.shape)} {x.dtype}, "
            f"got {tuple(t.shape)} {t.dtype}"
        )


def _validate_norm(name: str, dims: tuple[int, ...]) -> Any:
    """Metadata only; returns the CUDA index of the tensors (-1 off CUDA)."""

    def validate(input: Any, weight: Any, out: Any) -> int:
        try:
            d = input.get_device()
            dt = input.dtype
            ok = (
                input.dim() in dims
                and dt in ew.FP16
                and weight.dtype is dt
                and weight.shape == input.shape[-1:]
                and weight.get_device() == d
                and (
                    out is None
                    or (out.shape == input.shape and out.dtype is dt and out.get_device() == d)
                )
            )
        except (AttributeError, TypeError):
            ok = False
        if not ok:
            _check_rows(name, input, weight, dims)
            if out is not None:
                _check_like(_where(name), "out", out, input)
            ew.check_device(_where(name), "input", input, {"weight": weight, "out": out})
        return d  # type: ignore[no-any-return]

    return validate


def _validate_fused(name: str) -> Any:
    def validate(input: Any, residual: Any, weight: Any) -> int:
        try:
            d = input.get_device()
            dt = input.dtype
            ok = (
                input.dim() == 2
                and dt in ew.FP16
                and residual.shape == input.shape
                and residual.dtype is dt
                and weight.dtype is dt
                and weight.shape == input.shape[-1:]
                and residual.get_device() == d
                and weight.get_device() == d
            )
        except (AttributeError, TypeError):
            ok = False
        if not ok:
            _check_rows(name, input, weight, (2,))
            _check_like(_where(name), "residual", residual, input)
            ew.check_device(_where(name), "input", input, {"residual": residual, "weight": weight})
        return d  # type: ignore[no-any-return]

    return validate


def _validate_layernorm(input: Any, gemma: Any, beta: Any) -> int:
    import torch

    where = _where("layernorm")
    for n, t in (("input", input), ("gemma", gemma), ("beta", beta)):
        ew.tensor(where, n, t)
    if input.dim() != 2 or input.dtype != torch.bfloat16:
        raise InvalidArgumentError(
            f"{where}: input must be 2-D bfloat16 [batch_size, hidden_size], got "
            f"{tuple(input.shape)} {input.dtype}"
        )
    for n, t in (("gemma", gemma), ("beta", beta)):
        if tuple(t.shape) != (input.shape[1],) or t.dtype != torch.float32:
            raise InvalidArgumentError(
                f"{where}: {n} must be float32 [hidden_size] = ({input.shape[1]},), got "
                f"{tuple(t.shape)} {t.dtype}"
            )
    return ew.check_device(where, "input", input, {"gemma": gemma, "beta": beta})


class Rows3D(Emulation):
    """``rmsnorm`` of 3-D input before 0.4.0: the ``[batch * heads, head_size]`` rows
    (a view where the heads are contiguous, else a copy), written into ``out``."""

    name = "rows_3d"
    params = ("input",)
    boundaries = ("0.4.0",)

    def may_apply(self, p: Any) -> bool:
        return not at_least(p, "0.4.0")

    def fast_test(self, name: str) -> str | None:
        return "{n}.dim() == 2"

    def describe(self, p: Any) -> str | None:
        return "3-D input run as 2-D rows" if self.may_apply(p) else None

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        pl = adapter.placement
        return pl is not None and self.may_apply(pl) and kw["input"].dim() == 3

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        x, out = kw["input"], kw["out"]
        h = x.shape[-1]
        kw["input"] = x.reshape(-1, h)
        rows = None
        if out is not None:
            try:
                rows = out.view(-1, h)
            except RuntimeError:  # not viewable as rows: a buffer, copied back after
                rows = None
            kw["out"] = rows
        return (x.shape, out, rows)

    def after(self, adapter: Adapter, kw: dict[str, Any], result: Any, state: object) -> Any:
        shape, out, rows = cast("tuple[Any, Any, Any]", state)
        if out is None:
            return result.view(shape)
        if rows is None:
            out.copy_(result.view(shape))
        return out


def _entry(name: str, tensors: tuple[str, ...], validate: Any, **kw: Any) -> EntryPoint:
    """An RMSNorm-family entry point: ``tensors``, ``eps``, the optional ``out`` (with
    ``extra=("out",)``; validated with the tensors) and ``enable_pdl``."""
    has_out = "out" in kw.pop("extra", ())
    params = [*(Param(n) for n in tensors), Param("eps")]
    if has_out:
        params.append(Param("out"))
    params.append(
        Param("enable_pdl", hint=True, note="programmatic dependent launch", ref=_PDL_REF)
    )
    return EntryPoint(
        facade="fi_compat.norm",
        name=name,
        module="flashinfer.norm",
        params=params,
        validate=validate,
        validate_args=(*tensors, "out") if has_out else tensors,
        prepare=ew.prepare,
        normalizers=(EnablePdl("input", clamp_from="0.6.8"),),
        devices=ew.any_cuda_device,
        feature="norm",
        **kw,
    )


def _norm(name: str, dims: tuple[int, ...], **kw: Any) -> EntryPoint:
    return _entry(name, ("input", "weight"), _validate_norm(name, dims), extra=("out",), **kw)


def _fused(name: str) -> EntryPoint:
    return _entry(name, ("input", "residual", "weight"), _validate_fused(name))


SPECS: dict[str, EntryPoint] = {
    "rmsnorm": _norm("rmsnorm", (2, 3), emulations=(Rows3D(),)),
    "fused_add_rmsnorm": _fused("fused_add_rmsnorm"),
    "gemma_rmsnorm": _norm("gemma_rmsnorm", (2,)),
    "gemma_fused_add_rmsnorm": _fused("gemma_fused_add_rmsnorm"),
    "layernorm": EntryPoint(
        facade="fi_compat.norm",
        name="layernorm",
        module="flashinfer.norm",
        params=(Param("input"), Param("gemma"), Param("beta"), Param("eps")),
        validate=_validate_layernorm,
        validate_args=("input", "gemma", "beta"),
        prepare=ew.prepare,
        devices=ew.any_cuda_device,
        feature="norm",
    ),
}
ENTRIES = list(SPECS.values())
