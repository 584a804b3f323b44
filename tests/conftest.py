"""Shared helpers: run code in a fresh interpreter with a chosen sys.path / environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
# the CPU suites stand a spy in for FlashInfer's CUDA-only kernels: let CPU tensors
# through the facades' device check (tests of the check itself switch it back)
os.environ.setdefault("FI_COMPAT_ALLOW_CPU", "1")


def run_python(
    code: str,
    *,
    env: dict[str, str] | None = None,
    path: list[str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a new interpreter; PYTHONPATH = src (+ ``path``), FlashInfer-free."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("FI_COMPAT_")}
    e["PYTHONPATH"] = os.pathsep.join([str(SRC), *(path or [])])
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", code],
        env=e,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(ROOT),
    )


@pytest.fixture
def py() -> object:
    return run_python
