"""Adapter tables for ``flashinfer.autotuner`` (a module from 0.2.6, a package with the
same names from 0.6.15: ``flashinfer/autotuner/autotuner.py``).

Read from the released sources (``_snapshots/autotuner.*.json``):

* ``autotune(tune_mode=True)`` (0.2.6, a ``@contextlib.contextmanager``); appended
  options, each ``None`` = inherit the enclosing context / the default: ``cache`` 0.6.7,
  ``tuning_buckets`` and ``round_up`` 0.6.9, ``skip_ops`` 0.6.13,
  ``cuda_graph_profile_replays`` 0.7.0, ``tie_tolerance`` 0.7.4.  Before 0.2.6 there is
  no autotuner (every kernel runs its fixed configuration): the whole entry point is a
  no-op context manager there (``EntryPoint(fallback=)``), exact because nothing reads
  a tuning state; its options are refused there as on the releases that lack them.
* ``set_autotune_process_group(group)`` (0.6.16), unchanged.
* re-exported classes, whose constructors are recorded by ``tools/snapshot.py`` (a
  dataclass's fields): ``AutoTuner`` (0.2.6; ``__init__(warmup, repeat,
  stream_delay_micro_secs)`` and ``AutoTuner.get()`` unchanged), ``ConstraintSpec``
  (0.2.9, unchanged), ``DynamicTensorSpec`` (0.2.9; ``tensor_initializers`` only
  0.2.13-0.6.17, moved to ``TuningConfig`` in 0.6.18), ``TuningConfig`` (0.2.6 with the
  fields ``dynamic_tensors`` / ``constraints``, renamed ``dynamic_tensor_specs`` /
  ``constraint_specs`` in 0.2.9, so served from 0.2.9; keyword-only fields appended:
  ``use_cold_l2_cache`` / ``use_cuda_graph`` 0.6.5, ``inputs_pre_hook`` 0.6.12,
  ``tensor_initializers`` / ``value_aware_input_indices`` / ``profile_arena_input_indices``
  0.6.18, ``cuda_graph_profile_replays`` / ``profiling_repeat`` /
  ``use_cold_l2_graph_replay`` 0.7.0, ``cold_chain_launches`` /
  ``use_cuda_graph_individual_timing`` 0.7.4).
* ``autotuner_initializer_empty(shapes, dtype, device)`` (0.6.15
  ``autotuner/initializers.py``, an alias of its ``_empty``: ``torch.empty(shapes,
  dtype=dtype, device=device)``), one signature through 0.7.4: re-exported as FlashInfer's
  own function, the object a ``tensor_initializers`` list holds (``DynamicTensorSpec``'s
  0.6.15-0.6.17, ``TuningConfig``'s from 0.6.18); before 0.6.15 the typed error.
"""

from __future__ import annotations

from .._core import EntryPoint, Param
from .._core.reexport import Reexport
from ..errors import UnknownArgumentError, UnsupportedParameterError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FACADE = "fi_compat.autotuner"
MODULE = "flashinfer.autotuner"
_INHERIT = "None inherits (the enclosing context's value, else the default)"


def _no_op_autotune(tune_mode: bool = True, **options: Any) -> Any:
    """``autotune`` before 0.2.6: nothing to tune, so nothing to do (a no-op context
    manager); an option other than ``None`` is refused, as on 0.2.6+ releases without it."""
    import contextlib

    from ..detection import detect

    e = SPECS["autotune"]
    fi = detect().flashinfer
    for name, value in options.items():
        p = e.params.get(name)
        if p is None:
            raise UnknownArgumentError(
                f"{e.dotted}() got an unexpected keyword argument {name!r}: neither the "
                f"stable signature nor a release before 0.2.6 (no autotuner) has it"
            )
        if value is not None:
            since = p.since or e.since
            raise UnsupportedParameterError(
                f"{e.dotted}({name}={value!r}) needs flashinfer-python>={since} (the "
                f"autotuner arrived in 0.2.6; before it autotune is a no-op). Fix: pip "
                f"install 'flashinfer-python>={since}', or leave {name} at None",
                parameter=name,
                installed=fi.version if fi is not None else "?",
                minimum=since,
            )
    return contextlib.nullcontext()


def _option(name: str) -> Param:
    return Param(name, note=_INHERIT)


SPECS: dict[str, EntryPoint] = {
    "autotune": EntryPoint(
        facade=FACADE,
        name="autotune",
        module=MODULE,
        params=(
            Param("tune_mode", note="profile uncovered shapes (False: cached tactics only)"),
            Param("cache", note="JSON file of tactics, loaded on entry, saved on exit"),
            *(
                _option(n)
                for n in (
                    "tuning_buckets",
                    "round_up",
                    "skip_ops",
                    "cuda_graph_profile_replays",
                    "tie_tolerance",
                )
            ),
        ),
        fallback=_no_op_autotune,
        feature="autotuner",
        matrix_note="before 0.2.6: a no-op context manager (no autotuner, nothing to tune)",
    ),
    "set_autotune_process_group": EntryPoint(
        facade=FACADE,
        name="set_autotune_process_group",
        module=MODULE,
        params=(Param("group", note="torch.distributed process group, None disables"),),
        feature="autotuner",
    ),
}
ENTRIES = list(SPECS.values())


def _class(name: str, note: str, floor: str | None = None, ref: str = "") -> Reexport:
    return Reexport(
        facade=FACADE,
        name=name,
        module=MODULE,
        floor=floor,
        note=note,
        ref=ref,
        feature="autotuner",
    )


ALL_REEXPORTS: list[Reexport] = [
    _class("AutoTuner", "the autotuner (a per-process singleton: AutoTuner.get())"),
    _class(
        "TuningConfig",
        "what a tunable op profiles (dynamic tensors, constraints, profiling options)",
        floor="0.2.9",
        ref="0.2.9 renamed dynamic_tensors / constraints to dynamic_tensor_specs / "
        "constraint_specs",
    ),
    _class("ConstraintSpec", "a dimension computed from the profiled shapes"),
    _class("DynamicTensorSpec", "a tensor dimension profiled over buckets"),
    _class(
        "autotuner_initializer_empty",
        "the profiling tensor initializer ``(shapes, dtype, device) -> torch.empty(...)``, "
        "FlashInfer's own function (for ``tensor_initializers``)",
    ),
]
