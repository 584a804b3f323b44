"""The calls ``tests/gpu/test_comm_gpu.py`` makes, as argument lists, in one place.

The GPU test builds every call to ``fi_compat.comm`` and to ``flashinfer.comm`` from these
functions; ``tests/static/test_comm_gpu_calls.py`` builds the same calls with CPU tensors
and binds each against the snapshot signatures of 0.6.7 and 0.7.4 (fi_compat's facade
with a spy as FlashInfer's function, FlashInfer's own signature for the direct call), so
a misspelt keyword or a slot off by one fails in CI, not on a lent multi-GPU machine.

Nothing here imports FlashInfer or needs CUDA: tensors, workspaces and enum members are
passed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

EPS = 1e-6
# The patterns the GPU test runs, by FlashInfer's member name (AllReduceFusionPattern of
# flashinfer/comm/trtllm_ar.py, 0.2.9+): the outputs each writes and the inputs it reads.
PATTERNS = {
    "kARResidualRMSNorm": (("residual_out", "norm_out"), ()),
    "kARResidualRMSNormFP8Quant": (("residual_out", "quant_out"), ("scale_factor",)),
    "kARResidualRMSNormFP4Quant": (
        ("residual_out", "quant_out", "scale_out"),
        ("scale_factor", "layout_code"),
    ),
}


@dataclass
class Buffers:
    """One rank's tensors of an ``allreduce_fusion`` call ``[tokens, hidden]``."""

    input: torch.Tensor
    residual_in: torch.Tensor
    rms_gamma: torch.Tensor
    residual_out: torch.Tensor
    norm_out: torch.Tensor
    quant_out: torch.Tensor | None = None
    scale_out: torch.Tensor | None = None
    scale_factor: torch.Tensor | None = None


def workspace_kwargs(
    world_size: int, rank: int, max_token_num: int, hidden_dim: int, dtype: torch.dtype
) -> dict[str, Any]:
    """``create_allreduce_fusion_workspace`` (0.6.0+), the same keywords through fi_compat
    and directly: the TRT-LLM IPC backend (single host; ``comm_backend=None`` is
    FlashInfer's ``TorchDistBackend`` over the default process group)."""
    return {
        "backend": "trtllm",
        "world_size": world_size,
        "rank": rank,
        "max_token_num": max_token_num,
        "hidden_dim": hidden_dim,
        "dtype": dtype,
    }


def allreduce_kwargs(
    b: Buffers, workspace: Any, pattern_name: str, pattern: Any, layout: Any = None
) -> dict[str, Any]:
    """``allreduce_fusion`` by keyword: ``pattern`` is fi_compat's member (through
    fi_compat) or FlashInfer's integer (direct); ``layout`` likewise, FP4 only."""
    outs, ins = PATTERNS[pattern_name]
    kw: dict[str, Any] = {
        "input": b.input,
        "workspace": workspace,
        "pattern": pattern,
        "launch_with_pdl": False,
        "residual_in": b.residual_in,
        "rms_gamma": b.rms_gamma,
        "rms_eps": EPS,
    }
    for name in outs:
        kw[name] = getattr(b, name)
    if "scale_factor" in ins:
        kw["scale_factor"] = b.scale_factor
    if "layout_code" in ins:
        kw["layout_code"] = layout
    return kw


def allreduce_fi_compat_kwargs(
    b: Buffers, workspace: Any, pattern_name: str, pattern: Any, layout: Any = None
) -> dict[str, Any]:
    """The fi_compat call adds ``trigger_completion_at_end=True``: 0.6.8+ take it (its
    default), 0.6.0-0.6.7 lack it and fi_compat drops it (a hint), so the call is the
    same on both eras."""
    return {
        **allreduce_kwargs(b, workspace, pattern_name, pattern, layout),
        "trigger_completion_at_end": True,
    }


def allreduce_positional_067(b: Buffers, workspace: Any, pattern: Any) -> tuple[Any, ...]:
    """``allreduce_fusion`` with the residual + RMSNorm pattern written positionally in
    0.6.0-0.6.7's order (``input, workspace, pattern, launch_with_pdl, output,
    residual_out, norm_out, quant_out, scale_out, residual_in, rms_gamma, rms_eps``), as
    code written for 0.6.7 calls it; through ``fi_compat.written_for("0.6.7")`` it binds
    the same on 0.7.4, whose slot 4 is ``trigger_completion_at_end`` (0.6.8)."""
    return (
        b.input,
        workspace,
        pattern,
        False,
        None,
        b.residual_out,
        b.norm_out,
        None,
        None,
        b.residual_in,
        b.rms_gamma,
        EPS,
    )


# -- MoE all-to-all (MoeAlltoAll, 0.6.0-0.7.2.post1) ----------------------------------------


def mapping_kwargs(world_size: int, rank: int) -> dict[str, Any]:
    """``Mapping`` of an expert-parallel group of all ranks (as FlashInfer's
    tests/comm/test_mnnvl_moe_alltoall.py builds it)."""
    return {
        "world_size": world_size,
        "rank": rank,
        "gpus_per_node": world_size,
        "tp_size": world_size,
        "moe_ep_size": world_size,
    }


def moe_init_kwargs(
    mapping: Any, max_num_tokens: int, top_k: int, num_experts: int, hidden: int, config: Any
) -> dict[str, Any]:
    """``MoeAlltoAll(...)``: the workspace sized from ``hidden_size``; ``mnnvl_config``
    carries a ``TorchDistBackend`` (FlashInfer's default is MPI)."""
    return {
        "mapping": mapping,
        "max_num_tokens": max_num_tokens,
        "top_k": top_k,
        "num_experts": num_experts,
        "hidden_size": hidden,
        "mnnvl_config": config,
    }


def dispatch_args(
    experts: torch.Tensor, payloads: list[torch.Tensor], runtime_max_tokens: int
) -> tuple[Any, ...]:
    """``dispatch`` positionally (its three leading parameters never moved)."""
    return (experts, payloads, runtime_max_tokens)


def combine_kwargs(payload: torch.Tensor, runtime_max_tokens: int) -> dict[str, Any]:
    return {
        "payload": payload,
        "runtime_max_tokens_per_rank": runtime_max_tokens,
        "payload_in_workspace": False,
    }
