"""The MoE weight-layout helpers as each release really computes them, for the static
suite: their sources are pure torch, so the release's own functions are read out of its
wheel (``~/.cache/fi_compat/wheels``, the archives tools/snapshot.py reads), compiled and
run on CPU as the facade's target -- the real function, bound to the real signature,
with the release's own cache key and assertions.  Nothing is installed or imported
from FlashInfer; the live suite (tests/live) repeats the comparison against installed
releases.

``load(release)`` returns ``{name: function}`` (``None`` where the archive is absent).
"""

from __future__ import annotations

import ast
import functools
import zipfile
from pathlib import Path
from typing import Any, Optional, Union

import torch

WHEELS = Path.home() / ".cache" / "fi_compat" / "wheels"

# the module-level names each source file contributes (functions and the row maps)
_UTILS = (
    "srcToDstBlk16RowMap",
    "srcToDstBlk32RowMap",
    "get_shuffle_block_size",
    "_unaligned_rows_message",
    "get_shuffle_matrix_a_row_indices",
    "get_shuffle_matrix_sf_a_row_indices",
)
_CORE = (
    "get_reorder_rows_for_gated_act_gemm_row_indices",
    "_maybe_get_cached_w3_w1_permute_indices",
    "get_w2_permute_indices_with_cache",
    "convert_to_block_layout",
    "interleave_moe_scales_for_sm90_mixed_gemm",
)


def _defs(source: str, names: tuple[str, ...]) -> str:
    out = []
    for node in ast.parse(source).body:
        bound = (
            [node.name]
            if isinstance(node, ast.FunctionDef)
            else [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
        )
        if any(n in names for n in bound):
            if isinstance(node, ast.FunctionDef):
                node.decorator_list = []
            out.append(ast.unparse(node))
    return "\n\n".join(out)


@functools.cache
def load(release: str) -> dict[str, Any] | None:
    wheel = WHEELS / f"flashinfer_python-{release}-py3-none-any.whl"
    if not wheel.exists():
        return None
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())

        def read(path: str) -> str:
            return z.read(path).decode() if path in names else ""

        utils = read("flashinfer/utils.py")
        core = read("flashinfer/fused_moe/core.py") + "\n" + read("flashinfer/fused_moe/prepare.py")
    ns: dict[str, Any] = {"torch": torch, "Union": Union, "Optional": Optional}
    exec(compile(_defs(utils, _UTILS), f"<{release} utils.py>", "exec"), ns)
    exec(compile(_defs(core, _CORE), f"<{release} fused_moe/core.py>", "exec"), ns)
    fns = {n: ns[n] for n in (*_UTILS, *_CORE) if n in ns and callable(ns[n])}
    if "_maybe_get_cached_w3_w1_permute_indices" in fns:
        fns["maybe_get_cached_w3_w1_permute_indices"] = fns[
            "_maybe_get_cached_w3_w1_permute_indices"
        ]
    return fns


# -- cases, shared by the static suite (the wheel's functions) and the live suite (the
# installed release's): each takes (release, make, own); make(name) is the facade built
# for the release calling ``own(name)``, FlashInfer's function of that release.

Make = Any
Own = Any


def _u8(*shape: int) -> torch.Tensor:
    return torch.randint(
        0, 256, shape, dtype=torch.uint8, generator=torch.Generator().manual_seed(0)
    )


def _has(release: str, name: str) -> bool:
    from fi_compat.registry import at_least, place
    from support.moe_helpers import ENTRIES

    return at_least(place(release), ENTRIES[name].since)


def _at_least(release: str, v: str) -> bool:
    from fi_compat.registry import at_least, place

    return at_least(place(release), v)


def _equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Same dtype, shape and bytes (random bits viewed as bfloat16 hold NaNs)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return bool((a.contiguous().view(torch.uint8) == b.contiguous().view(torch.uint8)).all())


# the pure index/layout helpers and a call each, valid on every release that has them
PURE: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "get_reorder_rows_for_gated_act_gemm_row_indices": ((_u8(256, 64),), {}),
    "convert_to_block_layout": ((_u8(256, 64), 16), {}),
    "get_shuffle_matrix_a_row_indices": ((_u8(256, 64), 128), {}),
    "get_shuffle_matrix_sf_a_row_indices": ((_u8(256, 8), 128), {}),
    "interleave_moe_scales_for_sm90_mixed_gemm": ((_u8(8, 128, 8),), {"group_size": 32}),
}


def case_layouts_are_the_releases_own(release: str, make: Make, own: Own) -> None:
    """Each pure helper, positional and by keyword, returns what the release's own
    function returns (same dtype, shape and values)."""
    import inspect

    for name, (pos, kw) in PURE.items():
        if not _has(release, name):
            continue
        f, mine = make(name), own(name)
        want = mine(*pos, **kw)
        assert _equal(f(*pos, **kw), want), name
        names = list(inspect.signature(mine).parameters)
        assert _equal(f(**dict(zip(names, pos, strict=False)), **kw), want), name


def _keys(tag: str, shape: torch.Size, calls: list[tuple[int, Any, Any]]) -> set[Any]:
    return {(tag, shape, tile, nsf, gated) for tile, nsf, gated in calls}


def case_permute_cache_keyed_as_newest(release: str, make: Make, own: Own) -> None:
    """One memo dict, the same weight shape, another ``epilogue_tile_m`` (32- vs 16-row
    shuffle blocks) or ``is_gated_act_gemm``: fi_compat returns the permutation for THIS
    call (the release's own function with a fresh dict), where 0.5.0-0.6.17 alone return
    the first call's, and the dict ends up with 0.7.4's keys."""
    w = _u8(256, 64)
    for name, tag, gated_since, gated_default in (
        ("maybe_get_cached_w3_w1_permute_indices", "w3_w1", "0.6.3", True),
        ("get_w2_permute_indices_with_cache", "w2", "0.7.0", None),
    ):
        f, mine = make(name), own(name)
        cache: dict[Any, Any] = {}
        calls: list[tuple[int, Any, Any]] = [(128, None, gated_default), (64, None, gated_default)]
        if name.startswith("maybe") and _at_least(release, gated_since):
            calls += [(64, None, False)]
        if name.startswith("get_w2"):
            calls += [(64, None, True)]  # only a cache namespace: the same permutation
        for tile, nsf, gated in calls:
            got = f(cache, w, tile, nsf, is_gated_act_gemm=gated)
            extra = {"is_gated_act_gemm": gated} if _at_least(release, gated_since) else {}
            want = mine({}, w, tile, nsf, **extra)
            assert _equal(got, want), (name, tile, gated)
            assert f(cache, w, tile, nsf, is_gated_act_gemm=gated) is got  # memoised
        assert set(cache) == _keys(tag, w.shape, calls), (name, set(cache))


def case_sf_rows_refused_where_the_release_asserts(release: str, make: Make, own: Own) -> None:
    """bfloat16 / ``num_elts_per_sf=32`` (0.6.0+) and a column count not a multiple of 4
    (0.6.12+): a typed error naming the release before FlashInfer's bare assert, and the
    release's own result where it computes it."""
    from fi_compat.errors import UnsupportedParameterError

    f, mine = (
        make("get_shuffle_matrix_sf_a_row_indices"),
        own("get_shuffle_matrix_sf_a_row_indices"),
    )
    w2 = make("get_w2_permute_indices_with_cache")
    for x, nsf, since in (
        (_u8(256, 8).view(torch.bfloat16), 16, "0.6.0"),
        (_u8(256, 8), 32, "0.6.0"),
        (_u8(256, 6), 16, "0.6.12"),
    ):
        if _at_least(release, since):
            assert _equal(f(x, 128, nsf), mine(x, 128, nsf))
            continue
        for fn, call in ((f, (x, 128, nsf)), (w2, ({}, x, 128, nsf))):
            try:
                fn(*call)
            except UnsupportedParameterError as e:
                assert e.minimum == since and e.installed == release, e
            else:
                raise AssertionError((x.dtype, x.shape, nsf, "not refused"))


def case_sm90_scales_dtype(release: str, make: Make, own: Own) -> None:
    """Non-uint8 scales: 0.6.16-0.6.16.post2 and 0.6.18+ interleave them by element
    size; the other releases raise ValueError, refused here naming the release that
    takes them."""
    from fi_compat.errors import UnsupportedParameterError

    name = "interleave_moe_scales_for_sm90_mixed_gemm"
    if not _has(release, name):
        return
    s = _u8(8, 128, 16).view(torch.bfloat16)
    f = make(name)
    new = _at_least(release, "0.6.18") or (
        _at_least(release, "0.6.16") and not _at_least(release, "0.6.16.post3")
    )
    if new:
        assert _equal(f(s, 32), own(name)(s, 32))
        return
    try:
        f(s, 32)
    except UnsupportedParameterError as e:
        first = "0.6.16" if not _at_least(release, "0.6.16") else "0.6.18"
        assert e.minimum == first and e.parameter == "scales", e
    else:
        raise AssertionError("bfloat16 scales not refused")


CASES = [
    case_layouts_are_the_releases_own,
    case_permute_cache_keyed_as_newest,
    case_sf_rows_refused_where_the_release_asserts,
    case_sm90_scales_dtype,
]
