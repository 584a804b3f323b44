"""A spy standing in for FlashInfer's kernel launch, and nothing else.

It binds every call against a real FlashInfer signature (``inspect.signature`` of the
installed function, or the release's snapshot read from its wheel), records the bound
arguments, and returns what the kernel would: ``output`` ``[T, H_sab, D]`` in q's dtype
and, with ``output_final_state``, the final state ``[N, H_sab, D, D]`` float32 (into
``output_state`` when given).  The fake final state is ``initial_state + 1`` (``1`` from
a zero state) so tests can tell which rows went where.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

import torch

from fi_compat import snapshots
from fi_compat.adapters.gdn_prefill import SPEC

_KIND = {
    "po": inspect.Parameter.POSITIONAL_ONLY,
    "pk": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "va": inspect.Parameter.VAR_POSITIONAL,
    "ko": inspect.Parameter.KEYWORD_ONLY,
    "vk": inspect.Parameter.VAR_KEYWORD,
}


def snapshot_signature(release: str) -> inspect.Signature:
    """The release's signature as read statically from its wheel (tools/snapshot.py)."""
    params = snapshots.params(SPEC, release)
    assert params is not None, release
    out = []
    for name, kind, default, _ann in params:
        d = inspect.Parameter.empty if default is None and kind in ("pk", "po") else None
        if default is not None:
            d = ast.literal_eval(default)
        if kind in ("va", "vk"):
            d = inspect.Parameter.empty
        out.append(inspect.Parameter(name, _KIND[kind], default=d))
    return inspect.Signature(out)


class Spy:
    def __init__(self, signature: inspect.Signature) -> None:
        self.signature = signature
        self.calls: list[dict[str, Any]] = []
        self.raw_kwargs: list[dict[str, Any]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        assert not args, "fi_compat must call FlashInfer by keyword only"
        bound = self.signature.bind(*args, **kwargs)  # TypeError for unknown names, as FI
        self.raw_kwargs.append(kwargs)
        bound.apply_defaults()
        a = dict(bound.arguments)
        self.calls.append(a)
        q, v = a["q"], a["v"]
        t, _, d = q.shape
        h = max(q.shape[1], v.shape[1])
        out = a["output"] if a["output"] is not None else torch.zeros(t, h, d, dtype=q.dtype)
        if not a["output_final_state"]:
            return out
        n = a["cu_seqlens"].shape[0] - 1
        h0 = a["initial_state"]
        final = (h0.float() + 1) if h0 is not None else torch.ones(n, h, d, d)
        if a["output_state"] is not None:
            a["output_state"].copy_(final)
            return out, a["output_state"]
        return out, final

    @property
    def last(self) -> dict[str, Any]:
        return self.calls[-1]
