"""Stable facade of ``flashinfer.utils``: the setup helpers engines call
(``get_compute_capability`` on every release, ``is_sm100a_supported`` from 0.2.6 and
computed as FlashInfer computes it before, ``device_support_pdl`` from 0.2.7,
``get_device_sm_count`` from 0.2.9, ``get_trtllm_gen_multi_ctas_kv_counter_bytes`` from
0.6.15) and FlashInfer's own ``FP4Tensor`` class (0.2.9), handed out as it is.  None of
them drifted over the releases that have them; before its first release each other one
raises ``UnsupportedFlashInferVersionError`` naming that release.
"""

from __future__ import annotations

from ._adapters.utils import ALL_REEXPORTS, SPECS
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__: list[str] = []  # every entry point and re-export joins it (lazy_facades)


def device_support_pdl(device: Any, **kwargs: Any) -> bool:
    """Whether ``device`` (a ``torch.device``) supports programmatic dependent launch
    (SM90 and newer), as FlashInfer decides its ``enable_pdl=None`` default.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def get_device_sm_count(device: Any, **kwargs: Any) -> int:
    """The number of SMs of ``device`` (a ``torch.device``).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def get_trtllm_gen_multi_ctas_kv_counter_bytes(
    batch_size: int, num_qo_heads: int, sm_count: int, **kwargs: Any
) -> int:
    """The bytes of the trtllm-gen multi-CTA KV counter semaphores for a batch (the
    workspace engines reserve for it).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def get_compute_capability(device: Any, **kwargs: Any) -> tuple[int, int]:
    """The compute capability ``(major, minor)`` of ``device`` (a CUDA ``torch.device``);
    ``ValueError`` for a device that is not CUDA.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def is_sm100a_supported(device: Any, **kwargs: Any) -> bool:
    """Whether ``device`` (a CUDA ``torch.device``) is an SM10x GPU and torch's CUDA is
    12.8 or newer (what the ``sm_100a`` kernels need), as FlashInfer decides it.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values(), reexports=ALL_REEXPORTS)


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
