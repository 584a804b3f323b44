"""The command line: ``python -m fi_compat info | doctor | download-cubin``, and the
upgrade tools ``diff | scan | migrate`` (registered by :mod:`fi_compat.cli.upgrade`).

:mod:`fi_compat.cli.info` describes the installation and the adapter of every facade,
:mod:`fi_compat.cli.doctor` judges it and fetches cubins (it reads what ``info``
collects; ``info`` never imports ``doctor``).  This module parses the command line and
dispatches.  The call path never imports this package.
"""

from __future__ import annotations

import json
import os
import sys

from .._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _seconds(text: str) -> float:
    """argparse type of ``--timeout``: a positive, finite number of seconds."""
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def _capability(text: str) -> tuple[int, int]:
    """argparse type of ``--capability``: ``10.3``, ``103``, ``sm_103a``."""
    import argparse

    from ..device import parse_capability

    try:
        cc = parse_capability(text)
    except ValueError:
        cc = (-1, -1)
    if not (1 <= cc[0] <= 99 and 0 <= cc[1] <= 9):
        raise argparse.ArgumentTypeError(
            f"not a compute capability: {text!r} (use major.minor, e.g. 9.0, 10.3 or 12.1)"
        )
    return cc


def version_line() -> str:
    """``--version``: fi_compat's version and the detected flashinfer-python."""
    from ..detection import detect

    fi = detect().flashinfer
    if fi is None:
        return f"fi_compat {__version__} (flashinfer-python not installed)"
    where = "FI_COMPAT_FLASHINFER_VERSION" if fi.location == "<override>" else fi.location
    return f"fi_compat {__version__} (flashinfer-python {fi.version} at {where})"


def main(argv: list[str] | None = None) -> int:
    import argparse

    from ..errors import FiCompatError

    class _Version(argparse.Action):
        def __init__(self, option_strings: list[str], dest: str, **kw: Any) -> None:
            super().__init__(option_strings, dest, nargs=0, help=kw.get("help"))

        def __call__(self, parser: argparse.ArgumentParser, *_a: Any, **_k: Any) -> None:
            try:
                line = version_line()
            except FiCompatError as exc:
                parser.exit(2, f"{parser.prog}: error: {exc}\n")
            print(line)
            parser.exit(0)

    ap = argparse.ArgumentParser(
        prog="fi-compat" if os.path.basename(sys.argv[0]) == "fi-compat" else "python -m fi_compat"
    )
    ap.add_argument(
        "--version", action=_Version, help="print fi_compat's and flashinfer-python's versions"
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    info = sub.add_parser("info", help="describe the installed FlashInfer and chosen adapters")
    info.add_argument("--json", action="store_true", help="machine-readable (schema 1)")
    info.add_argument("--probe", action="store_true", help="import FlashInfer in a subprocess")
    info.add_argument(
        "--timeout", type=_seconds, default=120.0, help="probe timeout, seconds (> 0)"
    )
    info.add_argument("--all", action="store_true", help="one row per entry point")
    doc = sub.add_parser("doctor", help="judge the installation; exit 1 on errors")
    doc.add_argument("--json", action="store_true")
    doc.add_argument("--probe", action="store_true", help="import FlashInfer in a subprocess")
    doc.add_argument("--timeout", type=_seconds, default=120.0, help="probe timeout (> 0)")
    doc.add_argument(
        "--capability",
        type=_capability,
        help="judge for this GPU, e.g. 10.3 (default: the current GPU, if any)",
    )
    dl = sub.add_parser("download-cubin", help="fetch the cubins for the installed release")
    dl.add_argument("--dry-run", action="store_true", help="show exactly what would run")
    dl.add_argument("--dest", help="cubin directory (sets FLASHINFER_CUBIN_DIR)")
    dl.add_argument(
        "--timeout", type=float, default=1800.0, help="give up after this many seconds (1800)"
    )
    from .upgrade import add_parsers

    add_parsers(sub)  # diff, scan, migrate
    args = ap.parse_args(argv)
    if hasattr(args, "run"):
        return int(args.run(args))
    try:
        if args.cmd == "doctor":
            from .doctor import main_doctor

            return main_doctor(args)
        if args.cmd == "download-cubin":
            from .doctor import main_download

            return main_download(args)
        from .info import collect, render, tty_progress

        progress = None if args.json else tty_progress()  # stderr, on a terminal only
        data = collect(do_probe=args.probe, timeout=args.timeout, progress=progress)
    except FiCompatError as exc:  # e.g. an invalid FI_COMPAT_FLASHINFER_VERSION
        print(f"{ap.prog}: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(
            render(
                data,
                color=sys.stdout.isatty() and not os.environ.get("NO_COLOR"),
                full=args.all,
            )
        )
    return 0
