"""Call cases of ``fi_compat.comm``, shared by the static suite (every release, the spy
bound to the snapshot signature) and the live contract (the spy bound to
``inspect.signature`` of the installed function).

The kernels need several GPUs; the cases check what fi_compat itself decides: the
arguments FlashInfer receives (by keyword, the caller's objects), what is dropped or
refused per release, the enum translation (``AllReduceFusionPattern``,
``QuantizationSFLayout``, ``SfLayout``), the positional rule, and the removals.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import enums, errors
from fi_compat._adapters import comm as tables
from fi_compat._core import REQUIRED, Adapter, EntryPoint
from fi_compat._core.classes import WrapperClass
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature

# every entry point of fi_compat.comm by a short key: "allreduce_fusion",
# "MoeAlltoAll.combine", "MnnvlMoe.mnnvl_moe_alltoallv", "all_reduce"
ENTRIES: dict[str, EntryPoint] = {e.name: e for e in tables.ENTRIES}
RESULT = object()


class Receiver:
    """Stands in for a ``MoeAlltoAll`` instance (the spy records it)."""


class CommSpy(BindSpy):
    """FlashInfer's function: ``(self, *args, **kw)`` for a method (the receiver first),
    ``(*args, **kw)`` for a function or a static method."""

    def __init__(self, signature: inspect.Signature, method: bool) -> None:
        super().__init__(signature)
        self.method = method
        self.receivers: list[Any] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.method:
            assert args, "the receiver first"
            self.receivers.append(args[0])
            bound = self.signature.bind(*args, **kwargs)
            names = tuple(list(self.signature.parameters)[1 : len(args)])
            self.positional.append(names)
            self.raw_kwargs.append({**dict(zip(names, args[1:], strict=True)), **kwargs})
            bound.apply_defaults()
            self.calls.append(dict(bound.arguments))
            return RESULT
        return super().__call__(*args, **kwargs)

    def result(self, a: dict[str, Any]) -> Any:
        return RESULT


def stub_of(entry: EntryPoint) -> Any:
    """The typed stub of ``entry`` (a facade function's, or a class row's method)."""
    mod = importlib.import_module(entry.facade)
    for value in list(vars(mod).values()):
        rows = value.values() if isinstance(value, dict) else (value,)
        for row in rows:
            if isinstance(row, WrapperClass):
                for stub, e in row.methods.values():
                    if e is entry:
                        return stub
    return getattr(mod, entry.name).__wrapped__


def releases(key: str) -> list[str]:
    """The releases the entry point's snapshot has, from its first served release."""
    e = ENTRIES[key]
    rel = snapshots.load(e)["releases"]
    return [
        r
        for r, v in rel.items()
        if v is not None and at_least(place(r), e.since) and e.exists_in(place(r))
    ]


def facade(
    key: str, release: str, sig: inspect.Signature | None = None
) -> tuple[Any, CommSpy, Adapter]:
    """The facade of ``key`` as fi_compat builds it for ``release``, FlashInfer's function
    a spy bound to ``sig`` (default: the release's snapshot)."""
    e = ENTRIES[key]
    a = e.select(Distribution("flashinfer-python", release, "<test>", ""))
    fn = a.build(stub_of(e))
    spy = CommSpy(sig or snapshot_signature(release, e), e.receiver is not None)
    a._set_target(spy)
    return fn, spy, a


def args(key: str) -> dict[str, Any]:
    """A valid call's arguments: every required parameter, in the stable order."""
    e = ENTRIES[key]
    t = torch.zeros(4, 8, dtype=torch.bfloat16)
    special: dict[str, Any] = {
        "pattern": enums.AllReduceFusionPattern.kARResidualRMSNorm,
        "pattern_code": enums.AllReduceFusionPattern.kARResidualRMSNorm,
        "layout_code": None,
        "mapping": object(),
        "alltoall_info": object(),
        "input_payloads": [t],
        "ipc_tensors": [1, 2],
        "fake_ipc_ptrs": [1, 2],
        "handles": [[1]],
        "offsets": [[0]],
        "dtype": torch.bfloat16,
        "rms_eps": 1e-6,
        "scale_factor": None,
        "eps": 1e-6,
        "use_oneshot": None,
    }
    out: dict[str, Any] = {}
    for name in e.order:
        p = e.params[name]
        if p.default is not REQUIRED:
            continue
        if name in special:
            out[name] = special[name]
            continue
        k = p.kind
        if k is None:
            out[name] = object()  # Any: a FlashInfer object (a workspace, a Mapping)
        elif k.tensor:
            out[name] = t
        elif bool in k.types:
            out[name] = False
        elif int in k.types:
            out[name] = 2
        elif float in k.types:
            out[name] = 1.0
        elif list in k.types:
            out[name] = [1]
        else:
            out[name] = None
    return out


def call(fn: Any, e: EntryPoint, kw: dict[str, Any], *pos: Any) -> Any:
    if e.receiver is not None:
        return fn(Receiver(), *pos, **kw)
    return fn(*pos, **kw)


# -- cases ---------------------------------------------------------------------------------


def case_calls_reach_flashinfer_by_keyword(key: str, release: str, sig: Any = None) -> None:
    """A keyword call and a call positional as far as the stable rule allows reach
    FlashInfer by keyword, with the caller's objects, and return FlashInfer's result."""
    e = ENTRIES[key]
    kw = args(key)
    fn, spy, _ = facade(key, release, sig)
    assert call(fn, e, kw) is RESULT
    n, _why = e.positional
    lead = [x for x in e.order[:n] if x in kw]
    fn2, spy2, _ = facade(key, release, sig)
    rest = {k: v for k, v in kw.items() if k not in lead}
    assert call(fn2, e, rest, *(kw[x] for x in lead)) is RESULT
    for s in (spy, spy2):
        sent = s.raw_kwargs[-1]  # comm renames no parameter: the stable names
        for name, v in kw.items():
            got = sent[name]
            if isinstance(v, enums.StableEnum):
                continue  # translated (case_enum_members_translate_by_name)
            assert got is v, (key, release, name)
        if e.receiver is not None:
            assert isinstance(s.receivers[-1], Receiver)


def case_allreduce_fusion_is_keyword_only_after_launch_with_pdl(
    key: str, release: str, sig: Any = None
) -> None:
    """0.6.8 inserted ``trigger_completion_at_end`` at slot 4: a fifth positional argument
    (``output`` in 0.6.0-0.6.7, the trigger flag from 0.6.8) is refused on every release."""
    if key != "allreduce_fusion":
        return
    kw = args(key)
    fn, spy, _ = facade(key, release, sig)
    pos = [kw.pop(n) for n in ("input", "workspace", "pattern")]
    with pytest.raises(errors.PositionalMismatchError, match="trigger_completion_at_end"):
        fn(*pos, False, torch.zeros(4, 8), **kw)
    assert spy.calls == []


def case_trigger_completion_at_end_is_a_hint(key: str, release: str, sig: Any = None) -> None:
    """Where the release lacks it (0.6.0-0.6.7: FlashInfer passes ``launch_with_pdl`` in
    its place) it is dropped whatever its value; from 0.6.8 it is forwarded."""
    if key != "allreduce_fusion":
        return
    for value in (True, False):
        fn, spy, _ = facade(key, release, sig)
        fn(**args(key), trigger_completion_at_end=value)
        sent = spy.raw_kwargs[-1]
        if at_least(place(release), "0.6.8"):
            assert sent["trigger_completion_at_end"] is value
        else:
            assert "trigger_completion_at_end" not in sent


def case_enum_members_translate_by_name(key: str, release: str, sig: Any = None) -> None:
    """``pattern`` / ``pattern_code`` / ``layout_code`` / ``sf_layout``: a fi_compat member
    reaches FlashInfer as the release's integer (or member) of that name; a member the
    release lacks is refused naming its first release; FlashInfer's own integer constants
    are accepted where they meant one member over the entry point's range."""
    e = ENTRIES[key]
    names = [n for n in ("pattern", "pattern_code", "layout_code", "sf_layout") if n in e.params]
    pl = place(release)
    for name in names:
        cls = getattr(enums, e.params[name].enum)
        values = cls.values_in(release) or {}
        prm = e.params[name]
        if not prm.present_in(pl):  # the parameter itself is newer: any other member refused
            for member in cls:
                fn, spy, _ = facade(key, release, sig)
                if member is prm.default:
                    call(fn, e, {**args(key), name: member})
                    assert name not in spy.raw_kwargs[-1]
                    continue
                with pytest.raises(errors.UnsupportedParameterError, match=str(prm.since)):
                    call(fn, e, {**args(key), name: member})
            continue
        for member in cls:
            fn, spy, _ = facade(key, release, sig)
            kw = {**args(key), name: member}
            if member.name in values:
                call(fn, e, kw)
                got = spy.raw_kwargs[-1][name]
                assert int(got) == values[member.name], (name, member, release)
            else:
                first = cls.first_release(member.name)
                assert first is not None and not at_least(pl, first)
                with pytest.raises(errors.UnsupportedParameterError, match=first):
                    call(fn, e, kw)
                assert spy.calls == []
        # FlashInfer's own constants are plain integers (AllReduceFusionPattern,
        # QuantizationSFLayout) or IntEnum members (SfLayout): by value
        stable = cls.stable_ints(releases(key))
        for value, member_name in stable.items():
            if member_name not in values:
                continue
            fn, spy, _ = facade(key, release, sig)
            call(fn, e, {**args(key), name: value})
            assert int(spy.raw_kwargs[-1][name]) == values[member_name]


def case_layout_code_integer_one_is_ambiguous_before_0_2_14(
    key: str, release: str, sig: Any = None
) -> None:
    """``QuantizationSFLayout``: 1 is ``LINEAR`` to 0.2.13 and ``SWIZZLED_8x4`` from 0.2.14,
    so the raw integer is refused where the range holds both (``trtllm_allreduce_fusion``,
    0.2.9+), accepted where it does not (``allreduce_fusion``, 0.6.0+); a member by name
    means the same on every release (``LINEAR``: 1 or 2)."""
    if key not in ("trtllm_allreduce_fusion", "allreduce_fusion"):
        return
    fn, spy, _ = facade(key, release, sig)
    if key == "trtllm_allreduce_fusion":
        with pytest.raises(
            errors.InvalidArgumentError, match=r"SWIZZLED_8x4.*LINEAR|LINEAR.*SWIZZLED_8x4"
        ):
            fn(**{**args(key), "layout_code": 1})
    else:
        fn(**{**args(key), "layout_code": 1})
        assert spy.raw_kwargs[-1]["layout_code"] == 1
    fn, spy, _ = facade(key, release, sig)
    fn(**{**args(key), "layout_code": enums.QuantizationSFLayout.LINEAR})
    want = 2 if at_least(place(release), "0.2.14") else 1
    assert spy.raw_kwargs[-1]["layout_code"] == want


def case_newer_parameters_are_refused_or_dropped(key: str, release: str, sig: Any = None) -> None:
    """A parameter the release lacks is dropped at its default (or a neutral value) and
    refused otherwise, naming its first release."""
    e = ENTRIES[key]
    checks: dict[str, list[tuple[str, Any, str]]] = {
        "allreduce_fusion": [
            ("weight_bias", 0.5, "0.6.12"),
            ("block_quant_group_size", 128, "0.6.11"),
            ("moe_reduction_device_num_experts", 8, "0.6.8"),
            ("moe_finalize_backend", "cake", "0.7.1"),
        ],
        "create_allreduce_fusion_workspace": [
            ("group", object(), "0.6.10.post1"),
            ("top_k", 8, "0.7.2.post1"),
            ("backend", "mnnvl-cutedsl", "0.7.2.post1"),
        ],
        "trtllm_allreduce_fusion": [
            ("metadata", {}, "0.5.0"),
            ("weight_bias", 1.0, "0.6.12"),
        ],
        "trtllm_create_ipc_workspace_for_all_reduce_fusion": [
            ("create_metadata", True, "0.5.0"),
            ("use_symm_dev_mem", True, "0.6.0"),
        ],
        "MoeAlltoAll.__init__": [
            ("enable_rank_mask", True, "0.6.16"),
            ("backend", "cake", "0.7.1"),
        ],
        "MoeAlltoAll.dispatch": [("eplb_local_stats", torch.zeros(2), "0.6.16")],
        "MoeAlltoAll.combine": [
            ("output_scalar_scale", 2.0, "0.6.14"),
            ("use_low_precision", True, "0.6.16"),
        ],
        "decode_cp_a2a_alltoall": [("out", (torch.zeros(1), torch.zeros(1)), "0.7.1")],
        "moe_a2a_get_workspace_size_per_rank": [("eplb_stats_num_experts", 4, "0.6.16")],
    }
    pl = place(release)
    for name, value, first in checks.get(key, []):
        fn, spy, _ = facade(key, release, sig)
        if at_least(pl, first):
            call(fn, e, {**args(key), name: value})
            assert spy.raw_kwargs[-1][name] is value or spy.raw_kwargs[-1][name] == value
            continue
        with pytest.raises(errors.UnsupportedParameterError, match=first):
            call(fn, e, {**args(key), name: value})
        assert spy.calls == []
        if e.params[name].present_in(pl):
            continue  # a value newer than the parameter (backend="mnnvl-cutedsl")
        default = e.params[name].default
        fn, spy, _ = facade(key, release, sig)
        call(fn, e, {**args(key), name: default})
        assert name not in spy.raw_kwargs[-1]  # absent here: dropped at its default
    if key == "allreduce_fusion" and not at_least(pl, "0.6.12"):
        fn, spy, _ = facade(key, release, sig)
        fn(**args(key), weight_bias=0)  # the integer zero means no bias too
        assert "weight_bias" not in spy.raw_kwargs[-1]


CASES = [
    case_calls_reach_flashinfer_by_keyword,
    case_allreduce_fusion_is_keyword_only_after_launch_with_pdl,
    case_trigger_completion_at_end_is_a_hint,
    case_enum_members_translate_by_name,
    case_layout_code_integer_one_is_ambiguous_before_0_2_14,
    case_newer_parameters_are_refused_or_dropped,
]
