"""The one registry of facade modules: it drives ``fi_compat.__all__``, ``info``,
``doctor --probe``, the generated docs and the contract tests.

Each entry maps a facade module of fi_compat to the FlashInfer module it mirrors and the
adapter module holding its tables (``ENTRIES``: the entry points in docs order;
``REEXPORTS``, where it has any: FlashInfer objects handed out as they are).
Adding a facade module is one row here.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._core import EntryPoint
    from ._core.reexport import Reexport

# fi_compat module -> (FlashInfer module it mirrors, adapter module)
FACADES: dict[str, tuple[str, str]] = {
    "gdn_prefill": ("flashinfer.gdn_prefill", "fi_compat._adapters.gdn_prefill"),
    "fused_moe": ("flashinfer.fused_moe", "fi_compat._adapters.fused_moe"),
    "norm": ("flashinfer.norm", "fi_compat._adapters.norm"),
    "activation": ("flashinfer.activation", "fi_compat._adapters.activation"),
    "rope": ("flashinfer.rope", "fi_compat._adapters.rope"),
    "sampling": ("flashinfer.sampling", "fi_compat._adapters.sampling"),
    "gdn_decode": ("flashinfer.gdn_decode", "fi_compat._adapters.gdn_decode"),
    "gdn_kernels": ("flashinfer.gdn_kernels", "fi_compat._adapters.gdn_kernels"),
    "mamba": ("flashinfer.mamba", "fi_compat._adapters.mamba"),
    "mhc": ("flashinfer.mhc", "fi_compat._adapters.mhc"),
    "kda_decode": ("flashinfer.kda_decode", "fi_compat._adapters.kda_decode"),
    "quantization": ("flashinfer", "fi_compat._adapters.quantization"),
    "gemm": ("flashinfer", "fi_compat._adapters.gemm"),
    "decode": ("flashinfer.decode", "fi_compat._adapters.decode"),
    "prefill": ("flashinfer.prefill", "fi_compat._adapters.prefill"),
    "cascade": ("flashinfer.cascade", "fi_compat._adapters.cascade"),
    "mla": ("flashinfer.mla", "fi_compat._adapters.mla"),
    "page": ("flashinfer.page", "fi_compat._adapters.page"),
    "autotuner": ("flashinfer.autotuner", "fi_compat._adapters.autotuner"),
    "cute_dsl": ("flashinfer.cute_dsl", "fi_compat._adapters.cute_dsl"),
    "comm": ("flashinfer.comm", "fi_compat._adapters.comm"),
    "topk": ("flashinfer.topk", "fi_compat._adapters.topk"),
    "concat_ops": ("flashinfer.concat_ops", "fi_compat._adapters.concat_ops"),
    "utils": ("flashinfer.utils", "fi_compat._adapters.utils"),
}


def entry_points(module: str | None = None) -> list[EntryPoint]:
    """Every entry point's table (of one facade module), in registry order."""
    import importlib

    out: list[EntryPoint] = []
    for name, (_fi, adapters) in FACADES.items():
        if module is None or module == name:
            importlib.import_module(f"fi_compat.{name}")  # binds the stubs (parameter lists)
            out += importlib.import_module(adapters).ENTRIES
    return out


def reexports(module: str | None = None) -> list[Reexport]:
    """Every re-exported FlashInfer object's row (of one facade module), in registry order."""
    import importlib

    out: list[Reexport] = []
    for name, (_fi, adapters) in FACADES.items():
        if module is None or module == name:
            out += getattr(importlib.import_module(adapters), "ALL_REEXPORTS", [])
    return out


def flashinfer_modules() -> list[str]:
    """The FlashInfer modules the facades mirror (what ``doctor --probe`` imports)."""
    return [fi for fi, _ in FACADES.values()]
