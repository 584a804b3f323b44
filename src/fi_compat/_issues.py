"""The known-issues table: FlashInfer release range x architecture x feature -> status.

Data only, reviewed like code.  One row per incident; every support query, the
``info``/``doctor`` commands and the facades' support matrix read this table (there is
no second one).  Fields:

``id``        stable identifier (used in ``FI_COMPAT_IGNORE_ISSUES``, tests, docs); a
              confirmed ``hang`` row refuses its feature's facades on that GPU before the
              launch unless ``FI_COMPAT_IGNORE_ISSUES`` (comma-separated ids) names it
``releases``  ``(first affected, first fixed)``: known releases; ``None`` = open-ended
``arch``      ``"10.3"`` exact capability, ``"family:12"`` every 12.x, ``"any"``
``feature``   dotted feature name; a query for ``"moe"`` also matches ``"moe.cutlass"``
``kind``      broken | hang | missing-kernel | accuracy | performance | import | memory
``summary``   what happens
``ref``       upstream reference (FI# FlashInfer, V# vLLM, S# SGLang PRs/issues)
``workaround`` the fix or workaround
``confirmed`` False where the report is unconfirmed (reported as a warning, not an error)
``when``      optional {query detail: value}: the row applies only to calls with those
              details (e.g. ``{"quantization": "bf16", "activation": "Relu2"}``); a query
              that does not say reports it as a caveat without failing.  An ``import``
              row may say ``exception`` (the type name the import raises) and ``python``
              (``"<3.12"``): a failed import is explained by the rows whose conditions
              hold, those naming the exception first
"""

from __future__ import annotations

ISSUES: tuple[dict[str, object], ...] = (
    {
        "id": "attention-logits-below-sentinel",
        "releases": ("0.2.0.post1", "0.7.0"),
        "arch": "any",
        "feature": "attention",
        "kind": "accuracy",
        "summary": "a query row whose every valid logit is below -5e4 gets out = 0 (FA3: "
        "the mean of V over its masked columns) and the sentinel lse -5e4 + log2 n instead "
        "of its softmax; the threshold is on the scaled base-2 logit q.k * sm_scale * log2(e) "
        "for the CUDA-core decode kernel (use_tensor_cores=False, single decode) and on the "
        "raw logit q.k for the FA2 / FA3 prefill kernels and tensor-core decode, and rows "
        "just above it are biased (FlashInfer's FA2 / FA3 / CUDA-core decode / MLA "
        "kernels, not trtllm-gen or cuDNN); not repairable after the kernel (measured on "
        "an H100 with 0.3.1 and 0.6.7)",
        "ref": "FI#4450 (decode), FI#4451 (ragged prefill); fixed in 0.7.0 by FI PR #4401 "
        "(inf = infinity, clamped exp2 exponents)",
        "workaround": "pip install 'flashinfer-python>=0.7.0' (no workaround on older "
        "releases: the sentinel is a compile-time constant)",
        "confirmed": True,
    },
    {
        "id": "empty-rows-lse-sentinel",
        "releases": ("0.2.0.post1", "0.7.0"),
        "arch": "any",
        "feature": "attention",
        "kind": "accuracy",
        "summary": "a query row with no valid key (causal with qo_len > kv_len, kv_len == "
        "0, a custom-mask row with no set bit) gets a finite lse (-5e4 + log2 n) where 0.7.0 "
        "returns -inf, and on FA3 a nonzero out where 0.7.0 returns 0; merging two -inf "
        "states gives NaN.  fi_compat returns 0.7.0's values for the prefill / decode "
        "wrappers (fa2, fa3, CUDA-core decode), single_prefill_with_kv_cache and the "
        "merges; not for MLA, POD, the cascade wrapper, multi-item scoring, JIT variants or "
        "other backends (measured on an H100 with 0.3.1 and 0.6.7)",
        "ref": "FI#4452; fixed in 0.7.0 by FI PR #4401; fi_compat: "
        "src/fi_compat/_adapters/_empty_rows.py",
        "workaround": "call through the fi_compat facades named here (repaired), or pip "
        "install 'flashinfer-python>=0.7.0'",
        "confirmed": True,
    },
    {
        "id": "fp4quant-subnormal-e4m3-scales",
        "releases": ("0.6.0", "0.6.17"),
        "arch": "any",
        "feature": "norm.fp4quant",
        "kind": "accuracy",
        "summary": "rmsnorm_fp4quant decodes e4m3 block scales below 2^-6 (subnormal) as normal "
        "numbers, so those blocks are quantised with a wrong reciprocal (read from the "
        "source, not measured)",
        "ref": "cute_dsl/fp4_common.py fp8_e4m3_to_f32_and_rcp: 0.6.16 l.917 vs 0.6.17 l.936",
        "workaround": "pip install 'flashinfer-python>=0.6.17', or keep block amax / global "
        "scale in the normal e4m3 range",
        "confirmed": False,
    },
    {
        "id": "sm103-trtllm-attention-hang",
        "releases": ("0.6.7", "0.6.7.post2"),
        "arch": "10.3",
        "feature": "attention.trtllm",
        "kind": "hang",
        "summary": "TRTLLM-gen attention kernels hang on SM103 (GB300)",
        "ref": "FI#2939; vLLM restricted to exact SM100 (V#38730, reverted V#38773/V#40032); "
        "SGLang is_sm100_exact (S#21906) reverted on 0.6.7.post2 (S#22098)",
        "workaround": "pip install 'flashinfer-python>=0.6.7.post2', or use TRTLLM attention on "
        "exact SM100 only",
        "confirmed": True,
    },
    {
        "id": "sm121-cutlass-moe-relu2",
        "releases": ("0.5.0", "0.6.8"),
        "arch": "12.1",
        "feature": "moe.cutlass",
        "kind": "missing-kernel",
        "summary": "bf16 unquantised CUTLASS MoE on SM121 lacks the Relu2 activation instantiation",
        "ref": "fixed by FI#2926 in 0.6.8; vLLM keeps an SM121 guard until its minimum is 0.6.8 "
        "(V#39825)",
        "workaround": "pip install 'flashinfer-python>=0.6.8', or another MoE backend on SM121",
        "confirmed": True,
        "when": {"quantization": "bf16", "activation": "Relu2"},
    },
    {
        "id": "sm110-moe-cubins-missing",
        "releases": ("0.5.0", "0.6.9"),
        "arch": "family:11",
        "feature": "moe",
        "kind": "missing-kernel",
        "summary": "no MoE cubins ship for SM110 in flashinfer <= 0.6.8.post1",
        "ref": "FI#3134; vLLM dropped SM110 MoE (V#40808: 'flashinfer <= 0.6.8.post1 ships no "
        "SM110 MoE cubins')",
        "workaround": "pip install 'flashinfer-python>=0.6.9' or another MoE backend on SM110",
        "confirmed": True,
    },
    {
        "id": "topk-sampler-multi-cta-hang",
        "releases": ("0.6.13", "0.6.14"),
        "arch": "any",
        "feature": "sampling.top-k",
        "kind": "hang",
        "summary": "the multi-CTA radix top-k sampler can hang the stream",
        "ref": "FI#3610, fixed by FI#3615; SGLang skips 0.6.13 (S#29231), vLLM bumps to 0.6.14 "
        "(V#47669)",
        "workaround": "pip install 'flashinfer-python>=0.6.14' (or != 0.6.13)",
        "confirmed": True,
    },
    {
        "id": "sm12x-sampler-hang",
        "releases": ("0.5.0", "0.6.14"),
        "arch": "family:12",
        "feature": "sampling",
        "kind": "hang",
        "summary": "FlashInfer samplers hang the stream on SM12x (first affected release not "
        "pinned down; listed from the first wheel release)",
        "ref": "vLLM disabled the FlashInfer sampler on SM12x (V#44405) until 0.6.14 (V#47669)",
        "workaround": "pip install 'flashinfer-python>=0.6.14', or a non-FlashInfer sampler "
        "on SM12x",
        "confirmed": True,
    },
    {
        "id": "0.6.16.post3-tp-import-break",
        "releases": ("0.6.16.post3", "0.6.16.post4"),
        "arch": "any",
        "feature": "import",
        "kind": "import",
        "summary": "with tensor parallelism >= 2, importing FlashInfer 0.6.16.post3 breaks (a user "
        "report; the same release also removed cutlass_fused_moe's use_wfp4afp8_humming)",
        "ref": "user report (no upstream reference recorded)",
        "workaround": "pip install 'flashinfer-python==0.6.16.post4' or '>=0.6.17'",
        "confirmed": True,
    },
    {
        "id": "0.6.18-jit-cache-drops-sm75-sm121a",
        "releases": ("0.6.18", None),
        "arch": "7.5",
        "feature": "jit-cache",
        "kind": "missing-kernel",
        "summary": "flashinfer-jit-cache no longer ships SM75 kernels by default",
        "ref": "V#55380",
        "workaround": "install nvcc (JIT builds them) or uninstall flashinfer-jit-cache",
        "confirmed": True,
    },
    {
        "id": "0.6.18-jit-cache-drops-sm121a",
        "releases": ("0.6.18", None),
        "arch": "12.1",
        "feature": "jit-cache",
        "kind": "missing-kernel",
        "summary": "flashinfer-jit-cache no longer ships SM121a kernels by default",
        "ref": "V#55380",
        "workaround": "install nvcc >= 12.9 (JIT builds them) or uninstall flashinfer-jit-cache",
        "confirmed": True,
    },
    {
        "id": "0.6.12-accuracy-regression",
        "releases": ("0.6.12", "0.6.13"),
        "arch": "any",
        "feature": "accuracy",
        "kind": "accuracy",
        "summary": "accuracy regression in vLLM CI; the bump was auto-reverted, then re-landed",
        "ref": "V#44036, V#44418",
        "workaround": "pip install 'flashinfer-python!=0.6.12'",
        "confirmed": True,
    },
    {
        "id": "0.6.11-gpt-oss-performance",
        "releases": ("0.6.11", "0.6.12"),
        "arch": "any",
        "feature": "moe",
        "kind": "performance",
        "summary": "GPT-OSS throughput regression from 0.6.11 (end of the affected range not "
        "recorded; listed for the 0.6.11 releases)",
        "ref": "V#44808",
        "workaround": "compare with 0.6.8.post1 / 0.6.10.post1 before upgrading",
        "confirmed": True,
    },
    {
        "id": "0.6.15-sglang-performance",
        "releases": ("0.6.15", "0.6.16"),
        "arch": "any",
        "feature": "performance",
        "kind": "performance",
        "summary": "SGLang reverted its 0.6.15 bump for a performance regression",
        "ref": "S#31625",
        "workaround": "pip install 'flashinfer-python>=0.6.16' or stay on 0.6.14",
        "confirmed": True,
    },
    {
        "id": "0.6.14-gb300-gdn-wedge",
        "releases": ("0.6.14", None),
        "arch": "10.3",
        "feature": "gdn",
        "kind": "hang",
        "summary": "GDN wedges on GB300 (SM103); going back to 0.6.12 made it disappear (fixed "
        "release not recorded)",
        "ref": "S#30919",
        "workaround": "pip install 'flashinfer-python<=0.6.12' on GB300 if GDN models wedge",
        "confirmed": False,
    },
    {
        "id": "0.6.18-gpu0-stall",
        "releases": ("0.6.18", "0.7.0"),
        "arch": "any",
        "feature": "runtime",
        "kind": "hang",
        "summary": "models sometimes stall with GPU 0 at 100 % utilisation (a user report, "
        "unconfirmed upstream)",
        "ref": "user report (unconfirmed upstream)",
        "workaround": "if it happens, capture py-spy dump + nvidia-smi and compare with 0.6.17",
        "confirmed": False,
    },
    {
        "id": "0.6.18-gpt-oss-eval-oom",
        "releases": ("0.6.18", "0.7.0"),
        "arch": "any",
        "feature": "memory",
        "kind": "memory",
        "summary": "GPT-OSS evaluation ran out of memory with the default memory utilisation",
        "ref": "user report (no upstream reference recorded)",
        "workaround": "vLLM: --gpu-memory-utilization 0.85",
        "confirmed": True,
    },
    {
        "id": "cpu-torch-dsl-import-crash",
        "releases": ("0.6.15", "0.7.1"),
        "arch": "any",
        "feature": "import",
        "kind": "import",
        "summary": "with nvidia-cutlass-dsl installed and a torch build without CUDA, "
        "`import flashinfer` raises AssertionError: its __init__ imports gdn_prefill, whose "
        "gdn_kernels/gdn_decode_bf16_state.py queries the GPU at module scope, so every "
        "FlashInfer module fails (measured for flashinfer.gdn_prefill and flashinfer.fused_moe "
        "on 0.6.15-0.7.0.post1)",
        "ref": "FI#3262 (fixed #3293, regressed FI#4143)",
        "workaround": "a CUDA build of torch on a GPU host, or flashinfer-python>=0.7.1, or "
        "uninstall nvidia-cutlass-dsl",
        "confirmed": True,
    },
    {
        "id": "gdn-bf16-state-import-needs-gpu-0.6.8",
        "releases": ("0.6.8", "0.6.12"),
        "arch": "any",
        "feature": "import.gdn_decode",
        "kind": "import",
        "summary": "in 0.6.8-0.6.11.post3, flashinfer.gdn_kernels.gdn_decode_bf16_state reads "
        "the GPU at module scope (NUM_SMS = torch.cuda.get_device_properties(0)"
        ".multi_processor_count), so it cannot be imported on a host without a CUDA GPU (a "
        "torch build without CUDA: "
        "AssertionError 'Torch not compiled with CUDA enabled'; no device: RuntimeError); "
        "flashinfer.gdn_decode imports it too. 0.6.12-0.6.13 and 0.7.1+ query the GPU at "
        "the call (measured on CPU-only torch with 0.6.8.post1, 0.6.11, 0.6.14)",
        "ref": "gdn_kernels/gdn_decode_bf16_state.py l.2262 (0.6.8), l.2295 (0.6.9-0.6.10.post1), "
        "l.1389 (0.6.11-0.6.11.post3)",
        "workaround": "a host with a CUDA GPU, or pip install 'flashinfer-python>=0.7.1'",
        "confirmed": True,
    },
    {
        "id": "gdn-bf16-state-import-needs-gpu-0.6.14",
        "releases": ("0.6.14", "0.7.1"),
        "arch": "any",
        "feature": "import.gdn_decode",
        "kind": "import",
        "summary": "in 0.6.14-0.7.0.post1, flashinfer.gdn_kernels.gdn_decode_bf16_state reads "
        "the GPU at module scope (NUM_SMS = torch.cuda.get_device_properties(0)"
        ".multi_processor_count), so it cannot be imported on a host without a CUDA GPU (a "
        "torch build without CUDA: "
        "AssertionError 'Torch not compiled with CUDA enabled'; no device: RuntimeError); "
        "flashinfer.gdn_decode imports it too. 0.6.12-0.6.13 and 0.7.1+ query the GPU at "
        "the call (measured on CPU-only torch with 0.6.8.post1, 0.6.11, 0.6.14)",
        "ref": "gdn_kernels/gdn_decode_bf16_state.py l.2701 (0.6.14-0.6.17), l.2703 (0.6.18), "
        "l.2705 (0.7.0-0.7.0.post1)",
        "workaround": "a host with a CUDA GPU, or pip install 'flashinfer-python>=0.7.1'",
        "confirmed": True,
    },
    {
        "id": "comm-import-libcudart-not-loaded",
        "releases": ("0.2.7.post1", "0.6.14"),
        "arch": "any",
        "feature": "import.comm",
        "kind": "import",
        "summary": "`import flashinfer.comm` raises AssertionError('libcudart is not loaded in "
        "the current process'): comm/cuda_ipc.py builds `cudart = CudaRTLibrary()` at module "
        "scope, which looks for libcudart among the libraries already loaded; a torch build "
        "without CUDA loads none (a CUDA build of torch does at `import torch`).  0.6.14 made "
        "it lazy (_LazyCudaRTLibrary)",
        "ref": "comm/cuda_ipc.py l.194 (0.3.0-0.6.13), l.192 (0.2.7.post1-0.2.14.post1); "
        "0.6.14 cuda_ipc.py l.206",
        "workaround": "a CUDA build of torch (or load libcudart before importing FlashInfer), "
        "or pip install 'flashinfer-python>=0.6.14'",
        "confirmed": True,
        "when": {"exception": "AssertionError"},
    },
    {
        "id": "comm-mnnvl-cuda-python-13",
        "releases": ("0.2.7.post1", "0.4.0"),
        "arch": "any",
        "feature": "import.comm",
        "kind": "import",
        "summary": "flashinfer.comm.mnnvl (imported by trtllm_alltoall and every MNNVL name) "
        "does `from cuda import cuda`, the driver module cuda-python 13.0 removed: with "
        "cuda-python>=13 the import raises ImportError(\"cannot import name 'cuda' from "
        "'cuda'\"); 0.4.0 imports cuda.bindings.driver first",
        "ref": "comm/mnnvl.py l.23 (0.2.7.post1-0.2.8), l.28 (0.3.0-0.3.1.post1); 0.4.0 "
        "mnnvl.py l.28-37 ('from cuda import cuda is not available in cuda-python >= 13.0')",
        "workaround": "pip install 'cuda-python<13', or pip install 'flashinfer-python>=0.4.0'",
        "confirmed": True,
        "when": {"exception": "ImportError"},
    },
    {
        "id": "comm-import-python-below-3.12",
        "releases": ("0.6.16", "0.6.16.post4"),
        "arch": "any",
        "feature": "import.comm",
        "kind": "import",
        "summary": "`import flashinfer.comm` raises TypeError: type 'array.array' is not "
        "subscriptable on Python 3.10 and 3.11: comm/fd_exchange.py (imported by comm/mnnvl.py) "
        "annotates `_fd_ancillary(...) -> tuple[tuple[int, int, array.array[int]]]` without "
        "`from __future__ import annotations`, and array.array is subscriptable from Python "
        "3.12 only; 0.6.16.post4 added the future import.  Every flashinfer.comm name fails "
        "on 0.6.16-0.6.16.post3 there; Python 3.12+ imports it",
        "ref": "comm/fd_exchange.py l.55 (0.6.16-0.6.16.post3); fixed in 0.6.16.post4 "
        "fd_exchange.py l.28-30",
        "workaround": "pip install 'flashinfer-python==0.6.16.post4' or '>=0.6.17' (or run "
        "Python 3.12+)",
        "confirmed": True,
        "when": {"exception": "TypeError", "python": "<3.12"},
    },
    {
        "id": "gdn-decode-bf16-state-dsl-alignment",
        "releases": ("0.6.7", "0.6.8"),
        "arch": "any",
        "feature": "gdn_decode",
        "kind": "broken",
        "summary": "the bf16-state GDN decode kernel (gdn_kernels/gdn_decode_bf16_state.py, "
        "identical in 0.6.7-0.6.7.post3) does not compile with nvidia-cutlass-dsl 4.8.1: "
        "MLIR verification rejects its 128-bit cp.async copy into shared memory aligned to "
        "16 bits (measured on an H200, 2026-12-04); 0.6.4-0.6.6 use the same copy "
        "(not measured); 0.6.8 rewrote the loader",
        "ref": "fi_compat tests/gpu/README.md (2026-12-04); 0.6.8 gdn_decode_bf16_state.py",
        "workaround": "a float32 state, or pip install 'flashinfer-python>=0.6.8'",
        "confirmed": True,
        "when": {"state": "bf16"},
    },
    {
        "id": "0.6.0-gdn-prefill-cuda-graph",
        "releases": ("0.6.0", "0.6.3"),
        "arch": "family:9",
        "feature": "gdn.prefill",
        "kind": "broken",
        "summary": "CUDA-graph capture of the SM90 GDN prefill kernel fails (RuntimeError: "
        "std::exception; measured on an H200 with 0.6.2); 0.6.3 added the preallocated TMA "
        "workspace",
        "ref": "fi_compat tests/gpu/README.md (2026-12-02)",
        "workaround": "pip install 'flashinfer-python>=0.6.3', or run GDN prefill outside graphs",
        "confirmed": True,
    },
    {
        "id": "gdn-sm90-empty-sequence-hang",
        "releases": ("0.6.0", "0.6.14"),
        "arch": "family:9",
        "feature": "gdn.prefill",
        "kind": "hang",
        "summary": "GDN prefill never returns when cu_seqlens holds a zero-length sequence: "
        "the SM90 C++ kernel's loaders run a tail step at block num_blocks - 1 also for a "
        "sequence with no blocks (measured on an H200 with 0.6.3 and 0.6.7; the kernel is "
        "the same through 0.6.13, and 0.6.14 replaced it)",
        "ref": "fi_compat tests/gpu/README.md (2026-12-03); 0.7.1 documents zero-length "
        "sequences as legal",
        "workaround": "pass cu_seqlens_cpu (fi_compat then leaves empty sequences out of the "
        "launch), or pip install 'flashinfer-python>=0.6.14'",
        "confirmed": True,
        "when": {"sequences": "zero-length"},
    },
    {
        "id": "gdn-sm90-empty-sequence-state",
        "releases": ("0.6.14", None),
        "arch": "family:9",
        "feature": "gdn.prefill",
        "kind": "broken",
        "summary": "the SM90 CuTe-DSL GDN prefill kernel leaves the final-state row of a "
        "zero-length sequence unwritten (uninitialised memory), where 0.7.4 defines it as "
        "the initial state (measured on an H200 with 0.6.14, 0.6.18 and 0.7.4)",
        "ref": "fi_compat tests/gpu/README.md (2026-12-03); 0.7.4 gdn_prefill.py "
        "_allocate_sm8x_output_state and the SM100 kernel's _store_empty_final_state",
        "workaround": "pass cu_seqlens_cpu: fi_compat writes the initial state (or zeros) "
        "into those rows",
        "confirmed": True,
        "when": {"sequences": "zero-length"},
    },
    {
        "id": "rope-head-dim-segfault",
        "releases": ("0.2.1.post1", "0.4.0"),
        "arch": "any",
        "feature": "rope",
        "kind": "broken",
        "summary": "a head size other than 64, 128, 256 or 512 kills the process with SIGSEGV "
        "in every RoPE function (apply_rope*, apply_llama31_rope*, and "
        "apply_rope_with_cos_sin_cache(_inplace) via _apply_rope_pos_ids_cos_sin_cache): "
        "DISPATCH_HEAD_DIM's FLASHINFER_ERROR throw does not survive the TORCH_LIBRARY "
        "binding of these releases (measured on an H100 with 0.3.1: apply_rope head 80 -> "
        "signal 11; a c10 dtype error through the same op raises cleanly). The pybind11 "
        "(0.2.0.post1-0.2.1) and TVM-FFI (0.4.0+) bindings raise RuntimeError instead",
        "ref": "csrc/flashinfer_rope_ops.cu (TORCH_LIBRARY_FRAGMENT); utils.cuh DISPATCH_HEAD_DIM "
        "(0.3.1 l.175); other head sizes run in apply_rope_with_cos_sin_cache from 0.6.0 "
        "(FI#2109, issue FI#2104)",
        "workaround": "pip install 'flashinfer-python>=0.6.0' and use "
        "apply_rope_with_cos_sin_cache(_inplace) (fi_compat refuses these calls before the "
        "launch: InvalidArgumentError for apply_rope* / apply_llama31_rope* on every release, "
        "as no release runs them; UnsupportedParameterError naming 0.6.0 for the cos/sin-cache "
        "form where 0.6.0+ computes it)",
        "confirmed": True,
        "when": {"head_size": "not 64/128/256/512"},
    },
    {
        "id": "rope-quantize-rotary-alignment",
        "releases": ("0.6.0", None),
        "arch": "any",
        "feature": "rope.cos_sin_cache",
        "kind": "broken",
        "summary": "apply_rope_with_cos_sin_cache(_inplace) with a head size other than 64, "
        "128, 256 or 512 runs the RopeQuantize kernel, whose 16-element vectors are not "
        "checked against rotary_dim: with is_neox=True and rotary_dim % 32 != 0 the result is "
        "silently wrong ((head, rotary) (80, 80), (96, 48), (112, 112), (160, 80)) or the "
        "kernel faults with cudaErrorMisalignedAddress, poisoning the CUDA context ((80, 40), "
        "(112, 56)); interleaved with rotary_dim % 16 != 0 its last vector races the "
        "unrotated part ((80, 40), (112, 56) wrong in place on 0.6.7). Measured on an H100 "
        "with 0.6.7 and 0.7.4; the kernel is unchanged 0.6.0-0.7.4",
        "ref": "FI#2109 (routes BatchQKApplyRotaryPosIdsCosSinCache to RopeQuantize); 0.7.4 "
        "pos_enc.cuh:1294 vec_size = 32 / sizeof(DType), :1532-1636",
        "workaround": "a head size of 64/128/256/512, or a RoPE outside FlashInfer for that "
        "shape; NeoX rotary_dim % 32 == 0 and interleaved % 16 == 0 run exactly (e.g. (96, 96), "
        "(160, 160), (192, 96)) (fi_compat refuses the others before the launch with "
        "InvalidArgumentError on every release, as no release computes them)",
        "confirmed": True,
        "when": {"rotary_dim": "NeoX: not a multiple of 32; interleaved: not a multiple of 16"},
    },
    {
        "id": "activation-misaligned-hidden-size",
        "releases": ("0.2.0.post1", "0.7.1"),
        "arch": "any",
        "feature": "activation",
        "kind": "broken",
        "summary": "silu_and_mul / gelu_and_mul / gelu_tanh_and_mul with a hidden size d % 8 "
        "== 4 (e.g. 3420, Qwen2.5-VL's vision MLP) fault with cudaErrorMisalignedAddress, "
        "poisoning the CUDA context: the kernel moves 8 fp16/bf16 elements at a time and the "
        "second half starts d elements in, while the Python guard only checks the whole row "
        "(read from the sources of every release 0.2.0.post1-0.7.0.post1; not measured)",
        "ref": "issue FI#2526, fixed by FI#5013 in 0.7.1 (vec_size = the widest power of 2 "
        "dividing d); 0.7.0.post1 activation.cuh:32, activation.py:103",
        "workaround": "pip install 'flashinfer-python>=0.7.1', or pad the hidden size to a "
        "multiple of 8 (fi_compat refuses d % 8 != 0 before the launch on these releases with "
        "UnsupportedParameterError naming 0.7.1)",
        "confirmed": True,
        "when": {"hidden_size": "not a multiple of 8"},
    },
    {
        "id": "bf16-moe-deepseek-route-scale-zero",
        "releases": ("0.5.3", "0.6.0"),
        "arch": "family:10",
        "feature": "moe.trtllm",
        "kind": "accuracy",
        "summary": "trtllm_bf16_moe with DeepSeekV3 routing returns zeros: 0.5.3's launcher "
        "never sets the routed scaling factor, so it keeps MoERunnerArgs' default 0.0, which "
        "the DeepSeekV3 routing kernel multiplies into every expert weight (the other routing "
        "methods never read it); read from the sources, not measured (SM100-only kernels)",
        "ref": "0.5.3 csrc/trtllm_fused_moe_kernel_launcher.cu l.1252-1320 (no "
        "args->routed_scaling_factor, unlike l.1383/1467/1601), trtllm/fused_moe/runner.h "
        "l.274 (routed_scaling_factor{0.0f}), trtllm_fused_moe_runner.cu l.98, "
        "trtllm_fused_moe_routing_deepseek.cu l.236; 0.6.0 added routed_scaling_factor "
        "(value_or(1.0))",
        "workaround": "pip install 'flashinfer-python>=0.6.0' (fi_compat refuses DeepSeekV3 "
        "routing in trtllm_bf16_moe on 0.5.3 before the launch with UnsupportedParameterError "
        "naming 0.6.0)",
        "confirmed": False,
        "when": {"routing_method_type": "DeepSeekV3"},
    },
    {
        "id": "page-append-head-dim",
        "releases": ("0.2.0.post1", None),
        "arch": "any",
        "feature": "page",
        "kind": "broken",
        "summary": "append_paged_kv_cache with a head_dim other than 64, 128, 256 or 512: "
        "AppendPagedKVCache dispatches on those four only (DISPATCH_HEAD_DIM) in every "
        "release, a RuntimeError; on 0.2.1.post1-0.3.1.post1 the throw goes through the "
        "TORCH_LIBRARY binding that kills the process in RoPE (read from the sources; the "
        "crash measured for RoPE, not for this kernel)",
        "ref": "0.7.4 page.cuh:502, 0.2.0.post1 page.cuh:390; csrc/flashinfer_page_ops.cu "
        "(TORCH_LIBRARY) 0.2.1.post1-0.3.1.post1",
        "workaround": "a paged KV cache with head_dim 64, 128, 256 or 512 (fi_compat refuses "
        "others before the launch with InvalidArgumentError on every release)",
        "confirmed": True,
        "when": {"head_dim": "not 64/128/256/512"},
    },
)
