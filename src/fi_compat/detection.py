"""Facts about the installed FlashInfer distributions, read without importing FlashInfer.

``detect()`` scans ``sys.path`` in order (as ``importlib.metadata`` would) for the
``*.dist-info`` / ``*.egg-info`` metadata of

* ``flashinfer-python`` (and the old distribution name ``flashinfer``),
* ``flashinfer-cubin``,
* ``flashinfer-jit-cache``,

and reads each ``Version:`` header.  It deliberately does not use ``importlib.metadata``:
importing that module costs ~70 ms on a small machine, and this runs when a facade is
imported.  Versions are parsed with :mod:`packaging.version` only when someone asks for
a parsed version (``Distribution.parsed``); adapter selection of known releases needs
no parsing (see :mod:`fi_compat.registry`).

Override, for tests and bug reports: ``FI_COMPAT_FLASHINFER_VERSION=0.6.7`` makes
``detect()`` report that ``flashinfer-python`` version (location ``"<override>"``)
whatever is installed; ``FI_COMPAT_FLASHINFER_VERSION=none`` reports it not installed.
``python -m fi_compat info`` shows what was detected and whether it was overridden.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from packaging.version import Version

__all__ = ["OVERRIDE_ENV", "Detection", "Distribution", "detect"]

OVERRIDE_ENV = "FI_COMPAT_FLASHINFER_VERSION"

# normalised project name -> canonical PyPI name
_WATCHED = {
    "flashinfer_python": "flashinfer-python",
    "flashinfer": "flashinfer",  # the distribution name used before flashinfer-python
    "flashinfer_cubin": "flashinfer-cubin",
    "flashinfer_jit_cache": "flashinfer-jit-cache",
}


class Distribution:
    """One installed distribution: name, raw version string, where it lives."""

    __slots__ = ("name", "version", "location", "metadata_path", "_parsed")

    def __init__(self, name: str, version: str, location: str, metadata_path: str) -> None:
        self.name = name
        self.version = version
        self.location = location
        self.metadata_path = metadata_path
        self._parsed: Version | None = None

    @property
    def parsed(self) -> Version:
        """The version as :class:`packaging.version.Version` (parsed on first use)."""
        if self._parsed is None:
            from packaging.version import Version

            self._parsed = Version(self.version)
        return self._parsed

    @property
    def public(self) -> str:
        """The version without its local tag (``0.6.18+cu130`` -> ``0.6.18``)."""
        return self.version.partition("+")[0]

    @property
    def local(self) -> str | None:
        """The local tag (``cu130`` for ``0.6.18+cu130``), or ``None``."""
        return self.parsed.local

    @property
    def is_prerelease(self) -> bool:
        """True for ``rc``/``a``/``b`` and ``.dev`` versions."""
        return self.parsed.is_prerelease

    @property
    def is_devrelease(self) -> bool:
        return self.parsed.is_devrelease

    def as_dict(self) -> dict[str, object]:
        try:
            parsed = self.parsed
            extra: dict[str, object] = {
                "public": parsed.public,
                "base_version": parsed.base_version,
                "local": parsed.local,
                "is_prerelease": parsed.is_prerelease,
                "is_devrelease": parsed.is_devrelease,
                "is_postrelease": parsed.is_postrelease,
            }
        except Exception as exc:  # InvalidVersion: report, don't crash a diagnostic
            extra = {"invalid_version": str(exc)}
        return {
            "name": self.name,
            "version": self.version,
            "location": self.location,
            "metadata_path": self.metadata_path,
            **extra,
        }

    def __repr__(self) -> str:
        return f"Distribution({self.name!r}, {self.version!r}, location={self.location!r})"


class Detection:
    """What ``detect()`` found; ``flashinfer`` is the one fi_compat adapts to."""

    __slots__ = ("distributions", "overridden")

    def __init__(self, distributions: dict[str, Distribution], overridden: bool) -> None:
        self.distributions = distributions
        self.overridden = overridden

    @property
    def flashinfer(self) -> Distribution | None:
        """``flashinfer-python``, else the legacy ``flashinfer`` distribution, else None."""
        d = self.distributions
        return d.get("flashinfer-python") or d.get("flashinfer")

    @property
    def cubin(self) -> Distribution | None:
        return self.distributions.get("flashinfer-cubin")

    @property
    def jit_cache(self) -> Distribution | None:
        return self.distributions.get("flashinfer-jit-cache")

    def version_mismatches(self) -> list[str]:
        """Human-readable mismatches between flashinfer-python and cubin / jit-cache.

        flashinfer-cubin must equal flashinfer-python's version exactly; the jit cache
        may carry a local tag (``0.6.18+cu130`` for ``0.6.18``).  What each FlashInfer
        release does about a mismatch is the device/doctor layer's business.
        """
        fi = self.flashinfer
        out: list[str] = []
        if fi is None:
            return out
        if self.cubin is not None and self.cubin.public != fi.public:
            out.append(f"flashinfer-cubin {self.cubin.version} != flashinfer-python {fi.version}")
        if self.jit_cache is not None and self.jit_cache.public != fi.public:
            out.append(
                f"flashinfer-jit-cache {self.jit_cache.version} != flashinfer-python {fi.version}"
            )
        return out


def _read_version(meta_dir: str) -> str | None:
    for fname in ("METADATA", "PKG-INFO"):
        path = os.path.join(meta_dir, fname)
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if line.startswith("Version:"):
                        return line[8:].strip()
                    if not line.strip():  # end of the header block
                        break
        except OSError:
            continue
    return None


def _scan(paths: list[str]) -> dict[str, Distribution]:
    found: dict[str, Distribution] = {}
    for entry in paths:
        try:
            it = os.scandir(entry or ".")
        except OSError:
            continue
        with it:
            for de in it:
                n = de.name
                if n.endswith(".dist-info"):
                    stem = n[:-10]
                elif n.endswith(".egg-info"):
                    stem = n[:-9]
                else:
                    continue
                project = stem.partition("-")[0].lower().replace("-", "_").replace(".", "_")
                canonical = _WATCHED.get(project)
                if canonical is None or canonical in found:
                    continue
                version = _read_version(de.path)
                if version is None:
                    continue
                found[canonical] = Distribution(canonical, version, entry or ".", de.path)
    return found


_cache: Detection | None = None


def detect(refresh: bool = False) -> Detection:
    """Return (and cache) the installed FlashInfer distributions.

    ``refresh=True`` rescans ``sys.path`` (after installing or uninstalling at run time).
    """
    global _cache
    if _cache is not None and not refresh:
        return _cache
    dists = _scan(list(sys.path))
    override = os.environ.get(OVERRIDE_ENV)
    if override is not None:
        dists.pop("flashinfer-python", None)
        dists.pop("flashinfer", None)
        if override.strip().lower() not in ("", "none"):
            v = override.strip()
            dists["flashinfer-python"] = Distribution("flashinfer-python", v, "<override>", "")
    _cache = Detection(dists, override is not None)
    return _cache
