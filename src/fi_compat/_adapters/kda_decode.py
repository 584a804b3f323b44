"""Adapter tables for ``flashinfer.kda_decode`` (Kimi delta attention decode; CuTe DSL
kernels).

Read from the released sources (``_snapshots/kda_decode.*.json``, ``kda_decode.py`` of
0.6.13-0.7.4):

* ``recurrent_kda``: 0.6.13 ``q ... output`` (18 parameters); 0.6.16 appends
  ``initial_state_source``, ``initial_state_indices``, ``beta_is_logit``; 0.6.18 adds
  keyword-only ``backend="cute-dsl"`` (``"cute-dsl" | "cake"``); 0.7.0 keyword-only
  ``disable_state_update``, ``correction_cache``, ``kg_cache`` and ``backend="auto"``;
  0.7.1 makes the default ``None``, resolved to ``_RELEASED_DECODE_BACKEND =
  "cute-dsl"`` (0.7.4 ``kda_decode.py:106, 384-385``).  The module moved its
  implementation to ``flashinfer.kda`` in 0.6.18 and keeps ``kda_decode.recurrent_kda``
  as the decode entry (deprecated from 0.7.1, still present in 0.7.4).
* ``fused_kda_decode``: 0.6.18; 0.7.1 adds keyword-only ``backend="cute-dsl"`` and
  ``state_indices_mode``.  ``state_indices`` is a contiguous int32 tensor on every
  release (its docstring; the CuTe DSL kernel is compiled for int32).

fi_compat's ``backend`` default is ``"cute-dsl"`` on both, what every release runs when
the argument is left out, so it is sent as is from its first release and dropped before
it (the only kernels there).
"""

from __future__ import annotations

from .._core import EntryPoint, Param
from .._core.contract import Tensor
from . import _elementwise as ew

FACADE = "fi_compat.kda_decode"
MODULE = "flashinfer.kda_decode"


def _recurrent() -> EntryPoint:
    return EntryPoint(
        facade=FACADE,
        name="recurrent_kda",
        module=MODULE,
        params=(
            Param(
                "backend",
                value_since={"auto": "0.7.0"},
                explicit=True,  # 0.7.1+ default None, resolved to the same "cute-dsl"
                note="kernel family ('cute-dsl': the only one before 0.6.18)",
                ref="0.6.18 backend='cute-dsl'; 0.7.0 'auto'; 0.7.1 None -> 'cute-dsl'",
            ),
        ),
        contracts={
            "q": Tensor("b t h kd", dtypes="bfloat16", why="every release: 'Must be bfloat16'"),
            "k": Tensor("b t h kd", dtype="q"),
            "v": Tensor("b t hv vd", dtype="q"),
            "ssm_state_indices": Tensor(rank=(1, 2), dtypes="int32"),
        },
        prepare=ew.prepare,
        devices=ew.any_cuda_device,
        feature="kda_decode",
    )


def _fused() -> EntryPoint:
    return EntryPoint(
        facade=FACADE,
        name="fused_kda_decode",
        module=MODULE,
        params=(),
        contracts={
            "x": Tensor("rows channels", dtypes="bfloat16"),
            "state_indices": Tensor(
                "rows", dtypes="int32", why="every release: 'a contiguous int32 tensor'"
            ),
        },
        prepare=ew.prepare,
        devices=ew.any_cuda_device,
        feature="kda_decode",
    )


SPECS: dict[str, EntryPoint] = {"recurrent_kda": _recurrent(), "fused_kda_decode": _fused()}
ENTRIES = list(SPECS.values())
