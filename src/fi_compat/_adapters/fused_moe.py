"""Adapter tables for the FlashInfer fused-MoE entry points (0.5.0-0.7.4).

Read from the released sources (``pip download flashinfer-python==V``,
``flashinfer/fused_moe/core.py``; every signature is in ``_snapshots/fused_moe.*.json``):

* Stable signatures are 0.7.4's.  Parameters that 0.7.4 no longer has are appended
  keyword-only: ``tile_tokens_dim`` (removed in 0.6.0 from every TRTLLM entry point; in
  0.5.x required in the fp4 functions but only ever logged, never passed to the kernel:
  the stable default ``None`` is forwarded, which also skips 0.5.x's deprecation
  warning) and, for the
  fp4 functions, ``gated_act_type`` (renamed ``activation_type`` in 0.6.3, with
  ``ActivationType`` values: SwiGlu=0 became Swiglu=3, and 0 now means Gelu).
* Enum parameters take :mod:`fi_compat.enums` members, translated by name
  (``RoutingMethodType``/``ActivationType`` integers move in 0.6.8, 0.6.11, 0.6.13,
  0.6.14, 0.6.16, 0.6.18, 0.7.2, 0.7.4); the release's own member is passed when the
  real function is called (0.6.3's fp4 functions require the enum member).
* Parameters inserted mid-list in later releases (``do_finalize`` 0.6.5,
  ``per_token_scale`` 0.6.11, ``num_fused_shared_experts`` 0.6.15/0.6.17/0.7.0,
  ``norm_topk_prob``/``routing_replay_out`` 0.6.8, ``valid_hidden_size`` 0.7.0, ...) are
  dropped at their default on older releases (``num_fused_shared_experts`` also at ``0``,
  what ``None`` means where it exists), and a typed error names the release otherwise;
  the call is always by keyword.
* ``do_finalize``, ``use_shuffled_weight`` and ``tune_max_num_tokens`` are forwarded
  explicitly wherever present (their defaults held within 0.5.0-0.7.4, but
  ``use_shuffled_weight``'s flipped before and the call should say what it means);
  ``use_fused_finalize=None`` is resolved the way 0.7.4 does on 0.6.15-0.7.3.
* ``hidden_states_scale``, ``hidden_states_scale_layout`` and ``routing_logits`` are
  normalised per release (:mod:`fi_compat._adapters._moe_scales`).
* ``output`` (added to the bf16 and fp8 entry points in 0.6.14, copied into before) is
  checked on every release by a tensor contract, 0.6.14's rule (:class:`MoeOutput`,
  ``PAGE_NOTES``).
* No optional dependency: ``flashinfer.fused_moe`` imports without ``nvidia-cutlass-dsl``
  on every release (checked in the release matrix: 0.6.16 and 0.6.18 without it);
  with it on a CPU-only torch, 0.6.15-0.7.0.post1 fail in ``import flashinfer``
  (known issue ``cpu-torch-dsl-import-crash``).
"""

from __future__ import annotations

from .._core import Emulation, EntryPoint, Normalizer, Param
from .._core._facts import FACTS
from .._core.contract import Tensor
from .._core.facts import key as snapshot_key
from ..device import cutlass_moe_arch_problem, trtllm_moe_arch_problem
from ..enums import ACTIVATION_TO_GATED
from ..errors import InvalidArgumentError, UnsupportedParameterError
from ..registry import at_least
from ._elementwise import OutputCopy, any_cuda_device
from ._moe_scales import (
    Bf16RouteScale,
    Fp4Scales,
    Fp8BlockScales,
    FusedFinalize,
    OutputWidth,
    PackedRouting,
    RoutingLogits,
    bind_dtypes,
    debug_cutlass,
    debug_routed,
    validate_cutlass,
    validate_trtllm,
)
from .quantization import HOST_SWIZZLE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter


class LegacyGatedAct(Emulation):
    """``gated_act_type=GatedActType.X`` (the pre-0.6.3 spelling) -> ``activation_type``.

    fi_compat maps by meaning (SwiGlu -> Swiglu, GeGlu -> Geglu) on every release, so a
    caller that still spells it the old way never gets ActivationType 0 (Gelu)."""

    name = "legacy_gated_act"
    reads = ("gated_act_type",)
    params = ("gated_act_type",)

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        return kw["gated_act_type"] is not None

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        from .. import enums

        value = kw["gated_act_type"]
        name: str | None
        if type(value) is int and value in (0, 1):  # GatedActType never moved
            name = ("SwiGlu", "GeGlu")[value]
        elif type(value) is enums.GatedActType:
            name = value.name
        else:
            name = enums.flashinfer_member_name(value, "GatedActType")
        if name is None or name not in enums.GATED_TO_ACTIVATION:
            raise InvalidArgumentError(
                f"{adapter.entry.name}: gated_act_type must be fi_compat.enums.GatedActType"
                f".SwiGlu/.GeGlu (or 0/1); got {value!r}"
            )
        wanted = enums.ActivationType._members_[enums.GATED_TO_ACTIVATION[name]]
        current = adapter.stable_member("activation_type", kw["activation_type"])
        default = adapter.entry.params["activation_type"].default
        if current is not default and current is not wanted:
            raise InvalidArgumentError(
                f"{adapter.entry.name}: gated_act_type={value!r} and activation_type="
                f"{current!r} disagree; pass only activation_type"
            )
        kw["activation_type"] = wanted
        return None


class MoeOutput(OutputCopy):
    """``output=`` where the release lacks it (``trtllm_bf16_moe``, ``..._routed_moe``,
    ``trtllm_fp8_block_scale_moe`` and ``trtllm_fp8_per_tensor_scale_moe`` before
    0.6.14): the finalised result is copied into the buffer, which the tensor contract
    checked before the launch (0.6.14's rule, on every release).  An unfinalised call
    (``do_finalize=False``) returns the release's intermediates and leaves the buffer
    alone, as 0.7.4 does (it does not read ``output`` then); the extra results of a
    finalised call (``gemm1_lora_delta``: ``[output, expanded_idx_to_permuted_idx,
    gemm1_output]``, 0.6.13) are kept."""

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        return kw["do_finalize"] is not False

    def after(self, adapter: Adapter, kw: dict[str, Any], result: Any, state: object) -> Any:
        if not state:
            return result
        out = kw[self.param]
        if isinstance(result, (list, tuple)):
            out.copy_(result[0])
            return [out, *result[1:]]
        out.copy_(result)
        return out


# ``output`` of the TRTLLM-gen entry points, checked on every release (the buffer is
# copied into where fi_compat emulates it): flashinfer 0.6.14 added it to the bf16 and
# fp8 entry points with ``check_shape_dtype_device(output, (num_tokens, hidden_size),
# torch.bfloat16, hidden_states.device, "output")`` (``core.py``), which every later
# release keeps; the kernels write its rows in place (0.7.4's finalize ICHECKs
# ``output.IsContiguous()``).  Where the entry point has ``valid_hidden_size`` the width
# is left to :class:`OutputWidth` (``valid_hidden_size`` wide when given, 0.7.0+; FP4
# also narrower, 0.6.0+).
_OUTPUT_WHY = "the MoE result, written in place by the kernels"


def _contracts(*, width: bool) -> dict[str, Tensor]:
    return {
        "hidden_states": Tensor("num_tokens hidden"),
        "output": Tensor(
            "num_tokens hidden" if width else "num_tokens _",
            dtypes="bfloat16",
            contiguous=True,
            why=_OUTPUT_WHY,
        ),
    }


def _rmt() -> Param:
    return Param(
        "routing_method_type",
        enum="RoutingMethodType",
        note="integers moved in 0.6.8, 0.6.11, 0.6.18",
    )


def _act(*, fp4: bool = False) -> Param:
    if fp4:
        return Param(
            "activation_type",
            enum="ActivationType",
            ref="renamed from gated_act_type in 0.6.3 (fused_moe/core.py)",
            spelled=(("0.6.3", "gated_act_type", "GatedActType"),),
            enum_map=ACTIVATION_TO_GATED,
            note="gated_act_type (GatedActType: SwiGlu=0, GeGlu=1) before 0.6.3",
        )
    return Param("activation_type", enum="ActivationType", note="Swiglu only before it existed")


def _do_finalize() -> Param:
    return Param(
        "do_finalize",
        explicit=True,
        note="unfinalised outputs (do_finalize=False)",
    )


def _tune() -> Param:
    return Param("tune_max_num_tokens", hint=True, explicit=True, note="autotuner range only")


def _tile() -> Param:
    return Param(
        "tile_tokens_dim",
        hint=True,
        explicit=True,
        note="only logged by 0.5.x (None satisfies its required fp4 parameter), removed in 0.6.0",
    )


def _nfse() -> Param:
    """``num_fused_shared_experts``: ``0`` is what ``None`` means where it exists, and no
    shared expert is fused by the releases before."""
    return Param(
        "num_fused_shared_experts",
        neutral=(0,),
        neutral_ref="0.6.15 fused_moe/core.py:2207 (None -> 0); 0.6.15 data/csrc/"
        "trtllm_fused_moe_kernel_launcher.cu:2365 (value_or(0))",
    )


def _norm_topk() -> Param:
    return Param("norm_topk_prob", note="norm_topk_prob=False")


def _opt(name: str, note: str = "", hint: bool = False) -> Param:
    """An optional tensor/int that is dropped at None (or anywhere, for a hint)."""
    return Param(name, hint=hint, note=note)


def _ws() -> Param:
    return Param("workspace_buffer", hint=True, note="caller-provided scratch buffer")


def _trtllm_device_problem(pl: Any, cc: tuple[int, int]) -> str | None:
    """Why this GPU cannot run the release's TRTLLM-gen MoE: the launcher's
    architecture check, then whether the kernels' cubins can be loaded at all (an
    installed flashinfer-cubin, a populated cubin directory, or the artifact repository
    serving the first file the release fetches: ``<ArtifactPath.TRTLLM_GEN_BMM>/
    checksums.txt``, ``jit/fused_moe.py`` of every release).  Without cubins FlashInfer
    retries the download on every call (~35 s each); fi_compat answers before any
    launch.  Asked on a device's first call per entry point, and on every refused call:
    the local checks are a directory scan, the network verdict is the process's
    (:func:`fi_compat.device.cubins_reachable`), so no call after the first waits on
    the network."""
    why = trtllm_moe_arch_problem(pl, cc)
    if why is not None:
        return why
    import os

    from .._installation import count_cubins, cubin_dir_in_use
    from ..detection import detect
    from ..device import cubins_reachable

    det = detect()
    if det.flashinfer is not None:
        d, _ = cubin_dir_in_use(det.flashinfer, det.cubin, dict(os.environ))
        if os.path.isdir(d) and count_cubins(d, limit=1):
            return None
    ok, reason = cubins_reachable(probe_network=True, timeout=3.0, group="TRTLLM_GEN_BMM")
    if ok:
        return None
    return (
        f"its TRTLLM-gen cubins cannot be loaded: {reason}. Fix: python -m fi_compat "
        f"download-cubin (once, with network), or install the matching flashinfer-cubin"
    )


# its architecture part alone, without the host's cubin probe: what ``python -m fi_compat
# diff`` compares between releases (fi_compat.cli.api.Coverage.facts)
_trtllm_device_problem.arch_only = trtllm_moe_arch_problem  # type: ignore[attr-defined]


_TRTLLM_GPUS = (
    "TRTLLM-gen kernels: SM10x on every release, SM12x admitted from 0.6.7 (launcher "
    "check); covered by contract tests, not run here (no SM100 GPU)"
)


# The MoE tables start at 0.5.0, the first wheel.  0.2.6-0.4.1 have most of these entry
# points already (cutlass_fused_moe from 0.2.6, the TRTLLM-gen ones from 0.2.8-0.2.10, the
# weight helpers from 0.2.9/0.2.13; snapshots in _snapshots/), with other signatures and
# scale layouts that no row here describes: fi_compat refuses them as below its floor.
MOE_FLOOR = "0.5.0"


def _entry(name: str, params: list[Param], **kw: Any) -> EntryPoint:
    emulations = list(kw.pop("emulations", ()))
    module = kw.pop("module", "flashinfer.fused_moe")
    # an output buffer (``output``, the helpers' ``out``) is copied into on releases
    # that lack it: every MoE entry point's buffer parameter, from its snapshot facts
    known = FACTS[snapshot_key(module, kw.get("attr") or name)][1]
    copies = [
        MoeOutput(n) if module == "flashinfer.fused_moe" and n == "output" else OutputCopy(n)
        for n in ("output", "out")
        if n in known
    ]
    params = [
        *params,
        *(Param(c.param, emulation="output_copy", note="output buffer") for c in copies),
    ]
    e = EntryPoint(
        facade="fi_compat.fused_moe",
        name=name,
        module=module,
        params=params,
        emulations=[*emulations, *copies],
        feature=kw.pop("feature", "moe.trtllm"),
        matrix_note=kw.pop("matrix_note", _TRTLLM_GPUS),
        floor=MOE_FLOOR,
        prepare=bind_dtypes,  # at the first call (a torch.compile trace must not bind them)
        **kw,
    )
    for c in copies:
        c.entry = e
    return e


def _fp4_params(routed: bool) -> list[Param]:
    head = [
        _rmt(),
        _do_finalize(),
        _act(fp4=True),
        _opt("per_token_scale", "per-token activation scales"),
        _tune(),
    ]
    if routed:
        tail = [
            _opt("gemm1_lora_delta", "LoRA delta of gemm1"),
            _opt("valid_hidden_size", "padded hidden size"),
            _opt("valid_intermediate_size", "padded intermediate size"),
            _nfse(),
            _layout(),
            _ws(),
            Param("nvfp4_4over6", note="NVFP4 4-over-6 quantisation"),
            _opt("routing_metadata", "precomputed routing metadata"),
        ]
    else:
        tail = [
            _norm_topk(),
            _opt("routing_replay_out", "routing replay buffer"),
            _nfse(),
            _opt("valid_hidden_size", "padded hidden size"),
            _opt("valid_intermediate_size", "padded intermediate size"),
            _layout(),
            _ws(),
            Param("nvfp4_4over6", note="NVFP4 4-over-6 quantisation"),
        ]
    legacy = [
        _tile(),
        Param(
            "gated_act_type",
            own=True,
            emulation="legacy_gated_act",
            note="pre-0.6.3 spelling of activation_type",
        ),
    ]
    return head + tail + legacy


def _layout() -> Param:
    return Param(
        "hidden_states_scale_layout",
        enum="SfLayout",
        note="scale layouts other than the release's fixed one",
    )


def _fp8_block_params(routed: bool) -> list[Param]:
    head = [
        _rmt(),
        Param("use_shuffled_weight", explicit=True),
        Param("weight_layout", enum="WeightLayout"),
        _do_finalize(),
    ]
    fp8q = Param(
        "fp8_quantization_type",
        enum="Fp8QuantizationType",
        note="DeepSeek FP8 only before 0.6.4",
    )
    if routed:
        return [
            *head,
            _opt("gemm1_lora_delta", "LoRA delta of gemm1"),
            _tune(),
            fp8q,
            _act(),
            _opt("gemm1_alpha"),
            _opt("gemm1_beta"),
            _opt("gemm1_clamp_limit"),
            _opt("valid_hidden_size", "padded hidden size"),
            _opt("valid_intermediate_size", "padded intermediate size"),
            _ws(),
        ]
    return [
        *head,
        _tune(),
        fp8q,
        _nfse(),
        _act(),
        _norm_topk(),
        _opt("routing_replay_out", "routing replay buffer"),
        _opt("gemm1_alpha"),
        _opt("gemm1_beta"),
        _opt("gemm1_clamp_limit"),
        _opt("valid_hidden_size", "padded hidden size"),
        _opt("valid_intermediate_size", "padded intermediate size"),
        _opt("gemm1_bias", "gemm1 bias"),
        _opt("gemm2_bias", "gemm2 bias"),
        _ws(),
        _tile(),
    ]


def _fp8_pt_params(routed: bool) -> list[Param]:
    head = [
        _rmt(),
    ]
    if routed:
        return [
            *head,
            _do_finalize(),
            _tune(),
            _act(),
            _opt("routing_replay_out", "routing replay buffer"),
            _opt("gemm1_clamp_limit"),
            _ws(),
        ]
    return [
        *head,
        _do_finalize(),
        _tune(),
        _act(),
        _norm_topk(),
        _opt("routing_replay_out", "routing replay buffer"),
        _opt("gemm1_clamp_limit"),
        _ws(),
        _tile(),
    ]


def _bf16_params(routed: bool) -> list[Param]:
    if routed:
        return [
            _rmt(),
            Param("use_shuffled_weight", explicit=True),
            Param("weight_layout", enum="WeightLayout"),
            _do_finalize(),
            _opt("gemm1_lora_delta", "LoRA delta of gemm1"),
            _tune(),
            _act(),
            _opt("routing_replay_out", "routing replay buffer"),
            _opt("gemm1_alpha"),
            _opt("gemm1_beta"),
            _opt("gemm1_clamp_limit"),
            _ws(),
        ]
    return [
        _rmt(),
        Param("use_shuffled_weight", explicit=True),
        Param("weight_layout", enum="WeightLayout"),
        _do_finalize(),
        _tune(),
        _act(),
        _norm_topk(),
        _opt("routing_replay_out", "routing replay buffer"),
        _opt("gemm1_alpha"),
        _opt("gemm1_beta"),
        _opt("gemm1_clamp_limit"),
        _ws(),
    ]


def _mxint4_params() -> list[Param]:
    return [
        _rmt(),
        _do_finalize(),
        _tune(),
        _norm_topk(),
        _opt("routing_replay_out", "routing replay buffer"),
        _opt("valid_hidden_size", "padded hidden size"),
        _opt("valid_intermediate_size", "padded intermediate size"),
        _ws(),
    ]


def _cutlass_params() -> list[Param]:
    return [
        Param("use_packed_weights", note="packed weights"),
        Param(
            "use_wfp4afp8_humming",
            note="W-FP4 A-FP8 'humming' kernels (absent 0.6.16.post3-0.6.17)",
        ),
        _tune(),
        Param("activation_type", enum="ActivationType"),
        Param("swizzled_input_sf", note="linear input_sf layout"),
        Param(
            "use_fused_finalize",
            note="choosing the finalize path (0.6.15+; None = fused unless "
            "torch.use_deterministic_algorithms, as 0.7.4 decides)",
        ),
        _opt("profile_ids", "fixed tactic ids", hint=True),
        _ws(),
        _opt("clamped_relu2_limit", "ClampedRelu2 limit"),
        _opt("situ_beta", "SiTU beta"),
        _opt("situ_linear_beta", "SiTU linear beta"),
        Param("backend", note="backends other than 'cutlass'"),
        Param("nvfp4_4over6", note="NVFP4 4-over-6 quantisation"),
    ]


_TRTLLM_ARGS = ("routing_logits", "hidden_states", "num_experts", "top_k")
_ROUTED_ARGS = ("topk_ids", "hidden_states", "num_experts", "top_k")


def _trtllm(name: str, params: list[Param], *norms: Any, **kw: Any) -> EntryPoint:
    routed = name.endswith("_routed_moe")
    valid = any(p.name == "valid_hidden_size" for p in params)
    if valid:  # the output's width is valid_hidden_size's where given
        norms = (*norms, OutputWidth(narrow=name.startswith("trtllm_fp4")))
    return _entry(
        name,
        params,
        contracts=_contracts(width=not valid),
        validate=validate_trtllm(f"fi_compat.fused_moe.{name}", routed=routed),
        devices=_trtllm_device_problem,
        debug=debug_routed if routed else None,
        validate_args=_ROUTED_ARGS if routed else _TRTLLM_ARGS,
        normalizers=norms,
        **kw,
    )


# releases from which a routed entry point reads a (topk_ids, topk_weights) pair
# (RoutingInputMode.UnpackedPrecomputed); before, one packed int32 tensor
_PAIRS_FP4 = "0.6.12"  # trtllm_fp4_block_scale_routed_moe: Union annotation, 0.6.12
_PAIRS = "0.6.18"  # fp8 block / fp8 per-tensor / bf16 routed: _split_precomputed_routing

SPECS: dict[str, EntryPoint] = {
    e.name: e
    for e in (
        _trtllm(
            "trtllm_fp4_block_scale_moe",
            _fp4_params(False),
            RoutingLogits(strict=False),
            Fp4Scales(),
            emulations=[LegacyGatedAct()],
        ),
        _trtllm(
            "trtllm_fp4_block_scale_routed_moe",
            _fp4_params(True),
            PackedRouting(_PAIRS_FP4),
            Fp4Scales(),
            emulations=[LegacyGatedAct()],
        ),
        _trtllm(
            "trtllm_fp8_block_scale_moe",
            _fp8_block_params(False),
            RoutingLogits(strict=True),
            Fp8BlockScales(),
        ),
        _trtllm(
            "trtllm_fp8_block_scale_routed_moe",
            _fp8_block_params(True),
            PackedRouting(_PAIRS),
            Fp8BlockScales(),
        ),
        _trtllm(
            "trtllm_fp8_per_tensor_scale_moe",
            _fp8_pt_params(False),
            RoutingLogits(strict=True, on_input=True),
        ),
        _trtllm(
            "trtllm_fp8_per_tensor_scale_routed_moe", _fp8_pt_params(True), PackedRouting(_PAIRS)
        ),
        _trtllm(
            "trtllm_bf16_moe",
            _bf16_params(False),
            RoutingLogits(strict=False),
            Bf16RouteScale(),
        ),
        _trtllm("trtllm_bf16_routed_moe", _bf16_params(True), PackedRouting(_PAIRS)),
        _trtllm("trtllm_mxint4_block_scale_moe", _mxint4_params(), RoutingLogits(strict=False)),
        _entry(
            "cutlass_fused_moe",
            _cutlass_params(),
            validate=validate_cutlass(),
            devices=cutlass_moe_arch_problem,
            debug=debug_cutlass,
            validate_args=("input", "token_selected_experts", "token_final_scales"),
            normalizers=(FusedFinalize(),),
            feature="moe.cutlass",
            matrix_note="CUTLASS kernels: SM89, SM90, SM100/103/110, SM120/121 (SM107 from "
            "0.6.18); JIT-built on first use",
        ),
    )
}


# -- weight/scale preparation helpers (top-level FlashInfer functions) ----------------


def _helper(name: str, params: list[Param], **kw: Any) -> EntryPoint:
    return _entry(
        name,
        params,
        module="flashinfer",
        feature="quantization",
        matrix_note=kw.pop("matrix_note", "weight preparation (host or GPU tensors)"),
        **kw,
    )


def _device_of(x: Any) -> int:
    """The CUDA index of ``x`` (-1 off CUDA); no other check (the helpers take any
    layout FlashInfer takes)."""
    return x.get_device()  # type: ignore[no-any-return]


HELPERS = {
    e.name: e
    for e in (
        _helper("shuffle_matrix_a", [Param("input_tensor"), Param("epilogue_tile_m")]),
        _helper(
            "shuffle_matrix_sf_a",
            [Param("input_tensor"), Param("epilogue_tile_m"), Param("num_elts_per_sf")],
        ),
        _helper(
            "block_scale_interleave",
            [],
            # the same function as fi_compat.quantization's: no host path from 0.4.0 (so
            # on every release served here), refused before the call
            validate=_device_of,
            validate_args=("unswizzled_sf",),
            devices=any_cuda_device,
            host_tensors=HOST_SWIZZLE,
            matrix_note="weight preparation (CUDA tensors: no host path from 0.4.0)",
        ),
        _helper("reorder_rows_for_gated_act_gemm", [Param("x")]),
    )
}

# -- MoE weight-layout helpers (pure torch index computations, run at weight load) --------
#
# Read from every release's sources (fused_moe/core.py, fused_moe/prepare.py, utils.py):
#
# * ``get_w2_permute_indices_with_cache`` (0.4.1+) and ``_maybe_get_cached_w3_w1_permute_
#   indices`` (0.2.11+) memoise their result in the caller's dict (engines keep one
#   ``_cache_permute_indices`` per layer object).  The key drifted: ``("w2"|"w3_w1",
#   shape)`` in 0.5.0-0.6.17, so a second call with the same shape but another
#   ``epilogue_tile_m`` (16- vs 32-row shuffle blocks) or, for w3_w1, another
#   ``is_gated_act_gemm`` got the FIRST call's permutation back (silently wrong
#   weights).  0.6.18 keys ``(tag, shape, epilogue_tile_m, num_elts_per_sf
#   [, is_gated_act_gemm])`` and 0.7.0 adds ``is_gated_act_gemm`` to the w2 key
#   (core.py, "Include every parameter that changes the generated permutation").
#   fi_compat gives every release 0.7.4's key (:class:`PermuteCache`): the dict holds
#   the same entries, under the same keys, as on 0.7.4, and the result is 0.7.4's.
# * ``is_gated_act_gemm`` of w3_w1 (0.6.3+): ``True`` is what older releases always do
#   (0.5.0 core.py: ``permute0 = get_reorder_rows_for_gated_act_gemm_row_indices(...)``
#   unconditionally).  Of w2 (0.7.0+): only a cache namespace, the permutation is the
#   same for every value (0.7.0 core.py comment "The row mapping is currently
#   identical"), so every value is neutral on older releases.
# * ``get_shuffle_matrix_sf_a_row_indices``: before 0.6.0 it asserts ``uint8`` input and
#   ``num_elts_per_sf == 16`` (0.6.0 also takes bfloat16 and 32), and before 0.6.12 ``K
#   % 4 == 0``; the row permutation itself never depends on them (it is
#   ``get_shuffle_matrix_a_row_indices`` of the same rows on every release).  A bare
#   ``AssertionError`` there is a typed refusal naming the release here
#   (:class:`SfRowIndices`), also for the two cached helpers with ``num_elts_per_sf``.
# * ``interleave_moe_scales_for_sm90_mixed_gemm`` returns the layout the installed
#   release's SM90 mixed-input CUTLASS kernel reads: ``[E, K/128, rows * 128/group]``
#   (uint8 scales only) in 0.6.10-0.6.15.post1, 0.6.16.post3 and 0.6.17;
#   ``[E, rows/64, K/128, folded_m, 128/bits]`` (any element size) in 0.6.16-0.6.16.post2
#   and 0.6.18+ (fused_moe/prepare.py, with the W4A8 ``quant_type="fp4_fp8"`` of the
#   weights helper; 0.6.16.post3 and 0.6.17 ship core.py's older versions again, read
#   from their wheels).  The result is forwarded as it is: reshaping it to another
#   release's layout would feed the kernel a layout it does not read.  What the release
#   rejects with ``ValueError`` is refused before the call (:class:`Sm90Prepare`).
_PERMUTE_KEY_W3_W1 = "0.6.18"  # (tag, shape, tile, num_elts_per_sf, is_gated_act_gemm)
_PERMUTE_KEY_W2 = "0.7.0"  # (tag, shape, tile, num_elts_per_sf, is_gated_act_gemm)
_SF_WIDE = "0.6.0"  # bfloat16 input and num_elts_per_sf=32 (utils.py asserts)
_SF_ANY_K = "0.6.12"  # no ``K % 4 == 0`` assert
_SM90_NEW = "0.6.16"  # scales of any element size, 5-D layout, "fp4_fp8" (prepare.py)
_SM90_OLD_AGAIN = "0.6.16.post3"  # 0.6.13's versions again (core.py)
_SM90_NEW_AGAIN = "0.6.18"


class _KeyedCache:
    """The caller's permute-index dict as an older release sees it: every key the
    release uses reads and writes the one 0.7.4 key of this call.  FlashInfer only does
    ``key in d``, ``d[key] = v`` and ``d[key]`` on it (0.5.0-0.6.17 core.py)."""

    __slots__ = ("_d", "_k")

    def __init__(self, d: Any, k: tuple[Any, ...]) -> None:
        self._d, self._k = d, k

    def __contains__(self, _key: object) -> bool:
        return self._k in self._d

    def __getitem__(self, _key: object) -> Any:
        return self._d[self._k]

    def __setitem__(self, _key: object, value: Any) -> None:
        self._d[self._k] = value

    def __eq__(self, other: object) -> bool:
        # a view of the caller's dict: equal to that very dict, or to a view of it
        # with the same key (the generated and reference paths build one each)
        if isinstance(other, _KeyedCache):
            return other._d is self._d and other._k == self._k
        return other is self._d

    __hash__ = None  # type: ignore[assignment]


class PermuteCache(Normalizer):
    """``_cache_permute_indices`` keyed as 0.7.4 keys it, on releases whose key is
    coarser (see the section comment): the dict handed to FlashInfer maps the release's
    key to 0.7.4's, so a shape seen before with another ``epilogue_tile_m`` or
    ``is_gated_act_gemm`` is computed, not served from the cache."""

    out = ("_cache_permute_indices",)

    def __init__(self, tag: str, weight: str, since: str) -> None:
        self.tag, self.since = tag, since
        self.args = ("_cache_permute_indices", weight, "epilogue_tile_m", "num_elts_per_sf",
                     "is_gated_act_gemm")  # fmt: skip
        self.boundaries = (since,)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, self.since):
            return None
        tag = self.tag

        def keyed(cache: Any, w: Any, tile: Any, nsf: Any, gated: Any) -> tuple[Any, ...]:
            return (_KeyedCache(cache, (tag, w.shape, tile, nsf, gated)),)

        return keyed


class SfRowIndices(Normalizer):
    """Refuse, before FlashInfer's bare ``assert``, a block-scale input the installed
    ``get_shuffle_matrix_sf_a_row_indices`` rejects (see the section comment)."""

    out = ()
    boundaries = (_SF_WIDE, _SF_ANY_K)

    def __init__(self, tensor: str, given_only: bool) -> None:
        self.args = (tensor, "num_elts_per_sf")
        self.only_if_given = ("num_elts_per_sf",) if given_only else ()

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, _SF_ANY_K):
            return None
        wide, where, release = at_least(pl, _SF_WIDE), adapter.entry.dotted, str(adapter.release)
        names = ("torch.uint8", "torch.bfloat16") if wide else ("torch.uint8",)
        name = self.args[0]

        def refuse(what: str, minimum: str, param: str) -> UnsupportedParameterError:
            return UnsupportedParameterError(
                f"{where}: {what} needs flashinfer-python>={minimum}; installed: {release}, "
                f"whose get_shuffle_matrix_sf_a_row_indices asserts it (utils.py). Fix: "
                f"pip install 'flashinfer-python>={minimum}'",
                parameter=param,
                installed=release,
                minimum=minimum,
            )

        def check(t: Any, nsf: Any) -> tuple[Any, ...]:
            if nsf is None:
                return ()
            if str(t.dtype) not in names:  # weight preparation (setup): no torch at build
                raise refuse(f"{name} of dtype {t.dtype}", _SF_WIDE, name)
            if nsf != 16 and not wide:
                raise refuse(f"num_elts_per_sf={nsf}", _SF_WIDE, "num_elts_per_sf")
            if t.dim() == 2 and t.shape[1] % 4:
                raise refuse(f"{name} with {t.shape[1]} columns (not a multiple of 4)",
                             _SF_ANY_K, name)  # fmt: skip
            return ()

        return check


def _sm90_new(pl: Any) -> bool:
    """The release has 0.6.16's SM90 mixed-GEMM preparation (fused_moe/prepare.py:
    scales of any element size in the 5-D layout, ``quant_type="fp4_fp8"``): 0.6.16,
    0.6.16.post1, 0.6.16.post2 and 0.6.18+.  0.6.16.post3 and 0.6.17 ship 0.6.13's
    versions again (in core.py; read from their wheels)."""
    return at_least(pl, _SM90_NEW_AGAIN) or (
        at_least(pl, _SM90_NEW) and not at_least(pl, _SM90_OLD_AGAIN)
    )


class Sm90Prepare(Normalizer):
    """A value of the SM90 mixed-GEMM preparation helpers the installed release rejects
    with ``ValueError`` (see :func:`_sm90_new`): non-uint8 ``scales`` of
    ``interleave_moe_scales_for_sm90_mixed_gemm`` ("scales must be uint8 (E8M0)"),
    ``quant_type="fp4_fp8"`` of ``interleave_moe_weights_for_sm90_mixed_gemm``; refused
    before the call, naming the release that takes it."""

    out = ()
    boundaries = (_SM90_NEW, _SM90_OLD_AGAIN, _SM90_NEW_AGAIN)

    def __init__(self, param: str) -> None:
        self.args = (param,)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or _sm90_new(pl):
            return None
        where, release, param = adapter.entry.dotted, str(adapter.release), self.args[0]
        minimum = _SM90_NEW if not at_least(pl, _SM90_NEW) else _SM90_NEW_AGAIN

        def refuse(what: str) -> UnsupportedParameterError:
            return UnsupportedParameterError(
                f"{where}: {what} needs flashinfer-python>={minimum} (0.6.16-0.6.16.post2 "
                f"or 0.6.18+; 0.6.16.post3 and 0.6.17 do not take it); installed: "
                f"{release}. Fix: pip install 'flashinfer-python>={_SM90_NEW_AGAIN}'",
                parameter=param,
                installed=release,
                minimum=minimum,
            )

        if param == "scales":

            def check(scales: Any) -> tuple[Any, ...]:
                if str(scales.dtype) != "torch.uint8":  # setup: no torch at build
                    raise refuse(f"scales of dtype {scales.dtype}")
                return ()

            return check

        def check_type(quant_type: Any) -> tuple[Any, ...]:
            if quant_type == "fp4_fp8":
                raise refuse("quant_type='fp4_fp8'")
            return ()

        return check_type


def _layout_helper(name: str, module: str, params: list[Param], **kw: Any) -> EntryPoint:
    return _entry(
        name,
        params,
        module=module,
        feature=kw.pop("feature", "quantization"),
        matrix_note=kw.pop("matrix_note", "weight preparation (host or GPU tensors)"),
        **kw,
    )


_CORE, _UTILS = "flashinfer.fused_moe.core", "flashinfer.utils"
_GATED_REF = (
    "0.5.0 fused_moe/core.py: permute0 = get_reorder_rows_for_gated_act_gemm_row_indices (always)"
)
_W2_GATED_REF = (
    "0.7.0 fused_moe/core.py: cache namespace only ('The row mapping is currently identical')"
)

LAYOUTS = {
    e.name: e
    for e in (
        _layout_helper(
            "get_w2_permute_indices_with_cache",
            _CORE,
            [
                Param("_cache_permute_indices", note="the caller's memo dict (0.7.4's keys)"),
                Param("is_gated_act_gemm", hint=True, note="cache namespace", ref=_W2_GATED_REF),
            ],
            normalizers=[
                PermuteCache("w2", "dst_w2_weight", _PERMUTE_KEY_W2),
                SfRowIndices("dst_w2_weight", given_only=True),
            ],
        ),
        _layout_helper(
            "maybe_get_cached_w3_w1_permute_indices",
            _CORE,
            [
                Param("_cache_permute_indices", note="the caller's memo dict (0.7.4's keys)"),
                # absent before 0.6.3: the default True is what those releases do
                Param("is_gated_act_gemm", ref=_GATED_REF),
            ],
            attr="_maybe_get_cached_w3_w1_permute_indices",
            normalizers=[
                PermuteCache("w3_w1", "dst_w3_w1_weight", _PERMUTE_KEY_W3_W1),
                SfRowIndices("dst_w3_w1_weight", given_only=True),
            ],
        ),
        _layout_helper("get_reorder_rows_for_gated_act_gemm_row_indices", _CORE, [Param("x")]),
        _layout_helper("convert_to_block_layout", "flashinfer.fused_moe", [Param("input_tensor")]),
        _layout_helper("get_shuffle_matrix_a_row_indices", _UTILS, [Param("input_tensor")]),
        _layout_helper(
            "get_shuffle_matrix_sf_a_row_indices",
            _UTILS,
            [Param("input_tensor")],
            normalizers=[SfRowIndices("input_tensor", given_only=False)],
        ),
        _layout_helper(
            "interleave_moe_scales_for_sm90_mixed_gemm",
            "flashinfer.fused_moe",
            [Param("scales")],
            normalizers=[Sm90Prepare("scales")],
        ),
        _layout_helper(
            "interleave_moe_weights_for_sm90_mixed_gemm",
            "flashinfer.fused_moe",
            [],
            normalizers=[Sm90Prepare("quant_type")],
            devices=any_cuda_device,
            matrix_note="weight preparation (CUDA tensors: a CUTLASS kernel)",
        ),
        _layout_helper(
            "fused_topk_deepseek",
            "flashinfer.fused_moe",
            [Param("routing_replay_out", note="int16 expert-id record (0.6.8+)")],
            # a JIT kernel (get_dsv3_fused_routing_module), not the TRTLLM-gen MoE cubins:
            # the "moe" rows of the known-issues table do not apply
            feature="routing.dsv3",
            devices=any_cuda_device,
            matrix_note="DeepSeek-V3 routing kernel (CUDA tensors)",
        ),
    )
}

# docs/fused_moe.md, "Conventions" (tools/docs_model.py renders it above the tables)
PAGE_NOTES = """
**`output=` of the TRTLLM-gen entry points.** The buffer must be bfloat16
`[num_tokens, hidden]` (`hidden` unpacked: two values per `uint8` byte of NVFP4
`hidden_states`), contiguous and on `hidden_states`' device: the rule of flashinfer 0.6.14,
which added `output` to `trtllm_bf16_moe`, `trtllm_bf16_routed_moe`,
`trtllm_fp8_block_scale_moe` and `trtllm_fp8_per_tensor_scale_moe`
(`check_shape_dtype_device(output, (num_tokens, hidden_size), torch.bfloat16,
hidden_states.device)`), plus contiguity (the kernels write its rows in place; 0.7.4's
finalize checks it). fi_compat checks it before the launch on every release of every
TRTLLM-gen entry point, native or emulated, so a float32 or `[2, T, H]` buffer (and a
`[T, 1]` one for bf16/fp8) is the same `InvalidArgumentError` everywhere (before 0.6.14
those four copy the result into the buffer, and `copy_` would have converted or broadcast
it). With `valid_hidden_size`
(0.7.0+) the buffer is `[num_tokens, valid_hidden_size]`; the FP4 entry points also take a
narrower buffer from 0.6.0, whose launcher writes `output.size(1)` columns (0.5.x writes
`hidden` columns into any buffer: refused there, `UnsupportedParameterError` naming 0.6.0).
`do_finalize=False` returns the intermediates and leaves the buffer alone (0.7.4 does not
read it then). 0.7.x accepts, and skips checking, any buffer with `do_finalize=False`, and a
narrower fp8/bf16 buffer without `valid_hidden_size`; fi_compat holds those to 0.6.14's rule.

**DeepSeek FP8 block scales (`trtllm_fp8_block_scale_moe`, `..._routed_moe`).** Every
release 0.5.0-0.7.4 reads `hidden_states_scale` as float32 `[hidden // 128, num_tokens]`
(the launcher's checks; 0.7.4's docstring: "`[hidden_size // 128, seq_len]`"), and that is
what the stable API means: the dimensions are taken by position, never inferred from the
sizes. vLLM and SGLang pass exactly that (`a_sf.t().contiguous()` of their token-major
per-token-group scales). A token-major `[num_tokens, hidden // 128]` or flat tensor is
refused with the fix (`a_sf.t()`), at every size: a layout guessed from the shape would
read the same tensor the other way whenever `num_tokens == hidden // 128` (56 tokens at
hidden 7168), where a token-major tensor has the native shape. A strided tensor of the
native shape (`a_sf.t()` without `.contiguous()`) is made contiguous (one copy), because
the kernels read its memory row by row and FlashInfer itself would misread it.
`Fp8QuantizationType.MxFp8` (0.6.4+) scales are token-major `uint8`
`[num_tokens, hidden // 32]` (or flat), their only layout.

**Cubins.** A TRTLLM-gen call on a device is refused before any launch when its cubins
cannot be loaded: no matching `flashinfer-cubin`, no cubins in the directory FlashInfer
reads, and the artifact repository does not serve
`<FLASHINFER_CUBINS_REPOSITORY>/<ArtifactPath.TRTLLM_GEN_BMM>/checksums.txt`, the first file
every release's `jit/fused_moe.py` fetches (the path read from the installed
`flashinfer/artifacts.py`; the repository root is never asked, since FlashInfer only
fetches files under it). The repository is asked once per process (a 3 s `GET`); later
calls, refused or served, are answered from that verdict. `FLASHINFER_NO_DOWNLOAD`
(0.6.7.post1+) means no request.
"""

# -- autotuner bucket arithmetic (``flashinfer.fused_moe.utils``, host only) -----------------
#
# ``get_hybrid_num_tokens_buckets(max_num_tokens, min_num_tokens=1)`` and
# ``map_to_hybrid_bucket_uncapped(x)`` arrived in 0.6.10 (fused_moe/utils.py: power-of-2
# up to 256, steps of 256 to 2048, of 512 to 4096, power-of-2 beyond) and never changed
# through 0.7.4 (the same source and phase constants in every wheel).  Before 0.6.10 the
# MoE runners tune over ``get_last_power_of_2_num_tokens_buckets`` (other buckets, removed
# in 0.6.10): hybrid buckets computed there would not be the ones that release's kernels
# were tuned for, so there is no emulation: a typed refusal naming 0.6.10.
_BUCKETS = "flashinfer.fused_moe.utils"


def _bucket_helper(name: str) -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.fused_moe",
        name=name,
        module=_BUCKETS,
        params=(),
        feature="autotuner",
        matrix_note="host arithmetic, no GPU",
    )


BUCKETS = {
    e.name: e
    for e in (
        _bucket_helper("get_hybrid_num_tokens_buckets"),
        _bucket_helper("map_to_hybrid_bucket_uncapped"),
    )
}

ENTRIES = [*SPECS.values(), *HELPERS.values(), *LAYOUTS.values(), *BUCKETS.values()]

__all__ = ["BUCKETS", "ENTRIES", "HELPERS", "LAYOUTS", "PAGE_NOTES", "SPECS"]
