"""The call-policy cases, shared by the static suite (all 39 releases, spy bound to the
snapshot signature) and the live contract suite (installed releases, spy bound to
``inspect.signature`` of the real function).  Each case takes ``(release, make)`` where
``make()`` returns ``(facade, spy)`` freshly pointed at a spy.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
import torch

from fi_compat import errors
from fi_compat._adapters.gdn_prefill import SPEC
from fi_compat._device import assume_capability
from fi_compat.registry import at_least, place
from support.helpers import D, H, T, inputs

Make = Callable[[], tuple[Any, Any]]

NATIVE_CU = {True: torch.int32, False: torch.int64}  # keyed by "release >= 0.7.0"


def has(release: str, name: str) -> bool:
    return SPEC.params[name].present_in(place(release))


def native_cu(release: str) -> torch.dtype:
    return NATIVE_CU[at_least(place(release), "0.7.0")]


def case_positional_and_keyword_agree(release: str, make: Make) -> None:
    f, spy = make()
    x = inputs()
    f(x["q"], x["k"], x["v"], x["g"], x["beta"], 0.25, x["initial_state"], True, x["cu_seqlens"])
    pos = spy.last
    f(
        q=x["q"],
        k=x["k"],
        v=x["v"],
        g=x["g"],
        beta=x["beta"],
        scale=0.25,
        initial_state=x["initial_state"],
        output_final_state=True,
        cu_seqlens=x["cu_seqlens"],
    )
    kw = spy.last
    assert pos.keys() == kw.keys()
    for n in pos:
        a, b = pos[n], kw[n]
        if isinstance(a, torch.Tensor):
            assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b), n
        else:
            assert a == b, n
    for n in ("q", "k", "v", "g", "beta", "initial_state"):
        assert pos[n] is x[n], n  # conforming inputs reach FlashInfer as the same objects
    assert pos["scale"] == 0.25 and pos["output_final_state"] is True
    sent = set(spy.raw_kwargs[-1])  # all by keyword (the spy rejects positional calls)
    assert (
        {"q", "k", "v", "g", "beta", "scale", "initial_state", "output_final_state", "cu_seqlens"}
        <= sent
        <= set(pos)
    )
    # parameters newer than 0.6.0 and left at their default are omitted; the release's
    # default is the same value (tests/static/test_snapshots.py checks it per release)
    for n in set(pos) - sent:
        assert SPEC.params[n].since is not None and pos[n] == SPEC.params[n].default, n


def case_cu_seqlens_native_dtype(release: str, make: Make) -> None:
    f, spy = make()
    target = native_cu(release)
    for dt in (torch.int32, torch.int64):
        x = inputs(cu_dtype=dt)
        out = f(x["q"], x["k"], x["v"], x["g"], x["beta"], cu_seqlens=x["cu_seqlens"])
        cu = spy.last["cu_seqlens"]
        assert cu.dtype == target and cu.shape == (3,)
        assert torch.equal(cu.long(), x["cu_seqlens"].long())
        if dt == target:
            assert cu is x["cu_seqlens"]  # no copy when it already conforms
        assert isinstance(out, torch.Tensor) and out.shape == (T, H, D)


def case_return_shape(release: str, make: Make) -> None:
    f, _ = make()
    x = inputs()
    res = f(
        x["q"], x["k"], x["v"], x["g"], x["beta"], None, x["initial_state"], True, x["cu_seqlens"]
    )
    assert isinstance(res, tuple) and len(res) == 2
    assert res[0].shape == (T, H, D) and res[1].shape == (2, H, D, D)
    res1 = f(x["q"], x["k"], x["v"], cu_seqlens=x["cu_seqlens"])
    assert isinstance(res1, torch.Tensor)


# (parameter, a value that needs the parameter, a value that means "as if absent" or None)
NON_DEFAULT: list[tuple[str, Any]] = [
    ("state_checkpoints", torch.zeros(1, H, D, D)),
    ("checkpoint_cu_starts", torch.zeros(3, dtype=torch.int64)),
    ("checkpoint_every_n_tokens", 64),
    ("use_cp", True),
    ("_cp_chunk_len", 128),
    ("backend", "cake_gdn"),
    ("output_state_indices", torch.zeros(2, dtype=torch.int32)),
    ("checkpoint_state_indices", torch.zeros(2, dtype=torch.int32)),
    ("prefix_lens", torch.zeros(2, dtype=torch.int32)),
]
NEUTRAL = [("use_cp", False), ("use_cp", "auto"), ("backend", "flashinfer"), ("backend", "auto")]
HINTS = [("max_seqlen", 7), ("cu_seqlens_cpu", [0, 5, 12])]


def case_missing_parameters(release: str, make: Make) -> None:
    f, spy = make()
    x = inputs()
    base = dict(q=x["q"], k=x["k"], v=x["v"], g=x["g"], beta=x["beta"], cu_seqlens=x["cu_seqlens"])
    f(**base)
    for name in SPEC.order:  # left at the default: dropped where absent
        if not has(release, name):
            assert name not in spy.raw_kwargs[-1], name
    for name, value in NON_DEFAULT:
        if has(release, name):
            continue
        n_calls = len(spy.calls)
        with pytest.raises(errors.UnsupportedParameterError) as ei:
            f(**base, **{name: value})
        assert ei.value.parameter == name and ei.value.installed == release
        assert ei.value.minimum == SPEC.params[name].since
        assert f"flashinfer-python>={ei.value.minimum}" in str(ei.value)
        assert isinstance(ei.value, TypeError) and len(spy.calls) == n_calls  # before launch
    for name, value in NEUTRAL + HINTS:
        if has(release, name):
            continue
        f(**base, **{name: value})
        assert name not in spy.raw_kwargs[-1], name


def case_value_needs_newer_release(release: str, make: Make) -> None:
    f, spy = make()
    x = inputs()
    base = dict(q=x["q"], k=x["k"], v=x["v"], cu_seqlens=x["cu_seqlens"])
    for value, first in (("cudnn", "0.7.1"), ("sm120_cute", "0.7.4"), ("cake_gdn", "0.7.0")):
        if at_least(place(release), first):
            f(**base, backend=value)
            assert spy.raw_kwargs[-1]["backend"] == value
        else:
            with pytest.raises(errors.UnsupportedParameterError) as ei:
                f(**base, backend=value)
            assert ei.value.minimum == first, (value, ei.value)


def case_present_parameters_pass_through(release: str, make: Make) -> None:
    f, spy = make()
    x = inputs()
    base = dict(q=x["q"], k=x["k"], v=x["v"], cu_seqlens=x["cu_seqlens"])
    values: dict[str, Any] = {"scale": 0.5}
    if at_least(place(release), "0.7.1"):  # older releases: emulated (case_qk_l2norm_...)
        values["use_qk_l2norm_in_kernel"] = True
    if has(release, "use_cp"):
        values["use_cp"] = False
    if has(release, "max_seqlen"):
        values["max_seqlen"] = 7
    if has(release, "backend"):
        values["backend"] = "flashinfer"
    if has(release, "cu_seqlens_cpu"):
        values["cu_seqlens_cpu"] = [0, 5, 12]
    f(**base, **values)
    for n, val in values.items():
        assert spy.raw_kwargs[-1][n] == val, n


def case_unknown_keywords_are_refused(release: str, make: Make) -> None:
    """A keyword no release of the entry point has is a TypeError before the call (the
    release's own "unexpected keyword argument", raised by fi_compat and typed)."""
    f, spy = make()
    x = inputs()
    with pytest.raises(errors.UnknownArgumentError, match="not_a_flashinfer_option"):
        f(x["q"], x["k"], x["v"], cu_seqlens=x["cu_seqlens"], not_a_flashinfer_option=1)
    assert spy.calls == []


def case_qk_l2norm_means_the_same_everywhere(release: str, make: Make) -> None:
    """``use_qk_l2norm_in_kernel=True``: 0.7.1+ normalise q and k themselves (the flag is
    forwarded, q untouched); older releases ignore the flag, so fi_compat hands them
    q and k normalised by 0.7.1's formula and the flag as False."""
    f, spy = make()
    x = inputs()
    f(
        x["q"],
        x["k"],
        x["v"],
        x["g"],
        x["beta"],
        cu_seqlens=x["cu_seqlens"],
        use_qk_l2norm_in_kernel=True,
    )
    sent = spy.raw_kwargs[-1]
    if at_least(place(release), "0.7.1"):
        assert sent["use_qk_l2norm_in_kernel"] is True and sent["q"] is x["q"]
        return
    assert sent["use_qk_l2norm_in_kernel"] is False
    for n in ("q", "k"):
        xf = x[n].float()
        want = (xf * torch.rsqrt((xf * xf).sum(-1, keepdim=True) + 1e-6)).to(x[n].dtype)
        assert torch.equal(sent[n], want), n
        assert torch.allclose(sent[n].float().norm(dim=-1), torch.ones(()), atol=1e-2)
    assert sent["v"] is x["v"]


def case_gate_conventions(release: str, make: Make) -> None:
    f, spy = make()
    x = inputs()
    base = dict(q=x["q"], k=x["k"], v=x["v"], cu_seqlens=x["cu_seqlens"])
    g = x["g"]
    f(**base, g=g.log(), beta=x["beta"], gate_domain="log")
    if has(release, "gate_domain"):
        assert spy.raw_kwargs[-1]["gate_domain"] == "log"
        return
    assert "gate_domain" not in spy.raw_kwargs[-1]
    assert spy.last["g"].dtype == torch.float32 and torch.allclose(spy.last["g"], g, atol=1e-6)
    raw = torch.randn(T, H)
    a_log, dt_bias = torch.randn(H), torch.randn(H)
    logits = torch.randn(T, H).to(torch.bfloat16)
    f(
        **base,
        g=raw,
        beta=logits,
        use_gate_in_kernel=True,
        A_log=a_log,
        dt_bias=dt_bias,
        beta_is_logit=True,
    )
    want_g = torch.exp(-torch.exp(a_log) * torch.nn.functional.softplus(raw + dt_bias))
    want_b = torch.sigmoid(logits.float()).to(torch.bfloat16).float()
    assert torch.equal(spy.last["g"], want_g) and torch.equal(spy.last["beta"], want_b)
    with pytest.raises(errors.MissingArgumentError):
        f(**base, g=raw, use_gate_in_kernel=True)
    with pytest.raises(errors.InvalidArgumentError):
        f(**base, g=raw, A_log=a_log)


def _pool_call(f: Any, x: dict[str, Any], pool: torch.Tensor, idx: torch.Tensor) -> Any:
    return f(
        x["q"],
        x["k"],
        x["v"],
        x["g"],
        x["beta"],
        None,
        pool,
        True,
        x["cu_seqlens"],
        output_state=pool,
        state_indices=idx,
    )


def case_state_indices(release: str, make: Make) -> None:
    x = inputs()
    idx = torch.tensor([4, 1], dtype=torch.int32)
    # CPU tensors: no release serves pools natively there -> gather / packed call / scatter
    f, spy = make()
    pool = torch.randn(6, H, D, D)
    before = pool.clone()
    out, st = _pool_call(f, x, pool, idx)
    assert st is pool and out.shape == (T, H, D)
    if has(release, "state_indices"):  # emulated on CPU, where no release reads pools
        assert spy.last["state_indices"] is None
    else:
        assert "state_indices" not in spy.last
    assert "state_indices" not in spy.raw_kwargs[-1] or spy.raw_kwargs[-1]["state_indices"] is None
    assert torch.equal(spy.last["initial_state"], before[idx.long()])  # gathered rows
    assert torch.equal(pool[idx.long()], before[idx.long()] + 1)  # final states scattered back
    untouched = [i for i in range(6) if i not in (1, 4)]
    assert torch.equal(pool[untouched], before[untouched])
    with pytest.raises(errors.MissingArgumentError):
        f(
            x["q"],
            x["k"],
            x["v"],
            initial_state=pool,
            output_final_state=True,
            cu_seqlens=x["cu_seqlens"],
            state_indices=idx,
        )
    # on an architecture whose kernel reads pools natively, the indices go to FlashInfer
    native_on = {"0.6.16": (10, 0), "0.7.0": (9, 0)}
    for since, cc in native_on.items():
        if not at_least(place(release), since):
            continue
        f, spy = make()
        with assume_capability(cc):
            _pool_call(f, x, torch.randn(6, H, D, D), idx)
        sent = spy.raw_kwargs[-1]
        assert sent["state_indices"] is idx  # int32 is native: no copy
        if at_least(place(release), "0.6.16") and not at_least(place(release), "0.6.18"):
            assert sent["use_cp"] is False  # 0.6.16-0.6.17: CP kernel rejects pools
        else:
            assert sent["use_cp"] == "auto"


STATE_DTYPES = (torch.bfloat16, torch.float16, torch.float8_e4m3fn, torch.float8_e5m2)


def _native_states(release: str, cc: tuple[int, int] | None) -> tuple[torch.dtype, ...]:
    """The state dtypes the release's kernel for ``cc`` reads (None: CPU, no kernel)."""
    if at_least(place(release), "0.7.0"):
        return STATE_DTYPES
    if cc is not None and cc[0] == 10 and at_least(place(release), "0.6.14"):
        return STATE_DTYPES
    if cc is not None and cc[0] == 10 and at_least(place(release), "0.6.8"):
        return (torch.bfloat16,)
    return ()


def case_state_dtypes(release: str, make: Make) -> None:
    """bf16/fp16/fp8 states: passed as they are where the release's kernel for the GPU
    reads them, else widened to float32 and the final state rounded once into the
    caller's ``output_state`` (fp8 saturating), the same values on every release."""
    x = inputs()
    base = dict(q=x["q"], k=x["k"], v=x["v"], g=x["g"], beta=x["beta"])
    base["cu_seqlens"] = x["cu_seqlens"]
    for cc in (None, (9, 0), (10, 0)):
        native = _native_states(release, cc)
        for dt in STATE_DTYPES:
            f, spy = make()
            h0 = x["initial_state"].to(dt)
            out_state = torch.empty(h0.shape, dtype=dt)
            with assume_capability(cc) if cc else _nothing():
                _, st = f(**base, initial_state=h0, output_final_state=True, output_state=out_state)
            sent = spy.raw_kwargs[-1]
            assert st is out_state, (cc, dt)
            if dt in native:
                assert sent["initial_state"] is h0 and sent["output_state"] is out_state
                continue
            assert sent["initial_state"].dtype == torch.float32, (cc, dt)
            assert torch.equal(sent["initial_state"], h0.float())
            assert sent["output_state"].dtype == torch.float32
            want = h0.float() + 1  # the spy's final state
            assert torch.equal(out_state.float(), want.to(dt).float()), (cc, dt)
            # no output_state: the final state is float32, as every release allocates it
            f, spy = make()
            with assume_capability(cc) if cc else _nothing():
                _, st = f(**base, initial_state=h0, output_final_state=True)
            assert st.dtype == torch.float32 and torch.equal(st, want)
    if not _native_states(release, None):  # emulated on CPU: fp8 saturates as on GPUs
        f, spy = make()
        big = torch.full((2, H, D, D), 1000.0)
        out_state = torch.empty(big.shape, dtype=torch.float8_e4m3fn)
        f(**base, initial_state=big, output_final_state=True, output_state=out_state)
        assert torch.equal(out_state.float(), torch.full(big.shape, 448.0))
    f, spy = make()
    for bad in (torch.float64, torch.int32):
        with pytest.raises(errors.InvalidArgumentError, match="initial_state must be float32"):
            f(**base, initial_state=x["initial_state"].to(bad))
    assert spy.calls == []


FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)


def _fp8_pool(dt: torch.dtype, rows: int = 6, seed: int = 0) -> torch.Tensor:
    """A pool in ``dt``: small random values, row 4 at +-finfo.max (the spy's gain
    then pushes its final state far beyond the float8 range)."""
    gen = torch.Generator().manual_seed(seed)
    pool = (torch.randn(rows, H, D, D, generator=gen) * 0.5).to(dt)
    pool[4] = (torch.randn(H, D, D, generator=gen).sign() * torch.finfo(dt).max).to(dt)
    return pool


def _saturated(x: torch.Tensor, dt: torch.dtype) -> torch.Tensor:
    """``x`` as flashinfer 0.7.x's native pool stores float8 (cvt.rn.satfinite)."""
    top = torch.finfo(dt).max
    return x.clamp(-top, top).to(dt)


def _bytes(x: torch.Tensor) -> torch.Tensor:
    return x.view(torch.uint8)


def case_state_pool_dtypes(release: str, make: Make) -> None:
    """float8 pools (``initial_state = output_state = pool``, ``state_indices``) where
    pools are emulated: the rows read as float32 exactly, the final states rounded once
    into the pool and saturating at +-finfo.max (as 0.7.x's native pool kernels store
    float8; torch's e5m2 cast gives inf), without ``index_copy_`` (torch has no float8
    kernel for it); untouched rows keep their bytes.  Also with a zero-length sequence on
    SM90 (its row written from the initial state), and read-only pool calls
    (``output_final_state=False``), which leave every pool row as it was."""
    x = inputs()
    base = dict(q=x["q"], k=x["k"], v=x["v"], g=x["g"], beta=x["beta"])
    idx = torch.tensor([4, 1], dtype=torch.int32)
    rows, rest = idx.long(), [0, 2, 3, 5]
    gain = 1000.0
    for dt, cc in itertools.product(FP8, (None, (9, 0))):
        native = cc is not None and at_least(place(release), "0.7.0")
        pool = _fp8_pool(dt)
        before = pool.clone()
        f, spy = make()
        spy.gain = gain
        with assume_capability(cc) if cc else _nothing():
            out, st = f(
                **base,
                initial_state=pool,
                output_final_state=True,
                cu_seqlens=x["cu_seqlens"],
                output_state=pool,
                state_indices=idx,
            )
        assert st is pool and out.shape == (T, H, D), (dt, cc)
        if native:  # 0.7.0+ on SM90: the pool and its dtype go to FlashInfer as they are
            sent = spy.raw_kwargs[-1]
            assert sent["initial_state"] is pool and sent["output_state"] is pool
            assert sent["state_indices"] is idx
            continue
        sent = spy.last
        assert sent["output_state"] is None and sent.get("state_indices") is None
        assert sent["initial_state"].dtype == torch.float32
        assert torch.equal(sent["initial_state"], before[rows].float()), (dt, cc)  # exact
        final = before[rows].float() * gain + 1  # the spy's float32 final states
        assert torch.equal(_bytes(pool[rows]), _bytes(_saturated(final, dt))), (dt, cc)
        assert torch.isfinite(pool.float()).all(), (dt, cc)
        assert (pool[4].float().abs() == torch.finfo(dt).max).all()  # saturated
        assert torch.equal(_bytes(pool[rest]), _bytes(before[rest])), (dt, cc)
        if dt is torch.float8_e5m2:  # the control: torch's own cast overflows to inf
            assert torch.isinf(final.to(dt).float()).any()
    # a zero-length sequence on SM90 with host lengths (separate read / write pools):
    # its final state is its initial state, bit for bit, native pool or emulated
    cu_host = [0, 5, 5, 12]
    idx3 = torch.tensor([4, 1, 0], dtype=torch.int32)
    for dt in FP8:
        pool_in, pool_out = _fp8_pool(dt), torch.zeros(6, H, D, D).to(dt)
        f, spy = make()
        spy.gain = gain
        with assume_capability((9, 0)):
            _, st = f(
                **base,
                initial_state=pool_in,
                output_final_state=True,
                cu_seqlens=torch.tensor(cu_host, dtype=torch.int32),
                output_state=pool_out,
                state_indices=idx3,
                cu_seqlens_cpu=cu_host,
            )
        assert st is pool_out
        assert torch.equal(_bytes(pool_out[1]), _bytes(pool_in[1])), dt
        if not at_least(place(release), "0.7.0"):  # emulated: rows 4 and 0 ran
            want = _saturated(pool_in[[4, 0]].float() * gain + 1, dt)
            assert torch.equal(_bytes(pool_out[[4, 0]]), _bytes(want)), dt
            assert not pool_out[[2, 3, 5]].float().any()
    # read-only pool call: no final state asked for, no pool row written
    for dt in (torch.float32, *FP8):
        pool = _fp8_pool(dt) if dt in FP8 else torch.randn(6, H, D, D)
        before = pool.clone()
        f, spy = make()
        out = f(
            **base,
            initial_state=pool,
            output_final_state=False,
            cu_seqlens=x["cu_seqlens"],
            output_state=pool,
            state_indices=idx,
        )
        assert out.shape == (T, H, D) and spy.last["output_state"] is None, dt
        assert torch.equal(_bytes(pool), _bytes(before)), dt


def _nothing() -> Any:
    import contextlib

    return contextlib.nullcontext()


def case_empty_sequences(release: str, make: Make) -> None:
    """Zero-length sequences on SM90 with host-side lengths: one result on every
    release (the empty sequence's final state is its initial state).  Before 0.6.14
    they are left out of the launch (the C++ kernel never returns for them); from
    0.6.14 the launch is unchanged and the unwritten row is filled in."""
    x = inputs()
    cu_host = [0, 5, 5, 12]
    cu = torch.tensor(cu_host, dtype=torch.int32)
    h0 = torch.randn(3, H, D, D)
    base = dict(q=x["q"], k=x["k"], v=x["v"], g=x["g"], beta=x["beta"])
    hangs = not at_least(place(release), "0.6.14")
    for with_h0 in (True, False):
        f, spy = make()
        init = h0 if with_h0 else None
        with assume_capability((9, 0)):
            out, st = f(
                **base,
                initial_state=init,
                output_final_state=True,
                cu_seqlens=cu,
                cu_seqlens_cpu=cu_host,
            )
        sent = spy.last
        if hangs:
            assert sent["cu_seqlens"].tolist() == [0, 5, 12]
            if with_h0:
                assert torch.equal(sent["initial_state"], h0[[0, 2]])
        else:
            assert sent["cu_seqlens"].tolist() == cu_host
        assert out.shape == (T, H, D) and st.shape == (3, H, D, D) and st.dtype == torch.float32
        ran = (h0 if with_h0 else torch.zeros(3, H, D, D)) + 1  # the spy's final states
        assert torch.equal(st[[0, 2]], ran[[0, 2]])
        assert torch.equal(st[1], h0[1] if with_h0 else torch.zeros(H, D, D))
    # without host-side lengths (and debug mode off) nothing is read: the call is unchanged
    f, spy = make()
    with assume_capability((9, 0)):
        f(**base, initial_state=h0, output_final_state=True, cu_seqlens=cu)
    assert spy.last["cu_seqlens"].tolist() == cu_host
    # separate read and write pools: the empty sequence's write row gets its read row
    f, spy = make()
    pool_in, pool_out = torch.randn(6, H, D, D), torch.zeros(6, H, D, D)
    idx = torch.tensor([4, 1, 0], dtype=torch.int32)
    with assume_capability((9, 0)):
        f(
            **base,
            initial_state=pool_in,
            output_final_state=True,
            cu_seqlens=cu,
            output_state=pool_out,
            state_indices=idx,
            cu_seqlens_cpu=cu_host,
        )
    assert torch.equal(pool_out[1], pool_in[1])
    if hangs or not at_least(place(release), "0.7.0"):  # pools emulated: rows 4, 0 ran
        assert torch.equal(pool_out[[4, 0]], pool_in[[4, 0]] + 1)
    # every sequence empty: no launch anywhere, the initial states come back
    f, spy = make()
    empty = {n: t[:0] for n, t in base.items()}
    with assume_capability((9, 0)):
        out, st = f(
            **empty,
            initial_state=h0[:2],
            output_final_state=True,
            cu_seqlens=torch.zeros(3, dtype=torch.int32),
            cu_seqlens_cpu=[0, 0, 0],
        )
    assert spy.calls == [] and out.shape == (0, H, D) and torch.equal(st, h0[:2])
    f, spy = make()
    pool_in, pool_out = torch.randn(6, H, D, D), torch.zeros(6, H, D, D)
    with assume_capability((9, 0)):
        out, st = f(
            **empty,
            initial_state=pool_in,
            output_final_state=True,
            cu_seqlens=torch.zeros(3, dtype=torch.int32),
            output_state=pool_out,
            state_indices=torch.tensor([4, 1], dtype=torch.int32),
            cu_seqlens_cpu=[0, 0, 0],
        )
    assert spy.calls == [] and st is pool_out
    assert torch.equal(pool_out[[4, 1]], pool_in[[4, 1]])
    assert not pool_out[[0, 2, 3, 5]].any()
    # a host copy that is not the same offsets is refused
    f, spy = make()
    msg = "cu_seqlens_cpu has 2 offsets"
    with pytest.raises(errors.InvalidArgumentError, match=msg), assume_capability((9, 0)):
        f(**base, cu_seqlens=cu, cu_seqlens_cpu=[0, 12])
    assert spy.calls == []


def case_validation_before_launch(release: str, make: Make) -> None:
    f, spy = make()
    x = inputs()
    q, k, v, cu = x["q"], x["k"], x["v"], x["cu_seqlens"]
    bad: list[tuple[type[Exception], dict[str, Any], str]] = [
        (errors.MissingArgumentError, dict(q=q, k=k, v=v), "cu_seqlens is required"),
        (errors.InvalidArgumentError, dict(q=q, k=k, v=v, cu_seqlens=cu[None]), "1-D"),
        (errors.InvalidArgumentError, dict(q=q, k=k, v=v, cu_seqlens=cu.float()), "integer"),
        (errors.InvalidArgumentError, dict(q=q[None], k=k, v=v, cu_seqlens=cu), "squeeze"),
        (errors.InvalidArgumentError, dict(q=q, k=k[:-1], v=v, cu_seqlens=cu), "tokens"),
        (errors.InvalidArgumentError, dict(q=q, k=k, v=v[..., :-1], cu_seqlens=cu), "head size"),
        (
            errors.InvalidArgumentError,
            dict(q=q, k=k, v=v, g=x["g"][:, :1], cu_seqlens=cu),
            "num_sab_heads",
        ),
        (
            errors.InvalidArgumentError,
            dict(q=q, k=k, v=v, beta=x["beta"].T, cu_seqlens=cu),
            "beta must have shape",
        ),
    ]
    bad.append(
        (
            errors.InvalidArgumentError,
            dict(q=q, k=k, v=v, cu_seqlens=cu, initial_state=[0.0]),
            "initial_state must be",
        )
    )
    for exc, kw, msg in bad:
        with pytest.raises(exc, match=msg):
            f(**kw)
    assert spy.calls == []
    assert issubclass(errors.InvalidArgumentError, ValueError)


CASES = [
    case_positional_and_keyword_agree,
    case_cu_seqlens_native_dtype,
    case_return_shape,
    case_missing_parameters,
    case_value_needs_newer_release,
    case_present_parameters_pass_through,
    case_unknown_keywords_are_refused,
    case_qk_l2norm_means_the_same_everywhere,
    case_gate_conventions,
    case_state_indices,
    case_state_dtypes,
    case_state_pool_dtypes,
    case_empty_sequences,
    case_validation_before_launch,
]
