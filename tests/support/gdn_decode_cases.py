"""Call cases of ``fi_compat.gdn_decode``, shared by the static suite (every release,
spy bound to the snapshot signature) and the live contract (spy bound to
``inspect.signature`` of the installed function).  The spy returns ``(output, state)``
as the kernels do: the output ``[B, T, HV, V]`` in the dtype of the ``q`` it received
(into ``output`` when given), the state it was handed."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import errors, gdn_decode
from fi_compat._adapters.gdn_decode import SPECS
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.spy import BindSpy, snapshot_signature, stub

B, H, HV, K = 2, 2, 4, 128


def releases(name: str) -> list[str]:
    rel = snapshots.load(SPECS[name])["releases"]
    return [r for r, v in rel.items() if v is not None]


class DecodeSpy(BindSpy):
    def result(self, a: dict[str, Any]) -> Any:
        q, v = a["q"], a["v"]
        out = a["output"]
        if out is None:
            out = torch.full((*v.shape[:3], v.shape[3]), 0.5, dtype=q.dtype)
        state = a.get("state")
        return out, state if state is not None else a["initial_state"]


def facade(name: str, release: str, signature: Any = None) -> tuple[Any, DecodeSpy]:
    a = SPECS[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(gdn_decode, name))
    spy = DecodeSpy(signature or snapshot_signature(release, SPECS[name]))
    a._set_target(spy)
    return f, spy


def args(name: str, t: int = 1, dtype: torch.dtype = torch.bfloat16) -> dict[str, Any]:
    kw: dict[str, Any] = {
        "q": torch.randn(B, t, H, K).to(dtype),
        "k": torch.randn(B, t, H, K).to(dtype),
        "v": torch.randn(B, t, HV, K).to(dtype),
    }
    if name == "gated_delta_rule_mtp":
        kw["initial_state"] = torch.zeros(3, HV, K, K)
        kw["initial_state_indices"] = torch.tensor([2, 0], dtype=torch.int32)
    else:
        kw["state"] = torch.zeros(B, HV, K, K)
    kw |= {
        "A_log": torch.zeros(HV),
        "a": torch.randn(B, t, HV).to(dtype),
        "dt_bias": torch.zeros(HV),
        "b": torch.randn(B, t, HV).to(dtype),
    }
    return kw


def _fp16_broken(name: str, release: str) -> bool:
    lo, hi = {
        "gated_delta_rule_decode_pretranspose": ("0.6.3", "0.7.4"),
        "gated_delta_rule_mtp": ("0.6.3", "0.6.18"),
    }.get(name, ("9", "9"))
    p = place(release)
    return at_least(p, lo) and not at_least(p, hi)


def case_calls_bind_and_return_output_and_state(name: str, release: str, sig: Any = None) -> None:
    t = 2 if name == "gated_delta_rule_mtp" else 1
    for dtype in (torch.bfloat16, torch.float16):
        kw = args(name, t, dtype)
        f, spy = facade(name, release, sig)
        out, state = f(**kw)
        f(*kw.values())
        assert spy.raw_kwargs[0].keys() == spy.raw_kwargs[1].keys()
        sent = spy.last
        broken = dtype is torch.float16 and _fp16_broken(name, release)
        for n in ("q", "k", "v", "a", "b"):
            assert sent[n].dtype == (torch.bfloat16 if broken else dtype), (n, dtype)
            if not broken:
                assert sent[n] is kw[n]  # conforming: no copy
            assert torch.equal(sent[n].float(), kw[n].float().to(sent[n].dtype).float())
        assert out.dtype == dtype and out.shape == (B, t, HV, K)
        assert state is kw.get("state", kw.get("initial_state"))


def case_mtp_keeps_the_pool_by_default(name: str, release: str, sig: Any = None) -> None:
    """Left out, ``disable_state_update`` is sent as True on every release; None means
    True everywhere (0.6.2-0.6.6 get True, 0.6.7+ resolve None to True themselves)."""
    if name != "gated_delta_rule_mtp":
        return
    kw = args(name, 2)
    f, spy = facade(name, release, sig)
    f(**kw)
    assert spy.raw_kwargs[-1]["disable_state_update"] is True
    f(**kw, disable_state_update=None)
    native_none = at_least(place(release), "0.6.7")
    assert spy.raw_kwargs[-1]["disable_state_update"] is (None if native_none else True)
    f(**kw, disable_state_update=False)
    assert spy.raw_kwargs[-1]["disable_state_update"] is False


def case_state_forms_by_release(name: str, release: str, sig: Any = None) -> None:
    if name != "gated_delta_rule_decode_pretranspose":
        return
    pl = place(release)
    f, spy = facade(name, release, sig)
    kw = args(name, 1)
    bf = {**kw, "state": kw["state"].bfloat16()}
    if at_least(pl, "0.6.4"):
        f(**bf)
        assert spy.last["state"].dtype == torch.bfloat16
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=r">=0\.6\.4"):
            f(**bf)
    kw5 = args(name, 5)
    bf5 = {**kw5, "state": kw5["state"].bfloat16()}
    if at_least(pl, "0.6.8"):
        f(**bf5)
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=r">=0\.6\.(4|8)"):
            f(**bf5)
    with pytest.raises(errors.InvalidArgumentError, match="takes the pool form"):
        f(**args(name, 2))
    pool = {**args(name, 2), "state": None}
    pool["initial_state"] = torch.zeros(3, HV, K, K)
    pool["initial_state_indices"] = torch.tensor([1, 2], dtype=torch.int32)
    if at_least(pl, "0.6.14"):
        f(**pool)
        assert spy.last["state"] is None and spy.last["initial_state"] is pool["initial_state"]
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=r">=0\.6\.(14|6)"):
            f(**pool)
    with pytest.raises(errors.InvalidArgumentError, match="go together"):
        f(**{**kw, "initial_state": pool["initial_state"]})
    with pytest.raises(errors.InvalidArgumentError, match="pass state"):
        f(**{**kw, "state": None})


def case_pool_index_dtype(name: str, release: str, sig: Any = None) -> None:
    """int64 ``initial_state_indices`` of a bfloat16 pool reach the kernel as int32 (its
    kernels compile for int32 only); a float32 pool's as they are; int32 without a copy."""
    if name != "gated_delta_rule_decode_pretranspose" or not at_least(place(release), "0.6.6"):
        return
    f, spy = facade(name, release, sig)
    for sdt in (torch.bfloat16, torch.float32):
        for idt in (torch.int32, torch.int64):
            kw = {**args(name, 1), "state": None}
            kw["initial_state"] = torch.zeros(3, HV, K, K, dtype=sdt)
            kw["initial_state_indices"] = torch.tensor([2, 0], dtype=idt)
            f(**kw)
            got = spy.last["initial_state_indices"]
            if idt is torch.int32 or sdt is torch.float32:
                assert got is kw["initial_state_indices"], (sdt, idt)
            else:
                assert got.dtype == torch.int32 and got.tolist() == [2, 0]


def case_backend_by_release(name: str, release: str, sig: Any = None) -> None:
    if "backend" not in SPECS[name].params:
        return
    pl = place(release)
    kw = args(name)
    f, spy = facade(name, release, sig)
    f(**kw, backend="flashinfer")
    assert ("backend" in spy.raw_kwargs[-1]) == at_least(pl, "0.7.0")
    if at_least(pl, "0.7.0"):
        f(**kw, backend="cake_gdn")
        assert spy.raw_kwargs[-1]["backend"] == "cake_gdn"
    else:
        with pytest.raises(errors.UnsupportedParameterError, match=r">=0\.7\.0"):
            f(**kw, backend="cake_gdn")


def case_bad_input_is_refused(name: str, release: str, sig: Any = None) -> None:
    t = 2 if name == "gated_delta_rule_mtp" else 1
    kw = args(name, t)
    f, spy = facade(name, release, sig)
    bad: list[tuple[dict[str, Any], str]] = [
        ({"A_log": kw["A_log"].bfloat16()}, "A_log must be float32"),
        ({"q": kw["q"].float()}, "float16 or bfloat16"),
        ({"v": kw["v"][:, :, :3]}, "multiple of q's"),
        ({"a": kw["a"][:, :, :2]}, "a must be"),
        ({"k": kw["k"].half()}, "share one dtype"),
    ]
    if name == "gated_delta_rule_decode":
        bad.append((args(name, 2), "one token per request"))
    state = "initial_state" if name == "gated_delta_rule_mtp" else "state"
    bad.append(({state: kw[state][:, :, :64]}, f"{state} must be"))
    for change, msg in bad:
        with pytest.raises(errors.InvalidArgumentError, match=msg):
            f(**{**kw, **change})
    assert spy.calls == []


CASES = [
    case_calls_bind_and_return_output_and_state,
    case_mtp_keeps_the_pool_by_default,
    case_state_forms_by_release,
    case_pool_index_dtype,
    case_backend_by_release,
    case_bad_input_is_refused,
]
