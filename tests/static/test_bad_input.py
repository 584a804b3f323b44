"""Bad input and faults, one test per row of docs/bad-input.md.

Every refusal is a typed fi_compat error (a FiCompatError and the builtin a caller would
catch), names the offending parameter, and comes before FlashInfer is reached: the
facades are built per release and call a spy bound to that release's real signature,
which must stay uncalled.  Rows where fi_compat does not refuse yet are strict xfails
(the reason says what happens instead).  The last tests keep the doc table honest.
"""

from __future__ import annotations

import ast
import enum
import json
import re
from pathlib import Path
from typing import Any

import pytest
import torch

from conftest import ROOT, run_python
from fi_compat import _device, errors
from fi_compat._device import assume_capability
from fi_compat.enums import ActivationType, GatedActType, RoutingMethodType, SfLayout
from fi_compat.registry import KNOWN_RELEASES, at_least, place
from support.bad_inputs import ArrayLike, gdn, refused
from support.helpers import T as GT
from support.helpers import inputs
from support.moe_helpers import ENTRIES, E, K, T, args, moe_facade

GDN = [r for r in KNOWN_RELEASES if at_least(place(r), "0.6.0")]
# a release of each GDN adapter generation that matters here: 0.6.0 (int64 cu_seqlens),
# 0.6.8 (checkpoints), 0.6.16 (native pools), 0.7.0 (int32, backend), 0.7.4 (kw-only tail)
GDN_SAMPLE = ["0.6.0", "0.6.8", "0.6.16", "0.7.0", "0.7.4"]
MOE_SAMPLE = ["0.5.0", "0.6.3", "0.6.8", "0.6.13", "0.6.18", "0.7.4"]
FP4 = "trtllm_fp4_block_scale_moe"
FP4_ROUTED = "trtllm_fp4_block_scale_routed_moe"
FP8_BLOCK = "trtllm_fp8_block_scale_moe"
TRTLLM = [n for n in ENTRIES if n.startswith("trtllm_")]


def exists(name: str, release: str) -> bool:
    return at_least(place(release), ENTRIES[name].since)


@pytest.fixture
def device_check_on() -> Any:
    """The real device check (conftest lets CPU tensors through for the spy)."""
    saved = list(_device._cpu_ok)
    _device._cpu_ok[:] = [False]
    yield
    _device._cpu_ok[:] = saved


# -- GDN prefill: tensors ------------------------------------------------------------

WRONG_TENSORS = [
    ("q", ArrayLike(GT, 2, 16), "q must be a torch.Tensor"),
    ("q", [[0.0]], "q must be a torch.Tensor"),
    ("q", None, "q must be a torch.Tensor"),
    ("k", None, "k must be a torch.Tensor"),
    ("v", [1.0], "v must be a torch.Tensor"),
    ("cu_seqlens", ArrayLike(3, dtype="int32"), "cu_seqlens must be a torch.Tensor"),
    ("cu_seqlens", [0, 5, 12], "cu_seqlens must be a torch.Tensor"),
    ("g", ArrayLike(12, 4), "g must have shape"),
    ("beta", [0.5], "beta must have shape"),
    ("initial_state", ArrayLike(2, 4, 16, 16), "initial_state must be a torch.Tensor"),
    ("output", [0.0], "output must be a torch.Tensor"),
    ("output_state", "state", "output_state must be a torch.Tensor"),
    ("A_log", ArrayLike(4), "A_log must be torch.Tensor or None"),
    ("A_log", [0.0] * 4, "A_log must be torch.Tensor or None"),
    ("dt_bias", ArrayLike(4), "dt_bias must be torch.Tensor or None"),
    ("state_checkpoints", [1], "state_checkpoints must be torch.Tensor or None"),
    ("checkpoint_cu_starts", ArrayLike(1, dtype="int64"), "checkpoint_cu_starts must be"),
    ("state_indices", ArrayLike(2, dtype="int32"), "state_indices must be"),
    ("output_state_indices", [0, 1], "output_state_indices must be torch.Tensor or None"),
    ("prefix_lens", 3, "prefix_lens must be torch.Tensor or None"),
]


@pytest.mark.parametrize("release", GDN_SAMPLE)
@pytest.mark.parametrize(("param", "bad", "fragment"), WRONG_TENSORS)
def test_gdn_tensor_of_wrong_type(release: str, param: str, bad: Any, fragment: str) -> None:
    f, spy, _ = gdn(release)
    refused(spy, errors.InvalidArgumentError, fragment, lambda: f(**{**inputs(), param: bad}))


@pytest.mark.parametrize("release", GDN_SAMPLE)
@pytest.mark.parametrize(
    ("param", "bad", "fragment"),
    [
        ("q", torch.zeros(1, GT, 2, 16), "pass q.squeeze(0)"),  # FLA [1, T, H, D] layout
        ("k", torch.zeros(GT, 32), "k must be 3-D"),
        ("cu_seqlens", torch.tensor([[0, 5, 12]], dtype=torch.int32), "cu_seqlens must be 1-D"),
    ],
)
def test_gdn_wrong_rank(release: str, param: str, bad: Any, fragment: str) -> None:
    f, spy, _ = gdn(release)
    refused(spy, errors.InvalidArgumentError, fragment, lambda: f(**{**inputs(), param: bad}))


@pytest.mark.parametrize("release", GDN_SAMPLE)
@pytest.mark.parametrize("param", ["initial_state", "output_state"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.int32])
def test_gdn_state_of_an_unknown_dtype(release: str, param: str, dtype: torch.dtype) -> None:
    f, spy, _ = gdn(release)
    kw = {**inputs(), param: torch.zeros(2, 4, 16, 16, dtype=dtype), "output_final_state": True}
    msg = f"{param} must be float32, bfloat16, float16, float8_e4m3fn or float8_e5m2"
    refused(spy, errors.InvalidArgumentError, msg, lambda: f(**kw))


@pytest.mark.parametrize("release", GDN_SAMPLE)
def test_gdn_host_lengths_that_disagree(release: str) -> None:
    f, spy, _ = gdn(release)
    kw = {**inputs(), "cu_seqlens_cpu": [0, 12]}
    with assume_capability((9, 0)):
        refused(spy, errors.InvalidArgumentError, "cu_seqlens_cpu has 2 offsets", lambda: f(**kw))


@pytest.mark.parametrize("release", GDN_SAMPLE)
def test_gdn_wrong_dtype(release: str) -> None:
    f, spy, _ = gdn(release)
    cu = torch.tensor([0.0, 5.0, 12.0])
    refused(
        spy,
        errors.InvalidArgumentError,
        "cu_seqlens must have an integer dtype",
        lambda: f(**{**inputs(), "cu_seqlens": cu}),
    )


@pytest.mark.parametrize("release", GDN_SAMPLE)
@pytest.mark.parametrize(
    ("param", "bad", "fragment"),
    [
        ("k", torch.zeros(GT + 1, 2, 16), "same number of tokens"),
        ("v", torch.zeros(GT, 4, 8), "same head size"),
        ("g", torch.zeros(GT), "g must have shape [total_seq_len, num_sab_heads]"),
        ("beta", torch.zeros(GT, 2), "beta must have shape"),
    ],
)
def test_gdn_shape_mismatch(release: str, param: str, bad: Any, fragment: str) -> None:
    f, spy, _ = gdn(release)
    refused(spy, errors.InvalidArgumentError, fragment, lambda: f(**{**inputs(), param: bad}))


@pytest.mark.parametrize("release", GDN_SAMPLE)
@pytest.mark.parametrize(
    ("extra", "error", "fragment"),
    [
        (
            {"state_indices": torch.tensor([0, 1, 2], dtype=torch.int32)},
            errors.InvalidArgumentError,
            "state_indices must be an integer tensor of shape (2,)",
        ),
        (
            {"state_indices": torch.tensor([0.0, 1.0])},
            errors.InvalidArgumentError,
            "state_indices must be an integer tensor",
        ),
        (
            {"state_indices": torch.tensor([0, 1], dtype=torch.int32), "output_final_state": True},
            errors.MissingArgumentError,
            "needs the output_state pool",
        ),
    ],
)
def test_gdn_state_pool_inconsistent(
    release: str, extra: dict[str, Any], error: type[Exception], fragment: str
) -> None:
    f, spy, _ = gdn(release)
    pool = {"initial_state": torch.zeros(4, 4, 16, 16)}
    refused(spy, error, fragment, lambda: f(**{**inputs(), **pool, **extra}))


@pytest.mark.parametrize("release", GDN)
@pytest.mark.parametrize("validation", [True, False])
@pytest.mark.parametrize("how", ["omitted", "None"])
def test_gdn_missing_cu_seqlens(release: str, validation: bool, how: str) -> None:
    """Required on every release (varlen only), checks on or off: typed, never an
    AttributeError from the inline cast."""
    f, spy, adapter = gdn(release)
    adapter.set_validation(validation)
    kw = inputs()
    if how == "omitted":
        del kw["cu_seqlens"]
    else:
        kw["cu_seqlens"] = None
    refused(spy, errors.MissingArgumentError, "cu_seqlens is required", lambda: f(**kw))


@pytest.mark.parametrize("release", GDN_SAMPLE)
def test_gdn_float_cu_seqlens_with_validation_off(release: str) -> None:
    f, spy, adapter = gdn(release)
    adapter.set_validation(False)
    cu = torch.tensor([0.0, 5.0, 12.0])
    refused(
        spy,
        errors.InvalidArgumentError,
        "cu_seqlens must have an integer dtype",
        lambda: f(**{**inputs(), "cu_seqlens": cu}),
    )


@pytest.mark.parametrize("release", ["0.6.0", "0.7.4"])
def test_gdn_cu_seqlens_as_list_with_validation_off(release: str) -> None:
    f, spy, adapter = gdn(release)
    adapter.set_validation(False)
    refused(
        spy,
        errors.InvalidArgumentError,
        "cu_seqlens",
        lambda: f(**{**inputs(), "cu_seqlens": [0, 5, 12]}),
    )


@pytest.mark.parametrize(
    ("release", "param"),
    [("0.6.16", "state_indices"), ("0.7.4", "state_indices"), ("0.6.8", "checkpoint_cu_starts")],
)
def test_gdn_index_tensor_as_list_on_native_release(release: str, param: str) -> None:
    f, spy, _ = gdn(release)
    refused(spy, errors.InvalidArgumentError, param, lambda: f(**{**inputs(), param: [0, 1]}))


def test_gdn_unchecked_sequence_hint() -> None:
    f, spy, _ = gdn("0.7.4")
    refused(
        spy,
        errors.InvalidArgumentError,
        "cu_seqlens_cpu",
        lambda: f(**inputs(), cu_seqlens_cpu="0,5,12"),
    )


@pytest.mark.parametrize("release", ["0.6.0", "0.6.16", "0.7.2.post1", "0.7.4"])
@pytest.mark.parametrize(
    ("extra", "error", "fragment"),
    [
        ({"A_log": torch.zeros(4)}, errors.InvalidArgumentError, "A_log and dt_bias require"),
        ({"use_gate_in_kernel": True}, errors.MissingArgumentError, "requires g, A_log"),
    ],
)
def test_gdn_gate_arguments_inconsistent(
    release: str, extra: dict[str, Any], error: type[Exception], fragment: str
) -> None:
    f, spy, _ = gdn(release)
    refused(spy, error, fragment, lambda: f(**inputs(), **extra))


# -- GDN prefill: scalars, literals -------------------------------------------------


@pytest.mark.parametrize("release", GDN_SAMPLE)
@pytest.mark.parametrize(
    ("param", "bad", "error"),
    [
        ("scale", "0.5", errors.InvalidArgumentError),
        ("scale", torch.tensor(0.5), errors.InvalidArgumentError),
        ("output_final_state", None, errors.MissingArgumentError),
        ("output_final_state", 1, errors.InvalidArgumentError),
        ("output_final_state", "yes", errors.InvalidArgumentError),
        ("use_qk_l2norm_in_kernel", None, errors.MissingArgumentError),
        ("checkpoint_every_n_tokens", 1.5, errors.InvalidArgumentError),
        ("checkpoint_every_n_tokens", None, errors.MissingArgumentError),
        ("checkpoint_every_n_tokens", "4", errors.InvalidArgumentError),
        ("use_cp", None, errors.MissingArgumentError),
        ("use_cp", 1, errors.InvalidArgumentError),
        ("_cp_chunk_len", "64", errors.InvalidArgumentError),
        ("backend", None, errors.MissingArgumentError),
        ("max_seqlen", 4.0, errors.InvalidArgumentError),
        ("use_gate_in_kernel", None, errors.MissingArgumentError),
        ("beta_is_logit", "no", errors.InvalidArgumentError),
    ],
)
def test_gdn_scalar_of_wrong_type(
    release: str, param: str, bad: Any, error: type[Exception]
) -> None:
    f, spy, _ = gdn(release)
    refused(spy, error, param, lambda: f(**inputs(), **{param: bad}))


@pytest.mark.parametrize("release", GDN_SAMPLE)
@pytest.mark.parametrize(
    ("param", "bad", "valid"),
    [
        ("use_cp", "yes", "bool or 'auto'"),
        ("backend", "bogus", "'auto' / 'flashinfer' / 'cake_gdn' / 'cudnn' / 'sm120_cute'"),
        ("gate_domain", "logit", "'linear' / 'log'"),
    ],
)
def test_invalid_literal_value(release: str, param: str, bad: str, valid: str) -> None:
    f, spy, _ = gdn(release)
    refused(
        spy,
        errors.InvalidArgumentError,
        f"{param}={bad!r} is not a valid value; valid: {valid}",
        lambda: f(**inputs(), **{param: bad}),
    )


# -- values that need a newer release ------------------------------------------------

NEWER = [
    # (facade, release, keyword arguments, parameter, first release)
    ("gdn", "0.7.0", {"backend": "cudnn"}, "backend", "0.7.1"),
    ("gdn", "0.7.2", {"backend": "sm120_cute"}, "backend", "0.7.4"),
    ("gdn", "0.6.18", {"backend": "cake_gdn"}, "backend", "0.7.0"),
    ("gdn", "0.6.13", {"use_cp": True}, "use_cp", "0.6.14"),
    ("gdn", "0.6.18", {"_cp_chunk_len": 64}, "_cp_chunk_len", "0.7.0"),
    ("gdn", "0.6.7", {"checkpoint_every_n_tokens": 4}, "checkpoint_every_n_tokens", "0.6.8"),
    (
        "gdn",
        "0.7.2.post1",
        {"prefix_lens": torch.zeros(2, dtype=torch.int32)},
        "prefix_lens",
        "0.7.4",
    ),
    (FP4, "0.6.11", {"num_fused_shared_experts": 2}, "num_fused_shared_experts", "0.6.17"),
    (FP8_BLOCK, "0.6.4", {"do_finalize": False}, "do_finalize", "0.6.5"),
    (FP4, "0.6.7", {"norm_topk_prob": False}, "norm_topk_prob", "0.6.8"),
    (
        FP4,
        "0.6.10",
        {"routing_method_type": RoutingMethodType.Sigmoid},
        "routing_method_type",
        "0.6.11",
    ),
    (FP4, "0.7.2.post1", {"activation_type": ActivationType.PowLU}, "activation_type", "0.7.4"),
]


@pytest.mark.parametrize(("facade", "release", "kw", "param", "minimum"), NEWER)
def test_needs_newer_release(
    facade: str, release: str, kw: dict[str, Any], param: str, minimum: str
) -> None:
    if facade == "gdn":
        f, spy, _ = gdn(release)
        base: dict[str, Any] = inputs()
    else:
        f, spy, _ = moe_facade(facade, release)
        base = args(facade)
    exc = refused(
        spy,
        errors.UnsupportedParameterError,
        f"needs flashinfer-python>={minimum}",
        lambda: f(**base, **kw),
    )
    assert isinstance(exc, errors.UnsupportedParameterError)
    assert (exc.parameter, exc.installed, exc.minimum) == (param, release, minimum)
    assert param in str(exc) and f"installed: {release}" in str(exc)


# -- positional calls ---------------------------------------------------------------


def _positional(entry: Any, base: dict[str, Any]) -> list[Any]:
    """Every positional slot of the stable signature, filled (inputs, else defaults)."""
    return [base.get(n, p.default) for n, p in entry.params.items() if not p.keyword_only]


@pytest.mark.parametrize("release", ["0.6.0", "0.7.4"])
@pytest.mark.parametrize("facade", ["gdn", FP4, "cutlass_fused_moe", "shuffle_matrix_a"])
def test_too_many_positional_arguments(release: str, facade: str) -> None:
    if facade == "gdn":
        f, spy, adapter = gdn(release)
        pos = _positional(adapter.entry, inputs())
    else:
        f, spy, adapter = moe_facade(facade, release)
        pos = _positional(adapter.entry, args(facade))
    exc = refused(
        spy,
        errors.PositionalMismatchError,
        f"takes at most {len(pos)} positional arguments",
        lambda: f(*pos, 0),
    )
    assert "written_for" in str(exc)


@pytest.mark.parametrize("facade", ["gdn", FP4])
def test_unknown_keyword_is_refused_with_the_closest_name(facade: str) -> None:
    if facade == "gdn":
        f, spy, _ = gdn("0.7.4")
        call = lambda: f(**inputs(), use_cp_chunk=64)  # noqa: E731
        fragment = "'use_cp_chunk'"
    else:
        f, spy, _ = moe_facade(facade, "0.7.4")
        call = lambda: f(**args(facade), do_finalise=True)  # noqa: E731
        fragment = "'do_finalise' (did you mean 'do_finalize'?)"
    refused(spy, errors.UnknownArgumentError, fragment, call)


# -- devices ------------------------------------------------------------------------


def _device_cases() -> list[tuple[str, str, str]]:
    return [("gdn", r, "q") for r in ("0.6.0", "0.7.4")] + [
        (FP4, "0.7.4", "hidden_states"),  # the TRTLLM-gen contracts' first tensor
        ("trtllm_bf16_routed_moe", "0.6.18", "hidden_states"),
        ("cutlass_fused_moe", "0.7.4", "input"),
    ]


def _call_on(facade: str, release: str, move: Any) -> tuple[Any, Any]:
    """The facade and a call with every tensor input passed through ``move``."""
    if facade == "gdn":
        f, spy, _ = gdn(release)
        kw: dict[str, Any] = inputs()
    else:
        f, spy, _ = moe_facade(facade, release)
        kw = args(facade)
    kw = {n: move(n, v) if isinstance(v, torch.Tensor) else v for n, v in kw.items()}
    return spy, lambda: f(**kw)


@pytest.mark.parametrize(("facade", "release", "first"), _device_cases())
def test_cpu_tensors_with_device_check_on(
    device_check_on: None, facade: str, release: str, first: str
) -> None:
    spy, call = _call_on(facade, release, lambda n, t: t)
    exc = refused(spy, errors.UnsupportedDeviceError, f"{first} is on cpu", call)
    assert "CUDA devices only" in str(exc)


@pytest.mark.parametrize(("facade", "release", "first"), _device_cases())
def test_meta_tensors_with_device_check_on(
    device_check_on: None, facade: str, release: str, first: str
) -> None:
    spy, call = _call_on(facade, release, lambda n, t: t.to("meta"))
    refused(spy, errors.UnsupportedDeviceError, f"{first} is on", call)


@pytest.mark.parametrize(("facade", "release", "first"), _device_cases())
def test_mixed_devices_with_device_check_on(
    device_check_on: None, facade: str, release: str, first: str
) -> None:
    spy, call = _call_on(facade, release, lambda n, t: t if n == first else t.to("meta"))
    refused(spy, errors.UnsupportedDeviceError, f"{first} is on", call)


@pytest.mark.xfail(
    strict=True,
    reason="devices are compared by Tensor.get_device(), which is -1 for both CPU and "
    "meta: a CPU/meta mix passes the metadata check (device check off) and reaches the "
    "kernel",
)
@pytest.mark.parametrize(
    ("facade", "release", "first", "other"),
    [("gdn", "0.7.4", "q", "k"), (FP4, "0.7.4", "hidden_states", "routing_logits")],
)
def test_mixed_cpu_and_meta_devices_are_not_told_apart(
    facade: str, release: str, first: str, other: str
) -> None:
    spy, call = _call_on(facade, release, lambda n, t: t.to("meta") if n == other else t)
    refused(spy, errors.InvalidArgumentError, other, call)


# -- validation off -----------------------------------------------------------------


@pytest.mark.parametrize("release", GDN_SAMPLE)
def test_validation_off_lets_metadata_errors_through(release: str) -> None:
    """Documented: with the checks off, a wrongly shaped g reaches FlashInfer; with
    them on again the same call is refused."""
    f, spy, adapter = gdn(release)
    kw = {**inputs(), "g": torch.zeros(GT)}
    adapter.set_validation(False)
    f(**kw)
    assert spy.last["g"] is kw["g"]
    adapter.set_validation(True)
    spy.calls.clear()
    spy.raw_kwargs.clear()
    refused(spy, errors.InvalidArgumentError, "g must have shape", lambda: f(**kw))


# -- fused MoE: tensors -------------------------------------------------------------


def _first(name: str) -> str:
    return "topk_ids" if "routed" in name else "routing_logits"


MOE_TENSORS = [
    (n, p, bad)
    for n in TRTLLM
    for p in (_first(n), "hidden_states")
    for bad in (ArrayLike(T, 8), [[0.0]], "x")
] + [
    ("cutlass_fused_moe", p, bad)
    for p in ("input", "token_selected_experts", "token_final_scales")
    for bad in (ArrayLike(T, K), None, [[0]])
]


@pytest.mark.parametrize("release", ["0.6.18", "0.7.4"])
@pytest.mark.parametrize(("name", "param", "bad"), MOE_TENSORS)
def test_moe_tensor_of_wrong_type(release: str, name: str, param: str, bad: Any) -> None:
    if not exists(name, release):
        pytest.skip(f"{name} is not in {release}")
    f, spy, _ = moe_facade(name, release)
    refused(spy, errors.InvalidArgumentError, param, lambda: f(**{**args(name), param: bad}))


@pytest.mark.parametrize("release", MOE_SAMPLE)
@pytest.mark.parametrize(
    ("name", "param"),
    [(n, _first(n)) for n in TRTLLM]
    + [
        (FP8_BLOCK, "hidden_states_scale"),
        ("trtllm_fp8_block_scale_routed_moe", "hidden_states_scale"),
    ],
)
def test_moe_required_tensor_is_none(release: str, name: str, param: str) -> None:
    if not exists(name, release):
        pytest.skip(f"{name} is not in {release}")
    f, spy, _ = moe_facade(name, release)
    refused(
        spy,
        errors.MissingArgumentError,
        f"{param} is required",
        lambda: f(**{**args(name), param: None}),
    )


@pytest.mark.parametrize("release", MOE_SAMPLE)
@pytest.mark.parametrize(
    ("name", "param", "bad"),
    [
        (FP4, "hidden_states_scale", ArrayLike(T, 16, dtype="uint8")),
        (FP4_ROUTED, "hidden_states_scale", ArrayLike(T, 16, dtype="uint8")),
        (FP8_BLOCK, "hidden_states_scale", ArrayLike(2, T)),
    ],
)
def test_moe_scale_of_wrong_type(release: str, name: str, param: str, bad: Any) -> None:
    f, spy, _ = moe_facade(name, release)
    refused(spy, errors.InvalidArgumentError, param, lambda: f(**{**args(name), param: bad}))


@pytest.mark.parametrize("name", [FP4, FP4_ROUTED, FP8_BLOCK])
def test_moe_scale_as_list(name: str) -> None:
    f, spy, _ = moe_facade(name, "0.7.4")
    refused(
        spy,
        errors.InvalidArgumentError,
        "hidden_states_scale",
        lambda: f(**{**args(name), "hidden_states_scale": [[1]]}),
    )


UNCHECKED_TENSORS = [
    (FP4, "gemm1_weights", None),
    (FP4, "gemm2_weights_scale", [[1]]),
    (FP8_BLOCK, "gemm1_weights", ArrayLike(E, 2 * 128, 256)),
    ("trtllm_bf16_moe", "gemm2_weights", None),
    ("cutlass_fused_moe", "fc1_expert_weights", None),
    ("shuffle_matrix_a", "input_tensor", ArrayLike(256, 64)),
    ("block_scale_interleave", "unswizzled_sf", None),
    ("reorder_rows_for_gated_act_gemm", "x", [[0.0]]),
    (FP4, "routing_bias", "bias"),
    (FP4, "gemm1_bias", 1.5),
    ("trtllm_fp8_per_tensor_scale_moe", "output1_scales_scalar", [1.0]),
]


@pytest.mark.parametrize(("name", "param", "bad"), UNCHECKED_TENSORS)
def test_moe_tensor_outside_the_metadata_checks(name: str, param: str, bad: Any) -> None:
    f, spy, _ = moe_facade(name, "0.7.4")
    error = errors.MissingArgumentError if bad is None else errors.InvalidArgumentError
    refused(spy, error, param, lambda: f(**{**args(name), param: bad}))


@pytest.mark.parametrize("release", MOE_SAMPLE)
@pytest.mark.parametrize(
    ("name", "param", "bad", "fragment"),
    [
        (FP4, "routing_logits", torch.zeros(1, T, E), "routing_logits must have shape"),
        (FP4, "hidden_states", torch.zeros(1, T, 128, dtype=torch.uint8), "must be 2-D"),
        (FP4_ROUTED, "topk_ids", torch.zeros((), dtype=torch.int32), "topk_ids must have shape"),
        ("cutlass_fused_moe", "input", torch.zeros(T), "input must be a 2-D tensor"),
    ],
)
def test_moe_wrong_rank(release: str, name: str, param: str, bad: Any, fragment: str) -> None:
    f, spy, _ = moe_facade(name, release)
    refused(spy, errors.InvalidArgumentError, fragment, lambda: f(**{**args(name), param: bad}))


@pytest.mark.parametrize("release", MOE_SAMPLE)
@pytest.mark.parametrize(
    ("name", "param", "bad", "fragment"),
    [
        (FP4, "routing_logits", torch.zeros(T, E + 1), "[num_tokens, num_experts] = (4, 8)"),
        (FP4_ROUTED, "topk_ids", torch.zeros(T, K + 1, dtype=torch.int32), "= (4, 2)"),
        (FP4, "hidden_states_scale", torch.zeros(T, 3, dtype=torch.uint8), "[4, 16]"),
        (FP8_BLOCK, "hidden_states_scale", torch.zeros(3, T), "[2, 4]"),
        ("cutlass_fused_moe", "token_final_scales", torch.zeros(T, K + 1), "[num_tokens, top_k]"),
    ],
)
def test_moe_shape_mismatch(release: str, name: str, param: str, bad: Any, fragment: str) -> None:
    f, spy, _ = moe_facade(name, release)
    exc = refused(
        spy, errors.InvalidArgumentError, fragment, lambda: f(**{**args(name), param: bad})
    )
    assert param in str(exc)


@pytest.mark.parametrize("release", MOE_SAMPLE)
@pytest.mark.parametrize(
    ("name", "kw", "fragment"),
    [
        (FP4, {"routing_logits": torch.zeros(T, E, dtype=torch.int32)}, "routing_logits must be"),
        (FP4, {"hidden_states": torch.zeros(T, 256, dtype=torch.bfloat16)}, "hidden_states_scale"),
        (FP4, {"hidden_states_scale": torch.zeros(T, 16)}, "hidden_states_scale for NVFP4"),
        (FP8_BLOCK, {"hidden_states_scale": torch.zeros(2, T).half()}, "must be float32"),
    ],
)
def test_moe_wrong_dtype(release: str, name: str, kw: dict[str, Any], fragment: str) -> None:
    f, spy, _ = moe_facade(name, release)
    refused(spy, errors.InvalidArgumentError, fragment, lambda: f(**{**args(name), **kw}))


@pytest.mark.parametrize(
    ("name", "release", "pair"),
    [(FP4_ROUTED, "0.6.0", False), (FP4_ROUTED, "0.7.4", False), (FP4_ROUTED, "0.7.4", True)],
)
def test_moe_topk_ids_float_dtype(name: str, release: str, pair: bool) -> None:
    f, spy, _ = moe_facade(name, release)
    ids = torch.zeros(T, K)
    topk = (ids, torch.rand(T, K)) if pair else ids
    refused(
        spy, errors.InvalidArgumentError, "topk_ids", lambda: f(**{**args(name), "topk_ids": topk})
    )


@pytest.mark.parametrize("release", ["0.6.0", "0.6.11"])  # packed there (pairs from 0.6.12)
def test_moe_pair_with_float_ids_where_packed(release: str) -> None:
    f, spy, _ = moe_facade(FP4_ROUTED, release)
    pair = (torch.zeros(T, K), torch.rand(T, K))
    refused(
        spy,
        errors.InvalidArgumentError,
        "topk_ids[0] holds expert ids: an integer dtype",
        lambda: f(**{**args(FP4_ROUTED), "topk_ids": pair}),
    )


ROUTED = [n for n in TRTLLM if "routed" in n]


@pytest.mark.parametrize("release", ["0.6.11", "0.6.17", "0.7.4"])
@pytest.mark.parametrize("name", ROUTED)
@pytest.mark.parametrize(
    ("weights", "fragment"),
    [
        (torch.rand(T, K + 1), "topk_ids[1] must have shape"),
        (torch.rand(T + 1, K), "topk_ids[1] must have shape"),
        ([[0.5] * K] * T, "topk_ids[1] must have shape"),
        ("third", "topk_ids must be a tensor or (ids, weights)"),
    ],
)
def test_moe_routed_pair_mismatch(release: str, name: str, weights: Any, fragment: str) -> None:
    if not exists(name, release):
        pytest.skip(f"{name} is not in {release}")
    f, spy, _ = moe_facade(name, release)
    ids = torch.randint(0, E, (T, K), dtype=torch.int32)
    pair = (ids, torch.rand(T, K), ids) if weights == "third" else (ids, weights)
    refused(
        spy, errors.InvalidArgumentError, fragment, lambda: f(**{**args(name), "topk_ids": pair})
    )


# -- fused MoE: scalars and enums ---------------------------------------------------


@pytest.mark.parametrize("release", ["0.5.0", "0.7.4"])
def test_moe_bool_flag_as_tensor(release: str) -> None:
    name = "trtllm_fp8_per_tensor_scale_moe"
    f, spy, _ = moe_facade(name, release)
    flag = torch.zeros(2, 2)
    refused(
        spy,
        errors.InvalidArgumentError,
        "use_routing_scales_on_input",
        lambda: f(**{**args(name), "use_routing_scales_on_input": flag}),
    )


@pytest.mark.parametrize("release", MOE_SAMPLE)
@pytest.mark.parametrize(
    ("param", "bad", "error", "fragment"),
    [
        ("num_experts", None, errors.InvalidArgumentError, "num_experts and top_k must be ints"),
        ("num_experts", 8.0, errors.InvalidArgumentError, "num_experts=8.0"),
        ("top_k", "2", errors.InvalidArgumentError, "top_k='2'"),
        ("top_k", torch.tensor(2), errors.InvalidArgumentError, "top_k=tensor(2)"),
        ("top_k", 0, errors.InvalidArgumentError, "0 < top_k <= num_experts"),
        ("top_k", E + 1, errors.InvalidArgumentError, "0 < top_k <= num_experts"),
        ("intermediate_size", None, errors.MissingArgumentError, "intermediate_size is required"),
        ("local_expert_offset", 0.0, errors.InvalidArgumentError, "local_expert_offset must be"),
        ("n_group", "1", errors.InvalidArgumentError, "n_group must be int or None"),
        ("routed_scaling_factor", "1.0", errors.InvalidArgumentError, "routed_scaling_factor"),
        ("do_finalize", None, errors.MissingArgumentError, "do_finalize is required"),
        ("do_finalize", 1, errors.InvalidArgumentError, "do_finalize must be bool"),
        ("tune_max_num_tokens", "8192", errors.InvalidArgumentError, "tune_max_num_tokens"),
        ("enable_pdl", "yes", errors.InvalidArgumentError, "enable_pdl must be bool or None"),
    ],
)
def test_moe_scalar_of_wrong_type(
    release: str, param: str, bad: Any, error: type[Exception], fragment: str
) -> None:
    f, spy, _ = moe_facade(FP4, release)
    refused(spy, error, fragment, lambda: f(**{**args(FP4), param: bad}))


@pytest.mark.parametrize("release", MOE_SAMPLE)
@pytest.mark.parametrize("param", ["routing_method_type", "activation_type"])
@pytest.mark.parametrize("bad", [None, "Renormalize", 1.0, True, [1]])
def test_enum_of_wrong_type(release: str, param: str, bad: Any) -> None:
    f, spy, _ = moe_facade(FP4, release)
    refused(
        spy,
        errors.InvalidArgumentError,
        f"{param}=...): expected a fi_compat.enums.",
        lambda: f(**args(FP4), **{param: bad}),
    )


class RoutingMethodTypeOfAnEngine(enum.IntEnum):
    """An engine's copy with a member fi_compat has never heard of."""

    Renormalize = 1
    Experimental = 77


@pytest.mark.parametrize("release", MOE_SAMPLE)
def test_engine_enum_member_without_counterpart(release: str) -> None:
    f, spy, _ = moe_facade(FP4, release)
    refused(
        spy,
        errors.InvalidArgumentError,
        "RoutingMethodType.Experimental has no fi_compat counterpart",
        lambda: f(**args(FP4), routing_method_type=RoutingMethodTypeOfAnEngine.Experimental),
    )


@pytest.mark.parametrize("release", MOE_SAMPLE)
@pytest.mark.parametrize(
    ("param", "value", "fragment"),
    [
        ("activation_type", 0, "the raw integer 0 is ambiguous here"),  # SwiGlu vs Gelu
        ("routing_method_type", 6, "the raw integer 6 has meant different members"),
    ],
)
def test_ambiguous_raw_enum_integer(release: str, param: str, value: int, fragment: str) -> None:
    f, spy, _ = moe_facade(FP4, release)
    exc = refused(
        spy, errors.InvalidArgumentError, fragment, lambda: f(**args(FP4), **{param: value})
    )
    assert f"{param}=" in str(exc)


@pytest.mark.parametrize("release", MOE_SAMPLE)
@pytest.mark.parametrize(
    ("kw", "fragment"),
    [
        (
            {"gated_act_type": GatedActType.SwiGlu, "activation_type": ActivationType.Geglu},
            "disagree; pass only activation_type",
        ),
        ({"gated_act_type": 5}, "gated_act_type must be fi_compat.enums.GatedActType"),
        ({"gated_act_type": "GeGlu"}, "gated_act_type must be fi_compat.enums.GatedActType"),
    ],
)
def test_gated_act_type_conflicts(release: str, kw: dict[str, Any], fragment: str) -> None:
    f, spy, _ = moe_facade(FP4, release)
    refused(spy, errors.InvalidArgumentError, fragment, lambda: f(**args(FP4), **kw))


@pytest.mark.parametrize("release", MOE_SAMPLE)
@pytest.mark.parametrize("name", [FP4, FP4_ROUTED])
def test_swizzled_scale_layout(release: str, name: str) -> None:
    f, spy, _ = moe_facade(name, release)
    refused(
        spy,
        errors.InvalidArgumentError,
        "hidden_states_scale_layout=SfLayout.layout_128x4",
        lambda: f(**args(name), hidden_states_scale_layout=SfLayout.layout_128x4),
    )


# -- values the fast path does not read ---------------------------------------------


@pytest.mark.parametrize(
    ("facade", "release", "kw"),
    [
        ("gdn", "0.7.4", {"cu_seqlens": torch.tensor([0, 12, 5], dtype=torch.int32)}),
        ("gdn", "0.7.4", {"cu_seqlens": torch.tensor([3, 5, 12], dtype=torch.int32)}),
        ("gdn", "0.6.0", {"cu_seqlens": torch.tensor([0, 5, 99], dtype=torch.int64)}),
        ("gdn", "0.7.4", {"cu_seqlens": torch.tensor([0, 5, 2**33], dtype=torch.int64)}),
        (FP4_ROUTED, "0.7.4", {"topk_ids": torch.full((T, K), E + 3, dtype=torch.int32)}),
        ("cutlass_fused_moe", "0.7.4", {"token_selected_experts": torch.full((T, K), -1)}),
    ],
)
def test_value_properties_are_not_read(facade: str, release: str, kw: dict[str, Any]) -> None:
    """Metadata only: the fast path never reads tensor values (no host sync), so these
    reach FlashInfer; FI_COMPAT_DEBUG=1 is the mode that checks them."""
    if facade == "gdn":
        f, spy, _ = gdn(release)
        base: dict[str, Any] = inputs()
    else:
        f, spy, _ = moe_facade(facade, release)
        base = args(facade)
    f(**{**base, **kw})
    assert len(spy.calls) == 1


# -- installation faults (fresh interpreters) ---------------------------------------

PROBE = """
import json, sys
def report(exc, reached):
    print(json.dumps({{"type": type(exc).__name__ if exc else None,
                      "mro": [c.__name__ for c in type(exc).__mro__] if exc else [],
                      "msg": str(exc) if exc else "", "attrs": getattr(exc, "__dict__", {{}}),
                      "reached": reached}}, default=str))
try:
    {call}
    err = None
except Exception as e:
    err = e
fi = sys.modules.get("flashinfer.gdn_prefill")
report(err, bool(getattr(fi, "CALLED", False)))
"""
GDN_CALL = (
    "import torch; from fi_compat.gdn_prefill import chunk_gated_delta_rule as f; "
    "q = torch.zeros(4, 1, 8); f(q, q, q, cu_seqlens=torch.tensor([0, 4], dtype=torch.int32))"
)
# a problem adapter refuses before reading its arguments (no torch needed)
GDN_CALL_NO_TORCH = "from fi_compat.gdn_prefill import chunk_gated_delta_rule as f; f(0, 0, 0)"


def probe(
    env: dict[str, str], call: str = GDN_CALL, path: list[str] | None = None
) -> dict[str, Any]:
    env = {"FI_COMPAT_ALLOW_CPU": "1", **env}
    r = run_python(PROBE.format(call=call), env=env, path=path)
    assert r.returncode == 0, r.stderr
    out: dict[str, Any] = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["type"] is not None, "no error"
    assert "FiCompatError" in out["mro"]
    assert out["reached"] is False
    return out


def fake_flashinfer(root: Path, body: str, version: str = "0.6.15") -> str:
    """A ``flashinfer`` package whose ``gdn_prefill`` module is ``body`` (None: absent);
    its function records a call in ``CALLED``."""
    pkg = root / "flashinfer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(f"__version__ = {version!r}\n")
    if body is not None:
        (pkg / "gdn_prefill.py").write_text(
            body + "\nCALLED = False\ndef chunk_gated_delta_rule(*a, **k):\n"
            "    global CALLED\n    CALLED = True\n"
        )
    return str(root)


def test_flashinfer_not_installed() -> None:
    out = probe({"FI_COMPAT_FLASHINFER_VERSION": "none"}, GDN_CALL_NO_TORCH)
    assert out["type"] == "FlashInferNotInstalledError" and "ImportError" in out["mro"]
    assert "chunk_gated_delta_rule" in out["msg"] and "pip install" in out["msg"]


@pytest.mark.parametrize(
    ("call", "release", "since"),
    [
        (GDN_CALL_NO_TORCH, "0.5.3", "0.6.0"),
        (
            "from fi_compat.fused_moe import trtllm_bf16_routed_moe as f; f(0, 0, 0, 0, 0, 0, 0, "
            "0, 0, 0, 0, 0)",
            "0.6.4",
            "0.6.5",
        ),
        (GDN_CALL_NO_TORCH, "0.3.1", "0.6.0"),  # older than every known release
    ],
)
def test_release_below_the_floor(call: str, release: str, since: str) -> None:
    out = probe({"FI_COMPAT_FLASHINFER_VERSION": release}, call)
    assert out["type"] == "UnsupportedFlashInferVersionError" and "ImportError" in out["mro"]
    assert (
        f"installed: {release}" in out["msg"]
        and f"exists from flashinfer-python {since}" in out["msg"]
    )


def test_strict_mode_with_a_newer_release() -> None:
    out = probe(
        {"FI_COMPAT_FLASHINFER_VERSION": "0.9.0", "FI_COMPAT_STRICT": "1"}, GDN_CALL_NO_TORCH
    )
    assert out["type"] == "UntestedFlashInferVersionError"
    assert "UnsupportedFlashInferVersionError" in out["mro"] and "FI_COMPAT_STRICT" in out["msg"]


@pytest.mark.parametrize("value", ["garbage", "", "0.7.x"])
def test_invalid_version_override(value: str) -> None:
    """Raised at adapter selection (the first call; facade modules import lazily)."""
    out = probe({"FI_COMPAT_FLASHINFER_VERSION": value}, GDN_CALL_NO_TORCH)
    assert out["type"] == "InvalidArgumentError" and "ValueError" in out["mro"]
    assert f"FI_COMPAT_FLASHINFER_VERSION={value!r} is not a valid override" in out["msg"]


CLI_JSON = """
import contextlib, io, json
from fi_compat.cli import main
out = {}
for cmd in ("doctor", "info"):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main([cmd, "--json"])
    out[cmd] = json.loads(buf.getvalue())
print(json.dumps(out))
"""


def test_a_recorded_version_that_is_no_version_has_one_verdict(tmp_path: Path) -> None:
    """``Version: banana`` in the dist-info: the call, ``doctor`` and ``info`` all say the
    version is invalid (not "below the floor")."""
    d = tmp_path / "flashinfer_python-banana.dist-info"
    d.mkdir()
    (d / "METADATA").write_text("Metadata-Version: 2.1\nName: flashinfer-python\nVersion: banana\n")
    out = probe({}, GDN_CALL_NO_TORCH, path=[str(tmp_path)])
    assert out["type"] == "UnsupportedFlashInferVersionError"
    assert "'banana' is not a PEP 440 version" in out["msg"] and "older" not in out["msg"]
    r = run_python(CLI_JSON, path=[str(tmp_path)])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    doctor, info = out["doctor"], out["info"]
    assert "invalid-version" in str(doctor) and "below-floor" not in str(doctor)
    gdn = next(v for k, v in info["entry_points"].items() if k.endswith("chunk_gated_delta_rule"))
    assert gdn["verdict"]["code"] == "invalid-version" and "PEP 440" in gdn["detail"]


@pytest.mark.parametrize(
    ("module", "package", "extra"),
    [("cutlass", "nvidia-cutlass-dsl", "cu12"), ("tvm_ffi", "apache-tvm-ffi", None)],
)
def test_optional_dependency_missing(
    tmp_path: Path, module: str, package: str, extra: str | None
) -> None:
    path = fake_flashinfer(tmp_path, f"import {module}")
    out = probe({"FI_COMPAT_FLASHINFER_VERSION": "0.6.15"}, path=[path])
    assert out["type"] == "OptionalDependencyMissingError" and "ImportError" in out["mro"]
    assert out["attrs"]["package"] == package and out["attrs"]["extra"] == extra
    assert f"pip install {package}" in out["msg"] or f"[{extra}]" in out["msg"]


def test_flashinfer_import_fails(tmp_path: Path) -> None:
    path = fake_flashinfer(tmp_path, "raise RuntimeError('CUDA driver too old')")
    out = probe({"FI_COMPAT_FLASHINFER_VERSION": "0.6.15"}, path=[path])
    assert out["type"] == "FlashInferImportError"
    assert "import flashinfer.gdn_prefill failed" in out["msg"]
    assert "RuntimeError: CUDA driver too old" in out["msg"]


def test_incomplete_installation(tmp_path: Path) -> None:
    path = fake_flashinfer(tmp_path, None)  # type: ignore[arg-type]
    out = probe({"FI_COMPAT_FLASHINFER_VERSION": "0.6.15"}, path=[path])
    assert out["type"] == "FlashInferImportError" and "installation is incomplete" in out["msg"]


def test_function_missing_from_module(tmp_path: Path) -> None:
    pkg = Path(fake_flashinfer(tmp_path, "")) / "flashinfer" / "gdn_prefill.py"
    pkg.write_text("CALLED = False\n")  # the module imports, the function is not there
    out = probe({"FI_COMPAT_FLASHINFER_VERSION": "0.6.15"}, path=[str(tmp_path)])
    assert out["type"] == "UnsupportedFlashInferVersionError"
    assert "chunk_gated_delta_rule does not exist in flashinfer-python 0.6.15" in out["msg"]


def test_imported_release_differs_from_metadata(tmp_path: Path) -> None:
    path = fake_flashinfer(tmp_path, "", version="0.7.3")
    meta = tmp_path / "flashinfer_python-0.7.4.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: flashinfer-python\nVersion: 0.7.4\n"
    )
    out = probe({}, path=[path])
    assert out["type"] == "FlashInferVersionMismatchError"
    assert out["attrs"]["detected"] == "0.7.4" and out["attrs"]["imported"] == "0.7.3"


# -- the doc table ------------------------------------------------------------------

DOC = ROOT / "docs" / "bad-input.md"
NAMED = re.compile(r"`(test_\w+)`")


def _module_tests() -> set[str]:
    tree = ast.parse(Path(__file__).read_text())
    return {
        n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
    }


def _table_rows() -> list[str]:
    return [
        line for line in DOC.read_text().splitlines() if line.startswith("| ") and "`test_" in line
    ]


def test_every_test_named_in_the_doc_exists() -> None:
    named = {m for row in _table_rows() for m in NAMED.findall(row)}
    assert named, "no test named in docs/bad-input.md"
    assert named <= _module_tests(), sorted(named - _module_tests())


def test_every_test_is_named_in_the_doc() -> None:
    named = {m for row in _table_rows() for m in NAMED.findall(row)}
    doc_tests = {
        "test_every_test_named_in_the_doc_exists",
        "test_every_test_is_named_in_the_doc",
        "test_xfail_rows_are_marked_in_the_doc",
    }
    missing = _module_tests() - named - doc_tests
    assert not missing, sorted(missing)


def test_xfail_rows_are_marked_in_the_doc() -> None:
    """A row pinned by a strict xfail says so (the doc does not claim a refusal that
    does not happen)."""
    tree = ast.parse(Path(__file__).read_text())
    xfails = {
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef)
        and any("xfail" in ast.unparse(d) for d in n.decorator_list)
    }
    for row in _table_rows():
        for name in NAMED.findall(row):
            assert (name in xfails) == ("**not yet**" in row), (name, row)
