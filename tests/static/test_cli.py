"""`python -m fi_compat info` text and JSON, without FlashInfer and with an override."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest

from conftest import SRC, run_python


def info(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    code = f"import sys; from fi_compat.cli import main; sys.exit(main({list(args)!r}))"
    return run_python(code, env=env)


def test_json_schema_without_flashinfer() -> None:
    r = info("info", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["schema"] == 1 and set(data) >= {
        "schema",
        "fi_compat",
        "flashinfer",
        "torch",
        "adapters",
        "entry_points",
        "device",
        "support",
        "cubins",
        "known_issues",
    }
    ep = data["entry_points"]["fi_compat.gdn_prefill.chunk_gated_delta_rule"]
    assert ep["status"] == "flashinfer not installed"
    assert data["flashinfer"]["detected"] == {} and data["flashinfer"]["versions_agree"]
    assert data["torch"]["version"].startswith("2.")
    assert data["verdict"]["code"] == "not-installed"
    assert data["metadata"] == {"package_location": None, "package_version": None, "duplicates": {}}


def test_text_without_flashinfer_claims_no_agreement() -> None:
    r = info("info")
    assert r.returncode == 0, r.stderr
    assert "none installed" in r.stdout and "versions:" not in r.stdout


def test_text_prints_no_line_twice() -> None:
    r = info("info", "--all", env={"FI_COMPAT_FLASHINFER_VERSION": "0.6.7"})
    assert r.returncode == 0, r.stderr
    lines = [line.strip() for line in r.stdout.splitlines()]
    repeated = [a for a, b in itertools.pairwise(lines) if a == b]
    assert repeated == []
    # the adapter range once per entry point, on its status line
    assert r.stdout.count("adapter 0.6.3-0.6.7.post3") == sum(
        "adapter 0.6.3-0.6.7.post3" in line
        for line in r.stdout.splitlines()
        if "fi_compat." in line
    )


def test_text_with_override_shows_adapter_and_optional_dependency() -> None:
    r = info("info", "--all", env={"FI_COMPAT_FLASHINFER_VERSION": "0.6.18"})
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "flashinfer-python      0.6.18" in out and "overridden" in out
    assert "needs nvidia-cutlass-dsl" in out and "adapter 0.6.18-0.6.18.post1" in out
    assert "\033[" not in out  # colour only on a TTY


def test_text_without_flashinfer_is_a_short_summary() -> None:
    """One line for what is missing and the command that fixes it, not a row per entry
    point (those stay behind --all and --json)."""
    r = info("info")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) <= 20, r.stdout
    n = len(json.loads(info("info", "--json").stdout)["entry_points"])
    assert f"flashinfer not installed: all {n}" in r.stdout
    assert r.stdout.count("pip install flashinfer-python") == 2  # distributions + entry points
    full = info("info", "--all").stdout
    assert sum("fi_compat." in line for line in full.splitlines()) >= n


def test_summary_names_what_needs_attention() -> None:
    r = info("info", env={"FI_COMPAT_FLASHINFER_VERSION": "0.6.18"})
    assert r.returncode == 0, r.stderr
    assert "needs nvidia-cutlass-dsl: 1: fi_compat.gdn_prefill.chunk_gated_delta_rule" in r.stdout
    assert "pip install flashinfer-python[cu12]" in r.stdout
    assert "available: " in r.stdout


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_timeout_must_be_positive(value: str) -> None:
    for cmd in ("info", "doctor"):
        r = info(cmd, "--timeout", value)
        assert r.returncode == 2 and "must be a positive number of seconds" in r.stderr


def test_json_for_an_old_release_lists_absent_parameters() -> None:
    r = info("info", "--json", env={"FI_COMPAT_FLASHINFER_VERSION": "0.6.7"})
    data = json.loads(r.stdout)
    a = data["adapters"]["fi_compat.gdn_prefill.chunk_gated_delta_rule"]
    assert a["adapter_range"] == "0.6.3-0.6.7.post3" and "state_indices" in a["absent_in_release"]
    assert a["native_dtypes"] == {"cu_seqlens": "int64"}
    assert data["entry_points"]["fi_compat.gdn_prefill.chunk_gated_delta_rule"]["status"] == (
        "available"
    )


def test_module_entry_point_runs() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "fi_compat", "info"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0 and "fi_compat" in r.stdout, r.stderr


def test_adapter_plan_shows_tensors_by_shape_dtype_device() -> None:
    code = (
        "import torch; from fi_compat import norm; "
        "x = torch.randn(64, 128).half(); w = torch.ones(128).half(); "
        "p = norm.rmsnorm.adapter.plan(x, w, 1e-6); "
        "print(repr(p)); print(p['kwargs']['input'] is x)"
    )
    r = run_python(code, env={"FI_COMPAT_FLASHINFER_VERSION": "0.7.4", "FI_COMPAT_ALLOW_CPU": "1"})
    assert r.returncode == 0, r.stderr
    text, same = r.stdout.strip().splitlines()[-2:]
    assert "'input': <Tensor (64, 128) torch.float16 cpu>" in text and "tensor(" not in text
    assert same == "True"  # the plan still holds the tensors themselves
