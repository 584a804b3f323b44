"""Spies standing in for FlashInfer's innermost function, and nothing else.

Each binds every call against a real FlashInfer signature (``inspect.signature`` of the
installed function, or the release's snapshot read statically from its wheel), records
the bound arguments and returns what the kernel would (shapes and dtypes).

* :class:`Spy` (GDN prefill): ``output`` ``[T, H_sab, D]`` in q's dtype and, with
  ``output_final_state``, the final state ``[N, H_sab, D, D]`` float32 (into
  ``output_state`` when given).  The fake final state is ``initial_state * gain + 1``
  (``1`` from a zero state; ``gain`` 1 unless a test sets it, e.g. to push states
  beyond the float8 range) so tests can tell which rows went where.
* :class:`MoeSpy` (fused MoE): the ``[num_tokens, hidden]`` bfloat16 output filled with
  2 (into ``output`` when given), as a list for the FP4/MxInt4 entry points and for
  ``do_finalize=False``, as a tensor otherwise; the weight helpers return a copy of
  their input (into ``out`` when given).
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import enums
from fi_compat._adapters.gdn_prefill import SPEC
from fi_compat._core import EntryPoint

_KIND = {
    "po": inspect.Parameter.POSITIONAL_ONLY,
    "pk": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "va": inspect.Parameter.VAR_POSITIONAL,
    "ko": inspect.Parameter.KEYWORD_ONLY,
    "vk": inspect.Parameter.VAR_KEYWORD,
}
UNSET = object()  # FlashInfer's _UNSET sentinel (0.7.4 nvfp4_4over6)


def default_value(source: str, release: str) -> Any:
    """A default as written in the wheel, evaluated: literals, torch dtypes, enum members
    (``ActivationType.Swiglu.value``, ``WeightLayout.BlockMajorK``) as that release's
    integer, read from the enum snapshots."""
    if source == "_UNSET" or source.startswith("DEFAULT_"):  # a module constant
        return UNSET
    if source.startswith("torch."):  # a dtype default (``torch.bfloat16``)
        return getattr(torch, source.removeprefix("torch."))
    try:
        return ast.literal_eval(source)
    except ValueError:
        cls, member = source.removesuffix(".value").split(".")
        if hasattr(enums, cls):
            values = getattr(enums, cls).values_in(release)
            return values[member]
        return _reexported_enum_value(cls, member, release)


def _reexported_enum_value(cls: str, member: str, release: str) -> int:
    """A member of an enum fi_compat re-exports as it is (no drift: ``TopKTieBreak``),
    read from its snapshot (``_snapshots/*.<cls>.json``, ``"kind": "enum"``)."""
    import json

    (path,) = snapshots.DIR.glob(f"*.{cls}.json")
    data = json.loads(path.read_text())
    sig = data["signatures"][data["releases"][release]["signature"]]
    return int(next(d for n, _k, d, _a in sig if n == member))


def snapshot_signature(release: str, entry: EntryPoint = SPEC) -> inspect.Signature:
    """The release's signature as read statically from its wheel (tools/snapshot.py)."""
    params = snapshots.params(entry, release)
    assert params is not None, (entry.name, release)
    out = []
    for name, kind, default, _ann in params:
        d: Any = inspect.Parameter.empty
        if default is not None and kind not in ("va", "vk"):
            d = default_value(default, release)
        out.append(inspect.Parameter(name, _KIND[kind], default=d))
    return inspect.Signature(out)


class BindSpy:
    def __init__(self, signature: inspect.Signature) -> None:
        self.signature = signature
        self.calls: list[dict[str, Any]] = []
        self.raw_kwargs: list[dict[str, Any]] = []
        self.positional: list[tuple[str, ...]] = []  # per call, the names bound positionally

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # positional arguments bind to the release's positional slots in order (a value
        # in the wrong slot reaches the wrong parameter, which the cases' checks see)
        bound = self.signature.bind(*args, **kwargs)  # TypeError for unknown names, as FI
        names = tuple(list(self.signature.parameters)[: len(args)])
        self.positional.append(names)
        # what the call passed explicitly (positionally or by keyword), by name
        self.raw_kwargs.append({**dict(zip(names, args, strict=True)), **kwargs})
        bound.apply_defaults()
        a = dict(bound.arguments)
        self.calls.append(a)
        return self.result(a)

    def result(self, a: dict[str, Any]) -> Any:
        raise NotImplementedError

    @property
    def last(self) -> dict[str, Any]:
        return self.calls[-1]


class Spy(BindSpy):
    gain = 1.0

    def result(self, a: dict[str, Any]) -> Any:
        q, v = a["q"], a["v"]
        t, _, d = q.shape
        h = max(q.shape[1], v.shape[1])
        out = a["output"] if a["output"] is not None else torch.zeros(t, h, d, dtype=q.dtype)
        if not a["output_final_state"]:
            return out
        n = a["cu_seqlens"].shape[0] - 1
        h0 = a["initial_state"]
        final = (h0.float() * self.gain + 1) if h0 is not None else torch.ones(n, h, d, d)
        if a["output_state"] is not None:
            a["output_state"].copy_(final)
            return out, a["output_state"]
        return out, final


_LIST_RESULT = ("trtllm_fp4_block_scale", "trtllm_mxint4")


class MoeSpy(BindSpy):
    def __init__(self, signature: inspect.Signature, name: str, hidden: int) -> None:
        super().__init__(signature)
        self.name = name
        self.hidden = hidden

    def result(self, a: dict[str, Any]) -> Any:
        if "hidden_states" not in a and "input" not in a:  # the weight helpers
            x = next(v for v in a.values() if isinstance(v, torch.Tensor))
            out = a.get("out")
            return out if out is not None else x.clone()
        if self.name == "cutlass_fused_moe":
            x = a["input"]
            out = a.get("output")
            res = out if out is not None else torch.full((x.shape[0], self.hidden), 2.0)
            return res
        x = a["hidden_states"]
        out = a.get("output")
        res = out if out is not None else torch.full((x.shape[0], self.hidden), 2.0)
        res = res.to(torch.bfloat16) if out is None else res
        if self.name.startswith(_LIST_RESULT) or not a.get("do_finalize", True):
            return [res]
        return res


def stub(module: Any, name: str) -> Any:
    """The typed stub of facade function ``module.name`` (the facade module hands it to
    its entry point at import and holds the generated function instead)."""
    from fi_compat._facades import entry_points

    short = module.__name__.rsplit(".", 1)[-1]
    return next(e for e in entry_points(short) if e.name == name).stub
