"""The CLI tells the truth: the selection policy's verdicts (strict mode included), invalid
overrides, ``--version``, ``download-cubin`` progress and failure, and ``doctor --probe``
agreeing with ``info --probe``.

FlashInfer itself is replaced by generated ``flashinfer`` packages (a dist-info with only
METADATA beside a package folder), so each case controls what is importable.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_detection import make_dist, make_package

from conftest import run_python
from fi_compat import detection
from fi_compat._policy import version_verdict
from fi_compat.registry import NEWEST, STRICT_ENV, place

CPU_ONLY = {"CUDA_VISIBLE_DEVICES": "", "PATH": "/nonexistent", "NO_COLOR": "1"}


def cli(*args: str, env: dict[str, str], path: list[str] | None = None) -> tuple[int, str, str]:
    code = f"import sys; from fi_compat.cli import main; sys.exit(main({list(args)!r}))"
    r = run_python(code, env={**CPU_ONLY, **env}, path=path)
    assert "Traceback" not in r.stderr, r.stderr
    return r.returncode, r.stdout, r.stderr


# -- the policy ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("release", "since", "status", "code"),
    [
        ("0.6.7", None, "ok", "known"),
        ("0.6.18+cu130", None, "ok", "known"),  # a local tag is ignored
        (None, None, "error", "not-installed"),
        ("0.4.0", None, "error", "below-floor"),  # before the first wheel release
        ("0.5.3", "0.6.0", "error", "below-floor"),  # before the entry point's first release
        ("0.6.0", "0.6.0", "ok", "known"),
        ("0.9.0", None, "warn", "newer-than-known"),
        ("0.7.0rc1", None, "warn", "prerelease"),
        ("0.7.5.dev3", None, "warn", "newer-than-known"),  # its base release is unknown too
        ("0.6.9.1", None, "warn", "between"),
    ],
)
def test_verdicts(
    monkeypatch: pytest.MonkeyPatch, release: str | None, since: str | None, status: str, code: str
) -> None:
    monkeypatch.delenv(STRICT_ENV, raising=False)
    v = version_verdict(place(release) if release else None, release, since)
    assert (v.status, v.code) == (status, code), v.message
    assert v.message and (v.fix or status == "ok")
    assert (v.raises is None) == (status != "error")


def test_verdict_places_the_release_itself() -> None:
    assert version_verdict(None, "0.7.0rc1").code == "prerelease"


def test_invalid_recorded_version_is_an_error() -> None:
    v = version_verdict(place("not-a-version"), "not-a-version")
    assert (v.status, v.code, v.raises) == (
        "error",
        "invalid-version",
        "UnsupportedFlashInferVersionError",
    )


def test_between_and_prerelease_name_the_release_they_are_treated_as() -> None:
    assert "treat it as 0.6.9" in version_verdict(None, "0.6.9.1").message
    assert "treat it as 0.7.0" in version_verdict(None, "0.7.0rc1").message
    assert version_verdict(None, "0.7.0rc1").fix == (
        "pip install 'flashinfer-python==0.7.0' for a tested release"
    )


def test_strict_mode_is_read_on_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    pl = place("0.9.0")
    monkeypatch.delenv(STRICT_ENV, raising=False)
    lax = version_verdict(pl, "0.9.0")
    assert lax.code == "newer-than-known" and f"Set {STRICT_ENV}=1" in lax.message
    monkeypatch.setenv(STRICT_ENV, "1")
    strict = version_verdict(pl, "0.9.0")
    assert (strict.status, strict.code) == ("error", "strict-newer")
    assert strict.raises == "UntestedFlashInferVersionError"
    assert f"Set {STRICT_ENV}=1" not in strict.message + strict.fix
    assert f"unset {STRICT_ENV}" in strict.fix and f"<={NEWEST}" in strict.fix
    monkeypatch.setenv(STRICT_ENV, "0")
    assert version_verdict(pl, "0.9.0").status == "warn"


def test_strict_mode_leaves_pre_releases_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STRICT_ENV, "1")
    assert version_verdict(None, "0.7.0rc1").status == "warn"


# -- strict mode in info and doctor ----------------------------------------------------------

NEWER = {"FI_COMPAT_FLASHINFER_VERSION": "0.9.0"}
STRICT = {**NEWER, STRICT_ENV: "1"}


def test_info_shows_strict_mode_refusing_a_newer_release() -> None:
    rc, out, _ = cli("info", "--json", env=STRICT)
    assert rc == 0
    data = json.loads(out)
    assert data["verdict"]["code"] == "strict-newer"
    eps = data["entry_points"]
    assert eps and {st["status"] for st in eps.values()} == {"error"}
    assert all(st["verdict"]["raises"] == "UntestedFlashInferVersionError" for st in eps.values())
    rc, out, _ = cli("info", "--json", env=NEWER)
    eps = json.loads(out)["entry_points"]
    assert "error" not in {st["status"] for st in eps.values()}
    assert {st["verdict"]["code"] for st in eps.values()} == {"newer-than-known"}


def test_doctor_reports_strict_mode_as_an_error() -> None:
    rc, out, _ = cli("doctor", "--json", env=STRICT)
    f = {x["code"]: x for x in json.loads(out)["findings"]}
    assert rc == 1 and f["strict-newer"]["severity"] == "error"
    assert f"Set {STRICT_ENV}=1" not in json.dumps(f["strict-newer"])
    rc, out, _ = cli("doctor", "--json", env=NEWER)
    f = {x["code"]: x for x in json.loads(out)["findings"]}
    assert rc == 0 and f["newer-than-known"]["severity"] == "warning"
    assert f"Set {STRICT_ENV}=1" in f["newer-than-known"]["title"]


def test_doctor_text_under_strict_mode_does_not_ask_for_it() -> None:
    rc, out, _ = cli("doctor", env=STRICT)
    assert rc == 1 and "ERROR" in out and f"{STRICT_ENV} is set" in out
    assert f"Set {STRICT_ENV}=1" not in out


# -- an invalid override is a usage error --------------------------------------------------


@pytest.mark.parametrize("value", ["garbage", ""])
@pytest.mark.parametrize(
    "args", [("info",), ("info", "--json"), ("doctor",), ("download-cubin",), ("--version",)]
)
def test_invalid_override_is_reported_cleanly(value: str, args: tuple[str, ...]) -> None:
    rc, out, err = cli(*args, env={"FI_COMPAT_FLASHINFER_VERSION": value})
    assert rc == 2 and out == ""
    assert f"FI_COMPAT_FLASHINFER_VERSION={value!r}" in err
    assert "PEP 440" in err and "'none'" in err


# -- --version -------------------------------------------------------------------------------


def test_version_names_fi_compat_and_flashinfer(tmp_path: Path) -> None:
    from fi_compat import __version__

    rc, out, _ = cli("--version", env={})
    assert rc == 0 and out == f"fi_compat {__version__} (flashinfer-python not installed)\n"
    make_dist(tmp_path, "flashinfer_python", "0.6.7")
    rc, out, _ = cli("--version", env={}, path=[str(tmp_path)])
    assert rc == 0 and out == f"fi_compat {__version__} (flashinfer-python 0.6.7 at {tmp_path})\n"


# -- doctor on a host without a GPU -------------------------------------------------------


def test_a_wrapped_kernel_issue_is_an_error_for_its_gpu(tmp_path: Path) -> None:
    env = {"FI_COMPAT_FLASHINFER_VERSION": "0.6.2", "FLASHINFER_WORKSPACE_BASE": str(tmp_path)}
    rc, out, _ = cli("doctor", "--json", "--capability", "9.0", env=env)
    f = {x["code"]: x for x in json.loads(out)["findings"]}
    assert rc == 1 and f["issue:0.6.0-gdn-prefill-cuda-graph"]["severity"] == "error"
    rc, out, _ = cli("doctor", "--json", env=env)  # no GPU here, none given
    assert rc == 0 and not any(x["code"].startswith("issue:") for x in json.loads(out)["findings"])


# -- download-cubin --------------------------------------------------------------------------

FAKE_MAIN = """
import os, pathlib, sys, time
print("Downloading cubins")  # no flush: the caller must ask for unbuffered output
mode = os.environ["FAKE_MODE"]
if mode == "hang":
    time.sleep(600)
if mode == "fail":
    print("\\u274c Cubin download failed: connection refused")
    sys.exit(0)  # as FlashInfer does
sentinel = pathlib.Path(os.environ["FAKE_SENTINEL"])
for _ in range(1200):  # wait until the caller has seen the first line
    if sentinel.exists():
        break
    time.sleep(0.05)
else:
    print("the first line never reached the caller")
    sys.exit(3)
d = pathlib.Path(os.environ["FLASHINFER_CUBIN_DIR"])
d.mkdir(parents=True, exist_ok=True)
(d / "k.cubin").write_bytes(b"\\0")
(d / "k.cubin.lock").write_bytes(b"")
print("done")
"""


def fake_flashinfer(root: Path) -> Path:
    pkg = make_package(root, "0.6.7")
    (pkg / "__main__.py").write_text(FAKE_MAIN)
    return root


def download(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str, **kw: Any
) -> tuple[int, str, list[str]]:
    from fi_compat.cli.doctor import download_cubin

    monkeypatch.setenv("FI_COMPAT_FLASHINFER_VERSION", "0.6.7")
    detection.detect(refresh=True)
    sentinel = tmp_path / "seen"
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(fake_flashinfer(tmp_path / "fake")),
        "FAKE_MODE": mode,
        "FAKE_SENTINEL": str(sentinel),
        "FLASHINFER_CUBIN_DIR": str(tmp_path / "cubins"),
    }
    seen: list[str] = []

    def echo(line: str) -> None:
        seen.append(line)
        if line == "Downloading cubins":
            sentinel.touch()

    try:
        rc, msg = download_cubin(env=env, echo=echo, **kw)
    finally:
        monkeypatch.delenv("FI_COMPAT_FLASHINFER_VERSION")
        detection.detect(refresh=True)
    return rc, msg, seen


def test_download_cubin_streams_flashinfer_output(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rc, msg, seen = download(monkeypatch, tmp_path, "ok")
    assert seen == ["Downloading cubins", "done"]
    assert rc == 0 and msg == f"1 cubins in {tmp_path / 'cubins'} (was 0)"


def test_download_cubin_failure_is_reported_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rc, msg, seen = download(monkeypatch, tmp_path, "fail")
    assert rc == 1 and seen[-1] == "\u274c Cubin download failed: connection refused"
    assert "connection refused" not in msg  # FlashInfer's line was shown as it came
    assert msg.count("failed") == 1 and "fetched nothing usable" in msg


def test_download_cubin_gives_up_after_its_timeout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rc, msg, seen = download(monkeypatch, tmp_path, "hang", timeout=1.0)
    assert rc == 1 and "did not finish within 1 s (--timeout)" in msg
    assert seen == ["Downloading cubins"]


def test_download_cubin_timeout_option() -> None:
    env = {"FI_COMPAT_FLASHINFER_VERSION": "0.6.7"}
    rc, out, _ = cli("download-cubin", "--dry-run", env=env)
    assert rc == 0 and "timeout 1800 s" in out
    rc, out, _ = cli("download-cubin", "--dry-run", "--timeout", "60", env=env)
    assert rc == 0 and "timeout 60 s" in out


def test_download_cubin_from_the_command_line(tmp_path: Path) -> None:
    root = fake_flashinfer(tmp_path / "fake")
    env = {
        "FI_COMPAT_FLASHINFER_VERSION": "0.6.7",
        "FAKE_MODE": "fail",
        "FAKE_SENTINEL": str(tmp_path / "seen"),
        "FLASHINFER_CUBIN_DIR": str(tmp_path / "cubins"),
    }
    rc, out, err = cli("download-cubin", env=env, path=[str(root)])
    assert rc == 1 and out == ""
    assert err.count("Cubin download failed") == 1 and err.count("download-cubin failed") == 1
    assert err.index("flashinfer: Downloading cubins") < err.index("download-cubin failed")


# -- doctor --probe and info --probe agree -------------------------------------------------


def installed(root: Path, dist: str, package: str) -> Path:
    """flashinfer-python ``dist`` recorded, a package stating ``package`` installed."""
    make_dist(root, "flashinfer_python", dist)
    pkg = make_package(root, package, init_py="from ._build_meta import __version__\n")
    (pkg / "fused_moe").mkdir()
    (pkg / "fused_moe" / "__init__.py").write_text("")
    (pkg / "gdn_prefill.py").write_text("raise RuntimeError('no GPU for the GDN kernels')\n")
    return root


def probe_outcomes(findings: list[dict[str, str]]) -> list[tuple[str, str, str, str]]:
    """(severity, code, title without the measured seconds, explanation)."""
    return sorted(
        (f["severity"], f["code"], re.sub(r" \([\d.]+ s\)", "", f["title"]), f["explanation"])
        for f in findings
    )


@pytest.mark.parametrize("package", ["0.6.7", "0.6.8"])
def test_doctor_probe_and_info_probe_agree(tmp_path: Path, package: str) -> None:
    root = installed(tmp_path, "0.6.7", package)
    rc_doc, out, _ = cli("doctor", "--json", "--probe", env={}, path=[str(root)])
    doctor = json.loads(out)["findings"]
    probed = [f for f in doctor if f["code"].startswith("probe")]
    _, out, _ = cli("info", "--json", "--probe", env={}, path=[str(root)])
    data = json.loads(out)
    assert probe_outcomes(data["probe_findings"]) == probe_outcomes(probed)
    per_module = {
        st["probe"]["finding"]["title"]: st["probe"]["finding"]
        for st in data["entry_points"].values()
        if "probe" in st
    }
    assert probe_outcomes(list(per_module.values())) == probe_outcomes(
        [f for f in probed if f["code"] == "probe"]
    )
    sev = {f["title"].split(" (")[0]: f["severity"] for f in probed if f["code"] == "probe"}
    assert sev["flashinfer.fused_moe imports"] == "ok"
    assert sev["import flashinfer.gdn_prefill fails"] == "error"
    codes = {f["code"]: f["severity"] for f in doctor}
    if package == "0.6.7":
        assert "probe-version" not in codes and "package-version" not in codes
    else:  # the imported __version__ and the package's files both say 0.6.8
        assert codes["probe-version"] == "error" and codes["package-version"] == "error"
    assert rc_doc == 1  # gdn_prefill does not import


def test_probe_reports_the_imported_version_and_file(tmp_path: Path) -> None:
    root = installed(tmp_path, "0.6.7", "0.6.8")
    _, out, _ = cli("info", "--json", "--probe", env={}, path=[str(root)])
    eps = json.loads(out)["entry_points"]
    p = eps["fi_compat.fused_moe.cutlass_fused_moe"]["probe"]
    assert p["ok"] and p["flashinfer_version"] == "0.6.8"
    assert p["flashinfer_file"] == str(root / "flashinfer" / "__init__.py")
    # a failed import still says which package it was
    g = eps["fi_compat.gdn_prefill.chunk_gated_delta_rule"]["probe"]
    assert not g["ok"] and "RuntimeError" in g["error"] and g["flashinfer_version"] == "0.6.8"


def test_info_text_shows_probe_verdicts(tmp_path: Path) -> None:
    root = installed(tmp_path, "0.6.7", "0.6.8")
    rc, out, _ = cli("info", "--probe", env={}, path=[str(root)])
    assert rc == 0
    assert "probe: ERROR RuntimeError: no GPU for the GDN kernels" in out
    assert "ERROR the flashinfer package is 0.6.8 (flashinfer.__version__ after import)" in out


def test_module_entry_point_reports_an_invalid_override_cleanly() -> None:
    import os
    import sys

    from conftest import SRC

    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "FI_COMPAT_FLASHINFER_VERSION": "x"}
    env.update({k: v for k, v in os.environ.items() if k == "HOME"})
    r = subprocess.run(
        [sys.executable, "-m", "fi_compat", "doctor"], capture_output=True, text=True, env=env
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "FI_COMPAT_FLASHINFER_VERSION='x'" in r.stderr


# -- probe progress on a terminal ------------------------------------------------------------

_TTY = """
import io, sys
class Tty(io.StringIO):
    def isatty(self): return {tty}
err = sys.stderr
sys.stderr = Tty()
from fi_compat.cli import main
rc = main({args!r})
err.write(repr(sys.stderr.getvalue()))
sys.exit(rc)
"""


def cli_stderr(*args: str, tty: bool, path: list[str]) -> tuple[str, str]:
    r = run_python(_TTY.format(tty=tty, args=list(args)), env=CPU_ONLY, path=path)
    assert "Traceback" not in r.stderr, r.stderr
    return r.stdout, eval(r.stderr)  # the captured stderr, as written


@pytest.mark.parametrize("cmd", ["info", "doctor"])
def test_probe_shows_progress_on_a_terminal_only(tmp_path: Path, cmd: str) -> None:
    root = installed(tmp_path, "0.6.7", "0.6.7")
    out, err = cli_stderr(cmd, "--probe", tty=True, path=[str(root)])
    steps = re.findall(r"\rprobing (\d+)/(\d+) (flashinfer[\w.]*) \.\.\.\x1b\[K", err)
    total = int(steps[0][1])
    assert total >= 2 and [int(d) for d, _, _ in steps] == list(range(1, total + 1))
    assert {m for _, _, m in steps} >= {"flashinfer.fused_moe", "flashinfer.gdn_prefill"}
    assert err.endswith("\r\x1b[K")  # the line is cleared before the report
    assert "probing" not in out
    # piped, or --json: not a byte of progress
    assert cli_stderr(cmd, "--probe", tty=False, path=[str(root)])[1] == ""
    out, err = cli_stderr(cmd, "--probe", "--json", tty=True, path=[str(root)])
    assert err == "" and json.loads(out)


# -- known issues: those of every GPU first --------------------------------------------------


def test_info_lists_any_gpu_issues_above_the_gpu_specific_ones() -> None:
    rc, out, _ = cli("info", env={"FI_COMPAT_FLASHINFER_VERSION": "0.6.7"})
    assert rc == 0
    lines = out.splitlines()
    anyg = lines.index("Known issues of this release (any GPU)")
    gpu = next(
        n for n, line in enumerate(lines) if line.startswith("Known issues of this release on")
    )
    assert anyg < gpu and "no GPU here" in lines[gpu]
    rows = lambda a, b: [line.split()[2] for line in lines[a + 1 : b]]  # noqa: E731
    assert rows(anyg, gpu) and set(rows(anyg, gpu)) == {"any"}
    assert rows(gpu, len(lines)) and "any" not in rows(gpu, len(lines))


def test_doctor_judges_any_gpu_issues_first() -> None:
    from fi_compat.device import TABLE

    arch = {f"issue:{i.id}": i.arch for i in TABLE}
    _, out, _ = cli(
        "doctor", "--json", "--capability", "10.3", env={"FI_COMPAT_FLASHINFER_VERSION": "0.6.7"}
    )
    order = [arch[f["code"]] for f in json.loads(out)["findings"] if f["code"] in arch]
    assert "any" in order and order[-1] != "any"
    assert order == sorted(order, key=lambda a: a != "any")
