"""``fi_compat.quantization`` and ``fi_compat.gemm`` on every release 0.2.0.post1-0.7.4
that has each function, against each release's snapshot signature (cases in
``tests/support/quant_gemm_cases.py``)."""

from __future__ import annotations

from typing import Any

import pytest

import fi_compat.gemm as gemm_facade
from fi_compat import errors, fp4_quantization, fp8_quantization, quantization
from fi_compat._adapters.gemm import SPECS as GEMM
from fi_compat.detection import Distribution
from fi_compat.registry import KNOWN_RELEASES
from support.quant_gemm_cases import CASES, SPECS, args, releases
from support.spy import stub

CELLS = [(n, r) for n in SPECS for r in releases(n)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize(("name", "release"), CELLS)
def test_policy(name: str, release: str, case: Any) -> None:
    case(name, release)


FIRST = {
    "nvfp4_kv_quantize": "0.6.7",
    "nvfp4_kv_dequantize": "0.6.7",
    "fp4_quantize": "0.2.6",
    "nvfp4_quantize": "0.2.9",
    "mxfp4_quantize": "0.2.13",
    "mxfp8_quantize": "0.2.10",
    "e2m1_and_ufp8sf_scale_to_float": "0.2.9",
    "block_scale_interleave": "0.2.9",  # nvfp4_block_scale_interleave until 0.2.12
    "bmm_fp8": "0.2.0.post1",
    "mm_fp8": "0.4.1",
    "mm_fp4": "0.2.9",
    "mm_bf16": "0.6.3",
    "mm_mxfp8": "0.6.4",
    "fp8_blockscale_gemm_sm90": "0.6.0",
    "gemm_fp8_nt_groupwise": "0.2.6",
    "tinygemm_bf16": "0.6.5",
    "mm_bf16_fp4": "0.6.14",
    "prepare_bf16_fp4_weights": "0.6.14",
}


@pytest.mark.parametrize("name", list(SPECS))
def test_coverage(name: str) -> None:
    assert SPECS[name].since == FIRST[name]
    assert releases(name) == list(KNOWN_RELEASES[KNOWN_RELEASES.index(FIRST[name]) :])


def test_mm_bf16_below_its_floor_is_refused() -> None:
    a = GEMM["mm_bf16"].select(Distribution("flashinfer-python", "0.6.1", "<t>", ""))
    f = a.build(stub(gemm_facade, "mm_bf16"))
    with pytest.raises(errors.UnsupportedFlashInferVersionError, match="fi_compat serves it"):
        f(**args("mm_bf16"))


def test_flashinfer_module_spellings_are_the_same_objects() -> None:
    for n in fp4_quantization.__all__:
        assert getattr(fp4_quantization, n) is getattr(quantization, n)
    assert fp8_quantization.mxfp8_quantize is quantization.mxfp8_quantize
    with pytest.raises(AttributeError):
        fp4_quantization.nope  # noqa: B018


def test_block_scale_interleave_under_both_names() -> None:
    """FlashInfer's older name is the same facade (as FlashInfer 0.2.13+ aliases it)."""
    assert quantization.nvfp4_block_scale_interleave is quantization.block_scale_interleave
    assert fp4_quantization.nvfp4_block_scale_interleave is quantization.block_scale_interleave
    assert "nvfp4_block_scale_interleave" in dir(quantization)
