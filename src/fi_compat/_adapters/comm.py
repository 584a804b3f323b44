"""Adapter tables for ``flashinfer.comm`` (all-reduce fusion, the MoE all-to-all family,
vLLM's custom all-reduce, DCP all-to-all).

Read from the released sources (``_snapshots/comm.*.json``; ``flashinfer/comm/*.py`` of
every release 0.2.7.post1-0.7.4; 0.2.6 had a single-file ``flashinfer/comm.py`` and the
0.2.7 sdist ships no ``flashinfer/comm`` at all):

* ``allreduce_fusion`` (0.6.0): 0.6.8 inserted ``trigger_completion_at_end`` after
  ``launch_with_pdl`` (the stable function is keyword-only after ``launch_with_pdl``) and
  appended the MoE reduction / finalize inputs; ``block_quant_group_size`` 0.6.11,
  ``weight_bias`` 0.6.12, keyword-only ``moe_finalize_backend`` 0.7.1.  0.6.0-0.6.7 pass
  ``trigger_completion_at_end=launch_with_pdl`` to the kernel themselves: the flag only
  moves the kernel's ``cudaTriggerProgrammaticLaunchCompletion`` (0.4.1
  ``include/flashinfer/comm/trtllm_allreduce_fusion.cuh`` l.1183/1229; a dependent
  kernel's ``cudaGridDependencySynchronize`` still waits for the whole grid), so it is a
  hint there.  ``pattern`` / ``layout_code`` take :mod:`fi_compat.enums` members
  (``AllReduceFusionPattern``, ``QuantizationSFLayout``), FlashInfer's integer constants or
  plain integers; a pattern the release lacks is refused naming its first release.
* ``create_allreduce_fusion_workspace`` (0.6.0): ``group`` 0.6.10.post1, twelve
  keyword-only MNNVL CuTe-DSL options 0.7.2.post1, whose ``backend="mnnvl-cutedsl"``
  first appears in the ``backend`` literal there.
* ``trtllm_allreduce_fusion`` (served from 0.2.9: 0.2.7.post1-0.2.8 take ``use_oneshot``
  at slot 7, as a required ``bool``, and no tensor ``scale_factor``): ``metadata`` 0.5.0,
  ``block_quant_group_size`` 0.6.11, ``weight_bias`` 0.6.12.  ``layout_code``'s integers
  moved in 0.2.14 (``fi_compat.enums.QuantizationSFLayout``).
* ``trtllm_create_ipc_workspace_for_all_reduce_fusion``: ``create_metadata`` 0.5.0,
  ``comm_backend`` / ``use_symm_dev_mem`` 0.6.0.  ``trtllm_custom_all_reduce``: one
  signature 0.2.7.post1-0.6.18.post1, removed in 0.7.0.
* ``MoeAlltoAll`` (0.6.0; deprecated 0.7.1 for ``flashinfer.moe_ep.NVLinkOneSidedAlltoAll``,
  removed in 0.7.4 with ``moe_a2a_get_workspace_size_per_rank``): ``__init__`` +
  ``eplb_stats_num_experts`` / ``enable_rank_mask`` 0.6.16, keyword-only ``backend`` 0.7.1;
  ``dispatch`` + ``eplb_local_stats`` / ``active_rank_mask`` 0.6.16; ``combine`` +
  ``output_dtype`` / ``output_scales`` / ``output_scalar_scale`` / ``sf_layout`` 0.6.14,
  ``output`` and keyword-only ``use_low_precision`` / ``active_rank_mask`` 0.6.16.
* ``MnnvlMoe`` (static methods; 0.2.7.post1, deprecated 0.7.1 for
  ``flashinfer.moe_ep.NVLinkTwoSidedAlltoAll``, removed in 0.7.4): ``get_moe_workspaces``
  + ``config`` 0.3.0; ``get_moe_prepare_workspace`` and
  ``mnnvl_moe_alltoallv_prepare_without_allgather`` from 0.3.0.
* ``flashinfer.comm.vllm_ar`` (0.2.7.post1) and ``flashinfer.comm.dcp_alltoall`` (0.6.10;
  ``decode_cp_a2a_allocate_mnnvl_workspace`` 0.6.10.post1, ``out`` 0.7.1): no drift.
* Re-exported as FlashInfer's own classes (one constructor signature in every release
  that has them, checked by the static suite): ``Mapping``, ``MnnvlConfig``,
  ``MnnvlMemory``, ``CommBackend``, ``TorchDistBackend``, ``MoEAlltoallInfo``; and
  ``McastGPUBuffer`` from 0.6.0 (the floor): 0.2.8-0.5.3 take ``mn_nvlink: bool = True``
  as the fifth parameter, where 0.6.0 takes ``comm_backend_for_handle_transfer:
  Optional[CommBackend] = None``, and allocate a ``McastDeviceMemory`` whose size is the
  one requested (0.6.0: ``SymmDeviceMemory``, ``buf_size`` its usable size), so code
  written for 0.6.0's class cannot run on theirs.  Its methods ``get_buffer_ptrs_dev()``
  and ``lamport_initialize(rank, dtype)`` are unchanged 0.2.8-0.7.4.

Importing ``flashinfer.comm`` (every name here imports it) needs cuda-python from 0.6.0
(0.3.0+ ``comm/mnnvl.py`` raises ImportError "Could not import the 'cuda' module";
``flashinfer.comm`` imports it through ``trtllm_mnnvl_ar`` from 0.6.0, the submodules
``mnnvl`` / ``trtllm_alltoall`` / ``trtllm_moe_alltoall`` / ``dcp_alltoall`` always) and
cuda-tile on 0.6.10-0.6.13 (``all_gather_matmul`` imported eagerly):
``OptionalDependencyMissingError`` naming the package.  Two import crashes are known
issues, explained by the facade's ``FlashInferImportError``:
``comm-import-libcudart-not-loaded`` (torch without CUDA, to 0.6.13) and
``comm-import-python-below-3.12`` (0.6.16-0.6.16.post3 on Python 3.10 / 3.11).
"""

from __future__ import annotations

from .._core import EntryPoint, OptionalDependency, Param
from .._core.reexport import Reexport
from ..registry import VersionRange

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FACADE = "fi_compat.comm"
COMM, TRTLLM_AR = "flashinfer.comm", "flashinfer.comm.trtllm_ar"
MOE_A2A, ALLTOALL = "flashinfer.comm.trtllm_moe_alltoall", "flashinfer.comm.trtllm_alltoall"
MNNVL, VLLM_AR = "flashinfer.comm.mnnvl", "flashinfer.comm.vllm_ar"
DCP = "flashinfer.comm.dcp_alltoall"

DEPS = (
    OptionalDependency(
        VersionRange("0.2.7.post1"),
        "cuda",
        "cuda-python",
        (),  # no extra installs it for every CUDA version; a plain dependency from 0.6.16
        "flashinfer.comm's mnnvl.py imports cuda-python's driver bindings at module scope "
        "(flashinfer.comm itself from 0.6.0; before 0.4.0 as `from cuda import cuda`, which "
        "needs cuda-python<13)",
    ),
    OptionalDependency(
        VersionRange("0.6.10", "0.6.14"),
        "cuda.tile",
        "cuda-tile",
        (),  # a plain dependency in the metadata (0.6.7+)
        "flashinfer.comm imports all_gather_matmul's cuTile kernel at module scope "
        "(0.6.14 made it lazy)",
    ),
)
MOE_A2A_REMOVED = (
    "flashinfer.moe_ep.NVLinkOneSidedAlltoAll (0.7.1+, FlashInfer's replacement; not a "
    "drop-in), or pin 'flashinfer-python<0.7.4'"
)
MNNVL_MOE_REMOVED = (
    "flashinfer.moe_ep.NVLinkTwoSidedAlltoAll (0.7.1+, FlashInfer's replacement; not a "
    "drop-in), or pin 'flashinfer-python<0.7.4'"
)


def _entry(
    name: str, module: str, feature: str, params: tuple[Param, ...] = (), **kw: Any
) -> EntryPoint:
    facade = kw.pop("facade", FACADE)
    return EntryPoint(
        facade=facade,
        name=name,
        module=module,
        params=params,
        feature=feature,
        optional_deps=DEPS,
        **kw,
    )


def _method(
    cls: str, name: str, module: str, facade: str, params: tuple[Param, ...] = (), **kw: Any
) -> EntryPoint:
    static = kw.pop("static", False)
    return _entry(
        f"{cls}.{name}",
        module,
        "comm.alltoall",
        params,
        attr=f"{cls}.{name}",
        receiver=None if static else "self",
        facade=facade,
        **kw,
    )


_NONE_ONLY = "dropped at None where the release lacks it"

# -- all-reduce fusion ---------------------------------------------------------------------

SPECS: dict[str, EntryPoint] = {
    "allreduce_fusion": _entry(
        "allreduce_fusion",
        COMM,
        "comm.allreduce",
        (
            Param("pattern", enum="AllReduceFusionPattern", note="the fusion pattern"),
            Param("layout_code", enum="QuantizationSFLayout", note="FP4 scale layout"),
            Param(
                "trigger_completion_at_end",
                hint=True,
                note="where the kernel triggers a PDL dependent",
                ref="0.6.0-0.6.7 comm/allreduce.py passes trigger_completion_at_end="
                "launch_with_pdl; the flag only moves cudaTriggerProgrammaticLaunchCompletion",
            ),
            Param(
                "weight_bias",
                neutral=(0,),
                note="RMSNorm weight bias",
                ref="0.6.12",
                neutral_ref="0.6.12 comm/allreduce.py `weight_bias: float = 0.0`, added to "
                "gamma in the kernel (0.6.13 include/flashinfer/comm/"
                "trtllm_allreduce_fusion.cuh l.807 `float weight_bias = 0.f`, l.1187): older "
                "releases normalise with gamma alone",
            ),
            Param(
                "moe_finalize_backend",
                note="MoE finalize implementation",
                ref="0.7.1 keyword-only, default 'trtllm'",
            ),
        ),
    ),
    "create_allreduce_fusion_workspace": _entry(
        "create_allreduce_fusion_workspace",
        COMM,
        "comm.allreduce",
        (
            Param(
                "backend",
                value_since={"mnnvl-cutedsl": "0.7.2.post1"},
                ref="0.7.2.post1 backend Literal",
            ),
        ),
    ),
    "trtllm_allreduce_fusion": _entry(
        "trtllm_allreduce_fusion",
        TRTLLM_AR,
        "comm.allreduce",
        (
            Param("pattern_code", enum="AllReduceFusionPattern", note="the fusion pattern"),
            Param("layout_code", enum="QuantizationSFLayout", note="FP4 scale layout"),
        ),
        floor="0.2.9",
        matrix_note="served from 0.2.9 (0.2.7.post1-0.2.8 take use_oneshot at slot 7, as a "
        "required bool, and no tensor scale_factor)",
    ),
    "trtllm_create_ipc_workspace_for_all_reduce_fusion": _entry(
        "trtllm_create_ipc_workspace_for_all_reduce_fusion", TRTLLM_AR, "comm.allreduce"
    ),
    "trtllm_destroy_ipc_workspace_for_all_reduce_fusion": _entry(
        "trtllm_destroy_ipc_workspace_for_all_reduce_fusion", TRTLLM_AR, "comm.allreduce"
    ),
    "trtllm_custom_all_reduce": _entry(
        "trtllm_custom_all_reduce",
        TRTLLM_AR,
        "comm.allreduce",
        removed_fix="fi_compat.comm.allreduce_fusion (flashinfer.comm.allreduce_fusion, "
        "0.6.0+) over a create_allreduce_fusion_workspace workspace, or pin "
        "'flashinfer-python<0.7.0'",
    ),
    # -- MoE all-to-all (one-sided, MNNVL) ---------------------------------------------------
    "moe_a2a_get_workspace_size_per_rank": _entry(
        "moe_a2a_get_workspace_size_per_rank",
        MOE_A2A,
        "comm.alltoall",
        (Param("backend", ref="0.7.1 keyword-only, default 'trtllm'"),),
        removed_fix=MOE_A2A_REMOVED,
    ),
    # -- DCP all-to-all ----------------------------------------------------------------------
    "decode_cp_a2a_workspace_size": _entry("decode_cp_a2a_workspace_size", DCP, "comm.dcp"),
    "decode_cp_a2a_allocate_mnnvl_workspace": _entry(
        "decode_cp_a2a_allocate_mnnvl_workspace", DCP, "comm.dcp"
    ),
    "decode_cp_a2a_init_workspace": _entry("decode_cp_a2a_init_workspace", DCP, "comm.dcp"),
    "decode_cp_a2a_alltoall": _entry("decode_cp_a2a_alltoall", DCP, "comm.dcp"),
}

# -- MoeAlltoAll ---------------------------------------------------------------------------

MOE_A2A_CLASS = "MoeAlltoAll"
MOE_A2A_METHODS: dict[str, EntryPoint] = {
    "__init__": _method(
        MOE_A2A_CLASS,
        "__init__",
        MOE_A2A,
        FACADE,
        (Param("backend", ref="0.7.1 keyword-only, default 'trtllm'"),),
        removed_fix=MOE_A2A_REMOVED,
    ),
    "dispatch": _method(MOE_A2A_CLASS, "dispatch", MOE_A2A, FACADE, removed_fix=MOE_A2A_REMOVED),
    "combine": _method(
        MOE_A2A_CLASS,
        "combine",
        MOE_A2A,
        FACADE,
        (
            Param("sf_layout", enum="SfLayout", note="output scale layout"),
            Param(
                "output_scalar_scale",
                neutral=(1,),
                neutral_ref="0.6.14 comm/trtllm_moe_alltoall.py l.855 `output_scalar_scale: "
                "float = 1.0`, the NVFP4 global scale (SFScaleVal) applied before block "
                "scaling: 1 scales nothing, and older releases have no quantised output",
            ),
        ),
        removed_fix=MOE_A2A_REMOVED,
    ),
    "get_combine_payload_tensor_in_workspace": _method(
        MOE_A2A_CLASS,
        "get_combine_payload_tensor_in_workspace",
        MOE_A2A,
        FACADE,
        removed_fix=MOE_A2A_REMOVED,
    ),
}

# -- MnnvlMoe (static methods) -------------------------------------------------------------

ALLTOALL_FACADE = "fi_compat.comm.trtllm_alltoall"
MNNVL_MOE_CLASS = "MnnvlMoe"
MNNVL_MOE_METHODS: dict[str, EntryPoint] = {
    name: _method(
        MNNVL_MOE_CLASS,
        name,
        ALLTOALL,
        ALLTOALL_FACADE,
        static=True,
        removed_fix=MNNVL_MOE_REMOVED,
    )
    for name in (
        "get_moe_workspaces",
        "get_moe_prepare_workspace",
        "mnnvl_moe_alltoallv_prepare_without_allgather",
        "mnnvl_moe_alltoallv",
        "mnnvl_moe_alltoallv_combine",
    )
}

# -- flashinfer.comm.mnnvl -----------------------------------------------------------------

MNNVL_FACADE = "fi_compat.comm.mnnvl"
MNNVL_SPECS: dict[str, EntryPoint] = {
    "is_mnnvl_fabric_supported": _entry(
        "is_mnnvl_fabric_supported", MNNVL, "comm.alltoall", facade=MNNVL_FACADE
    ),
}

# -- flashinfer.comm.vllm_ar ---------------------------------------------------------------

VLLM_AR_FACADE = "fi_compat.comm.vllm_ar"
VLLM_AR_SPECS: dict[str, EntryPoint] = {
    name: _entry(name, VLLM_AR, "comm.vllm_ar", facade=VLLM_AR_FACADE)
    for name in (
        "init_custom_ar",
        "dispose",
        "all_reduce",
        "get_graph_buffer_ipc_meta",
        "register_buffer",
        "register_graph_buffers",
        "meta_size",
    )
}

# -- re-exports: FlashInfer's own classes ----------------------------------------------------


def _reexport(facade: str, name: str, module: str, snapshot: str, note: str, **kw: Any) -> Reexport:
    return Reexport(
        facade=facade,
        name=name,
        module=module,
        snapshot=snapshot,
        note=note,
        optional_deps=DEPS,
        feature="comm.alltoall",
        **kw,
    )


REEXPORTS: dict[str, Reexport] = {
    "Mapping": _reexport(
        FACADE,
        "Mapping",
        COMM,
        "comm.Mapping.__init__",
        "the rank layout (world / tp / pp / cp / moe sizes) every comm helper takes",
    ),
}
MNNVL_REEXPORTS: dict[str, Reexport] = {
    "MnnvlConfig": _reexport(
        MNNVL_FACADE,
        "MnnvlConfig",
        MNNVL,
        "comm.mnnvl.MnnvlConfig.__init__",
        "the dataclass configuring MNNVL fabric memory (comm backend, granularity, page size)",
    ),
    "MnnvlMemory": _reexport(
        MNNVL_FACADE,
        "MnnvlMemory",
        MNNVL,
        "comm.mnnvl.MnnvlMemory.__init__",
        "MNNVL fabric memory shared across ranks (``initialize()``, ``supports_mnnvl()``)",
    ),
    "CommBackend": _reexport(
        MNNVL_FACADE,
        "CommBackend",
        MNNVL,
        "comm.mnnvl.CommBackend",
        "the abstract communication backend (rank, size, allgather, split, barrier)",
    ),
    "TorchDistBackend": _reexport(
        MNNVL_FACADE,
        "TorchDistBackend",
        MNNVL,
        "comm.mnnvl.TorchDistBackend.__init__",
        "the CommBackend over torch.distributed (``group=None``: the default group)",
    ),
    "McastGPUBuffer": _reexport(
        MNNVL_FACADE,
        "McastGPUBuffer",
        MNNVL,
        "comm.mnnvl.McastGPUBuffer.__init__",
        "a buffer every rank of a group maps, unicast and NVLink multicast "
        "(``get_buffer_ptrs_dev()``, ``lamport_initialize(rank, dtype)``)",
        floor="0.6.0",
        ref="0.6.0 comm/mnnvl.py: the fifth parameter mn_nvlink: bool = True became "
        "comm_backend_for_handle_transfer: Optional[CommBackend] = None, and buf_size the "
        "usable size of the SymmDeviceMemory allocation (0.2.8-0.5.3: McastDeviceMemory)",
    ),
}
ALLTOALL_REEXPORTS: dict[str, Reexport] = {
    "MoEAlltoallInfo": _reexport(
        ALLTOALL_FACADE,
        "MoEAlltoallInfo",
        ALLTOALL,
        "comm.trtllm_alltoall.MoEAlltoallInfo.__init__",
        "the dataclass of MnnvlMoe's prepared send / receive indices",
        removed_fix=MNNVL_MOE_REMOVED,
    ),
}

ENTRIES: list[EntryPoint] = [
    *SPECS.values(),
    *MOE_A2A_METHODS.values(),
    *MNNVL_MOE_METHODS.values(),
    *MNNVL_SPECS.values(),
    *VLLM_AR_SPECS.values(),
]
ALL_REEXPORTS: list[Reexport] = [
    *REEXPORTS.values(),
    *MNNVL_REEXPORTS.values(),
    *ALLTOALL_REEXPORTS.values(),
]
