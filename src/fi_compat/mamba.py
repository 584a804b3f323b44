"""Stable facade of ``flashinfer.mamba``: the Mamba2 selective-state update (the
generation step of an SSM layer against a state cache) over 0.6.1-0.7.4, one frozen
signature (0.7.4's).

Per token, head ``h``, channel ``d`` and state column ``n`` (``dt`` gets ``dt_bias``
added and ``softplus`` applied when ``dt_softplus``):
``state[d, n] <- state[d, n] * exp(dt * A[d, n]) + dt * B[n] * x[d]``;
``out[d] = sum_n state[d, n] * C[n] + D[d] * x[d]``, times ``silu(z[d])`` when ``z`` is
given.  ``state`` is updated in place (rows chosen by ``state_batch_indices``); the
output is returned.

The positional order is frozen through ``pad_slot_id``: 0.6.6 inserted ``state_scale``
before ``out``, so everything after ``pad_slot_id`` is keyword-only here (a positional
call written for one release keeps its meaning on another through
``fi_compat.written_for``).  int64 ``state_batch_indices`` mean the same on every
release (0.6.1-0.6.2 read the indices as int32; fi_compat casts them there); parameters
a release lacks are dropped at their defaults and refused otherwise, naming the release
that has them.
"""

from __future__ import annotations

from ._adapters.mamba import SPECS
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from torch import Tensor

__all__: list[str] = []  # every entry point joins it (lazy_facades)


def selective_state_update(
    state: Tensor,
    x: Tensor,
    dt: Tensor,
    A: Tensor,
    B: Tensor,
    C: Tensor,
    D: Tensor,
    z: Tensor | None = None,
    dt_bias: Tensor | None = None,
    dt_softplus: bool = False,
    state_batch_indices: Tensor | None = None,
    pad_slot_id: int = -1,
    *,
    state_scale: Tensor | None = None,
    out: Tensor | None = None,
    disable_state_update: bool = False,
    intermediate_states_buffer: Tensor | None = None,
    intermediate_state_indices: Tensor | None = None,
    intermediate_state_scales: Tensor | None = None,
    rand_seed: Tensor | None = None,
    philox_rounds: int = 10,
    cache_steps: int = 0,
    algorithm: Literal["auto", "simple", "vertical", "horizontal", "async_horizontal"] = "auto",
    dst_state_batch_indices: Tensor | None = None,
    cu_seqlens: Tensor | None = None,
    num_accepted_tokens: Tensor | None = None,
    backend: Literal["auto", "flashinfer", "cake"] = "auto",
    **kwargs: Any,
) -> Tensor:
    """One selective-state update step of a Mamba2 layer.

    Parameters
    ----------
    state : Tensor
        The state cache ``[cache, nheads, dim, dstate]`` (or ``[cache, dim, dstate]``),
        updated in place.
    x, dt : Tensor
        ``[batch, nheads, dim]`` (or ``[batch, dim]``); multi-token ``[batch, T, nheads,
        dim]`` with ``cache_steps``, varlen ``[tokens, nheads, dim]`` with ``cu_seqlens``.
    A : Tensor
        ``[nheads, dim, dstate]`` float32 (Mamba2: a broadcast view of ``[nheads]``).
    B, C : Tensor
        ``[batch, ngroups, dstate]`` (the token layout of ``x``).
    D : Tensor
        ``[nheads, dim]`` skip weights.
    z, dt_bias : Tensor, optional
        The gate (layout of ``x``) and the ``dt`` bias ``[nheads, dim]``.
    dt_softplus : bool
        Apply ``softplus`` to ``dt + dt_bias``.
    state_batch_indices : Tensor, optional
        ``[batch]`` int32 or int64: the state row of each request.
    pad_slot_id : int
        Entries of ``state_batch_indices`` equal to it are skipped.
    out : Tensor, optional
        Output buffer shaped like ``x``.
    disable_state_update, intermediate_states_buffer, intermediate_state_indices, cache_steps
        Speculative-decoding verification (multi-token).
    state_scale, intermediate_state_scales, rand_seed, philox_rounds
        int16 block-scaled state and stochastic rounding.
    algorithm, backend
        Kernel choices (``"auto"``: FlashInfer's choice).
    dst_state_batch_indices, cu_seqlens, num_accepted_tokens
        Separate write slots, varlen tokens, accepted draft tokens.

    Returns
    -------
    Tensor
        The output, shaped like ``x``.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values())


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
