"""Adapter tables for ``flashinfer.mamba`` (the Mamba2 selective-state update).

Read from the released sources (``_snapshots/mamba.selective_state_update.json``,
``mamba/selective_state_update.py`` and ``data/csrc/selective_state_update.cu`` of
0.6.1-0.7.4):

* 0.6.1: ``state, x, dt, A, B, C, D, z, dt_bias, dt_softplus, state_batch_indices,
  pad_slot_id``; 0.6.2 appends ``out``; 0.6.3 ``disable_state_update``,
  ``intermediate_states_buffer``, ``intermediate_state_indices``, ``cache_steps``;
  0.6.5 ``algorithm``; 0.6.6 inserts ``state_scale`` *before* ``out`` and adds
  ``intermediate_state_scales``, ``rand_seed``, ``philox_rounds``; 0.6.7
  ``dst_state_batch_indices``, ``cu_seqlens``, ``num_accepted_tokens``; 0.7.0
  ``backend``.  The stable positional prefix therefore ends at ``pad_slot_id``.
* Index dtype: 0.6.1-0.6.2 read ``state_batch_indices`` as ``int const*``
  (``include/flashinfer/mamba/selective_state_update.cuh``: ``reinterpret_cast<int
  const*>(params.state_batch_indices)``, no dtype check: int64 indices are misread);
  from 0.6.3 the kernel is instantiated for int32 and int64 (``allowed_dtype_combos``
  in ``csrc/selective_state_update.cu``, the JIT specialises on the dtype from 0.6.5).
  fi_compat casts other integer dtypes to int32 on 0.6.1-0.6.2.
* ``backend`` (0.7.0): ``"auto"`` and ``"flashinfer"`` run FlashInfer's kernel, the only
  one before 0.7.0; ``"cake"`` is refused there.
"""

from __future__ import annotations

from .._core import EntryPoint, Param
from .._core.contract import INDEX, Tensor
from . import _elementwise as ew

FACADE = "fi_compat.mamba"
MODULE = "flashinfer.mamba"

_BACKEND_REF = (
    '0.7.0 mamba/selective_state_update.py:217-218 (\'Both "auto" and "flashinfer" use '
    "FlashInfer'; backend == 'cake' alone tries the Cake kernel), the only kernel before 0.7.0"
)

_RANK_WHY = (
    "every release: state [cache, (nheads,) dim, dstate], x [batch, (T,) (nheads,) dim] "
    "(selective_state_update.py unsqueezes the short forms; CHECK_DIM in "
    "csrc/selective_state_update.cu)"
)

_DTYPE_WHY = (
    "the kernel reads D and dt_bias as dt's dtype and B, C, z, out as x's (0.6.3+ "
    "validate_dtype_consistency in csrc/selective_state_update.cu refuses a mismatch; "
    "0.6.1-0.6.2 read the memory as the other dtype); cast them, e.g. D.to(dt.dtype)"
)


def _ssu() -> EntryPoint:
    return EntryPoint(
        facade=FACADE,
        name="selective_state_update",
        module=MODULE,
        params=(
            Param(
                "state_batch_indices",
                dtypes=(("0.6.1", "int32"), ("0.6.3", None)),
                optional=True,
                note="int32 read natively by 0.6.1-0.6.2; int32 or int64 from 0.6.3",
                ref="0.6.1/0.6.2 selective_state_update.cuh reinterpret_cast<int const*>; "
                "0.6.3 selective_state_update.cu allowed_dtype_combos int32/int64",
            ),
            Param(
                "state_scale",
                note="int16 block-scaled state",
                ref="0.6.6 inserted before out (positional shift)",
            ),
            Param(
                "backend",
                neutral=("flashinfer",),
                neutral_ref=_BACKEND_REF,
                note="kernel family",
                ref="0.7.0",
            ),
        ),
        contracts={
            # every release: CHECK_DIM(4, state) after the 3-D form is unsqueezed
            "state": Tensor(rank=(3, 4), why=_RANK_WHY),
            "x": Tensor(rank=(2, 3, 4), why=_RANK_WHY),
            # 0.6.3+ refuse other dtypes in validate_dtype_consistency (an untyped
            # RuntimeError); 0.6.1-0.6.2 dispatch on (state, x, dt, A) alone and read D,
            # dt_bias as dt's type and B, C, z, out as x's: a float32 D beside a bf16 dt is
            # read as bf16 there.  Refused on every release, before the launch.
            "dt": Tensor(),
            "D": Tensor(dtype="dt", why=_DTYPE_WHY),
            "dt_bias": Tensor(dtype="dt", why=_DTYPE_WHY),
            "B": Tensor(dtype="x", why=_DTYPE_WHY),
            "C": Tensor(dtype="x", why=_DTYPE_WHY),
            "z": Tensor(dtype="x", why=_DTYPE_WHY),
            "out": Tensor(dtype="x", why=_DTYPE_WHY),
            "intermediate_states_buffer": Tensor(dtype="state", why=_DTYPE_WHY),
            # (batch,) on every release; (N, max_seqlen) with num_accepted_tokens (0.6.7)
            "state_batch_indices": Tensor(rank=(1, 2), dtypes=INDEX),
            "intermediate_state_indices": Tensor(rank=1, dtypes=INDEX),
            "dst_state_batch_indices": Tensor(rank=(1, 2), dtypes=INDEX),
        },
        prepare=ew.prepare,
        devices=ew.any_cuda_device,
        feature="mamba",
    )


SPECS: dict[str, EntryPoint] = {"selective_state_update": _ssu()}
ENTRIES = list(SPECS.values())
