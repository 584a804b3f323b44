#!/usr/bin/env python3
"""Generate signature snapshots of FlashInfer entry points from the PyPI wheels, statically.

    python tools/snapshot.py flashinfer.gdn_prefill:chunk_gated_delta_rule \
        [--since 0.6.0] [--until 0.7.4] [--wheels ~/.cache/fi_compat/wheels]

For every release in ``fi_compat.registry.KNOWN_RELEASES`` within the bounds it downloads
the wheel (``pip download --no-deps``, cached in ``--wheels``), or for the releases before
0.5.0, which PyPI has as source distributions only, the sdist; reads the module's source
out of the archive and finds the function with :mod:`ast` -- nothing is imported, built
or executed.  ``--merge`` keeps the releases an existing snapshot has outside the bounds.
``module:qualname`` takes ``Class.method`` qualnames, and an enum class name
(``flashinfer.fused_moe:ActivationType``) records its members and integer values;
``mod_a|mod_b:name`` takes the first module (in order) that has the name;
``from .x import name`` (and ``*``) re-exports are followed to the defining module.
The result is written (never edited by hand) to
``src/fi_compat/_snapshots/<module>.<qualname>.json``: unique signatures once, and per
release the defining module and the signature id (``null`` where the name is absent).
``--facts`` then regenerates ``src/fi_compat/_core/_facts.py``, the per-release facts
(first release of each entry point and parameter, removals, gaps, positional prefix)
the adapter tables read instead of typing releases by hand.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from packaging.version import Version  # noqa: E402

from fi_compat.registry import KNOWN_RELEASES  # noqa: E402

SNAPSHOT_DIR = ROOT / "src" / "fi_compat" / "_snapshots"
KINDS = {"posonlyargs": "po", "args": "pk", "kwonlyargs": "ko"}


def release_archive(version: str, cache: Path) -> Path:
    """The release's wheel, or its sdist where PyPI has no wheel (before 0.5.0)."""
    cache.mkdir(parents=True, exist_ok=True)
    wheel = cache / f"flashinfer_python-{version}-py3-none-any.whl"
    sdist = cache / f"flashinfer_python-{version}.tar.gz"
    for path in (wheel, sdist):
        if path.exists():
            return path
    if Version(version) < Version("0.5.0"):
        _fetch_sdist(version, sdist)
        return sdist
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "-d",
            str(cache),
            f"flashinfer-python=={version}",
        ],
        check=True,
    )
    return wheel


SIMPLE_INDEX = os.environ.get("FI_COMPAT_SIMPLE_INDEX", "https://pypi.org/simple")


def _fetch_sdist(version: str, dest: Path) -> None:
    """The sdist file from the simple index, checked against its sha256 (``pip
    download`` would run the sdist's setup.py to read its metadata, which fails for
    some of these releases without CUDA)."""
    import re
    import urllib.request

    page = urllib.request.urlopen(f"{SIMPLE_INDEX}/flashinfer-python/").read().decode()
    for url, name in re.findall(r'href="([^"]+)"[^>]*>([^<]+)<', page):
        if name == dest.name:
            href, _, frag = url.partition("#sha256=")
            data = urllib.request.urlopen(href).read()
            if frag and hashlib.sha256(data).hexdigest() != frag:
                raise RuntimeError(f"{name}: sha256 mismatch")
            dest.write_bytes(data)
            return
    raise FileNotFoundError(f"{dest.name} is not on {SIMPLE_INDEX}")


class Archive:
    """The files of a wheel (zip) or an sdist (tar.gz, one top-level folder), by the
    path a wheel would have them at (``flashinfer/norm.py``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._zip = zipfile.ZipFile(path) if path.suffix == ".whl" else None
        self._tar = None if self._zip else tarfile.open(path, "r:gz")  # noqa: SIM115 (close())
        self._names: dict[str, str] = {}
        if self._tar is not None:
            for m in self._tar.getmembers():
                if m.isfile() and m.name.endswith(".py"):
                    self._names[m.name.partition("/")[2]] = m.name

    def read(self, name: str) -> bytes:
        if self._zip is not None:
            return self._zip.read(name)
        assert self._tar is not None
        fh = self._tar.extractfile(self._names[name])  # KeyError when absent, as zip
        assert fh is not None
        return fh.read()

    def close(self) -> None:
        (self._zip or self._tar).close()  # type: ignore[union-attr]


def _module_source(zf: Archive, module: str) -> tuple[str, str] | None:
    base = module.replace(".", "/")
    for cand in (f"{base}.py", f"{base}/__init__.py"):
        try:
            return cand, zf.read(cand).decode("utf-8")
        except KeyError:
            continue
    return None


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[list[str | None]]:
    a = fn.args
    out: list[list[str | None]] = []
    positional = [*a.posonlyargs, *a.args]
    pos_defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults))
    pos_defaults += list(a.defaults)
    for i, arg in enumerate(positional):
        kind = "po" if i < len(a.posonlyargs) else "pk"
        d = pos_defaults[i]
        out.append([arg.arg, kind, ast.unparse(d) if d is not None else None, _ann(arg)])
    if a.vararg:
        out.append([a.vararg.arg, "va", None, _ann(a.vararg)])
    for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        out.append([arg.arg, "ko", ast.unparse(d) if d is not None else None, _ann(arg)])
    if a.kwarg:
        out.append([a.kwarg.arg, "vk", None, _ann(a.kwarg)])
    return out


def _members(cls: ast.ClassDef) -> list[list[str | None]]:
    """An enum class body as [[name, "member", integer value, None], ...] (``X = 3`` and
    ``X = (3,)`` both give 3; members are in definition order)."""
    out: list[list[str | None]] = []
    for node in cls.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(value, ast.Tuple) and len(value.elts) == 1:
                value = value.elts[0]
            if (
                isinstance(target, ast.Name)
                and isinstance(value, ast.Constant)
                and type(value.value) is int
                and not target.id.startswith("_")
            ):
                out.append([target.id, "member", str(value.value), None])
    return out


def _ann(arg: ast.arg) -> str | None:
    return ast.unparse(arg.annotation) if arg.annotation is not None else None


def find(zf: Archive, module: str, qualname: str, depth: int = 0) -> tuple[str, list] | None:
    """(defining module, params) of ``module.qualname`` in the wheel, or None."""
    found = _module_source(zf, module)
    if found is None or depth > 5:
        return None
    fname, src = found
    tree = ast.parse(src, fname)
    head, _, rest = qualname.partition(".")
    result: tuple[str, list] | None = None
    for node in tree.body:  # the last binding wins, as at run time
        if rest and isinstance(node, ast.ClassDef) and node.name == head:
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name == rest:
                    result = (module, _params(sub))
        elif not rest and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == head:
                result = (module, _params(node))
        elif not rest and isinstance(node, ast.ClassDef) and node.name == head:
            result = (module, _members(node))
        elif isinstance(node, ast.ImportFrom) and node.level >= 1:
            for alias in node.names:
                star = alias.name == "*"
                if star or (alias.asname or alias.name) == head:
                    pkg = module if fname.endswith("__init__.py") else module.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        pkg = pkg.rpartition(".")[0]
                    target = f"{pkg}.{node.module}" if node.module else pkg
                    sub_q = qualname if star else alias.name + (f".{rest}" if rest else "")
                    hit = find(zf, target, sub_q, depth + 1)
                    if hit is not None:
                        result = hit
    return result


def snapshot(entry: str, since: str, until: str, cache: Path, old: dict | None = None) -> dict:
    module, _, qualname = entry.partition(":")
    lo, hi = KNOWN_RELEASES.index(since), KNOWN_RELEASES.index(until)
    sigs: dict[str, list] = dict(old["signatures"]) if old else {}
    by_key: dict[str, str] = {json.dumps(p): sid for sid, p in sigs.items()}
    kept = old["releases"] if old else {}
    releases: dict[str, dict | None] = {}
    wanted = set(KNOWN_RELEASES[lo : hi + 1])
    for version in KNOWN_RELEASES:
        if version not in wanted:
            if version in kept:
                releases[version] = kept[version]
            continue
        path = release_archive(version, cache)
        zf = Archive(path)
        try:
            hit = None
            for candidate in module.split("|"):  # the first module that has it
                hit = hit or find(zf, candidate, qualname)
        finally:
            zf.close()
        if hit is None:
            releases[version] = None
            continue
        defining, params = hit
        key = json.dumps(params)
        sid = by_key.get(key)
        if sid is None:
            sid = by_key[key] = f"s{len(sigs)}"
            sigs[sid] = params
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        key_name = "wheel_sha256" if path.suffix == ".whl" else "sdist_sha256"
        releases[version] = {"module": defining, "signature": sid, key_name: digest}
        print(f"{version:14s} {defining:40s} {sid} ({len(params)} params)", file=sys.stderr)
    return {
        "entry": entry,
        "generated_by": "tools/snapshot.py (static ast read of the PyPI wheels and, before "
        "0.5.0, sdists; do not edit)",
        "param_format": ["name", "kind: po|pk|va|ko|vk", "default source or null", "annotation"],
        "signatures": sigs,
        "releases": releases,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("entry", nargs="*", help="module:qualname, e.g. flashinfer.gdn_prefill:f")
    ap.add_argument(
        "--facts",
        action="store_true",
        help="(re)generate src/fi_compat/_core/_facts.py from the snapshots (after the entries)",
    )
    ap.add_argument("--since", default=KNOWN_RELEASES[0])
    ap.add_argument("--until", default=KNOWN_RELEASES[-1])
    default_cache = os.environ.get("FI_COMPAT_WHEEL_CACHE", "~/.cache/fi_compat/wheels")
    ap.add_argument("--wheels", default=default_cache, help="wheel cache directory")
    ap.add_argument("--out", default=str(SNAPSHOT_DIR))
    ap.add_argument(
        "--merge", action="store_true", help="keep an existing snapshot's other releases"
    )
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for entry in args.entry:
        module, _, qualname = entry.partition(":")
        name = f"{module.split('|')[0].removeprefix('flashinfer.')}.{qualname}.json"
        old = json.loads((out / name).read_text()) if args.merge and (out / name).exists() else None
        data = snapshot(entry, args.since, args.until, Path(args.wheels).expanduser(), old)
        (out / name).write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
        print(f"wrote {out / name}", file=sys.stderr)
    if args.facts:
        from fi_compat._core import facts

        path = Path(facts.__file__).with_name("_facts.py")
        path.write_text(facts.render())
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
