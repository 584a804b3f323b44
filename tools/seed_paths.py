"""Record how each FlashInfer release turns ``(seed, offset, generator)`` into the
Philox ``(seed, offset)`` its sampling kernels get, read statically from the release
archives (wheels, or sdists before 0.5.0), into
``tests/static/snapshots/sampling-seed-paths.json``.

Per release (those whose samplers draw their own numbers, 0.2.3 on):

* ``helper``: the key (in ``sources``) of the source text of ``get_seed_and_offset`` in
  ``flashinfer/sampling.py`` (0.4.0 on), or ``"philox_cuda_state"`` where the C++
  extension takes the ``torch.Generator`` and calls torch's
  ``CUDAGeneratorImpl::philox_cuda_state(increment)`` itself (0.2.3-0.3.1.post1);
* ``increments``: per inner function (the one that calls the kernel module), the
  increment expression as written (Python, or the C++ argument of
  ``philox_cuda_state``), and ``guarded``: the call sits under ``if seed is None or
  offset is None`` (an explicit seed/offset bypasses it);
* ``seed_arr``: how the kernels index a seed tensor: ``"[0]"`` (one value for every
  row), ``"[bx * seed_stride]"`` (per row) or ``None`` (no seed tensors).

The static test ``tests/static/test_sampling_seed_paths.py`` runs the recorded helper
source on the generator fi_compat hands the release, so the check follows each
release's own code, not a model of it.  Usage::

    python tools/seed_paths.py [--wheels ~/.cache/fi_compat/wheels]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

from fi_compat.registry import KNOWN_RELEASES, at_least, place  # noqa: E402
from snapshot import release_archive  # noqa: E402

OUT = ROOT / "tests" / "static" / "snapshots" / "sampling-seed-paths.json"
FIRST = "0.2.3"  # the first release whose samplers draw from a generator


def _read(path: Path, name: str) -> str | None:
    """``name`` as a wheel has it (``flashinfer/sampling.py``), from a wheel or an sdist."""
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as zf:
            try:
                return zf.read(name).decode()
            except KeyError:
                return None
    with tarfile.open(path, "r:gz") as tf:
        for m in tf.getmembers():
            if m.isfile() and m.name.partition("/")[2] == name:
                fh = tf.extractfile(m)
                assert fh is not None
                return fh.read().decode()
    return None


def _guarded(stack: list[ast.AST]) -> bool:
    """Inside ``if seed is None or offset is None:``."""
    for node in stack:
        if isinstance(node, ast.If):
            text = ast.unparse(node.test)
            if "seed is None" in text and "offset is None" in text:
                return True
    return False


def _python(src: str) -> tuple[str | None, dict[str, dict[str, object]]]:
    tree = ast.parse(src)
    helper = None
    calls: dict[str, dict[str, object]] = {}

    def walk(node: ast.AST, fns: list[str], stack: list[ast.AST]) -> None:
        nonlocal helper
        if isinstance(node, ast.FunctionDef):
            if node.name == "get_seed_and_offset" and not fns:
                helper = ast.get_source_segment(src, node)
            fns = [*fns, node.name]
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "get_seed_and_offset"
            and fns
        ):
            entry = {"increment": ast.unparse(node.args[0]), "guarded": _guarded(stack)}
            old = calls.setdefault(fns[-1], entry)
            assert old == entry, (fns[-1], old, entry)
        for child in ast.iter_child_nodes(node):
            walk(child, fns, [*stack, node])

    walk(tree, [], [])
    return helper, calls


def _cpp(src: str) -> dict[str, dict[str, object]]:
    calls: dict[str, dict[str, object]] = {}
    starts = [(m.start(), m.group(1)) for m in re.finditer(r"^void (\w+)\(", src, re.M)]
    for i, (pos, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(src)
        m = re.search(r"philox_cuda_state\(([^;]*)\);", src[pos:end])
        if m:
            calls[name] = {"increment": " ".join(m.group(1).split()), "guarded": False}
    return calls


def _seed_arr(cuh: str | None) -> str | None:
    if cuh is None or "seed_arr" not in cuh:
        return None
    if "seed_arr[bx * seed_stride]" in cuh:
        return "[bx * seed_stride]"
    assert "seed_arr[0]" in cuh
    return "[0]"


def record(version: str, cache: Path, sources: dict[str, str]) -> dict[str, object]:
    path = release_archive(version, cache)
    py = _read(path, "flashinfer/sampling.py")
    assert py is not None, version
    helper, calls = _python(py)
    key: str | None
    if helper is not None:
        key = hashlib.sha256(helper.encode()).hexdigest()[:12]
        sources[key] = helper
    else:
        cu = _read(path, "csrc/sampling.cu")
        assert cu is not None, version
        calls, key = _cpp(cu), "philox_cuda_state"
    wheel_cuh = "flashinfer/data/include/flashinfer/sampling.cuh"
    cuh = _read(path, wheel_cuh) or _read(path, "include/flashinfer/sampling.cuh")
    return {"helper": key, "increments": calls, "seed_arr": _seed_arr(cuh)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.environ.get("FI_COMPAT_WHEEL_CACHE", "~/.cache/fi_compat/wheels")
    ap.add_argument("--wheels", default=default, help="wheel cache directory")
    args = ap.parse_args(argv)
    cache = Path(args.wheels).expanduser()
    sources: dict[str, str] = {}
    releases = {v: record(v, cache, sources) for v in KNOWN_RELEASES if at_least(place(v), FIRST)}
    # one line per release: a diff shows which releases changed
    rows = [f"  {json.dumps(v)}: {json.dumps(r)}" for v, r in releases.items()]
    text = '{\n "sources": ' + json.dumps(sources, indent=1).replace("\n", "\n ")
    text += ',\n "releases": {\n' + ",\n".join(rows) + "\n }\n}\n"
    json.loads(text)  # well-formed
    OUT.write_text(text)
    print(f"{OUT.relative_to(ROOT)}: {len(releases)} releases, {len(sources)} helper sources")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
