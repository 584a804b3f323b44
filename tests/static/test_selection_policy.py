"""Adapter selection policy, each rule in a fresh interpreter (FI_COMPAT_FLASHINFER_VERSION)."""

from __future__ import annotations

import inspect
import json
import warnings
from typing import Any

import pytest

from conftest import run_python
from fi_compat import errors
from support.helpers import facade_for, inputs
from support.spy import Spy, snapshot_signature

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
    assert out["adapter"]["adapter_range"] == "0.7.1-0.7.2.post1"
    assert len(out["warnings"]) == 1


def test_local_tag_is_ignored_for_selection_without_warning() -> None:
    out = call("0.6.18+cu130")
    assert out["adapter"]["adapter_range"] == "0.6.18-0.6.18.post1" and out["warnings"] == []


# -- unknown keywords on every placement (in process: a spy with the release's signature) --

UNKNOWN_PLACEMENTS = ["0.7.4", "0.7.4+cu130", "0.7.4rc1", "0.7.4.dev3", "0.7.3", "0.7.5"]


def _facade(version: str, extra_param: str | None = None) -> tuple[Any, Spy]:
    """The GDN facade for ``version``; FlashInfer's function has 0.7.4's signature (plus
    ``extra_param``, an option no snapshot has) as its ``inspect.signature``."""
    sig = snapshot_signature("0.7.4")
    if extra_param is not None:
        p = inspect.Parameter(extra_param, inspect.Parameter.KEYWORD_ONLY, default=None)
        sig = sig.replace(parameters=[*sig.parameters.values(), p])
    spy = Spy(sig)

    def chunk_gated_delta_rule(*args: Any, **kw: Any) -> Any:
        return spy(*args, **kw)  # positional where the release's signature is known

    chunk_gated_delta_rule.__signature__ = sig  # type: ignore[attr-defined]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", errors.UntestedFlashInferVersionWarning)
        fn, _ = facade_for(version, chunk_gated_delta_rule)
    return fn, spy


@pytest.mark.parametrize("version", UNKNOWN_PLACEMENTS)
def test_a_misspelt_keyword_is_a_typed_error_on_every_placement(version: str) -> None:
    """Known, local-tagged, pre-release, dev, between two known releases, newer: the
    misspelling never reaches FlashInfer (whose own error would be a bare TypeError)."""
    fn, spy = _facade(version)
    kw = {k: v for k, v in inputs().items() if k != "initial_state"}
    with pytest.raises(errors.UnknownArgumentError) as ei:
        fn(**kw, output_final_sate=True)
    assert "'output_final_sate' (did you mean 'output_final_state'" in str(ei.value)
    assert spy.calls == []
    fn(**kw)  # the facade itself works
    assert len(spy.calls) == 1


@pytest.mark.parametrize("version", ["0.7.4rc1", "0.7.3", "0.7.5"])
def test_an_option_of_the_installed_release_that_no_snapshot_has_is_forwarded(
    version: str,
) -> None:
    """Off the known releases the function's own signature decides: an option it has
    goes to FlashInfer as passed (on a known release the snapshot decides)."""
    fn, spy = _facade(version, extra_param="brand_new_option")
    kw = {k: v for k, v in inputs().items() if k != "initial_state"}
    fn(**kw, brand_new_option=3)
    assert spy.last["brand_new_option"] == 3
