"""``fi_compat.comm`` on several GPUs of one host, through fi_compat and directly through
``flashinfer.comm`` (one release per interpreter; tests/gpu/README.md has the commands).

One process per GPU (``torch.multiprocessing.spawn``), NCCL over the host's GPUs only,
``NCCL_NVLS_ENABLE=0`` (NVLink multicast off).  World sizes 2 and 4 where the host has
them.  Every argument list comes from ``tests/support/comm_gpu_calls.py``, which the
static suite binds against the snapshot signatures of 0.6.7 and 0.7.4.

* ``allreduce_fusion`` (0.6.0+) on a TRT-LLM IPC workspace: residual + RMSNorm
  (``kARResidualRMSNorm``), FP8 quant (``kARResidualRMSNormFP8Quant``, SM89+) and FP4
  quant (``kARResidualRMSNormFP4Quant``, SM100+: the kernel's FP4 conversion is under
  ``__CUDA_ARCH__ >= 1000``), against ``torch.distributed.all_reduce`` followed by a
  float32 torch residual add + RMSNorm (FP8: the quantised output times the scale; FP4:
  the residual only).  fi_compat's outputs equal FlashInfer's direct call bit for bit.
* The residual + RMSNorm call written positionally in 0.6.7's order through
  ``fi_compat.written_for("0.6.7")`` gives the keyword call's outputs on every release
  (0.6.8 inserted ``trigger_completion_at_end`` at slot 4).
* ``MoeAlltoAll`` (0.6.0-0.7.2.post1; 0.7.4 removed it): dispatch, identity experts,
  combine: each token selects one expert on every rank, so the combined output is
  ``world_size * x``.  Needs FlashInfer's MNNVL memory (NVLink up on every link and
  ``pidfd_getfd`` permitted, as FlashInfer's own tests/comm/conftest.py checks): skipped
  with the reason otherwise.

Each case writes a JSON line (release, pattern, world size, tokens, max abs error vs the
reference, equality with the direct call, p50 µs per call through fi_compat and direct,
CUDA events) to ``$FI_COMPAT_GPU_REPORT``.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from typing import Any

import pytest
import torch

pytestmark = pytest.mark.gpu

if not torch.cuda.is_available() or torch.cuda.device_count() < 2:  # pragma: no cover
    pytest.skip(
        "needs 2 or more CUDA GPUs on one host (one NCCL rank per GPU); "
        f"this host has {torch.cuda.device_count() if torch.cuda.is_available() else 0}",
        allow_module_level=True,
    )

import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

import fi_compat  # noqa: E402
from fi_compat import comm as fc  # noqa: E402
from fi_compat.enums import AllReduceFusionPattern, QuantizationSFLayout  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402
from support import comm_gpu_calls as calls  # noqa: E402

RELEASE = fi_compat.detect().flashinfer.version  # type: ignore[union-attr]
PL = place(RELEASE)
if not at_least(PL, "0.6.0"):  # pragma: no cover
    pytest.skip(
        f"allreduce_fusion / MoeAlltoAll are 0.6.0+; flashinfer-python {RELEASE} is installed",
        allow_module_level=True,
    )

os.environ["NCCL_NVLS_ENABLE"] = "0"  # NVLink multicast off (the spawned ranks inherit it)
SM = torch.cuda.get_device_capability()
WORLDS = [2, 4]
TOKENS = (16, 512)  # one-shot and two-shot all-reduce (FlashInfer's threshold is 128)
HIDDEN = 4096
DTYPE = torch.bfloat16
ITERS = 50


def _report(name: str, **fields: Any) -> None:
    path = os.environ.get("FI_COMPAT_GPU_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"release": RELEASE, "test": name, **fields}) + "\n")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _worker(rank: int, world: int, port: int, case: str, arg: str) -> None:
    torch.cuda.set_device(rank)
    dist.init_process_group(
        backend="nccl",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world,
        timeout=timedelta(minutes=10),  # the first call JIT-builds the comm module
    )
    try:
        CASES[case](rank, world, arg)
    finally:
        dist.destroy_process_group()


def _spawn(case: str, world: int, arg: str = "") -> None:
    if world > torch.cuda.device_count():
        pytest.skip(
            f"world size {world} needs {world} GPUs, this host has {torch.cuda.device_count()}"
        )
    mp.spawn(_worker, args=(world, _free_port(), case, arg), nprocs=world, join=True)


def _p50_us(*fns: Callable[[], Any]) -> list[float]:
    """p50 µs per call of each function, CUDA events, calls interleaved (every rank runs
    the same sequence: each call is a collective)."""
    for fn in fns:
        for _ in range(5):
            fn()
    torch.cuda.synchronize()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(ITERS):
        for t, fn in zip(times, fns, strict=True):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            t.append(start.elapsed_time(end) * 1e3)
    return [statistics.median(t) for t in times]


def _device() -> dict[str, Any]:
    return {"device": torch.cuda.get_device_name(), "sm": f"{SM[0]}.{SM[1]}"}


# -- allreduce_fusion --------------------------------------------------------------------


def _inputs(rank: int, tokens: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """This rank's input (its own seed); the residual and gamma are the same on every rank."""
    x = torch.randn(tokens, HIDDEN, generator=torch.Generator().manual_seed(1000 + rank))
    g = torch.Generator().manual_seed(7)
    residual = torch.randn(tokens, HIDDEN, generator=g)
    gamma = torch.randn(HIDDEN, generator=g)
    return tuple(t.to("cuda", DTYPE) for t in (x, residual, gamma))  # type: ignore[return-value]


def _reference(
    x: torch.Tensor, residual: torch.Tensor, gamma: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``torch.distributed.all_reduce`` (NCCL, bf16), then the residual add and RMSNorm in
    float32: ``(residual_out, norm_out)``."""
    ar = x.clone()
    dist.all_reduce(ar)
    res = ar.float() + residual.float()
    norm = res * torch.rsqrt(res.pow(2).mean(-1, keepdim=True) + calls.EPS) * gamma.float()
    return res, norm


def _buffers(
    x: torch.Tensor, residual: torch.Tensor, gamma: torch.Tensor, pattern: str, scale: float
) -> calls.Buffers:
    t, h = x.shape
    b = calls.Buffers(
        input=x.clone(),
        residual_in=residual,
        rms_gamma=gamma,
        residual_out=torch.empty_like(x),
        norm_out=torch.empty_like(x),
    )
    if pattern == "kARResidualRMSNormFP8Quant":
        # FlashInfer's kernel writes fp8(norm / scale_factor) (trtllm_allreduce_fusion.cuh)
        b.quant_out = torch.empty(t, h, dtype=torch.float8_e4m3fn, device=x.device)
        b.scale_factor = torch.tensor([scale], dtype=torch.float32, device=x.device)
    elif pattern == "kARResidualRMSNormFP4Quant":
        # two e2m1 values a byte, one e4m3 scale per 16 values (LINEAR layout)
        b.quant_out = torch.empty(t, h // 2, dtype=torch.uint8, device=x.device)
        b.scale_out = torch.empty(t * h // 16, dtype=torch.uint8, device=x.device)
        b.scale_factor = torch.tensor([scale], dtype=torch.float32, device=x.device)
    return b


def _written(b: calls.Buffers, pattern: str) -> list[torch.Tensor]:
    outs = [getattr(b, n) for n in calls.PATTERNS[pattern][0]]
    return [o.view(torch.uint8) if o.dtype == torch.float8_e4m3fn else o for o in outs]


def _case_allreduce(rank: int, world: int, pattern: str) -> None:
    import flashinfer.comm as fic

    ws_kw = calls.workspace_kwargs(world, rank, max(TOKENS), HIDDEN, DTYPE)
    ws_ours = fc.create_allreduce_fusion_workspace(**ws_kw)
    ws_theirs = fic.create_allreduce_fusion_workspace(**ws_kw)
    ours_pattern = getattr(AllReduceFusionPattern, pattern)
    their_pattern = getattr(fic.AllReduceFusionPattern, pattern)
    try:
        for tokens in TOKENS:
            x, residual, gamma = _inputs(rank, tokens)
            res_ref, norm_ref = _reference(x, residual, gamma)
            amax = float(norm_ref.abs().max())  # the same on every rank
            scale = amax / 448.0 if "FP8" in pattern else 448.0 * 6.0 / amax
            ours = _buffers(x, residual, gamma, pattern, scale)
            theirs = _buffers(x, residual, gamma, pattern, scale)
            kw_ours = calls.allreduce_fi_compat_kwargs(
                ours, ws_ours, pattern, ours_pattern, QuantizationSFLayout.LINEAR
            )
            kw_theirs = calls.allreduce_kwargs(
                theirs, ws_theirs, pattern, their_pattern, fic.QuantizationSFLayout.LINEAR
            )
            fc.allreduce_fusion(**kw_ours)
            fic.allreduce_fusion(**kw_theirs)
            torch.cuda.synchronize()

            errs = {}
            for name, b in (("fi_compat", ours), ("direct", theirs)):
                torch.testing.assert_close(
                    b.residual_out.float(), res_ref, rtol=2e-2, atol=0.1, msg=name
                )
                err = float((b.residual_out.float() - res_ref).abs().max())
                if pattern == "kARResidualRMSNorm":
                    torch.testing.assert_close(
                        b.norm_out.float(), norm_ref, rtol=2e-2, atol=0.1, msg=name
                    )
                    err = max(err, float((b.norm_out.float() - norm_ref).abs().max()))
                elif pattern == "kARResidualRMSNormFP8Quant":
                    assert b.quant_out is not None
                    deq = b.quant_out.float() * scale
                    # e4m3 keeps 3 mantissa bits: relative rounding error <= 2**-4
                    torch.testing.assert_close(deq, norm_ref, rtol=0.07, atol=0.1, msg=name)
                    err = max(err, float((deq - norm_ref).abs().max()))
                errs[name] = err
            equal = all(
                torch.equal(a, c)
                for a, c in zip(_written(ours, pattern), _written(theirs, pattern), strict=True)
            )
            us_ours, us_theirs = _p50_us(
                partial(fc.allreduce_fusion, **kw_ours),
                partial(fic.allreduce_fusion, **kw_theirs),
            )
            if rank == 0:
                _report(
                    "allreduce_fusion",
                    pattern=pattern,
                    world_size=world,
                    tokens=tokens,
                    hidden=HIDDEN,
                    dtype=str(DTYPE),
                    max_abs_err=errs["fi_compat"],
                    max_abs_err_direct=errs["direct"],
                    equal_to_direct=equal,
                    us_p50_fi_compat=us_ours,
                    us_p50_direct=us_theirs,
                    ratio=us_ours / us_theirs,
                    **_device(),
                )
            assert equal, (pattern, tokens, "fi_compat's outputs differ from the direct call")
            dist.barrier()
    finally:
        ws_ours.destroy()
        ws_theirs.destroy()


def _case_written_for(rank: int, world: int, _arg: str) -> None:
    """0.6.7's positional call through ``written_for("0.6.7")`` == the keyword call."""
    pattern = "kARResidualRMSNorm"
    member = AllReduceFusionPattern.kARResidualRMSNorm
    ws = fc.create_allreduce_fusion_workspace(
        **calls.workspace_kwargs(world, rank, max(TOKENS), HIDDEN, DTYPE)
    )
    old = fi_compat.written_for("0.6.7").comm
    try:
        for tokens in TOKENS:
            x, residual, gamma = _inputs(rank, tokens)
            res_ref, norm_ref = _reference(x, residual, gamma)
            kw_b = _buffers(x, residual, gamma, pattern, 1.0)
            pos_b = _buffers(x, residual, gamma, pattern, 1.0)
            kw = calls.allreduce_fi_compat_kwargs(kw_b, ws, pattern, member)
            pos = calls.allreduce_positional_067(pos_b, ws, member)
            fc.allreduce_fusion(**kw)
            returned = old.allreduce_fusion(*pos)
            torch.cuda.synchronize()
            equal = torch.equal(kw_b.norm_out, pos_b.norm_out) and torch.equal(
                kw_b.residual_out, pos_b.residual_out
            )
            err = float((pos_b.norm_out.float() - norm_ref).abs().max())
            us_kw, us_pos = _p50_us(
                partial(fc.allreduce_fusion, **kw), partial(old.allreduce_fusion, *pos)
            )
            if rank == 0:
                _report(
                    "allreduce_fusion-written_for-0.6.7",
                    pattern=pattern,
                    world_size=world,
                    tokens=tokens,
                    max_abs_err=err,
                    equal_to_keyword_call=equal,
                    us_p50_keyword=us_kw,
                    us_p50_written_for=us_pos,
                    **_device(),
                )
            # the most downstream output (norm_out) on every release
            assert returned.data_ptr() == pos_b.norm_out.data_ptr()
            assert equal, tokens
            torch.testing.assert_close(pos_b.residual_out.float(), res_ref, rtol=2e-2, atol=0.1)
            dist.barrier()
    finally:
        ws.destroy()


# -- MoeAlltoAll ----------------------------------------------------------------------------

MOE_PER_RANK = 4  # experts per rank
MOE_HIDDEN = 2048


def _moe_tokens(rank: int) -> int:
    return 48 + 16 * rank  # an uneven batch: runtime_max_tokens_per_rank is the largest


def _case_moe(rank: int, world: int, _arg: str) -> None:
    import flashinfer.comm as fic
    from flashinfer.comm.mnnvl import MnnvlConfig, TorchDistBackend

    tokens, max_tokens, top_k = _moe_tokens(rank), _moe_tokens(world - 1), world
    num_experts = world * MOE_PER_RANK
    # token t selects one expert on every rank: expert k * MOE_PER_RANK + (t + rank) % 4
    t = torch.arange(tokens).unsqueeze(1)
    k = torch.arange(top_k).unsqueeze(0)
    experts = (k * MOE_PER_RANK + (t + rank) % MOE_PER_RANK).to("cuda", torch.int32)
    g = torch.Generator().manual_seed(2000 + rank)
    x = torch.randn(tokens, MOE_HIDDEN, generator=g).to("cuda", DTYPE)
    expected = x.float() * top_k

    def round_trip(moe: Any) -> torch.Tensor:
        hidden, ids = moe.dispatch(*calls.dispatch_args(experts, [x, experts], max_tokens))
        # identity experts: each of this rank's experts a token selected returns its input
        local = ((ids // MOE_PER_RANK) == rank).sum(-1, keepdim=True).to(hidden.dtype)
        out: torch.Tensor = moe.combine(**calls.combine_kwargs(hidden * local, max_tokens))
        return out

    mk = calls.mapping_kwargs(world, rank)
    ours = fc.MoeAlltoAll(
        **calls.moe_init_kwargs(
            fc.Mapping(**mk),
            max_tokens,
            top_k,
            num_experts,
            MOE_HIDDEN,
            fc.mnnvl.MnnvlConfig(comm_backend=fc.mnnvl.TorchDistBackend()),
        )
    )
    theirs = fic.MoeAlltoAll(
        **calls.moe_init_kwargs(
            fic.Mapping(**mk),
            max_tokens,
            top_k,
            num_experts,
            MOE_HIDDEN,
            MnnvlConfig(comm_backend=TorchDistBackend()),
        )
    )
    got_ours = round_trip(ours).clone()
    dist.barrier()
    got_theirs = round_trip(theirs).clone()
    torch.cuda.synchronize()
    errs = [float((g.float() - expected).abs().max()) for g in (got_ours, got_theirs)]
    equal = torch.equal(got_ours, got_theirs)
    us_ours, us_theirs = _p50_us(lambda: round_trip(ours), lambda: round_trip(theirs))
    if rank == 0:
        _report(
            "MoeAlltoAll-dispatch-combine",
            pattern=f"identity experts, top_k={top_k}, {MOE_PER_RANK} experts/rank",
            world_size=world,
            tokens=[_moe_tokens(r) for r in range(world)],
            hidden=MOE_HIDDEN,
            max_abs_err=errs[0],
            max_abs_err_direct=errs[1],
            equal_to_direct=equal,
            us_p50_fi_compat=us_ours,
            us_p50_direct=us_theirs,
            ratio=us_ours / us_theirs,
            **_device(),
        )
    for got in (got_ours, got_theirs):
        assert got.shape == x.shape
        torch.testing.assert_close(got.float(), expected, rtol=1e-2, atol=1e-6)
    assert equal


CASES: dict[str, Callable[[int, int, str], None]] = {
    "allreduce": _case_allreduce,
    "written_for": _case_written_for,
    "moe": _case_moe,
}


# -- the tests (the parent process: one spawn each) -------------------------------------------


@pytest.mark.parametrize("world", WORLDS)
def test_allreduce_fusion_residual_rmsnorm(world: int) -> None:
    _spawn("allreduce", world, "kARResidualRMSNorm")


@pytest.mark.skipif(SM < (8, 9), reason="FP8 (e4m3) needs SM89 or newer")
@pytest.mark.parametrize("world", WORLDS)
def test_allreduce_fusion_fp8_quant(world: int) -> None:
    _spawn("allreduce", world, "kARResidualRMSNormFP8Quant")


@pytest.mark.skipif(
    SM < (10, 0),
    reason="FP4 quantisation in the fused all-reduce needs SM100+ "
    "(cvt_warp_fp16_to_fp4 is under __CUDA_ARCH__ >= 1000 in trtllm_allreduce_fusion.cuh)",
)
@pytest.mark.parametrize("world", WORLDS)
def test_allreduce_fusion_fp4_quant(world: int) -> None:
    _spawn("allreduce", world, "kARResidualRMSNormFP4Quant")


@pytest.mark.parametrize("world", WORLDS)
def test_positional_call_written_for_0_6_7_gives_the_keyword_result(world: int) -> None:
    _spawn("written_for", world)


def _pidfd_getfd_permitted() -> bool:
    """FlashInfer's tests/comm/conftest.py ``_check_pidfd_permissions``: MNNVL memory on
    x86_64 shares POSIX file descriptors with ``pidfd_getfd`` (SYS_PTRACE in a container)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = libc.syscall(434, os.getpid(), 0)  # pidfd_open
    if pidfd < 0:
        return False
    fd = libc.syscall(438, pidfd, 0, 0)  # pidfd_getfd
    os.close(pidfd)
    if fd >= 0:
        os.close(fd)
        return True
    return ctypes.get_errno() != 1  # EPERM


@pytest.mark.parametrize("world", WORLDS)
def test_moe_alltoall_round_trip(world: int) -> None:
    if at_least(PL, "0.7.4"):
        pytest.skip(
            f"MoeAlltoAll is 0.6.0-0.7.2.post1; flashinfer-python {RELEASE} removed it "
            "(replacement: flashinfer.moe_ep.NVLinkOneSidedAlltoAll)"
        )
    mem = fc.mnnvl.MnnvlMemory
    mem.initialize()
    if not mem.supports_mnnvl():
        pytest.skip(
            "MoeAlltoAll needs MNNVL memory: MnnvlMemory.supports_mnnvl() is False "
            "(not every NVLink of this GPU is up)"
        )
    if not _pidfd_getfd_permitted():
        pytest.skip(
            "MoeAlltoAll needs MNNVL memory: pidfd_getfd is not permitted "
            "(a container without SYS_PTRACE)"
        )
    _spawn("moe", world)
