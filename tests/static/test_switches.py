"""Every ``FI_COMPAT_*`` on/off switch reads its value by one rule (fresh interpreters).

``1/true/yes/on`` and ``0/false/no/off``, any case, blanks around ignored; anything else
keeps the default and warns once, naming the variable and the accepted values.
``FI_COMPAT_VERSION_SOURCE`` takes ``package`` (or ``metadata``), any case.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_detection import make_dist, make_package

from conftest import run_python

READ = """
import json, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as w:
    from fi_compat._core import facade
    from fi_compat import _device, registry, detection
    got = {
        "FI_COMPAT_VALIDATE": facade._validation[0],
        "FI_COMPAT_DEBUG": facade._debug[0],
        "FI_COMPAT_STRICT": registry.strict(),
        "FI_COMPAT_ALLOW_CPU": _device.cpu_allowed(),
    }
    registry.strict()  # read on every call: warns once
    detection.detect()
print(json.dumps({"got": got, "warnings": [
    [x.category.__name__, str(x.message)] for x in w if "FI_COMPAT" in str(x.message)]}))
"""
SWITCHES = ("FI_COMPAT_VALIDATE", "FI_COMPAT_DEBUG", "FI_COMPAT_STRICT", "FI_COMPAT_ALLOW_CPU")
DEFAULTS = {"FI_COMPAT_VALIDATE": True}


def read(values: dict[str, str]) -> dict[str, object]:
    r = run_python(READ, env=values)
    assert r.returncode == 0, r.stderr
    out: dict[str, object] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


@pytest.mark.parametrize(
    ("values", "want"),
    [
        (("ON", " Yes ", "TRUE", "on"), True),
        (("Off", "NO", " false", "0"), False),
    ],
)
def test_every_switch_takes_the_same_words_in_any_case(values: tuple[str, ...], want: bool) -> None:
    for shift in range(len(SWITCHES)):  # each spelling on each switch
        env = {s: values[(i + shift) % len(values)] for i, s in enumerate(SWITCHES)}
        out = read(env)
        assert out["got"] == dict.fromkeys(SWITCHES, want), (env, out)
        assert out["warnings"] == [], out


def test_a_value_that_is_no_switch_value_warns_and_keeps_the_default() -> None:
    env = dict.fromkeys(SWITCHES, "maybe")
    env["FI_COMPAT_VERSION_SOURCE"] = "packages"
    out = read(env)
    assert out["got"] == {s: DEFAULTS.get(s, False) for s in SWITCHES}
    warned = out["warnings"]
    assert isinstance(warned, list)
    assert all(kind == "FiCompatWarning" for kind, _ in warned)
    text = "\n".join(msg for _, msg in warned)
    for s in SWITCHES:  # one warning each, naming the accepted values
        assert text.count(f"{s}='maybe' is not an on/off value (1/true/yes/on or") == 1, text
    assert "FI_COMPAT_VERSION_SOURCE='packages' is not one of package, metadata" in text
    assert len(warned) == len(SWITCHES) + 1


@pytest.mark.parametrize("value", ["package", " PACKAGE", "Package"])
def test_version_source_in_any_case(tmp_path: Path, value: str) -> None:
    """A stale 0.6.7 dist-info beside a 0.7.4 package: ``package`` in any case selects
    by the package's own version file."""
    make_dist(tmp_path, "flashinfer_python", "0.6.7")
    make_package(tmp_path, "0.7.4")
    code = "from fi_compat.detection import detect; print(detect().flashinfer.version)"
    r = run_python(code, env={"FI_COMPAT_VERSION_SOURCE": value}, path=[str(tmp_path)])
    assert r.returncode == 0 and r.stdout.split() == ["0.7.4"], (r.stdout, r.stderr)
