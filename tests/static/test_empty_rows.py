"""Rows with no valid key (FlashInfer #4452) on 0.2.0.post1-0.6.18.post1: fi_compat writes
``out = 0`` / ``lse = -inf`` there, as 0.7.0+ (PR #4401) return (``fi_compat._adapters.
_empty_rows``).

Each wrapper method is built for a release with its FlashInfer function replaced by a spy
bound to that release's real signature (the snapshot).  The plan spy writes what
FlashInfer's ``plan`` leaves on the instance (``_plan_info``, ``_causal``, the resolved
``_backend``); the run spy returns what the pre-0.7.0 kernels return on empty rows (a
finite sentinel LSE, FA3's garbage output).  The expected rows come from a brute-force
reference of the kernels' masks (``get_length``, causal, sliding window, custom bits).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from fi_compat._adapters import _empty_rows as er
from fi_compat.detection import Distribution
from support.attention_cases import DEC, ENTRIES, PAGED, RAGGED, AttnSpy
from support.spy import snapshot_signature

OLD = ["0.2.0.post1", "0.2.3", "0.3.1", "0.5.3", "0.6.7", "0.6.18.post1"]
NEW = ["0.7.0", "0.7.4"]
SENTINEL = -49993.9765625  # FA2's empty-row LSE on 0.6.7 (H100, tests/gpu)
GARBAGE = 0.0104  # FA3's empty-row output in FlashInfer's own test on 0.6.7
H, D = 4, 8


class Wrapper:
    """Stands in for FlashInfer's wrapper instance: what its ``plan`` writes and the
    hooks read."""

    def __init__(self, backend: str = "fa2", graph: bool = False, batch: int = 0) -> None:
        self._backend = backend
        self._jit_module = None
        self._plan_info: Any = None
        self._causal = False
        self.is_cuda_graph_enabled = graph
        self.device = torch.device("cpu")
        self._fixed_batch_size = batch
        self._max_total_num_rows: int | None = None


class PlanSpy(AttnSpy):
    """FlashInfer's ``plan``: a new ``_plan_info`` per plan, ``_causal``, ``auto`` resolved,
    the CUDA-graph row budget fixed at the first plan."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        res = super().__call__(*args, **kwargs)
        w, a = args[0], self.last
        w._plan_info = object()
        w._causal = bool(a.get("causal", False))
        if getattr(w, "_backend", None) == "auto" and "qo_indptr" in a:
            w._backend = "fa2"
        if w.is_cuda_graph_enabled and w._max_total_num_rows is None and "qo_indptr" in a:
            w._max_total_num_rows = int(a["qo_indptr"][-1])
        return res


class RunSpy(AttnSpy):
    """A pre-0.7.0 kernel: ``out`` (``GARBAGE`` on every row, as FA3 leaves empty rows) and
    ``lse`` (``SENTINEL`` on every row), tensors made before the call (no op inside)."""

    def __init__(self, signature: Any, out: torch.Tensor, lse: torch.Tensor) -> None:
        super().__init__(signature, True)
        self.out, self.lse = out, lse

    def result(self, a: dict[str, Any]) -> Any:
        if a.get("lse") is not None:
            a["lse"].copy_(self.lse)
        return (self.out, self.lse) if a.get("return_lse") else self.out


def build(key: str, release: str, spy_cls: Any = PlanSpy, *spy_args: Any) -> tuple[Any, Any]:
    entry, stub = ENTRIES[key]
    a = entry.select(Distribution("flashinfer-python", release, "<test>", ""))
    f = a.build(stub)
    sig = snapshot_signature(release, entry)
    spy = spy_cls(sig, *spy_args) if spy_args else spy_cls(sig, True)
    a._set_target(spy)
    return f, spy


def _i(vals: list[int]) -> torch.Tensor:
    return torch.tensor(vals, dtype=torch.int32)


# -- the reference: the kernels' masks, brute force ------------------------------------------


def ref_empty(
    qo: list[int],
    kv: list[int],
    causal: bool,
    window: int = -1,
    custom: list[list[list[bool]]] | None = None,
) -> list[bool]:
    out = []
    for b, (nq, nk) in enumerate(zip(qo, kv, strict=True)):
        for i in range(nq):
            valid = False
            for j in range(nk):
                ok = custom[b][i][j] if custom is not None else True
                if custom is None and causal and j > i + nk - nq:
                    ok = False
                if window >= 0 and j + nq + window < nk + i:
                    ok = False
                valid = valid or ok
            out.append(not valid)
    return out


def paged_batch(kv: list[int], page: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``paged_kv_indptr`` / ``indices`` / ``last_page_len`` for these lengths (0: no pages)."""
    indptr, last = [0], []
    for n in kv:
        pages = (n + page - 1) // page
        indptr.append(indptr[-1] + pages)
        last.append(n - (pages - 1) * page if pages else 0)
    return _i(indptr), torch.arange(indptr[-1], dtype=torch.int32), _i(last)


def prefill_plan_args(
    key: str, qo: list[int], kv: list[int], causal: bool, page: int = 4, **extra: Any
) -> dict[str, Any]:
    qo_indptr = _i([0, *torch.tensor(qo).cumsum(0).tolist()])
    kw: dict[str, Any] = {
        "qo_indptr": qo_indptr,
        "num_qo_heads": H,
        "num_kv_heads": H,
        "head_dim_qk": D,
        "causal": causal,
        "q_data_type": torch.bfloat16,
        **extra,
    }
    if key.startswith(PAGED):
        indptr, indices, last = paged_batch(kv, page)
        kw |= {
            "paged_kv_indptr": indptr,
            "paged_kv_indices": indices,
            "paged_kv_last_page_len": last,
            "page_size": page,
        }
    else:
        kw["kv_indptr"] = _i([0, *torch.tensor(kv).cumsum(0).tolist()])
    return kw


def run_call(
    key: str, release: str, w: Wrapper, rows: int, **kw: Any
) -> tuple[Any, torch.Tensor, torch.Tensor]:
    out = torch.full((rows, H, D), GARBAGE, dtype=torch.bfloat16)
    lse = torch.full((rows, H), SENTINEL, dtype=torch.float32)
    lse += torch.arange(rows * H, dtype=torch.float32).view(rows, H) * 1e-3  # row-distinct
    f, _ = build(f"{key}.run", release, RunSpy, out, lse.clone())
    q = torch.zeros(rows, H, D, dtype=torch.bfloat16)
    if key == RAGGED:
        kvt = torch.zeros(3, H, D, dtype=torch.bfloat16)
        res = f(w, q, kvt, kvt, **kw)
    else:
        res = f(w, q, torch.zeros(2, 2, 4, H, D, dtype=torch.bfloat16), **kw)
    return res, out, lse


class CountOps(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


# -- the common plan: nothing planned, nothing run --------------------------------------------


@pytest.mark.parametrize("release", OLD)
@pytest.mark.parametrize("key", [PAGED, RAGGED])
def test_a_plan_without_empty_rows_leaves_no_state_and_run_dispatches_no_op(
    key: str, release: str
) -> None:
    w = Wrapper()
    plan, _ = build(f"{key}.plan", release)
    plan(w, **prefill_plan_args(key, [3, 1, 2], [5, 1, 2], causal=True))
    assert getattr(w, er.ATTR) is None
    f, _ = build(f"{key}.run", release, RunSpy, torch.zeros(6, H, D), torch.zeros(6, H))
    q = torch.zeros(6, H, D, dtype=torch.bfloat16)
    kv = (
        (torch.zeros(3, H, D, dtype=torch.bfloat16),) * 2
        if key == RAGGED
        else (torch.zeros(2, 2, 4, H, D, dtype=torch.bfloat16),)
    )
    with CountOps() as c:
        f(w, q, *kv, return_lse=True)
    assert c.ops == []


@pytest.mark.parametrize("release", OLD)
def test_a_decode_plan_with_keys_everywhere_leaves_no_state(release: str) -> None:
    w = Wrapper(backend="auto")
    plan, _ = build(f"{DEC}.plan", release)
    indptr, indices, last = paged_batch([5, 1, 16], 4)
    plan(w, indptr, indices, last, H, H, D, 4, q_data_type=torch.bfloat16)
    assert getattr(w, er.ATTR) is None


# -- empty rows: the fixed release's values, exactly on the reference's rows -------------------


CASES = [  # (qo lengths, kv lengths, causal)
    ([3, 2, 4], [5, 0, 2], True),  # a request without keys; causal rows i < 4 - 2
    ([3, 2, 4], [5, 0, 2], False),  # only the request without keys
    ([1, 6], [0, 3], True),
    ([2, 2], [7, 1], True),
]


@pytest.mark.parametrize("release", ["0.2.0.post1", "0.3.1", "0.6.7", "0.6.18.post1"])
@pytest.mark.parametrize("backend", ["fa2", "fa3"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("key", [PAGED, RAGGED])
def test_empty_rows_get_minus_inf_lse_and_on_fa3_a_zero_output(
    key: str, case: Any, backend: str, release: str
) -> None:
    qo, kv, causal = case
    w = Wrapper(backend)
    plan, _ = build(f"{key}.plan", release)
    plan(w, **prefill_plan_args(key, qo, kv, causal))
    rows = sum(qo)
    (o, lse), out0, lse0 = run_call(key, release, w, rows, return_lse=True)
    empty = torch.tensor(ref_empty(qo, kv, causal))
    assert bool(empty.any())
    assert torch.equal(lse[empty], torch.full_like(lse[empty], float("-inf")))
    assert torch.equal(lse[~empty], lse0[~empty])  # the other rows as the kernel left them
    if backend == "fa3":
        assert bool((o[empty] == 0).all()) and bool((o[~empty] == GARBAGE).all())
    else:  # FA2 already returns 0 there: the output is not touched
        assert bool((o == out0).all())


@pytest.mark.parametrize("release", ["0.3.1", "0.6.7"])
def test_lse_forms_and_the_callers_lse_buffer_are_repaired(release: str) -> None:
    qo, kv = [3, 2], [1, 0]
    empty = torch.tensor(ref_empty(qo, kv, True))
    w = Wrapper()
    build(f"{PAGED}.plan", release)[0](w, **prefill_plan_args(PAGED, qo, kv, True))
    (_o, lse), _, _ = run_call(PAGED, release, w, 5, return_lse=True, lse_layout="HN")
    assert lse.shape == (H, 5)
    assert bool(torch.isneginf(lse[:, empty]).all()) and not bool(lse[:, ~empty].isinf().any())
    (_o, lse), _, _ = run_call(PAGED, release, w, 5, return_lse=True, lse_base="ln")
    assert bool(torch.isneginf(lse[empty]).all()) and not bool(lse[~empty].isinf().any())
    buf = torch.zeros(5, H)
    run_call(PAGED, release, w, 5, lse=buf)  # no return_lse: the buffer is still written
    assert bool(torch.isneginf(buf[empty]).all()) and not bool(buf[~empty].isinf().any())


@pytest.mark.parametrize("release", ["0.3.1", "0.6.7"])
def test_forward_with_another_causal_flag_uses_that_flags_rows(release: str) -> None:
    """FlashInfer's ``forward(causal=...)`` sets ``_causal`` after ``plan`` and calls the
    stable ``run``: the rows follow the flag the kernel runs with."""
    qo, kv = [3, 2], [1, 4]
    w = Wrapper()
    build(f"{PAGED}.plan", release)[0](w, **prefill_plan_args(PAGED, qo, kv, True))
    w._causal = False  # forward(q, kv) with its default causal=False
    (_o, lse), _, lse0 = run_call(PAGED, release, w, 5, return_lse=True)
    assert torch.equal(lse, lse0)  # non-causal: every row has a key
    w._causal = True
    (_o, lse), _, _ = run_call(PAGED, release, w, 5, return_lse=True)
    empty = torch.tensor(ref_empty(qo, kv, True))
    assert torch.equal(torch.isneginf(lse).all(1), empty)


@pytest.mark.parametrize("release", ["0.2.0.post1", "0.3.1", "0.6.7"])
@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("window", [-1, 1])
@pytest.mark.parametrize("key", [PAGED, RAGGED])
def test_custom_mask_rows_without_a_set_bit_are_found_on_the_device(
    key: str, window: int, packed: bool, release: str
) -> None:
    rng = random.Random(7 + window)
    qo, kv = ([5], [6]) if packed else ([3, 4, 2], [5, 6, 0])  # packed: one request
    custom = [
        [[rng.random() < 0.25 for _ in range(nk)] for _ in range(nq)]
        for nq, nk in zip(qo, kv, strict=True)
    ]
    custom[0][1] = [False] * kv[0]  # a row without any set bit
    flat = torch.tensor([x for r in custom for row in r for x in row], dtype=torch.bool)
    extra: dict[str, Any] = {"window_left": window}
    if packed:
        bits = torch.cat([flat, torch.zeros(-flat.numel() % 8, dtype=torch.bool)]).view(-1, 8)
        weights = torch.tensor([1 << j for j in range(8)], dtype=torch.int32)
        extra["packed_custom_mask"] = (bits.int() * weights).sum(1).to(torch.uint8)
    else:
        extra["custom_mask"] = flat
    w = Wrapper()
    build(f"{key}.plan", release)[0](w, **prefill_plan_args(key, qo, kv, True, **extra))
    (_o, lse), _, _ = run_call(key, release, w, sum(qo), return_lse=True)
    empty = torch.tensor(ref_empty(qo, kv, True, window, custom))
    assert bool(empty.any()) and not bool(empty.all())
    assert torch.equal(torch.isneginf(lse).all(1), empty)
    assert not bool(torch.isneginf(lse[~empty]).any())


@pytest.mark.parametrize(
    ("release", "fast"),
    [
        *((r, False) for r in ("0.2.0.post1", "0.3.1", "0.6.7", "0.6.18.post1")),
        *((r, True) for r in ("0.4.0", "0.6.7", "0.6.18.post1")),  # fast_decode_plan: 0.4.0
    ],
)
def test_decode_requests_without_keys(release: str, fast: bool) -> None:
    kv = [5, 0, 3, 0]
    indptr, indices, last = paged_batch(kv, 4)
    w = Wrapper(backend="auto")
    if fast:
        f, _ = build("fast_decode_plan", release)
        f(w, indptr, indices, last, H, H, D, 4, q_data_type=torch.bfloat16)
    else:
        build(f"{DEC}.plan", release)[0](
            w, indptr, indices, last, H, H, D, 4, q_data_type=torch.bfloat16
        )
    (_o, lse), _, lse0 = run_call(DEC, release, w, 4, return_lse=True)
    empty = torch.tensor([n == 0 for n in kv])
    assert torch.equal(torch.isneginf(lse).all(1), empty)
    assert torch.equal(lse[~empty], lse0[~empty])


@pytest.mark.parametrize("release", ["0.3.1", "0.6.7"])
@pytest.mark.parametrize("key", [PAGED, DEC])
def test_cuda_graph_wrappers_keep_fixed_buffers_that_each_plan_rewrites(
    key: str, release: str
) -> None:
    """With ``use_cuda_graph=True`` the masks live at fixed addresses (a captured ``run``
    reads them) and every plan rewrites them, also to all-False."""
    w = Wrapper(backend="fa2" if key == PAGED else "auto", graph=True, batch=3)
    plan = build(f"{key}.plan", release)[0]

    def plan_with(kv: list[int]) -> None:
        if key == PAGED:
            plan(w, **prefill_plan_args(PAGED, [2, 2, 2], kv, True))
        else:
            indptr, indices, last = paged_batch(kv, 4)
            plan(w, indptr, indices, last, H, H, D, 4, q_data_type=torch.bfloat16)

    plan_with([4, 5, 6])  # no empty row: the state is there all the same
    st = getattr(w, er.ATTR)
    assert st is not None and st.graph
    ptrs = [m.data_ptr() for m in st.masks]
    assert not any(bool(m.any()) for m in st.masks)
    plan_with([4, 0, 1])
    st2 = getattr(w, er.ATTR)
    assert [m.data_ptr() for m in st2.masks] == ptrs
    rows = 6 if key == PAGED else 3
    (_o, lse), _, _ = run_call(key, release, w, rows, return_lse=True)
    if key == PAGED:
        assert torch.isneginf(lse).all(1).tolist() == ref_empty([2, 2, 2], [4, 0, 1], True)
    else:
        assert torch.isneginf(lse).all(1).tolist() == [False, True, False]
    plan_with([4, 5, 6])
    assert [m.data_ptr() for m in getattr(w, er.ATTR).masks] == ptrs
    assert not any(bool(m.any()) for m in getattr(w, er.ATTR).masks)


@pytest.mark.parametrize("release", ["0.6.7"])
def test_a_plan_made_by_flashinfer_itself_since_is_not_repaired(release: str) -> None:
    w = Wrapper()
    build(f"{PAGED}.plan", release)[0](w, **prefill_plan_args(PAGED, [3], [0], True))
    w._plan_info = object()  # FlashInfer's own plan (or fast_decode_plan) ran since
    (_o, lse), _, lse0 = run_call(PAGED, release, w, 3, return_lse=True)
    assert torch.equal(lse, lse0)


@pytest.mark.parametrize("release", ["0.3.1", "0.6.7"])
@pytest.mark.parametrize("backend", ["trtllm-gen", "cudnn", "cutlass", "jit"])
def test_backends_the_fix_did_not_touch_are_left_alone(backend: str, release: str) -> None:
    w = Wrapper("fa2" if backend == "jit" else backend)
    if backend == "jit":
        w._jit_module = object()  # a custom variant: its own LogitsMask
    build(f"{PAGED}.plan", release)[0](w, **prefill_plan_args(PAGED, [3], [0], True))
    assert getattr(w, er.ATTR) is None


@pytest.mark.parametrize("release", ["0.3.1", "0.6.7"])
def test_multi_item_scoring_is_not_repaired(release: str) -> None:
    w = Wrapper()
    extra = {"prefix_len_ptr": _i([1]), "token_pos_in_items_ptr": _i([0, 1, 2])}
    build(f"{PAGED}.plan", release)[0](w, **prefill_plan_args(PAGED, [3], [0], True, **extra))
    assert getattr(w, er.ATTR) is None


@pytest.mark.parametrize("release", NEW)
@pytest.mark.parametrize(
    "key",
    [
        f"{PAGED}.plan",
        f"{PAGED}.run",
        f"{RAGGED}.plan",
        f"{RAGGED}.run",
        f"{DEC}.plan",
        f"{DEC}.run",
        "fast_decode_plan",
        "single_prefill_with_kv_cache",
        "merge_state",
        "merge_state_in_place",
        "merge_states",
    ],
)
def test_releases_with_the_fix_get_no_hook(key: str, release: str) -> None:
    entry, _ = ENTRIES[key]
    a = entry.select(Distribution("flashinfer-python", release, "<test>", ""))
    assert a.results == []
    old = entry.select(Distribution("flashinfer-python", "0.6.18.post1", "<test>", ""))
    assert len(old.results) == 1  # and the last release without it has one


@pytest.mark.parametrize("release", NEW)
def test_on_fixed_releases_the_plan_leaves_nothing_and_run_is_untouched(release: str) -> None:
    w = Wrapper()
    build(f"{PAGED}.plan", release)[0](w, **prefill_plan_args(PAGED, [3], [0], True))
    assert not hasattr(w, er.ATTR)
    (_o, lse), _, lse0 = run_call(PAGED, release, w, 3, return_lse=True)
    assert torch.equal(lse, lse0)


# -- single prefill -------------------------------------------------------------------------


class SingleSpy(AttnSpy):
    def result(self, a: dict[str, Any]) -> Any:
        q = a["q"]
        out = torch.full(q.shape, GARBAGE, dtype=q.dtype)
        lse = torch.full(q.shape[:2], SENTINEL)
        return (out, lse) if a.get("return_lse") else out


@pytest.mark.parametrize("release", ["0.2.0.post1", "0.3.1", "0.6.7", *NEW])
@pytest.mark.parametrize(
    ("qo", "kv", "causal", "layout"),
    [(5, 2, True, "NHD"), (5, 2, True, "HND"), (3, 0, False, "NHD"), (3, 4, True, "NHD")],
)
def test_single_prefill_rows_without_keys(
    qo: int, kv: int, causal: bool, layout: str, release: str
) -> None:
    f, _ = build("single_prefill_with_kv_cache", release, SingleSpy, False)
    q = torch.zeros(qo, H, D, dtype=torch.bfloat16)
    k = torch.zeros((kv, H, D) if layout == "NHD" else (H, kv, D), dtype=torch.bfloat16)
    o, lse = f(q, k, k, causal=causal, kv_layout=layout, return_lse=True)
    empty = torch.tensor(ref_empty([qo], [kv], causal))
    if release in NEW:
        empty[:] = False  # the release's own result
    assert torch.equal(torch.isneginf(lse).all(1), empty)
    assert bool((o[empty] == 0).all()) and bool((o[~empty] == GARBAGE).all())


@pytest.mark.parametrize("release", ["0.3.1", "0.6.7"])
def test_single_prefill_custom_mask_rows(release: str) -> None:
    f, _ = build("single_prefill_with_kv_cache", release, SingleSpy, False)
    mask = torch.tensor([[1, 0, 1], [0, 0, 0], [1, 0, 0]], dtype=torch.bool)
    q = torch.zeros(3, H, D, dtype=torch.bfloat16)
    k = torch.zeros(3, H, D, dtype=torch.bfloat16)
    o, lse = f(q, k, k, custom_mask=mask, return_lse=True)
    assert torch.isneginf(lse).all(1).tolist() == [False, True, False]
    o = f(q, k, k, custom_mask=mask, window_left=0)  # window 0: keys j >= i only
    assert (o == 0).all(2).all(1).tolist() == [False, True, True]


# -- cascade --------------------------------------------------------------------------------


def old_merge(va: Any, sa: Any, vb: Any, sb: Any) -> tuple[Any, Any]:
    """0.6.18's ``MergeStateKernel`` in torch (no exponent clamp, no ``d_sum`` guard)."""
    m = torch.fmax(sa, sb)
    a, b = torch.exp2(sa - m), torch.exp2(sb - m)
    v = va * (a / (a + b)).unsqueeze(-1) + vb * (b / (a + b)).unsqueeze(-1)
    return v, torch.log2(a + b) + m


def fixed_merge(va: Any, sa: Any, vb: Any, sb: Any) -> tuple[Any, Any]:
    """0.7.0's ``MergeStateKernel`` in torch."""
    m = torch.fmax(sa, sb)
    a = torch.exp2(torch.fmax(sa - m, torch.tensor(float("-inf"))))
    b = torch.exp2(torch.fmax(sb - m, torch.tensor(float("-inf"))))
    d = a + b
    sa_, sb_ = torch.where(d > 0, a / d, 0.0), torch.where(d > 0, b / d, 0.0)
    return va * sa_.unsqueeze(-1) + vb * sb_.unsqueeze(-1), torch.log2(d) + m


class MergeSpy(AttnSpy):
    def result(self, a: dict[str, Any]) -> Any:
        if "s_a" in a:
            return old_merge(a["v_a"], a["s_a"], a["v_b"], a["s_b"])
        if "s_other" in a:
            v, s = old_merge(a["v"], a["s"], a["v_other"], a["s_other"])
            keep = a["mask"] is not None
            rows = a["mask"].view(-1, 1) if keep else torch.ones_like(s, dtype=torch.bool)
            a["v"].copy_(torch.where(rows.unsqueeze(-1), v, a["v"]))
            a["s"].copy_(torch.where(rows, s, a["s"]))
            return None
        s = a["s"]  # merge_states: state_t from m = -5e4, d = 1, o = 0
        m = torch.fmax(s.amax(1), torch.tensor(-5e4))
        d = torch.exp2(-5e4 - m) + torch.exp2(s - m.unsqueeze(1)).sum(1)
        v = (a["v"] * torch.exp2(s - m.unsqueeze(1)).unsqueeze(-1)).sum(1) / d.unsqueeze(-1)
        return v, m + torch.log2(d)


def states() -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(3)
    va, vb = torch.randn(4, 2, D, generator=g), torch.randn(4, 2, D, generator=g)
    ninf = float("-inf")
    sa = torch.tensor([[ninf, 1.0], [ninf, ninf], [0.5, ninf], [2.0, 3.0]])
    sb = torch.tensor([[ninf, 0.0], [2.0, ninf], [ninf, ninf], [1.0, 1.0]])
    return va, sa, vb, sb


@pytest.mark.parametrize("release", ["0.2.0.post1", "0.6.7", "0.6.18.post1"])
def test_merge_state_of_two_empty_states_is_zero_and_minus_inf(release: str) -> None:
    va, sa, vb, sb = states()
    f, _ = build("merge_state", release, MergeSpy, False)
    v, s = f(va, sa, vb, sb)
    v_ref, s_ref = fixed_merge(va, sa, vb, sb)
    assert bool(old_merge(va, sa, vb, sb)[1].isnan().any())  # what the kernel gives
    assert torch.equal(s, s_ref) and torch.allclose(v, v_ref, atol=0, rtol=0)


@pytest.mark.parametrize("release", ["0.2.0.post1", "0.6.7", "0.6.18.post1"])
@pytest.mark.parametrize("masked", [False, True])
def test_merge_state_in_place_of_two_empty_states(release: str, masked: bool) -> None:
    va, sa, vb, sb = states()
    mask = torch.tensor([True, False, True, True]) if masked else None
    f, _ = build("merge_state_in_place", release, MergeSpy, False)
    v, s = va.clone(), sa.clone()
    f(v, s, vb, sb, mask=mask)
    v_ref, s_ref = fixed_merge(va, sa, vb, sb)
    if mask is not None:
        v_ref[~mask], s_ref[~mask] = va[~mask], sa[~mask]
    assert torch.equal(s, s_ref) and torch.equal(v, v_ref)


@pytest.mark.parametrize("release", ["0.2.0.post1", "0.6.7"])
def test_merge_states_of_empty_states_is_minus_inf(release: str) -> None:
    va, sa, vb, sb = states()
    f, _ = build("merge_states", release, MergeSpy, False)
    v, s = f(torch.stack([va, vb], 1), torch.stack([sa, sb], 1))
    both = torch.isneginf(sa) & torch.isneginf(sb)
    assert torch.equal(torch.isneginf(s), both)
    assert bool((v[both] == 0).all())


# -- the decision ---------------------------------------------------------------------------


def test_the_quick_decision_never_misses_a_short_request() -> None:
    """``any_short`` (C-level maps over the indptrs) against the per-request lengths: no
    false negative; a false positive only for a request with no query rows and no pages
    (the plan then looks closer and keeps no state)."""
    rng = random.Random(11)
    for _ in range(500):
        b = rng.randint(1, 12)
        page = rng.choice([1, 4, 16])
        qo = [rng.choice([0, rng.randint(0, 6)]) for _ in range(b)]
        kv = [rng.choice([0, rng.randint(0, 40)]) for _ in range(b)]
        qo_indptr = _i([0, *torch.tensor(qo).cumsum(0).tolist()])
        indptr, _, last = paged_batch(kv, page)
        want = any(q > k for q, k in zip(qo, kv, strict=True))
        got = er.any_short(qo_indptr, indptr, last, page)
        assert got or not want
        if got and not want:
            assert any(q == 0 and k == 0 for q, k in zip(qo, kv, strict=True))
        assert er.kv_lengths(indptr, last, page) == kv
        kv_indptr = _i([0, *torch.tensor(kv).cumsum(0).tolist()])
        assert er.any_short(qo_indptr, kv_indptr, None, 0) is want  # ragged: exact
        assert er._no_keys(indptr, last) is (0 in kv)


@pytest.mark.parametrize(("backend", "empty"), [("fa2", True), ("fa3", False)])
def test_a_request_without_pages_is_read_as_each_kernel_reads_it(backend: str, empty: bool) -> None:
    """No pages but ``last_page_len`` 3: FA2's ``get_length`` reads no key, FA3 reads the
    plan's host lengths (``get_seq_lens``: 3 keys)."""
    w = Wrapper(backend)
    kw = prefill_plan_args(PAGED, [2], [0], True)
    kw["paged_kv_last_page_len"] = _i([3])
    build(f"{PAGED}.plan", "0.6.7")[0](w, **kw)
    (_o, lse), _, _ = run_call(PAGED, "0.6.7", w, 2, return_lse=True)
    assert bool(torch.isneginf(lse).all()) is empty


def test_a_decode_wrapper_of_a_release_without_backend_attribute() -> None:
    """Before 0.2.9 the decode wrapper has no ``_backend`` (FA2-family kernels only)."""
    w = Wrapper()
    del w._backend
    w._use_tensor_cores = True  # type: ignore[attr-defined]
    indptr, indices, last = paged_batch([3, 0], 4)
    build(f"{DEC}.plan", "0.2.3")[0](
        w, indptr, indices, last, H, H, D, 4, q_data_type=torch.bfloat16
    )
    (_o, lse), _, _ = run_call(DEC, "0.2.3", w, 2, return_lse=True)
    assert torch.isneginf(lse).all(1).tolist() == [False, True]
