"""Device checks before any launch, on a real GPU: needs CUDA, not FlashInfer.

The metadata checks run before FlashInfer is imported, so the facade is built for a
pretended release (``facade_for``) and no kernel is involved.
"""

from __future__ import annotations

import pytest
import torch

from fi_compat import errors

pytestmark = pytest.mark.gpu
if not torch.cuda.is_available():  # pragma: no cover - CPU hosts
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

from support.helpers import facade_for, inputs  # noqa: E402


@pytest.mark.parametrize("release", ["0.6.7", "0.6.18", "0.7.4"])
@pytest.mark.parametrize("moved", ["k", "v", "g", "beta", "cu_seqlens", "initial_state"])
def test_tensor_on_another_device_is_a_typed_error(release: str, moved: str) -> None:
    calls: list[object] = []
    f, _ = facade_for(release, lambda **kw: calls.append(kw))
    x = {n: t.cuda() for n, t in inputs().items()}
    x[moved] = x[moved].cpu()
    with pytest.raises(errors.InvalidArgumentError, match=f"{moved} is on cpu"):
        f(
            x["q"],
            x["k"],
            x["v"],
            x["g"],
            x["beta"],
            None,
            x["initial_state"],
            True,
            x["cu_seqlens"],
        )
    assert calls == []  # nothing reached FlashInfer


def test_same_device_passes() -> None:
    calls: list[dict[str, object]] = []
    f, _ = facade_for("0.7.4", lambda **kw: calls.append(kw) or kw["q"])
    x = {n: t.cuda() for n, t in inputs().items()}
    f(x["q"], x["k"], x["v"], x["g"], x["beta"], cu_seqlens=x["cu_seqlens"])
    assert calls and calls[0]["cu_seqlens"] is x["cu_seqlens"]
