"""Stable facade of ``flashinfer.comm.mnnvl``: multi-node NVLink (MNNVL) fabric memory.

``is_mnnvl_fabric_supported`` is a facade (0.6.0+); ``MnnvlConfig`` (0.3.0+),
``MnnvlMemory`` (0.2.7.post1+), ``CommBackend`` (0.3.0+) and ``TorchDistBackend`` (0.6.0+)
are FlashInfer's own classes (their constructors never changed; 0.6.16 moved
``CommBackend`` / ``TorchDistBackend`` to ``comm.abstractions`` / ``comm.comm_backend``,
which ``mnnvl`` still re-exports), and so is ``McastGPUBuffer`` from 0.6.0 (0.2.8-0.5.3
take ``mn_nvlink`` where 0.6.0 takes ``comm_backend_for_handle_transfer``), resolved on
first access of the name.  Where the
installed release cannot give one, the name is a stand-in class whose use raises the
typed error.
"""

from __future__ import annotations

from .._adapters.comm import MNNVL_REEXPORTS, MNNVL_SPECS
from .._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__: list[str] = []  # every entry point and re-export joins it


def is_mnnvl_fabric_supported(device_idx: int, **kwargs: Any) -> bool:
    """Whether CUDA device ``device_idx`` supports fabric memory handles (MNNVL).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), MNNVL_SPECS.values(), reexports=MNNVL_REEXPORTS.values())

if TYPE_CHECKING:
    MnnvlConfig: Any
    MnnvlMemory: Any
    CommBackend: Any
    TorchDistBackend: Any
    McastGPUBuffer: Any


from .._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
