"""Adapter tables for ``flashinfer.rope`` (rotary embeddings).

Read from the released sources (``_snapshots/rope.*.json``; ``csrc/rope.cu``):

* ``apply_rope``, ``apply_rope_pos_ids``, ``apply_llama31_rope_pos_ids`` and their
  ``_inplace`` twins have one signature from 0.2.0.post1 to 0.7.4.
* the index tensors (``indptr``, ``offsets``, ``pos_ids``, ``positions``) are read as
  ``int32_t*`` without a dtype check in 0.2.0.post1-0.2.6 (``static_cast<int32_t*>
  (pos_ids.data_ptr())``): an int64 tensor there is silently misread.  0.2.7 dispatches
  on int32 and int64 (``DISPATCH_PYTORCH_IDTYPE_TO_CTYPE``).  fi_compat hands the older
  releases int32 (one cast when the caller has int64) and the newer ones what it has.
* ``apply_rope_with_cos_sin_cache(_inplace)`` was re-signed in 0.2.0.post2, from
  ``(q, k, cos_cache, sin_cache, pos_ids, interleave)`` to vLLM's ``(positions, query,
  key, head_size, cos_sin_cache, is_neox)``: fi_compat serves the new signature from
  0.2.0.post2 (a call in the old order fails the kind check of ``head_size``, an int);
  ``cos_sin_cache`` must be float32 on every release (``ValueError`` inside otherwise).

Head sizes (``DISPATCH_HEAD_DIM``, ``include/flashinfer/utils.cuh``: 64, 128, 256 and 512
in all 74 releases; its ``default`` throws ``FLASHINFER_ERROR("Unsupported head_dim")``):

* ``apply_rope*`` / ``apply_llama31_rope_pos_ids*`` dispatch on it in every release
  (0.7.4 ``pos_enc.cuh:1652/1732/1810/1874``).  The throw is a ``RuntimeError`` on the
  pybind11 (0.2.0.post1-0.2.1) and TVM-FFI (0.4.0+) bindings, but kills the process with
  SIGSEGV on the ``TORCH_LIBRARY`` ones (0.2.1.post1-0.3.1.post1,
  ``csrc/flashinfer_rope_ops.cu``; measured on an H100 with 0.3.1: ``apply_rope`` head 80
  -> signal 11, while a ``c10::Error`` through the same op raises cleanly).  No release
  runs another head size there, so the contract refuses it on every release.
* ``apply_rope_with_cos_sin_cache(_inplace)``: the same dispatch until 0.5.3; 0.6.0
  (PR #2109, issue #2104) routes every other head size to the ``RopeQuantize`` kernel
  (0.6.0 ``pos_enc.cuh:1365``, the kernel unchanged to 0.7.4).  That kernel rotates
  16-element vectors (``vec_size = 32 / sizeof(DType)``, 0.7.4 ``pos_enc.cuh:1294``) with
  no check that they line up with ``rotary_dim``: with NeoX a vector straddling
  ``rotary_dim / 2`` takes one sign and reads sin as cos (needs ``rotary_dim % 32 == 0``),
  interleaved the last vector writes into the unrotated part that other blocks write
  too (needs ``rotary_dim % 16 == 0``).  Measured on an H100 with 0.6.7 and 0.7.4: NeoX
  (head, rotary) (80, 80), (96, 48), (112, 112), (160, 80) wrong results; (80, 40),
  (112, 56) ``cudaErrorMisalignedAddress`` (a device fault that poisons the context);
  interleaved (80, 40), (112, 56) wrong on 0.6.7 in place (a race: 0.7.4 happened to
  pass); every rotary_dim % 32 == 0 (NeoX) / % 16 == 0 (interleaved) exact, e.g.
  (96, 96), (160, 160), (192, 96).  :class:`CacheHeadSize` refuses what no release
  computes with ``InvalidArgumentError`` (the same on every release) and, before 0.6.0,
  what 0.6.0 computes with ``UnsupportedParameterError`` naming 0.6.0.
"""

from __future__ import annotations

from .._core import EntryPoint, Normalizer, Param
from .._core.contract import FP16, INDEX, Tensor
from ..errors import InvalidArgumentError, UnsupportedParameterError
from ..registry import at_least
from . import _elementwise as ew

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, ClassVar

    from .._core import Adapter
    from ..registry import Placement

# DISPATCH_HEAD_DIM's cases in every release 0.2.0.post1-0.7.4 (utils.cuh: 0.2.0.post1
# l.168, 0.3.1 l.175, 0.7.4 l.200)
HEAD_DIMS = (64, 128, 256, 512)
_NATIVE = frozenset(HEAD_DIMS)
ROUTED = "0.6.0"  # apply_rope_with_cos_sin_cache: other head sizes -> RopeQuantize (#2109)
_HEAD_WHY = (
    "every flashinfer-python release 0.2.0.post1-0.7.4 dispatches these kernels on those "
    "head sizes only (DISPATCH_HEAD_DIM; another one is a RuntimeError there, and kills "
    "the process with SIGSEGV on 0.2.1.post1-0.3.1.post1). Fix: "
    "apply_rope_with_cos_sin_cache(_inplace) with a float32 cos/sin cache runs other head "
    "sizes on flashinfer-python>=0.6.0 (rotary_dim a multiple of 32 with NeoX, of 16 "
    "interleaved)"
)

_IDX = (("0.2.0.post1", "int32"), ("0.2.7", None))
_IDX_REF = "0.2.0.post1-0.2.6 rope.cu static_cast<int32_t*>; 0.2.7 IDTYPE dispatch"
_INDEX_PARAMS = ("indptr", "offsets", "pos_ids", "positions")


_HALF = "every release's kernels dispatch on those two only"


def _qk_contract(index: tuple[str, ...]) -> dict[str, Tensor]:
    """``q`` / ``k``: ``[nnz, heads, head_dim]`` fp16/bf16, one nnz and head_dim and
    dtype; the index tensors 1-D int32/int64; one device."""
    return {
        "q": Tensor(
            "nnz num_heads head_dim",
            dtypes=FP16,
            why=_HALF,
            sizes={"head_dim": HEAD_DIMS},
            sizes_why=_HEAD_WHY,
        ),
        "k": Tensor("nnz num_kv_heads head_dim", match="q"),
        **{n: Tensor("_", dtypes=INDEX) for n in index},
    }


def _cache_contract() -> dict[str, Tensor]:
    """vLLM's layout: ``query`` / ``key`` ``[nnz, ...]`` fp16/bf16, ``positions`` ``[nnz]``
    int32/int64, ``cos_sin_cache`` 2-D float32 (every release requires it)."""
    return {
        "query": Tensor("nnz ...", dtypes=FP16, why=_HALF),
        "key": Tensor("nnz ...", dtype="query"),
        "cos_sin_cache": Tensor(
            "max_position rotary_dim",
            dtypes="float32",
            why="cos half then sin half; every release requires float32",
        ),
        "positions": Tensor("nnz", dtypes=INDEX),
    }


def routed_ok(head_size: int, rotary_dim: int, is_neox: bool) -> bool:
    """``RopeQuantize`` (0.6.0+, head sizes outside :data:`HEAD_DIMS`) computes it: its
    16-element vectors line up with the rotated halves (NeoX) / the rotated part."""
    return rotary_dim <= head_size and rotary_dim % (32 if is_neox else 16) == 0


class CacheHeadSize(Normalizer):
    """``head_size`` outside :data:`HEAD_DIMS` in ``apply_rope_with_cos_sin_cache``:
    refused before the launch where the installed release cannot compute it (see the
    module docstring).  A head size the old kernel has costs one ``frozenset``
    membership test per call (inline, :attr:`passes`)."""

    args = ("query", "head_size", "cos_sin_cache", "is_neox")
    out = ()
    boundaries = (ROUTED,)
    passes = "head_size in _ROPE_HEAD_DIMS"  # inline in the fast path: no call
    passes_ns: ClassVar[Mapping[str, object]] = {"_ROPE_HEAD_DIMS": _NATIVE}

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None:
            return None
        where, release, native = adapter.entry.dotted, str(adapter.release), _NATIVE
        routed = at_least(pl, ROUTED)

        def refuse(head_size: int, cache: Any, is_neox: bool) -> Exception:
            r = cache.shape[1]
            call = (
                f"{where}(head_size={head_size}, is_neox={bool(is_neox)}) with rotary_dim "
                f"{r} (cos_sin_cache.shape[1])"
            )
            if not routed_ok(head_size, r, bool(is_neox)):
                return InvalidArgumentError(
                    f"{call}: no flashinfer-python release up to 0.7.4 computes this. Head "
                    f"sizes other than 64, 128, 256 and 512 run, from 0.6.0 (PR #2109), on "
                    f"the RopeQuantize kernel, which needs rotary_dim <= head_size and "
                    f"rotary_dim a multiple of {32 if is_neox else 16} with "
                    f"is_neox={bool(is_neox)} (its 16-element vectors otherwise straddle the "
                    f"rotated {'halves' if is_neox else 'part'}: wrong results, or a "
                    f"misaligned-address fault that poisons the CUDA context); before 0.6.0 "
                    f"only those four head sizes run. Fix: a rotary embedding outside "
                    f"FlashInfer for this head_size / rotary_dim"
                )
            return UnsupportedParameterError(
                f"{call} needs flashinfer-python>={ROUTED}; installed: {release}, which runs "
                f"head sizes 64, 128, 256 and 512 only (DISPATCH_HEAD_DIM: a RuntimeError, "
                f"and SIGSEGV on 0.2.1.post1-0.3.1.post1); {ROUTED} (PR #2109) routes other "
                f"head sizes to the RopeQuantize kernel. Fix: pip install "
                f"'flashinfer-python>={ROUTED}'",
                parameter="head_size",
                installed=release,
                minimum=ROUTED,
            )

        if routed:

            def check(query: Any, head_size: int, cache: Any, is_neox: bool) -> tuple[Any, ...]:
                if head_size in native:
                    return ()
                r = cache.shape[1]
                if r <= head_size and r % (32 if is_neox else 16) == 0:
                    return ()
                raise refuse(head_size, cache, is_neox)

        else:

            def check(query: Any, head_size: int, cache: Any, is_neox: bool) -> tuple[Any, ...]:
                if head_size in native:
                    return ()
                raise refuse(head_size, cache, is_neox)

        return check

    def describe(self, p: Placement) -> str | None:
        if at_least(p, ROUTED):
            return (
                "`head_size` outside 64/128/256/512 refused unless rotary_dim <= head_size "
                "and rotary_dim % 32 == 0 (NeoX) / % 16 == 0 (interleaved)"
            )
        return "`head_size` outside 64/128/256/512 refused (needs 0.6.0; SIGSEGV on some)"


def _index(name: str) -> Param:
    return Param(name, dtypes=_IDX, note="index tensor: int32 before 0.2.7", ref=_IDX_REF)


def _rope(name: str, index: tuple[str, ...], llama31: bool = False) -> EntryPoint:
    params = [Param("q"), Param("k"), *(_index(n) for n in index)]
    params += [Param("rotary_dim"), Param("interleave"), Param("rope_scale"), Param("rope_theta")]
    if llama31:
        params += [Param("low_freq_factor"), Param("high_freq_factor"), Param("old_context_len")]
    return EntryPoint(
        facade="fi_compat.rope",
        name=name,
        module="flashinfer.rope",
        params=params,
        contracts=_qk_contract(index),
        devices=ew.any_cuda_device,
        feature="rope.computed",  # cos/sin computed by the kernel
    )


def _cache(name: str) -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.rope",
        name=name,
        module="flashinfer.rope",
        params=(_index("positions"),),
        contracts=_cache_contract(),
        normalizers=(CacheHeadSize(),),
        devices=ew.any_cuda_device,
        feature="rope.cos_sin_cache",
        # 0.2.0.post1 has the function with the pre-vLLM signature (q, k, cos_cache,
        # sin_cache, pos_ids, interleave), which no row here describes
        floor="0.2.0.post2",
    )


SPECS: dict[str, EntryPoint] = {
    "apply_rope": _rope("apply_rope", ("indptr", "offsets")),
    "apply_rope_inplace": _rope("apply_rope_inplace", ("indptr", "offsets")),
    "apply_rope_pos_ids": _rope("apply_rope_pos_ids", ("pos_ids",)),
    "apply_rope_pos_ids_inplace": _rope("apply_rope_pos_ids_inplace", ("pos_ids",)),
    "apply_llama31_rope_pos_ids": _rope("apply_llama31_rope_pos_ids", ("pos_ids",), True),
    "apply_llama31_rope_pos_ids_inplace": _rope(
        "apply_llama31_rope_pos_ids_inplace", ("pos_ids",), True
    ),
    "apply_rope_with_cos_sin_cache": _cache("apply_rope_with_cos_sin_cache"),
    "apply_rope_with_cos_sin_cache_inplace": _cache("apply_rope_with_cos_sin_cache_inplace"),
}


# -- mla_rope_quantize_fp8 ------------------------------------------------------------------
# Read from rope.py and csrc/rope.cu of 0.2.11-0.7.4 (_snapshots/rope.mla_rope_quantize_fp8):
# (q_rope, k_rope, q_nope, k_nope, cos_sin_cache, pos_ids, is_neox=True, quantize_dtype=None,
# quant_scale_q=1.0, quant_scale_kv=1.0, q_rope_out..k_nope_out=None) from 0.2.11; enable_pdl
# appended in 0.5.0 (False: no programmatic dependent launch, what 0.2.11-0.4.1 always do).
# Every release: cos_sin_cache float32 (rope.py raises ValueError), quantize_dtype None taken
# from the first given output else float8_e4m3fn, the outputs allocated where not given, the
# four outputs returned; inputs float16 / bfloat16 of one dtype, outputs fp8 e4m3fn / e5m2
# of one dtype, last dimension contiguous, pos_ids int32 / int64 (DISPATCH_*_IDTYPE).  The
# kernel of 0.2.11-0.4.1 (csrc/rope.cu mla_rope_quantize) checks rope_dim == 64 and
# nope_dim == 512 (DeepSeek's MLA); 0.5.0's rope_quantize takes any (``MlaDimsBefore``).
MLA_DIMS_SINCE = "0.5.0"
_FP8_OUT = ("float8_e4m3fn", "float8_e5m2")


class MlaDimsBefore(Normalizer):
    """rope_dim other than 64 or nope_dim other than 512 before 0.5.0, whose kernel checks
    both (a RuntimeError in the launch): refused before it, naming 0.5.0."""

    args = ("q_rope", "q_nope")
    out = ()
    boundaries = (MLA_DIMS_SINCE,)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, MLA_DIMS_SINCE):
            return None
        where, release = adapter.entry.dotted, str(adapter.release)

        def check(q_rope: Any, q_nope: Any) -> tuple[Any, ...]:
            rope, nope = q_rope.shape[-1], q_nope.shape[-1]
            if rope == 64 and nope == 512:
                return ()
            raise UnsupportedParameterError(
                f"{where}(rope_dim={rope}, nope_dim={nope}) needs flashinfer-python>="
                f"{MLA_DIMS_SINCE}; installed: {release}, whose kernel takes rope_dim 64 and "
                f"nope_dim 512 only (csrc/rope.cu mla_rope_quantize; {MLA_DIMS_SINCE}'s "
                f"rope_quantize takes any). Fix: pip install "
                f"'flashinfer-python>={MLA_DIMS_SINCE}'",
                parameter="q_rope",
                installed=release,
                minimum=MLA_DIMS_SINCE,
            )

        return check


def _mla_contract() -> dict[str, Tensor]:
    half = ("float16", "bfloat16")
    return {
        "q_rope": Tensor("nnz heads rope", dtypes=half, contiguous="last"),
        "k_rope": Tensor("nnz rope", dtype="q_rope", contiguous="last"),
        "q_nope": Tensor("nnz heads nope", dtype="q_rope", contiguous="last"),
        "k_nope": Tensor("nnz nope", dtype="q_rope", contiguous="last"),
        "cos_sin_cache": Tensor("seq _", dtypes="float32"),
        "pos_ids": Tensor("nnz", dtypes=("int32", "int64")),
        "q_rope_out": Tensor("nnz heads rope", dtypes=_FP8_OUT, contiguous="last"),
        "k_rope_out": Tensor("nnz rope", dtypes=_FP8_OUT, contiguous="last"),
        "q_nope_out": Tensor("nnz heads nope", dtypes=_FP8_OUT, contiguous="last"),
        "k_nope_out": Tensor("nnz nope", dtypes=_FP8_OUT, contiguous="last"),
    }


MLA_SPECS: dict[str, EntryPoint] = {
    "mla_rope_quantize_fp8": EntryPoint(
        facade="fi_compat.rope",
        name="mla_rope_quantize_fp8",
        module="flashinfer.rope",
        params=(
            Param(
                "enable_pdl",
                note="programmatic dependent launch",
                ref="0.5.0 rope.py: default False (0.2.11-0.4.1 launch without PDL)",
            ),
        ),
        contracts=_mla_contract(),
        normalizers=(MlaDimsBefore(),),
        devices=ew.any_cuda_device,
        feature="rope.mla_quantize",
    ),
}
ENTRIES = [*SPECS.values(), *MLA_SPECS.values()]
