"""Judgements about the installed FlashInfer packages, shared by the call path and the CLI.

A :class:`Finding` has a severity (``error``, ``warning``, ``ok``), an explanation and
the exact fix.  :func:`check_packaging` judges flashinfer-python / -cubin / -jit-cache
coherence by what the installed release does about a mismatch (``flashinfer/jit/env.py``):
0.4.0-0.7.1 raise RuntimeError at import (cubin: exact version; jit-cache:
``startswith(version)`` up to 0.6.18.post1, exact or ``version+local`` in 0.7.0-0.7.1);
0.7.2+ warn and ignore the package; ``FLASHINFER_DISABLE_VERSION_CHECK`` (0.4.0+)
bypasses the check.  The call path uses it to explain a failed ``import flashinfer``;
``python -m fi_compat doctor`` renders it.  :func:`check_metadata` judges whether the
metadata tells the truth about the code (duplicate dist-infos, a ``flashinfer`` package
loaded from elsewhere or of another version).  Nothing here imports FlashInfer.
"""

from __future__ import annotations

import os

from .detection import Detection, Distribution, read_package_version
from .registry import at_least, place

SEVERITIES = ("error", "warning", "ok")


class Finding:
    __slots__ = ("code", "explanation", "fix", "severity", "title")

    def __init__(
        self, severity: str, code: str, title: str, explanation: str = "", fix: str = ""
    ) -> None:
        assert severity in SEVERITIES
        self.severity, self.code, self.title = severity, code, title
        self.explanation, self.fix = explanation, fix

    def as_dict(self) -> dict[str, str]:
        return {
            "severity": self.severity,
            "code": self.code,
            "title": self.title,
            "explanation": self.explanation,
            "fix": self.fix,
        }


def _pip_pin(name: str, version: str, cubin_index: bool = False) -> str:
    extra = " --index-url https://flashinfer.ai/whl" if cubin_index else ""
    return f"pip install '{name}=={version}'{extra}"


def check_packaging(det: Detection, env: dict[str, str]) -> list[Finding]:
    fi = det.flashinfer
    out: list[Finding] = []
    if fi is None:
        out.append(
            Finding(
                "error",
                "not-installed",
                "flashinfer-python is not installed",
                "fi_compat's facades raise FlashInferNotInstalledError when called",
                "pip install flashinfer-python",
            )
        )
        return out
    pl = place(fi.version)
    out.append(
        Finding(
            "ok", "flashinfer", f"flashinfer-python {fi.version} ({pl.kind})", f"at {fi.location}"
        )
    )
    bypass = bool(env.get("FLASHINFER_DISABLE_VERSION_CHECK"))
    checks = at_least(pl, "0.4.0")
    fatal = checks and not at_least(pl, "0.7.2")  # 0.7.2: mismatches warned and ignored
    cubin, jit = det.cubin, det.jit_cache
    # flashinfer-cubin >= 0.6.14 is published on https://flashinfer.ai/whl, not PyPI
    cubin_index = at_least(place(fi.public), "0.6.14")
    if cubin is not None and cubin.public != fi.public:
        out.append(
            _mismatch(
                "cubin-mismatch",
                cubin,
                fi,
                fatal,
                bypass,
                _pip_pin("flashinfer-cubin", fi.public, cubin_index),
            )
        )
    if jit is not None:
        if at_least(pl, "0.7.0"):  # 0.7.0: exact or f"{version}+" only
            accepted = jit.version == fi.version or jit.version.startswith(f"{fi.version}+")
        else:  # 0.4.0-0.6.18.post1: jit_cache_version.startswith(flashinfer_version)
            accepted = jit.version.startswith(fi.version)
        if not accepted:
            out.append(
                _mismatch(
                    "jit-cache-mismatch",
                    jit,
                    fi,
                    fatal,
                    bypass,
                    f"pip install 'flashinfer-jit-cache=={fi.public}+<cuXXX>' "
                    f"--index-url https://flashinfer.ai/whl/<cuXXX> "
                    f"(or pip uninstall flashinfer-jit-cache)",
                )
            )
        elif jit.public != fi.public:
            out.append(
                Finding(
                    "warning",
                    "jit-cache-prefix",
                    f"flashinfer-jit-cache "
                    f"{jit.version} passes FlashInfer's prefix check for "
                    f"{fi.version} but is another release",
                    "its precompiled kernels are not this release's",
                    f"pip install 'flashinfer-jit-cache=={fi.public}+<cuXXX>'",
                )
            )
    if bypass:
        out.append(
            Finding(
                "warning",
                "version-check-disabled",
                "FLASHINFER_DISABLE_VERSION_CHECK is set",
                "FlashInfer then loads flashinfer-cubin / flashinfer-jit-cache "
                "kernels of another release without complaint; stale kernels can "
                "cause illegal memory accesses (tokenspeed#284)",
                "unset FLASHINFER_DISABLE_VERSION_CHECK and install matching versions",
            )
        )
    return out


def _mismatch(
    code: str, other: Distribution, fi: Distribution, fatal: bool, bypass: bool, fix: str
) -> Finding:
    title = f"{other.name} {other.version} does not match flashinfer-python {fi.version}"
    if fatal and not bypass:
        return Finding(
            "error",
            code,
            title,
            f"flashinfer-python {fi.version} raises RuntimeError "
            f"at import ('{other.name} version ... does not match flashinfer "
            f"version')",
            fix,
        )
    if fatal:
        return Finding(
            "warning",
            code,
            title,
            "the import check is bypassed by "
            "FLASHINFER_DISABLE_VERSION_CHECK: mismatched kernels will be loaded",
            fix,
        )
    return Finding(
        "warning",
        code,
        title,
        f"flashinfer-python {fi.version} warns and ignores "
        f"{other.name} (kernels are downloaded or JIT-built instead)",
        fix,
    )


def cubin_dir_in_use(
    fi: Distribution, cubin: Distribution | None, env: dict[str, str]
) -> tuple[str, str]:
    """(directory, why) FlashInfer will read cubins from."""
    pl = place(fi.version)
    env_dir = env.get("FLASHINFER_CUBIN_DIR")
    pkg_dir = os.path.join(cubin.location, "flashinfer_cubin", "cubins") if cubin else None
    base = env.get("FLASHINFER_WORKSPACE_BASE") or os.path.expanduser("~")
    default = os.path.join(base, ".cache", "flashinfer", "cubins")
    if env_dir and (pkg_dir is None or at_least(pl, "0.6.16")):
        why = "FLASHINFER_CUBIN_DIR" + (
            " (wins over flashinfer-cubin from 0.6.16)" if pkg_dir else ""
        )
        return env_dir, why
    if pkg_dir:
        why = "flashinfer-cubin package" + (
            " (wins over FLASHINFER_CUBIN_DIR before 0.6.16)" if env_dir else ""
        )
        return pkg_dir, why
    return default, "default (download on demand)"


def count_files(path: str, limit: int = 100_000) -> int:
    n = 0
    for _root, _dirs, files in os.walk(path):
        n += len(files)
        if n >= limit:
            break
    return n


def count_cubins(path: str, limit: int = 100_000) -> int:
    """The ``.cubin`` files under ``path``.  A FlashInfer cubin directory also holds a
    ``<name>.cubin.lock`` per kernel (the file lock taken while it is fetched, left behind
    afterwards), ``checksums.txt`` per kernel group and ``include/*.h`` headers
    (flashinfer-cubin 0.6.0 ships 5292 ``.cubin`` beside 5299 ``.lock``): only the cubins
    are kernels."""
    n = 0
    for _root, _dirs, files in os.walk(path):
        n += sum(f.endswith(".cubin") for f in files)
        if n >= limit:
            break
    return n


def not_a_directory(path: str) -> str | None:
    """Why FlashInfer cannot use ``path`` as a directory (it creates missing ones with
    ``os.makedirs``): ``path``, or the nearest existing folder above it, is a file.
    ``None``: a directory, or one that can be made."""
    p = os.path.abspath(path)
    while not os.path.exists(p):
        parent = os.path.dirname(p)
        if parent == p:
            return None
        p = parent
    if os.path.isdir(p):
        return None
    return f"{p} is a file" + ("" if p == os.path.abspath(path) else f", above {path}")


def check_cubin_dir(det: Detection, env: dict[str, str]) -> list[Finding]:
    """The cubin directory FlashInfer reads (``doctor``; not an import problem, so not
    part of :func:`check_packaging`, whose errors explain a failed import)."""
    fi, cubin = det.flashinfer, det.cubin
    if fi is None:
        return []
    d, why = cubin_dir_in_use(fi, cubin, env)
    bad = not_a_directory(d)
    if bad is not None:
        var = (
            "FLASHINFER_CUBIN_DIR"
            if why.startswith("FLASHINFER_CUBIN_DIR")
            else ("FLASHINFER_WORKSPACE_BASE")
        )
        return [
            Finding(
                "error",
                "cubins",
                f"cubin directory {d} must be a directory: {bad}",
                f"chosen by {why}; TRTLLM-gen kernels (SM100 family) load and download their "
                f"cubins there",
                f"point {var} at a directory (or unset it)",
            )
        ]
    n = count_cubins(d) if os.path.isdir(d) else 0
    sev = "ok" if n else "warning"
    fix = "" if n else "python -m fi_compat download-cubin (needs network once)"
    return [
        Finding(
            sev,
            "cubins",
            f"cubin directory {d}: {n} cubins",
            f"chosen by {why}; TRTLLM-gen kernels (SM100 family) load their cubins from here",
            fix,
        )
    ]


# -- metadata against code ------------------------------------------------------------------


def _same_version(a: str, b: str) -> bool:
    if a == b:
        return True
    from packaging.version import InvalidVersion, Version

    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return False


def _same_dir(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def check_duplicates(det: Detection) -> list[Finding]:
    """Two or more dist-infos of one distribution on ``sys.path``: pip, importlib.metadata
    and fi_compat read the first, whatever the code beside the others is."""
    out: list[Finding] = []
    pkg_dir = det.package_dir
    pkg_version = read_package_version(pkg_dir) if pkg_dir else None
    for name, dists in det.duplicates.items():
        where = "; ".join(f"{d.version} at {d.metadata_path}" for d in dists)
        agree = all(_same_version(d.version, dists[0].version) for d in dists)
        owns_package = name in ("flashinfer-python", "flashinfer")
        if agree:
            stale = dists[1:]
        elif owns_package and pkg_version is not None:
            stale = [d for d in dists if not _same_version(d.version, pkg_version)]
        else:
            stale = []
        if stale:
            fix = "delete the stale dist-info: " + "; ".join(
                f"rm -r '{d.metadata_path}'" for d in stale
            )
        else:
            fix = (
                f"pip uninstall -y {name} until pip finds none, then "
                f"pip install '{name}==<the release you want>'"
            )
        expl = (
            f"pip, importlib.metadata and fi_compat read the first ({dists[0].version} at "
            f"{dists[0].location})"
        )
        if owns_package and pkg_version is not None:
            expl += f"; the flashinfer package at {pkg_dir} is {pkg_version}"
        if agree:
            out.append(
                Finding(
                    "warning",
                    "duplicate-dist-info",
                    f"{len(dists)} dist-infos of {name} {dists[0].version}: {where}",
                    expl + "; uninstalling removes only one of them",
                    fix,
                )
            )
        else:
            out.append(
                Finding(
                    "error",
                    "duplicate-dist-info",
                    f"{len(dists)} dist-infos of {name} with different versions: {where}",
                    expl + "; the version fi_compat adapts to may not be the code that runs",
                    fix,
                )
            )
    return out


def check_package(det: Detection) -> list[Finding]:
    """Is the ``flashinfer`` package ``import flashinfer`` loads (the first ``sys.path``
    entry holding ``flashinfer/__init__.py``) the one flashinfer-python's dist-info
    describes?  Its folder against the dist-info's, its version (read from its files,
    :func:`~fi_compat.detection.read_package_version`) against the recorded one."""
    fi = det.flashinfer
    out: list[Finding] = []
    if det.overridden:
        return out  # the override stands in for the metadata: nothing to compare
    pkg_loc, pkg_dir = det.package_location, det.package_dir
    if fi is None:
        if pkg_loc is not None and pkg_dir is not None:
            version = read_package_version(pkg_dir)
            out.append(
                Finding(
                    "error",
                    "package-without-metadata",
                    f"a flashinfer package ({version or 'version unknown'}) is importable "
                    f"from {pkg_loc}, but no flashinfer-python dist-info is on sys.path",
                    "fi_compat selects adapters by the dist-info, so its facades report "
                    "FlashInfer as not installed (a source tree in the working directory, or "
                    "a copy without its metadata)",
                    f"pip install 'flashinfer-python=={version}'"
                    if version
                    else "pip install flashinfer-python (or pip install -e <source tree>)",
                )
            )
        return out
    if pkg_loc is None or pkg_dir is None:
        out.append(
            Finding(
                "error",
                "package-missing",
                f"flashinfer-python {fi.version} is recorded in {fi.location}, but no "
                f"flashinfer/__init__.py is on sys.path",
                "the installation is incomplete: import flashinfer fails",
                f"pip install --force-reinstall 'flashinfer-python=={fi.version}'",
            )
        )
        return out
    if not _same_dir(pkg_loc, fi.location):
        out.append(
            Finding(
                "error",
                "package-location",
                f"import flashinfer loads {pkg_dir}, not the flashinfer-python {fi.version} "
                f"whose dist-info is in {fi.location}",
                f"{pkg_loc} comes first on sys.path; fi_compat adapts to {fi.version} while "
                f"the code that runs is another copy",
                f"remove or move {pkg_dir} (or run from another directory), or put "
                f"{fi.location} first on sys.path",
            )
        )
    version = read_package_version(pkg_dir)
    if version is not None and not _same_version(version, fi.version):
        out.append(_version_mismatch(fi, version, f"read from {pkg_dir}"))
    return out


def _version_mismatch(fi: Distribution, version: str, how: str) -> Finding:
    return Finding(
        "error",
        "package-version",
        f"the flashinfer package is {version} ({how}), but its dist-info records "
        f"flashinfer-python {fi.version}",
        f"fi_compat selects the {fi.version} adapter while the code that runs is {version} "
        f"(a half-finished upgrade, files copied over another install, or another copy "
        f"first on sys.path)",
        f"pip install --force-reinstall 'flashinfer-python=={version}' (or =={fi.version})",
    )


def check_imported(det: Detection, version: str | None, file: str | None) -> list[Finding]:
    """The ``flashinfer`` module a subprocess imported (its ``__version__`` and
    ``__file__``) against flashinfer-python's dist-info."""
    fi = det.flashinfer
    if fi is None or det.overridden:
        return []
    out: list[Finding] = []
    if file:
        loc = os.path.dirname(os.path.dirname(file))  # .../<entry>/flashinfer/__init__.py
        if not _same_dir(loc, fi.location):
            out.append(
                Finding(
                    "error",
                    "probe-location",
                    f"import flashinfer loaded {file}, not the flashinfer-python {fi.version} "
                    f"whose dist-info is in {fi.location}",
                    "fi_compat adapts to the dist-info's version while another copy runs",
                    f"remove or move {os.path.dirname(file)}, or put {fi.location} first on "
                    f"sys.path",
                )
            )
    if version and not _same_version(version, fi.version):
        f = _version_mismatch(fi, version, "flashinfer.__version__ after import")
        f.code = "probe-version"
        out.append(f)
    return out


def check_metadata(det: Detection) -> list[Finding]:
    """Does the metadata tell the truth about the code?  (No import.)"""
    return check_duplicates(det) + check_package(det)
