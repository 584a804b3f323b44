"""Stable enums whose members mean their *name*, translated per installed release.

FlashInfer's MoE kernels take raw integers (``routing_method_type: int = 0``,
``activation_type: int = ActivationType.Swiglu.value``) and the integers move between
releases: ``RoutingMethodType.Unspecified`` is 6 (0.5.0-0.6.7), 8 (0.6.8), 9 (0.6.11),
10 (0.6.18); ``ActivationType.Identity`` is 7 (to 0.6.12), 8 (0.6.13), 9 (0.6.14+).  The
classes here have the same member names; a facade translates a member to the installed
release's value *by name* at call time (a dict lookup).  The per-release values come
from ``_snapshots/tllm_enums.<Enum>.json`` (read statically from every wheel by
``tools/snapshot.py``); a release fi_compat does not know is read from its own enum
class instead.

What a facade accepts for an enum parameter, and what it means:

* a member of the fi_compat class below: its name;
* a member of FlashInfer's own class of that name (``flashinfer.fused_moe.ActivationType``
  of the installed release): its name;
* a plain ``int``: only where the integer has named the same member in *every* release
  that defines it (:meth:`StableEnum.stable_ints`), e.g. ``RoutingMethodType`` 0-5,
  ``ActivationType`` 0-6; anything else is an :class:`~fi_compat.errors.InvalidArgumentError`
  naming the member it means in which releases.  Where a parameter had another integer
  domain before (``trtllm_fp4_block_scale_moe``'s ``gated_act_type``, SwiGlu=0, became
  ``activation_type``, where 0 is Gelu, in 0.6.3), the integers of both domains that
  collide are refused too: 0 never silently turns SwiGlu into Gelu.

A member the installed release lacks is an :class:`~fi_compat.errors.UnsupportedParameterError`
naming the first release that has it.

Members are plain objects (no :mod:`enum` import, identity hashing, so the per-call
lookup costs one dict probe).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any, ClassVar

__all__ = [
    "ActivationType",
    "AllReduceFusionPattern",
    "Fp8QuantizationType",
    "GatedActType",
    "QuantizationSFLayout",
    "RoutingMethodType",
    "SfLayout",
    "StableEnum",
    "WeightLayout",
]

_SNAPSHOTS = os.path.join(os.path.dirname(__file__), "_snapshots")


class _Meta(type):
    """Turns the class body's ``Name: str`` annotations into members, in order."""

    _members_: dict[str, Any]

    def __new__(mcs, cls_name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> _Meta:
        cls = super().__new__(mcs, cls_name, bases, ns)
        members: dict[str, Any] = {}
        cls._members_ = members
        if not bases:  # StableEnum itself: its annotations are the slots
            return cls
        names = [n for n in ns.get("__annotations__", {}) if not n.startswith("_")]
        for i, n in enumerate(names):
            m: Any = object.__new__(cls)  # type: ignore[arg-type]
            object.__setattr__(m, "name", n)
            object.__setattr__(m, "ordinal", i)
            setattr(cls, n, m)
            members[n] = m
        return cls

    def __iter__(cls) -> Iterator[Any]:
        return iter(cls._members_.values())

    def __len__(cls) -> int:
        return len(cls._members_)

    def __getitem__(cls, name: str) -> Any:
        return cls._members_[name]

    def __contains__(cls, item: object) -> bool:
        return type(item) is cls

    def __repr__(cls) -> str:
        return f"<fi_compat enum {cls.__name__}>"


class StableEnum(metaclass=_Meta):
    """Base of fi_compat's stable enums (see the module docstring)."""

    __slots__ = ("name", "ordinal")
    name: str
    ordinal: int
    # the snapshot holding FlashInfer's values per release (None: no FlashInfer class)
    _snapshot_: str | None = None
    # where the installed FlashInfer defines the class (first hit wins): tllm_enums from
    # 0.6.7, fused_moe(.core) before; SfLayout in fp4_quantization before 0.6.7
    _flashinfer_modules_: tuple[str, ...] = (
        "flashinfer.tllm_enums",
        "flashinfer.fused_moe.core",
        "flashinfer.fused_moe",
        "flashinfer.fp4_quantization",
    )
    # {older member name: the stable member it is} where a release spelled a member
    # otherwise (the values table reads it under the stable name)
    _older_names_: ClassVar[dict[str, str]] = {}
    # raw integers judged over the releases of the entry point they are passed to, not
    # every release of the class (an entry point newer than the integers' move)
    _ints_in_entry_range_: ClassVar[bool] = False

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} members are read-only")

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (type(self).__getitem__, (self.name,))

    # -- FlashInfer's values per release ------------------------------------------------
    @classmethod
    def values_in(cls, release: str) -> dict[str, int] | None:
        """``{member name: integer}`` in FlashInfer ``release`` (None: no such class
        there, or the release is not in the snapshot)."""
        table = _tables(cls)
        return table.get(release)

    @classmethod
    def first_release(cls, name: str) -> str | None:
        """The first known release whose class has member ``name``."""
        for release, values in _tables(cls).items():
            if values is not None and name in values:
                return release
        return None

    @classmethod
    def stable_ints(cls, releases: Iterable[str] | None = None) -> dict[int, str]:
        """Integers that named the same member in every release defining them (of
        ``releases`` only, where given: the range of one entry point)."""
        seen: dict[int, set[str]] = {}
        table = _tables(cls)
        wanted = table if releases is None else {r: table.get(r) for r in releases}
        for values in wanted.values():
            for n, v in (values or {}).items():
                seen.setdefault(v, set()).add(n)
        return {v: next(iter(ns)) for v, ns in sorted(seen.items()) if len(ns) == 1}

    @classmethod
    def meanings(cls, value: int, releases: Iterable[str] | None = None) -> dict[str, list[str]]:
        """``{member name: [releases]}`` for a raw integer (for error messages)."""
        out: dict[str, list[str]] = {}
        wanted = None if releases is None else set(releases)
        for release, values in _tables(cls).items():
            if wanted is not None and release not in wanted:
                continue
            for n, v in (values or {}).items():
                if v == value:
                    out.setdefault(n, []).append(release)
        return out


_TABLES: dict[str, dict[str, dict[str, int] | None]] = {}


def _tables(cls: type[StableEnum]) -> dict[str, dict[str, int] | None]:
    """Release -> values, read once from the committed snapshot (first use only)."""
    name = cls._snapshot_
    if name is None:
        return {}
    table = _TABLES.get(name)
    if table is None:
        import json  # first use only: json (and re, enum) cost ~10 ms to import

        with open(os.path.join(_SNAPSHOTS, f"{name}.json"), encoding="utf-8") as fh:
            data = json.load(fh)
        older = cls._older_names_
        sigs = {
            sid: {older.get(m[0], m[0]): int(m[2]) for m in members}
            for sid, members in data["signatures"].items()
        }
        table = {r: (sigs[e["signature"]] if e else None) for r, e in data["releases"].items()}
        _TABLES[name] = table
    return table


class RoutingMethodType(StableEnum):
    """How the TRTLLM-gen MoE kernels turn router logits into top-k experts."""

    _snapshot_ = "tllm_enums.RoutingMethodType"
    Default: RoutingMethodType  # softmax -> top-k
    Renormalize: RoutingMethodType  # top-k -> softmax
    DeepSeekV3: RoutingMethodType  # sigmoid + bias -> grouped top-k (fp32 logits)
    Llama4: RoutingMethodType  # top-1 -> sigmoid
    RenormalizeNaive: RoutingMethodType  # softmax -> top-k -> renormalise (Qwen3)
    TopK: RoutingMethodType  # top-k only
    SigmoidRenorm: RoutingMethodType  # 0.6.8+
    MiniMax2: RoutingMethodType  # 0.6.8+
    Sigmoid: RoutingMethodType  # 0.6.11+
    TopKSigmoid: RoutingMethodType  # 0.6.18+
    Unspecified: RoutingMethodType


class ActivationType(StableEnum):
    """The MoE activation (``cutlass_fused_moe`` and the TRTLLM-gen kernels)."""

    _snapshot_ = "tllm_enums.ActivationType"
    Gelu: ActivationType
    Relu: ActivationType
    Silu: ActivationType
    Swiglu: ActivationType
    Geglu: ActivationType
    SwigluBias: ActivationType
    Relu2: ActivationType
    SwigluStep: ActivationType  # 0.6.13+
    GegluTanh: ActivationType  # 0.6.14+
    Identity: ActivationType
    Situ: ActivationType  # 0.6.16+
    InvalidType: ActivationType
    ClampedRelu2: ActivationType  # 0.7.2+ (CUTLASS backend)
    PowLU: ActivationType  # 0.7.4+ (CUTLASS backend)


class GatedActType(StableEnum):
    """The legacy gated activation of ``trtllm_fp4_block_scale_moe`` (to 0.6.2).

    Only for callers that still spell it ``gated_act_type``: SwiGlu means
    ``ActivationType.Swiglu`` and GeGlu ``ActivationType.Geglu`` on 0.6.3+.
    """

    _snapshot_ = "tllm_enums.GatedActType"
    SwiGlu: GatedActType
    GeGlu: GatedActType


class WeightLayout(StableEnum):
    """TRTLLM-gen weight layouts: ``[Mn, K]``, ``[K, Mn]``, ``[K / blockK, Mn, blockK]``."""

    _snapshot_ = "tllm_enums.WeightLayout"
    MajorK: WeightLayout
    MajorMn: WeightLayout
    BlockMajorK: WeightLayout


class Fp8QuantizationType(StableEnum):
    """FP8 flavour of ``trtllm_fp8_block_scale_moe`` (0.6.4+)."""

    _snapshot_ = "tllm_enums.Fp8QuantizationType"
    NoneFp8: Fp8QuantizationType
    DeepSeekFp8: Fp8QuantizationType
    MxFp8: Fp8QuantizationType
    PerTensorFp8: Fp8QuantizationType  # 0.7.0+
    PerChannelFp8: Fp8QuantizationType  # 0.7.0+


class SfLayout(StableEnum):
    """Scale-factor layouts (``hidden_states_scale_layout``, 0.7.0+)."""

    _snapshot_ = "tllm_enums.SfLayout"
    layout_128x4: SfLayout
    layout_8x4: SfLayout
    layout_linear: SfLayout


class AllReduceFusionPattern(StableEnum):
    """What ``flashinfer.comm``'s fused all-reduce computes after the reduction.

    FlashInfer's class is plain integer constants (``kAllReduce = 0`` ...); releases only
    appended members (0.6.8, 0.6.11, 0.6.15, 0.7.2.post1, 0.7.4), so every integer means
    the same member wherever it exists; a member the installed release lacks is refused.
    """

    _snapshot_ = "comm.AllReduceFusionPattern"
    _flashinfer_modules_ = ("flashinfer.comm",)
    kAllReduce: AllReduceFusionPattern
    kARResidualRMSNorm: AllReduceFusionPattern
    kARResidualRMSNormFP8Quant: AllReduceFusionPattern
    kARResidualRMSNormFP4Quant: AllReduceFusionPattern
    kARResidualRMSNormOutFP8Quant: AllReduceFusionPattern
    kARResidualRMSNormOutFP4Quant: AllReduceFusionPattern
    kMoEReductionARResidualRMSNorm: AllReduceFusionPattern  # 0.6.8+
    kMoEFinalizeARResidualRMSNorm: AllReduceFusionPattern  # 0.6.8+
    kARResidualRMSNormPerTokenGroupFP8PackedQuant: AllReduceFusionPattern  # 0.6.11+
    kARResidualRMSNormOutPerTokenGroupFP8PackedQuant: AllReduceFusionPattern  # 0.6.11+
    kARResidualRMSNormDynamicFP8Quant: AllReduceFusionPattern  # 0.6.15+
    kARResidualRMSNormOutDynamicFP8Quant: AllReduceFusionPattern  # 0.6.15+
    kMoEFinalizeARResidualRMSNormFP8Quant: AllReduceFusionPattern  # 0.7.2.post1+
    kARResidualRMSNormMXFP8Quant: AllReduceFusionPattern  # 0.7.4+
    kARResidualRMSNormOutMXFP8Quant: AllReduceFusionPattern  # 0.7.4+


class QuantizationSFLayout(StableEnum):
    """Scale-factor layout of the fused all-reduce's FP4 output (``layout_code``).

    The integers moved: 0.2.7.post1-0.2.13 have ``SWIZZLED=0, LINEAR=1`` (the class
    was ``FP4QuantizationSFLayout`` before 0.2.13), 0.2.14+ ``SWIZZLED_128x4=0,
    SWIZZLED_8x4=1, LINEAR=2``.  The old ``SWIZZLED`` is the 128x4 swizzle (0.2.13's
    ``include/flashinfer/comm/trtllm_allreduce_fusion.cuh``: "512-byte blocks ... 128x4
    FP8 values"), so it is read as ``SWIZZLED_128x4``; ``LINEAR`` is translated by name
    (1 or 2), and the raw integer 1 is refused where both meanings are in the entry
    point's range (``trtllm_allreduce_fusion``), accepted where not (``allreduce_fusion``).
    """

    _snapshot_ = "comm.QuantizationSFLayout"
    _flashinfer_modules_ = ("flashinfer.comm",)
    _older_names_: ClassVar[dict[str, str]] = {"SWIZZLED": "SWIZZLED_128x4"}
    # allreduce_fusion (0.6.0+) postdates the move: there 1 is only ever SWIZZLED_8x4
    _ints_in_entry_range_: ClassVar[bool] = True
    SWIZZLED_128x4: QuantizationSFLayout
    SWIZZLED_8x4: QuantizationSFLayout  # 0.2.14+
    LINEAR: QuantizationSFLayout


# legacy GatedActType -> ActivationType, by meaning (GatedActType was never renumbered)
GATED_TO_ACTIVATION = {"SwiGlu": "Swiglu", "GeGlu": "Geglu"}
ACTIVATION_TO_GATED = {v: k for k, v in GATED_TO_ACTIVATION.items()}


def flashinfer_member_name(value: object, enum_name: str) -> str | None:
    """The member name if ``value`` is a member of FlashInfer's enum ``enum_name``."""
    cls = type(value)
    if cls.__name__ == enum_name and cls.__module__.startswith("flashinfer"):
        name = getattr(value, "name", None)
        return name if isinstance(name, str) else None
    return None
