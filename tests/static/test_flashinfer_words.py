"""FlashInfer's own words on fi_compat's refusals: where the installed release refuses
the same input with a message of its own, fi_compat's typed error ends with it, so code
and tests written against FlashInfer's text keep matching.

The sampling tests are FlashInfer's own (``tests/utils/test_sampling.py``:
``test_tensor_validation_min_p``, ``test_check_tensor_param_top_p``,
``test_check_tensor_param_top_k``), their ``pytest.raises(ValueError, match=...)``
patterns unchanged, run through fi_compat (a spy bound to each release's snapshot
signature stands in for FlashInfer) on every release fi_compat serves: the wording is
0.4.0-0.5.3's Python ``_check_tensor_param`` (FI#1652) and 0.6.0+'s C++
``check_tensor_param`` (FI#2160); older releases read the tensor unchecked, and
fi_compat's error there has no FlashInfer words.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fi_compat import errors, sampling
from fi_compat._adapters.sampling import SPECS
from fi_compat._core import EntryPoint, Param
from fi_compat._core.contract import Said, Tensor
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.sampling_cases import releases
from support.spy import BindSpy, snapshot_signature, stub

WORDED = "0.4.0"  # the first release with FlashInfer's own check


class Spy(BindSpy):
    def result(self, a: dict[str, Any]) -> Any:
        x = a.get("probs", a.get("logits"))
        return torch.zeros(x.shape[0], dtype=torch.int32) if "sampling_from" in self.name else x

    name = ""


def _facade(name: str, release: str) -> tuple[Any, Spy]:
    a = SPECS[name].select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub(sampling, name))
    spy = Spy(snapshot_signature(release, SPECS[name]))
    spy.name = name
    a._set_target(spy)
    return f, spy


def _refused(release: str, pattern: str, call: Any) -> None:
    """``pytest.raises(ValueError, match=pattern)`` where the release has the wording;
    fi_compat's typed error (without FlashInfer's words) before."""
    if at_least(place(release), WORDED):
        with pytest.raises(ValueError, match=pattern) as info:
            call()
        assert isinstance(info.value, errors.InvalidArgumentError)
        assert info.value.flashinfer_message is not None
    else:
        with pytest.raises(errors.InvalidArgumentError) as info:
            call()
        assert info.value.flashinfer_message is None
        assert "says:" not in str(info.value)


CASES = [(n, r, b) for n in ("min_p_sampling_from_probs",) for r in releases(n) for b in (1, 99)]


@pytest.mark.parametrize(("name", "release", "batch_size"), CASES)
def test_tensor_validation_min_p(name: str, release: str, batch_size: int) -> None:
    vocab_size, p = 111, 0.1
    f, spy = _facade(name, release)
    pre_norm_prob = torch.rand(batch_size, vocab_size)
    normalized_prob = pre_norm_prob / pre_norm_prob.sum(dim=-1, keepdim=True)
    # 1: float p works and returns samples of shape (batch_size,)
    assert f(normalized_prob, p).shape == (batch_size,)
    # 2: a 2D tensor raises
    _refused(
        release,
        r"Expected a 1D tensor or scalar.*got a 2D tensor",
        lambda: f(normalized_prob, torch.tensor([[p] * vocab_size] * batch_size)),
    )
    # 3: a 0D tensor raises
    _refused(
        release,
        r"Expected a 1D tensor of shape \(batch_size,\) or scalar.*got a 0-dimensional tensor",
        lambda: f(normalized_prob, torch.tensor(p, dtype=torch.float32)),
    )
    # 4: a 1D tensor of another batch size raises (batch_size > 1)
    if batch_size > 1:
        _refused(
            release,
            "Sampling parameter tensor batch size mismatch",
            lambda: f(normalized_prob, torch.tensor([p], dtype=torch.float32)),
        )
    # 5: a 1D tensor of the batch size works
    n = len(spy.calls)
    f(normalized_prob, torch.tensor([p] * batch_size, dtype=torch.float32))
    assert len(spy.calls) == n + 1


RENORM = [
    ("top_p_renorm_probs", "top_p", 0.5),
    ("top_k_renorm_probs", "top_k", 10),
]
RENORM_CASES = [(n, a, v, r, b) for n, a, v in RENORM for r in releases(n) for b in (1, 99)]


@pytest.mark.parametrize(("name", "arg", "value", "release", "batch_size"), RENORM_CASES)
def test_check_tensor_param_top_p_and_top_k(
    name: str, arg: str, value: float, release: str, batch_size: int
) -> None:
    """FlashInfer's test_check_tensor_param_top_p / _top_k (int tensors in both, as
    FlashInfer's tests pass them)."""
    vocab_size = 111
    f, spy = _facade(name, release)
    pre_norm_prob = torch.rand(batch_size, vocab_size)
    normalized_prob = pre_norm_prob / pre_norm_prob.sum(dim=-1, keepdim=True)
    assert f(normalized_prob, value).shape == normalized_prob.shape
    _refused(
        release,
        r"Expected a 1D tensor or scalar.*got a 2D tensor",
        lambda: f(normalized_prob, torch.tensor([[value] * vocab_size] * batch_size).int()),
    )
    _refused(
        release,
        r"Expected a 1D tensor of shape \(batch_size,\) or scalar.*got a 0-dimensional tensor",
        lambda: f(normalized_prob, torch.tensor(value).int()),
    )
    if batch_size > 1:
        _refused(
            release,
            "Sampling parameter.*batch size mismatch",
            lambda: f(normalized_prob, torch.tensor([value]).int()),
        )
    n = len(spy.calls)
    f(normalized_prob, torch.tensor([value] * batch_size).int())
    assert len(spy.calls) == n + 1
    assert arg in spy.last


SAMPLERS = [n for n in SPECS if "sampling_from" in n and SPECS[n].said]


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("release", ["0.3.1", "0.5.3", "0.6.0", "0.7.4"])
def test_every_threshold_of_every_sampler(name: str, release: str) -> None:
    """The same wording for each per-row threshold of each sampler (top_k, top_p, min_p)
    and each release form: with the shape on 0.4.0-0.5.3 (Python), without from 0.6.0."""
    f, _spy = _facade(name, release)
    first = "logits" if "logits" in name else "probs"
    x = torch.rand(4, 16)
    kw: dict[str, Any] = {first: x}
    thresholds = {"top_k": 3, "top_p": 0.9, "min_p": 0.1}
    kw.update({t: v for t, v in thresholds.items() if t in SPECS[name].params})
    for t in [t for t in thresholds if t in kw]:
        bad = torch.ones(4, 16)
        with pytest.raises(errors.InvalidArgumentError) as info:
            f(**{**kw, t: bad})
        msg = info.value.flashinfer_message
        assert info.value.check == f"{t}.rank"
        if not at_least(place(release), WORDED):
            assert msg is None
        elif at_least(place(release), "0.6.0"):
            assert msg == (
                "Expected a 1D tensor or scalar for the sampling parameter, but got a 2D tensor."
            )
        else:
            assert msg == (
                "Expected a 1D tensor or scalar for the sampling parameter, but got a 2D "
                "tensor with shape torch.Size([4, 16])."
            )
        assert str(info.value).endswith(f"(flashinfer-python {release} says: {msg})") or not msg


def test_the_mechanism_on_a_declared_contract() -> None:
    """A contract check's id (``"<param>.<what>"``) takes a release-ranged ``Said``: the
    words are added on the releases in its range only, once, on both paths."""
    entry = EntryPoint(
        facade="fi_compat.example",
        name="reorder_rows_for_gated_act_gemm",
        module="flashinfer",
        params=[Param("x")],
        contracts={"x": Tensor("rows cols")},
        said=[Said("x.rank", "x must be 2D, got {ndim}D", since="0.6.0", ref="(example)")],
    )

    def reorder_rows_for_gated_act_gemm(x: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    entry.bind_stub(reorder_rows_for_gated_act_gemm)  # type: ignore[arg-type]
    for release, words in (("0.5.3", None), ("0.6.7", "x must be 2D, got 1D")):
        a = entry.select(Distribution("flashinfer-python", release, "<t>", ""))
        fn = a.build(reorder_rows_for_gated_act_gemm)
        a._publish(lambda *_a, **kw: "called")
        for call in (fn, a.plan):  # the generated path, the general path
            with pytest.raises(errors.InvalidArgumentError) as info:
                call(torch.zeros(8))
            assert info.value.check == "x.rank"
            assert info.value.flashinfer_message == words
            assert str(info.value).count("says:") == (1 if words else 0)


def test_said_rows_name_parameters_of_the_stub() -> None:
    entry = EntryPoint(
        facade="fi_compat.example",
        name="reorder_rows_for_gated_act_gemm",
        module="flashinfer",
        params=[Param("x")],
        said=[Said("y.rank", "no", since="0.6.0", ref="(example)")],
    )

    def reorder_rows_for_gated_act_gemm(x: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    with pytest.raises(ValueError, match=r"FlashInfer wording for \['y.rank'\]"):
        entry.bind_stub(reorder_rows_for_gated_act_gemm)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"'<param>\.<what>'"):
        Said("rank", "no", since="0.6.0", ref="(example)")
