"""Attention wrappers as SGLang's flashinfer_backend.py drives them: wrapper objects
kept on ``self`` and in lists, annotated dataclass fields, positional ``plan`` calls."""

from dataclasses import dataclass
from typing import List, Optional

import torch

from fake_engine.utils.flashinfer import has_flashinfer

if has_flashinfer():
    from flashinfer import (
        BatchDecodeWithPagedKVCacheWrapper,
        BatchPrefillWithPagedKVCacheWrapper,
        BatchPrefillWithRaggedKVCacheWrapper,  # ragged prefill for extend
    )
    from flashinfer.cascade import merge_state


@dataclass
class DecodeMetadata:
    decode_wrappers: List[BatchDecodeWithPagedKVCacheWrapper]


@dataclass
class PrefillMetadata:
    prefill_wrappers: List["BatchPrefillWithPagedKVCacheWrapper"]
    use_ragged: bool


class FlashInferAttnBackend:
    def __init__(self, num_wrappers: int, workspace: torch.Tensor):
        self.decode_wrappers = []
        for _ in range(num_wrappers):
            self.decode_wrappers.append(
                BatchDecodeWithPagedKVCacheWrapper(workspace, "NHD", use_tensor_cores=False)
            )
        self.prefill_wrapper_ragged = BatchPrefillWithRaggedKVCacheWrapper(workspace, "NHD")
        self.prefill_wrappers_paged = [
            BatchPrefillWithPagedKVCacheWrapper(workspace, "NHD") for _ in range(num_wrappers)
        ]
        self.forward_metadata: Optional[DecodeMetadata] = None

    def init_forward_metadata_decode(self, indptr, indices, last_page_len, heads, kv_heads, dim):
        for wrapper in self.decode_wrappers:
            # positional plan call, written for the pinned release
            wrapper.plan(
                indptr,
                indices,
                last_page_len,
                heads,
                kv_heads,
                dim,
                1,
                "NONE",
                -1,
                None,
                torch.bfloat16,
            )
        self.forward_metadata = DecodeMetadata(self.decode_wrappers)

    def init_forward_metadata_extend(self, qo_indptr, kv_indptr, kv_indices, last_page_len):
        self.prefill_wrapper_ragged.begin_forward(qo_indptr, qo_indptr, 32, 8, 128)
        for i, wrapper in enumerate(self.prefill_wrappers_paged):
            wrapper.plan(
                qo_indptr,
                kv_indptr,
                kv_indices,
                last_page_len,
                32,
                8,
                128,
                1,
                q_data_type=torch.bfloat16,
                causal=True,
            )

    def forward_decode(self, q, kv_cache, layer):
        decode_wrapper = self.forward_metadata.decode_wrappers[layer.wrapper_id]
        return decode_wrapper.forward(q, kv_cache, sm_scale=layer.scaling)

    def forward_extend(self, q, k, v, kv_cache, layer):
        o1, s1 = self.prefill_wrapper_ragged.forward_return_lse(q, k, v, causal=True)
        o2, s2 = self.prefill_wrappers_paged[0].forward_return_lse(q, kv_cache, causal=False)
        o, _ = merge_state(o1, s1, o2, s2)
        return o
