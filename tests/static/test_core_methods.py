"""Core mechanics the wrapper classes build on: a stub with ``self`` (a method), a stub
with ``*args``, defaults detected by identity, tracebacks and ``explain``.

The entry point here reuses the real ``gdn_prefill.chunk_gated_delta_rule`` table and
snapshots with a receiver, as a method of a class would have them; the spy binds
against that release's real signature with ``self`` in front.
"""

from __future__ import annotations

import inspect
import traceback
from typing import Any

import pytest

import fi_compat
from fi_compat import errors
from fi_compat._adapters.gdn_prefill import SPEC
from fi_compat._adapters.gdn_prefill import SPEC as _GDN
from fi_compat._core import EntryPoint, Param
from fi_compat.detection import Distribution
from support.helpers import facade_for, inputs
from support.spy import Spy, snapshot_signature


def _method_entry() -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.gdn_prefill",
        name="chunk_gated_delta_rule",
        module=SPEC.module,
        attr=SPEC.attr,
        params=[_clone(p) for p in SPEC.params.values()],
        validate=SPEC.validate,
        validate_args=SPEC.validate_args,
        prepare=SPEC.prepare,
        devices=SPEC.devices,
        receiver="self",
    )


def _clone(p: Param) -> Param:
    return Param(
        p.name,
        neutral=p.neutral,
        value_since=p.value_since,
        hint=p.hint,
        dtypes=p.dtypes,
        note=p.note,
    )


def _method_stub() -> Any:
    """``chunk_gated_delta_rule``'s stub with ``self`` in front (same code object
    layout: the stub's defaults and annotations, one more leading parameter)."""
    sig = inspect.signature(_GDN.stub)
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    src_params = ["self"]
    defaults: dict[str, Any] = {}
    star = False
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            src_params.append("**kwargs")
            continue
        if p.kind is p.KEYWORD_ONLY and not star:
            src_params.append("*")
            star = True
        if p.default is p.empty:
            src_params.append(p.name)
        else:
            defaults["_d_" + p.name] = p.default
            src_params.append(f"{p.name}=_d_{p.name}")
        params.append(p)
    ns: dict[str, Any] = dict(defaults)
    exec(f"def chunk_gated_delta_rule({', '.join(src_params)}):\n    pass\n", ns)
    stub = ns["chunk_gated_delta_rule"]
    stub.__annotations__ = dict(_GDN.stub.__annotations__)
    return stub


class MethodSpy(Spy):
    """A spy for a method: binds ``(self, *args, **kwargs)`` against ``self`` + the signature."""

    def __init__(self, signature: inspect.Signature) -> None:
        super().__init__(signature)
        self.receivers: list[Any] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        assert args, "the receiver first"
        self.receivers.append(args[0])
        return super().__call__(*args[1:], **kwargs)


def test_a_method_stub_gets_the_receiver_and_keywords() -> None:
    entry, stub = _method_entry(), _method_stub()
    entry.bind_stub(stub)  # the parameter list is the stub's
    adapter = entry.select(Distribution("flashinfer-python", "0.7.4", "<test>", ""))
    method = adapter.build(stub)
    spy = MethodSpy(snapshot_signature("0.7.4"))
    adapter._publish(spy)

    class Wrapper:
        run = method

    w = Wrapper()
    kw = {k: v for k, v in inputs().items() if k != "initial_state"}
    w.run(kw["q"], kw["k"], kw["v"], kw["g"], kw["beta"], cu_seqlens=kw["cu_seqlens"])
    assert spy.receivers == [w]
    assert spy.last["q"] is kw["q"] and spy.last["cu_seqlens"] is kw["cu_seqlens"]
    w.run(**kw, state_indices=None, use_cp=False)  # the general path keeps the receiver too
    assert spy.receivers == [w, w]


def test_extra_positional_arguments_are_a_typed_error() -> None:
    spy = Spy(snapshot_signature("0.7.4"))
    fn, _ = facade_for("0.7.4", spy)
    kw = inputs()
    args = [kw["q"], kw["k"], kw["v"]] + [None] * 17 + ["extra"]
    with pytest.raises(errors.PositionalMismatchError, match="at most 20 positional"):
        fn(*args)
    assert spy.calls == []


class Hostile:
    """A user object whose comparison must never be called."""

    def __eq__(self, other: object) -> bool:
        raise AssertionError("__eq__ called")

    def __bool__(self) -> bool:
        raise AssertionError("__bool__ called")

    __hash__ = object.__hash__


@pytest.mark.parametrize("param", ["scale", "checkpoint_every_n_tokens", "use_cp", "backend"])
def test_defaults_are_detected_without_calling_user_eq(param: str) -> None:
    spy = Spy(snapshot_signature("0.7.4"))
    fn, _ = facade_for("0.7.4", spy)
    kw = {k: v for k, v in inputs().items() if k != "initial_state"}
    with pytest.raises(errors.InvalidArgumentError, match=param):
        fn(**kw, **{param: Hostile()})
    assert spy.calls == []


def test_a_traceback_through_a_facade_shows_its_line() -> None:
    fn, adapter = facade_for("0.7.4", Spy(snapshot_signature("0.7.4")))
    kw = {k: v for k, v in inputs().items() if k != "initial_state"}
    kw["q"] = kw["q"][None]  # 4-D: refused by the metadata checks
    try:
        fn(**kw)
    except errors.InvalidArgumentError as exc:
        text = "".join(traceback.format_exception(exc))
    else:  # pragma: no cover
        raise AssertionError("no error")
    assert "<fi_compat fi_compat.gdn_prefill.chunk_gated_delta_rule [0.7.4+]>" in text
    assert "_dev = _validate(q, k, v" in text  # the generated line itself
    assert "def chunk_gated_delta_rule(" in adapter.source


def test_explain_prints_the_choice_and_the_code() -> None:
    from fi_compat import gdn_prefill

    text = fi_compat.explain(gdn_prefill.chunk_gated_delta_rule)
    assert "# entry_point: fi_compat.gdn_prefill.chunk_gated_delta_rule" in text
    assert "def chunk_gated_delta_rule(" in text
    with pytest.raises(TypeError):
        fi_compat.explain(print)


def test_explain_a_wrapper_class_prints_each_method() -> None:
    from fi_compat import decode

    cls = decode.BatchDecodeWithPagedKVCacheWrapper  # a stand-in here (no FlashInfer)

    class Mine(cls):  # type: ignore[valid-type,misc]
        pass

    for c in (cls, Mine):
        text = fi_compat.explain(c)
        assert text.startswith("# class fi_compat.decode.BatchDecodeWithPagedKVCacheWrapper")
        assert "# begin_forward = plan (its older name)" in text
        for method in ("__init__", "plan", "run"):
            head = f"## BatchDecodeWithPagedKVCacheWrapper.{method}("
            assert head in text
            part = text.split(head, 1)[1]
            assert (
                f"# entry_point: fi_compat.decode.BatchDecodeWithPagedKVCacheWrapper.{method}\n"
                in part
            )
            assert f"def {method}(self, " in part  # the generated code, as for a function
        assert "plan(indptr: Tensor, indices: Tensor," in text  # the frozen signature, no self
    with pytest.raises(TypeError, match="not a fi_compat wrapper class"):
        fi_compat.explain(int)


def test_plan_shows_what_reaches_flashinfer() -> None:
    _, adapter = facade_for("0.6.7", Spy(snapshot_signature("0.6.7")))
    kw = {k: v for k, v in inputs().items() if k != "initial_state"}
    plan = adapter.plan(**kw, backend="flashinfer", max_seqlen=5)
    assert plan["function"] == "flashinfer.gdn_prefill.chunk_gated_delta_rule"
    assert "backend" not in plan["kwargs"] and "max_seqlen" not in plan["kwargs"]
    assert plan["kwargs"]["cu_seqlens"].dtype.is_signed  # cast to the native int64
    assert str(plan["kwargs"]["cu_seqlens"].dtype) == "torch.int64"
