"""Adapter tables for FlashInfer's CuTe-DSL NVFP4 MoE family: the masked grouped GEMM
(``flashinfer.cute_dsl.blockscaled_gemm.grouped_gemm_nt_masked``), the scale-factor
view it reads (``flashinfer.cute_dsl.utils.convert_sf_to_mma_layout``), the masked
per-expert NVFP4 quantisers that feed it (``flashinfer.scaled_fp4_grouped_quantize``,
``flashinfer.silu_and_mul_scaled_nvfp4_experts_quantize``,
``flashinfer.nvfp4_batched_quantize``) and the fused CuTe-DSL MoE
(``flashinfer.fused_moe.cute_dsl_fused_moe_nvfp4``, ``CuteDslMoEWrapper``).

Read from the released sources (``_snapshots/cute_dsl.*.json``,
``_snapshots/flashinfer.*.json``, ``_snapshots/fused_moe.cute_dsl_fused_moe_nvfp4.json``):

* ``nvidia-cutlass-dsl``: ``flashinfer.cute_dsl.blockscaled_gemm`` (0.2.11.post3+),
  ``flashinfer.cute_dsl.utils`` (0.6.4+) and ``flashinfer.fused_moe.cute_dsl.fused_moe``
  (0.6.4+) import ``cutlass`` at module scope; ``flashinfer.cute_dsl`` and
  ``flashinfer.fused_moe`` export the names only ``if is_cute_dsl_available()``.  fi_compat
  imports the defining modules, so a missing package is an
  ``OptionalDependencyMissingError`` with the pip line: a plain dependency of 0.4.0-0.6.7
  (``Requires-Dist: nvidia-cutlass-dsl``; 0.2.11.post3-0.3.1 do not declare it), the
  ``cu12`` / ``cu13`` extras from 0.6.8.
* GPUs: the CuTe-DSL GEMM and MoE kernels are built for ``sm_100`` / ``sm_103`` only
  (``supported_sm_versions = ["sm_100", "sm_103"]``, 0.6.7
  ``gemm/kernels/grouped_gemm_masked_blackwell.py:539``; 0.7.4 adds SM107, Rubin, also
  major 10): family 100 (SM10x), not SM12x.  The three quantisers call the
  ``*_sm100`` ops of the FP4 quantisation module, whose kernels are under
  ``#if __CUDA_ARCH__ >= 1000`` (as ``fp4_quantize``): SM100 and newer.
  ``convert_sf_to_mma_layout`` is a tensor view (``view`` + ``permute``): any device,
  host tensors included.
* ``nvfp4_batched_quantize``: 0.4.0 had a fourth parameter ``mask``, removed in 0.5.0
  (its masked form became ``scaled_fp4_grouped_quantize``); fi_compat serves 0.4.0+ with
  the 0.5.0+ parameters.  ``nvfp4_4over6`` (0.7.1, all three quantisers): left out of
  the call when not given (FlashInfer's own default then applies).
* ``grouped_gemm_nt_masked``: ``sm_count`` 0.2.14, ``dst_signals`` 0.4.0, the combine
  fusion parameters (``topk_weights`` ... ``is_swap_ab``) 0.6.12; keyword-only on every
  release, unknown keywords (``alpha``, ``alpha_dtype``) passed through.
* ``cute_dsl_fused_moe_nvfp4``: ``enable_pdl`` 0.6.7, ``activation`` (``"silu"`` /
  ``"relu2"``) 0.6.14, renamed ``activation_type`` (``ActivationType`` integers) in
  0.6.15 without an alias (``fused_moe/cute_dsl/fused_moe.py``); fi_compat takes
  ``activation_type`` on every release (:class:`ActivationString`), per-token scales,
  SiTU and localisation options later (each refused before its first release unless at
  its default).
* ``CuteDslMoEWrapper``: ``__init__`` as the function (``enable_pdl`` 0.6.7,
  ``activation`` 0.6.14 / ``activation_type`` 0.6.15, ``use_fused_finalize`` 0.6.16,
  ``situ_*`` / ``quant_mode`` 0.6.18, ``swap_ab`` 0.7.4; 0.6.18 inserted ``situ_beta``
  before ``use_fused_finalize``, so the stable positional prefix ends at
  ``swiglu_limit``); ``max_num_tokens`` was an ``int`` (default 4096) sizing the
  CUDA-graph buffers until 0.6.13, ``Optional`` and ignored from 0.6.14
  (:class:`MaxNumTokens`); ``run`` gained ``per_token_scale`` (0.6.16) and
  ``nvfp4_4over6`` (0.7.4), keyword-only.
* ``b12x_fused_moe`` / ``B12xMoEWrapper`` (0.6.9+, ``fused_moe/cute_dsl/b12x_moe.py``):
  the SM120 / SM121 NVFP4 MoE (``@supported_compute_capability([120, 121])`` on every
  release).  The module imports ``cutlass`` only inside the call (``blackwell_sm12x``), and
  ``flashinfer.fused_moe`` exports the names only ``if is_cute_dsl_available()``: fi_compat
  imports the defining module and checks ``nvidia-cutlass-dsl`` at the release's own
  minimum (its ``Requires-Dist``: >=4.4.2 0.6.9-0.6.10.post1, >=4.5.0 0.6.11-0.6.17,
  >=4.6.2a0 0.6.18-0.7.2.post1, >=4.8.0 0.7.4) once at the first call, by an
  :class:`OptionalDependency` with ``minimum``.  History, all keyword-only and appended:
  ``activation_precision`` 0.6.11.post1 (``"fp4"`` the only precision before),
  ``fc2_input_scale`` optional from 0.6.11.post1 (required before: ``None`` refused
  there), ``quant_mode`` / ``source_format`` 0.6.11.post3, ``swiglu_*`` and the
  activations ``"gelu_tanh"`` / ``"swigluoai_uninterleave"`` 0.6.15,
  ``input_global_scale`` 0.6.17 (``b12x_fused_moe``, ``run``), ``shared_*`` workspaces
  0.7.0 (``__init__``), ``expert_map`` 0.7.1.
"""

from __future__ import annotations

from .._core import EntryPoint, Normalizer, OptionalDependency, Param
from .._core.contract import FP16, Tensor
from ..registry import VersionRange, at_least
from ._backend import sm100_only

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement

_FACADE = "fi_compat.cute_dsl"


def _dsl(module: str, since: str) -> tuple[OptionalDependency, ...]:
    """``nvidia-cutlass-dsl`` from ``since`` on: ``module`` imports ``cutlass`` at module
    scope; a plain dependency of 0.4.0-0.6.7 (not declared before), which have no extras
    for it, the ``cu12`` / ``cu13`` extras from 0.6.8."""
    note = f"{module} imports cutlass at module scope"
    cuda = (
        f"{module} imports cuda.bindings.driver (cuda-python, which nvidia-cutlass-dsl "
        "needs too) at module scope, the GEMM kernel module before cutlass"
    )
    return (
        OptionalDependency(VersionRange(since, "0.6.8"), "cutlass", "nvidia-cutlass-dsl", (), note),
        OptionalDependency(
            VersionRange("0.6.8"), "cutlass", "nvidia-cutlass-dsl", ("cu12", "cu13"), note
        ),
        OptionalDependency(VersionRange(since), "cuda", "cuda-python", (), cuda),
    )


def _sm10x(what: str) -> Callable[[Placement, tuple[int, int]], str | None]:
    """A ``devices`` hook: compute capability major 10 only (SM100 / SM103 / SM107)."""

    def devices(pl: Placement, cc: tuple[int, int]) -> str | None:
        if cc[0] == 10:
            return None
        return what

    return devices


_SM10X = _sm10x(
    "the CuTe-DSL kernel is built for sm_100 / sm_103 only (supported_sm_versions, "
    "gemm/kernels/grouped_gemm_masked_blackwell.py; SM107 from 0.7.4): family 100 "
    "(B200 / GB200 / B300), not SM90 or SM12x"
)
_SM100 = sm100_only(
    "the FP4 quantisation kernels (the *_sm100 ops) have their whole body under "
    "__CUDA_ARCH__ >= 1000: SM100 and newer"
)

# -- grouped_gemm_nt_masked ------------------------------------------------------------

_GEMM = EntryPoint(
    facade=_FACADE,
    name="grouped_gemm_nt_masked",
    module="flashinfer.cute_dsl.blockscaled_gemm",
    params=(
        Param("sm_count", note="SMs the persistent kernel uses", ref="0.2.14"),
        Param("dst_signals", note="per-group completion signals", ref="0.4.0"),
        *(
            Param(n, note="combine fusion (expert parallel)", ref="0.6.12")
            for n in (
                "topk_weights",
                "idx_src_info",
                "rank_src_info",
                "out_ptrs",
                "num_ranks",
                "barrier_flag_local",
                "barrier_flag_multicast",
                "is_combine_fusion",
                "is_swap_ab",
            )
        ),
    ),
    contracts={
        "out": Tensor("..."),
        "masked_m": Tensor("groups", dtypes="int32"),
    },
    devices=_SM10X,
    feature="cute_dsl",
    matrix_note="CuTe-DSL kernel, SM10x only; needs nvidia-cutlass-dsl",
    optional_deps=_dsl("flashinfer.cute_dsl.blockscaled_gemm", "0.2.11.post3"),
)

# -- convert_sf_to_mma_layout ----------------------------------------------------------

_MMA_LAYOUT = EntryPoint(
    facade=_FACADE,
    name="convert_sf_to_mma_layout",
    module="flashinfer.cute_dsl.utils",
    params=(),
    host_tensors=True,
    feature="cute_dsl",
    matrix_note="a tensor view (any device); needs nvidia-cutlass-dsl",
    optional_deps=_dsl("flashinfer.cute_dsl.utils", "0.6.4"),
)

# -- the masked NVFP4 quantisers -------------------------------------------------------

_4OVER6 = "NVFP4 4-over-6 recipe (left out of the call when not given)"


def _masked_quant(name: str, module: str, a: Tensor) -> EntryPoint:
    return EntryPoint(
        facade=_FACADE,
        name=name,
        module=module,
        params=(Param("nvfp4_4over6", note=_4OVER6, ref="0.7.1"),),
        contracts={
            "a": a,
            "mask": Tensor("groups", dtypes="int32"),
            "a_global_sf": Tensor("...", dtypes="float32"),
        },
        devices=_SM100,
        feature="cute_dsl",
        matrix_note="SM100 and newer",
    )


_GROUPED_QUANT = _masked_quant(
    "scaled_fp4_grouped_quantize", "flashinfer", Tensor("groups m k", dtypes=FP16)
)
_SILU_QUANT = _masked_quant(
    "silu_and_mul_scaled_nvfp4_experts_quantize",
    "flashinfer",
    Tensor("groups m 2*k", dtypes=FP16),
)
_BATCHED_QUANT = EntryPoint(
    facade=_FACADE,
    name="nvfp4_batched_quantize",
    module="flashinfer",
    params=(Param("nvfp4_4over6", note=_4OVER6, ref="0.7.1"),),
    contracts={
        "a": Tensor("batch m k", dtypes=FP16),
        "a_global_sf": Tensor("...", dtypes="float32"),
    },
    devices=_SM100,
    feature="cute_dsl",
    matrix_note="SM100 and newer",
)

# -- cute_dsl_fused_moe_nvfp4 ----------------------------------------------------------

# ActivationType member name -> 0.6.14's string (fused_moe/cute_dsl/fused_moe.py: "silu"
# is the gated SwiGLU, "relu2" the non-gated squared ReLU; 0.6.15 takes
# ActivationType.Swiglu / Relu2 for the same kernels)
_ACTIVATION_STRINGS = {"Swiglu": "silu", "Relu2": "relu2"}


class ActivationString(Normalizer):
    """``activation_type`` on 0.6.14, which calls it ``activation`` and takes a string:
    ``Swiglu`` -> ``"silu"``, ``Relu2`` -> ``"relu2"``; any other member needs 0.6.15.
    (0.6.4-0.6.13 lack the parameter: SwiGLU only, the default.)"""

    args = ("activation_type",)
    out = ("activation_type",)
    boundaries = ("0.6.14", "0.6.15")

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or not at_least(pl, "0.6.14") or at_least(pl, "0.6.15"):
            return None
        from .._core import enumtrans

        p = adapter.entry.params["activation_type"]

        def to_string(value: Any) -> tuple[Any, ...]:
            member = enumtrans.stable_member(adapter, "activation_type", value)
            s = _ACTIVATION_STRINGS.get(member.name)
            if s is None:
                raise adapter.unsupported(p, member, "0.6.15", value=True)
            return (s,)

        return to_string

    def describe(self, p: Placement) -> str | None:
        if at_least(p, "0.6.14") and not at_least(p, "0.6.15"):
            return 'passed as activation="silu" / "relu2" (0.6.14\'s spelling)'
        return None


_MOE_TENSORS = {
    "x": Tensor("tokens ..."),
    "token_selected_experts": Tensor("tokens top_k"),
    "token_final_scales": Tensor("tokens top_k", dtypes="float32"),
}

_FUSED_MOE = EntryPoint(
    facade=_FACADE,
    name="cute_dsl_fused_moe_nvfp4",
    module="flashinfer.fused_moe.cute_dsl.fused_moe",
    params=(
        Param(
            "enable_pdl",
            hint=True,
            note="programmatic dependent launch (a scheduling hint: same results)",
            ref="0.6.7",
        ),
        Param(
            "activation_type",
            enum="ActivationType",
            spelled=(("0.6.15", "activation", None),),
            note='called activation ("silu" / "relu2") in 0.6.14',
            ref="0.6.14 activation: str; 0.6.15 renamed activation_type (ActivationType)",
        ),
        Param("swiglu_alpha", ref="0.6.15"),
        Param("swiglu_beta", ref="0.6.15"),
        Param("swiglu_limit", ref="0.6.15"),
        Param("per_token_scale", ref="0.6.16"),
        Param("situ_beta", ref="0.6.18"),
        Param("situ_linear_beta", ref="0.6.18"),
        Param("quant_mode", ref="0.6.18"),
        Param("nvfp4_4over6", note=_4OVER6, ref="0.7.4"),
        Param("clamped_relu2_limit", ref="0.7.4"),
    ),
    contracts=_MOE_TENSORS,
    normalizers=(ActivationString(),),
    devices=_SM10X,
    feature="cute_dsl",
    matrix_note="CuTe-DSL kernel, SM10x only; needs nvidia-cutlass-dsl",
    optional_deps=_dsl("flashinfer.fused_moe.cute_dsl.fused_moe", "0.6.4"),
)

# -- CuteDslMoEWrapper ------------------------------------------------------------------

MOE_CLASS = "CuteDslMoEWrapper"
MOE_MODULE = "flashinfer.fused_moe.cute_dsl.fused_moe"


class MaxNumTokens(Normalizer):
    """``CuteDslMoEWrapper(max_num_tokens=None)`` (0.6.14+'s default; 0.6.14 deprecated
    the parameter and ignores it): 0.6.4-0.6.13 size their CUDA-graph buffers by it and
    take an ``int`` (default ``4096``, ``fused_moe/cute_dsl/fused_moe.py:364`` of 0.6.13),
    so ``None`` is sent as that default there."""

    args = ("max_num_tokens",)
    out = ("max_num_tokens",)
    boundaries = ("0.6.14",)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.6.14"):
            return None

        def release_default(n: Any) -> tuple[Any, ...]:
            return (4096 if n is None else n,)

        return release_default

    def describe(self, p: Placement) -> str | None:
        if at_least(p, "0.6.14"):
            return None
        return "max_num_tokens=None sent as the release's default 4096"


def _moe_method(name: str, params: tuple[Param, ...], **kw: Any) -> EntryPoint:
    return EntryPoint(
        facade=_FACADE,
        name=f"{MOE_CLASS}.{name}",
        module=MOE_MODULE,
        attr=f"{MOE_CLASS}.{name}",
        receiver="self",
        params=params,
        devices=kw.pop("devices", _SM10X),
        feature="cute_dsl",
        matrix_note="CuTe-DSL kernel, SM10x only; needs nvidia-cutlass-dsl",
        optional_deps=_dsl(MOE_MODULE, "0.6.4"),
        **kw,
    )


METHODS: dict[str, EntryPoint] = {
    "__init__": _moe_method(
        "__init__",
        (
            Param("max_num_tokens", note="ignored from 0.6.14", ref="0.6.14 deprecated"),
            Param(
                "enable_pdl",
                hint=True,
                note="programmatic dependent launch (a scheduling hint: same results)",
                ref="0.6.7",
            ),
            Param(
                "activation_type",
                enum="ActivationType",
                spelled=(("0.6.15", "activation", None),),
                note='called activation ("silu" / "relu2") in 0.6.14',
                ref="0.6.14 activation: str; 0.6.15 renamed activation_type (ActivationType)",
            ),
            Param("use_fused_finalize", ref="0.6.16"),
            Param("quant_mode", ref="0.6.18"),
            Param("swap_ab", ref="0.7.4"),
        ),
        normalizers=(MaxNumTokens(), ActivationString()),
        devices=None,  # no tensor arguments; run checks the GPU
    ),
    "run": _moe_method(
        "run",
        (
            Param("per_token_scale", ref="0.6.16"),
            Param("nvfp4_4over6", note=_4OVER6, ref="0.7.4"),
        ),
        contracts=_MOE_TENSORS,
        lean=True,
    ),
}


# -- b12x_fused_moe / B12xMoEWrapper (SM12x) ---------------------------------------------

B12X_MODULE = "flashinfer.fused_moe.cute_dsl.b12x_moe"
B12X_CLASS = "B12xMoEWrapper"

_B12X_NOTE = "the b12x kernels import cutlass when they launch (blackwell_sm12x)"
# the release's unconditional Requires-Dist (METADATA of each wheel); the extras that
# install it: cu12 / cu13 from 0.6.8, b12x from 0.7.2
_B12X_DSL: tuple[OptionalDependency, ...] = tuple(
    OptionalDependency(
        VersionRange(lo, hi), "cutlass", "nvidia-cutlass-dsl", extras, _B12X_NOTE, minimum
    )
    for lo, hi, minimum, extras in (
        ("0.6.9", "0.6.11", "4.4.2", ("cu12", "cu13")),
        ("0.6.11", "0.6.18", "4.5.0", ("cu12", "cu13")),
        ("0.6.18", "0.7.2", "4.6.2a0", ("cu12", "cu13")),
        ("0.7.2", "0.7.4", "4.6.2a0", ("b12x", "cu12", "cu13")),
        ("0.7.4", None, "4.8.0", ("b12x", "cu12", "cu13")),
    )
)


def _sm12x(pl: Placement, cc: tuple[int, int]) -> str | None:
    """``@supported_compute_capability([120, 121])`` of every release 0.6.9-0.7.4."""
    if cc in ((12, 0), (12, 1)):
        return None
    return (
        "the b12x MoE kernels are built for SM120 / SM121 only (supported_compute_capability"
        "([120, 121]), fused_moe/cute_dsl/b12x_moe.py of every release). Fix: the CuTe-DSL "
        "MoE (cute_dsl_fused_moe_nvfp4) or the TRT-LLM / CUTLASS MoE on other GPUs"
    )


_B12X_ACTIVATION = Param(
    "activation",
    value_since={"gelu_tanh": "0.6.15", "swigluoai_uninterleave": "0.6.15"},
    note='"silu" (gated) or "relu2"; "gelu_tanh" and "swigluoai_uninterleave" from 0.6.15',
    ref="0.6.15 b12x_moe.py",
)
_FC2_SCALE = Param(
    "fc2_input_scale",
    value_since={None: "0.6.11.post1"},
    note="required (a tensor) before 0.6.11.post1",
    ref="0.6.11.post1 Optional[torch.Tensor] = None",
)
_B12X_TENSORS = {
    "x": Tensor("tokens hidden"),
    "token_selected_experts": Tensor("tokens top_k"),
    "token_final_scales": Tensor("tokens top_k"),
}
_B12X_COMMON = (
    Param("activation_precision", ref="0.6.11.post1"),
    Param("quant_mode", ref="0.6.11.post3"),
    Param("source_format", ref="0.6.11.post3"),
    Param("swiglu_alpha", ref="0.6.15"),
    Param("swiglu_beta", ref="0.6.15"),
    Param("swiglu_limit", ref="0.6.15"),
    Param("expert_map", ref="0.7.1"),
)

B12X = EntryPoint(
    facade=_FACADE,
    name="b12x_fused_moe",
    module=B12X_MODULE,
    params=(
        _FC2_SCALE,
        _B12X_ACTIVATION,
        Param("input_global_scale", ref="0.6.17"),
        *_B12X_COMMON,
    ),
    contracts=_B12X_TENSORS,
    devices=_sm12x,
    feature="cute_dsl",
    matrix_note="CuTe-DSL kernel, SM120/SM121 only; needs nvidia-cutlass-dsl",
    optional_deps=_B12X_DSL,
)


def _b12x_method(name: str, params: tuple[Param, ...], **kw: Any) -> EntryPoint:
    return EntryPoint(
        facade=_FACADE,
        name=f"{B12X_CLASS}.{name}",
        module=B12X_MODULE,
        attr=f"{B12X_CLASS}.{name}",
        receiver="self",
        params=params,
        feature="cute_dsl",
        matrix_note="CuTe-DSL kernel, SM120/SM121 only; needs nvidia-cutlass-dsl",
        optional_deps=_B12X_DSL,
        **kw,
    )


B12X_METHODS: dict[str, EntryPoint] = {
    "__init__": _b12x_method(
        "__init__",
        (
            _B12X_ACTIVATION,
            *_B12X_COMMON,
            Param("shared_static_workspace", ref="0.7.0"),
            Param("shared_dynamic_workspace", ref="0.7.0"),
            Param("shared_output", ref="0.7.0"),
        ),
    ),
    "run": _b12x_method(
        "run",
        (_FC2_SCALE, Param("input_global_scale", ref="0.6.17")),
        contracts=_B12X_TENSORS,
        devices=_sm12x,
        lean=True,
    ),
}

SPECS: dict[str, EntryPoint] = {
    e.name: e
    for e in (
        _GEMM,
        _MMA_LAYOUT,
        _GROUPED_QUANT,
        _SILU_QUANT,
        _BATCHED_QUANT,
        _FUSED_MOE,
        B12X,
    )
}
ENTRIES = [*SPECS.values(), *METHODS.values(), *B12X_METHODS.values()]
