"""``fi_compat.mla.BatchMLAPagedAttentionWrapper`` on every release 0.2.2-0.7.4, against
each release's real signature (snapshots), with the policies its table names."""

from __future__ import annotations

import pytest
import torch

from fi_compat import errors
from fi_compat._adapters import mla as mla_tables
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES, at_least, place
from support.attention_cases import MLA, Receiver, args, facade, releases, same

LN2 = 0.693147180559945309417  # math::loge2 in the 0.5.3+ kernels
RUN, PLAN, INIT = f"{MLA}.run", f"{MLA}.plan", f"{MLA}.__init__"


@pytest.mark.parametrize("release", releases(RUN))
def test_lse_base_e_is_the_same_float32_value_on_every_release(release: str) -> None:
    """Before 0.5.3 the base-2 LSE times loge2 in float32, as the 0.5.3+ kernels do after
    storing it: the same bits (the spy's base-2 LSE is 0, 1, 2, ...)."""
    f, spy = facade(RUN, release)
    _out, lse = f(Receiver(), **args(RUN), return_lse_base_on_e=True)
    want = torch.arange(32, dtype=torch.float32).reshape(2, 16) * torch.tensor(LN2)
    assert torch.equal(lse, want)
    native = at_least(place(release), "0.5.3")
    assert ("return_lse_base_on_e" in spy.raw_kwargs[-1]) == native
    buf = torch.empty(2, 16)  # the caller's lse buffer, without return_lse
    kw = {**args(RUN), "return_lse": False}
    f(Receiver(), **kw, lse=buf, return_lse_base_on_e=True)
    assert torch.equal(buf, want)
    _out, lse = f(Receiver(), **args(RUN))  # base 2 when not asked
    assert torch.equal(lse, torch.arange(32, dtype=torch.float32).reshape(2, 16))


@pytest.mark.parametrize("release", releases(PLAN))
def test_plan_without_flat_arguments_needs_0_7_0(release: str) -> None:
    f, spy = facade(PLAN, release)
    kw = {k: v for k, v in args(PLAN).items() if k != "kv_len_arr"}
    if at_least(place(release), "0.7.0"):
        f(Receiver(), **kw)
        assert spy.raw_kwargs[-1].get("kv_len_arr") is None  # 0.7.0: optional
        return
    with pytest.raises(errors.UnsupportedParameterError, match=r"kv_len_arr.*0\.7\.0"):
        f(Receiver(), **kw)
    assert spy.calls == []


@pytest.mark.parametrize("release", releases(RUN))
def test_run_with_packed_inputs_needs_0_7_0(release: str) -> None:
    f, spy = facade(RUN, release)
    a = args(RUN)
    q = torch.cat([a["q_nope"], a["q_pe"]], -1)
    kv = torch.cat([a["ckv_cache"], a["kpe_cache"]], -1)
    if at_least(place(release), "0.7.0"):
        f(Receiver(), query=q, kv_cache=kv)
        assert same(spy.last["query"], q) and spy.raw_kwargs[-1].get("q_nope") is None
        return
    with pytest.raises(errors.UnsupportedParameterError, match=r"0\.7\.0"):
        f(Receiver(), query=q, kv_cache=kv)
    with pytest.raises(errors.UnsupportedParameterError, match=r"kpe_cache.*0\.7\.0"):
        f(Receiver(), **{k: v for k, v in a.items() if k != "kpe_cache"})
    assert spy.calls == []


@pytest.mark.parametrize(("backend", "first"), [("cutlass", "0.2.6"), ("trtllm-gen", "0.7.1")])
def test_backend_values_by_release(backend: str, first: str) -> None:
    for release in releases(INIT):
        f, spy = facade(INIT, release)
        if at_least(place(release), first):
            f(Receiver(), **args(INIT), backend=backend)
            assert spy.last["backend"] == backend
            continue
        with pytest.raises(errors.UnsupportedParameterError, match=first.replace(".", r"\.")):
            f(Receiver(), **args(INIT), backend=backend)
        assert spy.calls == []


def test_0_2_1_is_below_the_floor() -> None:
    assert KNOWN_RELEASES.index("0.2.1") < KNOWN_RELEASES.index(mla_tables.FLOOR)
    e = mla_tables.METHODS["run"]
    a = e.select(Distribution("flashinfer-python", "0.2.1", "<t>", ""))
    f = a.build(__import__("fi_compat.mla", fromlist=["_run"])._run)
    with pytest.raises(errors.UnsupportedFlashInferVersionError, match=r"0\.2\.2"):
        f(Receiver(), **args(RUN))


def test_bad_input_is_refused_before_the_call() -> None:
    f, spy = facade(RUN, "0.7.4")
    a = args(RUN)
    with pytest.raises(errors.InvalidArgumentError, match="q_nope must be 3-D"):
        f(Receiver(), **{**a, "q_nope": a["q_nope"][0]})
    with pytest.raises(errors.InvalidArgumentError, match="pass q_nope"):
        f(Receiver())
    assert spy.calls == []
