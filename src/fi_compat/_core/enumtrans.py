"""Enum translation: a stable member (or an accepted spelling of one) to a release's value.

Each enum parameter names a :mod:`fi_compat.enums` class.  What a caller may pass, and
what it means (in this order):

* a member of the fi_compat class: its name;
* a member of an enum class of the same name, or of any :class:`enum.Enum` -- FlashInfer's
  own member of any release, or an engine's copy (an ``IntEnum`` defined in vLLM or
  SGLang code): by *name*, never by its integer, because the integers moved between
  releases;
* an ``int`` (or any int subclass without such a name): only where the integer named the
  same member in every release that defines the class (of the entry point's range, for a
  class with ``_ints_in_entry_range_``);
* for a parameter with an older spelling (``gated_act_type`` before
  ``activation_type``), a member of the older enum, mapped by meaning.

The release's value is the installed FlashInfer class's own member once the real
function is resolved (0.6.3's fp4 functions require members), the snapshot's integer
before that (spies, docs).
"""

from __future__ import annotations

from .. import errors
from ..registry import at_least

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..registry import Placement
    from .adapter import Adapter
    from .table import Param


def _span(releases: list[str]) -> str:
    return releases[0] if len(releases) == 1 else f"{releases[0]}-{releases[-1]}"


def release_values(cls_name: str, p: Placement) -> dict[str, Any] | None:
    """Member values of FlashInfer's ``cls_name`` on the release at or below ``p``."""
    from .. import enums
    from ..registry import KNOWN_RELEASES

    release = KNOWN_RELEASES[min(p.pos // 2, len(KNOWN_RELEASES) - 1)]
    values = getattr(enums, cls_name).values_in(release)
    return dict(values) if values is not None else None


def live_class(cls_name: str) -> Any:
    """The installed FlashInfer's own enum class ``cls_name`` (None if not found), looked
    up in the modules the stable class lists (``StableEnum._flashinfer_modules_``)."""
    import importlib

    from .. import enums

    for mod in getattr(enums, cls_name)._flashinfer_modules_:
        try:
            cls = getattr(importlib.import_module(mod), cls_name, None)
        except Exception:  # absent in this release
            continue
        if cls is not None and hasattr(cls, "__members__"):
            return cls
    return None


def table(adapter: Adapter, name: str, live: bool) -> dict[Any, Any]:
    """{stable member: the value the release takes} for enum parameter ``name``."""
    from .. import enums

    p = adapter.entry.params[name]
    stable_name, release_name = adapter.enums[name]
    stable = getattr(enums, stable_name)
    assert adapter.placement is not None
    values = release_values(release_name, adapter.placement)
    cls = live_class(release_name) if live else None
    if cls is not None:  # the installed release's own class is the truth
        values = {m.name: m for m in cls}
    if values is None:
        return {}
    mapping = p.enum_map if release_name != stable_name else {}
    out: dict[Any, Any] = {None: None} if p.default is None else {}
    for m in stable:
        rname = mapping.get(m.name) if mapping else m.name
        if rname is not None and rname in values:
            out[m] = values[rname]
    # the plain integers stable_member accepts, to the same values (the generated code
    # looks up exact ints only: FlashInfer's integer constants, AllReduceFusionPattern's,
    # stay on the fast path)
    in_range = entry_releases(adapter) if stable._ints_in_entry_range_ else None
    ambiguous = ambiguous_ints(p)
    for value, member_name in stable.stable_ints(in_range).items():
        member = stable[member_name]
        if value not in ambiguous and member in out:
            out[value] = out[member]
    return out


def entry_releases(adapter: Adapter) -> list[str]:
    """The known releases of the adapter's entry point (``since`` up to ``until``): a raw
    integer is judged by what it meant there only."""
    from ..registry import KNOWN_RELEASES

    e = adapter.entry
    lo = KNOWN_RELEASES.index(e.since)
    hi = len(KNOWN_RELEASES) if e.until is None else KNOWN_RELEASES.index(e.until)
    return list(KNOWN_RELEASES[lo:hi])


def _named_member(value: object, cls_name: str) -> str | None:
    """The member name of an enum member of a class called ``cls_name`` (FlashInfer's
    own or an engine's copy) or of any :class:`enum.Enum`, else None."""
    if type(value).__name__ != cls_name:
        import sys

        mod = sys.modules.get("enum")  # an Enum member implies enum is imported
        if mod is None or not isinstance(value, mod.Enum):
            return None
    name = getattr(value, "name", None)
    return name if isinstance(name, str) else None


def stable_member(adapter: Adapter, name: str, value: object) -> Any:
    """``value`` as the fi_compat member of parameter ``name``'s enum; typed error
    otherwise (see the module docstring for what is accepted)."""
    from .. import enums

    p = adapter.entry.params[name]
    assert p.enum is not None
    stable = getattr(enums, p.enum)
    if type(value) is stable:
        return value
    where = f"{adapter.entry.dotted}({name}=...)"
    member_name = _named_member(value, p.enum)
    if member_name is not None:
        if member_name in stable._members_:
            return stable[member_name]
        raise errors.InvalidArgumentError(
            f"{where}: {type(value).__module__}.{p.enum}.{member_name} has no fi_compat "
            f"counterpart; fi_compat {adapter.own_version} knows {', '.join(stable._members_)}"
        )
    for _, _, old_enum in p.spelled:  # the parameter's older domain, by meaning
        if old_enum is None:
            continue
        old = getattr(enums, old_enum)
        old_name = value.name if type(value) is old else _named_member(value, old_enum)  # type: ignore[attr-defined]
        if old_name is not None:
            back = {v: k for k, v in p.enum_map.items()}
            if old_name in back:
                return stable[back[old_name]]
    if isinstance(value, int) and not isinstance(value, bool):
        ivalue = int(value)
        ambiguous = ambiguous_ints(p)
        # the entry point's own range where the class says so (QuantizationSFLayout)
        in_range = entry_releases(adapter) if stable._ints_in_entry_range_ else None
        if ivalue in ambiguous:
            raise errors.InvalidArgumentError(
                f"{where}: the raw integer {ivalue} is ambiguous here: {ambiguous[ivalue]}. "
                f"Pass a member instead, e.g. fi_compat.enums.{p.enum}."
                f"{stable.stable_ints(in_range).get(ivalue, next(iter(stable._members_)))}"
            )
        stable_ints = stable.stable_ints(in_range)
        if ivalue in stable_ints:
            return stable[stable_ints[ivalue]]
        meanings = stable.meanings(ivalue, in_range)
        told = "; ".join(f"{n} in {_span(rs)}" for n, rs in meanings.items()) or "nothing"
        raise errors.InvalidArgumentError(
            f"{where}: the raw integer {ivalue} has meant different members across "
            f"FlashInfer releases ({told}), so fi_compat will not guess. Pass "
            f"fi_compat.enums.{p.enum}.<name> (integers accepted: "
            f"{', '.join(f'{v}={n}' for v, n in stable_ints.items())})"
        )
    shown = "None" if value is None else f"{type(value).__name__} {value!r}"[:80]
    raise errors.InvalidArgumentError(
        f"{where}: expected a fi_compat.enums.{p.enum} member (or FlashInfer's / an "
        f"engine's {p.enum} member, or one of its stable integers); got {shown}. "
        f"A positional call written for another FlashInfer release? See "
        f"fi_compat.written_for()."
    )


def ambiguous_ints(p: Param) -> dict[int, str]:
    """Integers valid in both the parameter's older and current domain, with
    different meanings (e.g. gated_act_type 0=SwiGlu vs activation_type 0=Gelu)."""
    from .. import enums

    assert p.enum is not None
    new = getattr(enums, p.enum).stable_ints()
    out: dict[int, str] = {}
    for since, old_name, old_enum in p.spelled:
        if old_enum is None:
            continue
        for v, n in getattr(enums, old_enum).stable_ints().items():
            if v in new and p.enum_map.get(new[v]) != n:
                out[v] = (
                    f"{old_name}={v} meant {old_enum}.{n} before {since}, "
                    f"{p.name}={v} means {p.enum}.{new[v]}"
                )
    return out


def release_value(adapter: Adapter, name: str, value: object) -> Any:
    """The release's value for enum parameter ``name`` (general path)."""
    from .. import enums

    member = stable_member(adapter, name, value)
    tbl = adapter.ns.get("_E_" + name)
    if tbl and member in tbl:
        return tbl[member]
    assert adapter.placement is not None
    p = adapter.entry.params[name]
    stable_name, release_name = adapter.enums[name]
    rname = p.enum_map.get(member.name) if release_name != stable_name else member.name
    first = getattr(enums, release_name).first_release(rname) if rname else None
    if rname is None or first is None or not at_least(adapter.placement, first):
        need = getattr(enums, stable_name).first_release(member.name)
        if rname is None:  # only the newer spelling has it
            need = next(s for s, _, _ in p.spelled)
        raise adapter.unsupported(p, member, need or adapter.newest, value=True)
    raise errors.FlashInferImportError(  # table and snapshot disagree: a broken install?
        f"{adapter.entry.dotted}: {release_name}.{rname} is in the snapshot of "
        f"{adapter.release} but not in the installed FlashInfer class "
        f"{release_name} (is the imported flashinfer another release? "
        f"python -m fi_compat doctor --probe)"
    )
