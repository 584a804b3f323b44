"""One reading rule for every ``FI_COMPAT_*`` environment variable.

* on/off switches (``FI_COMPAT_VALIDATE``, ``FI_COMPAT_DEBUG``, ``FI_COMPAT_STRICT``,
  ``FI_COMPAT_ALLOW_CPU``): ``1``/``true``/``yes``/``on`` and ``0``/``false``/``no``/``off``,
  any case, surrounding blanks ignored; unset or empty: the default; anything else keeps
  the default with a :class:`~fi_compat.errors.FiCompatWarning` naming the variable, the
  value and the accepted ones (:func:`flag`);
* one of several words (``FI_COMPAT_VERSION_SOURCE=package``): any case; another word
  warns and keeps the default (:func:`choice`);
* comma-separated names (``FI_COMPAT_DISABLE``, ``FI_COMPAT_IGNORE_ISSUES``): any case;
  names that mean nothing warn, listing the valid ones, and are ignored (:func:`names`).

Each distinct bad value warns once per process.  Nothing here imports torch or FlashInfer.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["FALSE", "TRUE", "choice", "flag", "names"]

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")
_warned: set[tuple[str, str]] = set()


def _warn(var: str, raw: str, message: str) -> None:
    if (var, raw) in _warned:
        return
    _warned.add((var, raw))
    import warnings

    from .errors import FiCompatWarning

    warnings.warn(message, FiCompatWarning, stacklevel=4)


def flag(var: str, default: bool) -> bool:
    """The on/off switch ``var`` (see the module docstring)."""
    raw = os.environ.get(var)
    value = (raw or "").strip().lower()
    if not value:
        return default
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    assert raw is not None
    _warn(
        var,
        raw,
        f"{var}={raw!r} is not an on/off value ({'/'.join(TRUE)} or {'/'.join(FALSE)}, "
        f"any case); it stays {'on' if default else 'off'}",
    )
    return default


def choice(var: str, words: Iterable[str], default: str | None = None) -> str | None:
    """The word ``var`` is set to, lower-cased, if it is one of ``words``; else the
    default (a warning for a word that is not one of them)."""
    raw = os.environ.get(var)
    value = (raw or "").strip().lower()
    if not value:
        return default
    valid = tuple(words)
    if value in valid:
        return value
    assert raw is not None
    _warn(var, raw, f"{var}={raw!r} is not one of {', '.join(valid)} (any case); ignored")
    return default


def names(var: str, valid: Iterable[str], what: str) -> list[str]:
    """The comma-separated names in ``var`` that are in ``valid`` (lower-cased); the
    others warn (``what``: what they should be, plural), listing the valid ones."""
    raw = os.environ.get(var, "")
    got = [n.strip().lower() for n in raw.split(",") if n.strip()]
    ok = {v.lower() for v in valid}
    unknown = [n for n in got if n not in ok]
    if unknown:
        import difflib

        hints = [difflib.get_close_matches(n, sorted(ok), n=1) for n in unknown]
        said = ", ".join(
            f"{n!r}" + (f" (did you mean {h[0]!r}?)" if h else "")
            for n, h in zip(unknown, hints, strict=True)
        )
        _warn(
            var,
            raw,
            f"{var}={raw!r}: unknown {what} {said} (ignored); valid: {', '.join(sorted(ok))}",
        )
    return [n for n in got if n in ok]
