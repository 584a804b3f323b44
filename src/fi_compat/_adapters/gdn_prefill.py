"""Adapter data and hooks for ``flashinfer.gdn_prefill.chunk_gated_delta_rule`` (0.6.0+).

Read from the released sources (``pip download flashinfer-python==V``, ``gdn_prefill.py``;
``src/fi_compat/_snapshots/gdn_prefill.chunk_gated_delta_rule.json`` has every signature):

* 0.6.0-0.6.18.post1: every SM90 path ends in ``cu_seqlens.to(torch.int64)`` ("C++
  kernel expects int64"; the CuTe-DSL SM90 path of 0.6.14+ too), so int64 is native
  and int32 costs a cast per call.  ``checkpoint_cu_starts`` must *be* int64 in
  0.6.8-0.6.12 (``ValueError`` otherwise) and is cast to int64 later in 0.6.x.
* 0.7.0+: the launch metadata is int32 (``cu_seqlens_i32 = cu_seqlens if int32 else
  cu_seqlens.to(torch.int32)``, ``_cake_gdn_prefill_i32`` in 0.7.4: "Int32 metadata is
  the zero-copy path"; the SM90 CuTe kernel compiles one variant per index dtype), so
  int32 is native; casting int64 once keeps one compiled kernel variant, not two.
* parameters appended release by release (all positional-or-keyword until 0.7.4, whose
  nine additions are keyword-only): 0.6.8 checkpoints, 0.6.14 ``use_cp``, 0.6.16
  ``state_indices``, 0.7.0 ``_cp_chunk_len``/``backend``, 0.7.1 ``max_seqlen`` (and
  ``backend="cudnn"``), 0.7.4 gate conventions, ``cu_seqlens_cpu``, pool indices,
  ``prefix_lens`` (and ``backend="sm120_cute"``).
* ``state_indices`` is served natively only on some architectures: SM100/SM103 in
  0.6.16-0.6.18.post1 ("state_indices is only supported on the SM100/SM103 GDN prefill
  kernel"), SM90/SM100/SM103/SM120 in 0.7.0-0.7.2.post1, plus SM8x in 0.7.4.
  Elsewhere (and before 0.6.16) fi_compat gathers the pool rows, runs the packed call
  and scatters the final states back.
* 0.6.16-0.6.17 raise ``NotImplementedError`` for ``state_indices`` whenever
  ``use_cp="auto"`` decides on context parallelism (the CP kernel had no pool I/O until
  0.6.18); fi_compat passes ``use_cp=False`` there, which is the path those releases
  would have to take anyway.
* 0.7.4 materialises the new gate conventions in torch for every non-cuDNN backend
  (``flashinfer/gdn_kernels/gates.py``: ``materialize_gates``); fi_compat applies the
  same formulas, in the same order and precision, on older releases.
"""

from __future__ import annotations

import itertools

from .._core import Emulation, EntryPoint, OptionalDependency, Param
from .._core.table import is_default
from .._device import capability
from ..errors import InvalidArgumentError, MissingArgumentError
from ..registry import VersionRange, at_least

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, cast

    from .._core import Adapter
else:

    def cast(_t: object, v: object) -> object:  # typing.cast without importing typing
        return v


NAME = "chunk_gated_delta_rule"
_INT: frozenset[Any] = frozenset()
_STATE: frozenset[Any] = frozenset()
_FP8: dict[Any, float] = {}  # torch float8 dtype -> its largest finite value
_U8: Any = None
_F32: Any = None


def _prepare() -> None:
    global _INT, _STATE, _FP8, _U8, _F32
    import torch

    _INT = frozenset((torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8))
    _STATE = frozenset(getattr(torch, n) for n in _ALL_STATE_DTYPES)
    _FP8 = {getattr(torch, n): m for n, m in _FP8_MAX.items()}
    _U8, _F32 = torch.uint8, torch.float32


def validate(
    q: Any,
    k: Any,
    v: Any,
    g: Any,
    beta: Any,
    cu_seqlens: Any,
    initial_state: Any,
    output: Any,
    output_state: Any,
) -> int:
    """Metadata-only checks (shape, rank, dtype, device); never reads tensor values.
    Returns the CUDA device index of the tensors (-1 off CUDA).

    Devices are compared by ``Tensor.get_device()`` (the CUDA index, -1 off-GPU): it
    catches CPU-vs-CUDA and cross-GPU mixes at a third of the cost of comparing
    ``torch.device`` objects.  On failure ``_diagnose`` finds and names the problem.
    """
    try:
        t, hq, d = q.shape
        tk, _, dk = k.shape
        tv, hv, dv = v.shape
        dq = q.get_device()
        ok = (
            t == tk == tv
            and d == dk == dv
            and cu_seqlens.dtype in _INT
            and cu_seqlens.dim() == 1
            and k.get_device() == dq
            and v.get_device() == dq
            and cu_seqlens.get_device() == dq
        )
        if ok and (g is not None or beta is not None):
            sab = (t, hq if hq > hv else hv)
            if g is not None:
                ok = g.shape == sab and g.get_device() == dq
            if ok and beta is not None:
                ok = beta.shape == sab and beta.get_device() == dq
        if ok and initial_state is not None:
            ok = initial_state.get_device() == dq and initial_state.dtype in _STATE
        if ok and output is not None:
            ok = output.get_device() == dq
        if ok and output_state is not None:
            ok = output_state.get_device() == dq and output_state.dtype in _STATE
    except (AttributeError, IndexError, TypeError, ValueError):
        ok = False
    if not ok:
        _diagnose(q, k, v, g, beta, cu_seqlens, initial_state, output, output_state)
    return dq  # type: ignore[no-any-return]


def _any_cuda_device(pl: Any, cc: tuple[int, int]) -> str | None:
    """Every release's own dispatch refuses an architecture it has no kernel for before
    launching (``NotImplementedError``, 0.6.7+ ``supported_compute_capability``), so
    fi_compat only refuses tensors that are not on CUDA at all."""
    return None


def _diagnose(*args: Any) -> None:
    """Slow path of ``validate``: find the first problem and raise a precise error."""
    import torch

    q, k, v, g, beta, cu, initial_state, output, output_state = args
    where = f"fi_compat.gdn_prefill.{NAME}"
    names = ("q", "k", "v")
    for n, x in zip(names, (q, k, v), strict=True):
        if not isinstance(x, torch.Tensor):
            raise InvalidArgumentError(
                f"{where}: {n} must be a torch.Tensor, got {type(x).__name__}"
            )
        if x.dim() != 3:
            hint = f" (FLA-style [1, T, H, D] inputs: pass {n}.squeeze(0))" if x.dim() == 4 else ""
            raise InvalidArgumentError(
                f"{where}: {n} must be 3-D [total_seq_len, num_heads, head_size] (packed "
                f"varlen layout), got shape {tuple(x.shape)}{hint}"
            )
    if cu is None:
        raise MissingArgumentError(
            f"{where}: cu_seqlens is required (every FlashInfer release runs GDN prefill in "
            f"varlen mode only): pass the [num_seqs + 1] cumulative sequence lengths, e.g. "
            f"torch.tensor([0, {q.shape[0]}], dtype=torch.int32, device=q.device)"
        )
    if not isinstance(cu, torch.Tensor):
        raise InvalidArgumentError(
            f"{where}: cu_seqlens must be a torch.Tensor, got {type(cu).__name__}"
        )
    if cu.dim() != 1:
        raise InvalidArgumentError(
            f"{where}: cu_seqlens must be 1-D [num_seqs + 1], got shape {tuple(cu.shape)}"
        )
    if cu.dtype not in _INT:
        raise InvalidArgumentError(
            f"{where}: cu_seqlens must have an integer dtype (int32 or int64), got {cu.dtype}"
        )
    t = q.shape[0]
    for n, x in zip(names, (q, k, v), strict=True):
        if x.shape[0] != t:
            raise InvalidArgumentError(
                f"{where}: q, k and v must have the same number of tokens (dim 0); q has {t}, "
                f"{n} has {x.shape[0]}"
            )
    d = q.shape[2]
    for n, x in zip(names, (q, k, v), strict=True):
        if x.shape[2] != d:
            raise InvalidArgumentError(
                f"{where}: q, k and v must have the same head size (dim 2); q has {d}, "
                f"{n} has {x.shape[2]}"
            )
    sab = (t, max(q.shape[1], v.shape[1]))
    for n, x in (("g", g), ("beta", beta)):
        if x is not None and (not isinstance(x, torch.Tensor) or tuple(x.shape) != sab):
            raise InvalidArgumentError(
                f"{where}: {n} must have shape [total_seq_len, num_sab_heads] = {sab} "
                f"(num_sab_heads = max(num_q_heads, num_v_heads)), got "
                f"{tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__}"
            )
    for n, x in (
        ("initial_state", initial_state),
        ("output", output),
        ("output_state", output_state),
    ):
        if x is not None and not isinstance(x, torch.Tensor):
            raise InvalidArgumentError(
                f"{where}: {n} must be a torch.Tensor or None, got {type(x).__name__}"
            )
        if x is not None and n != "output" and x.dtype not in _STATE:
            raise _state_dtype_error(n, x.dtype)
    dev = q.device
    for n, x in (
        ("k", k),
        ("v", v),
        ("cu_seqlens", cu),
        ("g", g),
        ("beta", beta),
        ("initial_state", initial_state),
        ("output", output),
        ("output_state", output_state),
    ):
        if x is not None and (x.device != dev or x.get_device() != q.get_device()):
            raise InvalidArgumentError(
                f"{where}: every tensor must be on q's device ({dev}); {n} is on {x.device}"
            )
    raise InvalidArgumentError(f"{where}: invalid arguments")  # pragma: no cover


# -- debug mode: value checks (host syncs) ----------------------------------------------

_INT32_MAX = 2**31 - 1


def debug_values(adapter: Adapter, kw: dict[str, Any]) -> None:
    """What metadata cannot show (``FI_COMPAT_DEBUG=1`` only; reads values, syncs):
    ``cu_seqlens`` starts at 0, never decreases and ends at ``total_seq_len``; int64
    offsets fit the int32 that 0.7.x reads (its ``.to(torch.int32)`` wraps silently);
    ``state_indices`` rows exist in the pool; ``checkpoint_cu_starts`` never decreases."""
    import torch

    where = f"fi_compat.gdn_prefill.{NAME}"
    q, cu = kw["q"], kw["cu_seqlens"]
    vals = cu.detach().to("cpu", torch.int64)
    t = q.shape[0]
    if vals.numel() < 2 or int(vals[0]) != 0:
        raise InvalidArgumentError(
            f"{where}: cu_seqlens must start at 0 and hold num_seqs + 1 offsets, got "
            f"{vals[:4].tolist()}..."
        )
    steps = vals[1:] - vals[:-1]
    if bool((steps < 0).any()):
        i = int(torch.nonzero(steps < 0)[0])
        raise InvalidArgumentError(
            f"{where}: cu_seqlens must be non-decreasing; cu_seqlens[{i + 1}] = "
            f"{int(vals[i + 1])} < cu_seqlens[{i}] = {int(vals[i])}"
        )
    if int(vals[-1]) != t:
        raise InvalidArgumentError(
            f"{where}: cu_seqlens must end at total_seq_len = q.shape[0] = {t}, got {int(vals[-1])}"
        )
    for name in ("cu_seqlens", "checkpoint_cu_starts"):
        x = kw[name]
        if x is None or adapter.native_dtypes.get(name) != "int32" or x.dtype != torch.int64:
            continue
        top = int(x.max()) if x.numel() else 0
        if top > _INT32_MAX:
            raise InvalidArgumentError(
                f"{where}: {name} holds {top}, beyond int32; flashinfer-python "
                f"{adapter.release} reads it as int32 (the cast would wrap)"
            )
    starts = kw["checkpoint_cu_starts"]
    if starts is not None and starts.numel() > 1:
        sv = starts.detach().to("cpu", torch.int64)
        if bool((sv[1:] < sv[:-1]).any()):
            raise InvalidArgumentError(f"{where}: checkpoint_cu_starts must be non-decreasing")
    idx = kw["state_indices"]
    pool = kw["initial_state"] if kw["initial_state"] is not None else kw["output_state"]
    if idx is not None and pool is not None and idx.numel():
        iv = idx.detach().to("cpu", torch.int64)
        lo, hi = int(iv.min()), int(iv.max())
        if lo < 0 or hi >= pool.shape[0]:
            raise InvalidArgumentError(
                f"{where}: state_indices must be rows of the state pool [0, {pool.shape[0]}), "
                f"got values in [{lo}, {hi}]"
            )


# -- emulations -------------------------------------------------------------------------

_GATE_PARAMS = ("gate_domain", "use_gate_in_kernel", "A_log", "dt_bias", "beta_is_logit")
_GATE_DEFAULTS: dict[str, Any] = {
    "gate_domain": "linear",
    "use_gate_in_kernel": False,
    "A_log": None,
    "dt_bias": None,
    "beta_is_logit": False,
}


class GateConventions(Emulation):
    """0.7.4's gate conventions on older releases, exactly as 0.7.4 materialises them.

    ``gate_domain="log"``: ``g = exp(g)``; ``use_gate_in_kernel``: ``g = exp(-exp(A_log)
    * softplus(g + dt_bias))``; ``beta_is_logit``: ``beta = sigmoid(beta)`` rounded to
    beta's dtype; all in float32 (flashinfer 0.7.4 ``gdn_kernels/gates.py``).
    """

    name = "gate_conventions"
    params = _GATE_PARAMS
    boundaries = ("0.7.4",)

    def describe(self, p: Any) -> str | None:
        return None if at_least(p, "0.7.4") else "0.7.4 gate conventions materialised in torch"

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.7.4"):  # flashinfer>=0.7.4: native (kw-only)
            return False
        return any(not is_default(kw[n], d) for n, d in _GATE_DEFAULTS.items())

    def may_apply(self, p: Any) -> bool:
        return True  # emulated before 0.7.4, checked (as 0.7.4 checks) from 0.7.4 on

    def check(self, adapter: Adapter, kw: dict[str, Any]) -> None:
        """0.7.4's ``validate_gate_inputs``: the same checks, in the same order."""
        import torch

        where = f"fi_compat.gdn_prefill.{NAME}"
        g, beta = kw["g"], kw["beta"]
        domain, in_kernel = kw["gate_domain"], bool(kw["use_gate_in_kernel"])
        a_log, dt_bias, logit = kw["A_log"], kw["dt_bias"], bool(kw["beta_is_logit"])
        if domain not in ("linear", "log"):
            raise InvalidArgumentError(
                f"{where}: gate_domain must be 'linear' or 'log', got {domain!r}"
            )
        if in_kernel and (g is None or a_log is None or dt_bias is None):
            raise MissingArgumentError(
                f"{where}: use_gate_in_kernel=True requires g, A_log and dt_bias"
            )
        if not in_kernel and (a_log is not None or dt_bias is not None):
            raise InvalidArgumentError(
                f"{where}: A_log and dt_bias require use_gate_in_kernel=True"
            )
        if logit and beta is None:
            raise MissingArgumentError(f"{where}: beta_is_logit=True requires beta")
        q = kw["q"]
        heads = max(q.shape[1], kw["v"].shape[1])
        for n, x in (("A_log", a_log), ("dt_bias", dt_bias)):
            if x is not None and (tuple(x.shape) != (heads,) or x.device != q.device):
                raise InvalidArgumentError(
                    f"{where}: {n} must have shape ({heads},) on q's device, got "
                    f"{tuple(x.shape)} on {x.device}"
                )
        floats = (torch.float32, torch.float16, torch.bfloat16)
        for n, x, ok in (
            ("g", g, floats),
            ("A_log", a_log, floats),
            ("dt_bias", dt_bias, floats),
            ("beta", beta, (torch.float32, q.dtype)),
        ):
            if x is not None and x.dtype not in ok:
                raise InvalidArgumentError(f"{where}: unsupported {n} dtype {x.dtype}")

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        import torch

        self.check(adapter, kw)
        g, beta = kw["g"], kw["beta"]
        in_kernel = bool(kw["use_gate_in_kernel"])
        a_log, dt_bias, logit = kw["A_log"], kw["dt_bias"], bool(kw["beta_is_logit"])
        domain = kw["gate_domain"]
        if in_kernel:
            log_alpha = -torch.exp(a_log.float()) * torch.nn.functional.softplus(
                g.float() + dt_bias.float()
            )
            g = torch.exp(log_alpha)
        elif domain == "log" and g is not None:
            g = torch.exp(g.float())
        if logit:
            beta = torch.sigmoid(beta.float()).to(beta.dtype).float()
        kw["g"] = g.float() if g is not None else None
        kw["beta"] = beta.float() if beta is not None else None
        kw.update(_GATE_DEFAULTS)
        return None


# compute-capability majors whose kernels read state_indices natively, per release
_POOL_NATIVE = (
    ("0.6.16", frozenset({10})),  # 0.6.16: SM100/SM103 CuTe-DSL kernel only
    ("0.7.0", frozenset({9, 10, 12})),  # 0.7.0: SM90/SM100/SM103/SM120
    ("0.7.4", frozenset({8, 9, 10, 12})),  # 0.7.4: + SM8x
)


_POOL_MAJORS: dict[str | None, frozenset[int]] = {}  # release -> its _POOL_NATIVE majors


def _pool_native(adapter: Adapter, q: Any) -> bool:
    majors = _POOL_MAJORS.get(adapter.release)
    if majors is None:
        pl = adapter.placement
        majors = frozenset()
        for since, m in _POOL_NATIVE:
            if pl is not None and at_least(pl, since):
                majors = m
        _POOL_MAJORS[adapter.release] = majors
    if not majors:
        return False
    cc = capability(q.device)
    return cc is not None and cc[0] in majors


class StatePool(Emulation):
    """``state_indices`` by gather / packed call / scatter where the release lacks it.

    Sequence ``i`` reads ``initial_state[state_indices[i]]`` and, with
    ``output_final_state=True``, writes its final state to
    ``output_state[state_indices[i]]``; the returned state is the ``output_state`` pool
    (as natively from 0.6.16).  The gathered rows are float32 (every release accepts
    float32 state; widening is exact); final states are rounded once to the pool's
    dtype as the native pool kernels store them (:func:`put_rows`: fp8 saturating).
    The packed call never sees the pool: with ``output_final_state=False`` the SM90
    paths (0.6.0-0.6.13 C++ kernel, 0.6.14+ CuTe DSL) still write packed rows
    ``0..num_seqs-1`` of any ``output_state`` they are given (``gdn_prefill.py``
    allocates scratch only when ``output_state is None``), which in a pool are other
    sequences' rows.
    Device-side only (``index_select``/``index_copy_``): no host sync, graph-capturable.
    """

    name = "state_pool"
    reads = ("cu_seqlens", "output_final_state", "output_state", "q", "state_indices")
    params = ("state_indices",)
    boundaries = tuple(s for s, _ in _POOL_NATIVE)

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        return kw["state_indices"] is not None and not _pool_native(adapter, kw["q"])

    def may_apply(self, p: Any) -> bool:
        return True  # absent before 0.6.16, architecture-dependent after

    def describe(self, p: Any) -> str | None:
        majors: frozenset[int] = frozenset()
        for since, m in _POOL_NATIVE:
            if at_least(p, since):
                majors = m
        if not majors:
            return "`state_indices` emulated (gather / packed call / scatter)"
        sm = "/".join(f"SM{m}x" for m in sorted(majors))
        return f"`state_indices` native on {sm}, emulated elsewhere"

    def check(self, adapter: Adapter, kw: dict[str, Any]) -> None:
        """The pool's consistency, before any call, emulated or native (the native
        releases raise ValueError inside FlashInfer for the same mistakes)."""
        idx = kw["state_indices"]
        num_seqs = kw["cu_seqlens"].shape[0] - 1
        if idx.dtype not in _INT or idx.dim() != 1 or idx.shape[0] != num_seqs:
            raise InvalidArgumentError(
                f"fi_compat.gdn_prefill.{NAME}: state_indices must be an integer tensor of "
                f"shape ({num_seqs},) (one pool row per sequence), got {tuple(idx.shape)} "
                f"{idx.dtype}"
            )
        if kw["output_final_state"] and kw["output_state"] is None:
            raise MissingArgumentError(
                f"fi_compat.gdn_prefill.{NAME}: state_indices with output_final_state=True "
                f"needs the output_state pool ([N_pool, H, V, K]) to write into (as "
                f"FlashInfer >=0.6.16 requires)"
            )

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        import torch

        self.check(adapter, kw)
        idx = kw["state_indices"]
        pool_in, pool_out = kw["initial_state"], kw["output_state"]
        want_final = bool(kw["output_final_state"])
        idx64 = idx if idx.dtype is torch.int64 else idx.to(torch.int64)
        if pool_in is not None:  # take_rows, inlined (the common call is bf16/fp32)
            if pool_in.dtype in _FP8:
                kw["initial_state"] = take_rows(pool_in, idx64)
            else:
                kw["initial_state"] = pool_in.index_select(0, idx64).to(torch.float32)
        kw["state_indices"] = None
        kw["output_state"] = None  # FlashInfer allocates the packed float32 state
        return (idx64, pool_out, want_final)

    def after(self, adapter: Adapter, kw: dict[str, Any], result: Any, state: object) -> Any:
        idx64, pool_out, want_final = cast("tuple[Any, Any, bool]", state)
        if not want_final:
            return result
        out, final = result
        if pool_out.dtype in _FP8:
            put_rows(pool_out, idx64, final)
        else:  # put_rows, inlined
            pool_out.index_copy_(0, idx64, final.to(pool_out.dtype))
        return out, pool_out


def take_rows(pool: Any, rows: Any) -> Any:
    """``pool[rows]`` widened to float32 (exact for every state dtype).  float8 rows are
    gathered as their bytes (a ``uint8`` view), which every torch build indexes on CPU
    and CUDA alike."""
    if pool.dtype in _FP8:
        return pool.view(_U8).index_select(0, rows).view(pool.dtype).to(_F32)
    return pool.index_select(0, rows).to(_F32)


def put_rows(target: Any, rows: Any, values: Any) -> Any:
    """``target[rows] = values`` (float32 rows), rounded once to ``target``'s dtype as
    the kernels that store it do (:func:`round_state`).

    float8 (``float8_e4m3fn``/``float8_e5m2``): clamped to +-finfo.max before the
    round-to-nearest-even cast, which is what flashinfer 0.7.x's native fp8 pool stores:
    its CuTe-DSL kernels convert the float32 state with ``.to(state dtype)``
    (``gdn_kernels/delta_rule_dsl/delta_rule_sm90.py`` ``kv_store``), i.e. PTX
    ``cvt.rn.satfinite`` (H200: 448 / 57344 for larger values, never inf / NaN), where
    torch's own cast gives inf (e5m2) and, depending on the build, NaN (e4m3fn); in range
    both round to nearest even, so the clamped cast is the kernel's store bit for bit
    (NaN aside).  torch has no ``index_copy_`` for
    float8 (``NotImplementedError`` on CPU and CUDA), so the rounded rows are written
    as their bytes (a ``uint8`` view): the same bits.
    """
    m = _FP8.get(target.dtype)
    if m is None:
        return target.index_copy_(0, rows, values.to(target.dtype))
    rounded = values.clamp(-m, m).to(target.dtype)
    target.view(_U8).index_copy_(0, rows, rounded.view(_U8))
    return target


class QkL2Norm(Emulation):
    """``use_qk_l2norm_in_kernel=True`` where the release ignores it: q and k are
    L2-normalised before the call, as 0.7.1+ do before dispatch.

    0.6.0-0.7.0 accept the flag on every path but pass it to no prefill kernel (0.6.7's
    Blackwell path raises ``ValueError`` for it; 0.7.0's ``cake_gdn`` refuses it and
    ``auto`` falls back to a kernel that ignores it).  0.7.1 added the step
    (``gdn_prefill.py``: "The chunked backends consume caller-normalized operands.
    Honor the public flag before dispatch"; ``gdn_kernels/qk_l2norm.normalize_qk``):
    each row widened to float32, multiplied by ``rsqrt(sum(x^2) + 1e-6)``, rounded once
    to the input dtype; bf16/fp16/fp32 only, q and k of one dtype.  fi_compat applies
    the same formula in torch (the GPU kernel's fast rsqrt may differ in the last
    float32 bit, below the rounding to bf16/fp16) and passes the flag as False.
    """

    name = "qk_l2norm"
    reads = ("use_qk_l2norm_in_kernel",)
    params = ("use_qk_l2norm_in_kernel",)
    boundaries = ("0.7.1",)

    def may_apply(self, p: Any) -> bool:
        return not at_least(p, "0.7.1")

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        pl = adapter.placement
        return kw["use_qk_l2norm_in_kernel"] is True and pl is not None and self.may_apply(pl)

    def describe(self, p: Any) -> str | None:
        if not self.may_apply(p):
            return None
        return "`use_qk_l2norm_in_kernel=True`: q, k L2-normalised in torch (0.7.1's formula)"

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        import torch

        q, k = kw["q"], kw["k"]
        ok = (torch.bfloat16, torch.float16, torch.float32)
        if q.dtype not in ok or k.dtype != q.dtype:
            raise InvalidArgumentError(
                f"fi_compat.gdn_prefill.{NAME}: use_qk_l2norm_in_kernel=True needs q and k "
                f"of one dtype among bfloat16/float16/float32 (as 0.7.1+ require), got "
                f"{q.dtype} and {k.dtype}"
            )
        kw["q"], kw["k"] = l2_normalize(q), l2_normalize(k)
        kw["use_qk_l2norm_in_kernel"] = False
        return None


def l2_normalize(x: Any) -> Any:
    """``normalize_qk``'s formula (flashinfer 0.7.1+): float32 rows, ``x * rsqrt(sum(x^2)
    + 1e-6)``, rounded to ``x``'s dtype."""
    import torch

    xf = x.float()
    return (xf * torch.rsqrt((xf * xf).sum(-1, keepdim=True) + 1e-6)).to(x.dtype)


class PoolWithoutAutoCP(Emulation):
    """flashinfer 0.6.16-0.6.17: native ``state_indices`` + ``use_cp="auto"`` -> ``False``.

    Those releases raise NotImplementedError when the auto heuristic picks the CP kernel
    for a pool call (its pool I/O arrived in 0.6.18); the non-CP kernel is the only path
    that serves the call there.
    """

    name = "pool_without_auto_cp"
    reads = ("q", "state_indices", "use_cp")
    params = ("use_cp",)
    guard_params = ("state_indices",)  # needed at use_cp's default "auto"
    boundaries = ("0.6.16", "0.6.18")

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        pl = adapter.placement
        return (
            pl is not None
            and VersionRange("0.6.16", "0.6.18").contains(pl)
            and kw["state_indices"] is not None
            and kw["use_cp"] == "auto"
            and _pool_native(adapter, kw["q"])
        )

    def may_apply(self, p: Any) -> bool:
        return VersionRange("0.6.16", "0.6.18").contains(p)

    def describe(self, p: Any) -> str | None:
        if self.may_apply(p):
            return '`use_cp="auto"` sent as `False` with native pools (CP kernel rejects them)'
        return None

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        kw["use_cp"] = False
        return None


# state dtypes each path reads and writes natively (GPU-checked on SM90, 2026-12-03:
# tools/gpu/probe_gdn.py), by compute-capability major; float32 everywhere
_ALL_STATE_DTYPES = ("float32", "bfloat16", "float16", "float8_e4m3fn", "float8_e5m2")
_STATE_NATIVE: tuple[tuple[str, dict[int | None, tuple[str, ...]]], ...] = (
    # SM90 C++ kernel (0.6.0-0.6.13): TVM_FFI_ICHECK_EQ(state dtype, float32); 0.6.7's
    # Blackwell CuTe path allocates and reads float32 only
    ("0.6.0", {}),
    # 0.6.8: SM100 CuTe kernel, "expected float32 or bfloat16"
    ("0.6.8", {10: ("float32", "bfloat16")}),
    # 0.6.14: SM100 reads all five; the SM90/SM120 CuTe-DSL and CP kernels raise
    # RuntimeError("initial_state must have dtype torch.float32"), and 0.6.14's SM90
    # kernel takes a float8 output_state without a check and writes NaN into it
    ("0.6.14", {10: _ALL_STATE_DTYPES}),
    # 0.7.0: every path (helpers.state_dtype_to_cutlass; _STATE_DTYPES)
    ("0.7.0", {None: _ALL_STATE_DTYPES}),
)
_STATE_PARAMS = ("initial_state", "output_state", "state_checkpoints")
_FP8_MAX = {"float8_e4m3fn": 448.0, "float8_e5m2": 57344.0}


def _native_state_dtypes(adapter: Adapter, q: Any) -> tuple[str, ...]:
    pl = adapter.placement
    table: dict[int | None, tuple[str, ...]] = {}
    for since, t in _STATE_NATIVE:
        if pl is not None and at_least(pl, since):
            table = t
    if None in table:
        return table[None]
    cc = capability(q.device)
    return table.get(cc[0] if cc else -1, ("float32",))


def _state_dtype_error(name: str, dtype: Any) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"fi_compat.gdn_prefill.{NAME}: {name} must be float32, bfloat16, float16, "
        f"float8_e4m3fn or float8_e5m2 (the state dtypes of flashinfer 0.7.0+), got {dtype}"
    )


def round_state(x: Any, dtype: Any) -> Any:
    """A float32 state in ``dtype``, as the kernels that store that dtype round it:
    round to nearest even once; float8 saturates to the largest finite value (PTX
    ``cvt.rn.satfinite``; 0.7.4 on the H200 stores 448 / 57344 for larger values, where
    torch's own cast gives NaN / inf)."""
    m = _FP8_MAX.get(str(dtype).rsplit(".", 1)[-1])
    return (x.clamp(-m, m) if m is not None else x).to(dtype)


class StateDtype(Emulation):
    """bf16/fp16/fp8 ``initial_state``, ``output_state`` and ``state_checkpoints`` where
    the release's kernel for this GPU reads and writes float32 only: widened to float32
    (exact), the call made with float32 buffers, the results rounded once into the
    caller's tensors (:func:`round_state`), as the releases that store these dtypes do
    (float32 accumulation, one conversion on store)."""

    name = "state_dtype"
    params = _STATE_PARAMS
    # where never needed, only state_checkpoints can fail check(): the metadata checks
    # (validate) refuse the other two's dtypes with the same error
    check_params = ("state_checkpoints",)
    boundaries = tuple(s for s, _ in _STATE_NATIVE[1:])

    def fast_test(self, name: str) -> str | None:
        if name == "state_checkpoints":
            return None  # added in 0.6.8: left out of the common call at its default
        return "{n} is None or {n}.dtype is _torch_float32"

    def may_apply(self, p: Any) -> bool:
        return not at_least(p, "0.7.0")

    def describe(self, p: Any) -> str | None:
        if not self.may_apply(p):
            return None
        return "non-float32 states computed in float32 where the kernel reads float32 only"

    def check(self, adapter: Adapter, kw: dict[str, Any]) -> None:
        for n in _STATE_PARAMS:
            x = kw[n]
            if x is not None and x.dtype not in _STATE:
                raise _state_dtype_error(n, x.dtype)

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        pl = adapter.placement
        if pl is None or not self.may_apply(pl):
            return False
        names = [
            str(x.dtype).rsplit(".", 1)[-1]
            for n in _STATE_PARAMS
            if (x := kw[n]) is not None and str(x.dtype) != "torch.float32"
        ]
        if not names:
            return False
        self.check(adapter, kw)
        native = _native_state_dtypes(adapter, kw["q"])
        return any(d not in native for d in names)

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        import torch

        f32 = torch.float32
        init = kw["initial_state"]
        if init is not None and init.dtype is not f32:
            kw["initial_state"] = init.float()
        back = []
        for n in ("output_state", "state_checkpoints"):
            x = kw[n]
            if x is not None and x.dtype is not f32:
                kw[n] = tmp = torch.empty(x.shape, dtype=f32, device=x.device)
                back.append((n, x, tmp))
        return back

    def after(self, adapter: Adapter, kw: dict[str, Any], result: Any, state: object) -> Any:
        back = cast("list[tuple[str, Any, Any]]", state)
        for n, user, tmp in back:
            user.copy_(round_state(tmp, user.dtype))
            if n == "output_state" and isinstance(result, tuple):
                result = (result[0], user)
        return result


class EmptySequences(Emulation):
    """Zero-length sequences (repeated ``cu_seqlens`` offsets) on SM90, given host-side
    lengths (``cu_seqlens_cpu``, or the debug mode, which reads ``cu_seqlens``).

    0.7.1 documents them ("Repeated adjacent offsets represent legal zero-length
    sequences") and 0.7.4 defines their final state as their initial state (zero
    without one).  On the H200 (tools/gpu/probe_gdn.py, tests/gpu/README.md):

    * 0.6.0-0.6.13, SM90 C++ kernel: the launch never returns.  Its loaders run a tail
      step at block ``num_blocks - 1`` also when ``num_blocks == 0``
      (``flat_collective_tma_warpspecialized_delta_rule.hpp``).  fi_compat launches the
      non-empty sequences only and assembles the outputs;
    * 0.6.14-0.7.4, SM90 CuTe-DSL kernel: the outputs are right, but the final state row
      of an empty sequence is never written (uninitialised memory).  fi_compat writes
      the initial state (or zeros) there, into the pool row with ``state_indices``.

    Without host-side lengths the call goes to FlashInfer unchanged (reading
    ``cu_seqlens`` would be a host sync); the known-issues table has both rows.
    """

    name = "empty_sequences"
    reads = ("cu_seqlens_cpu", "q")
    params = ("cu_seqlens_cpu",)
    boundaries = ("0.6.14",)

    def may_apply(self, p: Any) -> bool:
        return True

    def describe(self, p: Any) -> str | None:
        if at_least(p, "0.6.14"):
            return "SM90 zero-length sequences: final state = initial state (host lengths)"
        return "SM90 zero-length sequences skipped in the launch (host lengths)"

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        if kw["cu_seqlens_cpu"] is None:
            from .._core.facade import debug_enabled

            if not debug_enabled():
                return False
        cc = capability(kw["q"].device)
        return cc is not None and cc[0] == 9

    def skip_call(self, state: object) -> bool:
        return state is not None and cast("tuple[Any, ...]", state)[0] == "none"

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        import torch

        where = f"fi_compat.gdn_prefill.{NAME}"
        cu = kw["cu_seqlens"]
        host = kw["cu_seqlens_cpu"]
        offsets = (
            [int(v) for v in (host.tolist() if hasattr(host, "tolist") else host)]
            if host is not None
            else cu.tolist()
        )
        if len(offsets) != cu.shape[0]:
            raise InvalidArgumentError(
                f"{where}: cu_seqlens_cpu has {len(offsets)} offsets, cu_seqlens "
                f"{cu.shape[0]}: they must be the same offsets"
            )
        lens = [b - a for a, b in itertools.pairwise(offsets)]
        empty = [i for i, n in enumerate(lens) if n == 0]
        if not empty:
            return None
        full = [i for i, n in enumerate(lens) if n]
        dev = cu.device
        i_empty = torch.tensor(empty, dtype=torch.int64, device=dev)
        init, idx = kw["initial_state"], kw["state_indices"]
        at = adapter.placement
        n = len(lens)
        if full and at is not None and at_least(at, "0.6.14"):
            return ("rows", i_empty, init, idx, None, None, n)
        user_state = kw["output_state"]
        if not full:  # no token at all: nothing to launch, on any release
            return ("none", i_empty, init, idx, None, user_state, n)
        # 0.6.0-0.6.13: the C++ kernel must not see an empty sequence (pools are always
        # emulated there, so the states here are packed)
        if cu.is_cuda and torch.cuda.is_current_stream_capturing():
            raise InvalidArgumentError(
                f"{where}: sequences {empty} are empty; flashinfer-python {adapter.release}'s "
                f"SM90 kernel never returns for them, and fi_compat cannot leave them out "
                f"of a captured CUDA graph. Fix: capture without empty sequences, or "
                f"pip install 'flashinfer-python>=0.6.14'"
            )
        if kw["state_checkpoints"] is not None:
            raise InvalidArgumentError(
                f"{where}: sequences {empty} are empty; flashinfer-python {adapter.release}'s "
                f"SM90 kernel never returns for them, and fi_compat does not leave them out "
                f"of a call with state_checkpoints. Fix: pip install "
                f"'flashinfer-python>=0.6.14', or drop the empty sequences"
            )
        i_full = torch.tensor(full, dtype=torch.int64, device=dev)
        kw["cu_seqlens"] = torch.tensor(
            [offsets[0], *(offsets[i + 1] for i in full)], dtype=cu.dtype, device=dev
        )
        if init is not None:
            kw["initial_state"] = init.index_select(0, i_full)
        kw["output_state"] = None
        return ("packed", i_empty, init, None, i_full, user_state, n)

    def after(self, adapter: Adapter, kw: dict[str, Any], result: Any, state: object) -> Any:
        import torch

        if state is None:
            return result
        mode, i_empty, init, idx, i_full, user_state, n = cast("tuple[Any, ...]", state)
        if mode == "none":
            result = self._no_tokens_output(kw)
        if not kw["output_final_state"]:
            return result
        if mode == "rows":
            if kw["output_state_indices"] is not None:
                return result  # 0.7.4: such a sequence's write row is left as it is
            out, target = result
        else:
            out = result[0] if mode == "packed" else result
            q = kw["q"]
            h, d = max(q.shape[1], kw["v"].shape[1]), q.shape[2]
            target = user_state
            if target is None:
                target = torch.empty((n, h, d, d), dtype=torch.float32, device=q.device)
            if mode == "packed":
                put_rows(target, i_full, result[1])
        rows = i_empty if idx is None else idx.index_select(0, i_empty).to(torch.int64)
        put_rows(target, rows, _initial_rows(init, rows, target))
        return out, target

    @staticmethod
    def _no_tokens_output(kw: dict[str, Any]) -> Any:
        """Every sequence is empty: nothing to launch; the (empty) output tensor."""
        if kw["output"] is not None:
            return kw["output"]
        q = kw["q"]
        h = max(q.shape[1], kw["v"].shape[1])
        return q.new_empty((0, h, kw["v"].shape[2]))


def _initial_rows(init: Any, rows: Any, like: Any) -> Any:
    """Rows ``rows`` of the initial state in float32 (exact), or zeros without one, for
    :func:`put_rows` into ``like`` (which rounds them to its dtype)."""
    if init is None:
        return like.new_zeros((rows.shape[0], *like.shape[1:]), dtype=_F32)
    return take_rows(init, rows)


SPEC = EntryPoint(
    facade="fi_compat.gdn_prefill",
    name=NAME,
    module="flashinfer.gdn_prefill",
    params=(
        Param(
            "cu_seqlens",
            dtypes=(("0.6.0", "int64"), ("0.7.0", "int32")),
            note="int64 read natively by the <=0.6.x SM90 kernels, int32 from 0.7.0",
            ref="0.6.x gdn_prefill.py cu_seqlens.to(torch.int64); 0.7.0 int32 launch metadata",
        ),
        Param(
            "use_qk_l2norm_in_kernel",
            note="q/k L2 normalisation",
            ref="honoured from 0.7.1 (normalize_qk before dispatch); emulated before",
        ),
        Param("state_checkpoints", note="intermediate-state checkpoints"),
        Param(
            "checkpoint_cu_starts",
            dtypes=(("0.6.8", "int64"), ("0.7.0", "int32")),
            note="intermediate-state checkpoints",
        ),
        Param("checkpoint_every_n_tokens", note="intermediate-state checkpoints"),
        Param(
            "use_cp",
            neutral=(False,),
            neutral_ref="0.6.14 gdn_prefill.py:308 (CP only for use_cp=True or 'auto' "
            "when the heuristic matches; False: the non-CP kernel, the only one before)",
            note="context-parallel kernels; False/'auto' mean no CP before 0.6.14",
            ref="0.6.14 added the CP kernels (gdn_prefill.py use_cp)",
        ),
        Param(
            "state_indices",
            emulation="state_pool",
            dtypes=(("0.6.16", "int32"),),
            ref="0.6.16 SM100 pools; 0.7.0 SM90/SM120; 0.7.4 SM8x (gdn_prefill.py)",
        ),
        Param("_cp_chunk_len", note="internal CP chunk-length override"),
        Param(
            "backend",
            neutral=("flashinfer",),
            neutral_ref="0.7.0 gdn_prefill.py:891 (backend != 'flashinfer' tries Cake GDN; "
            "'flashinfer' runs the FlashInfer kernels, the only ones before 0.7.0)",
            value_since={
                "auto": "0.7.0",
                "flashinfer": "0.7.0",
                "cake_gdn": "0.7.0",
                "cudnn": "0.7.1",
                "sm120_cute": "0.7.4",
            },
            note="backend choice; before 0.7.0 the FlashInfer kernels are the only backend",
            ref="0.7.0 gdn_prefill.py backend dispatch; cudnn 0.7.1; sm120_cute 0.7.4",
        ),
        Param("max_seqlen", hint=True),
        Param("gate_domain", emulation="gate_conventions"),
        Param("use_gate_in_kernel", emulation="gate_conventions"),
        Param("A_log", emulation="gate_conventions"),
        Param("dt_bias", emulation="gate_conventions"),
        Param("beta_is_logit", emulation="gate_conventions"),
        Param("cu_seqlens_cpu", hint=True),
        Param("output_state_indices", note="separate read/write pool rows"),
        Param("checkpoint_state_indices", note="checkpoints into a state pool"),
        Param("prefix_lens", note="checkpoints at absolute token positions"),
    ),
    validate=validate,
    validate_args=(
        "q",
        "k",
        "v",
        "g",
        "beta",
        "cu_seqlens",
        "initial_state",
        "output",
        "output_state",
    ),
    prepare=_prepare,
    devices=_any_cuda_device,
    debug=debug_values,
    # before() runs in this order, after() in the reverse one: the state-dtype and
    # empty-sequence hooks see the packed float32 states of an emulated pool
    emulations=(
        QkL2Norm(),
        GateConventions(),
        StatePool(),
        PoolWithoutAutoCP(),
        StateDtype(),
        EmptySequences(),
    ),
    feature="gdn.prefill",
    optional_deps=(
        OptionalDependency(
            VersionRange("0.6.15"),
            "cutlass",
            "nvidia-cutlass-dsl",
            ("cu12", "cu13"),
            "flashinfer.gdn_prefill imports its CuTe-DSL kernels unguarded from 0.6.15 on",
        ),
    ),
)

ENTRIES = [SPEC]
