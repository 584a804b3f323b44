"""``fi_compat.norm`` and ``fi_compat.activation`` on every release 0.2.0.post1-0.7.4 that
has each function, each call bound against the release's snapshot signature (the cases
live in ``tests/support/elementwise_cases.py``; tests/live repeats them against the
installed releases' live signatures)."""

from support.elementwise_cases import (  # noqa: F401  (pytest collects the imported tests)
    test_activation_hidden_size_the_kernel_cannot_align,
    test_bad_input_is_refused_before_the_call,
    test_enable_pdl_means_the_newest_meaning_on_every_release,
    test_every_function_covers_every_release_that_has_it,
    test_fp8_quant_scale_is_a_float_everywhere_and_a_tensor_from_0_6_7,
    test_positional_and_keyword_calls_give_the_kernel_result,
    test_qk_rmsnorm_cute_passes_enable_pdl_and_weight_bias_as_they_are,
    test_rmsnorm_fp4quant_entry_point,
    test_rmsnorm_fp4quant_on_every_release,
    test_rmsnorm_fp4quant_spy_knows_the_padding_difference,
    test_rmsnorm_fp4quant_swizzled_padding_is_zero_on_every_release,
    test_rmsnorm_fp4quant_without_the_cute_dsl,
    test_rmsnorm_takes_3d_input_on_every_release,
)
