"""Adapter selection policy, each rule in a fresh interpreter (FI_COMPAT_FLASHINFER_VERSION)."""

from __future__ import annotations

import json

from conftest import run_python

CALL = """
import json, warnings, torch
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as w:
    import fi_compat
    from fi_compat import gdn_prefill
    import fi_compat.gdn_prefill  # a second import does not warn again
    f = gdn_prefill.chunk_gated_delta_rule
    q = torch.zeros(4, 1, 8); cu = torch.tensor([0, 4], dtype=torch.int32)
    err = None
    for _ in range(2):  # the adapter is chosen at the first call, and warns once
        try:
            f(q, q, q, cu_seqlens=cu)
        except Exception as e:
            err = {"type": type(e).__name__, "mro": [c.__name__ for c in type(e).__mro__],
                   "msg": str(e)}
print(json.dumps({"warnings": [str(x.message) for x in w], "err": err,
                  "adapter": f.adapter.describe()}))
"""


def call(version: str | None, strict: bool = False) -> dict:
    env = {"FI_COMPAT_FLASHINFER_VERSION": version or "none"}
    if strict:
        env["FI_COMPAT_STRICT"] = "1"
    r = run_python(CALL, env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_not_installed_raises_at_call_time_with_install_command() -> None:
    out = call(None)  # importing worked: the error comes from the call
    assert out["err"]["type"] == "FlashInferNotInstalledError"
    assert "ImportError" in out["err"]["mro"]
    assert "pip install 'flashinfer-python==0.7.4'" in out["err"]["msg"]


def test_below_the_floor_names_the_supported_range() -> None:
    out = call("0.5.3")
    assert out["err"]["type"] == "UnsupportedFlashInferVersionError"
    assert "0.6.0 to 0.7.4" in out["err"]["msg"] and "installed: 0.5.3" in out["err"]["msg"]


def test_newer_release_uses_newest_adapter_and_warns_once() -> None:
    out = call("0.7.9")
    assert out["adapter"]["adapter_range"] == "0.7.4+"
    assert out["adapter"]["placement"] == "newer"
    assert len(out["warnings"]) == 1 and "newer than the newest" in out["warnings"][0]
    assert "FI_COMPAT_STRICT" in out["warnings"][0]


def test_strict_mode_makes_a_newer_release_an_error() -> None:
    out = call("0.7.9", strict=True)
    assert out["err"]["type"] == "UntestedFlashInferVersionError"
    assert "0.7.4" in out["err"]["msg"]


def test_prerelease_is_treated_as_its_release_with_a_warning() -> None:
    out = call("0.7.1rc2")
    assert out["adapter"]["treated_as"] == "0.7.1"
    assert out["adapter"]["adapter_range"] == "0.7.1–0.7.2.post1"
    assert len(out["warnings"]) == 1


def test_local_tag_is_ignored_for_selection_without_warning() -> None:
    out = call("0.6.18+cu130")
    assert out["adapter"]["adapter_range"] == "0.6.18–0.6.18.post1" and out["warnings"] == []
