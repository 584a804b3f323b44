"""``fi_compat.decode`` / ``fi_compat.prefill`` against the release of the cell: the wrapper
classes are real subclasses of FlashInfer's, every method's snapshot equals the installed
signature, and the static suite's calls bind against ``inspect.signature`` of the
installed method (``_plan_impl`` where the public ``plan`` is 0.6.15's ``**kwargs``
forwarder) with the innermost call replaced by a spy."""

from __future__ import annotations

import importlib
import inspect
import os
from typing import Any

import pytest

from conftest import run_python
from fi_compat import _snapshot_io as snapshots
from support.attention_cases import ENTRIES, Receiver, args, facade, releases, same
from support.spy import snapshot_signature

CELL = os.environ.get("FI_COMPAT_CELL")
EXPECT = os.environ.get("FI_COMPAT_CELL_EXPECT")
pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(CELL is None, reason="no FlashInfer release cell (run tools/matrix.py)"),
]
# `import flashinfer` crashes in these cells and leaves submodules in sys.modules that a
# second import would reach: only fresh interpreters say what a user sees there
CRASH = EXPECT == "import-crash"
in_process = pytest.mark.skipif(CRASH, reason="import flashinfer fails here (import-crash)")
CLASSES = {
    "BatchDecodeWithPagedKVCacheWrapper": "decode",
    "CUDAGraphBatchDecodeWithPagedKVCacheWrapper": "decode",
    "BatchPrefillWithPagedKVCacheWrapper": "prefill",
    "BatchPrefillWithRaggedKVCacheWrapper": "prefill",
    "MultiLevelCascadeAttentionWrapper": "cascade",
    "BatchMLAPagedAttentionWrapper": "mla",
}


def _module(fi: str) -> Any:
    try:
        return importlib.import_module(f"flashinfer.{fi}")
    except Exception as exc:  # the cell's documented import outcome
        assert EXPECT != "live", exc
        pytest.skip(f"flashinfer.{fi} does not import here: {type(exc).__name__}")


def _real(key: str) -> Any:
    """The installed method or function; for a ``**kwargs`` forwarder (0.6.15+ decode
    ``plan``) the method it forwards to, as the snapshot records (``via``)."""
    entry, _ = ENTRIES[key]
    obj = _module(entry.module.removeprefix("flashinfer."))
    owner = obj
    for part in entry.attr.split("."):
        owner, obj = obj, getattr(obj, part)
    via = (snapshots.load(entry)["releases"][CELL] or {}).get("via")
    return getattr(owner, via) if via else obj


@in_process
@pytest.mark.parametrize("key", list(ENTRIES))
def test_snapshot_equals_the_installed_signature(key: str) -> None:
    assert CELL is not None
    if CELL not in releases(key):
        pytest.skip(f"{key} is not in flashinfer-python {CELL}")
    live = inspect.signature(_real(key))
    snap = snapshots.params(ENTRIES[key][0], CELL)
    assert snap is not None
    assert [(n, k) for n, k, _d, _a in snap] == [
        (p.name, {0: "po", 1: "pk", 2: "va", 3: "ko", 4: "vk"}[int(p.kind)])
        for p in live.parameters.values()
    ]
    want = snapshot_signature(CELL, ENTRIES[key][0])
    for p in live.parameters.values():
        d = want.parameters[p.name].default
        if isinstance(p.default, (int, float, str, bool, type(None))):
            assert p.default == d or (p.default is None and d is inspect.Parameter.empty), p.name


@in_process
@pytest.mark.parametrize("key", list(ENTRIES))
def test_live_calls_bind_by_keyword(key: str) -> None:
    assert CELL is not None
    if CELL not in releases(key):
        pytest.skip(f"{key} is not in flashinfer-python {CELL}")
    entry, _ = ENTRIES[key]
    sig = inspect.signature(_real(key))
    f, spy = facade(key, CELL, sig)
    kw = args(key)
    recv = (Receiver(),) if entry.receiver else ()
    f(*recv, **kw)
    for n, v in kw.items():
        assert same(spy.last[f.adapter.spelling[n]], v), n


@pytest.mark.skipif(
    not CRASH or os.environ.get("FI_COMPAT_CELL_DOCTOR") != "1",
    reason="FlashInfer imports here (or another import-crash cell checks this)",
)
def test_a_wrapper_that_cannot_be_built_raises_the_typed_error_when_used() -> None:
    """The name imports (engines import it unconditionally); using it raises.  One fresh
    interpreter (~20 s on 2 cores), in one import-crash cell."""
    name = "BatchDecodeWithPagedKVCacheWrapper"
    code = (
        f"from fi_compat.{CLASSES[name]} import {name} as W\n"
        "from fi_compat import errors\n"
        "try:\n    W(None)\nexcept errors.FlashInferImportError as e:\n"
        "    print('typed:', type(e).__name__)\n"
    )
    r = run_python(code, path=os.environ.get("PYTHONPATH", "").split(os.pathsep), timeout=300)
    assert r.returncode == 0 and "typed: " in r.stdout, (r.stdout, r.stderr[-2000:])


@in_process
@pytest.mark.parametrize("name", list(CLASSES))
def test_the_wrapper_is_a_subclass_of_flashinfers(name: str) -> None:
    fi = CLASSES[name]
    facade_mod = importlib.import_module(f"fi_compat.{fi}")
    cls = getattr(facade_mod, name)
    base = getattr(_module(fi), name)
    assert issubclass(cls, base) and cls.__module__ == f"fi_compat.{fi}"
    assert cls.plan is not base.plan and cls.run is not base.run
    w = object.__new__(cls)
    assert isinstance(w, base)
    if fi == "mla":  # no begin_forward / forward in any release
        pass
    elif fi == "cascade":  # forward = run in FlashInfer's class body: the stable run here
        assert cls.forward is cls.run and cls.begin_forward is cls.plan
    else:
        assert cls.begin_forward is cls.plan
        # FlashInfer's own, run in the release view (its self.run binds by the release)
        assert cls.forward.__wrapped__ is base.forward and "forward" in cls._fi_compat_inside
        assert w.end_forward() is None  # removed in 0.7.0: a no-op

    class Mine(cls):  # type: ignore[misc, valid-type]
        pass

    assert issubclass(Mine, base)
    import fi_compat

    old = getattr(fi_compat.written_for("0.5.3"), fi)
    written = getattr(old, name)
    assert issubclass(written, cls) and written.plan is not cls.plan


@in_process
def test_the_removed_mla_decode_wrapper_by_release() -> None:
    """0.2.0.post1-0.6.18.post1: a subclass of FlashInfer's class; 0.7.0 removed it, and
    using fi_compat's name raises the typed error naming the replacement."""
    from fi_compat import decode, errors
    from fi_compat.registry import at_least, place

    assert CELL is not None
    cls = decode.BatchDecodeMlaWithPagedKVCacheWrapper
    if not at_least(place(CELL), "0.7.0"):
        base = _module("decode").BatchDecodeMlaWithPagedKVCacheWrapper
        assert issubclass(cls, base) and cls.begin_forward is cls.plan
        return
    assert not hasattr(_module("decode"), "BatchDecodeMlaWithPagedKVCacheWrapper")
    with pytest.raises(errors.UnsupportedFlashInferVersionError, match="removed in"):
        cls(None)


NEUTRAL = [
    (key, name)
    for key, (entry, _stub) in ENTRIES.items()
    for name in entry.order
    if entry.params[name].neutral
]


@in_process
@pytest.mark.parametrize(("key", "name"), NEUTRAL)
def test_neutral_values_bind_against_the_installed_signature(key: str, name: str) -> None:
    """A neutral value (``docs/neutral-values.md``) reaches the installed method as
    nothing where the release lacks the parameter (vLLM's ``plan(fixed_split_size=-1)``
    on 0.3.1), as itself where it has it (0.6.7), and binds there by keyword."""
    from fi_compat.detection import Distribution

    assert CELL is not None
    if CELL not in releases(key):
        pytest.skip(f"{key} is not in flashinfer-python {CELL}")
    entry, _ = ENTRIES[key]
    adapter = entry.select(Distribution("flashinfer-python", CELL, "<test>", ""))
    sig = inspect.signature(_real(key))
    recv = (Receiver(),) if entry.receiver else ()
    for value in entry.params[name].neutral:
        f, spy = facade(key, CELL, sig)
        f(*recv, **{**args(key), name: value})
        sent = spy.raw_kwargs[-1]
        if name in adapter.absent:
            assert name not in sig.parameters and name not in sent, (name, value)
        else:
            assert same(sent[adapter.spelling[name]], value), (name, value)


@in_process
def test_neutral_engine_calls_bind_on_the_installed_release() -> None:
    """vLLM's ``plan(..., fixed_split_size=-1, disable_split_kv=False)`` and SGLang's
    ``BatchDecodeWithPagedKVCacheWrapper(ws, "NHD", backend="fa2", use_tensor_cores=True)``
    reach the installed methods and bind, on every release (refused before 0.4.0 /
    0.6.0 until these values were neutral)."""
    assert CELL is not None
    dec = "BatchDecodeWithPagedKVCacheWrapper"
    f, spy = facade(f"{dec}.plan", CELL, inspect.signature(_real(f"{dec}.plan")))
    f(Receiver(), **args(f"{dec}.plan"), fixed_split_size=-1, disable_split_kv=False)
    assert spy.raw_kwargs[-1].get("fixed_split_size", -1) == -1
    f, spy = facade(f"{dec}.__init__", CELL, inspect.signature(_real(f"{dec}.__init__")))
    ws = args(f"{dec}.__init__")["float_workspace_buffer"]
    f(Receiver(), ws, "NHD", backend="fa2", use_tensor_cores=True)
    assert spy.raw_kwargs[-1].get("backend", "fa2") == "fa2"
    assert spy.raw_kwargs[-1]["use_tensor_cores"] is True
