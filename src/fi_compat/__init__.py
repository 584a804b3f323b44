"""fi_compat: one stable, pinned API over many installed FlashInfer releases.

``import fi_compat`` imports neither FlashInfer nor torch and initialises no CUDA.
Facades mirror FlashInfer's modules and are imported on first attribute access::

    from fi_compat import gdn_prefill
    o, state = gdn_prefill.chunk_gated_delta_rule(q, k, v, g, beta, scale, h0, True, cu)

Code written positionally against one release keeps that release's binding::

    fi_compat.written_for("0.5.3").fused_moe.trtllm_fp4_block_scale_moe(*args)

What was detected and which adapter each facade chose: :func:`adapters`, :func:`explain`,
:func:`detect`, or ``python -m fi_compat info``.
"""

from __future__ import annotations

from . import _locate
from ._facades import FACADES
from ._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from . import cli, device, enums, errors, fused_moe, gdn_prefill  # noqa: F401
    from ._core import Adapter
    from ._written import WrittenFor
    from .detection import Detection
    from .device import KnownIssue

__all__ = [
    "FACADES",
    "__version__",
    "adapters",
    "cli",
    "detect",
    "device",
    "enums",
    "errors",
    "explain",
    "known_issues",
    "set_debug",
    "set_validation",
    "written_for",
    *FACADES,
]

_LAZY = {"cli", "device", "enums", "errors", "registry", *FACADES}


def detect(refresh: bool = False) -> Detection:
    """The installed flashinfer-python / -cubin / -jit-cache (see :mod:`fi_compat.detection`)."""
    from .detection import detect as _detect

    return _detect(refresh)


def adapters(load: bool = True) -> dict[str, Adapter]:
    """The adapter chosen for every facade function, keyed by its dotted name.

    ``load=True`` imports every facade module first and builds its functions (cheap:
    FlashInfer is not imported).
    ``adapters()["fi_compat.gdn_prefill.chunk_gated_delta_rule"].describe()`` says which
    release range it serves, what it forwards and what it drops or emulates.
    """
    import importlib

    if load:
        for name in FACADES:
            importlib.import_module(f"{__name__}.{name}")
    from ._core import adapters as _adapters

    return _adapters()


def explain(facade: Any) -> str:
    """The adapter's choice and the generated code ``facade`` runs on this release."""
    from ._core import explain as _explain

    return _explain(facade)


def written_for(release: str) -> WrittenFor:
    """Facade modules whose functions bind arguments as flashinfer-python ``release``
    does: its positional order, its parameter names, its defaults (see
    :mod:`fi_compat._core.written`)."""
    from ._written import WrittenFor as _WrittenFor

    return _WrittenFor(release)


def known_issues(
    feature: str | None = None, capability: object = None, release: str | None = None
) -> list[KnownIssue]:
    """Known-issues rows that apply (see :func:`fi_compat.device.known_issues`)."""
    from .device import known_issues as _known

    return _known(feature, capability, release)


def set_debug(enabled: bool) -> None:
    """Turn every facade's debug value checks on or off (host syncs; see the README)."""
    from ._core import set_debug as _set

    _set(enabled)


def set_validation(enabled: bool) -> None:
    """Turn every facade's metadata checks on (default) or off; see the README."""
    from ._core import set_validation as _set

    _set(enabled)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    # FlashInfer's top-level names (``flashinfer.rmsnorm``) and modules fi_compat has no
    # file for (``flashinfer.tllm_enums``): the facades' objects (see fi_compat._locate)
    value = _locate.lookup(__name__, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(
        {*globals(), *__all__, *_LAZY, *_locate.names(__name__), *_locate.children(__name__)}
    )


_locate.install_finder()  # ``import fi_compat.tllm_enums``: FlashInfer's module names
