"""Resolution: import FlashInfer's function once and explain every way that can fail.

* nothing installed, a recorded version that is not PEP 440, a release below the entry
  point's floor, or (strict mode) newer than fi_compat knows: the selection policy's
  error (:mod:`fi_compat._policy`, the verdict ``doctor`` shows);
* the module cannot be imported: a missing optional package (named, with the extra
  that installs it), an incomplete installation, or an exception at import explained by
  the packaging check (a cubin / jit-cache mismatch, :mod:`fi_compat._installation`) or
  by a known issue of this release (:mod:`fi_compat._issues`);
* the imported ``flashinfer`` package is not the release the metadata named (a stale
  dist-info, a source checkout ahead on ``sys.path``): ``FlashInferVersionMismatchError``
  naming both, unless ``FI_COMPAT_VERSION_SOURCE=package`` made detection trust the
  package's own version file in the first place.
"""

from __future__ import annotations

import os

from .. import errors
from ..detection import VERSION_SOURCE_ENV
from ..registry import NEWEST, strict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .adapter import Adapter
    from .table import OptionalDependency

MODULE_PACKAGES = {
    "cutlass": "nvidia-cutlass-dsl",
    "cuda.tile": "cuda-tile",  # before "cuda": cuda-python's namespace package lacks it
    "cuda": "cuda-python",
    "tvm_ffi": "apache-tvm-ffi",
    "pynvml": "nvidia-ml-py",
    "cudnn": "nvidia-cudnn-frontend",
    "cuda_tile": "cuda-tile",
    "nccl4py": "nccl4py",
}


def own_version() -> str:
    from .._version import __version__

    return __version__


def problem_error(a: Adapter) -> Exception | None:
    """The selection policy's error for this adapter, or None."""
    if a.problem is not None or (a.placement is not None and a.placement.kind == "newer"):
        from .codegen import register_sources

        register_sources(a)  # the traceback of this error shows the facade's line
    e = a.entry
    if a.problem == "not-installed":
        return errors.FlashInferNotInstalledError(
            f"{e.dotted} needs FlashInfer, and no flashinfer-python distribution is "
            f"installed on sys.path. Install one fi_compat supports (>= {e.since}), e.g. "
            f"pip install 'flashinfer-python=={NEWEST}'"
        )
    if a.problem == "invalid-version":
        from .._policy import version_verdict

        v = version_verdict(a.placement, a.release, e.since)
        return errors.UnsupportedFlashInferVersionError(
            f"{e.dotted} (FlashInfer {e.qualname}): {v.message}. Fix: {v.fix}"
        )
    if a.problem == "below-floor":
        served = (
            f"fi_compat serves it from flashinfer-python {e.since} on (older releases have "
            f"it with signatures fi_compat does not adapt)"
            if e.older_unserved
            else f"it exists from flashinfer-python {e.since} on"
        )
        return errors.UnsupportedFlashInferVersionError(
            f"{e.dotted} (FlashInfer {e.qualname}): {served}; installed: {a.release}. "
            f"Supported: {e.since} to {NEWEST} (newer releases with a warning). Fix: pip "
            f"install 'flashinfer-python>={e.since},<={NEWEST}'"
        )
    if a.problem == "removed":
        from ..registry import KNOWN_RELEASES

        last = KNOWN_RELEASES[KNOWN_RELEASES.index(str(e.until)) - 1]
        fix = e.removed_fix or f"pin 'flashinfer-python>={e.since},<{e.until}'"
        return errors.UnsupportedFlashInferVersionError(
            f"{e.dotted} (FlashInfer {e.qualname}) was removed in flashinfer-python "
            f"{e.until}; installed: {a.release}. fi_compat serves it on {e.since} to "
            f"{last}. Fix: {fix}"
        )
    pl = a.placement
    if pl is not None and pl.kind == "newer" and strict():
        from .._policy import version_verdict

        v = version_verdict(pl, a.release, e.since)
        return errors.UntestedFlashInferVersionError(f"{e.dotted}: {v.message}. Fix: {v.fix}.")
    return None


def import_target(a: Adapter) -> Callable[..., Any]:
    """Import ``a.entry``'s module and return its attribute (a function or method)."""
    import importlib

    e = a.entry
    rel = a.release
    pl = a.placement
    if pl is not None:  # the requirements the module imports only inside the call
        for dep in e.optional_deps:
            if dep.minimum is not None and dep.range.contains(pl):
                check_requirement(a, dep)
    try:
        mod = importlib.import_module(e.module)
    except ImportError as exc:
        # a ModuleNotFoundError, or an ImportError FlashInfer raised from one ("Could not
        # import the 'cuda' module. Please install cuda-python", comm/mnnvl.py 0.3.0+)
        missing = _missing_module(exc)
        if missing is None:
            raise import_failure(a, exc) from exc
        if missing.partition(".")[0] == "flashinfer":
            raise errors.FlashInferImportError(
                f"flashinfer-python {rel} is recorded as installed (metadata in "
                f"{a.dist.location if a.dist else '?'}) but {missing!r} cannot be "
                f"imported: the installation is incomplete. Reinstall it: "
                f"pip install --force-reinstall 'flashinfer-python=={rel}'"
            ) from exc
        raise missing_dependency(a, missing, exc) from exc
    except Exception as exc:  # AssertionError/RuntimeError from torch.cuda at import
        raise import_failure(a, exc) from exc
    check_imported_release(a)
    obj: Any = mod
    attr = e.attr_on(a.placement)
    try:
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError as exc:
        raise errors.UnsupportedFlashInferVersionError(
            f"{e.module}.{attr} does not exist in flashinfer-python {rel}"
        ) from exc
    return obj  # type: ignore[no-any-return]


def check_requirement(a: Adapter, dep: OptionalDependency) -> None:
    """``dep.package>=dep.minimum`` installed (its module found, its metadata's version
    at least the minimum; nothing imported), else ``OptionalDependencyMissingError``
    naming both.  A module found without metadata (on ``PYTHONPATH``, vendored) or with
    an unparseable version passes (:func:`fi_compat._requirements._satisfies`)."""
    import importlib.util

    from .._requirements import _installed_version, _satisfies

    assert dep.minimum is not None
    spec = f">={dep.minimum}"
    try:
        found = importlib.util.find_spec(dep.module) is not None
    except (ImportError, ValueError):
        found = False
    version = _installed_version(dep.package)
    if found and _satisfies(version, spec):
        return
    have = f"{version} is installed" if found and version else "it is not installed"
    extras = " or ".join(f"'flashinfer-python[{x}]=={a.release}'" for x in dep.extras)
    fix = f"pip install '{dep.package}{spec}'" + (f" (or {extras})" if extras else "")
    raise errors.OptionalDependencyMissingError(
        f"{a.entry.dotted} on flashinfer-python {a.release} needs {dep.package}{spec} "
        f"({dep.note}); {have}. Fix: {fix}",
        package=dep.package,
        extra=dep.extras[0] if dep.extras else None,
    )


def _missing_module(exc: BaseException) -> str | None:
    """The dotted name of the module whose absence ``exc`` reports: its own or, for an
    ImportError raised from (or while handling) a ModuleNotFoundError, that one's."""
    seen = 0
    cur: BaseException | None = exc
    while cur is not None and seen < 8:
        if isinstance(cur, ModuleNotFoundError) and cur.name:
            return cur.name
        if not isinstance(cur, ImportError):
            return None
        cur = cur.__cause__ or cur.__context__
        seen += 1
    return None


def python_matches(spec: str) -> bool:
    """``"<3.12"`` / ``">=3.12"`` against the running interpreter."""
    import sys

    op = spec.rstrip("0123456789.")
    want = tuple(int(x) for x in spec[len(op) :].split("."))
    have = sys.version_info[: len(want)]
    return {"<": have < want, "<=": have <= want, ">=": have >= want, ">": have > want}[op]


def import_issue_applies(issue: Any, exc: BaseException) -> bool:
    """An ``import`` row's ``when`` conditions: ``exception`` (the exception's type
    name) and ``python`` (a version bound) must hold where given."""
    want = issue.when.get("exception")
    if want is not None and type(exc).__name__ != want:
        return False
    py = issue.when.get("python")
    return py is None or python_matches(py)


def import_failure(a: Adapter, exc: BaseException) -> errors.FlashInferImportError:
    from .._installation import check_packaging  # a cubin / jit-cache mismatch, explained
    from ..detection import detect

    e = a.entry
    why, fix = "", "see the traceback above"
    for f in check_packaging(detect(), dict(os.environ)):
        if f.severity == "error":
            why, fix = f" ({f.title}: {f.explanation})", f.fix
    # the rows that name this exception last: the most specific explanation wins
    rows = [i for i in e.issues(a.placement) if i.kind == "import"]
    rows.sort(key=lambda i: "exception" in i.when)
    for issue in rows:
        if import_issue_applies(issue, exc):
            why, fix = f" (known issue {issue.id}: {issue.summary}; {issue.ref})", issue.workaround
    return errors.FlashInferImportError(
        f"import {e.module} failed on flashinfer-python {a.release} with "
        f"{type(exc).__name__}: {exc}{why}. Fix: {fix}."
    )


def check_imported_release(a: Adapter) -> None:
    """The imported ``flashinfer`` must be the release the adapter was chosen for."""
    import sys

    if a.dist is None or a.dist.location == "<override>":
        return  # FI_COMPAT_FLASHINFER_VERSION: a deliberate what-if
    pkg = sys.modules.get("flashinfer")
    got = getattr(pkg, "__version__", None)
    if not isinstance(got, str) or got.startswith("0.0.0"):
        return  # no version file ("0.0.0+unknown" fallback of version.py): nothing to compare
    want = a.dist.version.partition("+")[0]
    if got.partition("+")[0] == want:
        return
    where = os.path.dirname(os.path.dirname(getattr(pkg, "__file__", "") or "")) or "?"
    raise errors.FlashInferVersionMismatchError(
        f"{a.entry.dotted}: the package metadata says flashinfer-python {a.dist.version} "
        f"(dist-info in {a.dist.location}), but the imported flashinfer package is {got} "
        f"(from {where}); fi_compat chose the adapter for {want}. Fix: remove the stale "
        f"dist-info or package directory (python -m fi_compat doctor names them), or set "
        f"{VERSION_SOURCE_ENV}=package to select the adapter by the package's own version.",
        detected=a.dist.version,
        imported=got,
    )


def missing_dependency(a: Adapter, missing: str, exc: ImportError) -> Exception:
    """The typed error for the missing module ``missing`` (dotted: ``cuda.tile``)."""
    e = a.entry
    root = missing.partition(".")[0]
    known = next((m for m in MODULE_PACKAGES if missing == m or missing.startswith(m + ".")), root)
    pkg = MODULE_PACKAGES.get(known, root)
    dep = None
    if a.placement is not None:
        dep = e.optional_dependency(a.placement, known)
    if dep is not None:
        extras = " or ".join(f"'flashinfer-python[{x}]=={a.release}'" for x in dep.extras)
        fix = f"{extras} (or pip install {dep.package})" if extras else dep.package
        return errors.OptionalDependencyMissingError(
            f"{e.module} in flashinfer-python {a.release} needs the optional package "
            f"{dep.package} ({dep.note}), which is not installed ({exc}). Fix: pip install "
            f"{fix}",
            package=dep.package,
            extra=dep.extras[0] if dep.extras else None,
        )
    return errors.OptionalDependencyMissingError(
        f"{e.module} in flashinfer-python {a.release} failed to import because "
        f"{known!r} is missing ({exc}). Fix: pip install {pkg}",
        package=pkg,
    )
