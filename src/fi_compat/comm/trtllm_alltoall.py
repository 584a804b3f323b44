"""Stable facade of ``flashinfer.comm.trtllm_alltoall``: the two-sided MoE all-to-all-v
over MNNVL (FlashInfer 0.2.7.post1-0.7.2.post1; deprecated in 0.7.1 for
``flashinfer.moe_ep.NVLinkTwoSidedAlltoAll``, removed in 0.7.4).

``MnnvlMoe`` is a subclass of the installed FlashInfer class, built on first access of
the name, whose static methods (``get_moe_workspaces``, ``get_moe_prepare_workspace``,
``mnnvl_moe_alltoallv_prepare_without_allgather``, ``mnnvl_moe_alltoallv``,
``mnnvl_moe_alltoallv_combine``) have one frozen signature on every release (0.3.0 added
``get_moe_workspaces``' ``config``) and call FlashInfer's by keyword; the workspaces stay
on FlashInfer's class, where its own code keeps them.  ``MoEAlltoallInfo`` is
FlashInfer's own dataclass (its fields never changed).  On 0.7.4+ both resolve to
stand-ins whose use raises ``UnsupportedFlashInferVersionError`` naming the replacement.
"""

from __future__ import annotations

from .._adapters.comm import ALLTOALL, ALLTOALL_REEXPORTS, MNNVL_MOE_CLASS, MNNVL_MOE_METHODS
from .._core import lazy_facades
from .._core.classes import WrapperClass, lazy_classes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from torch import Tensor

__all__: list[str] = []  # the class and the re-export join it


def _get_moe_workspaces(mapping: Any, config: Any = None, **kwargs: Any) -> Tensor:
    """The MNNVL all-to-all workspace of ``mapping`` (allocated once, a collective).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated method


def _get_moe_prepare_workspace(mapping: Any, config: Any = None, **kwargs: Any) -> Tensor:
    """The MNNVL workspace of the prepare step (allocated once, a collective).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated method


def _prepare_without_allgather(
    expert_ids: Tensor,
    scales: Tensor,
    expert_statics: Tensor | None,
    workspace: Tensor,
    max_token_count_per_rank: int,
    ep_rank: int,
    ep_size: int,
    expert_count: int,
    slot_count: int,
    top_k: int,
    **kwargs: Any,
) -> Any:
    """Exchange routing metadata: returns ``(alltoall_info, gathered_expert_ids,
    gathered_scales, gathered_expert_statics)`` (``MoEAlltoallInfo`` first).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated method


def _alltoallv(
    x: Tensor, alltoall_info: Any, workspace: Tensor, ep_rank: int, ep_size: int, **kwargs: Any
) -> Tensor:
    """Send the 2-D rows of ``x`` to the ranks of their experts (the dispatch).

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated method


def _alltoallv_combine(
    x: Tensor,
    alltoall_info: Any,
    workspace: Tensor,
    ep_rank: int,
    ep_size: int,
    top_k: int,
    token_count: int,
    **kwargs: Any,
) -> Tensor:
    """Return the experts' rows to their tokens' ranks and sum the ``top_k`` per token.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated method


_STUBS: dict[str, Callable[..., Any]] = {
    "get_moe_workspaces": _get_moe_workspaces,
    "get_moe_prepare_workspace": _get_moe_prepare_workspace,
    "mnnvl_moe_alltoallv_prepare_without_allgather": _prepare_without_allgather,
    "mnnvl_moe_alltoallv": _alltoallv,
    "mnnvl_moe_alltoallv_combine": _alltoallv_combine,
}
CLASSES = {
    MNNVL_MOE_CLASS: WrapperClass(
        facade=__name__,
        name=MNNVL_MOE_CLASS,
        module=ALLTOALL,
        methods={m: (stub, MNNVL_MOE_METHODS[m]) for m, stub in _STUBS.items()},
        static=tuple(_STUBS),
        doc="The two-sided MoE all-to-all-v over MNNVL (FlashInfer's ``MnnvlMoe``, "
        "0.2.7.post1-0.7.2.post1): a subclass of the installed class whose static methods "
        "have one frozen signature on every release.",
    )
}
lazy_facades(globals(), (), reexports=ALLTOALL_REEXPORTS.values())
lazy_classes(globals(), CLASSES)

if TYPE_CHECKING:

    class MnnvlMoe:
        get_moe_workspaces = staticmethod(_get_moe_workspaces)
        get_moe_prepare_workspace = staticmethod(_get_moe_prepare_workspace)
        mnnvl_moe_alltoallv_prepare_without_allgather = staticmethod(_prepare_without_allgather)
        mnnvl_moe_alltoallv = staticmethod(_alltoallv)
        mnnvl_moe_alltoallv_combine = staticmethod(_alltoallv_combine)

    MoEAlltoallInfo: Any


from .._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
