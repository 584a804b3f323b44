"""Stable facade of ``flashinfer.gdn_kernels``: the bf16-state multi-token gated delta
rule ``gated_delta_rule_mtp`` of ``flashinfer.gdn_kernels.gdn_decode_bf16_state``
(0.6.8-0.7.4), one frozen signature.  ``fi_compat.gdn_kernels.gdn_decode_bf16_state.
gated_delta_rule_mtp`` is the same object.  Not :func:`fi_compat.gdn_decode.
gated_delta_rule_mtp` (the float32-pool MTP step of ``flashinfer.gdn_decode``), which
shares the name only.

Per request and value head, for each of the ``T`` tokens, with ``g = exp(-exp(A_log) *
softplus(a + dt_bias))`` and ``beta = sigmoid(b)``: ``S <- g * S``; ``S <- S + beta *
(v - S k) k^T``; ``o = S q`` (q and k L2-normalised when ``use_qk_l2norm_in_kernel``, q
scaled by ``scale``, default ``K ** -0.5``).  The state is the bf16 pool
``initial_state_source [N, HV, V, K]`` (``K == V == 128``), row
``initial_state_indices[i]`` for request ``i``, written back unless
``disable_state_update``.

On every served release: non-bf16 ``q``/``k``/``v``/``a``/``b`` are computed as bf16
(0.6.18's conversion; 0.6.8-0.6.17 kernels misread them, fi_compat passes bf16 copies);
``output=None`` returns a fresh tensor (0.6.11-0.6.17 return a cached buffer,
fi_compat allocates it); ``initial_state_indices`` is required (0.6.11+ assert it);
a padded pool (0.6.8-0.6.11.post3) and ``intermediate_states_buffer`` where the
release indexes or strides it otherwise than 0.7.4 (0.6.8-0.7.2.post1) are refused
before the launch, naming the first release that serves them; parameters a release
lacks are dropped at their defaults and refused otherwise.
"""

from __future__ import annotations

from ._adapters.gdn_kernels import SPECS
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from torch import Tensor

__all__: list[str] = []  # every entry point joins it (lazy_facades)


def gated_delta_rule_mtp(
    A_log: Tensor,
    a: Tensor,
    dt_bias: Tensor,
    softplus_beta: float = 1.0,
    softplus_threshold: float = 20.0,
    q: Tensor | None = None,
    k: Tensor | None = None,
    v: Tensor | None = None,
    b: Tensor | None = None,
    initial_state_source: Tensor | None = None,
    initial_state_indices: Tensor | None = None,
    *,
    output_state_indices: Tensor | None = None,
    intermediate_states_buffer: Tensor | None = None,
    accepted_steps: Tensor | None = None,
    ssm_state_indices: Tensor | None = None,
    disable_state_update: bool = False,
    use_qk_l2norm_in_kernel: bool = True,
    scale: float | None = None,
    output: Tensor | None = None,
    disable_output: bool = False,
    recovery_steps: int = 0,
    **kwargs: Any,
) -> Tensor:
    """``T`` tokens per request (speculative verification) against the bf16 state pool;
    returns the output ``[B, T, HV, V]`` bf16.

    Parameters
    ----------
    A_log, dt_bias : Tensor
        ``[HV]`` float32 (or bfloat16) gate parameters.
    a, b : Tensor
        ``[B, T, HV]`` gate inputs; ``b`` is required.
    softplus_beta, softplus_threshold : float
        The softplus of the decay gate.
    q, k : Tensor
        ``[B, T, H, 128]`` bfloat16 (float16 is computed as bfloat16); required.
    v : Tensor
        ``[B, T, HV, 128]``, ``HV`` a multiple of ``H``; required.
    initial_state_source : Tensor
        The bf16 state pool ``[N, HV, 128, 128]``, updated in place; required.
    initial_state_indices : Tensor
        ``[B]`` pool slot read per request; required.
    output_state_indices : Tensor, optional
        ``[B]`` pool slot written per request (default: ``initial_state_indices``).
    intermediate_states_buffer : Tensor, optional
        ``[B, S >= T, HV, V, K]`` bf16: the state after each token, by batch row.
    accepted_steps, ssm_state_indices : Tensor, optional
        int32 ``[B]`` accepted steps and ``[B, T]`` per-token pool slots.
    disable_state_update : bool
        Leave the pool untouched.
    use_qk_l2norm_in_kernel : bool
        L2-normalise q and k.
    scale : float, optional
        Query scale (``K ** -0.5``).
    output : Tensor, optional
        ``[B, T, HV, V]`` bf16 to write into.
    disable_output, recovery_steps
        Skip the output; fused recovery steps.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values())

# FlashInfer's other names and submodules of this module (gdn_decode_bf16_state) resolve
# here too, as the same objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
