"""Stable facade of ``flashinfer.mhc``: the manifold hyper-connection (mHC, ``HC = 4``
residual streams) kernels DeepSeek-V4 serving calls, over 0.6.13-0.7.4.

Neither signature drifted from 0.6.13 to 0.7.4; FlashInfer validates the shapes in
Python before its launch on every release (``_check_mhc_post_inputs``,
``_check_mhc_pre_common_inputs``), fi_compat checks the ranks and the ``HC = 4`` axis
first so the error is the same typed one everywhere.
"""

from __future__ import annotations

from ._adapters.mhc import SPECS
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from torch import Tensor

__all__: list[str] = []  # every entry point joins it (lazy_facades)


def mhc_post(
    x: Tensor,
    residual: Tensor,
    post_layer_mix: Tensor,
    comb_res_mix: Tensor,
    **kwargs: Any,
) -> Tensor:
    """The mHC post mapping:
    ``out[..., j, h] = x[..., h] * post_layer_mix[..., j]
    + sum_i residual[..., i, h] * comb_res_mix[..., i, j]``.

    Parameters
    ----------
    x : Tensor
        The layer output ``[..., H]``.
    residual : Tensor
        The residual streams ``[..., 4, H]``.
    post_layer_mix : Tensor
        ``[..., 4]`` or ``[..., 4, 1]``.
    comb_res_mix : Tensor
        ``[..., 4, 4]``.

    Returns
    -------
    Tensor
        Shaped like ``residual``.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def mhc_pre_big_fuse(
    dot_mix: Tensor,
    sqrsum: Tensor,
    residual: Tensor,
    mhc_scale: Tensor,
    mhc_base: Tensor,
    k: int,
    rms_eps: float = 1e-6,
    mhc_pre_eps: float = 1e-6,
    mhc_sinkhorn_eps: float = 1e-6,
    mhc_post_mult_value: float = 1.0,
    sinkhorn_repeat: int = 20,
    num_splits: int = 1,
    block_size: int = 0,
    **kwargs: Any,
) -> tuple[Tensor, Tensor, Tensor]:
    """The fused mHC pre mapping from an external projection (``dot_mix``, laid out
    ``[pre(4), post(4), comb(16)]``) and its square sums.

    Parameters
    ----------
    dot_mix : Tensor
        ``[..., 24]`` (``[num_splits, ..., 24]`` when ``num_splits > 1``).
    sqrsum : Tensor
        ``[...]`` (``[num_splits, ...]``).
    residual : Tensor
        The residual streams ``[..., 4, H]``, bfloat16.
    mhc_scale, mhc_base : Tensor
        The Sinkhorn / mix parameters.
    k : int
        The mHC ``k`` handed to the kernel.
    rms_eps, mhc_pre_eps, mhc_sinkhorn_eps : float
        Strictly positive epsilons.
    mhc_post_mult_value : float
        Factor on the post outputs.
    sinkhorn_repeat : int
        Sinkhorn iterations.
    num_splits : int
        1, 2, 4, 8 or 16.
    block_size : int
        CUDA block-size hint (0: the kernel's default).

    Returns
    -------
    tuple of Tensor
        ``(post_mix [..., 4, 1], comb_mix [..., 4, 4], layer_input [..., H])``.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values())


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
