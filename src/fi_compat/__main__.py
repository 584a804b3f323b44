"""``python -m fi_compat info | doctor | download-cubin`` (see :mod:`fi_compat.cli`)."""

from __future__ import annotations


def main() -> int:
    from .cli import main as _main

    return _main()


if __name__ == "__main__":
    raise SystemExit(main())
