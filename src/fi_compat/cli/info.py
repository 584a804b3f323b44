"""``python -m fi_compat info [--json] [--probe]``: what is installed and what fi_compat chose.

Without ``--probe`` nothing heavy is imported: FlashInfer and torch are described from
their package metadata (torch's CUDA build from ``torch/version.py``, read as text), so it
runs on any host, GPU or not, in well under a second.  ``--probe`` imports each facade's
FlashInfer module in a subprocess with a timeout, so a release whose import crashes or
hangs is reported rather than fatal.

JSON schema (``--json``), version 1 (every key and status: ``docs/cli-json.md``)::

    {"schema": 1, "fi_compat": str,
     "flashinfer": {"detected": {dist-name: {name, version, location, public, local,
                                             is_prerelease, ...}},
                    "overridden": bool, "versions_agree": bool, "mismatches": [str]},
     "torch": {"version": str|null, "cuda": str|null, "location": str|null},
     "adapters": {facade-function: Adapter.describe()},
     "entry_points": {facade-function: {"status": str, "optional_dependency": str|null,
                                        "detail": str, "probe": {...}|absent}},
     "device": {"capability": [major, minor]|null, "family": int|null},
     "support": {feature: {"feature", "ok", "reasons": [str], "fix", "issues": [id]}},
     "cubins": {"dir": str|null, "files": int, "chosen_by": str|null},
     "known_issues": [{"id", "releases", "arch", "feature", "kind", "summary", "ref",
                       "workaround", "confirmed"}],
     "verdict": {"status", "code", "message", "fix", "raises"},
     "metadata": {"package_location": str|null, "package_version": str|null,
                  "duplicates": {dist-name: [{name, version, location, ...}]}},
     "probe_findings": [finding]  (only with --probe)}

``cubins.files`` counts the ``.cubin`` files (not their ``.lock`` files and checksums);
each entry point also carries ``"verdict"`` (:func:`fi_compat._policy.version_verdict` for
its first release) and, with ``--probe``, ``"probe": {"ok", "seconds", "error",
"flashinfer_version", "flashinfer_file", "finding"}``, where ``finding`` is the very
finding ``doctor --probe`` reports for that module.

``python -m fi_compat doctor [--json]`` (same schema number):
``{"schema": 1, "findings": [{"severity", "code", "title", "explanation", "fix"}],
"errors": int}``; exit status 1 when any finding is an error.

``status`` is one of ``available``, ``needs <package>``, ``import fails here``,
``flashinfer not installed``, ``unsupported release``, ``error`` (strict mode refuses a
release newer than fi_compat knows: every call raises).

Exit status 2 (message on stderr, no traceback) for a usage error, such as an invalid
``FI_COMPAT_FLASHINFER_VERSION``.
"""

from __future__ import annotations

import json
import os
import sys

from .._host import torch_build
from .._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Progress = Callable[[int, int, str], None]

    from .._installation import Finding
    from ..detection import Detection

    # the call path's Adapter / EntryPoint, typed loosely: only describe(), .entry,
    # .problem, .placement, .release, .range and the entry point's data are read here
    Adapter = Any
    EntryPoint = Any

SCHEMA = 1
# the fixed values of ``entry_points.<name>.status`` (docs/cli-json.md); "needs <package>"
# for each optional package a registry row names (tests/static/test_cli_json.py)
STATUSES = (
    "available",
    "emulated",
    "removed",
    "needs cuda-python",
    "needs cuda-tile",
    "needs nvidia-cutlass-dsl",
    "import fails here",
    "flashinfer not installed",
    "unsupported release",
    "error",
)


def _module_available(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _requirements() -> list[Any]:
    """The installed release's requirements and their state here (read once)."""
    if not _REQUIREMENTS:
        from .._requirements import check
        from ..detection import detect

        det = detect()
        fi = det.flashinfer
        _REQUIREMENTS.append([] if fi is None or det.overridden else check(fi))
    return _REQUIREMENTS[0]  # type: ignore[no-any-return]


_REQUIREMENTS: list[Any] = []


def _import_blockers() -> list[Any]:
    """Requirements `import flashinfer` imports unguarded that are not met here."""
    return [r for r in _requirements() if r.import_time and not r.ok]


def _declared_spec(package: str) -> str:
    """The installed release's own specifier for ``package`` ('' where undeclared)."""
    return next((r.spec for r in _requirements() if r.name == package), "")


def entry_status(entry: EntryPoint, adapter: Adapter) -> dict[str, Any]:
    """Predict, without importing FlashInfer, whether ``entry`` works on this host."""
    from .._policy import version_verdict

    verdict = version_verdict(adapter.placement, adapter.release, entry.since)
    st = _entry_status(entry, adapter, verdict.code)
    st["verdict"] = verdict.as_dict()
    if verdict.code == "strict-newer":  # refused at call time, before anything is imported
        st["status"] = "error"
        st["detail"] = f"{verdict.message}; fix: {verdict.fix}"
    return st


def _entry_status(entry: EntryPoint, adapter: Adapter, code: str) -> dict[str, Any]:
    if adapter.problem == "not-installed" or code == "not-installed":
        return {
            "status": "flashinfer not installed",
            "optional_dependency": None,
            "detail": "pip install flashinfer-python",
        }
    if adapter.problem == "fallback":
        return {
            "status": "emulated",
            "optional_dependency": None,
            "detail": f"{entry.qualname} exists from flashinfer-python {entry.since}; "
            f"fi_compat emulates it here",
        }
    if adapter.problem == "removed":
        return {
            "status": "removed",
            "optional_dependency": None,
            "detail": f"{entry.qualname} was removed in flashinfer-python {entry.until}"
            + (f"; {entry.removed_fix}" if entry.removed_fix else ""),
        }
    if adapter.problem == "invalid-version" or code == "invalid-version":
        return {
            "status": "unsupported release",
            "optional_dependency": None,
            "detail": f"the recorded version {adapter.release!r} is not a PEP 440 version",
        }
    if adapter.problem == "below-floor" or code == "below-floor":
        return {
            "status": "unsupported release",
            "optional_dependency": None,
            "detail": f"{entry.qualname} exists from flashinfer-python {entry.since}",
        }
    pl = adapter.placement
    assert pl is not None
    from .._installation import check_packaging
    from ..detection import detect

    for f in check_packaging(detect(), dict(os.environ)):
        if f.severity == "error":
            return {
                "status": "import fails here",
                "optional_dependency": None,
                "detail": f"{f.title}: {f.explanation}; fix: {f.fix}",
            }
    blockers = _import_blockers()
    if blockers:
        return {
            "status": "import fails here",
            "optional_dependency": None,
            "detail": "`import flashinfer` needs "
            + ", ".join(f"{r.name}{r.spec}" for r in blockers)
            + "; fix: pip install "
            + " ".join(f"'{r.name}{r.spec}'" for r in blockers),
        }
    dep = entry.optional_dependency(pl)
    for need in entry.optional_dependencies(pl):
        if not _module_available(need.module):
            how = (
                " or ".join(f"flashinfer-python[{x}]" for x in need.extras)
                if need.extras
                else f"'{need.package}{_declared_spec(need.package)}'"
            )
            return {
                "status": f"needs {need.package}",
                "optional_dependency": need.package,
                "detail": f"{need.note}; pip install {how}",
            }
    cuda = torch_build()["cuda"]
    # the CuTe DSL on a CPU-only torch: `import flashinfer` crashes in some releases,
    # whatever the module (known issue cpu-torch-dsl-import-crash)
    if cuda is None and (dep is not None or _module_available("cutlass")):
        for issue in entry.issues(pl):
            if issue.kind == "import" and "CUDA" in issue.summary:
                return {
                    "status": "import fails here",
                    "optional_dependency": dep.package if dep else None,
                    "detail": f"{issue.summary} (torch here has no CUDA); fix: {issue.workaround}",
                }
    return {
        "status": "available",
        "optional_dependency": dep.package if dep else None,
        "detail": f"adapter {adapter.range}",
    }


# the probe: import one module in a fresh interpreter and say which flashinfer package was
# loaded (a failed `import flashinfer` leaves its submodule flashinfer.version in
# sys.modules, and find_spec locates the package without running it)
_PROBE = """
import importlib, importlib.util, json, sys, time
root = None  # every flashinfer.* import runs the package's __init__ first: if that
t = time.time()  # fails, it fails for every module alike (one interpreter, not one each)
if all(n.split(".")[0] == "flashinfer" for n in sys.argv[1:]):
    try:
        importlib.import_module("flashinfer")
    except BaseException as e:
        root = {"ok": False, "error": f"{type(e).__name__}: {e}"[:500], "root": True}
for name in sys.argv[1:]:
    if root is None:
        t = time.time()
        try:
            importlib.import_module(name)
            out = {"ok": True}
        except BaseException as e:
            out = {"ok": False, "error": f"{type(e).__name__}: {e}"[:500]}
    else:
        out = dict(root)
    out["seconds"] = round(time.time() - t, 2)
    m = next((sys.modules[n] for n in ("flashinfer", "flashinfer.version",
              "flashinfer._build_meta") if n in sys.modules), None)
    out["flashinfer_version"] = getattr(m, "__version__", None)
    try:
        out["flashinfer_file"] = getattr(importlib.util.find_spec("flashinfer"), "origin", None)
    except BaseException:
        out["flashinfer_file"] = None
    print(json.dumps({"module": name, **out}), flush=True)
    if not out["ok"] and root is None:
        break  # what a failed import leaves in sys.modules would sway the next ones
"""


def probe(module: str, timeout: float = 120.0) -> dict[str, Any]:
    """Import ``module`` in a fresh interpreter (same sys.path); report, never crash."""
    return probe_modules([module], timeout)[module]


def probe_modules(
    modules: list[str], timeout: float = 120.0, progress: Progress | None = None
) -> dict[str, dict[str, Any]]:
    """Import the modules, deepest first, in a fresh interpreter (same sys.path): one
    result per module, never a crash.  The modules share the interpreter while their
    imports succeed (one interpreter start and FlashInfer import for all); after a
    failure the rest are probed in a new one, since what a failed import leaves in
    ``sys.modules`` can let a later import of the same package pass where a fresh one
    fails.  When ``import flashinfer`` itself fails, every ``flashinfer.*`` module gets
    that error from the one interpreter (each would run the failing ``__init__`` first).
    ``timeout`` bounds each interpreter.  ``progress(done, total, module)`` is called
    as each import starts (``module`` empty once all are done)."""
    order = sorted(set(modules), key=lambda m: -m.count("."))
    out: dict[str, dict[str, Any]] = {}
    shown: list[tuple[int, str]] = []
    while len(out) < len(order):  # each run settles at least one more module
        rest = [m for m in order if m not in out]
        base = len(out)

        def step(done: int, name: str, base: int = base) -> None:
            if progress is not None and (base + done, name) not in shown[-1:]:
                shown.append((base + done, name))  # a new interpreter resumes the count
                progress(base + done, len(order), name)

        out.update(_probe_run(rest, timeout, step))
    if progress is not None:
        progress(len(order), len(order), "")
    return out


def tty_progress(stream: Any = None) -> Progress | None:
    """``probing 3/17 flashinfer.norm ...`` overwritten in place on ``stream`` (stderr),
    cleared at the end; None (no output at all) unless ``stream`` is a terminal."""
    out = sys.stderr if stream is None else stream
    try:
        if not out.isatty():
            return None
    except (AttributeError, ValueError):
        return None

    def show(done: int, total: int, module: str) -> None:
        line = f"probing {done + 1}/{total} {module} ..." if module else ""
        out.write(f"\r{line}\033[K")  # back to column 0, the line erased after the text
        out.flush()

    return show


def _probe_run(
    modules: list[str], timeout: float, step: Callable[[int, str], None] | None = None
) -> dict[str, dict[str, Any]]:
    """One interpreter importing ``modules`` in order until the first failure; its
    result lines are read as they come, so ``step(settled, next module)`` can follow."""
    import queue
    import subprocess
    import threading
    import time

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    got: dict[str, dict[str, Any]] = {}

    def settle(line: str) -> None:
        try:
            rec = json.loads(line)
        except ValueError:
            return
        if isinstance(rec, dict) and rec.get("module") in modules:
            got[rec.pop("module")] = rec

    def tell() -> None:
        nxt = next((m for m in modules if m not in got), None)
        if step is not None and nxt is not None:
            step(len(got), nxt)

    tell()
    proc = subprocess.Popen(
        [sys.executable, "-c", _PROBE, *modules],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    errs: list[str] = []

    def pump_out() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def pump_err() -> None:
        assert proc.stderr is not None
        errs.append(proc.stderr.read())

    readers = [threading.Thread(target=f, daemon=True) for f in (pump_out, pump_err)]
    for t in readers:
        t.start()
    deadline = time.monotonic() + timeout
    finished = False
    while not finished:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            finished = True
        else:
            settle(line)
            tell()
    if finished:
        proc.wait()
        for t in readers:
            t.join()
        err = f"interpreter exited with {proc.returncode}: {''.join(errs)[-300:]}"
    else:
        proc.kill()
        proc.wait()
        err = f"import did not finish within {timeout:.0f} s (hang?)"
    nxt = next((m for m in modules if m not in got), None)
    if nxt is not None and all(r["ok"] for r in got.values()):
        got[nxt] = {"ok": False, "error": err}  # it died or hung while importing this one
    return got


def probe_installation(
    det: Detection,
    chosen: dict[str, Adapter],
    timeout: float = 120.0,
    progress: Progress | None = None,
) -> tuple[dict[str, dict[str, Any]], list[Finding]]:
    """Probe the FlashInfer module of every facade whose release is supported and judge
    the outcome: ``({module: probe result + "finding"}, findings)``.  ``info --probe``
    and ``doctor --probe`` both report exactly these."""
    from .._installation import Finding, check_imported

    modules: dict[str, str] = {}  # one probe per FlashInfer module -> a facade using it
    for name, adapter in chosen.items():
        if adapter.problem is None:  # not the facades this release predates
            modules.setdefault(adapter.entry.module, name)
    results = probe_modules(list(modules), timeout, progress)
    findings: list[Finding] = []
    for module, r in results.items():
        if r["ok"]:
            f = Finding("ok", "probe", f"{module} imports ({r.get('seconds')} s)")
        else:
            f = Finding(
                "error",
                "probe",
                f"import {module} fails",
                str(r["error"]),
                f"see {modules[module]} in python -m fi_compat info",
            )
        r["finding"] = f.as_dict()
        findings.append(f)
    loaded = next((r for r in results.values() if r.get("flashinfer_file")), None)
    if loaded is not None:
        findings += check_imported(det, loaded.get("flashinfer_version"), loaded["flashinfer_file"])
    return results, findings


def metadata(det: Detection) -> dict[str, Any]:
    """Where the importable flashinfer package is, its own version, duplicate dist-infos."""
    from ..detection import read_package_version

    pkg = det.package_dir
    return {
        "package_location": det.package_location,
        "package_version": read_package_version(pkg) if pkg else None,
        "duplicates": {n: [d.as_dict() for d in ds] for n, ds in det.duplicates.items()},
    }


def chosen_adapters() -> dict[str, Adapter]:
    """The adapter of every facade function (``fi_compat.adapters(load=True)``)."""
    import fi_compat

    return fi_compat.adapters(load=True)


def collect(
    do_probe: bool = False, timeout: float = 120.0, progress: Progress | None = None
) -> dict[str, Any]:
    import fi_compat

    from .._policy import version_verdict

    det = fi_compat.detect()
    chosen = chosen_adapters()
    entries: dict[str, Any] = {}
    probes: dict[str, dict[str, Any]] = {}
    probe_findings: list[Finding] = []
    if do_probe:
        probes, probe_findings = probe_installation(det, chosen, timeout, progress)
    for name, adapter in chosen.items():
        st = entry_status(adapter.entry, adapter)
        if adapter.entry.module in probes and adapter.problem is None:
            st["probe"] = probes[adapter.entry.module]
        entries[name] = st
    mism = det.version_mismatches()
    from .. import device
    from .._installation import count_cubins, cubin_dir_in_use

    cc = device.current_capability()
    cubins: dict[str, Any] = {"dir": None, "files": 0, "chosen_by": None}
    if det.flashinfer is not None:
        d, why = cubin_dir_in_use(det.flashinfer, det.cubin, dict(os.environ))
        cubins = {"dir": d, "files": count_cubins(d) if os.path.isdir(d) else 0, "chosen_by": why}
    support = {
        "attention.trtllm": device.supports_trtllm_attention().as_dict(),
        "attention.xqa": device.supports_xqa_decode().as_dict(),
        "moe.cutlass": device.supports_cutlass_moe().as_dict(),
        "moe.trtllm": device.supports_trtllm_moe().as_dict(),
    }
    issues = [i.as_dict() for i in device.known_issues(capability=cc)] if det.flashinfer else []
    fi = det.flashinfer
    data: dict[str, Any] = {
        "schema": SCHEMA,
        "fi_compat": __version__,
        "flashinfer": {
            "detected": {k: d.as_dict() for k, d in det.distributions.items()},
            "overridden": det.overridden,
            "versions_agree": not mism,
            "mismatches": mism,
        },
        "torch": torch_build(),
        "adapters": {k: a.describe() for k, a in chosen.items()},
        "entry_points": entries,
        "device": {
            "capability": list(cc) if cc else None,
            "family": device.family(cc) if cc else None,
        },
        "support": support,
        "cubins": cubins,
        "known_issues": issues,
        "verdict": version_verdict(None, fi.version if fi else None).as_dict(),
        "metadata": metadata(det),
    }
    if do_probe:
        data["probe_findings"] = [f.as_dict() for f in probe_findings]
    return data


def render(data: dict[str, Any], color: bool = False, full: bool = False) -> str:
    """The text report; ``full``: one row per entry point (``info --all``)."""

    def c(text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if color else text

    out = [f"fi_compat {data['fi_compat']}"]
    fi = data["flashinfer"]
    out.append(
        "FlashInfer distributions"
        + (" (overridden by FI_COMPAT_FLASHINFER_VERSION)" if fi["overridden"] else "")
    )
    if not fi["detected"]:
        out.append("  none installed          pip install flashinfer-python")
    for name, d in fi["detected"].items():
        tags = [
            t
            for t in (
                "pre-release" if d.get("is_prerelease") else "",
                f"local {d['local']}" if d.get("local") else "",
            )
            if t
        ]
        out.append(
            f"  {name:22s} {d['version']:16s} {d['location']}"
            + (f"  [{', '.join(tags)}]" if tags else "")
        )
    if len(fi["detected"]) > 1:  # flashinfer-python beside -cubin / -jit-cache
        agree = c("agree", "32") if fi["versions_agree"] else c("MISMATCH", "31")
        out.append(f"  versions: {agree}" + "".join(f"\n    {m}" for m in fi["mismatches"]))
    meta = data.get("metadata") or {}
    for name, dups in meta.get("duplicates", {}).items():
        out.append(c(f"  {len(dups)} dist-infos of {name}:", "31"))
        out += [f"    {d['version']:16s} {d['metadata_path']}" for d in dups]
    if meta.get("package_location") and not fi["overridden"]:
        pv = meta.get("package_version") or "version unknown"
        out.append(f"  import flashinfer loads {meta['package_location']}/flashinfer ({pv})")
    verdict = data.get("verdict") or {}
    if verdict.get("status") in ("warn", "error") and verdict.get("code") != "not-installed":
        mark = c("ERROR" if verdict["status"] == "error" else "untested", "31")
        out.append(f"  {mark}: {verdict['message']}")
    t = data["torch"]
    out.append(f"torch {t['version'] or 'not installed'}  (CUDA build: {t['cuda'] or 'none'})")
    if full:
        out += _entry_table(data, c)
    else:
        out += _entry_summary(data, c)
    for f in data.get("probe_findings", []):
        if f["code"] != "probe":  # the per-module outcomes are shown above
            out.append(c(f"  ERROR {f['title']}", "31") + f"\n    fix: {f['fix']}")
    dev = data["device"]
    cc = dev["capability"]
    gpu = f"SM{cc[0]}{cc[1]} (family {dev['family']})" if cc else "none"
    out.append(f"GPU: {gpu}")
    cub = data["cubins"]
    if cub["dir"]:
        out.append(f"cubins: {cub['files']} in {cub['dir']} ({cub['chosen_by']})")
    out.append("Support here")
    for name, s in data["support"].items():
        out.append(
            f"  {name:18s} {c('yes', '32') if s['ok'] else c('no', '33')}  "
            + "; ".join(s["reasons"])
        )
    issues = data["known_issues"]
    anywhere = [i for i in issues if i["arch"] == "any"]
    particular = [i for i in issues if i["arch"] != "any"]
    groups = [
        ("Known issues of this release (any GPU)", anywhere),
        (
            f"Known issues of this release on SM{cc[0]}{cc[1]}"
            if cc
            else "Known issues of this release on particular GPUs (no GPU here; "
            "doctor --capability <major.minor> judges them for one)",
            particular,
        ),
    ]
    for title, rows in groups:  # those that concern every user first
        if rows:
            out.append(title)
        for i in rows:
            flag = "" if i["confirmed"] else " [unconfirmed]"
            out.append(f"  {i['id']:34s} {i['kind']:14s} {i['arch']:9s} {i['summary']}{flag}")
    return "\n".join(out)


def _entry_table(data: dict[str, Any], c: Any) -> list[str]:
    """One row per entry point: status, adapter range, details, probe outcome."""
    out = ["Entry points"]
    width = max((len(k) for k in data["entry_points"]), default=10)
    colours = {"available": "32", "error": "31"}
    for name, st in data["entry_points"].items():
        a = data["adapters"][name]
        status = c(st["status"], colours.get(st["status"], "33"))
        rng = a["adapter_range"] or "-"
        out.append(f"  {name:{width}s}  {status:18s}  adapter {rng}")
        if st["detail"] != f"adapter {rng}":  # the status line already says it
            out.append(f"  {'':{width}s}  {st['detail']}")
        if a["absent_in_release"]:
            out.append(f"  {'':{width}s}  not in this release: {', '.join(a['absent_in_release'])}")
        if "probe" in st:
            p = st["probe"]
            if p["ok"]:
                msg = f"imports in {p.get('seconds')} s"
            else:
                msg = c("ERROR ", "31") + str(p["error"])
            out.append(f"  {'':{width}s}  probe: {msg}")
    return out


def _entry_summary(data: dict[str, Any], c: Any) -> list[str]:
    """The entry points by status: a count for the available ones, the names and the one
    detail (the fix) shared by each group of the rest."""
    eps = data["entry_points"]
    groups: dict[tuple[str, str], list[str]] = {}
    for name, st in eps.items():
        rng = data["adapters"][name]["adapter_range"] or "-"
        detail = "" if st["detail"] == f"adapter {rng}" else st["detail"]
        if "probe" in st and not st["probe"]["ok"]:
            detail = (detail + "; " if detail else "") + f"probe: ERROR {st['probe']['error']}"
        key = (
            ("available", "")
            if st["status"] == "available" and not detail
            else (st["status"], detail)
        )
        groups.setdefault(key, []).append(name)
    out = [f"Entry points: {len(eps)}  (one row each: info --all; details: info --json)"]
    colours = {"available": "32", "error": "31"}
    for (status, detail), names in sorted(
        groups.items(), key=lambda kv: kv[0] != ("available", "")
    ):
        label = c(status, colours.get(status, "33"))
        if status == "available" and not detail:
            out.append(f"  {label}: {len(names)}")
            continue
        if len(names) == len(eps):
            out.append(f"  {label}: all {len(names)}")
        else:
            shown = names if len(names) <= 6 else [*names[:5], f"... {len(names) - 5} more"]
            out.append(f"  {label}: {len(names)}: " + ", ".join(shown))
        out += [f"    {line}" for line in detail.splitlines()]
    return out
