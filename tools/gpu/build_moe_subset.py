#!/usr/bin/env python3
"""Restricted build of FlashInfer's ``fused_moe_90`` (SM90 CUTLASS MoE): bf16 x bf16 and
fp8 (e4m3) x fp8 only, for the GPU tests of ``fi_compat.fused_moe.cutlass_fused_moe``
(tests/gpu/moe-restricted-build.md has the reading of 0.6.7 / 0.7.4 behind it).

    python tools/gpu/build_moe_subset.py [--no-aot]   # on the GPU machine, FlashInfer importable

FlashInfer's own generator and JitSpec, with only the source list filtered (181 -> 50
compile steps on 0.6.7, 248 -> 51 on 0.7.4); the library is installed into FlashInfer's
AOT slot (``<package>/data/aot/fused_moe_90/``), which both releases load before any JIT.
Any other dtype combination then aborts the process (an undefined symbol, bound lazily):
use this build for bf16 / fp8 tests only.  Measured on an H200 (16 cores), 2026-12-04:
0.6.7 in 642 s (MAX_JOBS=14), 0.7.4 in 1076 s (MAX_JOBS=8, alongside the 0.6.7 build);
tests/gpu/README.md has the results."""

import dataclasses
import os
import shutil
import sys
from pathlib import Path

from flashinfer.jit import env as jit_env
from flashinfer.jit.fused_moe import gen_cutlass_fused_moe_sm90_module

KEEP_MOE_GEMM_RUNNERS = {"moe_gemm_kernels_bf16_bf16.cu", "moe_gemm_kernels_fp8_fp8.cu"}


def keep(src: Path) -> bool:
    name, p = src.name, src.as_posix()
    if name.endswith(".generated.cu"):
        text = src.read_text()
        if "/gemm_grouped/80/" in p:
            # SM80 fused-gated fallback launchers: MoeGemmRunner<bf16> references the bf16 ones
            return "cutlass::bfloat16_t" in text
        if "/gemm_grouped/90/" in p and "_Mixed_" not in name:
            # the SM90 TMA warp-specialised grouped GEMM instantiations
            return (
                "__nv_bfloat16, __nv_bfloat16, __nv_bfloat16," in text
                or "__nv_fp8_e4m3, __nv_fp8_e4m3," in text
            )
        return False  # gemm/90/* (fpA_intB, unreferenced) and *_Mixed_* (int4 / fp4 weights)
    if name.startswith("moe_gemm_kernels_"):
        return name in KEEP_MOE_GEMM_RUNNERS
    return True  # binding, instantiation, input, fp8_blockscale, deepgemm, common utils


def main(install_as_aot: bool = True) -> object:
    full = gen_cutlass_fused_moe_sm90_module()  # runs FlashInfer's generator; compiles nothing
    assert full.name == "fused_moe_90", full.name
    sources = [s for s in full.sources if keep(s)]
    spec = dataclasses.replace(
        full,
        sources=sources,
        # the undefined MoeGemmRunner<other dtypes> symbols are PLT-only: keep them lazily
        # bound also where the toolchain defaults to -z now (e.g. Ubuntu's gcc)
        extra_ldflags=[*(full.extra_ldflags or []), "-Wl,-z,lazy"],
    )
    print(f"{full.name}: {len(full.sources)} -> {len(sources)} compile steps", flush=True)
    spec.write_ninja()  # overwrite any full build.ninja with the subset
    if os.environ.get("RECIPE_NO_BUILD"):
        return spec
    spec.build_and_load()  # ninja on the subset, then tvm_ffi.load_module (RTLD_LAZY)
    if install_as_aot:  # FlashInfer loads <pkg>/data/aot/<name>/<name>.so before any JIT
        dst = jit_env.FLASHINFER_AOT_DIR / full.name / f"{full.name}.so"
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(spec.jit_library_path, dst)
        print("installed", dst)
    return spec


if __name__ == "__main__":
    main(install_as_aot="--no-aot" not in sys.argv)
