"""``python -m fi_compat diff OLD NEW [--module M] [--json] [--all]``.

What changed in FlashInfer's public API between two releases, from the API history
(:mod:`fi_compat.cli.api`; nothing is downloaded or imported), and what fi_compat knows
beyond signatures.

The unit is a public object: a function or class exposed under one or more public
names (``flashinfer.rmsnorm`` and ``flashinfer.norm.rmsnorm`` are one object).  Objects
are matched across the two releases by a public name they share, else (a move between
modules) by their own name.  For each:

* ``added`` / ``removed``; ``moved``: no public name in common, but the same name
  elsewhere; public names it lost or gained (``from flashinfer.decode import X`` stops
  working while ``flashinfer.X`` stays);
* parameter changes (functions, constructors, methods -- inherited ones included):
  ``inserted`` (a positional parameter before existing ones: positional callers from
  that slot on bind to other parameters), ``added``, ``removed``, ``renamed`` (same
  slot, same default), ``moved`` (positional order changed otherwise),
  ``keyword-only`` / ``positional`` (kind changes), ``default``, ``required`` /
  ``optional``, ``*args`` / ``**kwargs`` added or removed; each marked ``breaks`` when
  some existing call stops working or changes meaning, and ``shift``: the first
  positional slot whose parameter differs;
* enum members whose value changed, appeared or went away;
* for names fi_compat covers: what its adapter does on each release (native index
  dtypes, scale layouts and other normalisers, emulations, dropped or refused
  parameters, known issues, GPU families refused) where that differs, and what it does
  about each signature change (its stable signature and positional prefix);
* known issues (:mod:`fi_compat._issues`) whose range starts or ends between the two.
"""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from .api import Coverage, History, Signature

SCHEMA = 1
_BREAKING = {
    "inserted",
    "removed",
    "renamed",
    "moved",
    "keyword-only",
    "required",
    "args-removed",
    "kwargs-removed",
}


def _in(module: str, prefix: str | None) -> bool:
    return prefix is None or module == prefix or module.startswith(prefix + ".")


def _sig(h: History, key: str, rec: dict[str, Any], i: int) -> Signature | None:
    from .api import Target, signature

    method = "." in key.partition(":")[2]
    kind = "class" if rec.get("k") == "c" else ("method" if method else "function")
    return signature(Target(kind, key, key, rec), method, h, i)


def param_changes(old: Signature, new: Signature) -> list[dict[str, Any]]:
    """The parameter changes from ``old`` to ``new`` (see the module docstring)."""
    out: list[dict[str, Any]] = []
    po, pn = old.positional, new.positional
    names_o, names_n = set(old.defaults) | set(po), set(new.defaults) | set(pn)
    removed = [n for n in old.defaults if n not in names_n]
    added = [n for n in new.defaults if n not in names_o]
    renames: dict[str, str] = {}
    for k, n in enumerate(po):
        same_default = k < len(pn) and old.defaults.get(n) == new.defaults.get(pn[k])
        if n in removed and k < len(pn) and pn[k] in added and same_default:
            renames[n] = pn[k]
    # a keyword parameter replaced by one other with the same default: a rename too
    kw_removed = [n for n in removed if n not in po and n not in renames]
    kw_added = [n for n in added if n not in pn and n not in renames.values()]
    if len(kw_removed) == 1 == len(kw_added):
        a, b = kw_removed[0], kw_added[0]
        if old.defaults.get(a) == new.defaults.get(b):
            renames[a] = b
    for a, b in renames.items():
        ren: dict[str, Any] = {"change": "renamed", "param": b, "old": a, "breaks": True}
        if a in po:
            ren["slot"] = po.index(a)
        out.append(ren)
    for n in added:
        if n in renames.values():
            continue
        required = n in new.required
        if n in pn:
            k = pn.index(n)
            if k < len(po):
                out.append(
                    {
                        "change": "inserted",
                        "param": n,
                        "slot": k,
                        "was": po[k],
                        "breaks": True,
                        "required": required,
                    }
                )
            else:
                out.append(
                    {
                        "change": "added",
                        "param": n,
                        "slot": k,
                        "kind": "positional",
                        "required": required,
                        "breaks": required,
                    }
                )
        else:
            out.append(
                {
                    "change": "added",
                    "param": n,
                    "kind": "keyword-only",
                    "required": required,
                    "breaks": required,
                }
            )
    for n in removed:
        if n in renames:
            continue
        rec: dict[str, Any] = {"change": "removed", "param": n, "breaks": True}
        if n in po:
            rec["slot"] = po.index(n)
        out.append(rec)
    mapped = [renames.get(n, n) for n in po]
    common_o = [n for n in mapped if n in pn]
    common_n = [n for n in pn if n in mapped]
    if common_o != common_n:
        for n in common_o:
            if mapped.index(n) != pn.index(n):
                out.append(
                    {
                        "change": "moved",
                        "param": n,
                        "from": mapped.index(n),
                        "to": pn.index(n),
                        "breaks": True,
                    }
                )
    for k, n in enumerate(mapped):
        if n in names_n and n not in pn and n not in renames.values():
            out.append({"change": "keyword-only", "param": n, "slot": k, "breaks": True})
    for k, n in enumerate(pn):
        if n in names_o and n not in mapped:
            rec = {"change": "positional", "param": n, "slot": k, "breaks": k < len(po)}
            out.append(rec)
    for n, d in new.defaults.items():
        o = next((a for a, b in renames.items() if b == n), n)
        if o not in old.defaults:
            continue
        was = old.defaults[o]
        if was == d:
            continue
        if d is None and n in new.required:
            out.append({"change": "required", "param": n, "was": was, "breaks": True})
        elif was is None and o in old.required:
            out.append({"change": "optional", "param": n, "default": d, "breaks": False})
        else:
            out.append({"change": "default", "param": n, "was": was, "now": d, "breaks": False})
    if old.varargs != new.varargs:
        out.append(
            {"change": "args-added" if new.varargs else "args-removed", "breaks": not new.varargs}
        )
    if old.varkw != new.varkw:
        out.append(
            {"change": "kwargs-added" if new.varkw else "kwargs-removed", "breaks": not new.varkw}
        )
    shift = None
    for k in range(max(len(mapped), len(pn))):
        was = mapped[k] if k < len(mapped) else None
        now = pn[k] if k < len(pn) else None
        if was != now and was is not None:
            shift = {"slot": k, "was": po[k], "now": now}
            break
    if shift is not None:
        out.append({"change": "shift", **shift, "breaks": True})
    return out


def describe_change(c: dict[str, Any]) -> str:
    """One short line for a change record."""
    k = c["change"]
    if k == "renamed":
        where = f"slot {c['slot']}" if "slot" in c else "keyword"
        return f"renamed {c['old']} -> {c['param']} ({where})"
    if k == "inserted":
        req = ", required" if c.get("required") else ""
        return f"+ {c['param']} inserted at slot {c['slot']} (before {c['was']}{req})"
    if k == "added":
        req = ", required" if c.get("required") else ""
        where = f"positional, slot {c['slot']}" if c["kind"] == "positional" else "keyword-only"
        return f"+ {c['param']} ({where}{req})"
    if k == "removed":
        return f"- {c['param']}" + (f" (was slot {c['slot']})" if "slot" in c else "")
    if k == "moved":
        return f"{c['param']} moved from slot {c['from']} to {c['to']}"
    if k == "keyword-only":
        return f"{c['param']} is now keyword-only (was slot {c['slot']})"
    if k == "positional":
        return f"{c['param']} is now positional (slot {c['slot']})"
    if k == "default":
        return f"default of {c['param']}: {c['was']} -> {c['now']}"
    if k == "required":
        return f"{c['param']} is now required (default was {c['was']})"
    if k == "optional":
        return f"{c['param']} is now optional (default {c['default']})"
    if k == "shift":
        return (
            f"positional callers passing more than {c['slot']} arguments: "
            f"slot {c['slot']} is {c['now']!r}, was {c['was']!r}"
        )
    if k.startswith("args") or k.startswith("kwargs"):
        star = "*args" if k.startswith("args") else "**kwargs"
        return f"{star} {'added' if k.endswith('added') else 'removed'}"
    if k == "member":
        if c.get("was") is None:
            return f"+ member {c['member']} = {c['now']}"
        if c.get("now") is None:
            return f"- member {c['member']} (was {c['was']})"
        return f"member {c['member']}: {c['was']} -> {c['now']}"
    if k == "kind":
        return f"was a {c['was']}, now a {c['now']}"
    return json.dumps(c)


class Differ:
    def __init__(
        self, h: History, old: str, new: str, module: str | None, coverage: Coverage | None
    ):
        self.h = h
        self.old, self.new = old, new
        self.i, self.j = h.index[old], h.index[new]
        self.module = module
        self.cov = coverage

    def exposures(self, i: int) -> dict[tuple[str, str], str]:
        out = {}
        for m, ns in self.h.names.items():
            if not _in(m, self.module):
                continue
            for n in ns:
                key = self.h.exposed(m, n, i)
                if key is not None:
                    out[(m, n)] = key
        return out

    def objects(self) -> list[tuple[list[str], list[str], list[str], list[str]]]:
        """(old keys, new keys, old names, new names) per public object."""
        eo, en = self.exposures(self.i), self.exposures(self.j)
        parent: dict[tuple[str, str], tuple[str, str]] = {}

        def find(x: tuple[str, str]) -> tuple[str, str]:
            while parent.setdefault(x, x) != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        def union(a: tuple[str, str], b: tuple[str, str]) -> None:
            parent[find(a)] = find(b)

        for ex, key in eo.items():
            find(("o", key))
            if ex in en:
                union(("o", key), ("n", en[ex]))
        for key in en.values():
            find(("n", key))
        groups: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
        for node in list(parent):
            g = groups.setdefault(find(node), ([], []))
            g[0 if node[0] == "o" else 1].append(node[1])
        names_o: dict[str, list[str]] = {}
        names_n: dict[str, list[str]] = {}
        for (m, n), key in eo.items():
            names_o.setdefault(key, []).append(f"{m}.{n}")
        for (m, n), key in en.items():
            names_n.setdefault(key, []).append(f"{m}.{n}")
        out = []
        for ko, kn in groups.values():
            ko, kn = sorted(set(ko)), sorted(set(kn))
            no = sorted({x for k in ko for x in names_o.get(k, ())}, key=_order)
            nn = sorted({x for k in kn for x in names_n.get(k, ())}, key=_order)
            out.append((ko, kn, no, nn))
        # moves: an object only in OLD and one only in NEW with the same own name
        gone = {
            k.rpartition(":")[2]: idx
            for idx, (ko, kn, _, _) in enumerate(out)
            if ko and not kn
            for k in ko
        }
        merged: set[int] = set()
        for idx, (ko, kn, _no, nn) in enumerate(out):
            if kn and not ko:
                name = kn[0].rpartition(":")[2]
                if name in gone and gone[name] not in merged:
                    src = gone[name]
                    merged.add(src)
                    out[idx] = (out[src][0], kn, out[src][2], nn)
        return [o for k, o in enumerate(out) if k not in merged]

    def compare(self) -> dict[str, Any]:
        h, i, j = self.h, self.i, self.j
        items = []
        objects = self.objects()
        for ko, kn, no, nn in objects:
            item: dict[str, Any] = {}
            if not kn:
                rec = h.record(ko[0], i) or {}
                item = {"name": no[0], "status": "removed", "kind": _kind(rec), "breaks": True}
                item["names"] = no
            elif not ko:
                rec = h.record(kn[0], j) or {}
                item = {
                    "name": nn[0],
                    "status": "added",
                    "kind": _kind(rec),
                    "breaks": False,
                    "names": nn,
                }
            else:
                item = self._changed(ko[0], kn[0], no, nn) or {
                    "name": nn[0],
                    "status": "same",
                    "kind": _kind(h.record(kn[0], j) or {}),
                    "breaks": False,
                    "names": nn,
                }
            cov = self._fi_compat(ko[0] if ko else None, kn[0] if kn else None, item)
            if cov:
                item["fi_compat"] = cov
            elif item["status"] == "same":
                continue
            if item["status"] == "same":
                item["status"] = "facts"  # only what fi_compat knows beyond signatures
            items.append(item)
        items.sort(key=lambda x: (not x["breaks"], x["status"], x["name"]))
        issues = self._issues()
        counts: dict[str, int] = {}
        for it in items:
            counts[it["status"]] = counts.get(it["status"], 0) + 1
        return {
            "schema": SCHEMA,
            "command": "diff",
            "old": self.old,
            "new": self.new,
            "module": self.module,
            "compared": len(objects),
            "summary": {**counts, "breaking": sum(1 for it in items if it["breaks"])},
            "items": items,
            "modules": {
                "added": [
                    m
                    for m in self.h.modules
                    if _in(m, self.module)
                    and not self.h.has_module(m, i)
                    and self.h.has_module(m, j)
                ],
                "removed": [
                    m
                    for m in self.h.modules
                    if _in(m, self.module)
                    and self.h.has_module(m, i)
                    and not self.h.has_module(m, j)
                ],
            },
            "known_issues": issues,
        }

    def _changed(self, ko: str, kn: str, no: list[str], nn: list[str]) -> dict[str, Any] | None:
        h, i, j = self.h, self.i, self.j
        ro, rn = h.record(ko, i) or {}, h.record(kn, j) or {}
        name = nn[0] if nn else no[0]
        changes: list[dict[str, Any]] = []
        methods: dict[str, Any] = {}
        if _kind(ro) != _kind(rn):
            changes.append({"change": "kind", "was": _kind(ro), "now": _kind(rn), "breaks": True})
        elif _kind(rn) == "function":
            so, sn = _sig(h, ko, ro, i), _sig(h, kn, rn, j)
            if so is not None and sn is not None:
                changes += param_changes(so, sn)
        else:
            mo, mn = h.methods(ko, i), h.methods(kn, j)
            for m in sorted(set(mo) | set(mn)):
                if m.startswith("_") and m not in ("__init__", "__call__"):
                    continue
                if m not in mn:
                    methods[m] = {"status": "removed", "breaks": True}
                elif m not in mo:
                    methods[m] = {"status": "added", "breaks": False}
                else:
                    a, b = h.record(mo[m], i) or {}, h.record(mn[m], j) or {}
                    if a == b:
                        continue
                    sa = _sig(h, mo[m], a, i)
                    sb = _sig(h, mn[m], b, j)
                    if sa is None or sb is None:
                        continue
                    ch = param_changes(sa, sb)
                    if ch:
                        methods[m] = {
                            "status": "changed",
                            "changes": ch,
                            "breaks": any(c["breaks"] for c in ch),
                        }
            mem_o = {x[0]: x[1] for x in ro.get("e", ())}
            mem_n = {x[0]: x[1] for x in rn.get("e", ())}
            for m in dict.fromkeys([*mem_o, *mem_n]):
                if mem_o.get(m) != mem_n.get(m):
                    changes.append(
                        {
                            "change": "member",
                            "member": m,
                            "was": mem_o.get(m),
                            "now": mem_n.get(m),
                            "breaks": m in mem_o,  # a value moved or a member went away
                        }
                    )
        lost_all = [n for n in no if n not in nn]
        # a name counts where code imports it on purpose: from a package (an
        # ``__init__`` re-export) or from the module that defined it; a helper another
        # kernel module happened to import is incidental
        home = ko.partition(":")[0]
        packages = self.packages(i)
        lost = [
            n for n in lost_all if n.rpartition(".")[0] in packages or n.rpartition(".")[0] == home
        ]
        gained = [n for n in nn if n not in no]
        moved = not set(no) & set(nn)
        if not (changes or methods or lost or moved):
            return None
        item: dict[str, Any] = {
            "name": name,
            "status": "moved" if moved else "changed",
            "kind": _kind(rn),
            "changes": changes,
            "breaks": bool(lost)
            or moved
            or any(c["breaks"] for c in changes)
            or any(m["breaks"] for m in methods.values()),
        }
        if methods:
            item["methods"] = methods
        if moved:
            item["was"] = no[0]
        if lost:
            item["names_lost"] = lost
        if len(lost_all) > len(lost):
            item["names_lost_incidental"] = [n for n in lost_all if n not in lost]
        if gained:
            item["names_gained"] = gained
        item["names"] = nn
        if not (changes or methods) and not moved:
            item["status"] = "names"
        return item

    def packages(self, i: int) -> set[str]:
        """The modules of release ``i`` that have submodules (packages)."""
        cache: dict[int, set[str]] = self.__dict__.setdefault("_pkgs", {})
        if i not in cache:
            cache[i] = {m.rpartition(".")[0] for m in self.h.modules if self.h.has_module(m, i)}
        return cache[i]

    # -- fi_compat's side ---------------------------------------------------------------
    def _entries(self, key: str | None, release: str) -> list[Any]:
        if self.cov is None or key is None:
            return []
        rec = self.h.record(key, self.h.index[release]) or {}
        if rec.get("k") == "c":
            out = []
            for m in self.h.methods(key, self.h.index[release]):
                out += self.cov.method_entries(key, m, release)
            return out
        return self.cov.entries_for(key, release)

    def _fi_compat(
        self, ko: str | None, kn: str | None, item: dict[str, Any]
    ) -> list[dict[str, Any]]:
        if self.cov is None:
            return []
        eo = {e.dotted: e for e in self._entries(ko, self.old)}
        en = {e.dotted: e for e in self._entries(kn, self.new)}
        out = []
        for dotted in dict.fromkeys([*eo, *en]):
            e = en.get(dotted) or eo[dotted]
            fo = self.cov.facts(e, self.old) if dotted in eo else {"problem": "absent"}
            fn = (
                self.cov.facts(e, self.new)
                if dotted in en
                else {"problem": _problem(self.cov, e, self.new)}
            )
            rec: dict[str, Any] = {"entry_point": dotted, "positional_prefix": e.positional[0]}
            delta = _facts_delta(fo, fn)
            if delta:
                rec["differs"] = delta
            meth = e.attr.rpartition(".")[2] if "." in e.attr else None
            changes = (
                item.get("changes", [])
                if meth is None
                else item.get("methods", {}).get(meth, {}).get("changes", [])
            )
            notes = [_what_fi_compat_does(e, c, fn, self.new) for c in changes]
            notes = [
                n.replace("written_for(OLD)", f"written_for({self.old!r})") for n in notes if n
            ]
            if notes:
                rec["does"] = list(dict.fromkeys(notes))
            if delta or notes:
                out.append(rec)
        if not out:
            out = self._enum(kn or ko, item)
        return out

    def _enum(self, key: str | None, item: dict[str, Any]) -> list[dict[str, Any]]:
        """fi_compat's side of an enum it mirrors (:mod:`fi_compat.enums`)."""
        from .. import enums

        name = (key or "").rpartition(":")[2]
        if item.get("kind") != "enum" or name not in enums.__all__:
            return []
        moved = [c["member"] for c in item.get("changes", []) if c["change"] == "member"]
        rec: dict[str, Any] = {"entry_point": f"fi_compat.enums.{name}", "positional_prefix": 0}
        if moved:
            rec["does"] = [
                f"enums.{name} passes members by name, translated to each release's "
                f"integers ({', '.join(moved)})"
            ]
        return [rec] if moved else []

    def _issues(self) -> dict[str, list[dict[str, Any]]]:
        from ..device import TABLE
        from ..registry import place

        po, pn = place(self.old), place(self.new)
        added, fixed = [], []
        for issue in TABLE:
            a, b = issue.range.contains(po), issue.range.contains(pn)
            row = {
                "id": issue.id,
                "kind": issue.kind,
                "arch": issue.arch,
                "feature": issue.feature,
                "releases": str(issue.range),
                "summary": issue.summary,
                "workaround": issue.workaround,
                "confirmed": issue.confirmed,
            }
            if b and not a:
                added.append(row)
            elif a and not b:
                fixed.append(row)
        return {"introduced": added, "fixed": fixed}


def _problem(cov: Coverage, e: Any, release: str) -> str:
    a = cov.adapter(e, release)
    return a.problem or "absent"


def _facts_delta(fo: dict[str, Any], fn: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if fo.get("problem") != fn.get("problem"):
        out["problem"] = {"old": fo.get("problem"), "new": fn.get("problem")}
    if "problem" in fo or "problem" in fn:
        return out
    for k in ("native_dtypes", "renamed", "restricted"):
        a, b = fo.get(k, {}), fn.get(k, {})
        d = {
            n: {"old": a.get(n), "new": b.get(n)}
            for n in sorted(set(a) | set(b))
            if a.get(n) != b.get(n)
        }
        if d:
            out[k] = d
    for k in ("emulated", "dropped", "refused", "normalizers", "issues"):
        a, b = fo.get(k, []), fn.get(k, [])
        if a != b:
            out[k] = {"gone": [x for x in a if x not in b], "new": [x for x in b if x not in a]}
    ga, gb = fo.get("gpus", {}), fn.get("gpus", {})
    if set(ga) != set(gb):
        out["gpus"] = {"gained": sorted(set(ga) - set(gb)), "lost": sorted(set(gb) - set(ga))}
    return out


def _what_fi_compat_does(
    e: Any, c: dict[str, Any], facts: dict[str, Any], release: str
) -> str | None:
    """What fi_compat does on ``release`` about change ``c`` of its entry point ``e``."""
    from .api import Coverage

    k = c["change"]
    short = e.dotted.removeprefix("fi_compat.")
    if "problem" in facts:
        return f"{short} on {release}: {facts['problem']}"
    prefix = e.positional[0]
    name = c.get("param")
    stable = Coverage.stable_name(e, release, name) if name else None
    if k == "removed" and stable in e.params:
        verbs = {"emulated": "emulates", "dropped": "drops", "refused": "refuses (unless default)"}
        for what, verb in verbs.items():
            if stable in facts.get(what, ()):
                return f"{short} {verb} {stable} on {release}"
    if k == "renamed" and stable in e.params:
        return (
            f"{short} takes {stable!r} on every release (sent as {c['old']!r} where the "
            f"release spells it so; written_for(OLD) maps {c['old']!r} too)"
        )
    if k in ("removed", "renamed") and "slot" not in c:
        return None  # a keyword: nothing positional to keep
    if k in ("inserted", "moved", "keyword-only", "shift", "removed", "renamed", "positional"):
        return (
            f"{short} keeps its order ({prefix} positional, the rest keyword-only, "
            f"sent by keyword); code positional past {prefix}: fi_compat.written_for(OLD)"
        )
    if k == "default" and stable in e.params:
        return f"{short} keeps its default {stable}={e.params[stable].default!r}"
    if k in ("added", "required") and name is not None:
        if stable in e.params:
            return f"{short} takes {stable} (keyword-only)"
        return f"{short} passes {name} through **kwargs (not in its signature yet)"
    return None


def _kind(rec: dict[str, Any]) -> str:
    if rec.get("k") == "c":
        return "enum" if "e" in rec else "class"
    return "function"


def _order(path: str) -> tuple[int, int, str]:
    return (path.count("."), len(path), path)


def run(
    old: str, new: str, module: str | None = None, with_fi_compat: bool = True
) -> dict[str, Any]:
    from .api import Coverage, history

    h = history()
    return Differ(h, old, new, module, Coverage() if with_fi_compat else None).compare()


def render(data: dict[str, Any], show_all: bool = False, limit: int = 15) -> str:
    """The human report, short enough for a pull request: the names fi_compat covers
    (every change, with what fi_compat does), other breaking changes (shallow names
    first, four change lines each), moves and removals grouped by module, compatible
    changes one line each, additions counted per module, known issues."""
    s = data["summary"]
    scope = f" in {data['module']}" if data["module"] else ""
    lines = [
        f"flashinfer-python {data['old']} -> {data['new']}: public API{scope}, "
        f"{data['compared']} objects compared",
        "  "
        + ", ".join(
            f"{s.get(k, 0)} {k}" for k in ("added", "removed", "moved", "changed", "names", "facts")
        )
        + f"; {s['breaking']} break existing callers",
        "",
    ]
    items = sorted(data["items"], key=lambda it: (it["name"].count("."), it["name"]))
    cap = None if show_all else limit

    def details(it: dict[str, Any], max_lines: int | None) -> list[str]:
        out = []
        slots = {c.get("slot") for c in it.get("changes", []) if c["change"] != "shift"}
        for c in it.get("changes", []):
            if c["change"] != "shift" or c["slot"] not in slots:
                out.append(describe_change(c))
        for m, mrec in it.get("methods", {}).items():
            if mrec["status"] != "changed":
                out.append(f".{m}: {mrec['status']}")
                continue
            ms = {c.get("slot") for c in mrec["changes"] if c["change"] != "shift"}
            for c in mrec["changes"]:
                if c["change"] != "shift" or c["slot"] not in ms:
                    out.append(f".{m}: {describe_change(c)}")
        if it.get("names_lost"):
            lost = it["names_lost"]
            out.append(
                "no longer importable as "
                + ", ".join(lost[:3])
                + (f" (+{len(lost) - 3})" if len(lost) > 3 else "")
            )
        if max_lines is not None and len(out) > max_lines:
            out = [*out[:max_lines], f"... {len(out) - max_lines} more changes"]
        return out

    covered = [it for it in items if it.get("fi_compat")]
    if covered:
        lines.append(f"Covered by fi_compat ({len(covered)})")
        for it in covered:
            tag = "" if it["status"] in ("changed", "facts", "names") else f" ({it['status']})"
            lines.append(f"  {it['name']}{tag}")
            lines += [f"      {d}" for d in details(it, None)]
            for fc in it["fi_compat"]:
                short = fc["entry_point"].removeprefix("fi_compat.")
                for k, v in fc.get("differs", {}).items():
                    lines.append(f"      fi_compat {short}: {_delta_text(k, v)}")
                for note in fc.get("does", [])[:3]:
                    lines.append(f"      fi_compat: {note}")
        lines.append("")

    rest = [it for it in items if not it.get("fi_compat")]
    breaking = [it for it in rest if it["breaks"] and it["status"] in ("changed", "names")]
    if breaking:
        lines.append(f"Breaking ({len(breaking)})")
        for it in breaking[:cap]:
            lines.append(f"  {it['name']}")
            lines += [f"      {d}" for d in details(it, None if show_all else 4)]
        if cap is not None and len(breaking) > cap:
            lines.append(f"  ... {len(breaking) - cap} more (--all, or --json)")
        lines.append("")

    for title, status in (("Moved", "moved"), ("Removed", "removed")):
        rows = [it for it in rest if it["status"] == status]
        if not rows:
            continue
        groups: dict[str, list[dict[str, Any]]] = {}
        for it in rows:
            src = (it.get("was") or it["name"]).rpartition(".")[0]
            dst = it["name"].rpartition(".")[0] if status == "moved" else ""
            groups.setdefault(f"{src} -> {dst}" if dst else src, []).append(it)
        lines.append(f"{title} ({len(rows)})")
        for g, its in list(groups.items())[:cap]:
            names = [it["name"].rpartition(".")[2] for it in its]
            changed = sum(1 for it in its if it.get("changes") or it.get("methods"))
            extra = f"; {changed} also changed" if changed and status == "moved" else ""
            shown = ", ".join(names[:6]) + (f" (+{len(names) - 6})" if len(names) > 6 else "")
            lines.append(f"  {g}: {shown}{extra}")
        if cap is not None and len(groups) > cap:
            lines.append(f"  ... {len(groups) - cap} more modules (--all, or --json)")
        lines.append("")

    compatible = [it for it in rest if not it["breaks"] and it["status"] in ("changed", "names")]
    if compatible:
        lines.append(f"Changed, compatible ({len(compatible)})")
        for it in compatible[:cap]:
            d = details(it, None)
            text = "; ".join(d[:3]) + (f"; +{len(d) - 3} more" if len(d) > 3 else "")
            lines.append(f"  {it['name']}: {text}")
        if cap is not None and len(compatible) > cap:
            lines.append(f"  ... {len(compatible) - cap} more (--all, or --json)")
        lines.append("")

    added = [it for it in rest if it["status"] == "added"]
    if added:
        by_mod: dict[str, list[str]] = {}
        for it in added:
            mod, _, name = it["name"].rpartition(".")
            by_mod.setdefault(mod, []).append(name)
        order = sorted(by_mod, key=lambda m: (m.count("."), m))
        lines.append(f"Added ({len(added)} in {len(by_mod)} modules)")
        for m in order[:cap]:
            names = by_mod[m]
            lines.append(
                f"  {m}: "
                + ", ".join(names[:5])
                + (f" (+{len(names) - 5})" if len(names) > 5 else "")
            )
        if cap is not None and len(order) > cap:
            lines.append(f"  ... {len(order) - cap} more modules (--all, or --json)")
        lines.append("")
    mods = data.get("modules", {})
    if mods.get("removed"):
        lines.append(
            f"Modules removed ({len(mods['removed'])}): "
            + ", ".join(mods["removed"][:8])
            + (" ..." if len(mods["removed"]) > 8 else "")
        )
        lines.append("")
    ki = data["known_issues"]
    for title, rows in (
        ("Known issues starting in", ki["introduced"]),
        ("Known issues fixed by", ki["fixed"]),
    ):
        if rows:
            lines.append(f"{title} {data['new']}:")
            for r in rows:
                lines.append(
                    f"  {r['id']} ({r['kind']}, {r['arch']}, {r['releases']}): {r['summary'][:100]}"
                )
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _covered(it: dict[str, Any]) -> bool:
    return bool(it.get("fi_compat"))


def _delta_text(k: str, v: Any) -> str:
    """One line for a difference in fi_compat's facts between OLD and NEW."""
    if k == "problem":
        return f"{v['old'] or 'served'} -> {v['new'] or 'served'}"
    if k == "native_dtypes":
        return (
            "native index dtype "
            + ", ".join(f"{n} {d['old'] or 'any'} -> {d['new'] or 'any'}" for n, d in v.items())
            + " (other integer dtypes are cast to it)"
        )
    if k == "renamed":
        return "release names " + ", ".join(
            f"{n}: {d['old'] or n} -> {d['new'] or n}" for n, d in v.items()
        )
    if k == "gpus":
        bits = []
        if v["gained"]:
            bits.append("now serves SM " + ", ".join(v["gained"]))
        if v["lost"]:
            bits.append("now refuses SM " + ", ".join(v["lost"]))
        return "; ".join(bits)
    if k == "restricted":
        out = []
        for n, d in v.items():
            newly = [val for val in (d["old"] or {}) if val not in (d["new"] or {})]
            if newly:
                out.append(f"{n}={', '.join(map(repr, newly))} accepted now")
            later = [val for val in (d["new"] or {}) if val not in (d["old"] or {})]
            if later:
                out.append(f"{n}={', '.join(map(repr, later))} refused now")
        return "; ".join(out)
    gone, new = v.get("gone", []), v.get("new", [])
    if k == "normalizers":
        parts = [f"now rewrites: {x}" for x in new] + [f"no longer rewrites: {x}" for x in gone]
        return "; ".join(parts)
    if k == "issues":
        parts = []
        if new:
            parts.append("known issues now: " + ", ".join(new))
        if gone:
            parts.append("known issues fixed: " + ", ".join(gone))
        return "; ".join(parts)
    was = {"emulated": "emulated", "dropped": "dropped", "refused": "refused unless default"}[k]
    parts = []
    if gone:
        parts.append(f"native now: {', '.join(gone)} (was {was})")
    if new:
        parts.append(f"{was} now: {', '.join(new)} (the release lacks it)")
    return "; ".join(parts)


def main(args: argparse.Namespace) -> int:
    from .api import history

    h = history()
    for r in (args.old, args.new):
        if r not in h.index:
            print(
                f"python -m fi_compat diff: error: {r!r} is not a known flashinfer-python release "
                f"({h.releases[0]} ... {h.releases[-1]})",
                file=sys.stderr,
            )
            return 2
    if args.module and not any(_in(m, args.module) for m in h.modules):
        print(
            f"python -m fi_compat diff: error: no FlashInfer module {args.module!r} in any release",
            file=sys.stderr,
        )
        return 2
    data = run(args.old, args.new, args.module)
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        print(render(data, show_all=args.all), end="")
    return 0
