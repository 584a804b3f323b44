"""The upgrade commands' command lines: ``diff``, ``scan``, ``migrate``.

Each parser stores its entry point as ``run`` (``args.run(args)`` returns the exit
status); the modules behind them (:mod:`.diff`, :mod:`.scan`, :mod:`.migrate`) are
imported only when their command runs, ``libcst`` (``pip install 'fi_compat[tools]'``)
only by ``migrate``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def _diff(args: argparse.Namespace) -> int:
    from .diff import main

    return main(args)


def _scan(args: argparse.Namespace) -> int:
    from .scan import main

    return main(args)


def _migrate(args: argparse.Namespace) -> int:
    from .migrate import main

    return main(args)


def add_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``diff``, ``scan`` and ``migrate`` on the subcommand parser."""
    d = sub.add_parser("diff", help="what changed in FlashInfer's public API between two releases")
    d.add_argument("old", metavar="OLD", help="flashinfer-python release, e.g. 0.6.17")
    d.add_argument("new", metavar="NEW", help="flashinfer-python release, e.g. 0.6.18")
    d.add_argument("--module", metavar="M", help="only FlashInfer module M and its submodules")
    d.add_argument("--json", action="store_true", help="machine-readable (schema 1)")
    d.add_argument(
        "--all", action="store_true", help="list every item, not the first 15 per section"
    )
    d.set_defaults(run=_diff)
    s = sub.add_parser(
        "scan", help="check a codebase's FlashInfer call sites against releases (static)"
    )
    s.add_argument("paths", nargs="+", metavar="PATH", help="files or directories to scan")
    s.add_argument(
        "--release",
        action="append",
        metavar="R",
        help="target release (repeatable; default: the newest known)",
    )
    s.add_argument(
        "--pin",
        metavar="R",
        help="the release the code is written for (default: its flashinfer-python pin)",
    )
    s.add_argument("--json", action="store_true", help="machine-readable (schema 1)")
    s.add_argument("--all", action="store_true", help="list every site, not only changes")
    s.set_defaults(run=_scan)
    m = sub.add_parser(
        "migrate", help="rewrite FlashInfer imports and calls to fi_compat (needs libcst)"
    )
    m.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    m.add_argument(
        "--pin",
        metavar="R",
        help="the release the code is written for (default: its flashinfer-python pin)",
    )
    m.add_argument("--write", action="store_true", help="rewrite the files (default: print a diff)")
    m.set_defaults(run=_migrate)
