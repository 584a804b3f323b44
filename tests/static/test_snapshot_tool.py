"""The snapshot tool serves every entry point: facts of the MoE history read back from its
output (committed for fi_compat.fused_moe; see flashinfer-api-history.md §1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SNAP = Path(__file__).resolve().parents[2] / "src" / "fi_compat" / "_snapshots"


def names(entry: str, release: str) -> dict[str, tuple[str, str | None]] | None:
    data = json.loads((SNAP / f"{entry}.json").read_text())
    rel = data["releases"][release]
    if rel is None:
        return None
    return {p[0]: (p[1], p[2]) for p in data["signatures"][rel["signature"]]}


def test_every_snapshot_is_well_formed() -> None:
    files = sorted(SNAP.glob("*.json"))
    assert len(files) >= 11
    for f in files:
        data = json.loads(f.read_text())
        assert data["generated_by"].startswith("tools/snapshot.py")
        for rel in data["releases"].values():
            assert rel is None or rel["signature"] in data["signatures"]


def test_tile_tokens_dim_required_in_0_5_and_removed_in_0_6() -> None:
    fp4 = "fused_moe.trtllm_fp4_block_scale_moe"
    assert names(fp4, "0.5.3")["tile_tokens_dim"] == ("pk", None)  # type: ignore[index]
    assert "tile_tokens_dim" not in (names(fp4, "0.6.0") or {})


def test_gated_act_type_renamed_activation_type_in_0_6_3() -> None:
    fp4 = "fused_moe.trtllm_fp4_block_scale_moe"
    assert "gated_act_type" in (names(fp4, "0.6.2") or {})
    after = names(fp4, "0.6.3") or {}
    assert "gated_act_type" not in after and "activation_type" in after


@pytest.mark.parametrize(
    ("release", "has"),
    [("0.6.15.post1", False), ("0.6.16", True), ("0.6.16.post3", False), ("0.6.18", True)],
)
def test_cutlass_humming_added_removed_readded(release: str, has: bool) -> None:
    got = names("fused_moe.cutlass_fused_moe", release) or {}
    assert ("use_wfp4afp8_humming" in got) == has


def test_re_exports_are_followed_to_the_defining_module() -> None:
    data = json.loads((SNAP / "fused_moe.trtllm_fp8_block_scale_moe.json").read_text())
    assert data["releases"]["0.6.7"]["module"] == "flashinfer.fused_moe.core"
    assert data["releases"]["0.5.0"] is not None
