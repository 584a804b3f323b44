"""Rows with no valid key on flashinfer-python 0.2.0.post1-0.6.18.post1, finished as
0.7.0+ finish them: ``out = 0``, ``lse = -inf``.

Until 0.7.0 ``include/flashinfer/math.cuh`` defined ``constexpr float inf = 5e4``, so
"-inf" in the attention kernels was the finite sentinel -5e4: every softmax row starts
as a phantom key of logit -5e4 (``state_t::init``: ``m = -5e4, d = 1``), masked logits
are filled with -5e4, and ``d_rcp = (m != -5e4) ? 1 / d : 0`` zeroes the output of a row
whose maximum stayed there.  0.7.0 made it ``numeric_limits<float>::infinity()`` and
clamped every ``exp2`` exponent (FlashInfer PR #4401, closing issues #4450-#4452).  A
query row with no valid key -- causal with ``qo_len > kv_len`` (rows
``i < qo_len - kv_len``), ``kv_len == 0``, a custom-mask row with no set bit inside the
sliding window -- therefore returns before 0.7.0 (measured on an H100 with 0.3.1 and
0.6.7, bf16, ``tests/gpu/test_attention_gpu.py``):

* FA2 kernels (paged / ragged / single prefill, tensor-core decode) and the CUDA-core
  decode kernel: ``out = 0`` (the guard) and a finite LSE, ``-5e4 + log2 n`` (``n``
  masked columns processed, merged over KV splits: -49993.98, -49998.41);
* FA3 (SM90): the mean of V over the masked columns of the processed tiles (0.0104 in
  FlashInfer's own test) and ``-5e4 * sm_scale * log2(e) + log2 n`` (-6369.29);

where 0.7.0+ return ``out = 0`` and ``lse = -inf`` (base 2; ``-inf`` in the natural-log
form too).  Which rows are empty follows from the plan's inputs alone (the kernels'
``get_length``: ``kv_len = 0`` without pages, else ``(pages - 1) * page_size +
last_page_len``), so fi_compat writes those two values after the kernel:

* The wrappers (:class:`PlanRows` on ``plan`` / ``fast_decode_plan``,
  :class:`RunRows` on ``run``): ``plan`` reads the indptrs on the host (FlashInfer's own
  ``plan`` copies them there too; fi_compat copies device tensors once more, at plan
  time) and decides whether any row can be empty.  If none can, the wrapper holds no
  state and the generated ``run`` skips the hook on one ``getattr`` (the guard).  If
  some can, ``plan`` builds a device mask of those rows (a custom mask: one prefix sum
  over its bits on the device, no sync) and ``run`` applies ``lse.masked_fill_(rows,
  -inf)`` (the returned LSE, or the caller's ``lse`` buffer) and, on FA3,
  ``out.masked_fill_(rows, 0)``.  Two masks are kept, for ``causal`` true and false:
  FlashInfer's ``forward`` sets ``_causal`` again before calling ``run``.  With
  ``use_cuda_graph=True`` the masks are buffers of the wrapper's fixed row count (the
  batch size for decode, ``_max_total_num_rows`` for prefill) that every ``plan``
  rewrites in place, and the state is always present (a graph captured after a plan
  without empty rows must still repair later plans).
* ``single_prefill_with_kv_cache`` (:class:`SingleRows`): from the shapes (host
  integers), or with a custom mask from its bits on the device.
* ``merge_state`` / ``merge_state_in_place`` (:class:`MergeTwo`, :class:`MergeInPlace`):
  two ``-inf`` states merge to NaN before 0.7.0 (``exp2(-inf - (-inf))``); 0.7.0 returns
  ``v = 0``, ``s = -inf``.  ``merge_states`` (:class:`MergeMany`): all states ``-inf`` (or
  none) give ``s = -5e4``; 0.7.0 ``-inf`` (``v`` is 0 on both).  No plan here: two small
  in-place kernels per call, exact for finite ``v`` and LSEs that are not NaN.

Not repaired (documented in the known-issues row ``empty-rows-lse-sentinel``): the
trtllm-gen / cuDNN / cutlass / CuTe-DSL backends (other kernels, not touched by #4401),
custom JIT variants (their own ``LogitsMask``), multi-item scoring, MLA, POD, the
cascade wrapper, a custom mask together with a ``run(window_left=...)`` other than the
planned one, and plans made through FlashInfer's own functions on a fi_compat wrapper
(``run`` sees a ``_plan_info`` it did not plan and leaves the result alone; inside a
CUDA graph the masks of the last fi_compat plan stay).  On FA2 and the CUDA-core decode
the output rows are already zero (the sign bit of a zero may differ from 0.7.0's).
"""

from __future__ import annotations

from itertools import repeat
from operator import gt, mul, sub

from .._core import ResultHook
from ..registry import at_least

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement

FIXED = "0.7.0"  # FlashInfer PR #4401: math::inf = infinity, clamped exp2 exponents
ATTR = "_fi_compat_empty_rows"  # the wrapper's state from plan (None: nothing to repair)
# the generated run calls RunRows only on a wrapper whose plan left a state
GUARD = f"getattr(self, {ATTR!r}, None) is not None"
NEG_INF = float("-inf")
_POS_INF = float("inf")  # nan_to_num keeps infinities only when told
_SENTINEL = -5e4  # math::inf before 0.7.0 (merge_states' empty-state LSE)
_TORCH: list[Any] = []


def _torch() -> Any:
    if not _TORCH:
        import torch

        _TORCH.append(torch)
    return _TORCH[0]


def _host(t: Any) -> Any:
    """``t`` on the host (a copy only for a device tensor, as FlashInfer's plan does).
    ``is_cpu``: ~55 ns, where ``t.device.type`` builds a ``torch.device`` (~380 ns)."""
    return t if t.is_cpu else t.to("cpu")


# -- which rows are empty --------------------------------------------------------------------


def kv_lengths(
    kv_indptr: Any, last_page_len: Any, page_size: int, seq_lens: bool = False
) -> list[int]:
    """Per request ``kv_len`` as Python ints, as the FA2 and CUDA-core kernels read it
    (``paged_kv_t::get_length``: 0 without pages, else ``(pages - 1) * page_size +
    last_page_len``), or with ``seq_lens`` as FA3 reads it (the plan's host lengths,
    ``page.get_seq_lens``: ``last_page_len`` without pages; the same for well-formed
    batches, whose requests without pages have ``last_page_len`` 0).  Ragged:
    ``last_page_len=None``, the ``kv_indptr`` difference."""
    k = _host(kv_indptr).tolist()
    b = len(k) - 1
    if last_page_len is None:
        return [k[i + 1] - k[i] for i in range(b)]
    last = _host(last_page_len).tolist()
    out = []
    for i in range(b):
        d = k[i + 1] - k[i]
        out.append((d - 1) * page_size + last[i] if d > 0 else (last[i] if seq_lens else 0))
    return out


def lengths(
    qo_indptr: Any, kv_indptr: Any, last_page_len: Any, page_size: int, seq_lens: bool = False
) -> tuple[list[int], list[int]]:
    """Per request ``(qo_len, kv_len)`` as Python ints (:func:`kv_lengths`)."""
    q = _host(qo_indptr).tolist()
    qo = [q[i + 1] - q[i] for i in range(len(q) - 1)]
    return qo, kv_lengths(kv_indptr, last_page_len, page_size, seq_lens)


def any_short(qo_indptr: Any, kv_indptr: Any, last_page_len: Any, page_size: int) -> bool:
    """Some request may have ``qo_len > kv_len`` (its causal rows ``i < qo_len - kv_len``
    are empty; a request without keys is empty under any mask): the only plans whose
    rows can be empty without a custom mask.  False: nothing to repair.  Three
    ``tolist`` and C-level ``map`` / ``any`` over the requests (no per-request Python
    code): with ``v[b] = qo_indptr[b] - page_size * (kv_indptr[b] - b)``, a request with
    pages has ``qo_len - kv_len = v[b+1] - v[b] - last_page_len``; one without pages has
    ``kv_len = 0`` and ``v[b+1] - v[b] = qo_len + page_size``, so the test may say True
    for a request with neither rows nor pages (the plan then looks closer), never False
    where a row is empty (``last_page_len <= page_size``; a larger one: the exact
    lengths)."""
    q = _host(qo_indptr).tolist()
    k = _host(kv_indptr).tolist()
    if last_page_len is None:  # ragged: qo_len - kv_len = u[b+1] - u[b], u = q - k
        u = list(map(sub, q, k))
        return any(map(gt, u[1:], u[:-1]))
    last = _host(last_page_len).tolist()[: len(q) - 1]
    if last and max(last) > page_size:  # not a well-formed page table: the exact lengths
        qo, kv = lengths(qo_indptr, kv_indptr, last_page_len, page_size)
        return any(map(gt, qo, kv))
    v = list(map(sub, q, map(mul, map(sub, k, range(len(k))), repeat(page_size))))
    return any(map(gt, map(sub, v[1:], v[:-1]), last))


def row_masks(qo: list[int], kv: list[int], first_row: int = 0) -> tuple[Any, Any]:
    """Host bool masks over the rows ``[0, first_row + sum(qo))``: empty without a mask
    (``kv_len == 0``) and with the causal mask (``i < qo_len - kv_len``)."""
    torch = _torch()
    qo_t = torch.tensor(qo, dtype=torch.int64)
    kv_t = torch.tensor(kv, dtype=torch.int64)
    req = torch.repeat_interleave(torch.arange(len(qo)), qo_t)
    start = torch.cumsum(qo_t, 0) - qo_t
    i = torch.arange(req.shape[0]) - start[req]
    kv_r, qo_r = kv_t[req], qo_t[req]
    lead = torch.zeros(first_row, dtype=torch.bool)
    plain = torch.cat([lead, kv_r == 0])
    causal = torch.cat([lead, i < qo_r - kv_r])
    return plain, causal


def custom_rows(
    bits: Any,
    offsets: list[int],
    qo: list[int],
    kv: list[int],
    window_left: int,
    first_row: int = 0,
) -> Any:
    """Device bool mask: rows whose custom-mask bits inside the sliding window are all
    zero (as the kernels' ``LogitsMask``: bit ``offsets[b] + i * kv_len + j``, valid
    ``j >= i + kv_len - qo_len - window_left`` when ``window_left >= 0``).  One prefix sum
    over ``bits`` (a 1-D device tensor of 0/1) and two gathers; no host sync."""
    torch = _torch()
    dev = bits.device
    qo_t = torch.tensor(qo, dtype=torch.int64)
    kv_t = torch.tensor(kv, dtype=torch.int64)
    off_t = torch.tensor(offsets, dtype=torch.int64)
    req = torch.repeat_interleave(torch.arange(len(qo)), qo_t)
    start = torch.cumsum(qo_t, 0) - qo_t
    i = torch.arange(req.shape[0]) - start[req]
    kv_r, qo_r = kv_t[req], qo_t[req]
    row = off_t[req] + i * kv_r
    lo = torch.zeros_like(i)
    if window_left >= 0:
        lo = (i + kv_r - qo_r - window_left).clamp_(min=0)
    lo = torch.minimum(lo, kv_r)
    n = bits.shape[0]
    a = (row + lo).clamp_(0, n).to(dev, non_blocking=True)
    z = (row + kv_r).clamp_(0, n).to(dev, non_blocking=True)
    csum = torch.zeros(n + 1, dtype=torch.int64, device=dev)
    torch.cumsum(bits, 0, out=csum[1:])
    empty = csum.index_select(0, z) == csum.index_select(0, a)
    if first_row:
        empty = torch.cat([torch.zeros(first_row, dtype=torch.bool, device=dev), empty])
    return empty


def unpack_bits(packed: Any) -> Any:
    """The bits of a ``packbits(..., bitorder="little")`` uint8 tensor, on its device."""
    torch = _torch()
    shifts = torch.arange(8, device=packed.device, dtype=torch.int32)
    return ((packed.view(-1).to(torch.int32).unsqueeze(-1) >> shifts) & 1).view(-1)


def _custom_bits(
    custom_mask: Any, packed: Any, qo: list[int], kv: list[int]
) -> tuple[Any, list[int]]:
    """The bits the kernel reads and each request's first bit.  ``custom_mask`` is packed
    per request (``segment_packbits``: each request from a byte boundary); a given
    ``packed_custom_mask`` is read at byte ``mask_indptr[b]``, which FlashInfer computes
    as the bit count before request ``b`` (``_compute_page_mask_indptr`` /
    ``_compute_mask_indptr``, 0.2.0.post1-0.6.18)."""
    sizes = [q * k for q, k in zip(qo, kv, strict=True)]
    offsets, acc = [], 0
    if packed is not None:
        for s in sizes:
            offsets.append(8 * acc)
            acc += s
        return unpack_bits(packed), offsets
    for s in sizes:
        offsets.append(acc)
        acc += s
    return custom_mask.reshape(-1), offsets


# -- the wrappers ----------------------------------------------------------------------------


class Rows:
    """A wrapper's empty rows from its last fi_compat ``plan``: ``masks[causal]`` (device
    bool ``[rows]`` or ``None``), whether ``out`` needs the zeros too (FA3), and the
    ``_plan_info`` FlashInfer's plan left (another plan since: stale, not applied)."""

    __slots__ = ("dirty", "fix_out", "graph", "masks", "plan_info")

    def __init__(self, masks: tuple[Any, Any], fix_out: bool, plan_info: Any, graph: bool):
        self.masks = masks
        self.fix_out = fix_out
        self.plan_info = plan_info
        self.graph = graph
        self.dirty = True


def _eligible(w: Any, decode: bool) -> bool:
    """The kernels #4401 fixed: FA2 / FA3 (``_backend`` as ``plan`` resolved it) and the
    CUDA-core decode (``"auto"``; before 0.2.9 decode has no ``_backend``); not a custom
    JIT variant (its own ``LogitsMask``)."""
    if getattr(w, "_jit_module", None) is not None:
        return False
    backend = getattr(w, "_backend", "auto" if decode else None)
    return backend in (("auto", "fa2", "fa3") if decode else ("fa2", "fa3"))


def _fill(t: Any, mask: Any, value: float, transposed: bool = False) -> None:
    """``t[rows] = value`` for the rows set in ``mask`` (rows: dim 0, or dim 1 of a
    ``[heads, tokens]`` LSE); rows beyond either length are left alone."""
    dim = 1 if transposed else 0
    n, k = t.shape[dim], mask.shape[0]
    if n != k:
        k = min(n, k)
        mask = mask[:k]
        t = t.narrow(dim, 0, k)
    shape = [1] * t.dim()
    shape[dim] = k
    t.masked_fill_(mask.view(shape), value)


def _plan_state(
    w: Any,
    decode: bool,
    qo: list[int],
    kv: list[int],
    short: bool,
    first_row: int,
    custom: tuple[Any, Any] | None,
    window_left: int,
) -> Rows | None:
    """The state ``plan`` leaves on the wrapper (``None``: nothing to repair)."""
    if not _eligible(w, decode):
        return None
    graph = bool(getattr(w, "is_cuda_graph_enabled", False))
    if not (short or custom is not None or graph):
        return None
    torch = _torch()
    device = getattr(w, "device", None)
    if device is None:
        device = w._float_workspace_buffer.device
    fix_out = getattr(w, "_backend", None) == "fa3"
    plain: Any = None
    causal: Any = None
    if custom is not None:
        bits, offsets = _custom_bits(custom[0], custom[1], qo, kv)
        plain = causal = custom_rows(bits, offsets, qo, kv, window_left, first_row)
    elif short:
        p, c = row_masks(qo, kv, first_row)
        if decode:  # one row per request: causal or not, the rows without keys
            plain = causal = p.to(device, non_blocking=True)
        else:
            plain = p.to(device, non_blocking=True) if bool(p.any()) else None
            causal = c.to(device, non_blocking=True)
    info = getattr(w, "_plan_info", None)
    if not graph:
        return Rows((plain, causal), fix_out, info, False)
    # CUDA graphs: fixed buffers of the wrapper's row count, rewritten by every plan
    rows = first_row + sum(qo)
    cap = int(w._fixed_batch_size if decode else (w._max_total_num_rows or rows))
    st = getattr(w, ATTR, None)
    if not isinstance(st, Rows) or not st.graph or st.masks[0].shape[0] != cap:
        bufs = tuple(torch.zeros(cap, dtype=torch.bool, device=device) for _ in range(2))
        st = Rows(bufs, fix_out, info, True)
    st.fix_out, st.plan_info = fix_out, info
    for buf, m in zip(st.masks, (plain, causal), strict=True):
        if m is not None:
            k = min(cap, m.shape[0])
            buf[:k].copy_(m[:k], non_blocking=True)
            buf[k:].zero_()
        elif st.dirty:
            buf.zero_()
    st.dirty = plain is not None or causal is not None
    return st


class PlanRows(ResultHook):
    """``plan`` (and ``fast_decode_plan``) before 0.7.0: decide whether any row of the
    batch can be empty and leave the wrapper's state for :class:`RunRows`."""

    boundaries = (FIXED,)

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.args = {
            "paged": (
                "self",
                "qo_indptr",
                "paged_kv_indptr",
                "paged_kv_last_page_len",
                "page_size",
                "custom_mask",
                "packed_custom_mask",
                "window_left",
                "prefix_len_ptr",
            ),
            "ragged": (
                "self",
                "qo_indptr",
                "kv_indptr",
                "custom_mask",
                "packed_custom_mask",
                "window_left",
                "prefix_len_ptr",
            ),
            "decode": ("self", "indptr", "last_page_len", "page_size"),
            "fast_decode": (
                "self",
                "indptr",
                "last_page_len",
                "page_size",
                "global_override_indptr_cpu",
            ),
        }[kind]

    def build(self, adapter: Adapter) -> Callable[..., Any] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, FIXED):
            return None
        kind = self.kind
        if kind == "paged":
            return _plan_paged
        if kind == "ragged":
            return _plan_ragged
        return _plan_decode

    def describe(self, p: Placement) -> str | None:
        if at_least(p, FIXED):
            return None
        return "rows with no valid key: out 0 / lse -inf as 0.7.0 (the plan finds them)"


def _plan_prefill(
    result: Any,
    w: Any,
    qo_indptr: Any,
    kv_indptr: Any,
    last: Any,
    page_size: int,
    custom_mask: Any,
    packed: Any,
    window_left: int,
    prefix_len_ptr: Any,
) -> Any:
    if prefix_len_ptr is not None or not _eligible(w, False):
        setattr(w, ATTR, None)  # multi-item scoring: its own mask, not repaired
        return result
    custom = (custom_mask, packed) if (custom_mask is not None or packed is not None) else None
    graph = bool(getattr(w, "is_cuda_graph_enabled", False))
    maybe = custom is not None or any_short(qo_indptr, kv_indptr, last, page_size)
    if not maybe and not graph:
        setattr(w, ATTR, None)  # the common plan: nothing to do, run skips the hook
        return result
    qo: list[int] = []
    kv: list[int] = []
    short, first = False, 0
    if maybe:  # any_short reads get_length, never longer than FA3's lengths: a superset
        qo, kv = lengths(qo_indptr, kv_indptr, last, page_size, w._backend == "fa3")
        short = any(map(gt, qo, kv))
        if not (short or custom is not None or graph):
            setattr(w, ATTR, None)  # the quick test's false alarm (a request without rows)
            return result
        first = int(_host(qo_indptr)[0])
    st = _plan_state(w, False, qo, kv, short, first, custom, window_left)
    setattr(w, ATTR, st)
    return result


def _plan_paged(
    result: Any,
    w: Any,
    qo_indptr: Any,
    kv_indptr: Any,
    last: Any,
    page_size: int,
    custom_mask: Any,
    packed: Any,
    window_left: int,
    prefix_len_ptr: Any,
) -> Any:
    return _plan_prefill(
        result, w, qo_indptr, kv_indptr, last, page_size, custom_mask, packed, window_left,
        prefix_len_ptr,
    )  # fmt: skip


def _plan_ragged(
    result: Any,
    w: Any,
    qo_indptr: Any,
    kv_indptr: Any,
    custom_mask: Any,
    packed: Any,
    window_left: int,
    prefix_len_ptr: Any,
) -> Any:
    return _plan_prefill(
        result, w, qo_indptr, kv_indptr, None, 0, custom_mask, packed, window_left,
        prefix_len_ptr,
    )  # fmt: skip


def _no_keys(indptr: Any, last_page_len: Any) -> bool:
    """Some request has no keys: no pages (a repeated ``indptr`` entry: it is
    non-decreasing) or one page with ``last_page_len == 0``."""
    k = _host(indptr).tolist()
    if len(set(k)) < len(k):
        return True
    last = _host(last_page_len).tolist()
    if 0 not in last:
        return False
    return any(k[i + 1] - k[i] == 1 for i, n in enumerate(last[: len(k) - 1]) if n == 0)


def _plan_decode(
    result: Any, w: Any, indptr: Any, last: Any, page_size: int, indptr_cpu: Any = None
) -> Any:
    """Decode: one query row per request (``q_len_per_req > 1`` needs 0.7.0), empty where
    the request has no keys.  ``fast_decode_plan``'s ``global_override_indptr_cpu`` is the
    host copy of ``indptr`` FlashInfer reads."""
    if indptr_cpu is not None:
        indptr = indptr_cpu
    graph = bool(getattr(w, "is_cuda_graph_enabled", False))
    if not _eligible(w, True):
        setattr(w, ATTR, None)
        return result
    maybe = _no_keys(indptr, last)
    if not maybe and not graph:
        setattr(w, ATTR, None)  # the common plan: nothing to do, run skips the hook
        return result
    kv: list[int] = []
    if maybe:  # the lengths as the kernel reads them (FA3 tensor-core decode: the plan's)
        tc_fa3 = getattr(w, "_use_tensor_cores", False) and getattr(w, "_backend", None) == "fa3"
        kv = kv_lengths(indptr, last, page_size, bool(tc_fa3))
    st = _plan_state(w, True, [1] * len(kv), kv, 0 in kv, 0, None, -1)
    setattr(w, ATTR, st)
    return result


class RunRows(ResultHook):
    """``run`` before 0.7.0: ``lse = -inf`` (and on FA3 ``out = 0``) on the rows the
    wrapper's last fi_compat ``plan`` found empty; guarded: a wrapper without such rows
    pays one ``getattr``."""

    boundaries = (FIXED,)
    guard = GUARD

    def __init__(self, layout: bool) -> None:
        self.args = ("self", "return_lse", "lse", "lse_layout")[: 4 if layout else 3]

    def build(self, adapter: Adapter) -> Callable[..., Any] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, FIXED):
            return None
        return run_fix

    def describe(self, p: Placement) -> str | None:
        if at_least(p, FIXED):
            return None
        return "rows with no valid key: out 0 / lse -inf as 0.7.0 (masks from the plan)"


def run_fix(result: Any, w: Any, return_lse: Any, lse: Any, layout: str = "NH") -> Any:
    st = getattr(w, ATTR, None)
    if st is None or getattr(w, "_plan_info", None) is not st.plan_info:
        return result  # nothing to repair, or planned since by FlashInfer's own function
    mask = st.masks[getattr(w, "_causal", False) is True]
    if mask is None:
        return result
    if return_lse is True:
        out, got = result
        _fill(got, mask, NEG_INF, layout == "HN")
    else:
        out = result
        if lse is not None:  # written by the release also without return_lse
            _fill(lse, mask, NEG_INF)
    if st.fix_out:
        _fill(out, mask, 0.0)
    return result


# -- single prefill --------------------------------------------------------------------------


class SingleRows(ResultHook):
    """``single_prefill_with_kv_cache`` before 0.7.0: rows with no valid key from the
    shapes (``kv_len == 0``; causal ``qo_len > kv_len``, which the FA2 kernel refuses
    and FA3 runs) or the custom mask's bits."""

    args = (
        "q",
        "k",
        "custom_mask",
        "packed_custom_mask",
        "causal",
        "kv_layout",
        "window_left",
        "backend",
        "return_lse",
    )
    boundaries = (FIXED,)

    def build(self, adapter: Adapter) -> Callable[..., Any] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, FIXED):
            return None
        return single_fix

    def describe(self, p: Placement) -> str | None:
        if at_least(p, FIXED):
            return None
        return "rows with no valid key: out 0 / lse -inf as 0.7.0"


def single_fix(
    result: Any,
    q: Any,
    k: Any,
    custom_mask: Any,
    packed: Any,
    causal: Any,
    kv_layout: str,
    window_left: int,
    backend: str,
    return_lse: Any,
) -> Any:
    if backend not in ("auto", "fa2", "fa3"):
        return result
    qo = q.shape[0]
    kv = k.shape[1] if kv_layout == "HND" else k.shape[0]
    out, lse = result if return_lse is True else (result, None)
    if custom_mask is not None or packed is not None:
        bits = unpack_bits(packed) if packed is not None else custom_mask.reshape(-1)
        rows = custom_rows(bits, [0], [qo], [kv], window_left)
        if lse is not None:
            _fill(lse, rows, NEG_INF)
        _fill(out, rows, 0.0)
        return result
    n = qo if kv == 0 else (qo - kv if causal is True and qo > kv else 0)
    if n:
        if lse is not None:
            lse[:n].fill_(NEG_INF)
        out[:n].zero_()
    return result


# -- cascade ---------------------------------------------------------------------------------


class _Merge(ResultHook):
    boundaries = (FIXED,)
    fix: Callable[..., Any]

    def build(self, adapter: Adapter) -> Callable[..., Any] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, FIXED):
            return None
        return type(self).fix

    def describe(self, p: Placement) -> str | None:
        if at_least(p, FIXED):
            return None
        return "empty (-inf) states merge to v 0 / s -inf as 0.7.0"


class MergeTwo(_Merge):
    """``merge_state``: two ``-inf`` states give NaN in ``v`` and ``s`` before 0.7.0
    (``exp2(-inf - (-inf))``), and only they, for finite ``v`` and LSEs that are not NaN
    or ``+inf``: two ``nan_to_num_`` (no mask, no allocation) give 0.7.0's ``v = 0``,
    ``s = -inf`` there and leave every other value as it is."""

    args = ()

    @staticmethod
    def fix(result: Any) -> Any:
        v, s = result
        v.nan_to_num_(nan=0.0, posinf=_POS_INF, neginf=NEG_INF)
        s.nan_to_num_(nan=NEG_INF, posinf=_POS_INF, neginf=NEG_INF)
        return result


class MergeInPlace(_Merge):
    """``merge_state_in_place``: the same on ``v`` / ``s``, which the kernel overwrote
    (rows that ``mask`` leaves out hold the caller's values, NaN-free unless given so)."""

    args = ("v", "s")

    @staticmethod
    def fix(result: Any, v: Any, s: Any) -> Any:
        v.nan_to_num_(nan=0.0, posinf=_POS_INF, neginf=NEG_INF)
        s.nan_to_num_(nan=NEG_INF, posinf=_POS_INF, neginf=NEG_INF)
        return result


class MergeMany(_Merge):
    """``merge_states``: rows whose states are all ``-inf`` (or that have none) end at the
    sentinel ``s = -5e4`` exactly (``state_t``: ``m = -5e4, d = 1``; ``v`` is 0 there on
    both releases), which no other row reaches unless all its states are below about
    -50024 (the already-wrong range of ``attention-logits-below-sentinel``)."""

    args = ()

    @staticmethod
    def fix(result: Any) -> Any:
        _v, merged = result
        merged.masked_fill_(merged == _SENTINEL, NEG_INF)
        return result
