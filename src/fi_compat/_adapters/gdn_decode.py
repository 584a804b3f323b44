"""Adapter tables for ``flashinfer.gdn_decode`` (gated delta rule, decode and multi-token
prediction steps; CuTe DSL kernels, ``nvidia-cutlass-dsl`` on every release).

Read from the released sources (``_snapshots/gdn_decode.*.json``, ``gdn_decode.py`` and
``gdn_kernels/`` of 0.6.2-0.7.4):

* Layouts: ``q``/``k`` ``[B, T, H, K]``, ``v`` ``[B, T, HV, V]``, ``a``/``b``
  ``[B, T, HV]``, ``A_log``/``dt_bias`` ``[HV]``; ``HV`` a multiple of ``H`` (q/k head
  ``h`` serves v heads ``h * HV/H ...``).  The pretranspose and MTP state is
  ``[B or pool, HV, V, K]``, ``gated_delta_rule_decode``'s ``[B, HV, K, V]``; updated in
  place and returned.
* ``gated_delta_rule_decode_pretranspose``: ``state`` is Optional from 0.6.6, with the
  pool pair ``initial_state`` / ``initial_state_indices``; ``output_state_indices`` 0.6.9;
  ``intermediate_states_buffer``, ``disable_state_update`` and ``backend`` 0.7.0
  (``"rubin"`` 0.7.2.post1).  A bf16 state needs 0.6.4 (``T <= 4`` until 0.6.8); a
  float32 state with ``T > 1`` needs 0.6.14 and the pool form.  A bf16 pool's indices
  reach the kernels as int32 (:class:`StateForms`).
* ``gated_delta_rule_mtp``: ``disable_state_update`` defaults to ``True`` in 0.6.2-0.6.6
  and to ``None`` from 0.6.7, which every release up to 0.7.4 resolves to ``True`` (with
  a warning that a later release will make it ``False``).  fi_compat's default is
  ``True`` and is always sent, so a call that leaves it out means the same on every
  release, and ``None`` means ``True`` on 0.6.2-0.6.6 too (there ``if None`` read it as
  ``False``).  ``ssm_state_indices`` is inserted before it in 0.6.14 (positional calls
  written for older releases: ``fi_compat.written_for``).
* fp16 inputs: from 0.6.3 the kernels read fp16 ``q``/``k``/``v``/``a``/``b`` as bf16
  bits (a wrong result, no error) -- fixed in 0.6.18 for MTP and the bf16-state path and
  in 0.7.4 for the float32-state path; ``gated_delta_rule_decode`` was never affected.
  On those releases fi_compat hands the kernel bf16 copies and returns the output in
  fp16 (the kernels compute in float32 and write bf16 either way).
"""

from __future__ import annotations

from .._core import EntryPoint, Normalizer, OptionalDependency, Param, ResultHook
from .._core.adapter import short
from ..errors import InvalidArgumentError, UnsupportedParameterError
from ..registry import VersionRange, at_least
from . import _elementwise as ew

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement

_F32: Any = None
_BF16: Any = None
_FP16: Any = None
_I32: Any = None


def _prepare() -> None:
    global _F32, _BF16, _FP16, _I32
    import torch

    ew.prepare()
    _F32, _BF16, _FP16, _I32 = torch.float32, torch.bfloat16, torch.float16, torch.int32


def _where(name: str) -> str:
    return f"fi_compat.gdn_decode.{name}"


def _shape(t: Any) -> str:
    return short(t)


def _validator(name: str, state_name: str, layout: str) -> Any:
    """Shapes, dtypes and one device for the step tensors and the state ``layout``
    (``"VK"``: ``[N, HV, V, K]``, ``"KV"``: ``[B, HV, K, V]``)."""
    where = _where(name)
    kv = layout == "KV"

    def validate(
        q: Any, k: Any, v: Any, state: Any, A_log: Any, a: Any, dt_bias: Any, b: Any
    ) -> int:
        # each attribute read once (a ``.shape`` read is ~100 ns, a ``get_device()`` ~55);
        # a tensor of another rank fails an unpacking (ValueError) or a comparison
        try:
            d = q.get_device()
            sq = q.shape
            B, T, H, K = sq
            Bv, Tv, HV, V = v.shape
            dt = q.dtype
            ok = (
                (dt is _BF16 or dt is _FP16)
                and k.shape == sq
                and k.dtype is dt
                and Bv == B
                and Tv == T
                and v.dtype is dt
                and HV % H == 0
                and a.shape == (B, T, HV)
                and b.shape == (B, T, HV)
                and A_log.shape == (HV,)
                and A_log.dtype is _F32
                and dt_bias.shape == (HV,)
                and ((dtb := dt_bias.dtype) is _F32 or dtb is _BF16)
                and k.get_device() == d
                and v.get_device() == d
                and a.get_device() == d
                and b.get_device() == d
                and A_log.get_device() == d
                and dt_bias.get_device() == d
            )
            if kv:
                ok = ok and T == 1  # gated_delta_rule_decode: one token per request
            if ok and state is not None:
                ss = state.shape
                ok = (
                    len(ss) == 4
                    and ss[1] == HV
                    and ss[2] == (K if kv else V)
                    and ss[3] == (V if kv else K)
                    and state.get_device() == d
                )
        except (AttributeError, TypeError, ValueError, IndexError):
            ok = False
        if not ok:
            _diagnose(where, state_name, layout, q, k, v, state, A_log, a, dt_bias, b)
        return d  # type: ignore[no-any-return]

    return validate


def _diagnose(where: str, state_name: str, layout: str, *ts: Any) -> None:
    names = ("q", "k", "v", state_name, "A_log", "a", "dt_bias", "b")
    for n, t in zip(names, ts, strict=True):
        ew.tensor(where, n, t, optional=n == state_name)
    q, k, v, state, A_log, a, dt_bias, b = ts
    if q.dim() != 4 or k.shape != q.shape or v.dim() != 4 or v.shape[:2] != q.shape[:2]:
        raise InvalidArgumentError(
            f"{where}: q and k must be [B, T, H, K] and v [B, T, HV, V]; got q "
            f"{_shape(q)}, k {_shape(k)}, v {_shape(v)}"
        )
    ew.half(where, "q", q)
    if k.dtype != q.dtype or v.dtype != q.dtype:
        raise InvalidArgumentError(
            f"{where}: q, k and v must share one dtype; got {q.dtype}, {k.dtype}, {v.dtype}"
        )
    B, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    if layout == "KV" and T != 1:
        raise InvalidArgumentError(
            f"{where}: one token per request (T = 1; every release asserts it), got T={T}; "
            f"gated_delta_rule_decode_pretranspose or gated_delta_rule_mtp take T > 1"
        )
    if HV % H:
        raise InvalidArgumentError(
            f"{where}: v's heads ({HV}) must be a multiple of q's ({H}) (grouped value heads)"
        )
    for n, t, want in (("a", a, (B, T, HV)), ("b", b, (B, T, HV))):
        if tuple(t.shape) != want:
            raise InvalidArgumentError(f"{where}: {n} must be {want}, got {_shape(t)}")
    if tuple(A_log.shape) != (HV,) or A_log.dtype != _F32:
        raise InvalidArgumentError(
            f"{where}: A_log must be float32 [{HV}] (every release asserts float32), got "
            f"{_shape(A_log)}"
        )
    if tuple(dt_bias.shape) != (HV,) or dt_bias.dtype not in (_F32, _BF16):
        raise InvalidArgumentError(
            f"{where}: dt_bias must be [{HV}] float32 or bfloat16, got {_shape(dt_bias)}"
        )
    if state is not None:
        want = (HV, V, K) if layout == "VK" else (HV, K, V)
        if state.dim() != 4 or tuple(state.shape[1:]) != want:
            lay = "[N, HV, V, K]" if layout == "VK" else "[B, HV, K, V]"
            raise InvalidArgumentError(
                f"{where}: {state_name} must be {lay} = [N, {', '.join(map(str, want))}], got "
                f"{_shape(state)}"
            )
    others = {"k": k, "v": v, "a": a, "b": b, "A_log": A_log, "dt_bias": dt_bias}
    if state is not None:
        others[state_name] = state
    ew.check_device(where, "q", q, others)
    raise InvalidArgumentError(f"{where}: invalid arguments")  # pragma: no cover


class StateForms(Normalizer):
    """``gated_delta_rule_decode_pretranspose``'s state forms the release has (checked
    with the release at hand): bf16 state 0.6.4 (``T <= 4`` until 0.6.8), float32 state
    with ``T > 1`` 0.6.14 in the pool form; one of ``state`` and ``initial_state`` (with
    its indices) on every release.

    A bfloat16 pool's ``initial_state_indices`` are passed as int32 (the pool form is
    0.6.6+).  The bf16 path hands them to the bf16-state kernels of
    ``gdn_kernels/gdn_decode_bf16_state.py`` (0.6.7 l.230, 0.7.4 l.901), which compile for
    int32 slots only (their padding branch joins the loaded slot with an ``Int32``, 0.7.4
    l.332): an int64 tensor, which ``gdn_decode.py`` itself accepts (0.7.4 l.891-894),
    fails to compile (``DSLUserCodeError: TYPE_UNSTABLE_JOIN``) or to bind (``ValueError:
    Mismatched Tensor``), measured on 0.6.8, 0.6.13, 0.6.18 and 0.7.4 (H100, 2026-12-06).
    A float32 pool's kernels read int64 as they are (measured on the same releases).
    Other values pass through."""

    args = ("q", "state", "initial_state", "initial_state_indices")
    out = ("initial_state_indices",)
    boundaries = ("0.6.4", "0.6.6", "0.6.8", "0.6.14")

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None:
            return None
        where = adapter.entry.dotted
        release = adapter.release

        def refuse(what: str, minimum: str) -> UnsupportedParameterError:
            return UnsupportedParameterError(
                f"{where}: {what} needs flashinfer-python>={minimum}; installed: {release}. "
                f"Fix: pip install 'flashinfer-python>={minimum}'",
                parameter="state",
                installed=str(release),
                minimum=minimum,
            )

        bf16, bf16_long = at_least(pl, "0.6.4"), at_least(pl, "0.6.8")
        f32_pool_long = at_least(pl, "0.6.14")

        def check(q: Any, state: Any, initial: Any, indices: Any) -> tuple[Any, ...]:
            if (initial is None) != (indices is None):
                raise InvalidArgumentError(
                    f"{where}: initial_state and initial_state_indices go together (the pool "
                    f"form); got {short(initial)} and {short(indices)}"
                )
            s = state if state is not None else initial
            if s is None:
                raise InvalidArgumentError(
                    f"{where}: pass state ([B, HV, V, K]) or initial_state with "
                    f"initial_state_indices (a pool)"
                )
            sdt = s.dtype
            if sdt is _BF16:
                if not bf16:
                    raise refuse("a bfloat16 state", "0.6.4")
                if not bf16_long and (t := q.shape[1]) > 4:
                    raise refuse(f"a bfloat16 state with T={t} > 4", "0.6.8")
                if indices is not None and indices.dtype is not _I32:
                    return (indices.to(_I32),)
            elif sdt is _F32:
                if (initial is None or not f32_pool_long) and (t := q.shape[1]) > 1:
                    if initial is None:
                        raise InvalidArgumentError(
                            f"{where}: a float32 state with T={t} > 1 takes the pool form "
                            f"(initial_state + initial_state_indices) on every release"
                        )
                    raise refuse(f"a float32 pool state with T={t} > 1", "0.6.14")
            else:
                raise InvalidArgumentError(
                    f"{where}: the state must be float32 or bfloat16, got {s.dtype}"
                )
            return (indices,)

        return check

    def describe(self, p: Placement) -> str | None:
        pool = "a bf16 pool's initial_state_indices passed as int32 (its kernels' dtype)"
        if not at_least(p, "0.6.4"):
            return "float32 state only (bf16 state needs 0.6.4)"
        if not at_least(p, "0.6.6"):
            return "bf16 state for T <= 4; float32 state for T = 1"
        if not at_least(p, "0.6.8"):
            return f"bf16 state for T <= 4; float32 state for T = 1; {pool}"
        if not at_least(p, "0.6.14"):
            return f"float32 state for T = 1 only; {pool}"
        return pool


_FP16_BROKEN = {  # releases whose kernels read fp16 inputs as bf16 bits
    "gated_delta_rule_decode_pretranspose": ("0.6.3", "0.7.4"),
    "gated_delta_rule_mtp": ("0.6.3", "0.6.18"),
}


class Fp16AsBf16(Normalizer):
    """fp16 ``q``/``k``/``v``/``a``/``b`` as bf16 copies on the releases whose kernels
    misread fp16 (see the module docstring); the output comes back in fp16
    (:class:`Fp16Output`)."""

    args = ("q", "k", "v", "a", "b")
    out = ("q", "k", "v", "a", "b")

    note = "fp16 inputs passed as bf16 copies (the kernels misread fp16), output fp16"

    def __init__(self, name: str) -> None:
        self.releases = VersionRange(*_FP16_BROKEN[name])

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        def as_bf16(*ts: Any) -> tuple[Any, ...]:
            if ts[0].dtype is not _FP16:
                return ts
            return tuple(t.to(_BF16) if t.dtype is _FP16 else t for t in ts)

        return as_bf16


class Fp16Output(ResultHook):
    """The output in fp16 where :class:`Fp16AsBf16` ran (``(output, state)``)."""

    args = ("q", "output")

    def __init__(self, name: str) -> None:
        self.releases = VersionRange(*_FP16_BROKEN[name])

    def build(self, adapter: Adapter) -> Callable[..., Any] | None:
        def fp16(result: Any, q: Any, output: Any) -> Any:
            out, state = result
            if q.dtype is _FP16 and output is None and out.dtype is not _FP16:
                out = out.to(_FP16)
            return out, state

        return fp16


class DisableStateUpdate(Normalizer):
    """``gated_delta_rule_mtp(disable_state_update=None)``: ``True`` on 0.6.2-0.6.6 as
    0.6.7+ resolve it (those releases read ``None`` as falsy: the state was updated)."""

    args = ("disable_state_update",)
    out = ("disable_state_update",)
    boundaries = ("0.6.7",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.6.7"):
            return None

        def resolved(v: Any) -> tuple[Any, ...]:
            return (True if v is None else v,)

        return resolved

    def describe(self, p: Placement) -> str | None:
        if at_least(p, "0.6.7"):
            return None
        return "`disable_state_update=None` sent as True (0.6.7+'s meaning)"


_DSL = OptionalDependency(
    VersionRange("0.6.2", "0.6.7"),
    "cutlass",
    "nvidia-cutlass-dsl",
    (),  # a plain dependency there: the cu12 / cu13 extras arrived in 0.6.8's metadata
    "flashinfer.gdn_decode imports its CuTe-DSL kernels unguarded in 0.6.2-0.6.6",
)

_GDN_BACKEND_REF = (
    "0.7.0 gdn_decode.py:654, 1020 (backend != 'flashinfer' tries Cake GDN; 'flashinfer' "
    "runs the FlashInfer kernels, the only ones before 0.7.0)"
)

_BACKEND = Param(
    "backend",
    neutral=("flashinfer",),
    neutral_ref=_GDN_BACKEND_REF,
    value_since={"cake_gdn": "0.7.0", "rubin": "0.7.2.post1"},
    note="kernel family",
    ref="0.7.0 backend; 0.7.2.post1 rubin",
)


def _step() -> list[Param]:
    return [Param(n) for n in ("q", "k", "v")]


def _gate() -> list[Param]:
    return [Param(n) for n in ("A_log", "a", "dt_bias", "b")]


def _pretranspose() -> EntryPoint:
    name = "gated_delta_rule_decode_pretranspose"
    return EntryPoint(
        facade="fi_compat.gdn_decode",
        name=name,
        module="flashinfer.gdn_decode",
        params=(
            *_step(),
            *_gate(),
            Param("initial_state", note="state pool", ref="0.6.6"),
            Param("initial_state_indices", note="pool slot per request", ref="0.6.6"),
            Param("output_state_indices", note="pool slot written", ref="0.6.9"),
            Param("intermediate_states_buffer", note="per-token states", ref="0.7.0"),
            Param("disable_state_update", ref="0.7.0"),
            _BACKEND,
        ),
        validate=_validator(name, "state", "VK"),
        validate_args=("q", "k", "v", "state", "A_log", "a", "dt_bias", "b"),
        prepare=_prepare,
        normalizers=(StateForms(), Fp16AsBf16(name)),
        results=(Fp16Output(name),),
        devices=ew.any_cuda_device,
        feature="gdn_decode",
        optional_deps=(_DSL,),
    )


def _decode() -> EntryPoint:
    name = "gated_delta_rule_decode"
    v = Param(
        "backend",
        neutral=("flashinfer",),
        neutral_ref=_GDN_BACKEND_REF,
        value_since={"cake_gdn": "0.7.0"},
        ref="0.7.0",
    )
    return EntryPoint(
        facade="fi_compat.gdn_decode",
        name=name,
        module="flashinfer.gdn_decode",
        params=(
            *_step(),
            *_gate(),
            v,
        ),
        validate=_validator(name, "state", "KV"),
        validate_args=("q", "k", "v", "state", "A_log", "a", "dt_bias", "b"),
        prepare=_prepare,
        devices=ew.any_cuda_device,
        feature="gdn_decode",
        optional_deps=(_DSL,),
    )


def _mtp() -> EntryPoint:
    name = "gated_delta_rule_mtp"
    return EntryPoint(
        facade="fi_compat.gdn_decode",
        name=name,
        module="flashinfer.gdn_decode",
        params=(
            *_step(),
            *_gate(),
            Param("ssm_state_indices", note="per-token state slots", ref="0.6.14"),
            Param(
                "disable_state_update",
                explicit=True,
                note="keep the pool untouched",
                ref="0.6.2 True; 0.6.7 None (resolved to True through 0.7.4)",
            ),
            Param("output_state_indices", note="pool slot written", ref="0.6.14"),
            Param("cache_replayssm", note="ReplaySSM caching (SM100/SM103/SM120)", ref="0.7.2"),
            Param("replayssm_rawv", ref="0.7.2"),
            Param("replayssm_rawk", ref="0.7.2"),
            Param("replayssm_g", ref="0.7.2"),
            Param("replayssm_beta", ref="0.7.2"),
        ),
        validate=_validator(name, "initial_state", "VK"),
        validate_args=("q", "k", "v", "initial_state", "A_log", "a", "dt_bias", "b"),
        prepare=_prepare,
        normalizers=(DisableStateUpdate(), Fp16AsBf16(name)),
        results=(Fp16Output(name),),
        devices=ew.any_cuda_device,
        feature="gdn_decode",
        optional_deps=(_DSL,),
    )


SPECS: dict[str, EntryPoint] = {
    "gated_delta_rule_decode_pretranspose": _pretranspose(),
    "gated_delta_rule_decode": _decode(),
    "gated_delta_rule_mtp": _mtp(),
}
ENTRIES = list(SPECS.values())
