"""Adapter tables for ``flashinfer.gdn_kernels`` (CuTe-DSL GDN kernels): the bf16-state
multi-token gated delta rule ``gdn_decode_bf16_state.gated_delta_rule_mtp`` (0.6.8+;
``flashinfer.gdn_kernels`` re-exports it).  Not ``flashinfer.gdn_decode.
gated_delta_rule_mtp`` (float32 pool, :mod:`fi_compat.gdn_decode`): another function
of the same name.

Read from the released sources (``_snapshots/gdn_kernels.gdn_decode_bf16_state.
gated_delta_rule_mtp.json``; ``gdn_kernels/gdn_decode_bf16_state.py`` of 0.6.8-0.7.4;
line numbers are of that file):

* Signature: ``A_log, a, dt_bias, softplus_beta, softplus_threshold, q, k, v, b,
  initial_state_source, initial_state_indices`` on every release; 0.6.9 inserts
  ``output_state_indices`` after them (0.6.9 l.2491), 0.6.14 ``accepted_steps``,
  ``ssm_state_indices`` after ``intermediate_states_buffer`` and appends
  ``disable_output``, ``recovery_steps`` (0.6.14 l.3540).  So only the first eleven are
  positional here.  Returns the output ``[B, T, HV, V]`` (bf16); the pool
  ``initial_state_source [N, HV, V, K]`` bf16 is updated in place unless
  ``disable_state_update`` (default ``False`` on every release).
* ``initial_state_indices=None``: 0.6.8-0.6.10 read rows ``0..B-1`` (0.6.8 l.2514-2515),
  0.6.11+ assert it is given (0.6.11 l.1879-1882; 0.7.4 l.3673-3676): refused as missing
  on every release.  Every release's kernels take int32 slots only: they join the loaded
  slot with an ``Int32`` on the padding branch (``cache_idx = cutlass.Int32(0)``; 0.7.4
  l.332, 1029, 2052), so an int64 tensor fails to compile (``DSLUserCodeError:
  TYPE_UNSTABLE_JOIN``, measured on 0.6.18 and 0.7.4, H100, 2026-12-06), although 0.6.18
  added the index dtype to the cache key (``_dtype_key``, 0.7.4 l.2867-2877) and 0.6.8-0.6.17
  key the kernel without it (0.6.8 l.2579-2597: an int32 kernel then rejects an int64
  call with ``ValueError: Mismatched Tensor``).  So other integer dtypes are cast to int32
  on every release, as the kernels cast ``output_state_indices`` themselves.
* A pool that is not contiguous: 0.6.8-0.6.11.post3 ``reshape`` it to ``[N*HV, V, K]``
  (0.6.8 l.2521, 0.6.11 l.1891), a copy for a padded pool, so the state updates land in
  the copy and are lost; 0.6.12 passes the 4-D pool and keys the kernel on the slot
  stride only (0.6.12 l.1914-1917, 1989-1998); 0.6.14 keys it on every stride (0.6.14
  l.3125-3131).  Refused before the release that serves the layout (0.6.12 for a padded
  slot stride, 0.6.14 for non-contiguous rows inside a slot).
* ``intermediate_states_buffer``: 0.6.8-0.6.10 index it by pool slot
  (``cache_idx * T * HV``, 0.6.8 l.1873), 0.6.11+ by batch row (``i_n * T * HV``, 0.6.11
  l.1172; 0.6.11 l.1897-1905 asserts dim 0 == B); until 0.7.2.post1 its step stride is
  ``T`` whatever its dim 1 and a non-contiguous buffer is written through a
  ``.contiguous()`` copy (0.6.11 l.1906-1911); 0.7.4 reads the step capacity from
  ``stride(0)`` and writes through a view (0.7.4 l.83-141, 800).  So it is refused on
  0.6.8-0.6.10 (naming 0.6.11) and, unless it is a contiguous ``[B, T, HV, V, K]``, on
  0.6.11-0.7.2.post1 (naming 0.7.4).
* ``output=None``: 0.6.11-0.6.17 return a buffer cached per kernel (0.6.11 l.2049) or
  per batch size (0.6.14 l.3905), which the next call of that shape overwrites; 0.6.8-0.6.10
  and 0.6.18+ allocate a fresh one (0.6.18 l.3944: "Must be a fresh allocation").
  fi_compat allocates a fresh bf16 output on 0.6.11-0.6.17 and passes it (zero-filled,
  which the kernel overwrites: every element of ``[B, T, HV, V]`` is written).
* Non-bf16 ``q``/``k``/``v``/``a``/``b``: 0.6.18+ convert them (``as_bf16``,
  0.6.18 l.3629; ``dtype_compat.py``); 0.6.8-0.6.17 hand their bits to a kernel compiled
  for bf16 (a wrong result, no error).  fi_compat converts them there as 0.6.18 does
  (a copy only where the dtype differs); ``A_log`` / ``dt_bias`` are widened to float32
  there (exact; 0.6.18+ compile per dtype, ``_dtype_key``).  ``output`` must be bf16
  (0.6.18 l.3630 asserts it).
* ``K == V == 128`` and a bf16 pool are asserted on every release (0.6.8 l.2509-2510).
* The module reads the GPU at import (``NUM_SMS = torch.cuda.get_device_properties(0)``,
  0.6.8 l.2262, 0.6.14 l.2701) in 0.6.8-0.6.11.post3 and 0.6.14-0.7.0.post1: without a
  CUDA GPU the first call raises ``FlashInferImportError`` there.
"""

from __future__ import annotations

from .._core import EntryPoint, Normalizer, OptionalDependency, Param
from .._core.contract import FP16, INDEX, Tensor
from ..errors import InvalidArgumentError, MissingArgumentError, UnsupportedParameterError
from ..registry import VersionRange, at_least
from . import _elementwise as ew

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement

FACADE = "fi_compat.gdn_kernels"
MODULE = "flashinfer.gdn_kernels.gdn_decode_bf16_state"
NAME = "gated_delta_rule_mtp"
WHERE = f"{FACADE}.{NAME}"

_F32: Any = None
_BF16: Any = None


def _prepare() -> None:
    global _F32, _BF16
    import torch

    ew.prepare()
    _F32, _BF16 = torch.float32, torch.bfloat16


def _refuse(adapter: Adapter, what: str, minimum: str, parameter: str) -> UnsupportedParameterError:
    return UnsupportedParameterError(
        f"{WHERE}: {what} needs flashinfer-python>={minimum}; installed: {adapter.release}. "
        f"Fix: pip install 'flashinfer-python>={minimum}'",
        parameter=parameter,
        installed=str(adapter.release),
        minimum=minimum,
    )


def _check(
    A_log: Any,
    a: Any,
    dt_bias: Any,
    q: Any,
    k: Any,
    v: Any,
    b: Any,
    initial_state_source: Any,
    initial_state_indices: Any,
    output_state_indices: Any,
    intermediate_states_buffer: Any,
    accepted_steps: Any,
    ssm_state_indices: Any,
    output: Any,
) -> None:
    """What the contracts cannot say: the tensors every release asserts are given, the
    grouped value heads, and the buffer's step count (``>= T``, 0.6.8 l.2530)."""
    for n, t in (("q", q), ("k", k), ("v", v), ("b", b)):
        if t is None:
            raise MissingArgumentError(f"{WHERE}: {n} is required (every release asserts it)")
    if initial_state_source is None:
        raise MissingArgumentError(
            f"{WHERE}: initial_state_source (the bf16 pool [N, HV, V, K]) is required"
        )
    if initial_state_indices is None:
        raise MissingArgumentError(
            f"{WHERE}: initial_state_indices ([B] pool slots) is required: 0.6.11+ assert it "
            f"(0.6.8-0.6.10 read rows 0..B-1; pass torch.arange(B) for that)"
        )
    if k.dtype != q.dtype or v.dtype != q.dtype:
        raise InvalidArgumentError(
            f"{WHERE}: q, k and v must share one dtype; got {q.dtype}, {k.dtype}, {v.dtype}"
        )
    if k.shape != q.shape:
        raise InvalidArgumentError(
            f"{WHERE}: k must have q's shape {tuple(q.shape)}, got {tuple(k.shape)}"
        )
    h, hv = q.shape[2], v.shape[2]
    vk = (v.shape[3], q.shape[3])
    for n, t, dims in (
        ("initial_state_source", initial_state_source, 2),
        ("intermediate_states_buffer", intermediate_states_buffer, 3),
    ):
        if t is not None and tuple(t.shape[dims:]) != vk:
            raise InvalidArgumentError(
                f"{WHERE}: {n} must end in [V, K] = {list(vk)}, got {tuple(t.shape)}"
            )
    if output is not None and output.shape[3] != vk[0]:
        raise InvalidArgumentError(
            f"{WHERE}: output must be [B, T, HV, V={vk[0]}], got {tuple(output.shape)}"
        )
    if hv % h:
        raise InvalidArgumentError(
            f"{WHERE}: v's heads ({hv}) must be a multiple of q's ({h}) (grouped value heads)"
        )
    buf = intermediate_states_buffer
    if buf is not None and buf.shape[1] < q.shape[1]:
        raise InvalidArgumentError(
            f"{WHERE}: intermediate_states_buffer dim 1 ({buf.shape[1]}) must be >= "
            f"T={q.shape[1]} (every release asserts it)"
        )


class KernelDtypes(Normalizer):
    """0.6.8-0.6.17: ``q``/``k``/``v``/``a``/``b`` as bf16 and ``A_log``/``dt_bias`` as
    float32 copies where they are not (0.6.18's ``as_bf16``; the widening is exact);
    copy-free for conforming tensors."""

    args = ("q", "k", "v", "a", "b", "A_log", "dt_bias")
    out = args
    releases = VersionRange("0.6.8", "0.6.18")
    note = "non-bf16 q/k/v/a/b passed as bf16 copies (0.6.18's as_bf16), A_log/dt_bias as float32"

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        def cast(*ts: Any) -> tuple[Any, ...]:
            q, k, v, a, b, A_log, dt_bias = ts
            if q is None or (
                q.dtype is _BF16
                and k.dtype is _BF16
                and v.dtype is _BF16
                and a.dtype is _BF16
                and (b is None or b.dtype is _BF16)
                and A_log.dtype is _F32
                and dt_bias.dtype is _F32
            ):
                return ts
            half = tuple(
                t if t is None or t.dtype is _BF16 else t.to(_BF16) for t in (q, k, v, a, b)
            )
            return (*half, A_log.to(_F32), dt_bias.to(_F32))

        return cast


class StaticLayouts(Normalizer):
    """0.6.8-0.6.13: ``q``/``k``/``v``/``a``/``b`` as contiguous copies where they are not
    (a fused-QKV view, a transposed ``a``); copy-free for contiguous tensors.

    Those releases hand them to the kernel with ``from_dlpack(t, assumed_align=32)``
    without ``mark_layout_dynamic`` (0.6.13 ``gdn_decode_bf16_state.py:
    gated_delta_rule_mtp``, ``q_ = from_dlpack(q, ...)``), so the compiled kernel holds the
    strides of the first call's tensors, and the compiled-kernel cache key has none of
    them: a later call of the same shapes with other strides is rejected by that kernel
    (``ValueError: Mismatched q.strides[0]``, measured on 0.6.8 and 0.6.13, H100,
    2026-12-06), so whether a call runs depends on the layout of the process's first one.
    fi_compat hands every call contiguous tensors, so all its calls share one layout and
    run.  0.6.14 marks the layouts dynamic (``_mark_batch_dynamic``)."""

    args = ("q", "k", "v", "a", "b")
    out = args
    releases = VersionRange("0.6.8", "0.6.14")
    note = "strided q/k/v/a/b passed as contiguous copies (the kernel's layout is static)"

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        def dense(*ts: Any) -> tuple[Any, ...]:
            if all(t is None or t.is_contiguous() for t in ts):
                return ts
            return tuple(t if t is None or t.is_contiguous() else t.contiguous() for t in ts)

        return dense


class FreshOutput(Normalizer):
    """0.6.11-0.6.17: ``output=None`` allocates a fresh bf16 ``[B, T, HV, V]`` and passes
    it (those releases return a cached buffer the next call overwrites); zero-filled, so
    the call is deterministic up to the kernel's writes."""

    args = ("q", "v", "output")
    out = ("output",)
    releases = VersionRange("0.6.11", "0.6.18")
    note = (
        "`output=None`: a fresh output allocated and passed (the release returns a cached buffer)"
    )

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        import torch

        zeros = torch.zeros  # not empty(): both paths of a call send equal values

        def fresh(q: Any, v: Any, output: Any) -> tuple[Any, ...]:
            if output is not None or q is None or v is None:
                return (output,)
            sq, sv = q.shape, v.shape
            return (zeros((sq[0], sq[1], sv[2], sv[3]), dtype=_BF16, device=q.device),)

        return fresh


class PoolLayout(Normalizer):
    """A pool layout the release writes through: refused on 0.6.8-0.6.11.post3 unless
    contiguous (a padded pool is reshaped into a copy), on 0.6.12-0.6.13 unless each
    slot is contiguous (the kernel is keyed on the slot stride only)."""

    args = ("initial_state_source",)
    out = ()
    boundaries = ("0.6.12", "0.6.14")
    passes = "initial_state_source is None or initial_state_source.is_contiguous()"

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.6.14"):
            return None
        whole = not at_least(pl, "0.6.12")

        def check(pool: Any) -> tuple[Any, ...]:
            if pool is None or pool.is_contiguous():
                return ()
            st = pool.stride()
            if whole:
                raise _refuse(
                    adapter,
                    f"a non-contiguous (padded) initial_state_source (strides {tuple(st)}; "
                    f"this release writes the updates into a reshaped copy)",
                    "0.6.12",
                    "initial_state_source",
                )
            if (
                pool.dim() == 4
                and st[3] == 1
                and st[2] == pool.shape[3]
                and (st[1] == pool.shape[2] * pool.shape[3])
            ):
                return ()  # a padded slot stride: served from 0.6.12
            raise _refuse(
                adapter,
                f"an initial_state_source whose slots are not contiguous (strides {tuple(st)})",
                "0.6.14",
                "initial_state_source",
            )

        return check

    def describe(self, p: Placement) -> str | None:
        if not at_least(p, "0.6.12"):
            return "a contiguous pool only (a padded pool needs 0.6.12)"
        if not at_least(p, "0.6.14"):
            return "a pool with contiguous slots only (other strides need 0.6.14)"
        return None


class IntermediateBuffer(Normalizer):
    """``intermediate_states_buffer`` as 0.7.4 reads it (``[B, S >= T, HV, V, K]``, by
    batch row, a leading view allowed): refused on 0.6.8-0.6.10 (indexed by pool slot)
    and on 0.6.11-0.7.2.post1 unless a contiguous ``[B, T, HV, V, K]``."""

    args = ("q", "intermediate_states_buffer")
    out = ()
    boundaries = ("0.6.11", "0.7.4")
    only_if_given = ("intermediate_states_buffer",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.7.4"):
            return None
        by_slot = not at_least(pl, "0.6.11")

        def check(q: Any, buf: Any) -> tuple[Any, ...]:
            if buf is None:
                return ()
            if by_slot:
                raise _refuse(
                    adapter,
                    "intermediate_states_buffer indexed by batch row (this release indexes "
                    "it by pool slot)",
                    "0.6.11",
                    "intermediate_states_buffer",
                )
            t = q.shape[1]
            if buf.shape[1] != t or not buf.is_contiguous():
                raise _refuse(
                    adapter,
                    f"an intermediate_states_buffer other than a contiguous [B, T={t}, HV, V, "
                    f"K] (got shape {tuple(buf.shape)}, strides {tuple(buf.stride())}; this "
                    f"release steps it by T and writes a strided one into a copy)",
                    "0.7.4",
                    "intermediate_states_buffer",
                )
            return ()

        return check

    def describe(self, p: Placement) -> str | None:
        if not at_least(p, "0.6.11"):
            return "`intermediate_states_buffer` refused (indexed by pool slot before 0.6.11)"
        if not at_least(p, "0.7.4"):
            return "`intermediate_states_buffer` only as a contiguous [B, T, HV, V, K]"
        return None


_WHY_128 = "every release asserts K == 128 and V == 128. Fix: heads of dimension 128"
_NOTE = "flashinfer.gdn_kernels.gdn_decode_bf16_state imports its CuTe-DSL kernels unguarded"


def _mtp() -> EntryPoint:
    return EntryPoint(
        facade=FACADE,
        name=NAME,
        module=MODULE,
        params=(
            Param(
                "initial_state_indices",
                dtypes=(("0.6.8", "int32"),),
                note="pool slot read per request (required: 0.6.11+ assert it)",
                ref="0.6.11 l.1879 assert; 0.7.4 l.332 Int32 join",
            ),
            Param("output_state_indices", note="pool slot written", ref="0.6.9"),
            Param(
                "intermediate_states_buffer",
                note="per-token states [B, S >= T, HV, V, K]",
                ref="0.6.11 batch rows; 0.7.4 S >= T and views",
            ),
            Param("accepted_steps", note="per-request accepted steps", ref="0.6.14"),
            Param("ssm_state_indices", note="per-token pool slots", ref="0.6.14"),
            Param("disable_output", ref="0.6.14"),
            Param("recovery_steps", ref="0.6.14"),
        ),
        contracts={
            "A_log": Tensor("hv", dtypes=("float32", "bfloat16")),
            "a": Tensor("bs t hv", dtypes=(*FP16, "float32")),
            "dt_bias": Tensor("hv", dtypes=("float32", "bfloat16")),
            "q": Tensor("bs t h kd", dtypes=FP16, sizes={"kd": (128,)}, sizes_why=_WHY_128),
            "k": Tensor("bs t _ _", dtypes=FP16),
            "v": Tensor("bs t hv vd", dtypes=FP16, sizes={"vd": (128,)}, sizes_why=_WHY_128),
            "b": Tensor("bs t hv", dtypes=(*FP16, "float32")),
            "initial_state_source": Tensor(
                "n hv _ _", dtypes="bfloat16", why="every release asserts a bf16 pool"
            ),
            "initial_state_indices": Tensor("bs", dtypes=INDEX),
            "output_state_indices": Tensor("bs", dtypes=INDEX),
            "intermediate_states_buffer": Tensor("bs s hv _ _", dtypes="bfloat16"),
            "accepted_steps": Tensor("bs", dtypes="int32"),
            "ssm_state_indices": Tensor("bs t", dtypes="int32"),
            "output": Tensor("bs t hv _", dtypes="bfloat16", why="0.6.18+ assert a bf16 output"),
        },
        validate=_check,
        prepare=_prepare,
        normalizers=(
            KernelDtypes(),
            StaticLayouts(),
            FreshOutput(),
            PoolLayout(),
            IntermediateBuffer(),
        ),
        devices=ew.any_cuda_device,
        feature="gdn_decode",
        optional_deps=(
            OptionalDependency(
                VersionRange("0.6.8"), "cutlass", "nvidia-cutlass-dsl", ("cu12", "cu13"), _NOTE
            ),
            OptionalDependency(VersionRange("0.6.8"), "cuda", "cuda-python", (), _NOTE),
        ),
    )


SPECS: dict[str, EntryPoint] = {NAME: _mtp()}
ENTRIES = list(SPECS.values())
