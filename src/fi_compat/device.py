"""Compute capabilities, capability families, support queries and the known-issues table.

One query per facade function or family: ``supports("comm.allreduce_fusion")`` answers
what the facade checks before a launch (docs/capabilities.md).

Model code asks here instead of scattering ``is_device_capability(100)`` checks::

    from fi_compat import device
    s = device.supports_trtllm_attention()
    if s: ...                      # a Support is truthy when supported
    else: log(s.reasons, s.fix)    # and says why not, and what fixes it

Every query takes an explicit ``capability=`` (``(10, 3)``, ``103``, ``"10.3"``,
``"sm_103"``) and ``release=`` (a flashinfer-python version string) so callers and tests
can ask "what if" without a GPU; by default they use the current CUDA device (asked from
torch only when a query needs it: never at import, ``None`` on a CPU-only host, no
exception) and the detected release.

Families are major-based: SM103 is family 100, SM121 is family 120 (not 100).

``FI_COMPAT_DISABLE=attention.trtllm,sampling`` disables feature families for callers
that ask here first (a query for ``sampling.top-k`` is disabled by ``sampling``).
"""

from __future__ import annotations

import os
import sys
import threading

from . import _issues
from .registry import VersionRange, at_least, place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, cast

    from .registry import Placement

if not TYPE_CHECKING:

    def cast(_t: object, v: object) -> object:  # typing.cast without importing typing
        return v


__all__ = [
    "DISABLE_ENV",
    "KnownIssue",
    "Support",
    "current_capability",
    "family",
    "is_device_capability",
    "is_device_capability_family",
    "known_issues",
    "parse_capability",
    "query_members",
    "supports",
    "supports_trtllm_attention",
    "supports_xqa_decode",
]

DISABLE_ENV = "FI_COMPAT_DISABLE"
CapabilityLike = "tuple[int, int] | int | str"


def parse_capability(cc: object) -> tuple[int, int]:
    """``(10, 3)``, ``103``, ``"10.3"``, ``"103"``, ``"sm_103"``, ``"sm103a"`` -> ``(10, 3)``."""
    if isinstance(cc, tuple) and len(cc) == 2:
        return int(cc[0]), int(cc[1])
    if isinstance(cc, bool):
        raise ValueError(f"not a compute capability: {cc!r}")
    if isinstance(cc, int):
        return divmod(cc, 10)
    if isinstance(cc, str):
        s = cc.strip().lower().removeprefix("sm_").removeprefix("sm").rstrip("af")
        if "." in s:
            a, _, b = s.partition(".")
            return int(a), int(b)
        if s.isdigit():
            return divmod(int(s), 10)
    raise ValueError(f"not a compute capability: {cc!r} (use (10, 3), 103 or '10.3')")


def family(cc: object) -> int:
    """The capability family, major-based: SM103 -> 100, SM121 -> 120, SM90 -> 90."""
    return parse_capability(cc)[0] * 10


def current_capability(device: object = None) -> tuple[int, int] | None:
    """(major, minor) of the current (or given) CUDA device; ``None`` without one.

    Never raises (a CPU-only torch build, no driver or no GPU all give ``None``).  Before
    torch is imported, the current device is read from the driver (NVML) where that is
    exact (:func:`fi_compat._host.capability_without_torch`: ~5 ms instead of torch's ~2 s
    import); otherwise torch is imported and asked.
    """
    if device is None and "torch" not in sys.modules:
        from ._host import UNKNOWN, capability_without_torch

        cc = capability_without_torch()
        if cc != UNKNOWN:
            return cc  # type: ignore[return-value]
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        major, minor = torch.cuda.get_device_capability(device)  # type: ignore[arg-type]
        return int(major), int(minor)
    except Exception:
        return None


def _resolve_cc(capability: object) -> tuple[int, int] | None:
    if capability is None:
        return current_capability()
    return parse_capability(capability)


def is_device_capability(cc: object, capability: object = None) -> bool:
    """Exact match: ``is_device_capability(100)`` is False on SM103."""
    have = _resolve_cc(capability)
    return have is not None and have == parse_capability(cc)


def is_device_capability_family(cc: object, capability: object = None) -> bool:
    """Family match: ``is_device_capability_family(100)`` is True on SM100 and SM103."""
    have = _resolve_cc(capability)
    return have is not None and have[0] == parse_capability(cc)[0]


# -- the known-issues table ----------------------------------------------------------------


class KnownIssue:
    """One row of ``fi_compat._issues.ISSUES`` (see that module for the fields)."""

    __slots__ = (
        "arch",
        "confirmed",
        "feature",
        "id",
        "kind",
        "range",
        "ref",
        "summary",
        "when",
        "workaround",
    )

    def __init__(self, row: dict[str, object]) -> None:
        lo, hi = cast("tuple[str, str | None]", row["releases"])
        self.id = str(row["id"])
        self.range = VersionRange(str(lo), None if hi is None else str(hi))
        self.arch = str(row["arch"])
        self.feature = str(row["feature"])
        self.kind = str(row["kind"])
        self.summary = str(row["summary"])
        self.ref = str(row["ref"])
        self.workaround = str(row["workaround"])
        self.confirmed = bool(row["confirmed"])
        when = row.get("when") or {}
        self.when = {str(k): str(v) for k, v in cast("dict[str, object]", when).items()}

    def applies_to_arch(self, cc: tuple[int, int] | None) -> bool:
        """``None`` (unknown GPU) matches every row."""
        if cc is None or self.arch == "any":
            return True
        if self.arch.startswith("family:"):
            return cc[0] == int(self.arch.partition(":")[2])
        return cc == parse_capability(self.arch)

    def covers_feature(self, feature: str) -> bool:
        f = self.feature
        return f == feature or f.startswith(feature + ".") or feature.startswith(f + ".")

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "releases": str(self.range),
            "arch": self.arch,
            "feature": self.feature,
            "kind": self.kind,
            "summary": self.summary,
            "ref": self.ref,
            "workaround": self.workaround,
            "confirmed": self.confirmed,
            "when": dict(self.when),
        }

    def __repr__(self) -> str:
        return f"KnownIssue({self.id!r}, {self.range}, {self.arch}, {self.feature})"


TABLE: tuple[KnownIssue, ...] = tuple(KnownIssue(r) for r in _issues.ISSUES)


def _placement(release: str | None) -> Placement | None:
    if release is None:
        from .detection import detect

        fi = detect().flashinfer
        if fi is None:
            return None
        release = fi.version
    return place(release)


def known_issues(
    feature: str | None = None,
    capability: object = None,
    release: str | None = None,
    *,
    kind: str | None = None,
    all_releases: bool = False,
) -> list[KnownIssue]:
    """Rows of the known-issues table that apply.

    ``release`` defaults to the detected flashinfer-python (all releases if none is
    installed or ``all_releases=True``); ``capability=None`` matches every architecture
    (pass ``"current"`` for the current GPU); ``feature`` matches families both ways
    (``"moe"`` finds ``moe.cutlass`` rows, ``"moe.cutlass"`` finds ``moe`` rows).
    """
    cc = (
        current_capability()
        if capability == "current"
        else (None if capability is None else parse_capability(capability))
    )
    pl = None if all_releases else _placement(release)
    out = []
    for issue in TABLE:
        if pl is not None and not issue.range.contains(pl):
            continue
        if capability is not None and not issue.applies_to_arch(cc):
            continue
        if feature is not None and not issue.covers_feature(feature):
            continue
        if kind is not None and issue.kind != kind:
            continue
        out.append(issue)
    return out


# the features the support queries below answer for (FI_COMPAT_DISABLE names them or
# their families, any case)
QUERY_FEATURES = ("attention.trtllm", "attention.xqa", "moe.cutlass", "moe.trtllm")


def disable_names() -> tuple[str, ...]:
    """What ``FI_COMPAT_DISABLE`` may name: each query's feature and its families."""
    out = {f.rsplit(".", i)[0] for f in QUERY_FEATURES for i in range(f.count(".") + 1)}
    return tuple(sorted(out))


def disabled(feature: str) -> bool:
    """True when ``FI_COMPAT_DISABLE`` names the feature or one of its families (any
    case; a name that is none of :func:`disable_names` warns, listing them)."""
    from ._switches import names

    off = names(DISABLE_ENV, disable_names(), "feature families")
    return any(feature == n or feature.startswith(n + ".") for n in off)


# -- support queries ----------------------------------------------------------------------


class Support:
    """The answer of a support query: truthy when supported, with the reasons either way."""

    __slots__ = ("feature", "fix", "issues", "ok", "reasons")

    def __init__(
        self,
        feature: str,
        ok: bool,
        reasons: list[str],
        fix: str | None = None,
        issues: Iterable[KnownIssue] = (),
    ) -> None:
        self.feature = feature
        self.ok = ok
        self.reasons = reasons
        self.fix = fix
        self.issues = list(issues)

    def __bool__(self) -> bool:
        return self.ok

    def as_dict(self) -> dict[str, object]:
        return {
            "feature": self.feature,
            "ok": self.ok,
            "reasons": self.reasons,
            "fix": self.fix,
            "issues": [i.id for i in self.issues],
        }

    def __repr__(self) -> str:
        return f"Support({self.feature!r}, ok={self.ok}, reasons={self.reasons!r})"


def _common(
    feature: str,
    cc: tuple[int, int] | None,
    pl: Placement | None,
    reasons: list[str],
    details: dict[str, str | None] | None = None,
) -> tuple[bool, str | None, list[KnownIssue]]:
    """Checks every query shares: disabled switch, GPU present, release, known issues.

    ``details``: what the query knows about the call (e.g. ``quantization``), matched
    against a row's ``when``; a detail the query leaves at ``None`` makes the row a
    caveat (listed in ``reasons``, not failing)."""
    details = details or {}
    ok, fix = True, None
    if disabled(feature):
        ok = False
        reasons.append(f"disabled by {DISABLE_ENV}={os.environ.get(DISABLE_ENV)}")
        fix = f"remove it from {DISABLE_ENV}"
    if cc is None:
        ok = False
        reasons.append("no CUDA device (CPU-only host or torch without CUDA)")
    if pl is None:
        ok = False
        reasons.append("flashinfer-python is not installed")
        fix = fix or "pip install flashinfer-python"
    found: list[KnownIssue] = []
    if cc is not None and pl is not None:
        for issue in TABLE:
            if (
                issue.covers_feature(feature)
                and issue.range.contains(pl)
                and issue.applies_to_arch(cc)
                and issue.kind in ("hang", "broken", "missing-kernel")
            ):
                if any(details.get(k, v) not in (v, None) for k, v in issue.when.items()):
                    continue  # the call is not the one the row describes
                if any(details.get(k) is None for k in issue.when):
                    cond = ", ".join(f"{k}={v}" for k, v in issue.when.items())
                    reasons.append(f"caveat, known issue {issue.id} when {cond}: {issue.summary}")
                    continue
                found.append(issue)
                reasons.append(f"known issue {issue.id}: {issue.summary} ({issue.ref})")
                ok = False
                fix = fix or issue.workaround
    return ok, fix, found


# the verdict of each network probe, by URL: asked once per process (a facade's device
# check runs it on the first call, and a refused call asks again every time)
_PROBED: dict[str, tuple[bool, str]] = {}
_PROBE_LOCK = threading.Lock()
# FlashInfer's default artifact repository (``jit/cubin_loader.py``, every release)
CUBINS_REPOSITORY = (
    "https://edge.urm.nvidia.com/artifactory/sw-kernelinferencelibrary-public-generic-local/"
)


def trtllm_artifact(group: str = "TRTLLM_GEN_BMM") -> str | None:
    """The first file the installed release fetches for a TRTLLM-gen kernel group,
    relative to ``FLASHINFER_CUBINS_REPOSITORY``: ``f"{ArtifactPath.<group>}/checksums.txt"``
    (``TRTLLM_GEN_BMM``: the fused MoE, ``jit/fused_moe.py`` of every release 0.5.0-0.7.4;
    ``TRTLLM_GEN_FMHA``: TRTLLM-gen attention, ``jit/attention/modules.py``), with
    ``ArtifactPath`` read statically from the installed ``flashinfer/artifacts.py``
    (nothing imported; once per file).  ``None``: no FlashInfer package here, or the
    file does not define the group."""
    from .detection import detect

    pkg = detect().package_dir
    if pkg is None:
        return None
    path = _artifact_paths(os.path.join(pkg, "artifacts.py")).get(group)
    return None if path is None else f"{path}/checksums.txt"


_ARTIFACT_PATHS: dict[str, dict[str, str]] = {}


def _artifact_paths(filename: str) -> dict[str, str]:
    """``ArtifactPath``'s string fields in ``filename`` (a dataclass of literals)."""
    if filename not in _ARTIFACT_PATHS:
        import ast

        out: dict[str, str] = {}
        try:
            with open(filename, encoding="utf-8") as f:
                tree = ast.parse(f.read())
        except (OSError, SyntaxError, ValueError):
            tree = None
        for node in tree.body if tree is not None else ():
            if isinstance(node, ast.ClassDef) and node.name == "ArtifactPath":
                for stmt in node.body:
                    if (
                        isinstance(stmt, ast.AnnAssign)
                        and isinstance(stmt.target, ast.Name)
                        and isinstance(stmt.value, ast.Constant)
                        and isinstance(stmt.value.value, str)
                    ):
                        out[stmt.target.id] = stmt.value.value
        _ARTIFACT_PATHS[filename] = out
    return _ARTIFACT_PATHS[filename]


def cubins_reachable(
    release: str | None = None,
    probe_network: bool = False,
    timeout: float = 3.0,
    *,
    group: str = "TRTLLM_GEN_BMM",
) -> tuple[bool, str]:
    """Can TRTLLM-gen cubins be loaded?  A matching ``flashinfer-cubin`` is installed, or
    ``FLASHINFER_CUBIN_DIR`` holds files, or (only when ``probe_network=True``) the
    artifact repository serves the file the installed release fetches first for
    ``group`` (:func:`trtllm_artifact`; FlashInfer only ever fetches files under the
    repository, whose root may refuse a listing).  The probe is one ``GET`` with
    ``timeout``, asked once per process: its verdict answers every later query.  Not
    probed: ``FLASHINFER_NO_DOWNLOAD`` set (0.6.7.post1+ raise instead of fetching), or
    the file unknown (the release is not the installed one, or not installed)."""
    from .detection import detect

    det = detect()
    fi = det.flashinfer
    ver = release or (fi.version if fi else None)
    if det.cubin is not None and ver is not None and det.cubin.public == ver.partition("+")[0]:
        return True, f"flashinfer-cubin {det.cubin.version} installed"
    d = os.environ.get("FLASHINFER_CUBIN_DIR")
    if d and os.path.isdir(d) and any(os.scandir(d)):
        return True, f"FLASHINFER_CUBIN_DIR={d} is populated"
    repo = os.environ.get("FLASHINFER_CUBINS_REPOSITORY", CUBINS_REPOSITORY)
    if not probe_network:
        return False, (
            f"no matching flashinfer-cubin and no populated FLASHINFER_CUBIN_DIR; "
            f"{repo} not probed (pass probe_network=True)"
        )
    if os.environ.get("FLASHINFER_NO_DOWNLOAD") and ver and at_least(place(ver), "0.6.7.post1"):
        return False, (
            "no local cubins and FLASHINFER_NO_DOWNLOAD is set (flashinfer-python "
            f"{ver} raises instead of downloading them); not probed"
        )
    installed = fi is not None and (release is None or release == fi.version)
    artifact = trtllm_artifact(group) if installed else None
    if artifact is None:
        return False, (
            f"no local cubins, and which file flashinfer-python {ver} fetches from {repo} "
            f"is unknown here (its flashinfer/artifacts.py is not installed); not probed"
        )
    from urllib.parse import urljoin

    url = urljoin(repo if repo.endswith("/") else repo + "/", artifact)  # safe_urljoin
    with _PROBE_LOCK:
        verdict = _PROBED.get(url)
        if verdict is None:
            verdict = _PROBED[url] = _probe(url, timeout)
    return verdict


def _probe(url: str, timeout: float) -> tuple[bool, str]:
    """One ``GET`` of ``url`` (the body is not read)."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=timeout):
            return True, f"the artifact repository serves {url}"
    except urllib.error.HTTPError as exc:
        return False, f"the artifact repository answers HTTP {exc.code} for {url}"
    except Exception as exc:
        return False, f"the artifact repository is unreachable for {url} ({type(exc).__name__})"


def _cubins(
    ok: bool,
    fix: str | None,
    reasons: list[str],
    release: str | None,
    probe_network: bool,
    timeout: float,
    group: str,
) -> tuple[bool, str | None]:
    """The TRTLLM-gen queries' cubin check: appends the reason, fails without cubins."""
    reach, why = cubins_reachable(release, probe_network, timeout, group=group)
    reasons.append(why)
    if reach:
        return ok, fix
    return False, fix or "python -m fi_compat download-cubin (or pip install flashinfer-cubin)"


def supports_trtllm_attention(
    *,
    capability: object = None,
    release: str | None = None,
    batch_invariant: bool = False,
    probe_network: bool = False,
    timeout: float = 3.0,
) -> Support:
    """TRTLLM-gen attention: SM100 family, cubins reachable, not batch-invariant mode, and
    not a release/arch with a known hang (SM103 on 0.6.7-0.6.7.post1: exact SM100 only)."""
    feature = "attention.trtllm"
    cc = _resolve_cc(capability)
    pl = _placement(release)
    reasons: list[str] = []
    ok, fix, found = _common(feature, cc, pl, reasons)
    if cc is not None and cc[0] != 10:
        ok = False
        reasons.append(
            f"SM{cc[0]}{cc[1]} is not in the SM100 family (TRTLLM-gen kernels are SM100/SM103 only)"
        )
    if batch_invariant:
        ok = False
        reasons.append("batch-invariant mode: TRTLLM-gen kernels are not batch invariant")
    if pl is not None:
        ok, fix = _cubins(ok, fix, reasons, release, probe_network, timeout, "TRTLLM_GEN_FMHA")
    return Support(feature, ok, reasons, fix, found)


def supports_xqa_decode(*, capability: object = None, release: str | None = None) -> Support:
    """XQA decode (``flashinfer.decode.xqa*``): compute-capability majors 9, 10 and 12, from
    0.5.0 (``xqa.py`` asserts ``major in [9, 10, 12]`` in 0.5.0-0.7.4; the 0.3.0-0.4.x ``xqa``
    was a different, low-level API).  NVFP4 KV needs SM12x (0.6.7+ ``xqa.py`` assert)."""
    feature = "attention.xqa"
    cc = _resolve_cc(capability)
    pl = _placement(release)
    reasons: list[str] = []
    ok, fix, found = _common(feature, cc, pl, reasons)
    if cc is not None and cc[0] not in (9, 10, 12):
        ok = False
        reasons.append(f"XQA decode serves SM9x, SM10x and SM12x, not SM{cc[0]}{cc[1]}")
    if pl is not None and not at_least(pl, "0.5.0"):
        ok = False
        reasons.append("the xqa API of this form exists from flashinfer-python 0.5.0")
        fix = fix or "pip install 'flashinfer-python>=0.5.0'"
    return Support(feature, ok, reasons, fix, found)


# CUTLASS fused-MoE module per compute capability (``get_cutlass_fused_moe_module`` in
# ``flashinfer/fused_moe/core.py``): SM89, SM90, SM100/103/110 and SM120/121 in every
# release from 0.5.0; SM107 from 0.6.18 (first seen there; 0.6.11 lacks it).  Anything
# else raises ``ValueError("Invalid backend")`` at the first call.
_CUTLASS_MOE_ARCHES: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    ("0.5.0", ((8, 9), (9, 0), (10, 0), (10, 3), (11, 0), (12, 0), (12, 1))),
    ("0.6.18", ((10, 7),)),
)


def supports_cutlass_moe(
    *,
    capability: object = None,
    release: str | None = None,
    quantization: str | None = None,
    activation: str | None = None,
) -> Support:
    """``cutlass_fused_moe`` on this GPU and release: an architecture the release builds
    CUTLASS MoE kernels for, and no known issue for the call described.

    ``quantization`` (``"bf16"``, ``"fp8"``, ``"nvfp4"``, ...) and ``activation`` (an
    ``ActivationType`` member name, e.g. ``"Relu2"``) narrow the known issues: e.g. SM121
    bf16 + Relu2 before 0.6.8 (``sm121-cutlass-moe-relu2``).  Left ``None``, such rows
    are listed as caveats and do not fail the query."""
    feature = "moe.cutlass"
    cc = _resolve_cc(capability)
    pl = _placement(release)
    reasons: list[str] = []
    details = {"quantization": quantization, "activation": _member_name(activation)}
    ok, fix, found = _common(feature, cc, pl, reasons, details)
    why = cutlass_moe_arch_problem(pl, cc) if cc is not None and pl is not None else None
    if why is not None:
        ok = False
        reasons.append(why)
    return Support(feature, ok, reasons, fix, found)


def cutlass_moe_arch_problem(pl: Placement, cc: tuple[int, int]) -> str | None:
    """Why release ``pl`` has no CUTLASS MoE kernel for ``cc`` (None: it has one)."""
    arches = [a for since, rows in _CUTLASS_MOE_ARCHES if at_least(pl, since) for a in rows]
    if cc in arches:
        return None
    names = ", ".join(f"SM{a}{b}" for a, b in arches)
    return (
        f"flashinfer-python {pl.version} builds CUTLASS MoE kernels for {names}, "
        f"not SM{cc[0]}{cc[1]}"
    )


def trtllm_moe_arch_problem(pl: Placement, cc: tuple[int, int]) -> str | None:
    """Why release ``pl``'s TRTLLM-gen MoE launcher rejects ``cc`` (None: it admits it):
    SM10x on every release, SM12x too from 0.6.7 (``init_common``: ``major == 10 ||
    major == 12``)."""
    majors = (10, 12) if at_least(pl, "0.6.7") else (10,)
    if cc[0] in majors:
        return None
    fams = " and ".join(f"SM{m}x" for m in majors)
    return (
        f"TRTLLM-gen MoE in flashinfer-python {pl.version} runs on {fams} only (the launcher "
        f"rejects SM{cc[0]}{cc[1]})"
    )


def supports_trtllm_moe(
    *,
    capability: object = None,
    release: str | None = None,
    quantization: str | None = None,
    probe_network: bool = False,
    timeout: float = 3.0,
) -> Support:
    """The TRTLLM-gen fused-MoE entry points (``trtllm_*_moe``): an architecture the
    release's launcher admits (SM10x in every release; SM12x too from 0.6.7, whose
    ``init_common`` checks ``major == 10 || major == 12``), the cubins reachable, and
    no known issue (SM110 never passes the launcher's check; see also
    ``sm110-moe-cubins-missing``)."""
    feature = "moe.trtllm"
    cc = _resolve_cc(capability)
    pl = _placement(release)
    reasons: list[str] = []
    ok, fix, found = _common(feature, cc, pl, reasons, {"quantization": quantization})
    why = trtllm_moe_arch_problem(pl, cc) if cc is not None and pl is not None else None
    if why is not None:
        ok = False
        reasons.append(why)
    if pl is not None:
        ok, fix = _cubins(ok, fix, reasons, release, probe_network, timeout, "TRTLLM_GEN_BMM")
    return Support(feature, ok, reasons, fix, found)


def _member_name(value: object) -> str | None:
    """An enum member (fi_compat's or FlashInfer's) or a name, as a name."""
    if value is None or isinstance(value, str):
        return value
    return str(getattr(value, "name", value))


# -- one query per facade function or family -------------------------------------------------


def _entries() -> list[Any]:
    from ._facades import entry_points  # binds the stubs; imports neither torch nor FlashInfer

    return entry_points()


def query_members(query: str) -> list[Any]:
    """The entry points a :func:`supports` query names, in registry order.

    ``query`` (a leading ``fi_compat.`` or ``flashinfer.`` is dropped): a facade function
    or method (``"comm.allreduce_fusion"``, ``"decode.BatchDecodeWithPagedKVCacheWrapper.run"``),
    a feature family the entry points declare (``"moe.trtllm"``, ``"comm.allreduce"``,
    ``"attention"``), or a facade module (``"comm.vllm_ar"``, ``"gemm"``).  Raises
    ``ValueError`` naming the families for a query that names nothing."""
    q = query.strip().removeprefix("fi_compat.").removeprefix("flashinfer.")
    eps = _entries()
    cls = q.rpartition(".")[2][:1].isupper()  # a wrapper class: its methods
    exact = [
        e
        for e in eps
        if e.dotted == "fi_compat." + q or (cls and e.dotted.startswith(f"fi_compat.{q}."))
    ]
    if exact:
        return exact
    by_feature = [e for e in eps if e.feature == q or e.feature.startswith(q + ".")]
    if by_feature:
        return by_feature
    mod = "fi_compat." + q
    by_module = [e for e in eps if e.facade == mod or e.facade.startswith(mod + ".")]
    if by_module:
        return by_module
    fams = sorted({e.feature for e in eps} | {e.facade.removeprefix("fi_compat.") for e in eps})
    raise ValueError(
        f"supports({query!r}): no facade function, feature family or facade module of that "
        f"name; families: {', '.join(fams)}"
    )


def _absent_modules(missing: Iterable[str] | None, modules: Iterable[str]) -> set[str]:
    """The optional modules taken as absent: ``missing`` where given, else those
    ``importlib.util.find_spec`` cannot find (no import of the module itself)."""
    if missing is not None:
        return set(missing)
    import importlib.util

    out = set()
    for m in modules:
        try:
            found = importlib.util.find_spec(m) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.add(m)
    return out


def entry_support(
    entry: Any,
    cc: tuple[int, int] | None,
    release: str | None,
    absent: set[str],
) -> tuple[bool, list[str], str | None, list[KnownIssue]]:
    """One entry point's verdict from the facade's own tables: the adapter selection
    (``EntryPoint.select``: release range, removal, strict mode), the optional packages
    the release's module imports, the GPU rule (``devices=``) and confirmed ``hang``
    rows (where the entry point has a device check), the checks the facade makes before
    any launch, in that order."""
    from .detection import Distribution, detect

    name = entry.dotted.removeprefix("fi_compat.")
    if release is None:
        dist = detect().flashinfer
    else:
        dist = Distribution("flashinfer-python", release, "<supports>", "")
    adapter = entry.select(dist)
    err = adapter.problem_error()
    if err is not None:
        return False, [f"{name}: {err}"], _fix_of(err), []
    reasons: list[str] = []
    pl = adapter.placement
    ok, fix = True, None
    for dep in entry.optional_dependencies(pl):
        if dep.module in absent:
            ok = False
            extras = " or ".join(f"flashinfer-python[{x}]" for x in dep.extras)
            reasons.append(
                f"{name}: {entry.module} in flashinfer-python {pl.version} imports "
                f"{dep.module} ({dep.package}: {dep.note}), which is not installed"
            )
            fix = fix or f"pip install {dep.package}" + (f" ({extras})" if extras else "")
    if cc is not None and entry.devices is not None:
        why = entry.devices(pl, cc)
        if why is not None:
            ok = False
            reasons.append(f"{name}: SM{cc[0]}{cc[1]}, and {why}")
    hang = adapter.known_hang(cc)
    found = []
    if hang is not None and entry.devices is None:  # the facade checks no device here
        reasons.append(f"{name}: caveat, known issue {hang.id}: {hang.summary} ({hang.ref})")
    elif hang is not None:
        ok = False
        found.append(hang)
        reasons.append(f"{name}: known issue {hang.id}: {hang.summary} ({hang.ref})")
        fix = fix or hang.workaround
    return ok, reasons, fix, found


def _fix_of(err: Exception) -> str | None:
    text = str(err)
    return text.rpartition("Fix: ")[2].rstrip(".") if "Fix: " in text else None


def supports(
    query: str | Iterable[str],
    *,
    capability: object = None,
    release: str | None = None,
    missing: Iterable[str] | None = None,
) -> Support:
    """Can the facade run ``query`` here?  One answer per facade function or family,
    from fi_compat's own tables, with neither FlashInfer nor torch imported.

    ``query``: a facade function (``"comm.allreduce_fusion"``), a feature family
    (``"moe.trtllm"``), a facade module (``"comm.vllm_ar"``), or several of these (all
    must hold; :func:`query_members`).  Supported means that every entry point named
    passes what the facade checks before any launch: the release is in its range and not
    past its removal (strict mode: known to fi_compat), each optional package its
    FlashInfer module imports on that release is installed, the GPU is one its
    ``devices=`` rule admits, and no confirmed ``hang`` row of the known-issues table
    applies (``FI_COMPAT_IGNORE_ISSUES`` lifts one, as for the facade); a ``broken``
    row that does not block the launch is listed in ``reasons`` as a caveat.  Where the
    answer is no, the facade itself raises the typed error in ``reasons``.

    ``capability``: as for every query here (default: the current GPU; ``None`` on a host
    without one fails the query, naming it).  ``release``: a flashinfer-python version
    (default: the detected one).  ``missing``: the optional modules to take as absent
    (``("cuda", "cutlass")``; default: those ``importlib.util.find_spec`` cannot find).
    Not asked here: whether TRTLLM-gen cubins can be fetched
    (:func:`supports_trtllm_attention`, :func:`supports_trtllm_moe`) and per-call details
    (dtypes, shapes, backends: ``f.is_backend_supported``)."""
    queries = [query] if isinstance(query, str) else list(query)
    members: list[Any] = []
    for q in queries:
        members += [m for m in query_members(q) if m not in members]
    feature = queries[0] if len(queries) == 1 else ",".join(queries)
    cc = _resolve_cc(capability)
    mods = {d.module for e in members for d in e.optional_deps}
    absent = _absent_modules(missing, mods)
    reasons: list[str] = []
    ok, fix, found = True, None, []
    off = [f for f in sorted({e.feature for e in members}) if disabled(f)]
    if off:
        ok = False
        reasons.append(f"{', '.join(off)} disabled by {DISABLE_ENV}={os.environ.get(DISABLE_ENV)}")
        fix = f"remove it from {DISABLE_ENV}"
    if cc is None:
        ok = False
        reasons.append("no CUDA device (CPU-only host or torch without CUDA)")
    for e in members:
        e_ok, e_reasons, e_fix, e_found = entry_support(e, cc, release, absent)
        ok = ok and e_ok
        reasons += e_reasons
        fix = fix or e_fix
        found += [i for i in e_found if i not in found]
    pl = _placement(release)
    if pl is not None and pl.kind == "newer":
        reasons.append(
            f"caveat, flashinfer-python {pl.version} is newer than fi_compat knows: answered "
            f"as {pl.treated_as} (FI_COMPAT_STRICT=1 refuses it)"
        )
    if pl is not None and cc is not None:
        for issue in TABLE:
            if (
                issue.kind == "broken"
                and issue.range.contains(pl)
                and issue.applies_to_arch(cc)
                and any(issue.covers_feature(f) for f in {e.feature for e in members})
            ):
                reasons.append(f"caveat, known issue {issue.id}: {issue.summary} ({issue.ref})")
    if ok:
        reasons.insert(0, f"{len(members)} entry point(s) pass the facade's checks")
    return Support(feature, ok, reasons, fix, found)


# vLLM's hand-written probes (``vllm/utils/flashinfer.py``) and the query that answers
# each here (docs/capabilities.md renders this table); ``None``: no fi_compat query, why.
VLLM_PROBES: dict[str, tuple[tuple[str, ...] | None, str]] = {
    "has_flashinfer()": (
        None,
        "fi_compat.detection.detect().flashinfer is not None (plus a toolkit check for "
        "JIT builds, outside fi_compat)",
    ),
    "has_flashinfer_moe()": (("fused_moe",), "every fused-MoE facade function"),
    "has_flashinfer_cutlass_fused_moe()": (
        (
            "fused_moe.cutlass_fused_moe",
            "quantization.fp4_quantize",
            "fused_moe.block_scale_interleave",
            "fused_moe.trtllm_fp4_block_scale_moe",
        ),
        "the names vLLM probes (nvfp4_block_scale_interleave is block_scale_interleave); "
        "supports_cutlass_moe() narrows by quantization/activation",
    ),
    "has_flashinfer_trtllm_fused_moe()": (
        ("moe.trtllm",),
        "every trtllm_*_moe entry point; supports_trtllm_moe() adds the cubin check",
    ),
    "has_flashinfer_comm()": (("comm",), "every fi_compat.comm facade function"),
    "has_flashinfer_all2all() / has_flashinfer_nvlink_two_sided()": (
        ("comm.trtllm_alltoall",),
        "MnnvlMoe's methods (Mapping, MnnvlMemory, MoEAlltoallInfo are re-exports)",
    ),
    "has_flashinfer_nvlink_one_sided()": (("comm.MoeAlltoAll",), "MoeAlltoAll's methods"),
    "hasattr(flashinfer.comm, 'allreduce_fusion')": (
        ("comm.allreduce_fusion", "comm.create_allreduce_fusion_workspace"),
        "the unified all-reduce fusion API",
    ),
    "has_flashinfer_bf16_gemm()": (
        ("gemm.mm_bf16",),
        "fi_compat.gemm.mm_bf16.is_backend_supported(backend, cc) answers per backend",
    ),
    "has_flashinfer_fp8_blockscale_gemm()": (
        ("gemm.fp8_blockscale_gemm_sm90",),
        "the release range and the GPU rule replace is_device_capability(90) + hasattr",
    ),
    "supports_trtllm_attention()": (
        ("attention.trtllm",),
        "the facade's checks; fi_compat.device.supports_trtllm_attention() adds the cubins "
        "and batch invariance",
    ),
    "has_nvidia_artifactory()": (
        None,
        "fi_compat.device.cubins_reachable(probe_network=True): one GET of the file the "
        "release fetches first, asked once per process",
    ),
    "has_flashinfer_cubin()": (
        None,
        "fi_compat.detection.detect().cubin (a flashinfer-cubin matching the release)",
    ),
    "has_flashinfer_cutedsl_grouped_gemm_nt_masked() / has_flashinfer_cutedsl_moe_nvfp4()": (
        None,
        "not yet: the CuTe-DSL masked grouped-GEMM MoE has no facade",
    ),
    "has_flashinfer_b12x_gemm() / has_flashinfer_b12x_moe()": (
        None,
        "not yet: the SM12x b12x kernels have no facade",
    ),
    "has_flashinfer_sparse_mla_sm120_config()": (
        None,
        "out of scope: reads FlashInfer's private _sparse_mla_sm120 dispatch table",
    ),
    "has_flashinfer_kda_decode() / has_flashinfer_recurrent_kda_decode()": (
        None,
        "not yet: KDA has no facade (vLLM reads private module flags)",
    ),
}
