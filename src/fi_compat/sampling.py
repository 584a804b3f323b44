"""Stable facade of ``flashinfer.sampling``: token sampling from probabilities or logits
(plain, top-k, top-p, min-p, top-k + top-p), top-k / top-p renormalisation and masking,
chain speculative sampling and softmax; one frozen signature each (0.7.4's).

Served from 0.2.3 for the samplers (0.2.0.post1-0.2.2.post1 take caller-drawn
``uniform_samples`` and can fail a row; they are refused, naming 0.2.3), from
0.2.0.post1 for renormalisation and masking, from their first release otherwise
(``sampling_from_logits`` 0.2.6, ``softmax`` 0.2.7).  On every served release:

* samples are int32, or the dtype of ``indices`` (int32 or int64) when given;
* a row with no positive probability samples ``0``, and ``return_valid=True`` returns
  ``(samples, valid)`` with ``valid`` False for such rows (0.6.7's convention);
* ``seed`` and ``offset`` (ints, or 1-D int64 device tensors from 0.6.4; one value per
  row from 0.7.2) give the kernels that Philox ``(seed, offset)``, both or neither: the
  same samples on every release (an int ``offset`` not a multiple of 4 needs 0.6.0);
  without them ``generator`` (or torch's default CUDA generator of the input's device)
  is drawn from and advanced;
* ``top_k_renorm_probs`` / ``top_k_mask_logits`` return the input's dtype;
* ``top_k_max`` is a hint (dropped where the release lacks it); ``is_deterministic=True``
  needs the release that has it (0.6.7 top-p, 0.7.1 top-k).
"""

from __future__ import annotations

from ._adapters.sampling import SPECS
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from torch import Tensor

__all__: list[str] = []  # every entry point joins it (lazy_facades)


def sampling_from_probs(
    probs: Tensor,
    indices: Tensor | None = None,
    deterministic: bool = True,
    generator: Any = None,
    check_nan: bool = False,
    seed: int | Tensor | None = None,
    offset: int | Tensor | None = None,
    return_valid: bool = False,
    **kwargs: Any,
) -> Tensor | tuple[Tensor, Tensor]:
    """One category per row of ``probs`` ``[batch, vocab]`` (row ``indices[i]`` for output
    ``i`` when given); ``(samples, valid)`` with ``return_valid``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def sampling_from_logits(
    logits: Tensor,
    indices: Tensor | None = None,
    deterministic: bool = True,
    generator: Any = None,
    check_nan: bool = False,
    seed: int | Tensor | None = None,
    offset: int | Tensor | None = None,
    **kwargs: Any,
) -> Tensor:
    """One category per row, drawn from ``softmax(logits)`` (Gumbel-max, no softmax pass)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def top_p_sampling_from_probs(
    probs: Tensor,
    top_p: Tensor | float,
    indices: Tensor | None = None,
    deterministic: bool = True,
    generator: Any = None,
    check_nan: bool = False,
    seed: int | Tensor | None = None,
    offset: int | Tensor | None = None,
    return_valid: bool = False,
    **kwargs: Any,
) -> Tensor | tuple[Tensor, Tensor]:
    """Nucleus sampling: from the smallest set of top categories whose mass reaches ``top_p``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def top_k_sampling_from_probs(
    probs: Tensor,
    top_k: Tensor | int,
    indices: Tensor | None = None,
    deterministic: bool = True,
    generator: Any = None,
    check_nan: bool = False,
    seed: int | Tensor | None = None,
    offset: int | Tensor | None = None,
    return_valid: bool = False,
    **kwargs: Any,
) -> Tensor | tuple[Tensor, Tensor]:
    """Sampling among the ``top_k`` most probable categories of each row."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def min_p_sampling_from_probs(
    probs: Tensor,
    min_p: Tensor | float,
    indices: Tensor | None = None,
    deterministic: bool = True,
    generator: Any = None,
    check_nan: bool = False,
    seed: int | Tensor | None = None,
    offset: int | Tensor | None = None,
    return_valid: bool = False,
    **kwargs: Any,
) -> Tensor | tuple[Tensor, Tensor]:
    """Sampling among categories with ``p >= min_p * max(p)``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def top_k_top_p_sampling_from_logits(
    logits: Tensor,
    top_k: Tensor | int,
    top_p: Tensor | float,
    indices: Tensor | None = None,
    filter_apply_order: Literal["top_k_first", "joint"] = "top_k_first",
    deterministic: bool = True,
    generator: Any = None,
    check_nan: bool = False,
    seed: int | Tensor | None = None,
    offset: int | Tensor | None = None,
    top_k_max: int | None = None,
    **kwargs: Any,
) -> Tensor:
    """Top-k then top-p (or both jointly) sampling from ``logits``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def top_k_top_p_sampling_from_probs(
    probs: Tensor,
    top_k: Tensor | int,
    top_p: Tensor | float,
    indices: Tensor | None = None,
    filter_apply_order: Literal["top_k_first", "joint"] = "top_k_first",
    deterministic: bool = True,
    generator: Any = None,
    check_nan: bool = False,
    seed: int | Tensor | None = None,
    offset: int | Tensor | None = None,
    return_valid: bool = False,
    top_k_max: int | None = None,
    **kwargs: Any,
) -> Tensor | tuple[Tensor, Tensor]:
    """Top-k then top-p (or both jointly) sampling from ``probs``."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def top_p_renorm_probs(
    probs: Tensor,
    top_p: Tensor | float,
    is_deterministic: bool = False,
    **kwargs: Any,
) -> Tensor:
    """``probs`` with the categories outside the top-p nucleus zeroed, renormalised (float32)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def top_k_renorm_probs(
    probs: Tensor,
    top_k: Tensor | int,
    is_deterministic: bool = False,
    **kwargs: Any,
) -> Tensor:
    """``probs`` with all but the ``top_k`` largest zeroed, renormalised (input's dtype)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def top_k_mask_logits(
    logits: Tensor,
    top_k: Tensor | int,
    **kwargs: Any,
) -> Tensor:
    """``logits`` with all but the ``top_k`` largest set to ``-inf`` (input's dtype)."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def chain_speculative_sampling(
    draft_probs: Tensor,
    draft_token_ids: Tensor,
    target_probs: Tensor,
    maybe_output_accepted_token_num: Tensor | None = None,
    maybe_output_emitted_draft_token_num: Tensor | None = None,
    deterministic: bool = True,
    generator: Any = None,
    seed: int | Tensor | None = None,
    offset: int | Tensor | None = None,
    **kwargs: Any,
) -> tuple[Tensor, Tensor, Tensor]:
    """Speculative-decoding acceptance of a draft chain: ``(output_token_ids [b, n + 1]
    (-1 after the first rejection), accepted_token_num, emitted_draft_token_num)``; the
    two counters are added into the ``maybe_output_*`` tensors when given."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


def softmax(
    logits: Tensor,
    temperature: Tensor | float | None = None,
    enable_pdl: bool | None = None,
    **kwargs: Any,
) -> Tensor:
    """``softmax(logits / temperature)`` per row, float32."""
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), SPECS.values())


# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
