"""``python -m fi_compat info [--json] [--probe]``: what is installed and what fi_compat chose.

Without ``--probe`` nothing heavy is imported: FlashInfer and torch are described from
their package metadata (torch's CUDA build from ``torch/version.py``, read as text), so it
runs on any host, GPU or not, in well under a second.  ``--probe`` imports each facade's
FlashInfer module in a subprocess with a timeout, so a release whose import crashes or
hangs is reported rather than fatal.

JSON schema (``--json``), version 1::

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
                       "workaround", "confirmed"}]}

``python -m fi_compat doctor [--json]`` (same schema number):
``{"schema": 1, "findings": [{"severity", "code", "title", "explanation", "fix"}],
"errors": int}``; exit status 1 when any finding is an error.

``status`` is one of ``available``, ``needs <package>``, ``import fails here``,
``flashinfer not installed``, ``unsupported release``.
"""

from __future__ import annotations

import json
import os
import sys

from ._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._callpath import Adapter, EntryPoint

SCHEMA = 1


def torch_build() -> dict[str, str | None]:
    """torch's version and CUDA build from its files, without importing it."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return {"version": None, "cuda": None, "location": None}
    loc = next(iter(spec.submodule_search_locations))
    out: dict[str, str | None] = {"version": None, "cuda": None, "location": loc}
    try:
        with open(os.path.join(loc, "version.py"), encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError):
        return out
    for node in tree.body:
        target = getattr(node, "target", None) or (getattr(node, "targets", None) or [None])[0]
        name = getattr(target, "id", None)
        if name in ("__version__", "cuda") and getattr(node, "value", None) is not None:
            try:
                value = ast.literal_eval(node.value)  # type: ignore[attr-defined]
            except ValueError:
                continue
            out["version" if name == "__version__" else "cuda"] = value
    return out


def _module_available(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def entry_status(entry: EntryPoint, adapter: Adapter) -> dict[str, Any]:
    """Predict, without importing FlashInfer, whether ``entry`` works on this host."""
    if adapter.problem == "not-installed":
        return {
            "status": "flashinfer not installed",
            "optional_dependency": None,
            "detail": "pip install flashinfer-python",
        }
    if adapter.problem == "below-floor":
        return {
            "status": "unsupported release",
            "optional_dependency": None,
            "detail": f"{entry.qualname} exists from flashinfer-python {entry.since}",
        }
    pl = adapter.placement
    assert pl is not None
    from .detection import detect
    from .doctor import check_packaging

    for f in check_packaging(detect(), dict(os.environ)):
        if f.severity == "error":
            return {
                "status": "import fails here",
                "optional_dependency": None,
                "detail": f"{f.title}: {f.explanation}; fix: {f.fix}",
            }
    dep = entry.optional_dependency(pl)
    if dep is not None and not _module_available(dep.module):
        extras = " or ".join(f"flashinfer-python[{x}]" for x in dep.extras)
        return {
            "status": f"needs {dep.package}",
            "optional_dependency": dep.package,
            "detail": f"{dep.note}; pip install {extras}",
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


_PROBE = """
import importlib, json, sys, time
t = time.time()
try:
    importlib.import_module(sys.argv[1])
    print(json.dumps({"ok": True, "seconds": round(time.time() - t, 2)}))
except BaseException as e:
    print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"[:500],
                      "seconds": round(time.time() - t, 2)}))
"""


def probe(module: str, timeout: float = 120.0) -> dict[str, Any]:
    """Import ``module`` in a fresh interpreter (same sys.path); report, never crash."""
    import subprocess

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    try:
        r = subprocess.run(
            [sys.executable, "-c", _PROBE, module],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"import did not finish within {timeout:.0f} s (hang?)"}
    lines = r.stdout.strip().splitlines()
    if lines:
        try:
            result: dict[str, Any] = json.loads(lines[-1])
            return result
        except ValueError:
            pass
    return {"ok": False, "error": f"interpreter exited with {r.returncode}: {r.stderr[-300:]}"}


def probe_modules(modules: list[str], timeout: float = 120.0) -> dict[str, dict[str, Any]]:
    """``probe`` each module once; a package whose submodule imported is not probed
    again (importing ``flashinfer.fused_moe`` imports ``flashinfer``)."""
    out: dict[str, dict[str, Any]] = {}
    for mod in sorted(set(modules), key=lambda m: -m.count(".")):
        child = next((m for m, r in out.items() if r["ok"] and m.startswith(mod + ".")), None)
        out[mod] = (
            {"ok": True, "seconds": out[child].get("seconds"), "via": child}
            if child
            else probe(mod, timeout)
        )
    return out


def collect(do_probe: bool = False, timeout: float = 120.0) -> dict[str, Any]:
    import fi_compat

    from ._callpath import adapters

    det = fi_compat.detect()
    fi_compat.adapters(load=True)
    chosen = adapters()
    entries: dict[str, Any] = {}
    ok_now = [a.entry.module for a in chosen.values() if a.problem is None]
    probes = probe_modules(ok_now, timeout) if do_probe else {}  # one per module
    for name, adapter in chosen.items():
        st = entry_status(adapter.entry, adapter)
        if adapter.entry.module in probes and adapter.problem is None:
            st["probe"] = probes[adapter.entry.module]
        entries[name] = st
    mism = det.version_mismatches()
    from . import device
    from .doctor import count_files, cubin_dir_in_use

    cc = device.current_capability()
    cubins: dict[str, Any] = {"dir": None, "files": 0, "chosen_by": None}
    if det.flashinfer is not None:
        d, why = cubin_dir_in_use(det.flashinfer, det.cubin, dict(os.environ))
        cubins = {"dir": d, "files": count_files(d) if os.path.isdir(d) else 0, "chosen_by": why}
    support = {
        "attention.trtllm": device.supports_trtllm_attention().as_dict(),
        "attention.xqa": device.supports_xqa_decode().as_dict(),
        "moe.cutlass": device.supports_cutlass_moe().as_dict(),
        "moe.trtllm": device.supports_trtllm_moe().as_dict(),
    }
    issues = [i.as_dict() for i in device.known_issues(capability=cc)] if det.flashinfer else []
    return {
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
    }


def render(data: dict[str, Any], color: bool = False) -> str:
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
    agree = c("agree", "32") if fi["versions_agree"] else c("MISMATCH", "31")
    out.append(f"  versions: {agree}" + "".join(f"\n    {m}" for m in fi["mismatches"]))
    t = data["torch"]
    out.append(f"torch {t['version'] or 'not installed'}  (CUDA build: {t['cuda'] or 'none'})")
    out.append("Entry points")
    width = max((len(k) for k in data["entry_points"]), default=10)
    for name, st in data["entry_points"].items():
        a = data["adapters"][name]
        ok = st["status"] == "available"
        status = c(st["status"], "32" if ok else "33")
        rng = a["adapter_range"] or "-"
        out.append(f"  {name:{width}s}  {status:18s}  adapter {rng}")
        out.append(f"  {'':{width}s}  {st['detail']}")
        if a["absent_in_release"]:
            out.append(f"  {'':{width}s}  not in this release: {', '.join(a['absent_in_release'])}")
        if "probe" in st:
            p = st["probe"]
            msg = f"imports in {p.get('seconds')} s" if p["ok"] else p["error"]
            out.append(f"  {'':{width}s}  probe: {msg}")
    dev = data["device"]
    cc = dev["capability"]
    gpu = f"SM{cc[0]}{cc[1]} (family {dev['family']})" if cc else "none"
    out.append(f"GPU: {gpu}")
    cub = data["cubins"]
    if cub["dir"]:
        out.append(f"cubins: {cub['files']} files in {cub['dir']} ({cub['chosen_by']})")
    out.append("Support here")
    for name, s in data["support"].items():
        out.append(
            f"  {name:18s} {c('yes', '32') if s['ok'] else c('no', '33')}  "
            + "; ".join(s["reasons"])
        )
    if data["known_issues"]:
        out.append("Known issues of this release" + ("" if cc else " (any GPU)"))
        for i in data["known_issues"]:
            flag = "" if i["confirmed"] else " [unconfirmed]"
            out.append(f"  {i['id']:34s} {i['kind']:14s} {i['arch']:9s} {i['summary']}{flag}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m fi_compat")
    sub = ap.add_subparsers(dest="cmd", required=True)
    info = sub.add_parser("info", help="describe the installed FlashInfer and chosen adapters")
    info.add_argument("--json", action="store_true", help="machine-readable (schema 1)")
    info.add_argument("--probe", action="store_true", help="import FlashInfer in a subprocess")
    info.add_argument("--timeout", type=float, default=120.0, help="probe timeout, seconds")
    doc = sub.add_parser("doctor", help="judge the installation; exit 1 on errors")
    doc.add_argument("--json", action="store_true")
    doc.add_argument("--probe", action="store_true", help="import FlashInfer in a subprocess")
    doc.add_argument("--timeout", type=float, default=120.0)
    doc.add_argument("--capability", help="judge for this GPU, e.g. 10.3 (default: current)")
    dl = sub.add_parser("download-cubin", help="fetch the cubins for the installed release")
    dl.add_argument("--dry-run", action="store_true", help="show exactly what would run")
    dl.add_argument("--dest", help="cubin directory (sets FLASHINFER_CUBIN_DIR)")
    args = ap.parse_args(argv)
    if args.cmd == "doctor":
        from .doctor import main_doctor

        return main_doctor(args)
    if args.cmd == "download-cubin":
        from .doctor import main_download

        return main_download(args)
    data = collect(do_probe=args.probe, timeout=args.timeout)
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(render(data, color=sys.stdout.isatty() and not os.environ.get("NO_COLOR")))
    return 0
