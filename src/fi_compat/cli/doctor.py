"""``python -m fi_compat doctor``: judge the installation, and ``download-cubin``.

Findings have a severity (``error`` makes the exit status 1, ``warning``, ``ok``), an
explanation and the exact fix.  Checks, none of which imports FlashInfer:

* packaging coherence of flashinfer-python / -cubin / -jit-cache, judged by what the
  installed release does about a mismatch (``flashinfer/jit/env.py``): 0.4.0-0.7.1 raise
  RuntimeError at import (cubin: exact version; jit-cache: ``startswith(version)`` up to
  0.6.18.post1, exact or ``version+local`` in 0.7.0-0.7.1); 0.7.2+ warn and ignore the
  package; ``FLASHINFER_DISABLE_VERSION_CHECK`` (0.4.0+) bypasses the check and can load
  stale kernels;
* ``FLASHINFER_CUBIN_DIR`` precedence (the flashinfer-cubin package wins before 0.6.16,
  the variable wins from 0.6.16) and whether the cubin directory in use holds files;
* the JIT toolchain: nvcc present and new enough for the GPU (sm_120 family needs
  nvcc >= 12.9), the CuTe DSL (nvidia-cutlass-dsl) present and its files intact where
  the release needs it, the JIT cache directory the release uses and its size;
* the metadata against the code: two dist-infos of one distribution on ``sys.path``, a
  ``flashinfer`` package imported from another folder than its dist-info, or of another
  version than the dist-info records (read from ``flashinfer/_build_meta.py``);
* the selection policy's verdict on the release (:func:`fi_compat._policy.version_verdict`:
  untested, pre-release, refused in strict mode);
* known issues of this release on this GPU (``fi_compat._issues``): only rows for the
  current GPU (or ``--capability``), none without either; an error only where a kernel
  fi_compat wraps hangs, breaks or fails to import, and rows about a package that is not
  installed are left out;
* with ``--probe``: each facade's FlashInfer module imported in a subprocess with a
  timeout, so an import that crashes or hangs is reported, not fatal, and the imported
  ``flashinfer.__version__`` / ``__file__`` compared with the dist-info (the very probe
  and verdicts ``info --probe`` shows).

Without a GPU and without ``--capability`` the toolchain (nvcc) is only described: nothing
is compiled on such a host.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys

from .._installation import (
    Finding,
    check_cubin_dir,
    check_metadata,
    check_packaging,
    count_cubins,
    cubin_dir_in_use,
    not_a_directory,
)
from ..detection import Detection, Distribution, detect
from ..registry import at_least, place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .info import Progress

DEFAULT_CUBIN_REPO = (
    "https://edge.urm.nvidia.com/artifactory/sw-kernelinferencelibrary-public-generic-local/"
)


def _nvcc(env: dict[str, str]) -> str | None:
    cand = env.get("FLASHINFER_NVCC") or shutil.which("nvcc", path=env.get("PATH"))
    if cand is None and env.get("CUDA_HOME"):
        p = os.path.join(env["CUDA_HOME"], "bin", "nvcc")
        cand = p if os.path.exists(p) else None
    return cand


def nvcc_version(path: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for token in out.replace(",", " ").split():
        if token.startswith("V") and token[1:2].isdigit():
            parts = token[1:].split(".")
            return int(parts[0]), int(parts[1])
    return None


def check_toolchain(
    det: Detection, env: dict[str, str], cc: tuple[int, int] | None
) -> list[Finding]:
    """nvcc, the CuTe DSL, the JIT cache.  ``cc=None`` (no GPU, no ``--capability``):
    nvcc is only described, as nothing is JIT-built on such a host."""
    out: list[Finding] = []
    fi = det.flashinfer
    nvcc = _nvcc(env)
    if nvcc is None:
        sev = "warning" if det.jit_cache is None and cc is not None else "ok"
        out.append(
            Finding(
                sev,
                "nvcc",
                "nvcc not found",
                "kernels that are not precompiled (flashinfer-jit-cache) cannot be JIT-built"
                + ("" if cc is not None else " (no GPU here: nothing is built on this host)"),
                "install the CUDA toolkit or set FLASHINFER_NVCC",
            )
        )
    else:
        ver = nvcc_version(nvcc)
        shown = f"{ver[0]}.{ver[1]}" if ver else "unknown version"
        if cc is not None and cc[0] == 12 and ver is not None and ver < (12, 9):
            out.append(
                Finding(
                    "error",
                    "nvcc",
                    f"nvcc {shown} cannot build sm_12x kernels",
                    "the SM120 family needs nvcc >= 12.9 (V#54267)",
                    "install CUDA toolkit >= 12.9",
                )
            )
        else:
            out.append(Finding("ok", "nvcc", f"nvcc {shown} at {nvcc}"))
    if fi is not None and at_least(place(fi.version), "0.4.0"):
        out.append(check_cutlass_dsl(fi))
    out.append(check_jit_cache_dir(fi, env))
    return out


def cutlass_users(fi: Distribution) -> list[str]:
    """The facade functions whose FlashInfer module needs the CuTe DSL on ``fi``'s
    release (their entry points' optional dependency)."""
    from .._facades import entry_points

    pl = place(fi.public)
    if pl is None:
        return []
    out = []
    for e in entry_points():
        dep = e.optional_dependency(pl)
        if dep is not None and dep.module == "cutlass" and at_least(pl, e.since):
            out.append(e.dotted)
    return out


def _declared(fi: Distribution, package: str) -> str:
    from .._requirements import check

    return next((r.spec for r in check(fi) if r.name == package), "")


def check_cutlass_dsl(fi: Distribution) -> Finding:
    """nvidia-cutlass-dsl installed and every file its RECORD lists present with its size
    (vLLM re-hashes the libs-cu13 RECORD because of a racy install; sizes catch truncated
    or half-replaced installs without reading 500 MB)."""
    import importlib.util

    dists = _dists("nvidia_cutlass_dsl")
    if "nvidia_cutlass_dsl" not in dists:
        users = cutlass_users(fi)
        why = (
            f"{', '.join(users)} need it on this release (the registry's optional "
            "dependencies; the same verdict as info)"
            if users
            else "no fi_compat facade needs it on this release"
        )
        fix = ""
        if users:
            extras = at_least(place(fi.public), "0.6.15")  # the [cu12] / [cu13] extras
            fix = (
                f"pip install 'flashinfer-python[cu12]=={fi.public}' (or [cu13])"
                if extras
                else "pip install 'nvidia-cutlass-dsl" + _declared(fi, "nvidia-cutlass-dsl") + "'"
            )
        return Finding(
            "warning" if users else "ok",
            "cutlass-dsl",
            "nvidia-cutlass-dsl not installed",
            why,
            fix,
        )
    bad = []
    for _name, rec in dists.items():
        bad += _record_problems(rec)
    if bad:
        return Finding(
            "error",
            "cutlass-dsl",
            f"nvidia-cutlass-dsl files missing or truncated ({len(bad)})",
            "; ".join(bad[:3]),
            "pip install --force-reinstall nvidia-cutlass-dsl nvidia-cutlass-dsl-libs-*",
        )
    found = importlib.util.find_spec("cutlass") is not None
    return Finding(
        "ok" if found else "warning",
        "cutlass-dsl",
        f"nvidia-cutlass-dsl intact ({', '.join(sorted(dists))})",
        ""
        if found
        else "installed, but 'cutlass' is not importable from sys.path "
        "(its .pth file is only read from site-packages)",
    )


def _dists(prefix: str) -> dict[str, str]:
    """{dist-info stem: path} of installed distributions whose name starts with prefix."""
    out: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for n in names:
            if n.endswith(".dist-info") and n.lower().startswith(prefix):
                stem = n[:-10].partition("-")[0].lower()
                out.setdefault(stem, os.path.join(entry or ".", n))
    return out


def _record_problems(dist_info: str, limit: int = 5) -> list[str]:
    import csv

    root = os.path.dirname(dist_info)
    problems: list[str] = []
    try:
        with open(os.path.join(dist_info, "RECORD"), newline="") as fh:
            for row in csv.reader(fh):
                if len(row) < 3 or not row[2] or row[0].startswith(".."):
                    continue  # no size recorded, or a script installed outside the tree
                path = os.path.join(root, row[0])
                try:
                    if os.path.getsize(path) != int(row[2]):
                        problems.append(f"{row[0]} has the wrong size")
                except OSError:
                    problems.append(f"{row[0]} is missing")
                if len(problems) >= limit:
                    break
    except OSError:
        problems.append(f"{os.path.basename(dist_info)}/RECORD missing")
    return problems


def jit_cache_dir(fi: Distribution | None, env: dict[str, str]) -> str:
    base = env.get("FLASHINFER_WORKSPACE_BASE") or os.path.expanduser("~")
    cache = os.path.join(base, ".cache", "flashinfer")
    if fi is not None and at_least(place(fi.version), "0.4.1"):  # 0.4.1+: per-version dir
        return os.path.join(cache, fi.version)
    return cache


def check_jit_cache_dir(fi: Distribution | None, env: dict[str, str]) -> Finding:
    d = jit_cache_dir(fi, env)
    bad = not_a_directory(d)
    if bad is not None:
        set_by = "FLASHINFER_WORKSPACE_BASE" if env.get("FLASHINFER_WORKSPACE_BASE") else "HOME"
        return Finding(
            "error",
            "jit-cache-dir",
            f"JIT cache {d} must be a directory: {bad}",
            f"FlashInfer builds and caches kernels under {set_by}/.cache/flashinfer",
            f"point {set_by} at a directory",
        )
    size = 0
    if os.path.isdir(d):
        for root, _dirs, files in os.walk(d):
            for f in files:
                with contextlib.suppress(OSError):
                    size += os.path.getsize(os.path.join(root, f))
    return Finding(
        "ok",
        "jit-cache-dir",
        f"JIT cache {d}: {size / 2**20:.1f} MiB",
        "FLASHINFER_WORKSPACE_BASE moves it; stale builds after a reinstall are "
        "cleared with: python -m flashinfer clear-cache",
    )


# features of fi_compat's facades (EntryPoint.feature), used when the call path cannot be
# loaded to ask it
_FACADE_FEATURES = ("gdn.prefill", "moe.trtllm", "moe.cutlass", "quantization")


def wrapped_features() -> tuple[str, ...]:
    """The features of the FlashInfer kernels fi_compat's facades wrap."""
    from .info import chosen_adapters

    try:
        feats = {a.entry.feature for a in chosen_adapters().values()}
    except Exception:  # a facade that fails to load must not take the diagnosis down
        feats = set(_FACADE_FEATURES)
    return tuple(sorted(feats))


def _issue_applies_here(issue: Any, det: Detection) -> bool:
    """False for a row about a package that is not installed here."""
    if issue.feature == "jit-cache":  # kernels flashinfer-jit-cache ships
        return det.jit_cache is not None
    if issue.id == "cpu-torch-dsl-import-crash":  # the CuTe DSL beside a torch without CUDA
        from .._host import torch_build

        return bool(_dists("nvidia_cutlass_dsl")) and torch_build()["cuda"] is None
    if issue.id == "comm-import-libcudart-not-loaded":  # a torch without CUDA loads no libcudart
        from .._host import torch_build

        return torch_build()["cuda"] is None
    if issue.id == "comm-mnnvl-cuda-python-13":  # cuda-python 13+ lacks `from cuda import cuda`
        from importlib import metadata

        try:
            return int(metadata.version("cuda-python").split(".")[0]) >= 13
        except (metadata.PackageNotFoundError, ValueError):
            return False
    py = issue.when.get("python")
    if py is not None:  # an interpreter bound (comm-import-python-below-3.12)
        from .._core.resolve import python_matches

        return python_matches(py)
    return True


def check_known_issues(
    det: Detection, cc: tuple[int, int] | None, wrapped: tuple[str, ...] | None = None
) -> list[Finding]:
    """Known issues of the installed release for GPU ``cc``.  ``cc=None`` (no GPU and no
    ``--capability``): no GPU's rows, only import crashes whose condition holds on this host.
    An error for a confirmed hang / breakage / import failure of a kernel fi_compat wraps
    (``wrapped``: features, default :func:`wrapped_features`), a warning otherwise."""
    from ..device import known_issues

    fi = det.flashinfer
    if fi is None:
        return []
    feats = wrapped_features() if wrapped is None else wrapped
    out = []
    rows = (
        known_issues(release=fi.version, capability=cc) if cc else known_issues(release=fi.version)
    )
    skipped = 0
    for i in sorted(rows, key=lambda i: i.arch != "any"):  # any GPU's first, then this GPU's
        if not _issue_applies_here(i, det):
            continue
        if cc is None and not (i.kind == "import" and i.id == "cpu-torch-dsl-import-crash"):
            skipped += 1
            continue
        # an ``import.<family>`` row is ours when a facade wraps that family (comm)
        family = i.feature.removeprefix("import.") if i.feature.startswith("import.") else None
        ours = (
            i.feature == "import"
            or any(i.covers_feature(f) for f in feats)
            or any(f.partition(".")[0] == family for f in feats)
        )
        # a row limited to some calls (``when``) is a caveat: doctor cannot know the calls
        fatal = ours and i.confirmed and i.kind in ("hang", "broken", "import") and not i.when
        only = ", ".join(f"{k}={v}" for k, v in i.when.items())
        out.append(
            Finding(
                "error" if fatal else "warning",
                f"issue:{i.id}",
                f"known issue: {i.summary}",
                f"{i.kind}; {i.feature}; releases {i.range}; {i.ref}"
                + (f"; only calls with {only}" if only else "")
                + ("" if i.confirmed else "; unconfirmed")
                + ("" if ours else "; not a kernel fi_compat wraps"),
                i.workaround,
            )
        )
    if skipped:
        out.append(
            Finding(
                "ok",
                "issues-not-judged",
                f"no GPU here: {skipped} known issue(s) of flashinfer-python {fi.version} "
                f"on particular GPUs not judged",
                "python -m fi_compat info lists them",
                "python -m fi_compat doctor --capability <major.minor> judges them for a GPU",
            )
        )
    return out


def check_release(det: Detection) -> list[Finding]:
    """The selection policy's verdict on the installed release, when it is not plain ok."""
    from .._policy import version_verdict

    fi = det.flashinfer
    if fi is None:
        return []  # check_packaging reports not-installed
    v = version_verdict(None, fi.version)
    if v.status == "ok":
        return []
    return [Finding("error" if v.status == "error" else "warning", v.code, v.message, "", v.fix)]


def run(
    do_probe: bool = False,
    capability: object = None,
    timeout: float = 120.0,
    env: dict[str, str] | None = None,
    progress: Progress | None = None,
) -> list[Finding]:
    from ..device import current_capability, parse_capability

    env = dict(os.environ if env is None else env)
    det = detect()
    cc = parse_capability(capability) if capability is not None else current_capability()
    findings = check_packaging(det, env)
    findings += check_cubin_dir(det, env)
    findings += check_metadata(det)
    if not det.overridden:  # an override describes no installed files
        from .._requirements import findings as requirement_findings

        findings += requirement_findings(det.flashinfer)
    findings += check_release(det)
    findings += check_toolchain(det, env, cc)
    findings += check_known_issues(det, cc)
    if do_probe and det.flashinfer is not None:
        from .info import chosen_adapters, probe_installation

        _, probed = probe_installation(det, chosen_adapters(), timeout, progress)
        findings += probed
    return findings


def render(findings: list[Finding], color: bool = False) -> str:
    marks = {"error": ("ERROR", "31"), "warning": ("WARN ", "33"), "ok": ("ok   ", "32")}
    lines = []
    for f in findings:
        mark, code = marks[f.severity]
        mark = f"\033[{code}m{mark}\033[0m" if color else mark
        lines.append(f"{mark}  {f.title}")
        if f.explanation:
            lines.append(f"       {f.explanation}")
        if f.fix:
            lines.append(f"       fix: {f.fix}")
    n_err = sum(f.severity == "error" for f in findings)
    n_warn = sum(f.severity == "warning" for f in findings)
    lines.append(f"{n_err} error(s), {n_warn} warning(s)")
    return "\n".join(lines)


# -- download-cubin --------------------------------------------------------------------------


def _stream(
    cmd: list[str], env: dict[str, str], timeout: float, echo: Callable[[str], None]
) -> tuple[int | None, list[str]]:
    """Run ``cmd``, passing each line of its output (stdout and stderr, ``\r`` progress
    updates included) to ``echo`` as it comes; (exit status or ``None`` on timeout, lines)."""
    import threading

    env = dict(env, PYTHONUNBUFFERED="1")  # FlashInfer's prints reach us as they happen
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )
    lines: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:  # universal newlines: "\r" ends a line too
            line = line.rstrip()
            if line:
                lines.append(line)
                echo(line)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        rc: int | None = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        rc = None
    reader.join()
    return rc, lines


def download_cubin(
    dry_run: bool = False,
    dest: str | None = None,
    timeout: float = 1800.0,
    env: dict[str, str] | None = None,
    echo: Callable[[str], None] | None = None,
) -> tuple[int, str]:
    """Run FlashInfer's own ``download-cubin`` (0.3.1+) and check that cubins arrived.

    FlashInfer's output is passed line by line to ``echo`` (default: printed to stderr
    with a ``flashinfer:`` prefix) while it runs.  FlashInfer's command prints "Cubin
    download failed" and still exits 0 when nothing could be fetched; this one exits 1
    unless the cubin directory holds more ``.cubin`` files afterwards or already held them.
    Returns (exit status, a one-line summary).
    """
    env = dict(os.environ if env is None else env)
    fi = detect().flashinfer
    if fi is None:
        return 2, "flashinfer-python is not installed: nothing to download cubins for"
    if not at_least(place(fi.version), "0.3.1"):
        return 2, (
            f"flashinfer-python {fi.version} has no download-cubin command (0.3.1+); "
            f"cubins are fetched at first use"
        )
    if dest:
        env["FLASHINFER_CUBIN_DIR"] = dest
    target, why = cubin_dir_in_use(fi, detect().cubin, env)
    cmd = [sys.executable, "-m", "flashinfer", "download-cubin"]
    repo = env.get("FLASHINFER_CUBINS_REPOSITORY", DEFAULT_CUBIN_REPO)
    plan = (
        f"would run: {' '.join(cmd)}\n  flashinfer-python {fi.version}\n  into {target} "
        f"({why})\n  from {repo}\n  timeout {timeout:.0f} s"
    )
    if dry_run:
        return 0, plan
    if echo is None:

        def echo(line: str) -> None:
            print(f"flashinfer: {line}", file=sys.stderr, flush=True)

    before = count_cubins(target) if os.path.isdir(target) else 0
    rc, lines = _stream(cmd, env, timeout, echo)
    after = count_cubins(target) if os.path.isdir(target) else 0
    said_failed = any("failed" in line.lower() for line in lines)
    if rc is None:
        return 1, (
            f"download-cubin failed: it did not finish within {timeout:.0f} s (--timeout); "
            f"{after} cubins in {target} (before: {before})"
        )
    if rc != 0 or said_failed or after == 0:
        why_failed = f"exit {rc}" if rc else "FlashInfer reported a failure above"
        return 1, (
            f"download-cubin failed: fetched nothing usable ({why_failed}); {after} cubins in "
            f"{target} (before: {before}). Check network access to {repo} "
            f"(FLASHINFER_CUBINS_REPOSITORY)."
        )
    return 0, f"{after} cubins in {target} (was {before})"


def main_doctor(args: Any) -> int:
    from .info import tty_progress

    findings = run(
        do_probe=args.probe,
        capability=args.capability,
        timeout=args.timeout,
        progress=None if args.json else tty_progress(),
    )
    if args.json:
        import json

        from .info import SCHEMA

        print(
            json.dumps(
                {
                    "schema": SCHEMA,
                    "findings": [f.as_dict() for f in findings],
                    "errors": sum(f.severity == "error" for f in findings),
                },
                indent=2,
            )
        )
    else:
        print(render(findings, color=sys.stdout.isatty() and not os.environ.get("NO_COLOR")))
    return 1 if any(f.severity == "error" for f in findings) else 0


def main_download(args: Any) -> int:
    rc, msg = download_cubin(dry_run=args.dry_run, dest=args.dest, timeout=args.timeout)
    print(msg, file=sys.stderr if rc else sys.stdout)
    return rc
