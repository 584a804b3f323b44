"""Adapter tables for ``flashinfer.utils``: the setup helpers engines call
(``device_support_pdl``, ``get_device_sm_count``,
``get_trtllm_gen_multi_ctas_kv_counter_bytes``, ``get_compute_capability``,
``is_sm100a_supported``) and the ``FP4Tensor`` class.

Read from the released sources (``_snapshots/utils.*.json``): one signature each on
every release that has it: ``device_support_pdl(device)`` from 0.2.7 and
``get_device_sm_count(device)`` from 0.2.9 (``torch.cuda`` queries of the device),
``get_trtllm_gen_multi_ctas_kv_counter_bytes(batch_size, num_qo_heads, sm_count)`` from
0.6.15 (host arithmetic: the bytes of the trtllm-gen multi-CTA KV counter semaphores,
``round_up(max(batch_size * num_qo_heads, sm_count), 8) * 4`` on every release that has
it), ``FP4Tensor(data, scale, scale_start_index=0, original_shape=None)`` from 0.2.9,
``get_compute_capability(device)`` on every release (``(major, minor)`` of a CUDA
device, ``ValueError`` for another; 0.6.18 reads it from FlashInfer's cached device
properties instead of ``torch.cuda.get_device_capability``: the same pair) and
``is_sm100a_supported(device)`` from 0.2.6 (``major == 10`` and torch's CUDA at least
12.8; 0.2.6 compares the version strings, 0.2.7 on with ``packaging``).  Before 0.2.6
``is_sm100a_supported`` is computed as 0.2.7-0.7.4 compute it (an ``EntryPoint``
fallback): the answer is about the GPU and torch's CUDA, not about FlashInfer.
"""

from __future__ import annotations

from .._core import EntryPoint, Param
from .._core.reexport import Reexport

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FACADE = "fi_compat.utils"
MODULE = "flashinfer.utils"


def _helper(name: str, params: tuple[str, ...], note: str, **kw: Any) -> EntryPoint:
    return EntryPoint(
        facade=FACADE,
        name=name,
        module=MODULE,
        params=tuple(Param(p) for p in params),
        host_tensors=True,
        feature="utils",
        matrix_note=note,
        **kw,
    )


def _is_sm100a_supported(device: Any) -> bool:
    """``is_sm100a_supported`` before 0.2.6, as 0.2.7-0.7.4 ``flashinfer/utils.py``
    compute it: ``get_compute_capability(device)`` (``ValueError`` for a device that is
    not CUDA), then ``major == 10 and version_at_least(torch.version.cuda, "12.8")``
    (``packaging`` versions, evaluated only for major 10)."""
    import torch
    from packaging.version import parse

    if device.type != "cuda":
        raise ValueError("device must be a cuda device")
    major, _ = torch.cuda.get_device_capability(device.index)
    return major == 10 and parse(torch.version.cuda) >= parse("12.8")  # type: ignore[arg-type]


SPECS: dict[str, EntryPoint] = {
    "device_support_pdl": _helper(
        "device_support_pdl", ("device",), "a torch.cuda query (SM90 and newer: True)"
    ),
    "get_device_sm_count": _helper(
        "get_device_sm_count", ("device",), "a torch.cuda query (the device's SM count)"
    ),
    "get_trtllm_gen_multi_ctas_kv_counter_bytes": _helper(
        "get_trtllm_gen_multi_ctas_kv_counter_bytes",
        ("batch_size", "num_qo_heads", "sm_count"),
        "host arithmetic, no GPU",
    ),
    "get_compute_capability": _helper(
        "get_compute_capability", ("device",), "a torch.cuda query: the (major, minor) pair"
    ),
    "is_sm100a_supported": _helper(
        "is_sm100a_supported",
        ("device",),
        "SM10x and torch's CUDA >= 12.8; before 0.2.6 computed as 0.2.7+ computes it",
        fallback=_is_sm100a_supported,
    ),
}
ENTRIES = list(SPECS.values())

ALL_REEXPORTS: list[Reexport] = [
    Reexport(
        facade=FACADE,
        name="FP4Tensor",
        module=MODULE,
        note="packed FP4 data (uint8) with its float8_e4m3fn scale factors",
        feature="utils",
    )
]
