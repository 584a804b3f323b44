"""What the installed flashinfer-python needs, checked without importing it.

Two sources:

* the release's own ``Requires-Dist`` (its ``METADATA``): each requirement without an
  extra whose marker holds here must be installed at a version its specifier accepts;
* what ``import flashinfer`` imports unguarded (the static closure of every release's
  ``__init__``, research in flashinfer-api-history.md section 3): a module missing
  there fails the import itself, whatever the metadata says (``filelock`` and
  ``jinja2`` are imported by every release and declared by none).

A missing import-time module is an error (no facade works); any other unmet declared
requirement a warning (the features that use it fail at their first call).
"""

from __future__ import annotations

import importlib.util
import os

from .detection import Distribution
from .registry import at_least, place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._installation import Finding

# (first release, module imported unguarded by `import flashinfer`, the distribution
# that provides it); a row holds to the newest release unless `until` (first release
# without it) is given
IMPORT_TIME: tuple[tuple[str, str | None, str, str], ...] = (
    ("0.2.0.post1", None, "torch", "torch"),
    ("0.2.0.post1", None, "filelock", "filelock"),
    ("0.2.0.post1", None, "jinja2", "jinja2"),
    ("0.2.0.post1", "0.2.3", "triton", "triton"),  # page.py / gemm.py 0.2.0.post1-0.2.2.post1
    ("0.2.9", None, "requests", "requests"),
    ("0.2.14", None, "packaging", "packaging"),
    ("0.4.0", None, "tvm_ffi", "apache-tvm-ffi"),  # jit/core.py, jit/cpp_ext.py
    ("0.5.3", None, "pynvml", "nvidia-ml-py"),  # flashinfer/utils.py
    ("0.6.8", None, "tqdm", "tqdm"),  # autotuner
    ("0.6.18", None, "numpy", "numpy"),
    ("0.6.18", "0.7.0", "typing_extensions", "typing_extensions"),
)


class Requirement:
    """One requirement of the installed release and how this environment meets it."""

    __slots__ = ("import_time", "installed", "module", "name", "ok", "spec")

    def __init__(
        self, name: str, spec: str, installed: str | None, ok: bool, import_time: bool, module: str
    ) -> None:
        self.name, self.spec, self.installed, self.ok = name, spec, installed, ok
        self.import_time, self.module = import_time, module

    @property
    def pip(self) -> str:
        return f"pip install '{self.name}{self.spec}'"

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "spec": self.spec,
            "installed": self.installed,
            "ok": self.ok,
            "import_time": self.import_time,
            "pip": self.pip,
        }


def _installed_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _declared(fi: Distribution) -> dict[str, str]:
    """{distribution: specifier} of the release's unconditional ``Requires-Dist``."""
    from importlib import metadata

    from packaging.requirements import InvalidRequirement
    from packaging.requirements import Requirement as Req

    path = fi.metadata_path
    if os.path.basename(path) == "METADATA":
        path = os.path.dirname(path)
    dist = metadata.PathDistribution.at(path)
    out: dict[str, str] = {}
    for line in dist.requires or ():
        try:
            req = Req(line)
        except InvalidRequirement:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue  # an extra's requirement, or not for this platform / Python
        out[req.name] = str(req.specifier)
    return out


def check(fi: Distribution) -> list[Requirement]:
    """Every requirement of ``fi``'s release (declared or imported unguarded), with its
    state here; import-time ones first."""
    from packaging.utils import canonicalize_name

    pl = place(fi.public)
    declared = {canonicalize_name(k): (k, v) for k, v in _declared(fi).items()}
    rows: list[Requirement] = []
    seen: set[str] = set()
    for first, until, module, name in IMPORT_TIME:
        if pl is None or not at_least(pl, first) or (until is not None and at_least(pl, until)):
            continue
        key = canonicalize_name(name)
        seen.add(key)
        spec = declared.get(key, (name, ""))[1]
        found = importlib.util.find_spec(module) is not None
        version = _installed_version(name)
        ok = found and _satisfies(version, spec)
        rows.append(Requirement(name, spec, version if found else None, ok, True, module))
    for key, (name, spec) in sorted(declared.items()):
        if key in seen:
            continue
        version = _installed_version(name)
        ok = version is not None and _satisfies(version, spec)
        rows.append(Requirement(name, spec, version, ok, False, name))
    return rows


def _satisfies(version: str | None, spec: str) -> bool:
    """Whether ``version`` meets ``spec``; a module importable without metadata (on
    ``PYTHONPATH``, vendored) or an unparseable version is given the benefit of doubt."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    if not spec or version is None:
        return True
    try:
        return bool(SpecifierSet(spec).contains(Version(version), prereleases=True))
    except InvalidVersion:
        return True


def findings(fi: Distribution | None) -> list[Finding]:
    """``doctor``'s findings: one per unmet requirement, with the exact ``pip`` line."""
    from ._installation import Finding

    if fi is None:
        return []
    out = []
    later: list[Requirement] = []
    for r in check(fi):
        if r.ok:
            continue
        have = f"{r.installed} installed" if r.installed else "not installed"
        if r.import_time:
            out.append(
                Finding(
                    "error",
                    "import-dependency",
                    f"{r.name}{r.spec} ({have}): `import flashinfer` needs it",
                    f"flashinfer-python {fi.version} imports {r.module} unguarded, so every "
                    "facade fails at its first call",
                    r.pip,
                )
            )
        elif r.name != "nvidia-cutlass-dsl":  # doctor's cutlass-dsl finding judges it
            later.append(r)
    if later:
        out.append(
            Finding(
                "warning",
                "declared-dependency",
                f"{len(later)} requirement(s) of flashinfer-python {fi.version} not met: "
                + ", ".join(
                    f"{r.name}{r.spec}" + (f" ({r.installed} installed)" if r.installed else "")
                    for r in later
                ),
                "`import flashinfer` works without them; the features that use them fail "
                "at their first call",
                "pip install " + " ".join(f"'{r.name}{r.spec}'" for r in later),
            )
        )
    return out
