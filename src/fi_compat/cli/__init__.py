"""The command line: ``python -m fi_compat info | doctor | download-cubin``.

:mod:`fi_compat.cli.info` describes the installation and the adapter of every facade,
:mod:`fi_compat.cli.doctor` judges it and fetches cubins.  The call path never imports
this package.
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    from .info import main as _main

    return _main(argv)
