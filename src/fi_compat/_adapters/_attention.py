"""Shared parts of the attention adapter tables (``flashinfer.decode``, ``flashinfer.prefill``).

Read from the released sources (``_snapshots/decode.*.json``, ``prefill.*.json`` have every
signature; the policy below cites the release whose code needs it):

* ``run(..., return_lse=True)`` returns ``(out, lse)``, ``lse`` float32 ``[tokens,
  heads]`` in base 2, on every release and the fa2 / fa3 / trtllm-gen kernels
  (``state.cuh`` ``get_lse``, 0.7.4 ``utils.py`` "emit base-2 LSE"); ``return_lse=False``
  returns the bare output.  The cuDNN prefill backend returns natural-log LSE before
  0.7.0 (0.7.0 ``cudnn/prefill.py`` converts), so ``backend="cudnn"`` for prefill needs
  0.7.0 here.
* ``out=`` / ``lse=`` caller buffers: 0.2.1.post2 (copied into before:
  :class:`CallerBuffers`).  ``enable_pdl``: 0.2.7 (a launch
  attribute: a hint).
* ``run(q, kv, *args)``: FlashInfer passes ``*args`` to a custom JIT module only (from
  0.2.0.post2 a third positional argument is no ``q_scale``: it is ignored on the built-in
  kernels), so the stable ``run`` takes no ``*args``: extra positional arguments are a
  ``PositionalMismatchError``, never silently ignored.
* ``end_forward`` did nothing since 0.2.0 and was removed in 0.7.0: a no-op here on every
  release.  ``begin_forward`` is the stable ``plan`` (FlashInfer's class-body alias
  ``begin_forward = plan`` names the base's ``plan``; the subclass binds its own name);
  ``run_return_lse`` is ``self.run(..., return_lse=True)``, the call FlashInfer's
  ``functools.partialmethod(run, return_lse=True)`` makes.  ``forward`` /
  ``forward_return_lse`` stay FlashInfer's own: they store their arguments on ``self``
  and call ``self.run`` / ``self.run_return_lse`` in their release's convention, which
  the release view (:mod:`fi_compat._core.classes`) binds by that release's signature
  before the stable ``run`` runs (the audit of every release: ``docs/wrappers.md``).
"""

from __future__ import annotations

from .._core import Emulation, EntryPoint, Normalizer, Param
from ..errors import InvalidArgumentError, UnsupportedParameterError
from ..registry import at_least
from . import _elementwise as ew

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, cast

    from .._core import Adapter
    from .._core.classes import WrapperClass
    from ..registry import Placement
else:

    def cast(_t: object, v: object) -> object:  # typing.cast without importing typing
        return v


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "get_device") and hasattr(x, "dim")


def method(
    facade: str, module: str, cls: str, name: str, params: list[Param], feature: str, **kw: Any
) -> EntryPoint:
    """The entry point of ``cls.name`` (a wrapper method: receiver ``self``, lean calls)."""
    return EntryPoint(
        facade=facade,
        name=f"{cls}.{name}",
        module=module,
        attr=f"{cls}.{name}",
        params=params,
        receiver="self",
        lean=True,
        feature=feature,
        **kw,
    )


def fp16_qk_reduction() -> Param:
    """``use_fp16_qk_reduction``, called ``allow_fp16_qk_reduction`` before 0.2.0.post2."""
    return Param(
        "use_fp16_qk_reduction",
        spelled=(("0.2.0.post2", "allow_fp16_qk_reduction", None),),
        ref="0.2.0.post2 rename",
    )


def sm107_variant(name: str, note: str) -> Param:
    """``use_fp16_softmax`` / ``uses_spcompress`` (0.6.18): select SM107 trtllm-gen cubin
    variants.  ``False`` is what ``None`` becomes everywhere they exist (the Python check
    tests truthiness, the launcher reads ``value_or(false)``), the only kernels of the
    releases before: dropped there."""
    return Param(
        name,
        neutral=(False,),
        neutral_ref=(
            "0.6.18 utils.py:297-301 (check_trtllm_gen_sm107_only_feature: off unless "
            "truthy); 0.6.18 data/csrc/trtllm_fmha_kernel_launcher.cu:492, 653-654, 889-890 "
            "and 0.7.4 :682, 849-850, 1118-1119 (None -> value_or(false))"
        ),
        note=note,
        ref="0.6.18",
    )


# ln 2: the kernels' ``math::loge2`` (float32) and ``flashinfer/utils.py`` ``ln2``; a
# base-2 LSE times this in float32 is the natural-log LSE FlashInfer itself returns
LN2 = 0.6931471805599453094

_TENSOR: list[Any] = [None]  # torch.Tensor, bound by prepare() at the first call


def prepare() -> None:
    import torch

    ew.prepare()
    _TENSOR[0] = torch.Tensor


def validate_paged_run(where: str) -> Callable[[Any, Any], int]:
    """``q`` 3-D, ``paged_kv_cache`` one 4-/5-D tensor or a ``(k, v)`` pair of 4-D
    tensors, all on ``q``'s device; returns its CUDA index (-1 off CUDA).  Conforming
    plain tensors take a few attribute reads (a wrapper's ``run`` is called once per
    layer); anything else gets the full diagnosis."""

    def validate(q: Any, kv: Any) -> int:
        t = _TENSOR[0]
        if type(q) is t and q.ndim == 3:
            if type(kv) is t:
                if kv.ndim == 5 or kv.ndim == 4:
                    d: int = q.get_device()
                    if kv.get_device() == d:
                        return d
            elif type(kv) is tuple and len(kv) == 2:
                k, v = kv
                if type(k) is t and type(v) is t and k.ndim == 4 and v.ndim == 4:
                    d = q.get_device()
                    if k.get_device() == d and v.get_device() == d:
                        return d
        return diagnose(q, kv)

    def diagnose(q: Any, kv: Any) -> int:
        ew.tensor(where, "q", q)
        if q.dim() != 3:
            raise InvalidArgumentError(
                f"{where}: q must be 3-D [tokens, num_qo_heads, head_dim], got shape "
                f"{tuple(q.shape)}"
            )
        if type(kv) is tuple or type(kv) is list:
            if len(kv) != 2 or not all(_is_tensor(t) and t.dim() == 4 for t in kv):
                raise InvalidArgumentError(
                    f"{where}: paged_kv_cache as a pair must be (k_cache, v_cache), two 4-D "
                    f"tensors [pages, page_size, heads, dim] (NHD) or [pages, heads, "
                    f"page_size, dim] (HND)"
                )
            others = {"paged_kv_cache[0]": kv[0], "paged_kv_cache[1]": kv[1]}
        else:
            ew.tensor(where, "paged_kv_cache", kv)
            if kv.dim() not in (4, 5):
                raise InvalidArgumentError(
                    f"{where}: paged_kv_cache must be a 5-D tensor [pages, 2, ...] or a "
                    f"(k_cache, v_cache) pair of 4-D tensors, got shape {tuple(kv.shape)}"
                )
            others = {"paged_kv_cache": kv}
        return ew.check_device(where, "q", q, others)

    return validate


def validate_ragged_run(where: str) -> Callable[[Any, Any, Any], int]:
    """``q``, ``k``, ``v`` 3-D ``[tokens, heads, dim]`` on one device."""

    def validate(q: Any, k: Any, v: Any) -> int:
        for n, t in (("q", q), ("k", k), ("v", v)):
            ew.tensor(where, n, t)
            if t.dim() != 3:
                raise InvalidArgumentError(
                    f"{where}: {n} must be 3-D [tokens, heads, head_dim], got shape "
                    f"{tuple(t.shape)}"
                )
        return ew.check_device(where, "q", q, {"k": k, "v": v})

    return validate


def validate_single(where: str, q_dims: int) -> Callable[[Any, Any, Any], int]:
    """``single_*``: ``q`` ``q_dims``-D, ``k``/``v`` 3-D, one device."""

    def validate(q: Any, k: Any, v: Any) -> int:
        for n, t, d in (("q", q, q_dims), ("k", k, 3), ("v", v, 3)):
            ew.tensor(where, n, t)
            if t.dim() != d:
                raise InvalidArgumentError(f"{where}: {n} must be {d}-D, got {tuple(t.shape)}")
        return ew.check_device(where, "q", q, {"k": k, "v": v})

    return validate


def validate_mla_run(where: str) -> Callable[..., int]:
    """The split inputs (``q_nope`` / ``q_pe`` 3-D ``[tokens, heads, dim]``, ``ckv_cache``
    / ``kpe_cache`` 3-D ``[pages, page_size, dim]``) or the packed ones (0.7.0), all on
    one device; returns its CUDA index."""

    def validate(
        q_nope: Any, q_pe: Any, ckv_cache: Any, kpe_cache: Any, query: Any, kv: Any
    ) -> int:
        first, named = None, {}
        for n, t, dims in (
            ("q_nope", q_nope, (3,)),
            ("q_pe", q_pe, (3,)),
            ("ckv_cache", ckv_cache, (2, 3)),
            ("kpe_cache", kpe_cache, (2, 3)),
            ("query", query, (3, 4)),
            ("kv_cache", kv, (3, 4)),
        ):
            if t is None:
                continue
            ew.tensor(where, n, t)
            if t.dim() not in dims:
                raise InvalidArgumentError(
                    f"{where}: {n} must be {' or '.join(f'{d}-D' for d in dims)}, got shape "
                    f"{tuple(t.shape)}"
                )
            if first is None:
                first = (n, t)
            else:
                named[n] = t
        if first is None:
            raise InvalidArgumentError(
                f"{where}: pass q_nope, q_pe, ckv_cache and kpe_cache (or, from "
                f"flashinfer-python 0.7.0, query= and kv_cache=)"
            )
        return ew.check_device(where, first[0], first[1], named)

    return validate


class MultiTokenDecode(Normalizer):
    """Decode ``plan(q_len_per_req > 1)``: the parameter exists from 0.6.13, but before
    0.7.0 the fa2 path runs it with a non-causal mask and one query row per request
    (0.6.13-0.6.15 ``decode.py``); 0.7.0 masks causally (``is_causal`` defaults to
    ``q_len_per_req > 1``).  Refused below 0.7.0, on every backend, so the same call
    never gives two results."""

    args = ("q_len_per_req",)
    out = ()
    boundaries = ("0.7.0",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.7.0"):
            return None
        where, release = adapter.entry.dotted, adapter.release

        def check(q_len_per_req: Any) -> tuple[Any, ...]:
            if q_len_per_req is not None and q_len_per_req != 1:
                raise UnsupportedParameterError(
                    f"{where}(q_len_per_req={q_len_per_req!r}) needs flashinfer-python>=0.7.0 "
                    f"(multi-token decode with a causal mask); installed: {release}, which "
                    f"has none (0.6.13-0.6.x run it without the mask). Fix: pip install "
                    f"'flashinfer-python>=0.7.0', or use the prefill wrapper",
                    parameter="q_len_per_req",
                    installed=str(release),
                    minimum="0.7.0",
                )
            return ()

        return check

    def describe(self, p: Any) -> str | None:
        if at_least(p, "0.7.0"):
            return None
        return "`q_len_per_req > 1` refused (no causal multi-token decode before 0.7.0)"


class CallerBuffers(Emulation):
    """``out=`` / ``lse=`` before 0.2.1.post2: the release allocates, fi_compat copies
    into the caller's buffers and returns them (exact: a copy).  As 0.2.1.post2+ do, a
    given ``lse`` is written also with ``return_lse=False`` (then not returned)."""

    name = "caller_buffers"
    reads = ("lse", "out")
    params = ("out", "lse")
    boundaries = ("0.2.1.post2",)

    def may_apply(self, p: Placement) -> bool:
        return not at_least(p, "0.2.1.post2")

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        pl = adapter.placement
        return (
            pl is not None
            and not at_least(pl, "0.2.1.post2")
            and (kw["out"] is not None or kw["lse"] is not None)
        )

    def fast_test(self, name: str) -> str | None:
        return "{n} is None"

    def describe(self, p: Placement) -> str | None:
        return None if at_least(p, "0.2.1.post2") else "`out` / `lse` buffers: copied into"

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        out, lse, wanted = kw["out"], kw["lse"], kw["return_lse"] is True
        kw["out"] = kw["lse"] = None
        if lse is not None:
            kw["return_lse"] = True
        return out, lse, wanted

    def after(self, adapter: Adapter, kw: dict[str, Any], result: Any, state: object) -> Any:
        out, lse, wanted = cast("tuple[Any, Any, bool]", state)
        o, got = result if type(result) is tuple else (result, None)
        if out is not None:
            o = out.copy_(o)
        if lse is not None:
            got = lse.copy_(got)
        return (o, got) if wanted else o


class NoneMeans(Normalizer):
    """``name=None`` (the stable default) handed over as ``value`` on releases
    ``[lo, hi)``, whose own default is ``value`` and which do not accept ``None``
    (prefill ``jit_kwargs`` defaulted to ``{}`` in 0.2.10 and is ``**``-expanded)."""

    def __init__(self, name: str, value: Any, lo: str, hi: str) -> None:
        self.args = self.out = (name,)
        self.value, self.lo, self.hi = value, lo, hi
        self.boundaries = (lo, hi)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or not at_least(pl, self.lo) or at_least(pl, self.hi):
            return None
        value = self.value

        def fill(v: Any) -> tuple[Any, ...]:
            return (type(value)() if v is None else v,)  # a fresh one per call

        return fill

    def describe(self, p: Any) -> str | None:
        if at_least(p, self.lo) and not at_least(p, self.hi):
            return f"`{self.args[0]}=None` sent as {self.value!r}"
        return None


class IgnoredByBackend(Normalizer):
    """Arguments the wrapper's kernels would drop without an error: FlashInfer accepts
    ``names`` on every backend but hands them to some kernels only (read from the
    releases' ``run`` bodies and kernel bindings; the adapter modules cite them).  The
    backend is the instance's (``self._backend``, resolved by ``plan``), so this reads
    the receiver; a call whose arguments would be ignored is refused before the launch,
    on every release, naming the backend that would drop them.

    ``ignored(self, placement, *values)`` says whether this call's values would be
    dropped; it runs only when one of ``names`` is given (not ``None``)."""

    out = ()

    def __init__(
        self,
        names: tuple[str, ...],
        ignored: Callable[..., bool],
        fix: str,
        boundaries: tuple[str, ...] = (),
        also: tuple[str, ...] = (),
    ) -> None:
        self.names = self.only_if_given = names
        self.args = ("self", *names, *also)
        self.ignored, self.fix = ignored, fix
        self.boundaries = boundaries

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or not any(n in adapter.present for n in self.names):
            return None  # absent: refused by the table unless left out
        names, ignored, fix, k = self.names, self.ignored, self.fix, len(self.names)
        where, release = adapter.entry.dotted, adapter.release

        def check(receiver: Any, *values: Any) -> tuple[Any, ...]:
            if receiver is None or all(v is None for v in values[:k]):
                return ()
            if ignored(receiver, pl, *values):
                given = ", ".join(
                    f"{n}=..." for n, v in zip(names, values, strict=False) if v is not None
                )
                backend = getattr(receiver, "_backend", None)
                raise InvalidArgumentError(
                    f"{where}({given}): this wrapper runs the {backend!r} backend, whose "
                    f"kernels in flashinfer-python {release} do not apply it (FlashInfer "
                    f"would ignore it without an error and return a different result). "
                    f"Fix: {fix}"
                )
            return ()

        return check

    def describe(self, p: Placement) -> str | None:
        return f"`{'` / `'.join(self.names)}` refused where the wrapper's backend ignores them"


def wrapper_class(
    facade: str,
    module: str,
    name: str,
    tables: dict[str, EntryPoint],
    stubs: tuple[Any, Any, Any],
    legacy: bool = True,
    own_varargs: dict[str, tuple[str, tuple[str, ...]]] | None = None,
    *,
    doc: str,
    flashinfer_methods: tuple[str, ...] = (),
) -> WrapperClass:
    """The ``WrapperClass`` of an attention wrapper: ``__init__`` / ``plan`` / ``run``
    from ``stubs`` and ``tables``, ``run_return_lse``, and with ``legacy`` the pre-0.7.0
    names (``begin_forward`` = ``plan``, a no-op ``end_forward``); ``own_varargs``,
    ``doc``, ``flashinfer_methods``: see :class:`~fi_compat._core.classes.WrapperClass`."""
    from .._core.classes import WrapperClass

    names = ("__init__", "plan", "run")
    extra: dict[str, Any] = {"run_return_lse": run_return_lse}
    if legacy:
        extra["end_forward"] = end_forward
    return WrapperClass(
        facade=facade,
        name=name,
        module=module,
        methods={m: (s, tables[m]) for m, s in zip(names, stubs, strict=True)},
        aliases={"begin_forward": "plan"} if legacy else {},
        extra=extra,
        own_varargs=own_varargs,
        doc=doc,
        flashinfer_methods=flashinfer_methods,
    )


def end_forward(self: Any) -> None:
    """Does nothing, as on every release that had it (0.2.0.post1-0.6.x; removed in 0.7.0)."""


def run_return_lse(self: Any, q: Any, *args: Any, **kwargs: Any) -> Any:
    """``run(..., return_lse=True)``: ``(out, lse)`` (FlashInfer's ``run_return_lse``)."""
    return self.run(q, *args, return_lse=True, **kwargs)


# its typed signature (tools/stubs.py): ``run``'s without ``return_lse``
run_return_lse.fi_compat_signature = ("run", ("return_lse",))  # type: ignore[attr-defined]
