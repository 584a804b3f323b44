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

The same scan records what ``importlib.metadata`` would hide: a second dist-info of a
distribution already found (``Detection.duplicates``; an interrupted ``pip install
--upgrade`` or two install targets on ``sys.path`` leave them), and the first ``sys.path``
entry holding a ``flashinfer/__init__.py`` (``Detection.package_location``): the package
``import flashinfer`` loads, which need not sit beside the dist-info the version was read
from (a FlashInfer source tree in the working directory, a stale ``--target`` folder).
:func:`read_package_version` reads that package's own version from its files.

Override, for tests and bug reports: ``FI_COMPAT_FLASHINFER_VERSION=0.6.7`` makes
``detect()`` report that ``flashinfer-python`` version (location ``"<override>"``)
whatever is installed; ``FI_COMPAT_FLASHINFER_VERSION=none`` reports it not installed.
Any other value (empty, or not a PEP 440 version) makes ``detect()`` raise
:class:`fi_compat.errors.InvalidArgumentError`.  ``python -m fi_compat info`` shows what
was detected and whether it was overridden.
"""

from __future__ import annotations

import os
import sys

from ._switches import choice

TYPE_CHECKING = False
if TYPE_CHECKING:
    from packaging.version import Version

__all__ = ["OVERRIDE_ENV", "Detection", "Distribution", "detect", "read_package_version"]

OVERRIDE_ENV = "FI_COMPAT_FLASHINFER_VERSION"
# FI_COMPAT_VERSION_SOURCE=package: select by the importable flashinfer package's own
# version file (_build_meta.py) instead of the first dist-info on sys.path
VERSION_SOURCE_ENV = "FI_COMPAT_VERSION_SOURCE"

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
    """What ``detect()`` found; ``flashinfer`` is the one fi_compat adapts to.

    ``duplicates`` maps a distribution name to every dist-info of it on ``sys.path``
    (the one in ``distributions`` first) when there is more than one;
    ``package_location`` is the ``sys.path`` entry whose ``flashinfer/__init__.py``
    ``import flashinfer`` would load (``None``: no such package on ``sys.path``).
    """

    __slots__ = ("distributions", "duplicates", "overridden", "package_location")

    def __init__(
        self,
        distributions: dict[str, Distribution],
        overridden: bool,
        duplicates: dict[str, list[Distribution]] | None = None,
        package_location: str | None = None,
    ) -> None:
        self.distributions = distributions
        self.overridden = overridden
        self.duplicates = duplicates or {}
        self.package_location = package_location

    @property
    def package_dir(self) -> str | None:
        """The ``flashinfer`` package directory ``import flashinfer`` would load."""
        loc = self.package_location
        return None if loc is None else os.path.join(loc, "flashinfer")

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
    """The first dist-info / egg-info of each watched distribution on ``paths``."""
    return _scan_all(paths)[0]


def _scan_all(
    paths: list[str],
) -> tuple[dict[str, Distribution], dict[str, list[Distribution]], str | None]:
    """(first of each distribution, {name: all of them} where more than one, the first
    entry holding ``flashinfer/__init__.py``), in ``sys.path`` order; within one folder
    in directory-listing order, as ``importlib.metadata`` reads them."""
    every: dict[str, list[Distribution]] = {}
    package_location: str | None = None
    for entry in paths:
        try:
            it = os.scandir(entry or ".")
        except OSError:
            continue
        with it:
            for de in it:
                n = de.name
                if n == "flashinfer":
                    if package_location is None and os.path.isfile(
                        os.path.join(de.path, "__init__.py")
                    ):
                        package_location = entry or "."
                    continue
                if n.endswith(".dist-info"):
                    stem = n[:-10]
                elif n.endswith(".egg-info"):
                    stem = n[:-9]
                else:
                    continue
                project = stem.partition("-")[0].lower().replace("-", "_").replace(".", "_")
                canonical = _WATCHED.get(project)
                if canonical is None:
                    continue
                version = _read_version(de.path)
                if version is None:
                    continue
                dist = Distribution(canonical, version, entry or ".", de.path)
                every.setdefault(canonical, []).append(dist)
    found = {name: dists[0] for name, dists in every.items()}
    duplicates = {name: dists for name, dists in every.items() if len(dists) > 1}
    return found, duplicates, package_location


# ``__version__ = "0.6.7"`` (optionally annotated ``: str``) at the start of a line: the
# module-level assignment, not the indented ``"0.0.0+unknown"`` fallback of version.py
_VERSION_ASSIGNMENT = r"""^__version__\s*(?::\s*str\s*)?=\s*["']([^"'\n]+)["']"""

# where a FlashInfer package states its version, in the order its import reads it:
# every wheel release (0.5.0-0.7.4 read) generates ``_build_meta.py`` with the literal, and
# ``version.py`` / ``__init__.py`` only re-export it; ``version.py`` and ``__init__.py``
# hold the literal themselves in the sdist-only releases before the wheels
_VERSION_FILES = ("_build_meta.py", "version.py", "__init__.py")


def read_package_version(package_dir: str) -> str | None:
    """The version of the FlashInfer package in ``package_dir`` (the ``flashinfer``
    directory itself), read from its files without importing it; ``None`` when no file
    states one (a source tree that was never built has no ``_build_meta.py``)."""
    import re

    pattern = re.compile(_VERSION_ASSIGNMENT, re.MULTILINE)
    for fname in _VERSION_FILES:
        try:
            with open(os.path.join(package_dir, fname), encoding="utf-8", errors="replace") as fh:
                text = fh.read(65536)
        except OSError:
            continue
        m = pattern.search(text)
        if m is not None:
            return m.group(1).strip()
    return None


def _check_override(value: str) -> str | None:
    """The version an override names, ``None`` for ``none``; anything else raises."""
    v = value.strip()
    if v.lower() == "none":
        return None
    from .registry import KNOWN_RELEASES

    if v.partition("+")[0] in KNOWN_RELEASES:  # the common case needs no parsing
        return v
    if v:
        from packaging.version import InvalidVersion, Version

        try:
            Version(v)
            return v
        except InvalidVersion:
            pass
    from .errors import InvalidArgumentError

    raise InvalidArgumentError(
        f"{OVERRIDE_ENV}={value!r} is not a valid override: use a PEP 440 version of "
        f"flashinfer-python such as 0.6.7 (or 0.7.0rc1, 0.6.18+cu130) to report that "
        f"release as installed, or 'none' to report it not installed; unset {OVERRIDE_ENV} "
        f"to detect what is installed"
    )


_cache: Detection | None = None


def detect(refresh: bool = False) -> Detection:
    """Return (and cache) the installed FlashInfer distributions.

    ``refresh=True`` rescans ``sys.path`` (after installing or uninstalling at run time).
    Raises :class:`fi_compat.errors.InvalidArgumentError` when ``FI_COMPAT_FLASHINFER_VERSION``
    is set to something that is neither a version nor ``none``.
    """
    global _cache
    if _cache is not None and not refresh:
        return _cache
    override = os.environ.get(OVERRIDE_ENV)
    forced = _check_override(override) if override is not None else None
    dists, duplicates, package_location = _scan_all(list(sys.path))
    if override is not None:
        dists.pop("flashinfer-python", None)
        dists.pop("flashinfer", None)
        duplicates.pop("flashinfer-python", None)
        duplicates.pop("flashinfer", None)
        if forced is not None:
            dists["flashinfer-python"] = Distribution("flashinfer-python", forced, "<override>", "")
    elif choice(VERSION_SOURCE_ENV, ("package", "metadata")) == "package" and package_location:
        # trust the importable package's own version file over any dist-info
        pkg = os.path.join(package_location, "flashinfer")
        version = read_package_version(pkg)
        if version is not None:
            dists["flashinfer-python"] = Distribution(
                "flashinfer-python", version, package_location, os.path.join(pkg, "_build_meta.py")
            )
    _cache = Detection(dists, override is not None, duplicates, package_location)
    return _cache
