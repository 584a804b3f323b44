"""A stand-in for torch's CUDA generator on CPU-only hosts: the same 16-byte state
(uint64 seed, int64 offset; ``offset % 4 == 0``, as torch checks) and the same
reservation as ``CUDAGeneratorImpl::philox_cuda_state``."""

from __future__ import annotations

import torch

TORCH_DEFAULT_SEED = 67280421310721  # a new torch.Generator's seed (c10 default_rng_seed_val)
M64 = 2**64


class CudaGenerator:
    """The state protocol of torch's CUDA generator (``CUDAGeneratorImpl``)."""

    def __init__(self, seed: int = TORCH_DEFAULT_SEED, offset: int = 0) -> None:
        self.seed, self.offset = seed % M64, offset % M64

    def get_state(self) -> torch.Tensor:
        vals = [v - M64 if v >= 2**63 else v for v in (self.seed, self.offset)]
        return torch.tensor(vals, dtype=torch.int64).view(torch.uint8)

    def set_state(self, state: torch.Tensor) -> None:
        seed, offset = (v % M64 for v in state.view(torch.int64).tolist())
        assert offset % 4 == 0, "offset must be a multiple of 4"  # torch's check
        self.seed, self.offset = seed, offset

    def philox_cuda_state(self, increment: int) -> tuple[int, int]:
        """torch's reservation: the offset before, advanced by ceil4(increment)."""
        out = (self.seed, self.offset)
        self.offset = (self.offset + (increment + 3) // 4 * 4) % M64
        return out


def with_state(state: torch.Tensor) -> CudaGenerator:
    """A :class:`CudaGenerator` in ``state`` (what ``get_state()`` returns)."""
    g = CudaGenerator()
    g.set_state(state)
    return g
