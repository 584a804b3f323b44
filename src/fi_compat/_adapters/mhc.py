"""Adapter tables for ``flashinfer.mhc`` (manifold hyper-connections, ``HC = 4``).

Read from the released sources (``_snapshots/mhc.*.json``, ``mhc.py`` of 0.6.13-0.7.4):
one signature each on every release, nothing to adapt.  The contracts are what every
release's ``_check_mhc_post_inputs`` / ``_check_mhc_pre_common_inputs`` raise
``ValueError`` for (``residual`` ``[..., 4, H]``, ``_MHC_HC = 4``; ``x`` ``[..., H]``;
``comb_res_mix`` ``[..., 4, 4]``), checked by fi_compat before the call so the error
is the typed one.  The kernels are JIT-built for the installed GPU
(``jit/mhc.py gen_mhc_module``).
"""

from __future__ import annotations

from .._core import EntryPoint
from .._core.contract import Tensor
from . import _elementwise as ew

FACADE = "fi_compat.mhc"
MODULE = "flashinfer.mhc"
_WHY = "every release's mhc.py: _MHC_HC = 4 residual streams ([..., 4, H])"


def _entry(name: str, contracts: dict[str, Tensor]) -> EntryPoint:
    return EntryPoint(
        facade=FACADE,
        name=name,
        module=MODULE,
        params=(),
        contracts=contracts,
        prepare=ew.prepare,
        devices=ew.any_cuda_device,
        feature="mhc",
    )


SPECS: dict[str, EntryPoint] = {
    "mhc_post": _entry(
        "mhc_post",
        {
            "residual": Tensor("*batch 4 h", why=_WHY),
            "x": Tensor("*batch h", why=_WHY),
            "comb_res_mix": Tensor("*batch 4 4", why=_WHY),
        },
    ),
    "mhc_pre_big_fuse": _entry(
        "mhc_pre_big_fuse",
        {"residual": Tensor("*batch 4 h", why=_WHY)},
    ),
}
ENTRIES = list(SPECS.values())
