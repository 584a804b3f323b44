"""fi_compat: one stable, pinned API over many installed FlashInfer releases.

``import fi_compat`` imports neither FlashInfer nor torch and initialises no CUDA.
Facades mirror FlashInfer's modules and are imported on first attribute access::

    from fi_compat import gdn_prefill
    o, state = gdn_prefill.chunk_gated_delta_rule(q, k, v, g, beta, scale, h0, True, cu)

What was detected and which adapter each facade chose: :func:`adapters`, :func:`detect`,
or ``python -m fi_compat info``.
"""

from __future__ import annotations

from ._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

    from . import device, doctor, enums, errors, fused_moe, gdn_prefill
    from ._callpath import Adapter
    from .detection import Detection
    from .device import KnownIssue

__all__ = [
    "FACADES",
    "__version__",
    "adapters",
    "detect",
    "device",
    "doctor",
    "enums",
    "errors",
    "fused_moe",
    "gdn_prefill",
    "known_issues",
    "set_validation",
]

# facade modules: attribute name -> the FlashInfer module it mirrors
FACADES = {"gdn_prefill": "flashinfer.gdn_prefill", "fused_moe": "flashinfer.fused_moe"}
_LAZY = {"device", "doctor", "enums", "errors", "registry", *FACADES}


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
    from ._callpath import adapters as _adapters

    return _adapters()


def known_issues(
    feature: str | None = None, capability: object = None, release: str | None = None
) -> list[KnownIssue]:
    """Known-issues rows that apply (see :func:`fi_compat.device.known_issues`)."""
    from .device import known_issues as _known

    return _known(feature, capability, release)


def set_validation(enabled: bool) -> None:
    """Turn every facade's metadata checks on (default) or off; see the README."""
    from ._callpath import set_validation as _set

    _set(enabled)


def __getattr__(name: str) -> ModuleType:
    if name in _LAZY:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
