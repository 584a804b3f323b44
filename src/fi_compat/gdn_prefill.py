"""Stable facade of ``flashinfer.gdn_prefill`` (gated delta rule, chunked prefill).

Importing this module reads the installed ``flashinfer-python`` version from package
metadata (FlashInfer itself is imported on the first call) and builds
:func:`chunk_gated_delta_rule` for that release.  ``chunk_gated_delta_rule.adapter``
describes the choice; ``chunk_gated_delta_rule.raw()`` returns FlashInfer's own function.
"""

from __future__ import annotations

from ._adapters.gdn_prefill import SPEC
from ._core import lazy_facades

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Literal

    import torch

__all__: list[str] = []  # every entry point joins it (lazy_facades)


def chunk_gated_delta_rule(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor | None = None,
    beta: torch.Tensor | None = None,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    output_final_state: bool = False,
    cu_seqlens: torch.Tensor | None = None,
    use_qk_l2norm_in_kernel: bool = False,
    output: torch.Tensor | None = None,
    output_state: torch.Tensor | None = None,
    state_checkpoints: torch.Tensor | None = None,
    checkpoint_cu_starts: torch.Tensor | None = None,
    checkpoint_every_n_tokens: int = 0,
    use_cp: Literal["auto"] | bool = "auto",
    state_indices: torch.Tensor | None = None,
    _cp_chunk_len: int | None = None,
    backend: Literal["auto", "flashinfer", "cake_gdn", "cudnn", "sm120_cute"] = "auto",
    max_seqlen: int | None = None,
    *,
    gate_domain: Literal["linear", "log"] = "linear",
    use_gate_in_kernel: bool = False,
    A_log: torch.Tensor | None = None,
    dt_bias: torch.Tensor | None = None,
    beta_is_logit: bool = False,
    cu_seqlens_cpu: Sequence[int] | torch.Tensor | None = None,
    output_state_indices: torch.Tensor | None = None,
    checkpoint_state_indices: torch.Tensor | None = None,
    prefix_lens: torch.Tensor | None = None,
    **kwargs: Any,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    r"""Chunked gated delta rule (GDN) prefill, one signature for flashinfer-python 0.6.0+.

    The positional order is fi_compat's and frozen: it is 0.7.4's order, which extends
    every earlier release's, so positional calls written against any release keep their
    meaning.  FlashInfer is always called by keyword.

    Parameters
    ----------
    q, k, v : torch.Tensor
        ``[total_seq_len, num_{q,k,v}_heads, head_size]``, packed varlen layout (a
        ``[1, T, H, D]`` FLA-layout tensor needs ``.squeeze(0)``).  GQA
        (``num_q_heads > num_k_heads == num_v_heads``) and GVA
        (``num_v_heads > num_q_heads == num_k_heads``).
    g : torch.Tensor, optional
        Forget gate ``[total_seq_len, num_sab_heads]``, ``num_sab_heads =
        max(num_q_heads, num_v_heads)``; linear alpha (not log) unless
        ``gate_domain="log"`` or ``use_gate_in_kernel=True``.  ``None``: no decay.
    beta : torch.Tensor, optional
        Update gate ``[total_seq_len, num_sab_heads]`` (logits with ``beta_is_logit``).
    scale : float, optional
        Attention scale, default ``1 / sqrt(head_size)`` on every release.
    initial_state : torch.Tensor, optional
        ``[num_seqs, num_sab_heads, head_size, head_size]``, or the state pool
        ``[N_pool, ...]`` with ``state_indices``.  float32, bfloat16, float16,
        float8_e4m3fn or float8_e5m2 (also for ``output_state`` and
        ``state_checkpoints``) on every release: where the release's kernel for the GPU
        reads float32 only (SM90/SM120 before 0.7.0; SM100 before 0.6.8, or for all but
        bf16 before 0.6.14) fi_compat widens the states to float32 and rounds the final
        state once into the caller's tensor, as 0.7.0+ store it (fp8 saturating).  The
        final state FlashInfer allocates itself is float32 on every release.
    output_final_state : bool
        Return ``(output, final_state)`` instead of ``output``; the same on every release.
    cu_seqlens : torch.Tensor
        Required. ``[num_seqs + 1]`` cumulative sequence lengths, int32 or int64, on q's
        device.  fi_compat hands FlashInfer the dtype the release reads natively and does
        not copy when it already has it: **int64 for 0.6.0–0.6.18.post1** (their SM90
        kernels take int64; int32 is cast), **int32 for 0.7.0+** (int32 launch metadata;
        int64 is cast, keeping one compiled kernel variant instead of two).  Repeated
        offsets are zero-length sequences (their final state is their initial state,
        zero without one); on SM90 they need ``cu_seqlens_cpu`` (see there).
    use_qk_l2norm_in_kernel : bool
        L2-normalise q and k before the recurrence.  Honoured by FlashInfer from 0.7.1
        (``normalize_qk`` before dispatch); 0.6.0-0.7.0 accept and ignore it, so
        fi_compat applies 0.7.1's formula there (float32 rows, ``rsqrt(sum(x^2) +
        1e-6)``, rounded to q's dtype) and passes ``False``: the same result on every
        release.
    output, output_state : torch.Tensor, optional
        Preallocated output ``[total_seq_len, num_sab_heads, head_size]`` and final state.
    state_checkpoints, checkpoint_cu_starts, checkpoint_every_n_tokens
        Intermediate-state checkpoints, flashinfer>=0.6.8.  Older releases: dropped at
        their defaults (``None``, ``None``, ``0``), else ``UnsupportedParameterError``.
        ``checkpoint_cu_starts`` is handed over as int64 (0.6.x; 0.6.8–0.6.12 accept
        nothing else) or int32 (0.7.0+).
    use_cp : {"auto", True, False}
        Context-parallel kernels, flashinfer>=0.6.14.  Older releases have no CP:
        ``"auto"`` and ``False`` are dropped, ``True`` raises.
    state_indices : torch.Tensor, optional
        ``[num_seqs]`` pool rows: sequence ``i`` reads ``initial_state[state_indices[i]]``
        and writes its final state to ``output_state[state_indices[i]]`` (``output_state``
        is then required with ``output_final_state=True`` and is what is returned).
        Native where the release serves it (0.6.16–0.6.18.post1: SM100/SM103; 0.7.0+:
        SM90/SM100/SM103/SM120; 0.7.4: also SM8x); everywhere else, before 0.6.16
        included, **emulated exactly** by gathering the rows (as float32), a packed call
        and a scatter back into the pool, rounded once to the pool dtype as the native
        pools store it (float8 saturating at +-finfo.max, never inf / NaN; written as
        bytes, torch having no float8 ``index_copy_``).  On 0.6.16–0.6.17
        ``use_cp="auto"`` becomes ``False`` for pool calls (their CP kernel rejects
        pools).
    _cp_chunk_len : int, optional
        Internal CP chunk-length override, flashinfer>=0.7.0; else raises if set.
    backend : {"auto", "flashinfer", "cake_gdn", "cudnn", "sm120_cute"}
        flashinfer>=0.7.0 (``cudnn`` 0.7.1, ``sm120_cute`` 0.7.4).  Before 0.7.0 the
        FlashInfer kernels are the only backend: ``"auto"``/``"flashinfer"`` are dropped,
        the others raise ``UnsupportedParameterError`` naming the first release.
    max_seqlen : int, optional
        Host-side bound on the longest sequence for CP grids, flashinfer>=0.7.1;
        a hint, dropped on older releases.
    gate_domain, use_gate_in_kernel, A_log, dt_bias, beta_is_logit
        0.7.4's gate conventions (``g`` as log alpha; ``g`` raw with
        ``log alpha = -exp(A_log) * softplus(g + dt_bias)``; ``beta`` as logits).  On older
        releases **emulated exactly** as 0.7.4 materialises them for its non-cuDNN
        backends (float32 ``exp``/``softplus``/``sigmoid`` before the call).
    cu_seqlens_cpu : sequence of int or CPU tensor, optional
        Host copy of ``cu_seqlens``, flashinfer>=0.7.4 (a hint, dropped on older
        releases).  On SM90 fi_compat reads it for zero-length sequences: 0.6.0-0.6.13
        never return from a launch that has one, so they are left out of the launch;
        0.6.14-0.7.4 leave their final-state rows unwritten, so fi_compat writes the
        initial state there (in the pool with ``state_indices``).  Without it (and
        without the debug mode) such calls go to FlashInfer as they are: known issues
        ``gdn-sm90-empty-sequence-hang`` and ``gdn-sm90-empty-sequence-state``.
    output_state_indices, checkpoint_state_indices, prefix_lens : torch.Tensor, optional
        flashinfer>=0.7.4 only; older releases raise ``UnsupportedParameterError``
        unless left at ``None``.
    **kwargs
        Passed through to FlashInfer unchanged (options fi_compat does not know yet).

    Returns
    -------
    torch.Tensor or tuple of torch.Tensor
        ``output``, or ``(output, final_state)`` when ``output_final_state=True`` (the
        pool ``output_state`` itself when ``state_indices`` is given).

    Raises
    ------
    MissingArgumentError, InvalidArgumentError
        Before any launch, from metadata only: ``cu_seqlens`` missing / not 1-D / not an
        integer dtype, tensors on different devices, q/k/v not 3-D or disagreeing in
        tokens or head size, ``g``/``beta`` of the wrong shape.
    UnsupportedParameterError
        A parameter or value the installed release lacks and fi_compat cannot emulate.
    FlashInferNotInstalledError, UnsupportedFlashInferVersionError, FlashInferImportError,
    OptionalDependencyMissingError
        At the first call: FlashInfer missing or outside 0.6.0+, its import failing
        (e.g. ``nvidia-cutlass-dsl`` missing for 0.6.15+, or a CPU-only torch).
    """
    raise NotImplementedError  # pragma: no cover - replaced by the generated facade


lazy_facades(globals(), [SPEC])

# FlashInfer's other names and submodules of this module resolve here too, as the same
# objects (generated data: fi_compat._locations; see fi_compat._locate)
from ._locate import install as _install_locations  # noqa: E402

_install_locations(globals())
