"""Many threads making a facade's first call at once (an engine's worker threads).

Resolution imports FlashInfer's function once and publishes everything the fast path
reads (enum tables, target) before any thread can see the target.  The test widens the
window on purpose: the import and the enum-table build each sleep, so a facade that
published its target before its tables would fail here on nearly every repetition.
Every facade family, 32 threads behind a barrier, repeated.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from fi_compat._core import enumtrans, resolve
from support.helpers import facade_for, inputs
from support.moe_helpers import ENTRIES, args, moe_facade
from support.spy import MoeSpy, Spy, snapshot_signature

THREADS = 32
REPEAT = 5
FAMILIES = [
    "chunk_gated_delta_rule",
    "trtllm_fp4_block_scale_moe",
    "trtllm_fp4_block_scale_routed_moe",
    "trtllm_fp8_block_scale_moe",
    "trtllm_fp8_per_tensor_scale_moe",
    "trtllm_bf16_moe",
    "trtllm_mxint4_block_scale_moe",
    "cutlass_fused_moe",
    "block_scale_interleave",
]
RELEASES = ["0.6.3", "0.6.11", "0.7.4"]


def _storm(call: Any) -> list[BaseException]:
    barrier = threading.Barrier(THREADS)
    failures: list[BaseException] = []

    def worker(i: int) -> None:
        barrier.wait()
        time.sleep(i * 0.0005)  # arrivals spread over the resolution window
        try:
            call()
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("family", FAMILIES)
def test_first_calls_from_many_threads(
    family: str, release: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if family == "chunk_gated_delta_rule":
        if release == "0.6.3":
            release = "0.6.0"
        spy: Any = Spy(snapshot_signature(release))
        fn, adapter = facade_for(release, spy)
        kw: dict[str, Any] = inputs(cu_dtype=__import__("torch").int64)
        kw.pop("initial_state")
    else:
        fn, spy, adapter = moe_facade(family, release)
        kw = args(family)
    assert isinstance(spy, (Spy, MoeSpy))
    real_table = enumtrans.table

    def slow_import(a: Any) -> Any:
        time.sleep(0.005)
        return spy

    def slow_table(a: Any, name: str, live: bool) -> Any:
        time.sleep(0.002)
        return real_table(a, name, live)

    monkeypatch.setattr(resolve, "import_target", slow_import)
    monkeypatch.setattr(enumtrans, "table", slow_table)
    seen = 0
    for _ in range(REPEAT):
        adapter._publish(None)  # re-arm: the next call is a first call again
        spy.calls.clear()
        failures = _storm(lambda: fn(**kw))
        assert failures == [], (family, release, failures[:3])
        seen += len(spy.calls)
    assert seen == THREADS * REPEAT
    assert family == "chunk_gated_delta_rule" or family in ENTRIES
