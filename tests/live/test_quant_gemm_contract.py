"""``fi_compat.quantization`` and ``fi_compat.gemm`` against the release of the cell: each
function resolves to FlashInfer's own, and the static suite's cases run with the innermost
call replaced by a spy bound to ``inspect.signature`` of that function."""

from __future__ import annotations

from typing import Any

import pytest

from fi_compat import errors
from fi_compat.detection import Distribution
from fi_compat.registry import at_least, place
from support.live import CELL, MARKS, run_policy
from support.quant_gemm_cases import CASES, SPECS

pytestmark = MARKS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.removeprefix("case_"))
@pytest.mark.parametrize("name", list(SPECS))
def test_live_policy(name: str, case: Any) -> None:
    run_policy(SPECS, name, case, before_since="skip")


@pytest.mark.parametrize("name", [n for n, e in SPECS.items() if e.backend_query])
def test_backend_queries_answer_from_the_installed_release(name: str) -> None:
    """The facade's ``is_backend_supported`` is FlashInfer's own answer where the release's
    function has it, except where fi_compat refuses the name or the GPU first."""
    from fi_compat import gemm
    from fi_compat._core.backends import backend_accepted
    from support.spy import stub

    assert CELL is not None
    e = SPECS[name]
    if not at_least(place(CELL), e.since):
        pytest.skip(f"{name} is served from {e.since}")
    a = e.select(Distribution("flashinfer-python", CELL, "<cell>", ""))
    try:
        real = a.resolve()
    except errors.FlashInferImportError as exc:
        pytest.skip(f"flashinfer does not import here: {exc}")
    f = a.build(stub(gemm, name))
    own = getattr(real, "is_backend_supported", None)
    p = e.params["backend"]
    for backend in p.kind.literals if p.kind is not None else ():
        for cc in (None, 90, 100, 120):
            want = backend_accepted(a, "backend", backend)
            if want and cc is not None and e.devices is not None:
                want = e.devices(a.placement, divmod(cc, 10)) is None
            if want:
                want = bool(own(backend, cc)) if own is not None else backend != "auto"
            assert f.is_backend_supported(backend, cc) is want, (backend, cc)
