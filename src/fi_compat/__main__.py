"""``python -m fi_compat info [--json] [--probe]`` (see :mod:`fi_compat.info`)."""

from __future__ import annotations


def main() -> int:
    from .info import main as _main

    return _main()


if __name__ == "__main__":
    raise SystemExit(main())
