"""Adapter tables for ``flashinfer.utils``: the setup helpers engines call
(``device_support_pdl``, ``get_device_sm_count``,
``get_trtllm_gen_multi_ctas_kv_counter_bytes``) and the ``FP4Tensor`` class.

Read from the released sources (``_snapshots/utils.*.json``): one signature each on
every release that has it: ``device_support_pdl(device)`` from 0.2.7 and
``get_device_sm_count(device)`` from 0.2.9 (``torch.cuda`` queries of the device),
``get_trtllm_gen_multi_ctas_kv_counter_bytes(batch_size, num_qo_heads, sm_count)`` from
0.6.15 (host arithmetic: the bytes of the trtllm-gen multi-CTA KV counter semaphores,
``round_up(max(batch_size * num_qo_heads, sm_count), 8) * 4`` on every release that has
it), ``FP4Tensor(data, scale, scale_start_index=0, original_shape=None)`` from 0.2.9.
"""

from __future__ import annotations

from .._core import EntryPoint, Param
from .._core.reexport import Reexport

FACADE = "fi_compat.utils"
MODULE = "flashinfer.utils"


def _helper(name: str, params: tuple[str, ...], note: str) -> EntryPoint:
    return EntryPoint(
        facade=FACADE,
        name=name,
        module=MODULE,
        params=tuple(Param(p) for p in params),
        host_tensors=True,
        feature="utils",
        matrix_note=note,
    )


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
