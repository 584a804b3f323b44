"""Stable facade of ``flashinfer.gdn_decode``: gated delta rule decode steps (one or a
few tokens per request against a recurrent state) over 0.6.2-0.7.4, one frozen
signature each (0.7.4's).

Per request and value head, with ``g = exp(-exp(A_log) * softplus(a + dt_bias))`` and
``beta = sigmoid(b)`` (q and k L2-normalised when ``use_qk_l2norm``, q scaled by
``scale``, default ``K ** -0.5``): ``S <- g * S``; ``S <- S + beta * (v - S k) k^T``;
``o = S q``.  The state is updated in place and returned with the output.

On every served release: fp16 inputs give the fp16 result (0.6.3-0.7.3 kernels misread
fp16, fi_compat hands them bf16 copies); ``gated_delta_rule_mtp`` leaves the pool alone
unless ``disable_state_update=False`` is passed (its default, ``True``, is what every
release does when the argument is left out, and fi_compat always sends it);
parameters a release lacks are dropped at their defaults and refused otherwise, naming
the release that has them.
"""

from __future__ import annotations

from ._adapters.gdn_decode import SPECS
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from torch import Tensor

__all__: list[str] = []  # every entry point joins it (lazy_facades)


def gated_delta_rule_decode_pretranspose(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    state: Tensor | None,
    A_log: Tensor,
    a: Tensor,
    dt_bias: Tensor,
    b: Tensor,
    scale: float | None = None,
    output: Tensor | None = None,
    use_qk_l2norm: bool = True,
    initial_state: Tensor | None = None,
    initial_state_indices: Tensor | None = None,
    output_state_indices: Tensor | None = None,
    intermediate_states_buffer: Tensor | None = None,
    disable_state_update: bool = False,
    backend: Literal["auto", "flashinfer", "cake_gdn", "rubin"] = "auto",
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """A decode step with the state ``[B, HV, V, K]`` (or a pool ``initial_state``
    ``[N, HV, V, K]`` addressed by ``initial_state_indices``); ``(output [B, T, HV, V],
    state)``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def gated_delta_rule_decode(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    state: Tensor,
    A_log: Tensor,
    a: Tensor,
    dt_bias: Tensor,
    b: Tensor,
    scale: float | None = None,
    output: Tensor | None = None,
    use_qk_l2norm: bool = True,
    backend: Literal["auto", "flashinfer", "cake_gdn"] = "auto",
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """A one-token decode step with the state ``[B, HV, K, V]`` float32."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def gated_delta_rule_mtp(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    initial_state: Tensor,
    initial_state_indices: Tensor,
    A_log: Tensor,
    a: Tensor,
    dt_bias: Tensor,
    b: Tensor,
    scale: float | None = None,
    output: Tensor | None = None,
    intermediate_states_buffer: Tensor | None = None,
    *,
    ssm_state_indices: Tensor | None = None,
    disable_state_update: bool | None = True,
    use_qk_l2norm: bool = True,
    output_state_indices: Tensor | None = None,
    cache_replayssm: bool = False,
    replayssm_rawv: Tensor | None = None,
    replayssm_rawk: Tensor | None = None,
    replayssm_g: Tensor | None = None,
    replayssm_beta: Tensor | None = None,
    **kwargs: Any,
) -> tuple[Tensor, Tensor]:
    """Multi-token (speculative) verification: ``T`` tokens per request against the
    float32 pool ``initial_state [N, HV, V, K]``; ``(output, initial_state)``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values())

# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
