"""Adapter tables for ``flashinfer.sampling`` (sampling, renormalisation, masking, softmax).

Read from the released sources (``_snapshots/sampling.*.json``, ``csrc/sampling.cu``,
``include/flashinfer/sampling.cuh``):

* 0.2.0.post1-0.2.2.post1 take caller-drawn ``uniform_samples`` (``[max_rounds, batch]``
  for the rejection samplers) and return ``(samples, success)``, where a row may fail
  after the last round.  0.2.3 draws from a Philox ``generator`` inside the kernel and
  always succeeds: fi_compat serves the samplers (and ``chain_speculative_sampling``)
  from 0.2.3 and refuses the older ones as below the floor.  ``top_p_renorm_probs``,
  ``top_k_renorm_probs`` and ``top_k_mask_logits`` keep one signature from 0.2.0.post1.
* ``indices`` (0.2.3) is read as ``int32_t*`` without a check up to 0.5.3 and the
  samples are always int32; 0.6.0 checks int32/int64 and returns samples of the indices'
  dtype (``out_dtype = indices.dtype``).  fi_compat hands 0.2.3-0.5.3 int32 indices and
  returns the samples in the indices' dtype there too.
* A row with no positive probability: 0.2.3-0.6.6 write ``last_valid_id``, a shared
  memory slot those releases never initialise (an arbitrary category: 7 of 8 for
  0.3.1 on the H200); 0.6.7 initialises it to ``-1``, writes ``0`` and reports the row
  in ``valid`` (``return_valid``, 0.6.7).  On 0.2.3-0.6.6 fi_compat computes ``valid``
  (any positive probability in the row it sampled) and writes ``0`` where it is False,
  so both outputs match 0.6.7+ (one reduction over the probabilities per call).
* ``seed`` / ``offset`` (0.6.0, ints; tensors from 0.6.4) seed the Philox stream the
  kernels draw from (``curand_init(seed, row, offset)``, the same since 0.2.3); 0.6.0+
  hand them to the kernel as given.  Before 0.6.0 the kernel's ``(seed, offset)``
  comes from ``generator``, and fi_compat passes a fresh CUDA generator whose state
  makes it ``(seed, offset)``, which depends on how the release reads a generator
  (``tools/seed_paths.py`` records it for every release):

  - 0.2.3-0.3.1.post1: the C++ extension calls torch's ``philox_cuda_state(n)``, which
    returns the generator's offset *before* reserving ``n``: state ``(seed, offset)``;
  - 0.4.0-0.5.3: Python's ``get_seed_and_offset(n, generator)`` (FI#1641) returns the
    offset *after* adding ``ceil4(n)``: state ``(seed, offset - ceil4(n))`` (mod 2**64,
    as the release's int64 arithmetic wraps), with ``n`` the release's own reservation
    (``batch``; ``batch * vocab`` from logits; ``batch * 32`` for top-k / top-p /
    top-k-top-p; ``batch * (n + 1)`` for ``chain_speculative_sampling``).

  A generator's offset is a multiple of 4 (torch checks it), so an offset that is not
  needs 0.6.0.  Tensor seeds (read on the device, CUDA-graph friendly) need 0.6.4; a
  tensor of one value per row is read as one per row from 0.7.2 (``seed_arr[bx *
  seed_stride]``), while 0.6.4-0.7.1 read element 0 for every row
  (``seed_arr[0]``): fi_compat refuses length > 1 there.  Both or neither: every
  release ignores a lone ``seed`` or ``offset``; fi_compat refuses it.
* ``generator=None`` (and no seed) draws from torch's default CUDA generator of the
  input's device, advancing it (0.6.0's ``get_default_generators``, FI#2295).
  0.4.0-0.5.3 build a fresh ``torch.Generator`` per call instead (FI#2284), so every
  call there draws the same numbers (seed 67280421310721, offset 0) and
  ``torch.manual_seed`` has no effect; 0.2.3-0.3.1.post1 use the *current* device's
  default generator.  fi_compat passes the input device's default generator to all
  releases before 0.6.0.  (With a generator, 0.4.0-0.7.2.post1 hand the kernel the
  offset after the reservation and 0.2.3-0.3.1.post1 and 0.7.4 the one before it: the
  same generator state gives a different stream there; fi_compat leaves that as the
  release does.)
* ``top_k_renorm_probs`` / ``top_k_mask_logits`` compute in the input's dtype from 0.6.0
  (float32 before, returned as float32): fi_compat returns the input's dtype everywhere.
* ``is_deterministic`` (``top_p_renorm_probs`` 0.6.7, ``top_k_renorm_probs`` 0.7.1)
  selects reproducible accumulation in the multi-CTA kernels those releases brought;
  ``top_k_max`` (0.7.4) bounds per-row ``top_k`` for a faster path (a hint).
* ``chain_speculative_sampling``: ``maybe_output_emitted_token_num`` was renamed
  ``maybe_output_emitted_draft_token_num`` in 0.2.5 (the kernel writes the same count).
"""

from __future__ import annotations

from .._core import Emulation, EntryPoint, Normalizer, Param, ResultHook
from .._core.adapter import short
from .._core.contract import Said, refusal
from ..errors import InvalidArgumentError, UnsupportedParameterError
from ..registry import at_least
from . import _elementwise as ew

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from .._core import Adapter
    from ..registry import Placement

FLOOR = "0.2.3"  # the first release that draws its own random numbers (see above)
_FLOOR_WHY = (
    "0.2.0.post1-0.2.2.post1 take caller-drawn uniform_samples and return "
    "(samples, success); no row here describes that signature"
)
_FLOAT: frozenset[Any] = frozenset()
_INT: frozenset[Any] = frozenset()
_SEED: frozenset[Any] = frozenset()


def _prepare() -> None:
    global _FLOAT, _INT, _SEED
    import torch

    ew.prepare()
    _FLOAT = frozenset((torch.float32, torch.float16, torch.bfloat16))
    _INT = frozenset((torch.int32, torch.int64))
    _SEED = frozenset((torch.int64, torch.uint64))


def _where(name: str) -> str:
    return f"fi_compat.sampling.{name}"


def _batch(x: Any, indices: Any) -> int:
    return int(indices.shape[0] if indices is not None else x.shape[0])


# -- metadata checks ------------------------------------------------------------------


def _validator(name: str, first: str, per_row: tuple[str, ...], indices: bool) -> Any:
    """``first`` 2-D float32/fp16/bf16 ``[rows, vocab]``; ``indices`` 1-D int32/int64;
    each per-row threshold a scalar or a 1-D tensor of one entry per row; one device."""
    where = _where(name)

    def validate(x: Any, *rest: Any) -> int:
        idx = rest[0] if indices else None
        thresholds = rest[3:] if indices else rest
        if indices and (rest[1] is not None or rest[2] is not None):
            check_seed(where, first, x, _batch(x, idx), rest[1], rest[2])
        try:
            d = x.get_device()
            ok = x.dim() == 2 and x.dtype in _FLOAT
            if idx is not None:
                ok = ok and idx.dim() == 1 and idx.dtype in _INT and idx.get_device() == d
            for n, t in zip(per_row, thresholds, strict=True):
                if type(t) is int or (type(t) is float and n != "top_k"):
                    continue
                ok = ok and t.dim() == 1 and t.get_device() == d
                ok = ok and t.shape[0] in (x.shape[0], _batch(x, idx))
        except (AttributeError, TypeError, IndexError):
            ok = False
        if not ok:
            _diagnose(where, first, per_row, x, idx, thresholds)
        return d  # type: ignore[no-any-return]

    return validate


def _diagnose(
    where: str, first: str, per_row: tuple[str, ...], x: Any, idx: Any, thresholds: Any
) -> None:
    import torch

    ew.tensor(where, first, x)
    if x.dim() != 2 or x.dtype not in _FLOAT:
        raise InvalidArgumentError(
            f"{where}: {first} must be 2-D [batch, vocab] float32, float16 or bfloat16, got "
            f"{tuple(x.shape)} {x.dtype}"
        )
    if idx is not None:
        ew.tensor(where, "indices", idx, optional=True)
        if idx.dim() != 1 or idx.dtype not in _INT:
            raise InvalidArgumentError(
                f"{where}: indices must be a 1-D int32 or int64 tensor (the {first} row of "
                f"each output row), got {tuple(idx.shape)} {idx.dtype}"
            )
    rows = {x.shape[0], _batch(x, idx)}
    for n, t in zip(per_row, thresholds, strict=True):
        if type(t) is int or (type(t) is float and n != "top_k"):
            continue
        if not isinstance(t, torch.Tensor):
            number = "an int" if n == "top_k" else "a float"
            raise refusal(
                f"{where}: {n} must be {number} or a 1-D tensor of one value per row, got "
                f"{short(t)}",
                f"{n}.kind",
            )
        if t.dim() != 1 or t.shape[0] not in rows:
            # FlashInfer's own words (SAID) name these checks "rank" and "rows"
            raise refusal(
                f"{where}: {n} must be a number or a 1-D tensor of one value per row "
                f"({' or '.join(map(str, sorted(rows)))}), got {tuple(t.shape)}",
                f"{n}.rank" if t.dim() != 1 else f"{n}.rows",
                ndim=t.dim(),
                shape=t.shape,
                length=t.shape[0] if t.dim() else None,
                rows=x.shape[0],
            )
    others = {"indices": idx} | {n: t for n, t in zip(per_row, thresholds, strict=True)}
    ew.check_device(
        where, first, x, {n: t for n, t in others.items() if isinstance(t, torch.Tensor)}
    )
    raise InvalidArgumentError(f"{where}: invalid arguments")  # pragma: no cover


_U64 = 2**64


def check_seed(where: str, first: str, x: Any, batch: int, seed: Any, offset: Any) -> None:
    """``seed`` / ``offset``: both or neither; ints in ``[0, 2**64)`` or 1-D int64/uint64
    tensors of length 1 or ``batch`` on ``x``'s device (0.6.4's rules, every release).
    The common calls pass in the first lines (each attribute read once); anything else
    is diagnosed by :func:`_seed_problem`."""
    if type(seed) is int and type(offset) is int:
        if 0 <= seed < _U64 and 0 <= offset < _U64:
            return
    elif seed is not None and offset is not None:
        try:
            d, sd, od = x.get_device(), seed.dtype, offset.dtype
            if (
                sd in _SEED
                and od in _SEED
                and seed.dim() == 1
                and offset.dim() == 1
                and seed.shape[0] in (1, batch)
                and offset.shape[0] in (1, batch)
                and seed.get_device() == d
                and offset.get_device() == d
            ):
                return
        except AttributeError:
            pass
    _seed_problem(where, first, x, batch, seed, offset)


def _seed_problem(where: str, first: str, x: Any, batch: int, seed: Any, offset: Any) -> None:
    """The slow path of :func:`check_seed`: find the problem and raise its error."""
    import torch

    if (seed is None) != (offset is None):
        raise InvalidArgumentError(
            f"{where}: seed and offset go together (every release ignores one without "
            f"the other and draws from the generator); got seed={short(seed)}, "
            f"offset={short(offset)}"
        )
    if isinstance(seed, torch.Tensor) != isinstance(offset, torch.Tensor):
        raise InvalidArgumentError(f"{where}: seed and offset must both be ints or both be tensors")
    if not isinstance(seed, torch.Tensor):
        for n, v in (("seed", seed), ("offset", offset)):
            if type(v) is bool or not isinstance(v, int) or not 0 <= v < 2**64:
                raise InvalidArgumentError(f"{where}: {n} must be an int in [0, 2**64), got {v!r}")
        return
    for n, t in (("seed", seed), ("offset", offset)):
        if t.dtype not in _SEED or t.dim() != 1 or t.shape[0] not in (1, batch):
            raise InvalidArgumentError(
                f"{where}: a {n} tensor must be 1-D int64 or uint64 of length 1 or {batch} "
                f"(the batch), got {tuple(t.shape)} {t.dtype}"
            )
        if t.device != x.device:
            raise InvalidArgumentError(
                f"{where}: the {n} tensor must be on {first}'s device ({x.device}), got {t.device}"
            )


# -- FlashInfer's own words for the per-row thresholds --------------------------------


def _rank_words(python: bool) -> Callable[[Mapping[str, Any]], str]:
    """``_check_tensor_param`` (0.4.0-0.5.3 sampling.py, FI#1652) / ``check_tensor_param``
    (0.6.0+ csrc/sampling_utils.h, FI#2160) on a threshold tensor that is not 1-D; the
    Python form adds the shape."""

    def text(f: Mapping[str, Any]) -> str:
        tail = f" with shape {f['shape']}." if python else "."
        if f["ndim"] == 0:
            return (
                "Expected a 1D tensor of shape (batch_size,) or scalar for the sampling "
                f"parameter, but got a 0-dimensional tensor{tail}"
            )
        return (
            "Expected a 1D tensor or scalar for the sampling parameter, but got a "
            f"{f['ndim']}D tensor{tail}"
        )

    return text


_ROWS_WORDS = (
    "Sampling parameter tensor batch size mismatch: expected length {rows} to match the "
    "reference tensor batch size, but got length {length}"
)


def said(per_row: tuple[str, ...]) -> list[Said]:
    """FlashInfer's messages for a threshold tensor of the wrong rank or length: both
    refuse it where fi_compat does (a length is refused by FlashInfer unless it equals
    the first tensor's rows; fi_compat also accepts the indices' length)."""
    py, cpp = "0.4.0 sampling.py _check_tensor_param", "0.6.0 csrc/sampling_utils.h"
    out = []
    for n in per_row:
        out += [
            Said(f"{n}.rank", _rank_words(True), since="0.4.0", until="0.6.0", ref=py),
            Said(f"{n}.rank", _rank_words(False), since="0.6.0", ref=cpp),
            Said(
                f"{n}.rows",
                _ROWS_WORDS + " with shape {shape}.",
                since="0.4.0",
                until="0.6.0",
                ref=py,
            ),
            Said(f"{n}.rows", _ROWS_WORDS + ".", since="0.6.0", ref=cpp),
        ]
    return out


# -- seed / offset ----------------------------------------------------------------------


class SeedOffset(Emulation):
    """``seed`` / ``offset``: native from 0.6.0 (ints) and 0.6.4 (tensors); before
    0.6.0 a fresh CUDA generator whose state the release turns into ``(seed, offset)``
    (see the module docstring; ``reserve(kw)``: the release's reservation ``n`` for
    0.4.0-0.5.3).  Seed tensors of one value per row are refused on 0.6.4-0.7.1, which
    read element 0 for every row.  Their checks are part of the metadata checks
    (:func:`check_seed`), on every release."""

    name = "seed_offset"
    reads = ("offset", "seed")
    params = ("seed", "offset")
    boundaries = ("0.4.0", "0.6.0", "0.6.4", "0.7.2")

    def __init__(self, first: str, reserve: Callable[[dict[str, Any]], int]) -> None:
        self.first = first
        self.reserve = reserve

    def may_apply(self, p: Placement) -> bool:
        return not at_least(p, "0.7.2")

    def needed(self, adapter: Adapter, kw: dict[str, Any]) -> bool:
        seed, offset = kw["seed"], kw["offset"]
        if seed is None and offset is None:
            return False
        pl = adapter.placement
        assert pl is not None
        if at_least(pl, "0.7.2"):
            return False
        if type(seed) is int and type(offset) is int:
            return not at_least(pl, "0.6.0")
        if not at_least(pl, "0.6.4"):
            return True  # a tensor: refused in before()
        # 0.6.4-0.7.1 read seed_arr[0] / offset_arr[0] for every row
        return bool(seed.shape[0] != 1 or offset.shape[0] != 1)

    def before(self, adapter: Adapter, kw: dict[str, Any]) -> object:
        import torch

        seed, offset = kw["seed"], kw["offset"]
        p = adapter.entry.params["seed"]
        if isinstance(seed, torch.Tensor):
            pl = adapter.placement
            assert pl is not None
            if not at_least(pl, "0.6.4"):
                raise adapter.unsupported(p, seed, "0.6.4", value=True)
            rows = max(seed.shape[0], offset.shape[0])
            raise UnsupportedParameterError(
                f"{adapter.entry.dotted}: seed/offset tensors of one value per row "
                f"({rows} rows) need flashinfer-python>=0.7.2; installed: "
                f"{adapter.release}, whose kernels read element 0 of each for every row "
                f"(sampling.cuh seed_arr[0]), so the rows would not get their own "
                f"seeds. Fix: pip install 'flashinfer-python>=0.7.2', or pass length-1 "
                f"tensors (one seed and offset for the batch).",
                parameter="seed",
                installed=str(adapter.release),
                minimum="0.7.2",
            )
        if offset % 4:
            # a CUDA generator's Philox offset is a multiple of 4 (torch checks it)
            raise adapter.unsupported(adapter.entry.params["offset"], offset, "0.6.0", True)
        pl = adapter.placement
        assert pl is not None
        if at_least(pl, "0.4.0"):
            # 0.4.0-0.5.3 get_seed_and_offset: the kernel gets state + ceil4(n)
            offset = (offset - (self.reserve(kw) + 3) // 4 * 4) % 2**64
        kw["generator"] = philox_generator(kw[self.first].device, seed, offset)
        return None

    def describe(self, p: Placement) -> str | None:
        if not at_least(p, "0.4.0"):
            return "`seed`/`offset` (ints) through a CUDA generator in that Philox state"
        if not at_least(p, "0.6.0"):
            return (
                "`seed`/`offset` (ints) through a CUDA generator at `offset` minus the "
                "release's reservation (its `get_seed_and_offset` adds it back)"
            )
        if not at_least(p, "0.6.4"):
            return "`seed`/`offset` tensors need 0.6.4 (ints native)"
        if not at_least(p, "0.7.2"):
            return "`seed`/`offset` tensors of one value per row need 0.7.2"
        return None


def philox_state(seed: int, offset: int) -> Any:
    """The 16-byte state of torch's CUDA generator for Philox ``(seed, offset)``: both
    as int64 (two's complement above 2**63), as ``get_state()`` returns it."""
    import torch

    state = [v - 2**64 if v >= 2**63 else v for v in (seed, offset)]
    return torch.tensor(state, dtype=torch.int64).view(torch.uint8)


def philox_generator(device: Any, seed: int, offset: int) -> Any:
    """A CUDA generator in Philox state ``(seed, offset)`` (:func:`philox_state`)."""
    import torch

    gen = torch.Generator(device=device)
    gen.set_state(philox_state(seed, offset))
    return gen


def default_generator(index: int) -> Any:
    """torch's default CUDA generator of device ``index`` (``None`` off CUDA, where no
    release runs; only fi_compat's own tests pass host tensors)."""
    if index < 0:
        return None
    import torch

    return torch.cuda.default_generators[index]


class DefaultGenerator(Normalizer):
    """``generator=None`` before 0.6.0: torch's default CUDA generator of the input's
    device, as 0.6.0+ take it (``get_default_generators(device)``, FI#2295).
    0.4.0-0.5.3 build a fresh ``torch.Generator`` per call (FI#1641; FI#2284: every call
    draws the same numbers); 0.2.3-0.3.1.post1 take the current device's."""

    out = ("generator",)
    boundaries = ("0.6.0",)

    def __init__(self, first: str) -> None:
        self.args = (first, "generator")

    def build(self, adapter: Adapter) -> Callable[..., tuple[Any, ...]] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.6.0"):
            return None

        def fill(x: Any, generator: Any) -> tuple[Any]:
            if generator is None:
                return (default_generator(x.get_device()),)
            return (generator,)

        return fill

    def describe(self, p: Placement) -> str | None:
        if at_least(p, "0.6.0"):
            return None
        return "`generator=None`: the default CUDA generator of the input's device"


# -- results ------------------------------------------------------------------------------


class Samples(ResultHook):
    """The samples as 0.6.7+ return them: ``0`` for a row with no positive probability,
    ``(samples, valid)`` with ``return_valid``, the indices' dtype."""

    boundaries = ("0.6.0", "0.6.7")

    def __init__(self, first: str, valid: bool, degenerate: bool = True) -> None:
        self.valid = valid  # the function has return_valid (0.6.7)
        self.degenerate = degenerate  # probabilities in: a row can have no mass
        self.args = (first, "indices", "return_valid") if valid else (first, "indices")
        self.serves = ("return_valid",) if valid else ()

    def build(self, adapter: Adapter) -> Callable[..., Any] | None:
        pl = adapter.placement
        if pl is None:
            return None
        dtype = not at_least(pl, "0.6.0")
        fix = self.degenerate and not at_least(pl, "0.6.7")
        if not (dtype or fix):
            return None
        import torch

        int32 = torch.int32

        def samples(out: Any, x: Any, indices: Any, return_valid: bool = False) -> Any:
            valid = None
            if fix:
                valid = (x > 0).any(-1)  # NaN > 0 is False, as in 0.6.7's predicate
                if indices is not None:
                    valid = valid[indices]
                out.masked_fill_(~valid, 0)
            if dtype and indices is not None and indices.dtype is not int32:
                out = out.to(indices.dtype)
            return (out, valid) if return_valid else out

        return samples

    def describe(self, p: Placement) -> str | None:
        parts = []
        if self.degenerate and not at_least(p, "0.6.7"):
            parts.append("rows without a positive probability give 0 (not an arbitrary category)")
            if self.valid:
                parts.append("`return_valid` from those rows")
        if not at_least(p, "0.6.0"):
            parts.append("samples in the indices' dtype (int32 before 0.6.0)")
        return "; ".join(parts) or None


class InputDtype(ResultHook):
    """The result in the input's dtype: 0.2.0.post1-0.5.3 compute and return float32."""

    boundaries = ("0.6.0",)

    def __init__(self, first: str) -> None:
        self.args = (first,)

    def build(self, adapter: Adapter) -> Callable[..., Any] | None:
        pl = adapter.placement
        if pl is None or at_least(pl, "0.6.0"):
            return None

        def same_dtype(out: Any, x: Any) -> Any:
            return out if out.dtype is x.dtype else out.to(x.dtype)

        return same_dtype

    def describe(self, p: Placement) -> str | None:
        if at_least(p, "0.6.0"):
            return None
        return "computed in float32 (as the release does), returned in the input's dtype"


# -- tables -----------------------------------------------------------------------------

_IDX = (("0.2.3", "int32"), ("0.6.0", None))
_IDX_REF = "0.2.3-0.5.3 sampling.cu static_cast<int*>(maybe_indices); 0.6.0 int32/int64"


def _common() -> list[Param]:
    return [
        Param("check_nan", note="a host-side NaN scan before the launch"),
        Param(
            "seed",
            emulation="seed_offset",
            note="Philox seed",
            ref="0.6.0 seed/offset ints; 0.6.4 tensors",
        ),
        Param("offset", emulation="seed_offset", note="Philox offset", ref="0.6.0; 0.6.4"),
    ]


def _rows(kw: dict[str, Any], first: str) -> int:
    return _batch(kw[first], kw["indices"])


# get_seed_and_offset(n, generator) of 0.4.0-0.5.3 sampling.py, per kernel: the batch
# (indices' length, else the rows); batch * vocab for the Gumbel-max draw from logits;
# batch * 32 for the rejection samplers (top-p, top-k, top-k-top-p; the logits form
# reaches top_p / top_k_top_p_sampling_from_probs); draft_probs' b * (n + 1) for chain
RESERVE: dict[str, Callable[[dict[str, Any]], int]] = {
    "sampling_from_probs": lambda kw: _rows(kw, "probs"),
    "sampling_from_logits": lambda kw: _rows(kw, "logits") * kw["logits"].shape[1],
    "top_p_sampling_from_probs": lambda kw: _rows(kw, "probs") * 32,
    "top_k_sampling_from_probs": lambda kw: _rows(kw, "probs") * 32,
    "min_p_sampling_from_probs": lambda kw: _rows(kw, "probs"),
    "top_k_top_p_sampling_from_logits": lambda kw: _rows(kw, "logits") * 32,
    "top_k_top_p_sampling_from_probs": lambda kw: _rows(kw, "probs") * 32,
    "chain_speculative_sampling": lambda kw: (
        kw["draft_probs"].shape[0] * (kw["draft_probs"].shape[1] + 1)
    ),
}


def _sampler(
    name: str,
    first: str = "probs",
    per_row: tuple[str, ...] = (),
    valid: bool = True,
    order: bool = False,
    top_k_max: bool = False,
    degenerate: bool = True,
    floor: bool = True,
) -> EntryPoint:
    """A sampler (``floor``: it exists before 0.2.3, in the uniform_samples form)."""
    params = [Param(first), *(Param(n) for n in per_row)]
    params.append(
        Param(
            "indices",
            dtypes=_IDX,
            optional=True,
            note="index tensor: int32 before 0.6.0",
            ref=_IDX_REF,
        )
    )
    if order:
        params.append(Param("filter_apply_order"))
    params += _common()
    if valid:
        params.append(Param("return_valid", note="per-row validity mask", ref="0.6.7"))
    if top_k_max:
        params.append(
            Param("top_k_max", hint=True, note="upper bound of per-row top_k", ref="0.7.4")
        )
    return EntryPoint(
        facade="fi_compat.sampling",
        name=name,
        module="flashinfer.sampling",
        params=params,
        validate=_validator(name, first, per_row, indices=True),
        validate_args=(first, "indices", "seed", "offset", *per_row),
        prepare=_prepare,
        normalizers=(DefaultGenerator(first),),
        emulations=(SeedOffset(first, RESERVE[name]),),
        results=(Samples(first, valid, degenerate),),
        devices=ew.any_cuda_device,
        said=said(per_row),
        feature="sampling",
        floor=FLOOR if floor else None,
        matrix_note=f"served from {FLOOR}: {_FLOOR_WHY}" if floor else "",
    )


def _renorm(name: str, first: str, per_row: str, det: str | None, dtype_fix: bool) -> EntryPoint:
    params = [Param(first), Param(per_row)]
    if det is not None:
        params.append(Param("is_deterministic", note="reproducible accumulation", ref=det))
    return EntryPoint(
        facade="fi_compat.sampling",
        name=name,
        module="flashinfer.sampling",
        params=params,
        validate=_validator(name, first, (per_row,), indices=False),
        validate_args=(first, per_row),
        prepare=_prepare,
        results=(InputDtype(first),) if dtype_fix else (),
        devices=ew.any_cuda_device,
        said=said((per_row,)),
        feature="sampling",
    )


def _chain() -> EntryPoint:
    name = "chain_speculative_sampling"
    return EntryPoint(
        facade="fi_compat.sampling",
        name=name,
        module="flashinfer.sampling",
        params=(
            Param(
                "maybe_output_emitted_draft_token_num",
                spelled=(("0.2.5", "maybe_output_emitted_token_num", None),),
                ref="0.2.5 renamed (the kernel writes the same count)",
            ),
            Param("seed", emulation="seed_offset", note="Philox seed", ref="0.6.0; 0.6.4"),
            Param("offset", emulation="seed_offset", note="Philox offset", ref="0.6.0; 0.6.4"),
        ),
        validate=_validate_chain,
        validate_args=("draft_probs", "draft_token_ids", "target_probs", "seed", "offset"),
        prepare=_prepare,
        normalizers=(DefaultGenerator("draft_probs"),),
        emulations=(SeedOffset("draft_probs", RESERVE[name]),),
        devices=ew.any_cuda_device,
        feature="sampling",
        floor=FLOOR,
        matrix_note=f"served from {FLOOR}: {_FLOOR_WHY}",
    )


def _validate_chain(draft: Any, ids: Any, target: Any, seed: Any, offset: Any) -> int:
    """``draft_probs [b, n, vocab]``, ``draft_token_ids [b, n]`` integer,
    ``target_probs [b, n + 1, vocab]``, one device."""
    try:
        d = draft.get_device()
        b, n, v = draft.shape
        ok = (
            draft.dtype in _FLOAT
            and target.dtype in _FLOAT
            and tuple(ids.shape) == (b, n)
            and ids.dtype in _INT
            and tuple(target.shape) == (b, n + 1, v)
            and ids.get_device() == d
            and target.get_device() == d
        )
    except (AttributeError, TypeError, ValueError):
        ok = False
    if not ok:
        where = _where("chain_speculative_sampling")
        for n_, t in (("draft_probs", draft), ("draft_token_ids", ids), ("target_probs", target)):
            ew.tensor(where, n_, t)
        raise InvalidArgumentError(
            f"{where}: expected draft_probs [batch, n, vocab] and target_probs "
            f"[batch, n + 1, vocab] (float32/fp16/bf16), draft_token_ids [batch, n] "
            f"int32/int64, on one device; got draft_probs {tuple(draft.shape)} {draft.dtype}, "
            f"draft_token_ids {tuple(ids.shape)} {ids.dtype} on {ids.device}, target_probs "
            f"{tuple(target.shape)} {target.dtype} on {target.device} (draft on {draft.device})"
        )
    if seed is not None or offset is not None:
        where = _where("chain_speculative_sampling")
        check_seed(where, "draft_probs", draft, draft.shape[0], seed, offset)
    return d  # type: ignore[no-any-return]


def _validate_softmax(logits: Any, temperature: Any) -> int:
    """``logits`` 2-D float; ``temperature`` a number, None, or a 1-D float tensor of
    one value per row on the same device (0.7.1 checks it, older releases read it)."""
    try:
        d = logits.get_device()
        ok = logits.dim() == 2 and logits.dtype in _FLOAT
        scalar = type(temperature) is float or type(temperature) is int
        if temperature is not None and not scalar:
            ok = (
                ok
                and temperature.dim() == 1
                and temperature.shape[0] == logits.shape[0]
                and temperature.dtype.is_floating_point
                and temperature.get_device() == d
            )
    except (AttributeError, TypeError):
        ok = False
    if not ok:
        where = _where("softmax")
        ew.tensor(where, "logits", logits)
        if logits.dim() != 2 or logits.dtype not in _FLOAT:
            raise InvalidArgumentError(
                f"{where}: logits must be 2-D [batch, vocab] float32, float16 or bfloat16, got "
                f"{tuple(logits.shape)} {logits.dtype}"
            )
        got = short(temperature) + (
            f" on {temperature.device}" if hasattr(temperature, "device") else ""
        )
        raise InvalidArgumentError(
            f"{where}: temperature must be None, a number, or a 1-D floating-point tensor of "
            f"one value per row ({logits.shape[0]}) on {logits.device}; got {got}"
        )
    return d  # type: ignore[no-any-return]


def _softmax() -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.sampling",
        name="softmax",
        module="flashinfer.sampling",
        params=(Param("logits"), Param("temperature"), Param("enable_pdl")),
        validate=_validate_softmax,
        validate_args=("logits", "temperature"),
        prepare=_prepare,
        devices=ew.any_cuda_device,
        feature="sampling",
    )


SPECS: dict[str, EntryPoint] = {
    "sampling_from_probs": _sampler("sampling_from_probs"),
    "sampling_from_logits": _sampler(
        "sampling_from_logits", "logits", valid=False, degenerate=False, floor=False
    ),
    "top_p_sampling_from_probs": _sampler("top_p_sampling_from_probs", per_row=("top_p",)),
    "top_k_sampling_from_probs": _sampler("top_k_sampling_from_probs", per_row=("top_k",)),
    "min_p_sampling_from_probs": _sampler("min_p_sampling_from_probs", per_row=("min_p",)),
    "top_k_top_p_sampling_from_logits": _sampler(
        "top_k_top_p_sampling_from_logits",
        "logits",
        ("top_k", "top_p"),
        valid=False,
        order=True,
        top_k_max=True,
        degenerate=False,  # softmax first: a row always has mass
    ),
    "top_k_top_p_sampling_from_probs": _sampler(
        "top_k_top_p_sampling_from_probs", per_row=("top_k", "top_p"), order=True, top_k_max=True
    ),
    "top_p_renorm_probs": _renorm("top_p_renorm_probs", "probs", "top_p", "0.6.7", False),
    "top_k_renorm_probs": _renorm("top_k_renorm_probs", "probs", "top_k", "0.7.1", True),
    "top_k_mask_logits": _renorm("top_k_mask_logits", "logits", "top_k", None, True),
    "chain_speculative_sampling": _chain(),
    "softmax": _softmax(),
}
ENTRIES = list(SPECS.values())
