"""Stable facade of ``flashinfer.kda_decode``: Kimi delta attention (KDA) decode steps
against a recurrent state, ``recurrent_kda`` over 0.6.13-0.7.4 and the fused Kimi decode
pipeline ``fused_kda_decode`` over 0.6.18-0.7.4, one frozen signature each (0.7.4's).

``backend`` defaults to ``"cute-dsl"``, what every release runs when it is left out
(the only kernels before 0.6.18; the signature default of 0.6.18-0.7.0; what 0.7.1+
resolve ``None`` to, ``kda_decode.py _RELEASED_DECODE_BACKEND``).  Parameters a release
lacks are dropped at their defaults and refused otherwise, naming the release that has
them.  From 0.7.1 FlashInfer's ``kda_decode.recurrent_kda`` warns (DeprecationWarning)
that ``flashinfer.recurrent_kda`` replaces it; fi_compat calls the function the engines
import and leaves the warning to FlashInfer.
"""

from __future__ import annotations

from ._adapters.kda_decode import SPECS
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from torch import Tensor

__all__: list[str] = []  # every entry point joins it (lazy_facades)


def recurrent_kda(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    g: Tensor,
    beta: Tensor,
    A_log: Tensor | None = None,
    dt_bias: Tensor | None = None,
    scale: float | None = None,
    initial_state: Tensor | None = None,
    output_final_state: bool = False,
    use_qk_l2norm_in_kernel: bool = True,
    use_gate_in_kernel: bool = False,
    lower_bound: float | None = None,
    cu_seqlens: Tensor | None = None,
    ssm_state_indices: Tensor | None = None,
    num_spec_tokens: int | None = None,
    num_accepted_tokens: Tensor | None = None,
    output: Tensor | None = None,
    initial_state_source: Tensor | None = None,
    initial_state_indices: Tensor | None = None,
    beta_is_logit: bool = False,
    *,
    disable_state_update: bool = False,
    correction_cache: Tensor | None = None,
    kg_cache: Tensor | None = None,
    backend: Literal["cute-dsl", "cake", "auto"] = "cute-dsl",
    **kwargs: Any,
) -> tuple[Tensor, Tensor | None]:
    """A KDA decode step (one token, or ``1 + num_spec_tokens`` fused speculative
    tokens) with the state ``[N, HV, V, K]``, updated in place.

    Parameters
    ----------
    q, k : Tensor
        ``[B, 1, H, K]`` bfloat16 (``[1, tokens, H, K]`` with ``cu_seqlens``).
    v : Tensor
        ``[B, 1, HV, V]`` bfloat16.
    g : Tensor
        Per-K gate ``[B, 1, HV, K]`` (raw with ``use_gate_in_kernel``).
    beta : Tensor
        ``[B, 1, HV]`` (logits with ``beta_is_logit``).
    A_log, dt_bias : Tensor, optional
        float32 ``[H]`` and ``[H * K]`` for the in-kernel gate.
    scale : float, optional
        Query scale (``K ** -0.5``).
    initial_state : Tensor, optional
        The state pool, updated in place.
    output_final_state, use_qk_l2norm_in_kernel, use_gate_in_kernel, lower_bound
        Gate and normalisation modes.
    cu_seqlens, ssm_state_indices, num_spec_tokens, num_accepted_tokens
        Packing, int32 state slots, speculative decoding.
    output : Tensor, optional
        Output buffer.
    initial_state_source, initial_state_indices, beta_is_logit
        A separate read pool and its slots (0.6.16), sigmoid in the kernel.
    disable_state_update, correction_cache, kg_cache
        Frozen-state verification and its caches (0.7.0).
    backend : {"cute-dsl", "cake", "auto"}
        The kernel family (0.6.18; ``"auto"`` 0.7.0).

    Returns
    -------
    tuple
        ``(output, final_state or None)``.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def fused_kda_decode(
    x: Tensor,
    weight: Tensor,
    conv_state: Tensor,
    raw_gate: Tensor,
    raw_beta: Tensor,
    A_log: Tensor,
    dt_bias: Tensor,
    state_indices: Tensor,
    state: Tensor,
    output_gate: Tensor,
    norm_weight: Tensor,
    lower_bound: float | None = -5.0,
    norm_eps: float = 1e-5,
    output: Tensor | None = None,
    *,
    backend: Literal["cute-dsl", "cake", "auto"] = "cute-dsl",
    state_indices_mode: Literal["positive_unique", "unique_or_null", "repeated_positive"]
    | None = None,
    **kwargs: Any,
) -> Tensor:
    """The fused Kimi KDA decode pipeline: width-4 causal conv + SiLU, one recurrent KDA
    update and gated RMSNorm (head dim 128); ``conv_state`` and ``state`` updated in
    place, slot 0 the null slot.

    Parameters
    ----------
    x : Tensor
        Packed QKV ``[rows, 3 * H * 128]`` bfloat16.
    weight : Tensor
        Conv weights ``[3, 4, H * 128]`` float32.
    conv_state : Tensor
        ``[slots, 3 * H * 128, 3]`` bfloat16.
    raw_gate, raw_beta : Tensor
        ``[1, rows, H, 128]`` and ``[1, rows, H]`` bfloat16.
    A_log, dt_bias : Tensor
        float32, ``H`` and ``H * 128`` elements.
    state_indices : Tensor
        ``[rows]`` int32; non-positive rows take the null path.
    state : Tensor
        ``[slots, H, 128, 128]`` float32 or bfloat16.
    output_gate : Tensor
        ``[rows, H, 128]`` or ``[1, rows, H, 128]`` bfloat16.
    norm_weight : Tensor
        ``[128]`` float32.
    lower_bound : float, optional
        The negative gate bound (``None``: the softplus gate).
    norm_eps : float
        RMSNorm epsilon.
    output : Tensor, optional
        ``[1, rows, H, 128]`` bfloat16 buffer.
    backend, state_indices_mode
        Kernel family and the Cake dispatcher's host-known index property (0.7.1).

    Returns
    -------
    Tensor
        ``[1, rows, H, 128]`` bfloat16.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values())


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
