"""Stable facade of ``flashinfer.comm.vllm_ar``: vLLM's custom all-reduce (FlashInfer
0.2.7.post1+; ``flashinfer.comm`` also exposes them as ``vllm_init_custom_ar`` ...,
which resolve here).  Their signatures never changed; each is a facade (checked kinds,
keyword call, the typed errors of ``flashinfer.comm``'s import).
"""

from __future__ import annotations

from .._adapters.comm import VLLM_AR_SPECS
from .._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from torch import Tensor

__all__: list[str] = []  # every entry point joins it


def init_custom_ar(
    ipc_tensors: list[int], rank_data: Tensor, rank: int, full_nvlink: bool, **kwargs: Any
) -> int:
    """Create the custom all-reduce over the peers' IPC buffers; returns its handle ``fa``.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def dispose(fa: int, **kwargs: Any) -> None:
    """Free the custom all-reduce ``fa``.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def all_reduce(
    fa: int,
    inp: Tensor,
    out: Tensor,
    reg_buffer: int,
    reg_buffer_sz_bytes: int,
    num_ctas: int,
    **kwargs: Any,
) -> None:
    """All-reduce ``inp`` into ``out`` (``reg_buffer``: 0 when ``inp`` is registered).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def get_graph_buffer_ipc_meta(fa: int, **kwargs: Any) -> tuple[list[int], list[int]]:
    """The IPC handles and offsets of the buffers a CUDA graph captured.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def register_buffer(fa: int, fake_ipc_ptrs: list[int], **kwargs: Any) -> None:
    """Register the peers' buffer pointers with ``fa``.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def register_graph_buffers(
    fa: int, handles: list[list[int]], offsets: list[list[int]], **kwargs: Any
) -> None:
    """Register every rank's captured graph buffers with ``fa``.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def meta_size(**kwargs: Any) -> int:
    """Bytes of the custom all-reduce's metadata (the ``rank_data`` signal area).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), VLLM_AR_SPECS.values())

from .._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
