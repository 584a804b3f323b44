"""FlashInfer's own methods of the wrapped classes, per release, for the inherited-method
suites (``docs/wrappers.md``).

``internal_calls.json`` (``tools/internal_calls.py``, a static read of every wheel and
sdist) records, per class and release, how each name the stable subclass binds is bound
in FlashInfer's class, and every method whose body calls one of those names on
``self``, with its parameters and statements.  From it:

* :func:`stand_in` builds FlashInfer's class of one release as far as these calls go:
  its own ``forward`` / ``forward_return_lse`` (the release's statements, executed as
  written), its class-body aliases and ``functools.partialmethod`` objects over its
  ``plan`` / ``run``; every other method raises (the stable subclass overrides it, and
  its facades call spies bound to the release's signatures instead);
* :func:`stable` builds the stable subclass of that stand-in with the facades of the
  release over spies (:func:`support.attention_cases.facade`);
* :func:`release_call` runs a FlashInfer method (the stand-in's or the installed one)
  on a recorder and binds the call it makes against the release's ``run`` signature:
  what FlashInfer's ``run`` receives there, the oracle the stable path is held to.
"""

from __future__ import annotations

import functools
import inspect
import json
from pathlib import Path
from typing import Any

import torch

from fi_compat import cascade, decode, mla, prefill
from fi_compat._core.classes import WrapperClass
from fi_compat.registry import KNOWN_RELEASES, at_least, place
from support.attention_cases import DEC, ENTRIES, GRAPH, PAGED, args, facade, same

DATA: dict[str, Any] = json.loads(Path(__file__).with_name("internal_calls.json").read_text())
ROWS: dict[str, WrapperClass] = {
    name: row
    for mod in (decode, prefill, mla, cascade)
    for name, row in mod.CLASSES.items()  # type: ignore[attr-defined]
}
# the key of a class's run in ENTRIES (the CUDA-graph class inherits the decode methods)
OWNER = {GRAPH: DEC}


def record(cls: str, release: str) -> dict[str, Any] | None:
    rid = DATA["classes"][cls].get(release)
    return None if rid is None else DATA["records"][rid]  # type: ignore[no-any-return]


def stable_names(cls: str) -> dict[str, str]:
    return DATA["stable_names"][cls]  # type: ignore[no-any-return]


def callers(cls: str, release: str) -> set[str]:
    """FlashInfer's methods the stable subclass inherits that call a name it binds."""
    rec = record(cls, release) or {}
    names = stable_names(cls)
    return {m for m, r in rec.items() if "calls" in r and m not in names}


def cells() -> list[tuple[str, str, str]]:
    """(class, inherited method that calls a stable name, release), every release."""
    out = []
    for cls in DATA["classes"]:
        methods = sorted({m for r in KNOWN_RELEASES for m in callers(cls, r)})
        out += [(cls, m, r) for m in methods for r in KNOWN_RELEASES if m in callers(cls, r)]
    return out


def ranges() -> list[tuple[str, str, list[str]]]:
    """The cells grouped: (class, method, releases) per run of releases whose method is
    the same (statements and signature)."""
    out: list[tuple[str, str, list[str]]] = []
    last: dict[tuple[str, str], str] = {}
    for cls, m, r in cells():
        rec = record(cls, r)
        assert rec is not None
        key = json.dumps(rec[m], sort_keys=True)
        if out and out[-1][:2] == (cls, m) and last[(cls, m)] == key:
            out[-1][2].append(r)
        else:
            out.append((cls, m, [r]))
        last[(cls, m)] = key
    return out


def _unreached(name: str) -> Any:
    def method(self: Any, *a: Any, **k: Any) -> Any:
        raise AssertionError(f"FlashInfer's own {name} reached: the stable subclass binds it")

    method.__name__ = name
    return method


def stand_in(cls: str, release: str) -> type:
    """FlashInfer's class ``cls`` of ``release`` as far as its internal calls go."""
    rec = record(cls, release)
    assert rec is not None, (cls, release)
    names = stable_names(cls)
    ns: dict[str, Any] = {"__module__": DATA["modules"][cls], "__qualname__": cls}
    later: list[tuple[str, dict[str, Any]]] = []
    for name, r in rec.items():
        if r.get("absent"):
            continue
        if "def" in r:
            if "calls" in r and name not in names:
                src = f"def {name}({r['params']}):\n" + "".join(
                    f"    {line}\n" for stmt in r["body"] for line in stmt.splitlines()
                )
                code: dict[str, Any] = {}
                exec(compile(src, f"<{cls}.{name} of flashinfer-python {release}>", "exec"), code)
                ns[name] = code[name]
            else:
                ns[name] = _unreached(f"{cls}.{name}")
        else:
            later.append((name, r))
    for name, r in later:  # the class-body aliases take what the body bound
        if "alias_of" in r:
            ns[name] = ns.get(r["alias_of"]) or _unreached(f"{cls}.{r['alias_of']}")
        else:
            kw = eval(f"dict({r['keywords']})")  # literal keywords (return_lse=True)
            ns[name] = functools.partialmethod(ns[r["partialmethod"]], **kw)
    return type(cls, (), ns)


def method_key(cls: str, method: str) -> str:
    return f"{OWNER.get(cls, cls)}.{method}"


def stable(cls: str, release: str, base: type | None = None) -> tuple[type, dict[str, Any]]:
    """The stable subclass of ``base`` (default: the stand-in of ``release``) with the
    facades of ``release`` over spies; returns it and {method: spy}."""
    row = ROWS[cls]
    owned = dict(row.methods)
    if row.inherits is not None:
        owned = {**row.inherits.methods, **owned}
    fns, spies = {}, {}
    for method in owned:
        key = f"{cls}.{method}" if f"{cls}.{method}" in ENTRIES else method_key(cls, method)
        f, spy = facade(key, release)
        f.__name__ = method
        fns[method], spies[method] = f, spy
    return row.subclass(base if base is not None else stand_in(cls, release), fns), spies


class Recorder:
    """Stands in for ``self`` under FlashInfer's own method: records the call it makes to
    a name the stable subclass binds, bound as the release binds it (a partialmethod's
    keywords added), and the attributes it sets."""

    def __init__(self, cls: str, release: str) -> None:
        object.__setattr__(self, "calls", [])
        object.__setattr__(self, "state", {})
        object.__setattr__(self, "_rec", record(cls, release) or {})

    def __setattr__(self, name: str, value: Any) -> None:
        self.state[name] = value

    def __getattr__(self, name: str) -> Any:
        r = self._rec.get(name, {})
        target, extra = name, {}
        if "alias_of" in r:
            target = r["alias_of"]
        elif "partialmethod" in r:
            target = r["partialmethod"]
            extra = eval(f"dict({r['keywords']})")

        def call(*a: Any, **k: Any) -> Any:
            self.calls.append((target, a, {**k, **extra}))
            return "recorded"

        return call


def release_call(
    cls: str,
    release: str,
    fn: Any,
    call_args: tuple[Any, ...],
    call_kw: dict[str, Any],
    signature: inspect.Signature | None = None,
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Run FlashInfer's method ``fn`` on a :class:`Recorder`; returns the method it calls
    (``run``), the arguments that call gives it bound against the release's signature of
    that method (the snapshot's, or ``signature``; ``*args`` kept under their own name),
    and the state ``fn`` set."""
    rec = Recorder(cls, release)
    fn(rec, *call_args, **call_kw)
    assert len(rec.calls) == 1, rec.calls
    target, a, k = rec.calls[0]
    from support.spy import snapshot_signature

    entry = ENTRIES[method_key(cls, target)][0]
    sig = signature if signature is not None else snapshot_signature(release, entry)
    bound = sig.bind(rec, *a, **k)
    out = dict(bound.arguments)
    out.pop(next(iter(out)))  # self
    return target, out, dict(rec.state)


# distinct values for FlashInfer's own method parameters (not the tensors), each unlike
# its default so a dropped or swapped one shows
VALUES: dict[str, Any] = {
    "causal": True,
    "pos_encoding_mode": "ROPE_LLAMA",
    "use_fp16_qk_reduction": True,
    "allow_fp16_qk_reduction": True,
    "q_scale": 0.5,
    "k_scale": 1.5,
    "v_scale": 0.75,
    "window_left": 7,
    "logits_soft_cap": 30.0,
    "sm_scale": 0.125,
    "rope_scale": 2.0,
    "rope_theta": 5e4,
}


def call_for(cls: str, method: str, params: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A call of FlashInfer's method (``params``: its parameter list as source): the run
    tensors positionally, every other parameter by keyword with a value of
    :data:`VALUES`."""
    run = args(method_key(cls, "run"))
    sig = _signature(params)
    pos, kw = [], {}
    for p in list(sig.parameters.values())[1:]:
        if p.name in run:
            pos.append(run[p.name])
        elif p.name in VALUES:
            kw[p.name] = VALUES[p.name]
        else:
            raise AssertionError(f"{cls}.{method}: no test value for {p.name}")
    return tuple(pos), kw


def _signature(params: str) -> inspect.Signature:
    code: dict[str, Any] = {}
    exec(f"def f({params}): pass", code)
    return inspect.signature(code["f"])


def scales_ignored(cls: str, release: str) -> bool:
    """Paged prefill ``v_scale`` on 0.2.10, which never applies it (the stable ``run``
    refuses it there: ``_adapters/prefill.py`` ``_paged_ignores_scales``)."""
    pl = place(release)
    return cls == "BatchPrefillWithPagedKVCacheWrapper" and (
        at_least(pl, "0.2.10") and not at_least(pl, "0.2.11")
    )


def assert_release_meaning(
    cls: str,
    release: str,
    w: Any,
    spy: Any,
    want: dict[str, Any],
    state: dict[str, Any],
    res: Any,
    q: torch.Tensor,
) -> None:
    """What the stable path gave FlashInfer's ``run`` (``spy``) is what the release's
    own ``run`` receives from the method (``want``, from :func:`release_call`), the
    0.2.0.post1-0.2.8 paged ``forward_return_lse``'s positional scales as 0.2.9+ pass
    them; the method's state is on ``w``; the result is the stable one."""
    assert len(spy.calls) == 1 and spy.receivers == [w], (cls, release, spy.calls)
    got = spy.last
    want = dict(want)
    extra = want.pop("args", ())
    if extra:  # FlashInfer's *args: only the paged forward_return_lse before 0.2.9
        assert cls == PAGED and not at_least(place(release), "0.2.9"), (cls, release)
        assert len(extra) == 2
        want.update(k_scale=extra[0], v_scale=extra[1])
    if "args" in got:
        assert got["args"] == ()
    for n, v in want.items():
        assert same(got[n], v), (cls, release, n, got[n], v)
    for attr, v in state.items():  # what the method stores on self, run reads
        assert getattr(w, attr) == v, (cls, release, attr)
    if want.get("return_lse"):
        out, lse = res
        assert lse.dtype == torch.float32 and tuple(lse.shape) == tuple(q.shape[:2])
    else:
        out = res
    assert isinstance(out, torch.Tensor) and tuple(out.shape[:2]) == tuple(q.shape[:2])
