"""Shared pieces of the bad-input suites: wrong-typed stand-ins, the natural builtin of
each fi_compat error, a GDN facade on a spy, and the assertion every refusal makes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from fi_compat import errors
from support.helpers import facade_for
from support.spy import Spy, snapshot_signature


class ArrayLike:
    """Stands in for a numpy array (numpy is not a test dependency): ``shape``, a
    string ``dtype``, ``ndim``, ``len``; none of torch's methods."""

    def __init__(self, *shape: int, dtype: str = "float32") -> None:
        self.shape = tuple(shape)
        self.dtype = dtype
        self.ndim = len(shape)

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 0

    def __repr__(self) -> str:
        return f"ArrayLike{self.shape}"


# the builtin a caller would naturally catch, per fi_compat error class
NATURAL: dict[type[Exception], type[Exception]] = {
    errors.InvalidArgumentError: ValueError,
    errors.UnsupportedDeviceError: ValueError,
    errors.MissingArgumentError: TypeError,
    errors.UnsupportedParameterError: TypeError,
    errors.PositionalMismatchError: TypeError,
    errors.UnknownArgumentError: TypeError,
    errors.FlashInferNotInstalledError: ImportError,
    errors.UnsupportedFlashInferVersionError: ImportError,
    errors.UntestedFlashInferVersionError: ImportError,
    errors.FlashInferImportError: ImportError,
    errors.OptionalDependencyMissingError: ImportError,
    errors.FlashInferVersionMismatchError: ImportError,
}


def gdn(release: str) -> tuple[Any, Spy, Any]:
    """The GDN facade as built for ``release``, calling a spy bound to its signature."""
    spy = Spy(snapshot_signature(release))
    fn, adapter = facade_for(release, spy)
    return fn, spy, adapter


def refused(
    spy: Any, error: type[Exception], fragment: str, call: Callable[[], object]
) -> Exception:
    """``call()`` raises exactly ``error`` (a FiCompatError and its natural builtin),
    whose message contains ``fragment``, and FlashInfer (the spy) was never reached."""
    with pytest.raises(error) as ei:
        call()
    exc = ei.value
    assert type(exc) is error, f"{type(exc).__name__}: {exc}"
    assert isinstance(exc, errors.FiCompatError)
    assert isinstance(exc, NATURAL[error])
    assert fragment in str(exc), str(exc)
    assert spy.calls == [] and spy.raw_kwargs == []
    return exc
