"""The fi_compat error hierarchy.

Every error derives from :class:`FiCompatError` and from the builtin a caller would
naturally catch (``ImportError``, ``TypeError``, ``ValueError``, ``NotImplementedError``),
so existing ``except`` clauses keep working.  Every message says what was passed, what
the installed FlashInfer release accepts, and how to fix it.  All of them are raised
before any kernel launch.
"""

from __future__ import annotations


class FiCompatError(Exception):
    """Base class of every error fi_compat raises.

    ``check``: the id of the check that refused the call (``"top_k.rank"``: the
    parameter and what about it), where the diagnostic names one.
    ``flashinfer_message``: the installed FlashInfer release's own message for the same
    refusal, where that release makes it too (the message ends with it, so code and
    tests that match FlashInfer's text keep working); ``None`` otherwise."""

    check: str | None = None
    flashinfer_message: str | None = None


class FiCompatWarning(UserWarning):
    """Base class of every warning fi_compat emits."""


class FlashInferNotInstalledError(FiCompatError, ImportError):
    """No ``flashinfer-python`` distribution is installed (raised at call time)."""


class UnsupportedFlashInferVersionError(FiCompatError, ImportError):
    """The installed FlashInfer release is outside the range an entry point supports."""


class UntestedFlashInferVersionError(UnsupportedFlashInferVersionError):
    """Strict mode: the installed release is newer than every release fi_compat knows."""


class UntestedFlashInferVersionWarning(FiCompatWarning):
    """The installed release is newer than fi_compat knows (or a pre-release); emitted once."""


class FlashInferImportError(FiCompatError, ImportError):
    """``import flashinfer...`` itself failed; the message explains why and the fix."""


class OptionalDependencyMissingError(FlashInferImportError):
    """A FlashInfer module needs an optional package that is not installed.

    Attributes ``package`` (the PyPI name) and ``extra`` (the FlashInfer extra that
    installs it) name the fix.
    """

    def __init__(self, message: str, *, package: str, extra: str | None = None) -> None:
        super().__init__(message)
        self.package = package
        self.extra = extra


class UnsupportedParameterError(FiCompatError, TypeError):
    """A parameter (or one value of it) needs a newer FlashInfer release than installed.

    Attributes: ``parameter``, ``installed`` (version string) and ``minimum`` (the first
    release that supports it).
    """

    def __init__(self, message: str, *, parameter: str, installed: str, minimum: str) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.installed = installed
        self.minimum = minimum


class InvalidArgumentError(FiCompatError, ValueError):
    """An argument has the wrong shape, rank, dtype or device (metadata checks only)."""


class MissingArgumentError(FiCompatError, TypeError):
    """A required argument was not given (or given as ``None``)."""


class FlashInferVersionMismatchError(FlashInferImportError):
    """The imported ``flashinfer`` package is another release than its metadata says.

    Attributes ``detected`` (the dist-info version the adapter was chosen for) and
    ``imported`` (the package's own ``__version__``)."""

    def __init__(self, message: str, *, detected: str, imported: str) -> None:
        super().__init__(message)
        self.detected = detected
        self.imported = imported


class PositionalMismatchError(FiCompatError, TypeError):
    """More positional arguments than the stable signature has: code written against
    another release's positional order (see :func:`fi_compat.written_for`)."""


class UnsupportedDeviceError(FiCompatError, ValueError):
    """The tensors are on a device the installed release cannot run the kernel on (not
    CUDA, or a GPU architecture the release has no kernel for); raised before launch."""


class FiCompatDeprecationWarning(FiCompatWarning, DeprecationWarning):
    """A stable parameter or facade is deprecated; the message names the replacement and
    the fi_compat major release that removes it."""


class UnknownArgumentError(FiCompatError, TypeError):
    """A keyword argument neither the stable signature nor the installed release has
    (a misspelling, or an option of another release); the message names the closest
    names.  A ``TypeError``, as Python's own "unexpected keyword argument"."""
