"""The TRTLLM-gen MoE cubin probe: what FlashInfer would fetch, once per process.

Without local cubins FlashInfer's first MoE call downloads
``<FLASHINFER_CUBINS_REPOSITORY>/<ArtifactPath.TRTLLM_GEN_BMM>/checksums.txt`` (every
release 0.5.0-0.7.4, ``flashinfer/jit/fused_moe.py``: ``get_cubin``/``get_artifact``
of ``f"{ArtifactPath.TRTLLM_GEN_BMM}/checksums.txt"`` before anything else, joined by
``cubin_loader.safe_urljoin``).  The facades ask that URL, not the repository root (an
Artifactory root may refuse a listing while serving every file under it), and answer
from the verdict on every later call of the process.  A local HTTP server stands in
for the repository (no internet here) and counts the requests.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from fi_compat import detection, device, errors
from fi_compat._device import assume_capability
from fi_compat.detection import Detection, Distribution
from support.moe_helpers import moe_facade

# the shape of flashinfer/artifacts.py (0.7.4's values; 0.5.0's BMM path has no
# trailing slash, which the join keeps as FlashInfer does)
BMM = "8ee504560a86b6c72b8c941d3003e8fb1804b1b6/batched_gemm-fdba669-16ba8ed/"
ARTIFACTS = f'''
from dataclasses import dataclass


@dataclass(frozen=True)
class ArtifactPath:
    TRTLLM_GEN_FMHA: str = "f50085594b9adcf9cbde7b8ea108c8587fa99b4c/fmha/trtllm-gen/"
    TRTLLM_GEN_BMM: str = (
        "{BMM}"
    )
    CUDNN_SDPA: str = "a72d85b019dc125b9f711300cb989430f762f5a6/fmha/cudnn/"
'''
# the path FlashInfer requests: cubin_loader.safe_urljoin(repository, f"{path}/checksums.txt")
# (urljoin drops the empty segment of "16ba8ed//checksums.txt")
CHECKSUMS = urlsplit(urljoin("http://host/repo/", f"{BMM}/checksums.txt")).path
MOE = ("trtllm_bf16_moe", "trtllm_fp8_block_scale_moe", "trtllm_fp4_block_scale_routed_moe")


class Repository:
    """Serves ``files`` (path -> status), 403 for anything else (as a root listing)."""

    def __init__(self, files: dict[str, int]) -> None:
        self.files = files
        self.requests: list[str] = []
        repo = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                repo.requests.append(self.path)
                status = repo.files.get(self.path, 403)
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            do_HEAD = do_GET

            def log_message(self, *a: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/repo/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """flashinfer-python 0.7.4 'installed' in tmp_path (its artifacts.py, no cubins), no
    probe verdict yet in this process."""
    site = tmp_path / "site"
    (site / "flashinfer").mkdir(parents=True)
    (site / "flashinfer" / "__init__.py").write_text("")
    (site / "flashinfer" / "artifacts.py").write_text(ARTIFACTS)
    fi = Distribution("flashinfer-python", "0.7.4", str(site), "")
    det = Detection({"flashinfer-python": fi}, False, package_location=str(site))
    monkeypatch.setattr(detection, "_cache", det)
    monkeypatch.setattr(device, "_PROBED", {}, raising=False)
    for var in ("FLASHINFER_CUBIN_DIR", "FLASHINFER_NO_DOWNLOAD"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FLASHINFER_WORKSPACE_BASE", str(tmp_path / "home"))  # no cubins
    return site


@pytest.fixture
def repository(monkeypatch: pytest.MonkeyPatch) -> Iterator[Repository]:
    repo = Repository({CHECKSUMS: 200})
    monkeypatch.setenv("FLASHINFER_CUBINS_REPOSITORY", repo.url)
    yield repo
    repo.close()


def test_the_artifact_flashinfer_fetches_first(installed: Path) -> None:
    assert device.trtllm_artifact("TRTLLM_GEN_BMM") == f"{BMM}/checksums.txt"
    assert device.trtllm_artifact("TRTLLM_GEN_FMHA").endswith("trtllm-gen//checksums.txt")
    assert device.trtllm_artifact("NO_SUCH_GROUP") is None


def test_probe_asks_the_file_not_the_root(installed: Path, repository: Repository) -> None:
    """The root refuses (403) as Artifactory may; the file FlashInfer fetches answers:
    the GPU is served, after one request, however many calls and entry points."""
    with assume_capability((10, 0)):
        for name in MOE:
            _, _, adapter = moe_facade(name, "0.7.4")
            for _ in range(3):
                adapter.check_device(0)
            assert 0 in adapter.ns["_DEV"], name
    assert repository.requests == [CHECKSUMS]


def test_refusal_is_answered_from_the_verdict(
    installed: Path, repository: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No cubins and the file missing (404): every call is refused before any launch,
    naming the URL, and the repository is asked once per process."""
    repository.files[CHECKSUMS] = 404
    with assume_capability((10, 0)):
        for name in MOE:
            _, _, adapter = moe_facade(name, "0.7.4")
            for _ in range(3):
                with pytest.raises(errors.UnsupportedDeviceError, match="HTTP 404") as ei:
                    adapter.check_device(0)
                assert CHECKSUMS in str(ei.value) and "download-cubin" in str(ei.value)
    assert repository.requests == [CHECKSUMS]
    # cubins arriving later (download-cubin into the directory in use) are seen at once
    cubins = installed.parent / "home" / ".cache" / "flashinfer" / "cubins" / "x"
    cubins.mkdir(parents=True)
    (cubins / "k.cubin").write_bytes(b"")
    _, _, adapter = moe_facade(MOE[0], "0.7.4")
    with assume_capability((10, 0)):
        adapter.check_device(0)
    assert repository.requests == [CHECKSUMS]


def test_no_download_means_no_request(
    installed: Path, repository: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FLASHINFER_NO_DOWNLOAD (read from 0.6.7.post1): FlashInfer raises instead of
    fetching, so fi_compat refuses without a request."""
    monkeypatch.setenv("FLASHINFER_NO_DOWNLOAD", "1")
    _, _, adapter = moe_facade(MOE[0], "0.7.4")
    with assume_capability((10, 0)), pytest.raises(errors.UnsupportedDeviceError, match="NO_DOWN"):
        adapter.check_device(0)
    assert repository.requests == []


def test_unknown_artifact_is_not_probed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repository: Repository
) -> None:
    """A release fi_compat cannot read the artifact path of (not installed here): no
    request to a guessed URL, and the reason says so."""
    monkeypatch.setattr(device, "_PROBED", {}, raising=False)
    monkeypatch.setenv("FLASHINFER_WORKSPACE_BASE", str(tmp_path))
    ok, why = device.cubins_reachable("0.6.18", probe_network=True, timeout=1.0)
    assert not ok and "not probed" in why and repository.requests == []
