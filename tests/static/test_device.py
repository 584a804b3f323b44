"""Capabilities, families, the known-issues table and the support queries, table-driven."""

from __future__ import annotations

from pathlib import Path

import pytest

from fi_compat import _issues, device
from fi_compat.detection import detect
from fi_compat.device import (
    TABLE,
    family,
    is_device_capability,
    is_device_capability_family,
    known_issues,
    parse_capability,
    supports_trtllm_attention,
    supports_xqa_decode,
)

# (capability, family, in SM100 family, XQA decode arch)
ARCHS = [
    ((7, 5), 70, False, False),
    ((8, 0), 80, False, False),
    ((8, 6), 80, False, False),
    ((8, 9), 80, False, False),
    ((9, 0), 90, False, True),
    ((10, 0), 100, True, True),
    ((10, 3), 100, True, True),
    ((11, 0), 110, False, False),
    ((12, 0), 120, False, True),
    ((12, 1), 120, False, True),
]


@pytest.mark.parametrize(("cc", "fam", "sm100", "xqa"), ARCHS)
def test_capability_and_family(cc: tuple[int, int], fam: int, sm100: bool, xqa: bool) -> None:
    as_int = cc[0] * 10 + cc[1]
    for form in (cc, as_int, f"{cc[0]}.{cc[1]}", f"sm_{as_int}", f"sm{as_int}a"):
        assert parse_capability(form) == cc
    assert family(cc) == fam
    assert is_device_capability(as_int, capability=cc)
    assert is_device_capability_family(100, capability=cc) == sm100
    assert is_device_capability_family(120, capability=cc) == (fam == 120)
    assert not is_device_capability(100, capability=cc) or cc == (10, 0)  # exact, not family
    s = supports_xqa_decode(capability=cc, release="0.6.18")
    assert bool(s) == xqa, s.reasons


def test_sm121_is_family_120_not_100() -> None:
    assert family(121) == 120 and not is_device_capability_family(100, capability=121)


def test_current_capability_on_a_cpu_host_is_none_without_exception() -> None:
    assert device.current_capability() is None  # CI and this machine have no GPU
    assert not is_device_capability(90) and not is_device_capability_family(90)


def matching_arch(issue: device.KnownIssue) -> tuple[int, int]:
    if issue.arch == "any":
        return (9, 0)
    if issue.arch.startswith("family:"):
        return (int(issue.arch.partition(":")[2]), 0)
    return parse_capability(issue.arch)


@pytest.mark.parametrize("issue", TABLE, ids=lambda i: i.id)
def test_every_known_issue_is_reachable_by_a_query(issue: device.KnownIssue) -> None:
    got = known_issues(
        feature=issue.feature, capability=matching_arch(issue), release=issue.range.lo
    )
    assert issue in got
    family_name = issue.feature.partition(".")[0]
    assert issue in known_issues(feature=family_name, release=issue.range.lo)
    if issue.range.hi is not None:  # the first fixed release no longer lists it
        assert issue not in known_issues(feature=issue.feature, release=issue.range.hi)
    if issue.arch != "any":
        other = (5, 2)
        assert issue not in known_issues(
            feature=issue.feature, capability=other, release=issue.range.lo
        )


def test_table_rows_are_well_formed() -> None:
    kinds = {"broken", "hang", "missing-kernel", "accuracy", "performance", "import", "memory"}
    ids = [r["id"] for r in _issues.ISSUES]
    assert len(ids) == len(set(ids))
    for row in _issues.ISSUES:
        assert row["kind"] in kinds and row["ref"] and row["workaround"], row["id"]
    assert [i.id for i in TABLE if not i.confirmed] == [
        "fp4quant-subnormal-e4m3-scales",
        "0.6.14-gb300-gdn-wedge",
        "0.6.18-gpu0-stall",
        "bf16-moe-deepseek-route-scale-zero",  # read from the sources; SM100-only kernels
    ]


def cubin_dir(tmp_path: Path) -> str:
    d = tmp_path / "cubins"
    d.mkdir()
    (d / "fmha.cubin").write_bytes(b"\0")
    return str(d)


@pytest.mark.parametrize(
    ("cc", "release", "ok", "why"),
    [
        ((10, 0), "0.6.7", True, None),
        ((10, 3), "0.6.7", False, "sm103-trtllm-attention-hang"),  # hang: exact SM100 only
        ((10, 3), "0.6.7.post1", False, "sm103-trtllm-attention-hang"),
        ((10, 3), "0.6.7.post2", True, None),  # the fix
        ((10, 3), "0.6.18", True, None),
        ((9, 0), "0.6.18", False, "not in the SM100 family"),
        ((12, 1), "0.6.18", False, "not in the SM100 family"),
    ],
)
def test_supports_trtllm_attention(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cc: tuple[int, int],
    release: str,
    ok: bool,
    why: str | None,
) -> None:
    monkeypatch.setenv("FLASHINFER_CUBIN_DIR", cubin_dir(tmp_path))
    s = supports_trtllm_attention(capability=cc, release=release)
    assert bool(s) == ok, s.reasons
    assert why is None or any(why in r for r in s.reasons), s.reasons
    if why == "sm103-trtllm-attention-hang":
        assert s.issues[0].id == why and "0.6.7.post2" in (s.fix or "")


def test_trtllm_attention_batch_invariant_and_cubins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FLASHINFER_CUBIN_DIR", raising=False)
    calls: list[object] = []
    import urllib.request

    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: calls.append(a) or 1 / 0)
    s = supports_trtllm_attention(capability=(10, 0), release="0.6.18")
    assert not s and calls == []  # no cubins, and no network probe unless asked
    assert "download-cubin" in (s.fix or "")
    s = supports_trtllm_attention(
        capability=(10, 0), release="0.6.18", probe_network=True, timeout=0.1
    )
    # which file 0.6.18 fetches is read from its installed artifacts.py: not installed
    # here, so nothing is asked (never the repository root; test_moe_cubin_probe.py)
    assert not s and calls == [] and any("not probed" in r for r in s.reasons)
    monkeypatch.setenv("FLASHINFER_CUBIN_DIR", cubin_dir(tmp_path))
    assert supports_trtllm_attention(capability=(10, 0), release="0.6.18")
    s = supports_trtllm_attention(capability=(10, 0), release="0.6.18", batch_invariant=True)
    assert not s and any("batch-invariant" in r for r in s.reasons)


def test_disable_switch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FLASHINFER_CUBIN_DIR", cubin_dir(tmp_path))
    monkeypatch.setenv(device.DISABLE_ENV, "attention")
    s = supports_trtllm_attention(capability=(10, 0), release="0.6.18")
    assert not s and "FI_COMPAT_DISABLE" in s.reasons[0]
    assert device.disabled("attention.xqa") and not device.disabled("sampling")


def test_disable_names_are_case_insensitive_and_checked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``FI_COMPAT_DISABLE=ATTENTION.TRTLLM`` disables the query; a misspelt name warns
    once, naming the valid ones, instead of being silently ignored."""
    from fi_compat import _switches, errors

    monkeypatch.setattr(_switches, "_warned", set())
    monkeypatch.setenv("FLASHINFER_CUBIN_DIR", cubin_dir(tmp_path))
    monkeypatch.setenv(device.DISABLE_ENV, " ATTENTION.TRTLLM ")
    s = supports_trtllm_attention(capability=(10, 0), release="0.6.18")
    assert not s and "FI_COMPAT_DISABLE" in s.reasons[0]
    monkeypatch.setenv(device.DISABLE_ENV, "attention.trtlm,Sampling")
    with pytest.warns(errors.FiCompatWarning) as w:
        assert supports_trtllm_attention(capability=(10, 0), release="0.6.18")
        assert supports_trtllm_attention(capability=(10, 0), release="0.6.18")  # once
    [msg] = [str(x.message) for x in w if x.category is errors.FiCompatWarning]
    assert "'attention.trtlm' (did you mean 'attention.trtllm'?)" in msg and "'sampling'" in msg
    assert "valid: attention, attention.trtllm, attention.xqa, moe, moe.cutlass" in msg


def test_every_query_answers_for_a_feature_the_switch_knows() -> None:
    answers = [
        supports_trtllm_attention(capability=(10, 0), release="0.6.18"),
        supports_xqa_decode(capability=(9, 0), release="0.6.18"),
        device.supports_cutlass_moe(capability=(9, 0), release="0.6.18"),
        device.supports_trtllm_moe(capability=(10, 0), release="0.6.18"),
    ]
    assert sorted(s.feature for s in answers) == sorted(device.QUERY_FEATURES)


def test_queries_without_flashinfer_installed() -> None:
    assert detect().flashinfer is None
    s = supports_xqa_decode(capability=(9, 0))
    assert not s and "not installed" in " ".join(s.reasons)
    assert len(known_issues()) == len(TABLE)  # no release known: every row


@pytest.mark.parametrize(
    ("cc", "release", "details", "ok", "issue"),
    [
        ("9.0", "0.6.7", {}, True, None),
        (
            "12.1",
            "0.6.7",
            {"quantization": "bf16", "activation": "Relu2"},
            False,
            "sm121-cutlass-moe-relu2",
        ),
        ("12.1", "0.6.8", {"quantization": "bf16", "activation": "Relu2"}, True, None),
        ("12.1", "0.6.7", {"quantization": "fp8", "activation": "Relu2"}, True, None),
        ("12.1", "0.6.7", {"quantization": "bf16", "activation": "Swiglu"}, True, None),
        ("11.0", "0.6.8.post1", {}, False, "sm110-moe-cubins-missing"),
        ("11.0", "0.6.9", {}, True, None),
        ("8.0", "0.7.4", {}, False, None),
        ("10.7", "0.6.17", {}, False, None),
        ("10.7", "0.6.18", {}, True, None),
    ],
)
def test_supports_cutlass_moe(
    cc: str, release: str, details: dict[str, str], ok: bool, issue: str | None
) -> None:
    s = device.supports_cutlass_moe(capability=cc, release=release, **details)
    assert bool(s) is ok, s
    assert [i.id for i in s.issues] == ([issue] if issue else [])
    if not ok and issue is None:
        assert "builds CUTLASS MoE kernels for" in s.reasons[-1]


def test_cutlass_moe_undescribed_call_gets_a_caveat_not_a_no() -> None:
    s = device.supports_cutlass_moe(capability="12.1", release="0.6.7")
    assert s and not s.issues
    assert any("caveat" in r and "sm121-cutlass-moe-relu2" in r for r in s.reasons)
    # FlashInfer's own member (or ours) works as the activation detail too
    from fi_compat.enums import ActivationType

    assert not device.supports_cutlass_moe(
        capability="12.1", release="0.6.7", quantization="bf16", activation=ActivationType.Relu2
    )


@pytest.mark.parametrize(
    ("cc", "release", "ok"),
    [
        ("10.0", "0.5.0", True),
        ("10.3", "0.7.4", True),
        ("12.0", "0.6.6", False),
        ("12.1", "0.6.7", True),
        ("9.0", "0.7.4", False),
        ("11.0", "0.6.9", False),
    ],
)
def test_supports_trtllm_moe(
    cc: str, release: str, ok: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cubins = cubin_dir(tmp_path)
    monkeypatch.setenv("FLASHINFER_CUBIN_DIR", cubins)
    s = device.supports_trtllm_moe(capability=cc, release=release)
    assert bool(s) is ok, s
    monkeypatch.delenv("FLASHINFER_CUBIN_DIR")
    no_cubins = device.supports_trtllm_moe(capability=cc, release=release)
    assert not no_cubins
    if ok:
        assert "download-cubin" in (no_cubins.fix or "")
    monkeypatch.setenv("FLASHINFER_CUBIN_DIR", cubins)
    monkeypatch.setenv(device.DISABLE_ENV, "moe")
    assert not device.supports_trtllm_moe(capability=cc, release=release)
    assert not device.supports_cutlass_moe(capability="9.0", release=release)
