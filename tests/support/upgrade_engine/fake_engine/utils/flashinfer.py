"""Lazy per-symbol wrappers (the style of vllm/utils/flashinfer.py): nothing imports
FlashInfer until a wrapper is called."""

import contextlib
import functools
import importlib
import importlib.util


@functools.cache
def has_flashinfer() -> bool:
    return importlib.util.find_spec("flashinfer") is not None


def _missing(*_args, **_kwargs):
    raise RuntimeError("FlashInfer is not available")


def _get_submodule(module_name: str):
    try:
        return importlib.import_module(module_name)
    except ImportError:
        return None


def _lazy_import_wrapper(module_name: str, attr_name: str, fallback_fn=_missing):
    @functools.cache
    def _get_impl():
        if not has_flashinfer():
            return None
        mod = _get_submodule(module_name)
        return getattr(mod, attr_name, None) if mod else None

    def wrapper(*args, **kwargs):
        impl = _get_impl()
        if impl is None:
            return fallback_fn(*args, **kwargs)
        return impl(*args, **kwargs)

    return wrapper


flashinfer_cutlass_fused_moe = _lazy_import_wrapper("flashinfer.fused_moe", "cutlass_fused_moe")
flashinfer_trtllm_fp4_block_scale_moe = _lazy_import_wrapper(
    "flashinfer.fused_moe", "trtllm_fp4_block_scale_moe"
)
autotune = _lazy_import_wrapper(
    "flashinfer.autotuner", "autotune", fallback_fn=lambda *a, **k: contextlib.nullcontext()
)


@functools.cache
def has_flashinfer_cutlass_fused_moe() -> bool:
    """A ``hasattr`` probe of a lazily imported module."""
    if not has_flashinfer():
        return False
    mod = _get_submodule("flashinfer.fused_moe")
    return mod is not None and hasattr(mod, "cutlass_fused_moe")


def has_mla_decode_wrapper() -> bool:
    import flashinfer

    return hasattr(flashinfer, "BatchDecodeMlaWithPagedKVCacheWrapper")
