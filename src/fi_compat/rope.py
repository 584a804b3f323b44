"""Stable facade of ``flashinfer.rope``: rotary embeddings by ragged offsets, by position
ids, Llama 3.1 scaling, and vLLM's cos/sin-cache form; one frozen signature each over
every release 0.2.0.post1-0.7.4 (the cos/sin-cache pair 0.2.0.post2+, when it took its
present signature).

``q`` / ``k`` are ``[nnz, num_heads, head_dim]`` fp16/bf16.  The index tensors
(``indptr``, ``offsets``, ``pos_ids``, ``positions``) may be int32 or int64 on every
release: 0.2.0.post1-0.2.6 read them as int32 without a check (an int64 tensor was
silently misread), so fi_compat hands those releases int32.  The ``_inplace`` variants
return None; the others ``(q_rope, k_rope)``.

Head sizes: every release's kernels take 64, 128, 256 and 512 only; another one is
refused before the launch (on 0.2.1.post1-0.3.1.post1 it killed the process).  The
cos/sin-cache form takes other head sizes from flashinfer-python 0.6.0, with a
``rotary_dim`` that is a multiple of 32 (NeoX) or 16 (interleaved).

``mla_rope_quantize_fp8`` (0.2.11+): RoPE on MLA's rotary parts and fp8 quantization of
all four parts; rope_dim 64 / nope_dim 512 only before 0.5.0 (refused otherwise, naming
0.5.0), ``enable_pdl`` 0.5.0.
"""

from __future__ import annotations

from ._adapters.rope import MLA_SPECS, SPECS
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from torch import Tensor

__all__: list[str] = []  # every entry point joins it (lazy_facades)


def apply_rope(
    q: Tensor,
    k: Tensor,
    indptr: Tensor,
    offsets: Tensor,
    rotary_dim: int | None = None,
    interleave: bool = False,
    rope_scale: float = 1,
    rope_theta: float = 1e4,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """RoPE on ragged ``q``/``k``: request ``i`` holds rows ``indptr[i]:indptr[i+1]``,
    its first position is ``offsets[i]``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def apply_rope_inplace(
    q: Tensor,
    k: Tensor,
    indptr: Tensor,
    offsets: Tensor,
    rotary_dim: int | None = None,
    interleave: bool = False,
    rope_scale: float = 1,
    rope_theta: float = 1e4,
    **kwargs: Any,
) -> None:
    """:func:`apply_rope`, writing into ``q`` and ``k``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def apply_rope_pos_ids(
    q: Tensor,
    k: Tensor,
    pos_ids: Tensor,
    rotary_dim: int | None = None,
    interleave: bool = False,
    rope_scale: float = 1,
    rope_theta: float = 1e4,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """RoPE with one position per row (``pos_ids`` ``[nnz]``)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def apply_rope_pos_ids_inplace(
    q: Tensor,
    k: Tensor,
    pos_ids: Tensor,
    rotary_dim: int | None = None,
    interleave: bool = False,
    rope_scale: float = 1,
    rope_theta: float = 1e4,
    **kwargs: Any,
) -> None:
    """:func:`apply_rope_pos_ids`, writing into ``q`` and ``k``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def apply_llama31_rope_pos_ids(
    q: Tensor,
    k: Tensor,
    pos_ids: Tensor,
    rotary_dim: int | None = None,
    interleave: bool = False,
    rope_scale: float = 8,
    rope_theta: float = 5e5,
    low_freq_factor: float = 1,
    high_freq_factor: float = 4,
    old_context_len: int = 8192,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """RoPE with Llama 3.1's frequency scaling, one position per row."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def apply_llama31_rope_pos_ids_inplace(
    q: Tensor,
    k: Tensor,
    pos_ids: Tensor,
    rotary_dim: int | None = None,
    interleave: bool = False,
    rope_scale: float = 8,
    rope_theta: float = 5e5,
    low_freq_factor: float = 1,
    high_freq_factor: float = 4,
    old_context_len: int = 8192,
    **kwargs: Any,
) -> None:
    """:func:`apply_llama31_rope_pos_ids`, writing into ``q`` and ``k``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def apply_rope_with_cos_sin_cache(
    positions: Tensor,
    query: Tensor,
    key: Tensor,
    head_size: int,
    cos_sin_cache: Tensor,
    is_neox: bool = True,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """vLLM's RoPE form: ``cos_sin_cache`` float32 ``[max_position, rotary_dim]`` (cos
    half, then sin half), ``query`` / ``key`` ``[nnz, heads * head_size]``; ``is_neox``:
    rotate halves (True) or even/odd pairs (False).  flashinfer>=0.2.0.post2 (0.2.0.post1
    had another signature: refused at the first call)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def apply_rope_with_cos_sin_cache_inplace(
    positions: Tensor,
    query: Tensor,
    key: Tensor,
    head_size: int,
    cos_sin_cache: Tensor,
    is_neox: bool = True,
    **kwargs: Any,
) -> None:
    """:func:`apply_rope_with_cos_sin_cache`, writing into ``query`` and ``key``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def mla_rope_quantize_fp8(
    q_rope: Tensor,
    k_rope: Tensor,
    q_nope: Tensor,
    k_nope: Tensor,
    cos_sin_cache: Tensor,
    pos_ids: Tensor,
    is_neox: bool = True,
    quantize_dtype: Any = None,
    quant_scale_q: float = 1.0,
    quant_scale_kv: float = 1.0,
    q_rope_out: Tensor | None = None,
    k_rope_out: Tensor | None = None,
    q_nope_out: Tensor | None = None,
    k_nope_out: Tensor | None = None,
    enable_pdl: bool = False,
    **kwargs: Any,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Apply RoPE to MLA's rotary parts and quantize all four parts to fp8.

    Parameters
    ----------
    q_rope, q_nope : Tensor
        ``[nnz, heads, rope_dim]`` / ``[nnz, heads, nope_dim]``, float16 or bfloat16.
    k_rope, k_nope : Tensor
        ``[nnz, rope_dim]`` / ``[nnz, nope_dim]`` (one shared key head), ``q_rope``'s dtype.
    cos_sin_cache : Tensor
        ``[max_seq_len, rope_dim]`` float32.
    pos_ids : Tensor
        ``[nnz]`` int32 or int64 positions.
    is_neox : bool
        NeoX (split-half) rotation, else interleaved.
    quantize_dtype : torch.dtype, optional
        ``float8_e4m3fn`` or ``float8_e5m2``; None: the given outputs' dtype, else e4m3fn.
    quant_scale_q, quant_scale_kv : float
        Scales applied before the cast.
    q_rope_out, k_rope_out, q_nope_out, k_nope_out : Tensor, optional
        fp8 outputs shaped like the inputs; allocated where not given.
    enable_pdl : bool
        Programmatic dependent launch (0.5.0+).

    Returns
    -------
    (q_rope_out, k_rope_out, q_nope_out, k_nope_out) : tuple of Tensor

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), [*SPECS.values(), *MLA_SPECS.values()])

# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
