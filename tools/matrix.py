#!/usr/bin/env python3
"""The release matrix: install real FlashInfer releases side by side and test against each.

    python tools/matrix.py run        # install what is missing, unit tests, every cell, report
    python tools/matrix.py install    # only install
    python tools/matrix.py cell 0.6.7 [--dsl] [-- pytest args]   # one cell

Each release is installed from PyPI for real with ``pip install --no-deps --target
.matrix/fi-VERSION``, beside the few packages ``import flashinfer`` needs on a CPU host
(``.matrix/common``) and, for cells marked ``dsl``, ``nvidia-cutlass-dsl==4.8.1``
(libs-cu12) with ``cuda-python`` (``.matrix/dsl``; its ``.pth`` file is not read from
``PYTHONPATH``, so the ``dsl_packages`` folder is put on the path explicitly).  A cell
runs ``pytest tests/live`` in a fresh interpreter whose ``PYTHONPATH`` holds exactly
that release, with ``FI_COMPAT_CELL*`` variables saying what the cell expects:

* ``live``: ``flashinfer.gdn_prefill`` imports here; the spy contract runs;
* ``dsl-missing``: it needs ``nvidia-cutlass-dsl`` (0.6.15+) and the cell lacks it
  (``flashinfer.fused_moe`` needs no DSL: its live contract runs in these cells);
* ``import-crash``: with the DSL on a CPU-only torch the import raises AssertionError
  (0.6.15-0.7.0.post1); the live contract of those releases runs on the GPU machine.

The doctor/info contract (subprocesses that import FlashInfer) runs only in
``DOCTOR_CELLS``, one cell per import outcome.  The report (stdout and
``.matrix/report.json``) lists every cell with its outcome.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MATRIX = Path(os.environ.get("FI_COMPAT_MATRIX_DIR", ROOT / ".matrix"))

# (release, with the CuTe DSL, expected import outcome on a CPU-only host)
CELLS: list[tuple[str, bool, str]] = [
    # flashinfer-cubin 0.6.0 beside flashinfer-python 0.6.7: a real packaging mismatch
    ("0.6.7", False, "cubin-mismatch"),
    # source distributions (PyPI has no wheels before 0.5.0), built by pip without CUDA:
    # enable_pdl as a bool (0.2.3), as Optional (0.2.14.post1, 0.3.1), 3-D rmsnorm and
    # tvm-ffi (0.4.1).  0.2.0.post1-0.2.2.post1 import triton at module scope (a 556 MB
    # dependency), so no cell of theirs: their static suite covers them.
    ("0.2.3", False, "live"),
    ("0.2.14.post1", False, "live"),
    ("0.3.1", False, "live"),
    ("0.4.1", False, "live"),
    ("0.5.0", False, "live"),
    ("0.5.3", False, "live"),
    ("0.6.0", False, "live"),
    ("0.6.3", False, "live"),
    ("0.6.7", False, "live"),
    ("0.6.8.post1", False, "live"),
    ("0.6.11", False, "live"),
    ("0.6.13", False, "live"),
    ("0.6.14", False, "live"),
    ("0.6.16", False, "dsl-missing"),
    ("0.6.17", True, "import-crash"),
    ("0.6.18", False, "dsl-missing"),
    ("0.6.18", True, "import-crash"),
    ("0.7.0", False, "dsl-missing"),  # flashinfer.fused_moe still imports: live MoE contract
    ("0.7.0", True, "import-crash"),
    ("0.7.4", True, "live"),
]
# cells that also run the doctor/info contract (subprocesses importing FlashInfer, ~50 s a
# cell): one of each import outcome, the oldest and newest live release
DOCTOR_CELLS = {
    ("0.6.7", False, "cubin-mismatch"),
    ("0.5.0", False, "live"),
    ("0.6.7", False, "live"),
    ("0.6.18", False, "dsl-missing"),
    ("0.7.0", True, "import-crash"),
    ("0.7.4", True, "live"),
}
# what `import flashinfer` needs on a CPU host with --no-deps (flashinfer-api-history.md §3)
COMMON = [
    "apache-tvm-ffi==0.1.15.post2",
    "nvidia-ml-py",
    "numpy",
    "filelock",
    "jinja2",
    "requests",
    "tqdm",
    "typing_extensions",
]
DSL = ["nvidia-cutlass-dsl==4.8.1", "cuda-python"]
# what the sdists' build backends need beyond the venv (0.2.8+: setuptools>=77, packaging>=24)
BUILD = ["setuptools>=77", "packaging>=24"]
FIRST_WHEEL = (0, 5, 0)
MISMATCHED_CUBIN = "0.6.0"  # on PyPI (flashinfer-cubin left PyPI after 0.6.13); 149 MB
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
# processes at a time for `run` (the static suite's workers, cells in parallel)
JOBS = int(os.environ.get("FI_COMPAT_MATRIX_JOBS", min(2, os.cpu_count() or 1)))


def _have(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def sdist_only(release: str) -> bool:
    return tuple(int(x) for x in release.split(".")[:3]) < FIRST_WHEEL


def pip_target(target: Path, reqs: list[str], deps: bool, build: bool = False) -> None:
    """``pip install --target``; ``build``: from an sdist, without build isolation (the
    backend imports torch), with :data:`BUILD` on the path; nothing is compiled."""
    if (target / ".done").exists():
        return
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
        "--no-compile",
        "--target",
        str(target),
        *([] if deps else ["--no-deps"]),
        *(["--no-build-isolation"] if build else []),
        *reqs,
    ]
    print("+", " ".join(cmd), flush=True)
    t = time.time()
    env = dict(os.environ)
    if build:
        env["PYTHONPATH"] = str(MATRIX / "build")
    subprocess.run(cmd, check=True, env=env)
    (target / ".done").write_text(f"{time.time() - t:.1f}s\n")


def install(cells: list[tuple[str, bool, str]]) -> None:
    MATRIX.mkdir(parents=True, exist_ok=True)
    pip_target(MATRIX / "common", COMMON, deps=True)
    if any(dsl for _, dsl, _ in cells):
        pip_target(MATRIX / "dsl", DSL, deps=True)
    if any(sdist_only(r) for r, _, _ in cells):
        pip_target(MATRIX / "build", BUILD, deps=True)
    for release in sorted({r for r, _, _ in cells}):
        pip_target(
            MATRIX / f"fi-{release}",
            [f"flashinfer-python=={release}"],
            deps=False,
            build=sdist_only(release),
        )
    if any(e == "cubin-mismatch" for _, _, e in cells):
        pip_target(
            MATRIX / f"cubin-{MISMATCHED_CUBIN}",
            [f"flashinfer-cubin=={MISMATCHED_CUBIN}"],
            deps=False,
        )


def cell_env(release: str, dsl: bool, expect: str) -> dict[str, str]:
    paths = [MATRIX / f"fi-{release}", MATRIX / "common"]
    if dsl:
        paths += [MATRIX / "dsl", MATRIX / "dsl" / "nvidia_cutlass_dsl" / "dsl_packages"]
    if expect == "cubin-mismatch":
        paths.append(MATRIX / f"cubin-{MISMATCHED_CUBIN}")
    env = dict(os.environ)
    env.pop("FI_COMPAT_FLASHINFER_VERSION", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *map(str, paths)])
    env["FI_COMPAT_CELL"] = release
    env["FI_COMPAT_CELL_DSL"] = "1" if dsl else "0"
    env["FI_COMPAT_CELL_EXPECT"] = expect
    env["FI_COMPAT_CELL_DOCTOR"] = "1" if (release, dsl, expect) in DOCTOR_CELLS else "0"
    env.setdefault("FLASHINFER_WORKSPACE_BASE", str(MATRIX / "ws"))
    if sdist_only(release):
        # 0.4.1 was built against tvm-ffi 0.1.0b15: 0.1.15's torch DLPack extension would
        # be JIT-compiled at import (40 s); the releases never use it on CPU
        env["TVM_FFI_DISABLE_TORCH_C_DLPACK"] = "1"
    return env


def run_cell(
    release: str, dsl: bool, expect: str, extra: list[str], quiet: bool = False
) -> dict[str, object]:
    """One cell in its own interpreter; ``quiet``: its output is printed in one piece
    when it ends (cells run two at a time under ``run``)."""
    name = f"{release}{'+dsl' if dsl else ''}{'+cubin' if expect == 'cubin-mismatch' else ''}"
    junit = MATRIX / f"junit-{name}.xml"
    cmd = [*PYTEST, "tests/live", f"--junitxml={junit}", *extra]
    head = f"\n=== cell {name} (expect {expect})"
    if not quiet:
        print(head, flush=True)
    t = time.time()
    proc = subprocess.run(
        cmd,
        cwd=ROOT,
        env=cell_env(release, dsl, expect),
        capture_output=quiet,
        text=True,
    )
    if quiet:
        print(f"{head}\n{proc.stdout}{proc.stderr}", end="", flush=True)
    rc = proc.returncode
    counts = _junit_counts(junit)
    return {
        "cell": name,
        "release": release,
        "dsl": dsl,
        "expect": expect,
        "rc": rc,
        "seconds": round(time.time() - t, 1),
        **counts,
    }


def _junit_counts(path: Path) -> dict[str, int]:
    import xml.etree.ElementTree as ET

    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return {}
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    if suite is None:
        return {}
    get = suite.attrib.get
    return {k: int(get(k, 0)) for k in ("tests", "failures", "errors", "skipped")}


WHAT = {
    "live": "FlashInfer imports on CPU; live spy contract of every facade",
    "cubin-mismatch": f"flashinfer-cubin {MISMATCHED_CUBIN} installed beside it: RuntimeError at "
    "import, explained by the facade, doctor and info",
    "dsl-missing": "gdn_prefill needs nvidia-cutlass-dsl: OptionalDependencyMissingError "
    "checked; fused_moe live",
    "import-crash": "import raises AssertionError on CPU-only torch: FlashInferImportError "
    "checked; live contract on the H200 (tests/gpu), signature by snapshot",
}


def report(rows: list[dict[str, object]]) -> None:
    print("\n=== release matrix report")
    print(f"{'cell':16s} {'rc':>3s} {'tests':>5s} {'fail':>4s} {'skip':>4s} {'sec':>6s}  what")
    for r in rows:
        print(
            f"{r['cell']!s:16s} {r['rc']!s:>3s} {r.get('tests', '?')!s:>5s} "
            f"{int(r.get('failures', 0)) + int(r.get('errors', 0))!s:>4s} "  # type: ignore[call-overload]
            f"{r.get('skipped', '?')!s:>4s} {r['seconds']!s:>6s}  {WHAT[str(r['expect'])]}"
        )
    (MATRIX / "report.json").write_text(json.dumps(rows, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("install")
    run = sub.add_parser("run")
    run.add_argument("pytest_args", nargs="*")
    one = sub.add_parser("cell")
    one.add_argument("release")
    one.add_argument("--dsl", action="store_true")
    one.add_argument("--expect", help="which cell of that release (default: the first)")
    one.add_argument("pytest_args", nargs="*")
    args = ap.parse_args(argv)
    if args.cmd == "install":
        install(CELLS)
        return 0
    if args.cmd == "cell":
        match = [
            c
            for c in CELLS
            if c[0] == args.release and c[1] == args.dsl and args.expect in (None, c[2])
        ]
        expect = match[0][2] if match else "live"
        install([(args.release, args.dsl, expect)])
        row = run_cell(args.release, args.dsl, expect, args.pytest_args)
        report([row])
        return int(row["rc"] != 0)  # type: ignore[call-overload]
    install(CELLS)
    print("\n=== unit and snapshot tests (no FlashInfer on the path)", flush=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    # two workers: the CI machine has two cores (pytest-xdist, in the test extra)
    workers = ["-n", str(JOBS)] if JOBS > 1 and _have("xdist") else []
    unit_rc = subprocess.run(
        [*PYTEST, *workers, "tests", "--ignore=tests/live", *args.pytest_args], cwd=ROOT, env=env
    ).returncode
    with ThreadPoolExecutor(max_workers=JOBS) as pool:  # each cell is its own interpreter
        rows = list(pool.map(lambda c: run_cell(*c, args.pytest_args, quiet=JOBS > 1), CELLS))
    report(rows)
    bad = [r["cell"] for r in rows if r["rc"] != 0]
    print(f"\nunit tests rc={unit_rc}; failing cells: {bad or 'none'}")
    return int(unit_rc != 0 or bool(bad))


if __name__ == "__main__":
    raise SystemExit(main())
