"""The release-selection policy as one verdict, shared by the call path, ``info`` and ``doctor``.

:func:`version_verdict` says what fi_compat does with a detected ``flashinfer-python``
version (see :mod:`fi_compat.registry` for where a version is placed):

==================  =======  ==============================================================
code                status   what a facade does
==================  =======  ==============================================================
``known``           ok       uses the adapter of that release
``not-installed``   error    raises ``FlashInferNotInstalledError`` when called
``invalid-version`` error    raises ``UnsupportedFlashInferVersionError`` (not PEP 440)
``below-floor``     error    raises ``UnsupportedFlashInferVersionError`` (older than the
                             entry point's first release, or than the first wheel release)
``newer-than-known`` warn    uses the newest adapter; warns once
``strict-newer``    error    ``FI_COMPAT_STRICT`` is set: raises
                             ``UntestedFlashInferVersionError`` instead
``prerelease``      warn     ``rc``/``dev`` builds: treated as the release they precede
``between``         warn     an unknown release between two known ones: treated as the
                             known release before it
==================  =======  ==============================================================

An entry point a release removed (its snapshot ends, ``EntryPoint.until``) raises
``UnsupportedFlashInferVersionError`` on that release and later ones, naming the last
release that has it and what to use instead.

Strict mode is read from :func:`fi_compat.registry.strict` on every call, so a verdict
reflects the environment at the moment it is asked for.  Nothing here imports FlashInfer.
"""

from __future__ import annotations

from .registry import NEWEST, STRICT_ENV, Placement, at_least, place, strict

__all__ = ["STATUSES", "Verdict", "version_verdict"]

STATUSES = ("ok", "warn", "error")


class Verdict:
    """``status`` (ok / warn / error), a stable ``code``, the ``message`` and the ``fix``.

    ``raises`` names the :mod:`fi_compat.errors` class a facade call raises under this
    verdict (``None``: the call goes through, with a once-only warning for ``warn``).
    """

    __slots__ = ("code", "fix", "message", "raises", "status")

    def __init__(
        self, status: str, code: str, message: str, fix: str = "", raises: str | None = None
    ) -> None:
        assert status in STATUSES
        self.status, self.code, self.message, self.fix = status, code, message, fix
        self.raises = raises

    def as_dict(self) -> dict[str, str | None]:
        return {
            "status": self.status,
            "code": self.code,
            "message": self.message,
            "fix": self.fix,
            "raises": self.raises,
        }

    def __repr__(self) -> str:
        return f"Verdict({self.status!r}, {self.code!r})"


def _own_version() -> str:
    from ._version import __version__

    return __version__


def version_verdict(
    placement: Placement | None, release: str | None, entry_since: str | None = None
) -> Verdict:
    """The policy's verdict on ``release`` (placed as ``placement``; placed here when
    ``None``) for an entry point whose first release is ``entry_since`` (``None``: judge
    the release as a whole, against the first wheel release)."""
    if release is None:
        since = f" (>= {entry_since})" if entry_since else ""
        return Verdict(
            "error",
            "not-installed",
            "no flashinfer-python distribution is installed on sys.path; fi_compat's "
            "facades raise FlashInferNotInstalledError when called",
            f"pip install 'flashinfer-python=={NEWEST}' (or any release fi_compat supports{since})",
            "FlashInferNotInstalledError",
        )
    pl = placement if placement is not None else place(release)
    floor = entry_since or "0.5.0"
    supported = f"'flashinfer-python>={floor},<={NEWEST}'"
    if pl.kind == "invalid":
        return Verdict(
            "error",
            "invalid-version",
            f"flashinfer-python's recorded version {release!r} is not a PEP 440 version, so "
            f"fi_compat cannot place it among the releases it knows",
            f"reinstall a release: pip install --force-reinstall {supported}",
            "UnsupportedFlashInferVersionError",
        )
    if pl.kind == "older" or not at_least(pl, floor):
        what = (
            f"this entry point exists from {floor} on"
            if entry_since
            else (f"fi_compat supports {floor} (the first wheel release) to {NEWEST}")
        )
        return Verdict(
            "error",
            "below-floor",
            f"flashinfer-python {release} is older than fi_compat supports: {what}",
            f"pip install {supported}",
            "UnsupportedFlashInferVersionError",
        )
    if pl.kind == "newer":
        known = (
            f"flashinfer-python {release} is newer than the newest release fi_compat "
            f"{_own_version()} knows ({NEWEST})"
        )
        if strict():
            return Verdict(
                "error",
                "strict-newer",
                f"{known} and {STRICT_ENV} is set: every facade call raises "
                f"UntestedFlashInferVersionError",
                f"upgrade fi_compat, pin 'flashinfer-python<={NEWEST}', or unset {STRICT_ENV}",
                "UntestedFlashInferVersionError",
            )
        return Verdict(
            "warn",
            "newer-than-known",
            f"{known}; the facades use the {NEWEST} adapter. Set {STRICT_ENV}=1 to make "
            f"this an error.",
            f"upgrade fi_compat, or pin 'flashinfer-python<={NEWEST}'",
        )
    if pl.kind in ("prerelease", "between"):
        what = "a pre-release or dev build" if pl.kind == "prerelease" else "an unknown release"
        return Verdict(
            "warn",
            pl.kind,
            f"flashinfer-python {release} is {what} fi_compat has not tested; the facades "
            f"treat it as {pl.treated_as}",
            f"pip install 'flashinfer-python=={pl.treated_as}' for a tested release",
        )
    return Verdict("ok", "known", f"flashinfer-python {release} is a release fi_compat knows")
