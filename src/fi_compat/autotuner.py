"""Stable facade of ``flashinfer.autotuner``: the ``autotune`` context manager every
engine enters at warm-up, ``set_autotune_process_group`` (0.6.16+), and FlashInfer's own
``AutoTuner`` / ``TuningConfig`` / ``ConstraintSpec`` / ``DynamicTensorSpec`` classes.

``autotune(...)`` returns FlashInfer's context manager (``with autotune(): warm_up()``)
on 0.2.6+; options a release lacks are dropped at ``None`` (their "inherit" value) and
refused otherwise, naming the first release that has them.  Before 0.2.6 (no autotuner:
no kernel chooses a tactic by measurement) it is a no-op context manager, which is
exact: nothing of those releases reads a tuning state, so running a warm-up inside it
or not gives the same kernels and the same results.  That is what engines hand-write
today (``contextlib.nullcontext()`` when ``flashinfer.autotuner`` is missing).

The classes are FlashInfer's own objects, handed out as they are (``isinstance`` and
FlashInfer's helpers work), resolved on first access; on a release that predates one,
the name is a stand-in class whose use raises ``UnsupportedFlashInferVersionError`` (an
``ImportError``) naming the first release.  Their constructors never drifted over the
releases served here, except by appended keyword options (listed per class in
``docs/autotuner.md``).
"""

from __future__ import annotations

from ._adapters.autotuner import ALL_REEXPORTS, SPECS
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from contextlib import AbstractContextManager
    from typing import Any

__all__: list[str] = []  # every entry point and re-export joins it (lazy_facades)


def autotune(
    tune_mode: bool = True,
    cache: str | None = None,
    tuning_buckets: Sequence[int] | None = None,
    round_up: bool | None = None,
    skip_ops: Any = None,
    cuda_graph_profile_replays: int | None = None,
    tie_tolerance: float | None = None,
    **kwargs: Any,
) -> AbstractContextManager[Any]:
    """Context manager for FlashInfer's autotuner: inside it, ``tune_mode=True`` profiles
    the shapes the tuned kernels meet and keeps the fastest tactic (``False``: cached
    tactics only).  ``cache``: a JSON file of tactics, loaded on entry and saved on
    exit; ``tuning_buckets``, ``round_up``, ``skip_ops``, ``cuda_graph_profile_replays``,
    ``tie_tolerance``: ``None`` inherits (FlashInfer 0.7.4's meaning).  A no-op before
    0.2.6.

    {release_notes}
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def set_autotune_process_group(group: Any, **kwargs: Any) -> None:
    """Average the autotuner's per-tactic timings over ``group`` (a
    ``torch.distributed`` process group; ``None`` disables) so every rank picks the same
    tactic (flashinfer-python 0.6.16+)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values(), reexports=ALL_REEXPORTS)


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
