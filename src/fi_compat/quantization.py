"""Stable facade of FlashInfer's block-scale quantisation: NVFP4 / MXFP4 / MXFP8
quantisation, the FP4 dequantisation helper and the block-scale swizzle, one frozen
signature each (0.7.4's), over every release that has the function (``fp4_quantize``
0.2.6; ``nvfp4_quantize``, ``e2m1_and_ufp8sf_scale_to_float`` and
``block_scale_interleave`` 0.2.9; ``mxfp8_quantize`` 0.2.10; ``mxfp4_quantize`` 0.2.13).
``block_scale_interleave`` was called ``nvfp4_block_scale_interleave`` until 0.2.12; both
names are exported here, as FlashInfer 0.2.13+ does.  ``fi_compat.fp4_quantization`` /
``fi_compat.fp8_quantization`` re-export them under FlashInfer's module names.

The quantisation kernels (not the swizzle) run on SM100 and newer only: fi_compat
refuses older GPUs before the launch on every release (on SM90 most releases return
uninitialised memory without an error).  ``backend="auto"`` is ``"cuda"`` wherever the
release has a backend choice; ``is_global_scale_inversed=True`` works on every release
(the reciprocal is passed where the release lacks the flag or ignores it).
"""

from __future__ import annotations

from ._adapters.quantization import SPECS
from ._core import OMIT, lazy_facades
from .enums import SfLayout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from torch import Tensor

__all__ = ["SfLayout"]  # and every entry point and wrapper class


def fp4_quantize(
    input: Tensor,
    global_scale: Tensor | None = None,
    sf_vec_size: int = 16,
    sf_use_ue8m0: bool = False,
    is_sf_swizzled_layout: bool = True,
    is_sf_8x4_layout: bool = False,
    *,
    is_global_scale_inversed: bool = False,
    enable_pdl: bool | None = None,
    backend: Literal["auto", "cuda", "cute-dsl"] = "auto",
    nvfp4_4over6: Any = OMIT,
    batch_invariant: bool = False,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """``(packed e2m1 uint8 [..., K / 2], scale factors uint8)``; NVFP4 (e4m3 scales per
    16) by default, MXFP4 with ``sf_vec_size=32, sf_use_ue8m0=True``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def nvfp4_quantize(
    a: Tensor,
    a_global_sf: Tensor,
    sfLayout: SfLayout = SfLayout.layout_128x4,
    do_shuffle: bool = False,
    sf_vec_size: int = 16,
    enable_pdl: bool | None = None,
    backend: Literal["auto", "cuda", "cute-dsl"] = "auto",
    per_token_activation: bool = False,
    expanded_idx_to_permuted_idx: Tensor | None = None,
    out_scale: Tensor | None = None,
    nvfp4_4over6: Any = OMIT,
    *,
    batch_invariant: bool = False,
    **kwargs: Any,
) -> Any:
    """NVFP4 quantisation with the scale layout ``sfLayout`` (shuffled for TRT-LLM GEMMs
    with ``do_shuffle``)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def mxfp4_quantize(
    a: Tensor,
    backend: Literal["auto", "cuda", "cute-dsl"] = "auto",
    enable_pdl: bool | None = None,
    sfLayout: SfLayout = SfLayout.layout_128x4,
    *,
    batch_invariant: bool = False,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """MXFP4: e2m1 values with a ue8m0 scale per 32."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def mxfp8_quantize(
    input: Tensor,
    is_sf_swizzled_layout: bool = True,
    alignment: int = 32,
    enable_pdl: bool | None = None,
    backend: Literal["auto", "cuda", "cute-dsl"] = "auto",
    sf_swizzle_layout: SfLayout | None = None,
    *,
    batch_invariant: bool = False,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """MXFP8: ``(float8_e4m3fn [..., round_up(K, alignment)], ue8m0 scales uint8)``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def e2m1_and_ufp8sf_scale_to_float(
    e2m1_tensor: Tensor,
    ufp8_scale_tensor: Tensor,
    global_scale_tensor: Tensor | None = None,
    sf_vec_size: int = 16,
    ufp8_type: int = 1,
    is_sf_swizzled_layout: bool = True,
    is_sf_8x4_layout: bool = False,
    **kwargs: Any,
) -> Tensor:
    """Dequantise packed e2m1 with its scales (``ufp8_type`` 1: e4m3, 0: ue8m0) times
    ``global_scale_tensor`` (the decode scale); a CPU float32 ``[M, K]`` tensor."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def block_scale_interleave(
    unswizzled_sf: Tensor, *, out: Tensor | None = None, **kwargs: Any
) -> Tensor:
    """Swizzle linear uint8 block scales ``[M, K/sf_vec_size]`` into the 128x4 layout the
    FP4 GEMM / MoE kernels read (rows padded to a multiple of 128), on the tensor's GPU.
    A CPU tensor is swizzled on the host by 0.2.9-0.3.1.post1 only; from 0.4.0 it is
    refused before the call (``UnsupportedDeviceError``: FlashInfer reads the device's
    compute capability first).  ``out``: a preallocated result."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def nvfp4_kv_quantize(input: Tensor, global_scale: Tensor, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """Quantize ``[M, K]`` float16 / bfloat16 to the NVFP4 KV-cache format (linear
    block-scale layout; flashinfer-python 0.6.7+, SM100+ kernel).

    Returns ``(fp4_data, block_scales)``: packed ``[M, K/2]`` uint8 and e4m3 scales
    ``[M, K/16]`` uint8; ``K`` a multiple of 16, ``global_scale`` ``[1]`` float32.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def nvfp4_kv_dequantize(
    fp4_data: Tensor,
    block_scales: Tensor,
    global_scale: Tensor,
    output_dtype: Any = OMIT,
    **kwargs: Any,
) -> Tensor:
    """Dequantize the NVFP4 KV-cache format (``[M, K/2]`` uint8 data, ``[M, K/16]``
    uint8 e4m3 scales, ``[1]`` float32 global scale) to ``[M, K]`` ``output_dtype``
    (flashinfer-python 0.6.7+; left out: bfloat16, FlashInfer's default on every
    release).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(
    globals(),
    SPECS.values(),
    aliases={"nvfp4_block_scale_interleave": "block_scale_interleave"},  # 0.2.9-0.2.12 name
)

if TYPE_CHECKING:  # what the generated functions look like, for type checkers
    nvfp4_block_scale_interleave = block_scale_interleave

# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
