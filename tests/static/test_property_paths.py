"""The generated fast path against the reference translation, for every entry point.

Driven by :func:`fi_compat._facades.entry_points` alone.  For each entry point, on the
releases where its adapter changes (:meth:`EntryPoint.generations`, the first and the
last release of its range included), hypothesis generates calls: a valid base call (the
family's ``args()`` builder from ``tests/support/*_cases.py``; a generic one from the stub's kinds
for an entry point no builder knows) perturbed parameter by parameter from the stable
kinds (defaults, neutral values, literals, enum members, ``None``, bools, ints, floats,
dtypes, wrongly typed values, index tensors in another integer dtype, unknown keywords,
a positional prefix, one positional argument too many).

Each call goes once through the facade function generated for the release (its
FlashInfer target a spy bound to the release's snapshot signature, the receiver of a
method a ``Receiver`` stand-in) and once through :meth:`Adapter.plan` (the reference
:meth:`Adapter.translate`, nothing called).  They agree when both raise the same
exception type, or both succeed and the arguments the spy bound (defaults applied)
equal plan's arguments bound the same way: tensors by identity, or the same dtype and
contents where fi_compat made a copy (an index tensor cast to the release's dtype).  When
plan reports an emulation, only success/failure is compared (the emulation rewrites the
call).  Errors raised after the spy returned (result hooks reading the spy's stand-in
result) are not the subject here and are ignored.

Examples are derandomized (the same calls every CI run); ``FI_COMPAT_HYPOTHESIS_RANDOM=1``
explores, ``FI_COMPAT_HYPOTHESIS_EXAMPLES`` sets the count per entry point.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import math
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fi_compat import _snapshot_io as snapshots
from fi_compat import enums, errors
from fi_compat._adapters.gdn_prefill import SPEC as GDN_PREFILL
from fi_compat._core import OMIT, REQUIRED, EntryPoint
from fi_compat._core.adapter import Adapter
from fi_compat._core.classes import WrapperClass
from fi_compat._facades import entry_points
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES, place
from support import (
    attention_cases,
    attn_kernels_cases,
    b12x_cases,
    concat_ops_cases,
    cute_dsl_cases,
    dsv4_cases,
    elementwise_cases,
    gdn_decode_cases,
    gdn_kernels_cases,
    helpers,
    kda_mhc_cases,
    mla_rope_cases,
    moe_helpers,
    page_cases,
    quant_gemm_cases,
    ragged_deepseek_cases,
    rope_cases,
    sampling_cases,
    ssm_cases,
    topk_cases,
)
from support.spy import snapshot_signature

ENTRIES: dict[str, EntryPoint] = {e.dotted: e for e in entry_points()}
SETTINGS = settings(
    derandomize=os.environ.get("FI_COMPAT_HYPOTHESIS_RANDOM") is None,
    max_examples=int(os.environ.get("FI_COMPAT_HYPOTHESIS_EXAMPLES", "50")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- snapshots, parsed once -----------------------------------------------------------

_SNAPSHOTS: dict[str, dict[str, Any]] = {}
_read = snapshots.load


def _cached_load(entry: EntryPoint) -> dict[str, Any]:
    key = str(snapshots.path_for(entry))
    if key not in _SNAPSHOTS:
        _SNAPSHOTS[key] = _read(entry)
    return _SNAPSHOTS[key]


@pytest.fixture(autouse=True, scope="module")
def _cached_snapshots() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(snapshots, "load", _cached_load)
        yield


# -- the releases, the stub, the base call --------------------------------------------


def releases(entry: EntryPoint) -> list[str]:
    lo = KNOWN_RELEASES.index(entry.since)
    hi = len(KNOWN_RELEASES) if entry.until is None else KNOWN_RELEASES.index(entry.until)
    return list(KNOWN_RELEASES[lo:hi])


def sampled_releases(entry: EntryPoint) -> list[str]:
    """The first and last release of the range and each generation's first release."""
    rs = releases(entry)
    wanted = {rs[0], rs[-1], *(str(g.lo) for g in entry.generations())}
    return [r for r in rs if r in wanted]


def stub_of(entry: EntryPoint) -> Any:
    mod = importlib.import_module(entry.facade)
    for value in list(vars(mod).values()):
        rows = value.values() if isinstance(value, dict) else (value,)
        for row in rows:
            if isinstance(row, WrapperClass):
                for stub, e in row.methods.values():
                    if e is entry:
                        return stub
    return getattr(mod, entry.name).__wrapped__


def _by_identity(table: dict[str, Any], entry: EntryPoint) -> str | None:
    for key, value in table.items():
        e = value[0] if isinstance(value, tuple) else value
        if e is entry:
            return key
    return None


# (table of entry points by key, builder of a valid call's keyword arguments)
BUILDERS: list[tuple[dict[str, Any], Callable[[str], dict[str, Any]]]] = [
    (attention_cases.ENTRIES, attention_cases.args),
    (moe_helpers.ENTRIES, moe_helpers.args),
    (elementwise_cases.ENTRIES, elementwise_cases._args),
    (gdn_decode_cases.SPECS, gdn_decode_cases.args),
    (gdn_kernels_cases.SPECS, gdn_kernels_cases.args),
    (ssm_cases.SPECS, ssm_cases.args),
    (kda_mhc_cases.SPECS, kda_mhc_cases.args),
    (page_cases.SPECS, page_cases.args),
    (quant_gemm_cases.SPECS, quant_gemm_cases.args),
    (cute_dsl_cases.SPECS, cute_dsl_cases.args),
    (rope_cases.SPECS, rope_cases.args),
    (sampling_cases.SPECS, sampling_cases.args),
    (topk_cases.SPECS, topk_cases.args),
    (concat_ops_cases.SPECS, concat_ops_cases.args),
    (mla_rope_cases.SPECS, mla_rope_cases.args),
    (ragged_deepseek_cases.SPECS, ragged_deepseek_cases.args),
    (attn_kernels_cases.SPECS, attn_kernels_cases.args),
    (dsv4_cases.SPECS, dsv4_cases.args),
    ({b12x_cases.FN: b12x_cases.B12X, **b12x_cases.B12X_METHODS}, b12x_cases.args),
    ({"chunk_gated_delta_rule": GDN_PREFILL}, lambda _key: helpers.inputs()),
]


def builder_of(entry: EntryPoint) -> Callable[[], dict[str, Any]] | None:
    for table, build in BUILDERS:
        key = _by_identity(table, entry)
        if key is not None:
            return lambda: dict(build(key))
    return None


def generic_args(entry: EntryPoint) -> dict[str, Any]:
    """A call built from the stub alone: each required parameter a value of its kind
    (a small float tensor, the first literal or enum member, a bfloat16 dtype, 1, 1.0)."""
    out: dict[str, Any] = {}
    for name in entry.order:
        p = entry.params[name]
        if p.default is not REQUIRED:
            continue
        k = p.kind
        if k is None or k.tensor:
            out[name] = torch.zeros(4, 4)
        elif k.enum is not None:
            out[name] = next(iter(getattr(enums, k.enum)))
        elif k.literals:
            out[name] = k.literals[0]
        elif k.dtype:
            out[name] = torch.bfloat16
        elif bool in k.types:
            out[name] = False
        elif int in k.types:
            out[name] = 1
        elif float in k.types:
            out[name] = 1.0
        elif str in k.types:
            out[name] = "auto"
        elif list in k.types:
            out[name] = []
        else:
            out[name] = None
    return out


def base_args(entry: EntryPoint) -> dict[str, Any]:
    build = builder_of(entry)
    return build() if build is not None else generic_args(entry)


# -- the spy, the adapters --------------------------------------------------------------

RESULT = object()  # what the spy returns: result hooks may fail on it (ignored, see above)


class SpyBindError(Exception):
    """fi_compat sent arguments the release's signature does not bind."""


class RecordingSpy:
    """FlashInfer's function: binds ``(receiver?, **kw)`` against the snapshot signature
    (the receiver, when the entry has one, is the only positional argument), records the
    bound arguments with the defaults applied."""

    def __init__(self, signature: inspect.Signature, method: bool) -> None:
        params = list(signature.parameters.values())
        self.signature = signature.replace(parameters=params[1:] if method else params)
        self.method = method
        self.calls: list[dict[str, Any]] = []
        self.receivers: list[Any] = []
        self.bind_errors: list[str] = []
        self.positional: list[tuple[str, ...]] = []  # per call, the names bound positionally
        self.keywords: list[tuple[str, ...]] = []  # per call, the names passed by keyword

    def bind(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        bound = self.signature.bind(**kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    def record(self, bound: dict[str, Any]) -> dict[str, Any]:
        return bound  # the sanity test breaks this on purpose

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.method:
            assert args, "the receiver first"
            self.receivers.append(args[0])
            args = args[1:]
        # how each argument was bound: positionally (the first len(args) positional
        # slots of the release's signature) or by keyword
        self.positional.append(tuple(list(self.signature.parameters)[: len(args)]))
        self.keywords.append(tuple(kwargs))
        try:
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            bound = dict(bound.arguments)
        except TypeError as exc:
            self.bind_errors.append(str(exc))
            raise SpyBindError(str(exc)) from None
        self.calls.append(self.record(bound))
        return RESULT


_BUILT: dict[tuple[str, str], tuple[Any, Adapter, inspect.Signature]] = {}


def built(dotted: str, release: str) -> tuple[Any, Adapter, inspect.Signature]:
    """(facade function, adapter, the release's signature), built once per process."""
    key = (dotted, release)
    if key not in _BUILT:
        e = ENTRIES[dotted]
        a = e.select(Distribution("flashinfer-python", release, "<property>", ""))
        assert a.problem is None, (dotted, release, a.problem)
        fn = a.build(stub_of(e))
        _BUILT[key] = (fn, a, snapshot_signature(release, e))
    return _BUILT[key]


class Receiver(attention_cases.Receiver):
    """The wrapper instance: optionally with the backend ``plan`` would have chosen."""

    def __init__(self, backend: Any = None) -> None:
        if backend is not None:
            self._backend = backend


# -- one call through both paths --------------------------------------------------------


class Call:
    def __init__(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        backend: Any = None,
    ) -> None:
        self.args, self.kwargs, self.backend = args, kwargs, backend

    def __repr__(self) -> str:
        def show(v: Any) -> str:
            if isinstance(v, torch.Tensor):
                return f"<tensor {tuple(v.shape)} {v.dtype}>"
            return repr(v)

        parts = [show(v) for v in self.args]
        parts += [f"{k}={show(v)}" for k, v in self.kwargs.items()]
        recv = f"[backend={self.backend!r}] " if self.backend is not None else ""
        return f"{recv}({', '.join(parts)})"


class Outcome:
    def __init__(self) -> None:
        self.error: BaseException | None = None
        self.sent: dict[str, Any] | None = None  # bound, defaults applied
        self.emulations: list[str] = []
        self.reached = False
        self.positional: tuple[str, ...] = ()  # names the spy bound positionally
        self.keywords: tuple[str, ...] = ()  # names passed by keyword


def run_generated(dotted: str, release: str, call: Call, spy_type: type = RecordingSpy) -> Outcome:
    fn, adapter, sig = built(dotted, release)
    e = adapter.entry
    spy = spy_type(sig, e.receiver is not None)
    adapter._publish(spy)
    out = Outcome()
    recv = (Receiver(call.backend),) if e.receiver is not None else ()
    try:
        fn(*recv, *call.args, **call.kwargs)
    except SpyBindError:
        pass
    except Exception as exc:
        if not spy.calls:
            out.error = exc
    assert not spy.bind_errors, (
        f"{dotted} on {release}: the generated code sent arguments the release's "
        f"signature does not take: {spy.bind_errors} for {call!r}"
    )
    if spy.calls:
        out.reached = True
        out.sent = spy.calls[0] if len(spy.calls) == 1 else None
        out.positional, out.keywords = spy.positional[0], spy.keywords[0]
        if e.receiver is not None:
            assert spy.receivers[0] is recv[0]
    return out


def run_reference(dotted: str, release: str, call: Call) -> Outcome:
    _fn, adapter, sig = built(dotted, release)
    e = adapter.entry
    out = Outcome()
    if e.receiver is not None:
        # plan() translates without a receiver; a normaliser may read it (the backend
        # ``plan`` chose), so this plan() translates with the same stand-in as the call
        recv = Receiver(call.backend)
        translate = Adapter.translate
        adapter.translate = (  # type: ignore[method-assign]
            lambda kw, extra, receiver=None: translate(adapter, kw, extra, recv)
        )
    try:
        planned = adapter.plan(*call.args, **call.kwargs)
    except Exception as exc:
        out.error = exc
        return out
    finally:
        if e.receiver is not None:
            del adapter.translate
    out.emulations = planned["emulations"]
    binder = RecordingSpy(sig, e.receiver is not None)
    try:
        out.sent = binder.bind(planned["kwargs"])
    except TypeError as exc:
        pytest.fail(f"{dotted} on {release}: plan() sends unbindable arguments ({exc}): {call!r}")
    return out


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if a is b:
            return True
        return (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and a.device == b.device
            and bool(torch.equal(a, b))
        )
    if type(a) in (list, tuple) or type(b) in (list, tuple):
        return (
            type(a) is type(b)
            and len(a) == len(b)
            and all(same_value(x, y) for x, y in zip(a, b, strict=True))
        )
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if a is b:
        return True
    if type(a) is float and type(b) is float and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and bool(a == b)


def disagreement(dotted: str, release: str, call: Call, fast: Outcome, ref: Outcome) -> str | None:
    """Why the two outcomes disagree (None: they agree)."""
    where = f"{dotted} on {release}, call {call!r}"
    if ref.error is not None or fast.error is not None:
        if ref.error is None:
            return f"{where}: generated path raised {fast.error!r}; reference succeeded"
        if fast.error is None:
            return f"{where}: reference raised {ref.error!r}; generated path succeeded"
        if type(ref.error) is not type(fast.error):
            return (
                f"{where}: generated path raised {type(fast.error).__name__}({fast.error}); "
                f"reference raised {type(ref.error).__name__}({ref.error})"
            )
        return None
    if ref.emulations:
        return None  # an emulation rewrites the call: both succeeded
    if not fast.reached or fast.sent is None:
        return (
            f"{where}: the generated path called FlashInfer {0 if not fast.reached else 2}+ times"
        )
    assert ref.sent is not None
    if fast.sent.keys() != ref.sent.keys():
        return f"{where}: bound names differ: {sorted(fast.sent.keys() ^ ref.sent.keys())}"
    diff = [k for k in ref.sent if not same_value(fast.sent[k], ref.sent[k])]
    if diff:
        shown = {k: (fast.sent[k], ref.sent[k]) for k in diff}
        return f"{where}: values differ (generated, reference): {shown}"
    return None


def check(dotted: str, release: str, call: Call) -> Outcome:
    fast = run_generated(dotted, release, call)
    ref = run_reference(dotted, release, call)
    why = disagreement(dotted, release, call, fast, ref)
    assert why is None, why
    return ref


# -- perturbations from the stable kinds -------------------------------------------------

ABSENT = object()  # leave the parameter out of the call


class Foreign(enum.IntEnum):
    """An engine's copy of an enum (looked up by member name), and a name none has."""

    Renormalize = 1
    NotAMember = 97


class Opaque:
    """A value of no kind fi_compat checks (an array-like, a user object)."""

    def __repr__(self) -> str:
        return "Opaque()"


def _int_tensors(t: torch.Tensor) -> list[torch.Tensor]:
    if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool:
        return [t]
    return [t, t.to(torch.int32), t.to(torch.int64), t.to(torch.uint8)]


def values_for(entry: EntryPoint, name: str, base: Any) -> list[Any]:
    """Values to try for parameter ``name``: what its kind takes, its policy's values,
    and values of the wrong kind."""
    p = entry.params[name]
    k = p.kind
    out: list[Any] = [ABSENT] if p.default is not REQUIRED else []
    if base is not ABSENT:
        out.append(base)
    if p.default not in (REQUIRED, OMIT):
        out.append(p.default)
    out += list(p.neutral)
    out += [v for v in p.value_since if v is not None]
    if isinstance(base, torch.Tensor):
        out += _int_tensors(base)[1:]
        out += [base.float(), base[..., :1]]
    elif isinstance(base, list) and base and isinstance(base[0], torch.Tensor):
        out += [[t.to(torch.int64) for t in base], base[:1]]
    if k is None:
        out += [None, 1, Opaque()]
    else:
        if k.nullable:
            out.append(None)
        if bool in k.types:
            out += [True, False]
        if int in k.types:
            out += [0, 1, 2, -1, 128, Foreign.Renormalize]
        if float in k.types:
            out += [0.0, 0.5, 1.0, -1.0, 1, float("nan")]
        if str in k.types:
            out += ["auto", "fa2"]
        if k.literals:
            out += [*k.literals, "not-a-literal"]
        if list in k.types:
            out += [[], [1, 2], (0,)]
        if dict in k.types:
            out += [{}]
        if k.enum is not None:
            cls = getattr(enums, k.enum)
            members = list(cls)
            out += members + [m.name for m in members[:3]] + [0, 1, Foreign.Renormalize]
            out += [Foreign.NotAMember, "NotAMember"]
        if k.dtype:
            out += [torch.bfloat16, torch.float16, torch.float32, torch.float8_e4m3fn]
        if k.tensor and not isinstance(base, torch.Tensor):
            out += [torch.zeros(4), torch.zeros(2, 3, dtype=torch.int32)]
    # the wrong kinds
    out += [None, "wrong", 2.5, True, [0], Opaque(), torch.bfloat16]
    return out


@st.composite
def calls(draw: Any, dotted: str) -> tuple[str, Call]:
    e = ENTRIES[dotted]
    release = draw(st.sampled_from(sampled_releases(e)))
    kw = base_args(e)
    names = list(e.order)
    perturbed = draw(st.lists(st.sampled_from(names), max_size=3, unique=True)) if names else []
    for name in perturbed:  # (meta_size takes no parameter)
        v = draw(st.sampled_from(values_for(e, name, kw.get(name, ABSENT))))
        if v is ABSENT:
            kw.pop(name, None)
        else:
            kw[name] = v
    extra = draw(st.sampled_from(["none", "none", "none", "unknown", "release-only"]))
    if extra == "unknown":
        kw["definitely_not_a_parameter"] = 1
    elif extra == "release-only":
        sig = snapshots.params(e, release) or []
        _fn, a, _sig = built(dotted, release)
        own = {*a.spelling.values(), *e.order, e.receiver}
        extras = [q[0] for q in sig if q[0] not in own and q[1] in ("pk", "ko")]
        if extras:
            kw[draw(st.sampled_from(extras))] = None
    # a positional prefix (as far as the call gives it), sometimes one argument too many
    positional = [n for n in names if not e.params[n].keyword_only]
    lead: list[str] = []
    for n in positional[: draw(st.integers(0, len(positional)))]:
        if n not in kw:
            break
        lead.append(n)
    args = tuple(kw.pop(n) for n in lead)
    if len(lead) == len(positional) and draw(st.integers(0, 9)) == 0:
        args += (None,)
    backend = None
    if e.receiver is not None:
        backend = draw(st.sampled_from([None, "fa2", "fa3", "cudnn", "trtllm-gen", "auto"]))
    return release, Call(args, kw, backend)


# -- the tests ----------------------------------------------------------------------------

DOTTED = list(ENTRIES)


@pytest.mark.parametrize("dotted", DOTTED)
def test_the_base_call_agrees_and_succeeds_on_every_sampled_release(dotted: str) -> None:
    e = ENTRIES[dotted]
    generic = builder_of(e) is None
    for release in sampled_releases(e):
        ref = check(dotted, release, Call((), base_args(e)))
        assert ref.error is None, (
            f"{dotted} on {release}: the base call is refused ({ref.error!r}); "
            + (
                "no tests/support/*_cases.py builder knows this entry point and the generic call "
                "from its stub is not valid: add it to a family's args() and to BUILDERS"
                if generic
                else "its family's args() builder no longer gives a valid call"
            )
        )


@pytest.mark.parametrize("dotted", DOTTED)
@SETTINGS
@given(data=st.data())
def test_generated_path_agrees_with_the_reference(dotted: str, data: Any) -> None:
    release, call = data.draw(calls(dotted))
    check(dotted, release, call)


def _keyword_by_design(e: EntryPoint, release: str, name: str) -> bool:
    """A parameter forwarded only when given (default ``OMIT``), or a ``lean`` method's
    optional parameter whose default in ``release`` is not the stub's (passing it
    positionally at the stub's default would change the call): by keyword, and the
    positional prefix ends before it."""
    import ast

    stable = {p.spelling(place(release))[0]: n for n, p in e.params.items()}
    n = stable.get(name)
    if n is not None and e.params[n].default is OMIT:
        return True
    if not e.lean or n is None or e.params[n].default is REQUIRED:
        return False
    src = next((q[2] for q in snapshots.params(e, release) or [] if q[0] == name), None)
    try:
        value = ast.literal_eval(src) if src is not None else ABSENT
    except (ValueError, SyntaxError):
        return True
    d = e.params[n].default
    return not (type(value) is type(d) and value == d)


@pytest.mark.parametrize("dotted", DOTTED)
def test_forwarding_is_positional_exactly_where_the_release_signature_is_known(
    dotted: str,
) -> None:
    """On every release of the range, the base call reaches FlashInfer's parameters with
    the same values as the reference translation (``check``: bound by the release's real
    signature, so an argument in the wrong positional slot disagrees), positionally up
    to the first positional slot not forwarded and by keyword after; on a release
    fi_compat has no snapshot of (a pre-release, a newer one), by keyword only."""
    e = ENTRIES[dotted]
    kw = base_args(e)
    for release in releases(e):
        ref = check(dotted, release, Call((), kw))  # the values reach the right parameters
        out = run_generated(dotted, release, Call((), kw))
        if not out.reached or ref.emulations:
            continue  # an emulation rewrites the call: forwarded by keyword (Adapter.forward)
        _fn, _a, sig = built(dotted, release)
        params = list(sig.parameters.values())[1 if e.receiver is not None else 0 :]
        slots = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        k = len(out.positional)
        assert list(out.positional) == slots[:k]
        if k < len(slots) and slots[k] in out.keywords:
            assert _keyword_by_design(e, release, slots[k]), (
                f"{dotted} on {release}: {slots[k]!r} was passed by keyword although every "
                f"positional slot before it was filled ({list(out.positional)})"
            )
    last = releases(e)[-1]
    for version in (f"{last}rc1", "99.0.0"):  # no snapshot: keyword binding only
        a = e.select(Distribution("flashinfer-python", version, "<test>", ""))
        a.build(stub_of(e))
        lead = f"{e.receiver}, " if e.receiver else ""
        for line in a.source.splitlines():
            if "_fn(" in line:
                first = line.split("_fn(", 1)[1].removeprefix(lead).split(",", 1)[0]
                assert "=" in first or first.startswith("**") or first.startswith(")"), (
                    f"{dotted} on {version}: a positional argument without a snapshot: {line}"
                )


# -- calls this suite found disagreeing, kept as regressions ------------------------------

# Before the generated code ran its kind checks ahead of the metadata checks and
# normalisers, and sent any failure there to the general path, these disagreed: a
# different error type (the metadata check's InvalidArgumentError before check_kinds'
# MissingArgumentError), None forwarded for a required tensor a check let through, and
# enable_pdl="wrong" rewritten to False by the PDL normaliser of 0.2.3-0.6.x.
REGRESSIONS = [
    ("fi_compat.rope.apply_rope", "0.7.4", {"q": None}),
    ("fi_compat.fused_moe.trtllm_fp8_block_scale_routed_moe", "0.6.3", {"num_experts": None}),
    ("fi_compat.decode.fast_decode_plan", "0.4.0", {"q_len_per_req": "wrong"}),
    (
        "fi_compat.mla.BatchMLAPagedAttentionWrapper.plan",
        "0.2.2",
        {"qo_indptr": ABSENT, "use_profiler": None},
    ),
    ("fi_compat.decode.BatchDecodeMlaWithPagedKVCacheWrapper.run", "0.2.0.post1", {"q_nope": None}),
    ("fi_compat.gdn_decode.gated_delta_rule_decode", "0.7.4", {"state": None}),
    ("fi_compat.gdn_decode.gated_delta_rule_mtp", "0.7.4", {"initial_state": None}),
    ("fi_compat.quantization.nvfp4_quantize", "0.7.4", {"a_global_sf": None}),
    ("fi_compat.norm.rmsnorm", "0.6.0", {"enable_pdl": "wrong"}),
    ("fi_compat.norm.gemma_fused_add_rmsnorm", "0.2.3", {"enable_pdl": "wrong"}),
]


@pytest.mark.parametrize(
    ("dotted", "release", "change"),
    REGRESSIONS,
    ids=[f"{d.rpartition('.')[2]}-{r}-{'-'.join(c)}" for d, r, c in REGRESSIONS],
)
def test_regression(dotted: str, release: str, change: dict[str, Any]) -> None:
    kw = base_args(ENTRIES[dotted])
    for name, value in change.items():
        if value is ABSENT:
            kw.pop(name, None)
        else:
            kw[name] = value
    ref = check(dotted, release, Call((), kw))
    assert ref.error is not None  # each is a mistake: refused, the same way on both paths


# -- the comparison can fail --------------------------------------------------------------


class LyingSpy(RecordingSpy):
    """Records one forwarded value other than the one it received."""

    def record(self, bound: dict[str, Any]) -> dict[str, Any]:
        out = dict(bound)
        for k, v in out.items():
            if isinstance(v, torch.Tensor):
                out[k] = v.clone()  # equal contents, so: also change them
                out[k] = v.to(torch.float64) if v.dtype != torch.float64 else v.float()
                return out
            if type(v) in (int, float) and not isinstance(v, bool):
                out[k] = v + 1
                return out
        raise AssertionError("nothing to break")


@pytest.mark.parametrize(
    "dotted",
    [
        "fi_compat.norm.rmsnorm",
        "fi_compat.decode.BatchDecodeWithPagedKVCacheWrapper.plan",
        "fi_compat.fused_moe.trtllm_fp8_block_scale_moe",
    ],
)
def test_the_comparison_catches_a_broken_forwarded_value(dotted: str) -> None:
    e = ENTRIES[dotted]
    release = sampled_releases(e)[-1]
    call = Call((), base_args(e))
    # the generated path first, as the property test runs them: it publishes the spy, which
    # binds the release's enum tables that the reference path reads too (MoE)
    honest = run_generated(dotted, release, call)
    ref = run_reference(dotted, release, call)
    assert disagreement(dotted, release, call, honest, ref) is None
    broken = run_generated(dotted, release, call, spy_type=LyingSpy)
    why = disagreement(dotted, release, call, broken, ref)
    assert why is not None and "values differ" in why


def test_the_comparison_catches_one_path_refusing() -> None:
    dotted = "fi_compat.norm.rmsnorm"
    release = sampled_releases(ENTRIES[dotted])[-1]
    call = Call((), base_args(ENTRIES[dotted]))
    ok = run_reference(dotted, release, call)
    refused = Outcome()
    refused.error = errors.InvalidArgumentError("stand-in")
    assert disagreement(dotted, release, call, refused, ok) is not None
    assert disagreement(dotted, release, call, ok, refused) is not None
    other = Outcome()
    other.error = errors.MissingArgumentError("stand-in")
    assert disagreement(dotted, release, call, other, refused) is not None
