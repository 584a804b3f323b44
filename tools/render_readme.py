#!/usr/bin/env python3
"""Write the generated support matrix into README.md (between the support-matrix markers).

python tools/render_readme.py          # rewrite README.md
python tools/render_readme.py --check  # exit 1 if README.md is stale (a unit test does this)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from fi_compat import support  # noqa: E402

START, END = "<!-- support-matrix:start -->", "<!-- support-matrix:end -->"


def rendered(text: str) -> str:
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{support.markdown()}\n{END}{tail}"


def main() -> int:
    readme = ROOT / "README.md"
    text = readme.read_text()
    new = rendered(text)
    if "--check" in sys.argv:
        return int(new != text)
    readme.write_text(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
