"""``python -m fi_compat scan PATH... [--release R ...] [--pin R] [--json]``.

A static scan (:mod:`fi_compat.cli.callsites`: nothing of the scanned code is imported)
of a codebase's FlashInfer imports and call sites, each judged against the public API
of every target release (:mod:`fi_compat.cli.api`, from the API history):

* a call binds its positional arguments and keywords to the callee's signature in the
  release the code is written for (``--pin``; by default read from the project's
  requirements / pyproject: ``flashinfer-python==X`` or ``>=X``) and in each target
  release; per target: ``same`` (every argument lands in the same parameter),
  ``shifted`` (a positional argument lands in another parameter: the slot and both
  names are given), ``unknown-keyword``, ``too-many-positional``,
  ``missing-argument``, ``removed`` (the callee existed before the release),
  ``needs-newer`` (it exists only after), ``absent``, or ``unknown`` (the history
  cannot say: a base class it does not describe);
* an import or a reference is ``present`` or ``removed`` / ``needs-newer`` / ``absent``;
  a ``hasattr`` probe reports what it answers per release (never an error);
* fi_compat's side: whether it covers the callee, the facade that would serve it, and
  whether the call fits the facade's stable positional prefix or needs
  ``fi_compat.written_for(pin)``; on each target what the adapter does (casts,
  renames, emulations, refusals).

Exit status: 1 when any site is ``shifted`` or breaks (any status but ``same``,
``present``, ``unknown``, probes) in some target release; 0 otherwise; 2 for a usage
error.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from .api import Coverage, History, Signature, Target
    from .callsites import Site

SCHEMA = 1
OK = frozenset({"same", "present", "unknown", "true", "false"})
PIN_FILES = ("requirements*.txt", "requirements/*.txt", "pyproject.toml", "setup.py", "setup.cfg")
_PIN = re.compile(r"flashinfer[-_]python\s*(?:\[[^\]]*\])?\s*(==|>=|~=)\s*([0-9][0-9A-Za-z.+]*)")


def find_pin(roots: list[Path], known: list[str]) -> tuple[str, str] | None:
    """(release, file) of the first ``flashinfer-python==X`` / ``>=X`` / ``~=X`` found in
    the requirements files, ``pyproject.toml`` or ``setup.py`` of a scanned directory,
    its subdirectories or up to three parents (``==`` preferred), where X is a known
    release."""
    found: list[tuple[int, str, str]] = []
    seen: set[Path] = set()
    for root in roots:
        base = root if root.is_dir() else root.parent
        dirs = [base, *list(base.parents)[:3]]
        for d in dirs:
            # the directory itself and its parents; below the scanned directory one level
            # too (SGLang keeps its pyproject.toml in python/)
            patterns = [*PIN_FILES, *(f"*/{p}" for p in PIN_FILES)] if d == base else PIN_FILES
            for pattern in patterns:
                for f in sorted(d.glob(pattern)):
                    if f in seen or not f.is_file():
                        continue
                    seen.add(f)
                    try:
                        text = f.read_text(errors="replace")
                    except OSError:
                        continue
                    for m in _PIN.finditer(text):
                        v = m.group(2).rstrip(".")
                        if v in known:
                            found.append((0 if m.group(1) == "==" else 1, v, str(f)))
    if not found:
        return None
    found.sort(key=lambda x: x[0])
    return found[0][1], found[0][2]


class Judge:
    """Judges sites against releases (memoised per callee and release)."""

    def __init__(self, history: History, coverage: Coverage | None, pin: str, targets: list[str]):
        self.h = history
        self.cov = coverage
        self.pin = pin
        self.targets = targets
        self._look: dict[tuple[str, int], Target] = {}

    def lookup(self, path: str, release: str) -> Target:
        i = self.h.index[release]
        key = (path, i)
        if key not in self._look:
            self._look[key] = self.h.lookup(path, i)
        return self._look[key]

    def absence(self, path: str, release: str) -> tuple[str, str]:
        """Why ``path`` is absent in ``release``: removed, needs-newer or absent."""
        i = self.h.index[release]
        have = [j for j in range(len(self.h.releases)) if self._kind(path, j) != "absent"]
        reason = self.lookup(path, release).reason
        if not have:  # a variable, a private name: what the history does not record
            return "unknown", f"not a public function or class in any release ({reason})"
        if all(j > i for j in have):
            return "needs-newer", f"first in {self.h.releases[have[0]]}"
        if all(j < i for j in have):
            _module, rest = self.h.split(path)
            moved = self.h.elsewhere(rest[0], i) if rest else []
            where = f"; {rest[0]} is at {', '.join(moved[:2])}" if moved else ""
            return "removed", f"last in {self.h.releases[have[-1]]}; {reason}{where}"
        return (
            "absent",
            f"{reason} (present in {self.h.releases[have[0]]}..{self.h.releases[have[-1]]}, "
            f"with gaps)",
        )

    def _kind(self, path: str, j: int) -> str:
        return self.lookup(path, self.h.releases[j]).kind

    def signature(self, site: Site, release: str) -> tuple[Target, Signature | None]:
        from .api import signature

        t = self.lookup(site.path, release)
        return t, signature(t, site.bound, self.h, self.h.index[release])

    def stable(self, site: Site, release: str, names: list[str | None]) -> list[str | None]:
        """Parameter names mapped to fi_compat's stable names where it covers the callee
        (a rename by meaning is no shift)."""
        es = self.entries(site, release)
        if not es:
            return names
        from .api import Coverage

        return [None if n is None else Coverage.stable_name(es[0], release, n) for n in names]

    def entries(self, site: Site, release: str) -> list[Any]:
        if self.cov is None or site.kind != "call":
            return []
        t = self.lookup(site.path, release)
        if t.kind == "function" and t.key:
            return self.cov.entries_for(t.key, release)
        if t.kind == "method" and t.cls and t.record is not None:
            name = t.record.get("alias_of") or site.path.rpartition(".")[2]
            return self.cov.method_entries(t.cls, name, release)
        if t.kind == "class" and t.key:
            return self.cov.method_entries(t.key, "__init__", release)
        return []

    def judge(self, site: Site) -> dict[str, Any]:
        out: dict[str, Any] = {}
        base = self.pin
        if self.lookup(site.path, base).kind == "absent":  # written for a newer release?
            base = next(
                (r for r in self.targets if self.lookup(site.path, r).kind != "absent"), base
            )
        for r in dict.fromkeys([self.pin, *self.targets]):
            out[r] = self._judge(site, r, base)
        return out

    def _judge(self, site: Site, release: str, base: str) -> dict[str, Any]:
        from .api import bind

        t = self.lookup(site.path, release)
        if site.kind == "probe":
            return {"status": "true" if t.kind != "absent" else "false"}
        if t.kind == "absent":
            status, detail = self.absence(site.path, release)
            return {"status": status, "detail": detail}
        if site.kind != "call":
            return {"status": "present"}
        if site.replaced:
            return {
                "status": "unknown",
                "detail": "the project replaces this method on its objects",
            }
        t, sig = self.signature(site, release)
        if sig is None:
            return {"status": "unknown", "detail": f"{t.kind}: no signature the history can bind"}
        b = bind(sig, site.positional, site.keywords, site.star_kw)
        res: dict[str, Any] = {"status": "same"}
        if b.problems:
            res["status"] = b.problems[0][0]
            res["detail"] = "; ".join(p[1] for p in b.problems)
        if b.absorbed:
            res["absorbed"] = b.absorbed
        if sig.legacy_from is not None and site.positional and site.positional > sig.legacy_from:
            res["legacy_positional"] = site.positional - sig.legacy_from
        # meaning: the slots against the release the code is written for
        _bt, bsig = self.signature(site, base)
        if bsig is not None and release != base:
            bb = bind(bsig, site.positional, site.keywords, site.star_kw)
            now = self.stable(site, release, b.slots)
            was = self.stable(site, base, bb.slots)
            shifts = [
                {"slot": k, "was": w, "now": n}
                for k, (w, n) in enumerate(zip(was, now, strict=False))
                if w != n and (w is not None or n is not None)
            ]
            if shifts:
                res["shifted"] = shifts
                if res["status"] == "same":
                    res["status"] = "shifted"
                    first = shifts[0]
                    res["detail"] = (
                        f"positional slot {first['slot']} lands in {first['now']!r} "
                        f"(was {first['was']!r} in {base})"
                        + (f" and {len(shifts) - 1} more" if len(shifts) > 1 else "")
                    )
            given = {s for s in bb.slots if s} | set(site.keywords)
            changed = [
                {"param": p, "was": bsig.defaults[p], "now": sig.defaults[p]}
                for p in bsig.defaults
                if p not in given and p in sig.defaults and bsig.defaults[p] != sig.defaults[p]
            ]
            if changed:
                res["defaults_changed"] = changed
        return res

    # -- fi_compat's side ---------------------------------------------------------------
    def fi_compat(self, site: Site) -> dict[str, Any] | None:
        if self.cov is None or site.kind not in ("call", "import", "reference"):
            return None
        from .api import covered_prefix

        if site.kind != "call":
            if site.path in self.h.modules:
                return None  # a module: what matters is the names used from it
            hit = covered_prefix(site.path)
            if hit is None:
                return {"covered": False}
            return {"covered": True, "as": hit[1] + site.path[len(hit[0]) :]}
        for r in dict.fromkeys([self.pin, *reversed(self.targets)]):
            es = self.entries(site, r)
            if es:
                break
        else:
            t = self.lookup(site.path, self.pin)
            if t.kind == "method" and covered_prefix(site.path.rpartition(".")[0]) is not None:
                return {
                    "covered": True,
                    "action": "FlashInfer's own method, inherited by fi_compat's subclass "
                    "of the wrapper (its calls of plan/run bind as the installed release "
                    "does; docs/wrappers.md)",
                    "releases": {},
                }
            return {"covered": False}
        e = es[0]
        from .api import facade_path

        prefix = e.positional[0]
        n = site.positional
        out: dict[str, Any] = {
            "covered": True,
            "entry_point": e.dotted,
            "positional_prefix": prefix,
        }
        if n is not None and n > prefix:
            out["action"] = (
                f"fi_compat.written_for({self.pin!r}).{facade_path(e)}: {n} positional arguments "
                f"(the stable signature takes {prefix}) keep their {self.pin} meaning"
            )
            out["needs_written_for"] = True
        else:
            stable = set(e.params)
            odd = [k for k in site.keywords if k not in stable]
            if odd:
                out["action"] = (
                    f"fi_compat.written_for({self.pin!r}).{facade_path(e)}: keywords "
                    f"{', '.join(odd)} are {self.pin} names the stable signature spells otherwise"
                )
                out["needs_written_for"] = True
            else:
                out["action"] = f"{e.dotted} binds it by its stable signature"
        from .api import bind

        passed = set(site.keywords)
        _t, sig = self.signature(site, self.pin)
        if sig is not None:
            slots = bind(sig, site.positional, site.keywords, site.star_kw).slots
            passed |= {n for n in self.stable(site, self.pin, slots) if n}
        per: dict[str, Any] = {}
        assert self.cov is not None
        for r in dict.fromkeys([self.pin, *self.targets]):
            es_r = self.entries(site, r)
            if es_r:
                per[r] = _relevant(self.cov.facts(es_r[0], r), passed)
        out["releases"] = per
        return out


def _relevant(facts: dict[str, Any], passed: set[str]) -> dict[str, Any]:
    """The adapter facts that concern a call passing ``passed`` (stable names): their
    native dtypes, which of them are emulated / dropped / refused; the adapter's
    rewrites, known issues and GPU limits always."""
    if "problem" in facts:
        return {"problem": facts["problem"]}
    out: dict[str, Any] = {}
    dtypes = {n: d for n, d in facts.get("native_dtypes", {}).items() if n in passed}
    if dtypes:
        out["native_dtypes"] = dtypes
    for k in ("normalizers", "issues", "gpus"):
        if facts.get(k):
            out[k] = facts[k]
    for k in ("emulated", "dropped", "refused"):
        hit = [n for n in facts.get(k, ()) if n in passed]
        if hit:
            out[k] = hit
    renamed = {n: r for n, r in facts.get("renamed", {}).items() if n in passed}
    if renamed:
        out["renamed"] = renamed
    return out


def _relative(path: str) -> str:
    """``path`` relative to the working directory where it lies below it."""
    import os

    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def run(
    paths: list[str], pin: str | None, targets: list[str], with_fi_compat: bool = True
) -> dict[str, Any]:
    """The scan as the JSON document ``--json`` prints (see docs/upgrade.md)."""
    from .api import Coverage, history
    from .callsites import Project

    t0 = time.perf_counter()
    h = history()
    roots = [Path(p).resolve() for p in paths]
    pin_from = "--pin"
    if pin is None:
        found = find_pin(roots, h.releases)
        if found is not None:
            pin, pin_from = found[0], _relative(found[1])
        else:
            pin, pin_from = h.releases[-1], "default (no flashinfer-python pin found)"
    targets = targets or [h.releases[-1]]
    project = Project(h)
    project.load(roots)
    t_scan = time.perf_counter() - t0
    judge = Judge(h, Coverage() if with_fi_compat else None, pin, targets)
    sites: list[dict[str, Any]] = []
    counts: dict[str, dict[str, int]] = {r: {} for r in dict.fromkeys([pin, *targets])}
    breaking = 0
    for fa in project.files:
        for s in fa.sites:
            rel = judge.judge(s)
            rec: dict[str, Any] = {
                "file": s.file,
                "line": s.line,
                "col": s.span[1],
                "kind": s.kind,
                "path": s.path,
                "code": s.code,
            }
            if s.kind == "call":
                rec.update(
                    bound=s.bound,
                    positional=s.positional,
                    keywords=s.keywords,
                    star_kwargs=s.star_kw,
                )
            rec["releases"] = rel
            fc = judge.fi_compat(s)
            if fc is not None:
                rec["fi_compat"] = fc
            bad = any(v["status"] not in OK for r, v in rel.items() if r in targets)
            rec["breaks"] = bad
            breaking += bad
            for r, v in rel.items():
                counts[r][v["status"]] = counts[r].get(v["status"], 0) + 1
            sites.append(rec)
    return {
        "schema": SCHEMA,
        "command": "scan",
        "pin": pin,
        "pin_from": pin_from,
        "releases": targets,
        "files_scanned": project.scanned,
        "files_with_flashinfer": sum(1 for fa in project.files if fa.sites),
        "files_parsed": len(project.files),
        "seconds": {"scan": round(t_scan, 3), "total": round(time.perf_counter() - t0, 3)},
        "sites": sites,
        "summary": {"sites": len(sites), "breaking_sites": breaking, "statuses": counts},
        "not_followed": [
            {"file": fa.display, "line": line, "code": code}
            for fa in project.files
            for line, code in dict.fromkeys(fa.dynamic)
        ],
        "errors": [{"file": f, "error": e} for f, e in project.errors],
    }


def render(data: dict[str, Any], show_all: bool = False) -> str:
    """The human report: one block per site that is not ``same`` / ``present``
    everywhere (every site with ``show_all``), then the summary."""
    pin, targets = data["pin"], data["releases"]
    lines = [
        f"fi_compat scan: written for flashinfer-python {pin} ({data['pin_from']}); "
        f"checked against {', '.join(targets)}",
        f"{data['files_scanned']} Python files read, "
        f"{data['files_with_flashinfer']} touch FlashInfer, "
        f"{data['summary']['sites']} sites ({data['seconds']['total']:.2f} s)",
        "",
    ]
    shown = 0
    for s in data["sites"]:
        rel = s["releases"]
        interesting = s["breaks"] or any(
            v.get("shifted") or v.get("defaults_changed") or v["status"] not in OK
            for v in rel.values()
        )
        if s["kind"] == "probe":
            interesting = len({v["status"] for v in rel.values()}) > 1
        fc = s.get("fi_compat") or {}
        if not (interesting or show_all or fc.get("needs_written_for")):
            continue
        shown += 1
        lines.append(f"{s['file']}:{s['line']}  [{s['kind']}] {s['code']}")
        if s["path"] not in s["code"]:
            lines.append(f"    -> {s['path']}")
        for r, v in rel.items():
            tag = " (pin)" if r == pin else ""
            text = f"    {r}{tag}: {v['status']}"
            if v.get("detail"):
                text += f": {v['detail']}"
            lines.append(text)
            for d in v.get("defaults_changed", ())[:3]:
                lines.append(
                    f"        default of {d['param']!r}: {d['was']} -> {d['now']} (not passed)"
                )
            if v.get("absorbed"):
                lines.append(f"        only **kwargs takes: {', '.join(v['absorbed'])}")
            if v.get("legacy_positional"):
                lines.append(
                    f"        the last {v['legacy_positional']} bound through the release's "
                    f"deprecated positional *args"
                )
        if fc:
            if not fc.get("covered"):
                lines.append("    fi_compat: not covered")
            elif "action" in fc:
                lines.append(f"    fi_compat: {fc['action']}")
                prev = None
                for r, f in fc.get("releases", {}).items():
                    bits = _facts_line(f)
                    if bits and bits != prev:
                        lines.append(f"        on {r}: {bits}")
                    prev = bits
            else:
                lines.append(f"    fi_compat: covered as {fc['as']}")
    if not shown:
        lines.append("every site binds with the same meaning in every target release")
    lines.append("")
    lines.append("summary:")
    for r, c in data["summary"]["statuses"].items():
        tag = " (pin)" if r == pin else ""
        lines.append(
            f"  {r}{tag}: "
            + ", ".join(f"{n} {k}" for k, n in sorted(c.items(), key=lambda x: -x[1]))
        )
    lines.append(
        f"  sites that break or shift in a target release: {data['summary']['breaking_sites']}"
    )
    if data["not_followed"]:
        lines.append(
            f"  not followed (computed names): {len(data['not_followed'])}, e.g. "
            + "; ".join(f"{d['file']}:{d['line']} {d['code']}" for d in data["not_followed"][:3])
        )
    return "\n".join(lines)


def _facts_line(f: dict[str, Any]) -> str:
    bits = []
    if "problem" in f:
        return f"adapter problem: {f['problem']}"
    for n, dt in f.get("native_dtypes", {}).items():
        bits.append(f"{n} read as {dt} (other integer dtypes cast)")
    what = {"emulated": "emulated", "dropped": "dropped", "refused": "refused unless default"}
    for k, verb in what.items():
        if f.get(k):
            bits.append(f"{verb}: {', '.join(f[k])} (the release lacks it)")
    for n, r in f.get("renamed", {}).items():
        bits.append(f"{n} sent as {r}")
    if f.get("gpus"):
        bits.append("GPUs refused: SM " + ", ".join(f["gpus"]))
    if f.get("issues"):
        bits.append("known issues: " + ", ".join(f["issues"]))
    return "; ".join(bits)


def main(args: argparse.Namespace) -> int:
    from .api import history

    h = history()
    for r in [*(args.release or []), *([args.pin] if args.pin else [])]:
        if r not in h.index:
            print(
                f"python -m fi_compat scan: error: {r!r} is not a known flashinfer-python release "
                f"({h.releases[0]} ... {h.releases[-1]})",
                file=sys.stderr,
            )
            return 2
    for p in args.paths:
        if not Path(p).exists():
            print(
                f"python -m fi_compat scan: error: {p}: no such file or directory", file=sys.stderr
            )
            return 2
    data = run(args.paths, args.pin, args.release or [])
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        print(render(data, show_all=args.all))
    return 1 if data["summary"]["breaking_sites"] else 0
