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
* known issues of this release on this GPU (``fi_compat._issues``);
* with ``--probe``: each facade's FlashInfer module imported in a subprocess with a
  timeout, so an import that crashes or hangs is reported, not fatal.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys

from .detection import Detection, Distribution, detect
from .registry import at_least, place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SEVERITIES = ("error", "warning", "ok")
DEFAULT_CUBIN_REPO = (
    "https://edge.urm.nvidia.com/artifactory/sw-kernelinferencelibrary-public-generic-local/"
)


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
    out += check_cubin_dir(fi, cubin, env)
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


def check_cubin_dir(
    fi: Distribution, cubin: Distribution | None, env: dict[str, str]
) -> list[Finding]:
    d, why = cubin_dir_in_use(fi, cubin, env)
    n = count_files(d) if os.path.isdir(d) else 0
    sev = "ok" if n else "warning"
    fix = "" if n else "python -m fi_compat download-cubin (needs network once)"
    return [
        Finding(
            sev,
            "cubins",
            f"cubin directory {d}: {n} files",
            f"chosen by {why}; TRTLLM-gen kernels (SM100 family) load their cubins from here",
            fix,
        )
    ]


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
    out: list[Finding] = []
    fi = det.flashinfer
    nvcc = _nvcc(env)
    if nvcc is None:
        sev = "warning" if det.jit_cache is None else "ok"
        out.append(
            Finding(
                sev,
                "nvcc",
                "nvcc not found",
                "kernels that are not precompiled (flashinfer-jit-cache) cannot be JIT-built",
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


def check_cutlass_dsl(fi: Distribution) -> Finding:
    """nvidia-cutlass-dsl installed and every file its RECORD lists present with its size
    (vLLM re-hashes the libs-cu13 RECORD because of a racy install; sizes catch truncated
    or half-replaced installs without reading 500 MB)."""
    import importlib.util

    dists = _dists("nvidia_cutlass_dsl")
    if "nvidia_cutlass_dsl" not in dists:
        needed = at_least(place(fi.version), "0.6.15")
        why = (
            "flashinfer.gdn_prefill and the CuTe-DSL kernels of this release need it"
            if needed
            else "not needed by fi_compat's facades on this release "
            "(flashinfer.gdn_prefill needs it from 0.6.15)"
        )
        return Finding(
            "warning" if needed else "ok",
            "cutlass-dsl",
            "nvidia-cutlass-dsl not installed",
            why,
            f"pip install 'flashinfer-python[cu12]=={fi.public}' (or [cu13])" if needed else "",
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


def check_known_issues(det: Detection, cc: tuple[int, int] | None) -> list[Finding]:
    from .device import known_issues

    fi = det.flashinfer
    if fi is None:
        return []
    out = []
    for i in known_issues(release=fi.version, capability=cc if cc else None):
        here = cc is not None or i.arch == "any"
        sev = (
            "error"
            if (here and i.confirmed and i.kind in ("hang", "broken", "import"))
            else ("warning")
        )
        gpu = "" if here else f" (on {i.arch} GPUs)"
        out.append(
            Finding(
                sev if here else "warning",
                f"issue:{i.id}",
                f"known issue{gpu}: {i.summary}",
                f"{i.kind}; {i.feature}; releases {i.range}; {i.ref}"
                + ("" if i.confirmed else "; unconfirmed"),
                i.workaround,
            )
        )
    return out


def run(
    do_probe: bool = False,
    capability: object = None,
    timeout: float = 120.0,
    env: dict[str, str] | None = None,
) -> list[Finding]:
    from .device import current_capability, parse_capability

    env = dict(os.environ if env is None else env)
    det = detect()
    cc = parse_capability(capability) if capability is not None else current_capability()
    findings = check_packaging(det, env)
    findings += check_toolchain(det, env, cc)
    findings += check_known_issues(det, cc)
    if do_probe and det.flashinfer is not None:
        import fi_compat

        from .info import probe_modules

        modules: dict[str, str] = {}  # one probe per FlashInfer module
        for name, adapter in fi_compat.adapters(load=True).items():
            if adapter.problem is None:  # not the facades this release predates
                modules.setdefault(adapter.entry.module, name)
        for module, r in probe_modules(list(modules), timeout).items():
            name = modules[module]
            if r["ok"]:
                findings.append(Finding("ok", "probe", f"{module} imports ({r.get('seconds')} s)"))
            else:
                findings.append(
                    Finding(
                        "error",
                        "probe",
                        f"import {module} fails",
                        str(r["error"]),
                        f"see {name} in python -m fi_compat info",
                    )
                )
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


def download_cubin(
    dry_run: bool = False,
    dest: str | None = None,
    timeout: float = 1800.0,
    env: dict[str, str] | None = None,
) -> tuple[int, str]:
    """Run FlashInfer's own ``download-cubin`` (0.3.1+) and check that cubins arrived.

    FlashInfer's command prints "Cubin download failed" and still exits 0 when nothing
    could be fetched; this one exits 1 unless the cubin directory holds files afterwards.
    Returns (exit status, message).
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
        f"({why})\n  from {repo}"
    )
    if dry_run:
        return 0, plan
    before = count_files(target) if os.path.isdir(target) else 0
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 1, f"download-cubin did not finish within {timeout:.0f} s"
    after = count_files(target) if os.path.isdir(target) else 0
    said = (r.stdout + r.stderr).strip()
    failed = r.returncode != 0 or "failed" in said.lower() or after == 0
    if failed:
        return 1, (
            f"download-cubin fetched nothing usable: exit {r.returncode}, {after} files "
            f"in {target} (before: {before}).\nFlashInfer said: {said[-800:]}\nCheck "
            f"network access to {repo} (FLASHINFER_CUBINS_REPOSITORY)."
        )
    return 0, f"{after} cubin files in {target} (was {before})"


def main_doctor(args: Any) -> int:
    findings = run(do_probe=args.probe, capability=args.capability, timeout=args.timeout)
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
    rc, msg = download_cubin(dry_run=args.dry_run, dest=args.dest)
    print(msg, file=sys.stderr if rc else sys.stdout)
    return rc
