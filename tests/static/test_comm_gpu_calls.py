"""The calls of ``tests/gpu/test_comm_gpu.py`` (built by ``tests/support/comm_gpu_calls.py``)
bound against the snapshot signatures of the two releases the GPU run uses, 0.6.7 (before
0.6.8's ``trigger_completion_at_end``) and 0.7.4: through fi_compat's facade with a spy as
FlashInfer's function, and as the direct ``flashinfer.comm`` call.  The GPU file needs
several GPUs; a misspelt keyword or a slot off by one in it fails here, on CPU."""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import pytest
import torch

from fi_compat import _snapshot_io as snapshots
from fi_compat import (
    comm,  # noqa: F401  (importing the facade module binds its stubs)
    enums,
    errors,
)
from fi_compat._core.written import binder
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support import comm_gpu_calls as calls
from support.comm_cases import ENTRIES, RESULT, CommSpy, Receiver, facade
from support.spy import _KIND, snapshot_signature

RELEASES = ["0.6.7", "0.7.4"]
GPU_FILE = Path(__file__).parents[1] / "gpu" / "test_comm_gpu.py"
T, H = 4, 32


def _direct(key: str, release: str) -> CommSpy:
    """FlashInfer's own function of ``release`` (its snapshot signature)."""
    e = ENTRIES[key]
    return CommSpy(snapshot_signature(release, e), e.receiver is not None)


def _class_signature(snapshot: str, release: str) -> inspect.Signature:
    """A re-exported class's constructor (``self`` first) from its snapshot."""
    data = json.loads((snapshots.DIR / f"{snapshot}.json").read_text())
    rec = data["releases"][release]
    assert rec is not None, (snapshot, release)
    return inspect.Signature(
        inspect.Parameter(
            n,
            _KIND[k],
            default=inspect.Parameter.empty
            if d is None or k in ("va", "vk")
            else d,  # its source text: binding needs only whether there is one
        )
        for n, k, d, _a in data["signatures"][rec["signature"]]
    )


def _buffers(pattern: str) -> calls.Buffers:
    x = torch.zeros(T, H, dtype=torch.bfloat16)
    b = calls.Buffers(
        input=x.clone(),
        residual_in=x.clone(),
        rms_gamma=torch.ones(H, dtype=torch.bfloat16),
        residual_out=x.clone(),
        norm_out=x.clone(),
    )
    if pattern != "kARResidualRMSNorm":
        b.quant_out = torch.zeros(T, H, dtype=torch.uint8)
        b.scale_out = torch.zeros(T * H // 16, dtype=torch.uint8)
        b.scale_factor = torch.ones(1)
    return b


@pytest.mark.parametrize("release", RELEASES)
def test_workspace_call_binds(release: str) -> None:
    kw = calls.workspace_kwargs(2, 0, 512, 4096, torch.bfloat16)
    fn, spy, _ = facade("create_allreduce_fusion_workspace", release)
    assert fn(**kw) is RESULT
    sent = spy.raw_kwargs[-1]
    assert all(sent[k] == v for k, v in kw.items()), sent
    direct = _direct("create_allreduce_fusion_workspace", release)
    direct(**kw)
    assert direct.calls[-1]["backend"] == "trtllm"


@pytest.mark.parametrize("pattern", list(calls.PATTERNS))
@pytest.mark.parametrize("release", RELEASES)
def test_allreduce_fusion_calls_bind(release: str, pattern: str) -> None:
    """fi_compat's keyword call reaches the release with the GPU test's tensors, the
    pattern / layout as the release's integers and ``trigger_completion_at_end`` only
    from 0.6.8; the direct call (FlashInfer's integers) binds the release's signature."""
    ws = object()
    b = _buffers(pattern)
    pat = enums.AllReduceFusionPattern
    values = pat.values_in(release) or {}
    layouts = enums.QuantizationSFLayout.values_in(release) or {}
    fn, spy, _ = facade("allreduce_fusion", release)
    fn(
        **calls.allreduce_fi_compat_kwargs(
            b, ws, pattern, getattr(pat, pattern), enums.QuantizationSFLayout.LINEAR
        )
    )
    sent = spy.raw_kwargs[-1]
    assert int(sent["pattern"]) == values[pattern]
    assert ("trigger_completion_at_end" in sent) == at_least(place(release), "0.6.8")
    outs, ins = calls.PATTERNS[pattern]
    for name in ("input", "residual_in", "rms_gamma", *outs):
        assert sent[name] is getattr(b, name), name
    assert sent["workspace"] is ws
    if "layout_code" in ins:
        assert int(sent["layout_code"]) == layouts["LINEAR"]
    direct = _direct("allreduce_fusion", release)
    direct(**calls.allreduce_kwargs(b, ws, pattern, values[pattern], layouts["LINEAR"]))
    theirs = direct.raw_kwargs[-1]
    for k, v in theirs.items():  # the same objects as fi_compat's call
        if k not in ("pattern", "layout_code"):
            assert sent[k] is v, k
    assert theirs["pattern"] == values[pattern] and set(theirs) <= set(sent)


@pytest.mark.parametrize("release", RELEASES)
def test_positional_call_written_for_0_6_7(release: str) -> None:
    """The tuple is 0.6.7's order (bound against 0.6.7's own signature it lands on the
    intended names); the stable facade refuses it (slot 4 moved in 0.6.8); through
    ``written_for("0.6.7")`` it reaches ``release`` as the keyword call does."""
    b = _buffers("kARResidualRMSNorm")
    member = enums.AllReduceFusionPattern.kARResidualRMSNorm
    pos = calls.allreduce_positional_067(b, object(), member)
    own = snapshot_signature("0.6.7", ENTRIES["allreduce_fusion"]).bind(*pos).arguments
    assert own["output"] is None and own["residual_out"] is b.residual_out
    assert own["residual_in"] is b.residual_in and own["rms_eps"] == calls.EPS
    fn, spy, _ = facade("allreduce_fusion", release)
    with pytest.raises(errors.PositionalMismatchError):
        fn(*pos)
    assert spy.calls == []
    binder(fn, "0.6.7")(*pos)
    via_written = spy.raw_kwargs[-1]
    fn(**calls.allreduce_fi_compat_kwargs(b, pos[1], "kARResidualRMSNorm", member))
    keyword = spy.raw_kwargs[-1]
    for name in ("input", "workspace", "residual_out", "norm_out", "residual_in", "rms_gamma"):
        assert via_written[name] is keyword[name], name
    assert int(via_written["pattern"]) == int(keyword["pattern"])
    assert spy.calls[-2]["launch_with_pdl"] is False and spy.calls[-2]["rms_eps"] == calls.EPS


def test_moe_alltoall_calls_bind_on_0_6_7_and_the_gpu_skip_matches_0_7_4() -> None:
    release = "0.6.7"
    x = torch.zeros(T, H, dtype=torch.bfloat16)
    ids = torch.zeros(T, 2, dtype=torch.int32)
    mk = calls.mapping_kwargs(2, 1)
    for r in RELEASES:  # Mapping is FlashInfer's own class on both
        _class_signature("comm.Mapping.__init__", r).bind(object(), **mk)
        _class_signature("comm.mnnvl.MnnvlConfig.__init__", r).bind(object(), comm_backend=1)
        _class_signature("comm.mnnvl.TorchDistBackend.__init__", r).bind(object())
    mapping, config = object(), object()
    init = calls.moe_init_kwargs(mapping, 64, 2, 8, 2048, config)
    fn, spy, _ = facade("MoeAlltoAll.__init__", release)
    fn(Receiver(), **init)
    assert all(spy.raw_kwargs[-1][k] is v for k, v in init.items())
    _direct("MoeAlltoAll.__init__", release)(Receiver(), **init)
    d_args = calls.dispatch_args(ids, [x, ids], 64)
    fn, spy, _ = facade("MoeAlltoAll.dispatch", release)
    fn(Receiver(), *d_args)
    sent = spy.raw_kwargs[-1]
    assert sent["token_selected_experts"] is ids and sent["input_payloads"][0] is x
    assert sent["runtime_max_tokens_per_rank"] == 64
    _direct("MoeAlltoAll.dispatch", release)(Receiver(), *d_args)
    c_kw = calls.combine_kwargs(x, 64)
    fn, spy, _ = facade("MoeAlltoAll.combine", release)
    fn(Receiver(), **c_kw)
    assert spy.raw_kwargs[-1]["payload"] is x
    _direct("MoeAlltoAll.combine", release)(Receiver(), **c_kw)
    # the GPU test skips MoeAlltoAll from 0.7.4, where fi_compat refuses it as removed
    for key in ("MoeAlltoAll.__init__", "MoeAlltoAll.dispatch", "MoeAlltoAll.combine"):
        assert ENTRIES[key].until == "0.7.4"
        with pytest.raises(errors.UnsupportedFlashInferVersionError, match="removed"):
            ENTRIES[key].select(Distribution("flashinfer-python", "0.7.4", "<t>", "")).resolve()


# what the GPU file calls on fi_compat.comm (fc), flashinfer.comm (fic), written_for (old)
# and a MoeAlltoAll (moe), and the keyword each may spell out; all else comes from calls.*
BOUND = {
    "fc.create_allreduce_fusion_workspace",
    "fic.create_allreduce_fusion_workspace",
    "fc.allreduce_fusion",
    "fic.allreduce_fusion",
    "old.allreduce_fusion",
    "fc.MoeAlltoAll",
    "fic.MoeAlltoAll",
    "fc.Mapping",
    "fic.Mapping",
    "moe.dispatch",
    "moe.combine",
    "fc.mnnvl.MnnvlConfig",
    "fc.mnnvl.TorchDistBackend",
}
SPELLED = {"comm_backend"}  # MnnvlConfig(comm_backend=...), bound above


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def test_the_gpu_file_calls_only_what_is_bound_here() -> None:
    """Every call in the GPU file on ``fc`` / ``fic`` / ``old`` / ``moe`` (outside the
    ``partial`` timing loops, which repeat a bound call) takes its arguments from
    ``comm_gpu_calls`` (``*`` / ``**`` only) and is one this file binds."""
    tree = ast.parse(GPU_FILE.read_text())
    seen: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if name is None or name.split(".")[0] not in ("fc", "fic", "old", "moe"):
            continue
        if name.endswith((".destroy", ".initialize", ".supports_mnnvl")):
            continue
        seen.add(name)
        assert all(isinstance(a, ast.Starred) for a in node.args), (name, node.lineno)
        assert all(k.arg is None or k.arg in SPELLED for k in node.keywords), (name, node.lineno)
    assert seen == BOUND, seen ^ BOUND
