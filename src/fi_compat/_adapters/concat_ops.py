"""Adapter tables for ``flashinfer.concat_ops`` (``concat_mla_k``: the MLA key
``[k_nope | k_rope]`` written in place, ``k_rope`` broadcast over the heads).

Read from the released sources (``_snapshots/concat_ops.concat_mla_k.json``;
``flashinfer/concat_ops.py`` and ``csrc/concat_mla.cu`` of 0.6.0-0.7.4, the module's
first release is 0.6.0):

* ``concat_mla_k(k, k_nope, k_rope)`` (0.6.0); keyword-only ``backend="default"`` 0.7.0
  (``"cake"``: a generated kernel for sm_100a / sm_103a / sm_107a), dropped at its default
  before 0.7.0 (the only kernel those releases have), refused otherwise.
* Shapes, every release (``csrc/concat_mla.cu:49-75``): ``k`` ``[tokens, 128, 192]``,
  ``k_nope`` ``[tokens, 128, 128]``, ``k_rope`` ``[tokens, 1, 64]`` (``MLA_NUM_LOCAL_HEADS``
  = 128, ``MLA_QK_NOPE_HEAD_DIM`` = 128, ``MLA_QK_ROPE_HEAD_DIM`` = 64:
  ``include/flashinfer/concat_mla.cuh:28-30``), one dtype, last dimension contiguous.
* Dtypes: float16 / bfloat16 on every release (``DISPATCH_DLPACK_DTYPE_TO_CTYPE_FP16``);
  float8_e4m3fn / float8_e5m2 from 0.6.11 (``..._FP16_FP8``, ``concat_mla.cu:87``;
  0.6.10.post1 still dispatches fp16 only): :class:`Fp8Since` refuses fp8 before it,
  naming 0.6.11.
"""

from __future__ import annotations

from .._core import EntryPoint, Normalizer
from .._core.contract import Tensor
from ..errors import UnsupportedParameterError
from ..registry import at_least
from . import _elementwise as ew

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._core import Adapter

FACADE, MODULE = "fi_compat.concat_ops", "flashinfer.concat_ops"
FP8_SINCE = "0.6.11"
_FP8_NAMES = frozenset({"float8_e4m3fn", "float8_e5m2"})
_SHAPES_WHY = (
    "every flashinfer-python release 0.6.0-0.7.4 has the one kernel for DeepSeek's MLA "
    "shape (csrc/concat_mla.cu:69-71 check num_heads 128, nope_dim 128, rope_dim 64). "
    "Fix: concatenate with torch.cat for other shapes"
)


class Fp8Since(Normalizer):
    """An fp8 ``k`` before 0.6.11, whose kernel dispatches float16 / bfloat16 only (a
    RuntimeError in the launch there): refused before it, naming 0.6.11.  Costs nothing
    from 0.6.11 (no check is built)."""

    args = ("k",)
    out = ()
    boundaries = (FP8_SINCE,)

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, FP8_SINCE):
            return None
        where, release = adapter.entry.dotted, str(adapter.release)

        def check(k: Any) -> tuple[Any, ...]:
            name = str(k.dtype).removeprefix("torch.")
            if name in _FP8_NAMES:
                raise UnsupportedParameterError(
                    f"{where}(k of dtype {name}) needs flashinfer-python>={FP8_SINCE}; "
                    f"installed: {release}, whose kernel takes float16 / bfloat16 only "
                    f"(csrc/concat_mla.cu DISPATCH_DLPACK_DTYPE_TO_CTYPE_FP16; fp8 from "
                    f"{FP8_SINCE}). Fix: pip install 'flashinfer-python>={FP8_SINCE}', or "
                    f"concatenate in bfloat16",
                    parameter="k",
                    installed=release,
                    minimum=FP8_SINCE,
                )
            return ()

        return check


SPECS: dict[str, EntryPoint] = {
    "concat_mla_k": EntryPoint(
        facade=FACADE,
        name="concat_mla_k",
        module=MODULE,
        params=(),
        contracts={
            "k": Tensor(
                "tokens heads kdim",
                dtypes=("float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"),
                contiguous="last",
                sizes={"heads": (128,), "kdim": (192,)},
                sizes_why=_SHAPES_WHY,
            ),
            "k_nope": Tensor(
                "tokens heads nope",
                dtype="k",
                contiguous="last",
                sizes={"nope": (128,)},
                sizes_why=_SHAPES_WHY,
            ),
            "k_rope": Tensor(
                "tokens one rope",
                dtype="k",
                contiguous="last",
                sizes={"one": (1,), "rope": (64,)},
                sizes_why=_SHAPES_WHY,
            ),
        },
        normalizers=(Fp8Since(),),
        devices=ew.any_cuda_device,
        feature="concat_ops",
    ),
}
ENTRIES = list(SPECS.values())
