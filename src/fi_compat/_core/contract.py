"""Declared tensor contracts: one declaration per tensor parameter, two checks from it.

An entry point declares, per tensor parameter, what its metadata must be::

    EntryPoint(..., contracts={
        "input": Tensor("... hidden_size", rank=(2, 3), dtypes=FP16),
        "weight": Tensor("hidden_size", dtype="input"),
        "out": Tensor(like="input"),
    })

and the core derives from it both

* the **fast check**: one generated Python function (``validate``-compatible: it takes
  the tensors, returns the CUDA index of the first one, -1 off CUDA) of plain attribute
  reads and ``is`` / ``==`` tests, called inline by the generated facade
  (:mod:`fi_compat._core.codegen`); its source is registered with :mod:`linecache`;
* the **diagnostic**: when the fast check fails, :meth:`Contract.diagnose` walks the
  same declaration and raises :class:`~fi_compat.errors.InvalidArgumentError` for the
  first problem, naming the parameter, what was passed and what is expected.

The dims language (``Tensor("nnz heads head_dim")``), one token per dimension:

* a name (``head_dim``): a symbolic size, bound where it first appears (declaration
  order) and the same everywhere else (``head_dim`` of ``q`` and of ``k`` agree);
* ``2*d``: a multiple of a symbolic size (``[..., 2*d]`` binds ``d`` to half the last
  dimension, which must be even);
* an integer: that size exactly; ``_``: any size;
* ``...``: any number of dimensions (at most one, anywhere); ``*batch``: the same, as
  a named group that must agree wherever it appears.

``sizes={"head_dim": (64, 128, 256, 512)}``: the only values a named dimension of this
tensor may take (a kernel that dispatches on it and has no branch for the others);
``sizes_why`` says why and what to do instead, in the diagnostic.  The fast check is one
``frozenset`` membership test.

A parameter whose annotation admits ``None`` (``Tensor | None``) is optional: ``None``
passes, anything else is checked.  Relations: ``dtype="x"`` (``x``'s dtype), ``like="x"``
(``x``'s shape and dtype), ``match="x"`` (``x``'s dtype and the dims it shares names with,
reported together), ``device="x"`` (default: the first declared tensor's device;
``"any"``: unchecked).  ``contiguous=True`` or ``"last"`` (unit stride in the last
dimension).  What the core cannot parse is a ``ValueError`` at import.

Checks a contract cannot say (a value of another parameter, a tensor-or-pair) stay a
hook: ``EntryPoint(contracts=..., validate=hook, validate_args=extra)`` calls
``hook(*contract tensors, *extra)`` after the contract passed (it raises or returns).
Torch is not imported here: dtype names are bound at the first call.

**FlashInfer's own words.**  Every refusal names its check, ``"<param>.<what>"``
(``what``: ``type``, ``like``, ``rank``, ``dtype``, ``shape``, ``contiguous``,
``device`` here; a hook's diagnostic builds its errors with :func:`refusal` and its own
ids), with the facts it found (``ndim``, ``shape``, ...).  Where a release refuses the
same input with a message of its own, ``EntryPoint(said=[Said(check, text, since=,
until=, ref=)])`` records that message for the releases that raise it; the adapter of
such a release appends it to fi_compat's message (and sets ``flashinfer_message``), so
code and tests that match FlashInfer's text (``pytest.raises(ValueError, match=...)``)
keep working through fi_compat.  The error stays fi_compat's typed error.
"""

from __future__ import annotations

from .. import errors
from ..registry import at_least
from .consts import bind, compile_with_consts, literal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from ..registry import Placement
    from .table import EntryPoint, Param

__all__ = ["FP16", "INDEX", "Contract", "Said", "Tensor", "refusal"]

FP16 = ("float16", "bfloat16")
INDEX = ("int32", "int64")
DTYPE_NAMES = frozenset(
    {
        *("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"),
        *("float16", "bfloat16", "float32", "float64", "complex64", "complex128"),
        *("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"),
        *("float8_e8m0fnu", "float4_e2m1fn_x2"),
    }
)
_CATCH = (AttributeError, TypeError, IndexError)

# a dimension token: ("sym", name, coefficient) | ("int", size) | ("any",) | ("rest", name|None)
if TYPE_CHECKING:
    Token = tuple[Any, ...]


def _parse_dims(text: str) -> list[Token]:
    out: list[Token] = []
    for tok in text.split():
        if tok == "...":
            out.append(("rest", None))
        elif tok[:1] == "*" and tok[1:].isidentifier():
            out.append(("rest", tok[1:]))
        elif tok == "_":
            out.append(("any",))
        elif tok.isdigit():
            out.append(("int", int(tok)))
        elif tok.isidentifier() and not tok.startswith("_"):
            out.append(("sym", tok, 1))
        elif "*" in tok:
            c, _, name = tok.partition("*")
            if not (c.isdigit() and int(c) >= 2 and name.isidentifier() and name[0] != "_"):
                raise ValueError(f"cannot parse the dimension {tok!r} (write k*name, k >= 2)")
            out.append(("sym", name, int(c)))
        else:
            raise ValueError(
                f"cannot parse the dimension {tok!r} (a name, k*name, an integer, _, ... or *name)"
            )
    if sum(t[0] == "rest" for t in out) > 1:
        raise ValueError(f"{text!r} has more than one ... / *name")
    return out


def refusal(message: str, check: str, **facts: Any) -> errors.InvalidArgumentError:
    """An :class:`~fi_compat.errors.InvalidArgumentError` naming the check that failed
    (``"<param>.<what>"``) and its facts (the values :class:`Said` texts format)."""
    exc = errors.InvalidArgumentError(message)
    exc.check = check
    exc.facts = facts  # type: ignore[attr-defined]
    return exc


class Said:
    """FlashInfer's own message for a check fi_compat makes too, on the releases whose
    code raises it (``since`` inclusive, ``until`` exclusive).

    ``text``: the message as that code formats it, a ``str.format`` template over the
    check's facts, or ``f(facts) -> str | None`` where the wording depends on them
    (``None``: the release says nothing of its own for these facts).  ``ref``: the file
    (and line) of that release that raises it."""

    __slots__ = ("check", "text", "since", "until", "ref")

    def __init__(
        self,
        check: str,
        text: str | Callable[[Mapping[str, Any]], str | None],
        *,
        since: str,
        until: str | None = None,
        ref: str,
    ) -> None:
        param, dot, what = check.partition(".")
        if not (param and dot and what):
            raise ValueError(f"a check id is '<param>.<what>', got {check!r}")
        self.check = check
        self.text = text
        self.since = since
        self.until = until
        self.ref = ref

    @property
    def param(self) -> str:
        return self.check.partition(".")[0]

    def covers(self, p: Placement) -> bool:
        return at_least(p, self.since) and (self.until is None or not at_least(p, self.until))

    def render(self, facts: Mapping[str, Any]) -> str | None:
        if callable(self.text):
            return self.text(facts)
        return self.text.format(**facts)


class Tensor:
    """The declared metadata of one tensor parameter (see the module docstring)."""

    __slots__ = (
        "text",
        "tokens",
        "dtypes",
        "dtype",
        "like",
        "match",
        "rank",
        "device",
        "contiguous",
        "why",
        "sizes",
        "sizes_why",
    )

    def __init__(
        self,
        dims: str | None = None,
        *,
        dtypes: str | tuple[str, ...] = (),
        dtype: str | None = None,
        like: str | None = None,
        match: str | None = None,
        rank: int | tuple[int, ...] | None = None,
        device: str | None = None,
        contiguous: bool | str = False,
        why: str = "",
        sizes: Mapping[str, tuple[int, ...]] | None = None,
        sizes_why: str = "",
    ) -> None:
        self.text = dims
        self.tokens = _parse_dims(dims) if dims is not None else []
        plain = {t[1] for t in self.tokens if t[0] == "sym" and t[2] == 1}
        self.sizes = {k: tuple(v) for k, v in (sizes or {}).items()}
        for k, v in self.sizes.items():
            if k not in plain:
                raise ValueError(
                    f"sizes names {k!r}, which is no plain named dimension of {dims!r}"
                )
            if not v or not all(type(x) is int and x >= 0 for x in v):
                raise ValueError(f"sizes[{k!r}] must be a non-empty tuple of sizes, got {v!r}")
        if self.sizes and not sizes_why:
            raise ValueError("sizes= needs sizes_why= (why only those, and what to do instead)")
        self.sizes_why = sizes_why
        self.dtypes = (dtypes,) if isinstance(dtypes, str) else tuple(dtypes)
        unknown = [d for d in self.dtypes if d not in DTYPE_NAMES]
        if unknown:
            raise ValueError(f"unknown dtype names {unknown} (torch's names: {sorted(FP16)})")
        if like is not None and (dims is not None or dtypes or dtype or match or rank):
            raise ValueError("like= is the whole shape and dtype: no dims, dtypes, rank, match")
        if sum(x is not None and x != () for x in (dtypes or None, dtype, match)) > 1:
            raise ValueError("give one of dtypes=, dtype= and match=")
        if match is not None and dims is None:
            raise ValueError("match= compares the dims named alike: give dims")
        fixed = sum(t[0] != "rest" for t in self.tokens)
        has_rest = any(t[0] == "rest" for t in self.tokens)
        ranks = (rank,) if isinstance(rank, int) else tuple(rank or ())
        if ranks and dims is not None and not has_rest:
            raise ValueError(f"rank= with {dims!r}: the dims already fix the rank ({fixed})")
        if any(r < fixed for r in ranks):
            raise ValueError(f"rank {ranks} is smaller than the {fixed} dims of {dims!r}")
        if contiguous not in (False, True, "last"):
            raise ValueError(f"contiguous must be True, False or 'last', got {contiguous!r}")
        if contiguous == "last" and fixed == 0 and not any(r > 0 for r in ranks):
            raise ValueError("contiguous='last' needs at least one dimension")
        self.rank = ranks
        self.dtype = dtype if match is None else match
        self.like = like
        self.match = match
        self.device = device
        self.contiguous = contiguous
        self.why = why

    # -- what the declaration says, in words ------------------------------------------
    @property
    def has_rest(self) -> bool:
        return any(t[0] == "rest" for t in self.tokens)

    @property
    def fixed(self) -> int:
        return sum(t[0] != "rest" for t in self.tokens)

    @property
    def named(self) -> bool:
        """The layout says more than a rank (names, sizes, a ``...``)."""
        return any(t[0] != "any" for t in self.tokens)

    def ranks(self) -> tuple[int, ...] | None:
        """The accepted ranks (``None``: at least :attr:`fixed`, or any)."""
        if self.rank:
            return self.rank
        if self.text is not None and not self.has_rest:
            return (self.fixed,)
        return None

    def rank_text(self) -> str:
        r = self.ranks()
        if r is not None:
            *most, last = (f"{n}-D" for n in r)
            return f"{', '.join(most)} or {last}" if most else last
        return f"at least {self.fixed}-D" if self.fixed else ""

    def layout(self) -> str:
        parts = []
        for t in self.tokens:
            if t[0] == "rest":
                parts.append("...")
            elif t[0] == "any":
                parts.append("_")
            elif t[0] == "int":
                parts.append(str(t[1]))
            else:
                parts.append(f"{t[2]}*{t[1]}" if t[2] > 1 else t[1])
        return f"[{', '.join(parts)}]" if parts else ""

    def dtype_text(self) -> str:
        return " or ".join(self.dtypes)

    def expected(self) -> str:
        """``a 1-D int32 tensor`` (an anonymous layout) or ``float32 [hidden_size]``."""
        if self.named:
            return " ".join(x for x in (self.dtype_text(), self.layout()) if x)
        what = " ".join(x for x in (self.rank_text(), self.dtype_text()) if x)
        return f"a {what} tensor" if what else "a tensor"

    def positions(self, rank: int) -> list[tuple[Token, int | slice]]:
        """Each token with its index (or slice, for ``...``) in a shape of ``rank``."""
        out: list[tuple[Token, int | slice]] = []
        n = len(self.tokens)
        rest = next((i for i, t in enumerate(self.tokens) if t[0] == "rest"), None)
        for i, t in enumerate(self.tokens):
            if t[0] == "rest":
                out.append((t, slice(i, rank - (n - i - 1))))
            elif rest is None or i < rest:
                out.append((t, i))
            else:
                out.append((t, i - n))  # after the ...: from the end
        return out


def _same_group(first: str, mine: str, pos: slice, ref: str, n: str, name: str) -> str:
    """``mine[pos] == <ref>`` for a ``...`` / ``*name`` group (``ref``:
    ``"<shape>[start:stop]"``, where the group was bound), as one expression that slices
    neither ``torch.Size``: the group lengths agree, then up to two dimensions are
    compared by index (ranks engines pass), a slice only for longer groups.  ``first``:
    the shape's first mention (``mine``, or ``(mine := x.shape)`` where it is read)."""
    rshape, _, rng = ref.partition("[")
    rstart_t, _, rstop_t = rng.rstrip("]").partition(":")
    rstart, rstop = int(rstart_t or 0), int(rstop_t or 0)
    start, stop = pos.start or 0, pos.stop or 0
    k = f"_g_{n}_{name}"
    elems = [
        " and ".join(f"{mine}[{start + i}] == {rshape}[{rstart + i}]" for i in range(m))
        for m in (1, 2)
    ]
    return (
        f"(({k} := len({first}) - {start - stop}) == len({rshape}) - {rstart - rstop} and "
        f"({k} == 0 or ({k} == 1 and {elems[0]}) or ({k} == 2 and {elems[1]}) or "
        f"({k} > 2 and {mine}[{_index_text(pos)}] == {ref})))"
    )


def _index_text(pos: int | slice) -> str:
    if isinstance(pos, int):
        return str(pos)
    return f"{pos.start or ''}:{'' if pos.stop is None else pos.stop}"


class Contract:
    """The tensor contracts of one entry point, compiled at its first call."""

    def __init__(
        self,
        entry: EntryPoint,
        tensors: Mapping[str, Tensor],
        hook: Callable[..., object] | None = None,
        extra: tuple[str, ...] = (),
        prepare: Callable[[], None] | None = None,
    ) -> None:
        self.entry = entry
        self.where = f"{entry.facade}.{entry.name}"
        self.tensors = dict(tensors)
        if not self.tensors:
            raise ValueError(f"{entry.name}: an empty contracts mapping")
        for n, t in self.tensors.items():
            if not isinstance(t, Tensor):
                raise ValueError(f"{entry.name}: contracts[{n!r}] is not a Tensor(...)")
        self.hook = hook
        self.args = (*self.tensors, *(a for a in extra if a not in self.tensors))
        self.anchor = next(iter(self.tensors))
        self.optional: frozenset[str] = frozenset()  # from the stub's annotations (bind)
        self.user_prepare = prepare
        self.source = ""
        self.function: Callable[..., Any] | None = None
        self._dtypes: dict[str, tuple[Any, ...]] = {}
        seen: list[str] = []
        for n, t in self.tensors.items():
            for rel, other in (("dtype", t.dtype), ("like", t.like), ("device", t.device)):
                if other is None or (rel == "device" and other == "any"):
                    continue
                if other not in seen:
                    raise ValueError(
                        f"{entry.name}: {n}: {rel}={other!r} names no tensor declared before it"
                    )
            seen.append(n)

    # -- import time: against the stub ----------------------------------------------------
    def bind(self, params: Mapping[str, Param]) -> None:
        """Check the declaration against the stub's parameters (at import): every key a
        parameter annotated as a tensor, optional where the annotation admits ``None``."""
        e = self.entry.name
        unknown = [n for n in self.args if n not in params]
        if unknown:
            raise ValueError(f"{e}: contracts for {unknown}, which the stub does not have")
        bound_opt: dict[str, str] = {}  # symbol -> the optional tensor that binds it
        bound: set[str] = set()
        for n, t in self.tensors.items():
            p = params[n]
            k = p.kind
            if k is not None and not k.tensor:
                raise ValueError(f"{e}: contract for {n}, whose annotation {k.text!r} is no Tensor")
            if p.default is None or (k is not None and k.nullable):
                self.optional |= {n}
            if n == self.anchor and n in self.optional:
                raise ValueError(f"{e}: the first declared tensor ({n}) cannot be optional")
            for rel in (t.dtype, t.like, t.device):
                if rel is not None and rel != "any" and rel in self.optional:
                    raise ValueError(f"{e}: {n} relates to {rel}, which is optional")
            for tok in t.tokens:
                name = tok[1] if tok[0] in ("sym", "rest") else None
                if name is None:
                    continue
                if name in bound_opt and bound_opt[name] != n:
                    raise ValueError(
                        f"{e}: {n} uses {name!r}, first bound by the optional {bound_opt[name]}"
                    )
                if name not in bound:
                    bound.add(name)
                    if n in self.optional:
                        bound_opt[name] = n

    # -- first call: the fast check -------------------------------------------------------
    def prepare(self) -> None:
        """Bind the dtypes, compile the fast check, install it as the entry's
        ``validate``; then the entry's own ``prepare``."""
        if self.function is None:
            self.compile()
        if self.user_prepare is not None:
            self.user_prepare()

    def lazy(self, *args: Any) -> Any:
        """``EntryPoint.validate`` before the first call (compiles, then checks)."""
        if self.function is None:
            self.compile()
        assert self.function is not None
        return self.function(*args)

    def compile(self) -> Callable[..., Any]:
        import linecache

        import torch

        self._dtypes = {
            n: tuple(d for d in (getattr(torch, x, None) for x in t.dtypes) if d is not None)
            for n, t in self.tensors.items()
        }
        fname = "validate_" + self.entry.name.replace(".", "_")
        src, ns = self.fast_source(fname)
        filename = f"<fi_compat contract {self.where}>"
        exec(compile(src, filename, "exec"), ns)
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        self.source = src
        fn: Callable[..., Any] = ns[fname]
        # the dtypes and literals as constants of the code: no guard per compiled call
        fixed = compile_with_consts(src, filename, [n for n, v in ns.items() if literal(v)])
        code = None if fixed is None else bind(fixed, ns)
        if code is not None:
            fn.__code__ = code
        self.function = fn
        self.entry.validate = fn
        return fn

    def fast_source(self, fname: str) -> tuple[str, dict[str, Any]]:
        """The fast check's source and globals (dtypes bound by :meth:`compile`)."""
        ns: dict[str, Any] = {"_CATCH": _CATCH, "_fail": self.fail, "_hook": self.hook}
        args = ", ".join(self.args)
        lines = [f"def {fname}({args}):", "    try:"]
        depth = [2]
        conds: list[str] = []

        def stmt(s: str) -> None:
            if conds:
                lines.append("    " * depth[0] + f"if {' and '.join(conds)}:")
                depth[0] += 1
                conds.clear()
            lines.append("    " * depth[0] + s)

        stmt(f"_d = {self.anchor}.get_device()")
        uses: dict[str, int] = {}
        for t in self.tensors.values():
            for tok in t.tokens:
                if tok[0] in ("sym", "rest") and tok[1] is not None:
                    uses[tok[1]] = uses.get(tok[1], 0) + 1
        bound: dict[str, tuple[str, int]] = {}  # symbol -> (where bound, its multiple)
        for n, t in self.tensors.items():
            opt = n in self.optional
            steps = self._steps(n, t, ns, bound, opt, uses)
            if opt:
                conds.append(f"({n} is None or ({' and '.join(s for _k, s in steps) or 'True'}))")
                continue
            for kind, s in steps:
                if kind == "c":
                    conds.append(s)
                else:
                    stmt(s)
        if self.hook is not None:  # its typed errors pass through; others: _fail
            stmt(f"_hook({args})")
        stmt("return _d")
        lines += ["    except _CATCH:", "        pass", f"    return _fail({args})"]
        return "\n".join(lines) + "\n", ns

    def _steps(
        self,
        n: str,
        t: Tensor,
        ns: dict[str, Any],
        bound: dict[str, tuple[str, int]],
        walrus: bool,
        uses: dict[str, int],
    ) -> list[tuple[str, str]]:
        """The fast check of one tensor: ("c", condition) / ("s", statement) in order
        (``walrus``: conditions only, for one ``x is None or (...)`` expression)."""
        out: list[tuple[str, str]] = []
        s = f"_s_{n}"
        shape_read = False

        def shape() -> str:
            nonlocal shape_read
            if shape_read:
                return s
            shape_read = True
            if walrus:
                return f"({s} := {n}.shape)"
            out.append(("s", f"{s} = {n}.shape"))
            return s

        referenced = any(o.like == n or o.dtype == n for o in self.tensors.values())
        if t.like is not None:
            out.append(("c", f"{n}.shape == _s_{t.like}"))
        if referenced and not walrus and t.like is not None:
            shape()  # a later like= compares with it
        ranks = t.ranks()
        if ranks is not None:
            sh = shape()
            if len(ranks) == 1:
                out.append(("c", f"len({sh}) == {ranks[0]}"))
            else:
                out.append(("c", f"len({sh}) in {ranks!r}"))
        elif t.fixed:
            out.append(("c", f"len({shape()}) >= {t.fixed}"))
        elif referenced and not walrus:
            shape()
        var = f"_t_{n}"
        if walrus:
            dt = f"({var} := {n}.dtype)" if t.dtypes else f"{n}.dtype"
        elif t.dtypes or referenced:
            out.append(("s", f"{var} = {n}.dtype"))
            dt = var
        else:
            dt = f"{n}.dtype"
        if t.dtypes:
            dts = self._dtypes.get(n, ())
            if len(dts) <= 3:
                tests = []
                for i, d in enumerate(dts):
                    ns[f"_DT_{n}_{i}"] = d
                    tests.append(f"{dt if i == 0 else var} is _DT_{n}_{i}")
                out.append(("c", f"({' or '.join(tests) or 'False'})"))
            else:
                ns[f"_DTS_{n}"] = frozenset(dts)
                out.append(("c", f"{dt} in _DTS_{n}"))
        elif t.dtype is not None or t.like is not None:
            out.append(("c", f"{dt} is _t_{t.dtype or t.like}"))
        for tok, pos in t.positions(0):
            if tok[0] == "any" or (tok[0] == "rest" and tok[1] is None):
                continue
            if tok[0] == "int":
                out.append(("c", f"{shape()}[{pos}] == {tok[1]}"))
                continue
            name = tok[1]
            if tok[0] == "rest":
                assert isinstance(pos, slice)  # stop: -(dims after it), 0 for none
                at, c = f"[{pos.start or ''}:{pos.stop or ''}]", 1
            else:
                at, c = f"[{pos}]", tok[2]
            if tok[0] == "sym" and name in t.sizes:  # one of the sizes the kernel has
                ns[f"_SZ_{n}_{name}"] = frozenset(t.sizes[name])
                out.append(("c", f"{shape()}{at} in _SZ_{n}_{name}"))
            if uses.get(name, 0) == 1:  # constrains nothing but a multiple's divisibility
                if c > 1:
                    out.append(("c", f"{shape()}{at} % {c} == 0"))
                continue
            if name in bound:  # compared with where it was bound (no stored value)
                ref, cb = bound[name]
                if tok[0] == "rest" and ":" in ref:  # no torch.Size slice (~160 ns each)
                    assert isinstance(pos, slice)
                    out.append(("c", _same_group(shape(), s, pos, ref, n, name)))
                    continue
                mine = f"{shape()}{at}" + (f" * {cb}" if cb > 1 else "")
                out.append(("c", f"{mine} == {ref}" + (f" * {c}" if c > 1 else "")))
                continue
            if c > 1:
                out.append(("c", f"{shape()}{at} % {c} == 0"))
            elif not shape_read:
                out.append(("c", f"len({shape()}) >= 0"))
            bound[name] = (f"{s}{at}", c)
        if t.contiguous is True:
            out.append(("c", f"{n}.is_contiguous()"))
        elif t.contiguous == "last":
            out.append(("c", f"{n}.stride(-1) == 1"))
        if n != self.anchor and t.device != "any":
            ref = "_d" if t.device in (None, self.anchor) else f"{t.device}.get_device()"
            out.append(("c", f"{n}.get_device() == {ref}"))
        at_least = ("c", f"len({s}) >= {t.fixed}")
        # "... x": reading shape[-fixed] below raises IndexError on a smaller rank
        if (
            not walrus
            and at_least in out
            and t.tokens[0][0] == "rest"
            and any(f"{s}[-{t.fixed}]" in x for _k, x in out if x != at_least[1])
        ):
            out.remove(at_least)
        return out

    # -- the diagnostic -------------------------------------------------------------------
    def fail(self, *args: Any) -> None:
        """The fast check failed: raise the first problem :meth:`diagnose` names, else
        run the hook outside the fast check's ``try`` (an exception of its own, such as a
        ``TypeError`` of a bug, surfaces as it is)."""
        self.diagnose(*args)
        if self.hook is not None:
            self.hook(*args)
        raise errors.InvalidArgumentError(f"{self.where}: invalid arguments")  # pragma: no cover

    def diagnose(self, *args: Any) -> None:
        """The first problem, as a typed error; returns where the contract holds."""
        import torch

        if not self._dtypes:
            self.compile()
        w = self.where
        vals = dict(zip(self.args, args, strict=True))
        env: dict[str, tuple[Any, str]] = {}  # symbol -> (value, "param.shape[i]")

        def bad(msg: str, check: str, x: Any = None) -> errors.InvalidArgumentError:
            facts: dict[str, Any] = {}
            if isinstance(x, torch.Tensor):
                facts = {"ndim": x.dim(), "shape": x.shape, "dtype": x.dtype, "device": x.device}
            return refusal(f"{w}: {msg}", check, **facts)

        for n, t in self.tensors.items():
            x = vals[n]
            if x is None and n in self.optional:
                continue
            if not isinstance(x, torch.Tensor):
                raise bad(
                    f"{n} must be a torch.Tensor{' or None' if n in self.optional else ''}, got "
                    f"{type(x).__name__}",
                    f"{n}.type",
                )
            shape = tuple(x.shape)
            why = f" ({t.why})" if t.why else ""
            if t.like is not None:
                o = vals[t.like]
                if shape != tuple(o.shape) or x.dtype != o.dtype:
                    raise bad(
                        f"{n} must have {t.like}'s shape and dtype {tuple(o.shape)} {o.dtype}, "
                        f"got {shape} {x.dtype}",
                        f"{n}.like",
                        x,
                    )
            ranks = t.ranks()
            if (ranks is not None and len(shape) not in ranks) or len(shape) < t.fixed:
                if t.named:
                    raise bad(
                        f"{n} must be {t.rank_text()} {t.layout()}, got shape {shape}",
                        f"{n}.rank",
                        x,
                    )
                raise bad(f"{n} must be {t.expected()}, got {shape} {x.dtype}", f"{n}.rank", x)
            if t.dtypes and x.dtype not in self._dtypes[n]:
                raise bad(
                    f"{n} must be {t.expected()}{why}, got {shape} {x.dtype}", f"{n}.dtype", x
                )
            if t.dtype is not None and x.dtype != vals[t.dtype].dtype:
                if t.match is not None:
                    raise self._mismatch(n, t, x, vals[t.match])
                o = vals[t.dtype]
                note = f"; {t.why}" if t.why else ""
                raise bad(
                    f"{n} must have {t.dtype}'s dtype ({o.dtype}{note}), got {x.dtype}",
                    f"{n}.dtype",
                    x,
                )
            for tok, pos in t.positions(len(shape)):
                if tok[0] == "any" or (tok[0] == "rest" and tok[1] is None):
                    continue
                got: Any = shape[pos]  # an int, or a tuple for a *name
                where = f"{n}.shape[{_index_text(pos)}]"
                if tok[0] == "int":
                    if got != tok[1]:
                        raise self._dims(n, t, shape, env, None)
                    continue
                name = tok[1]
                c = 1 if tok[0] == "rest" else tok[2]
                if tok[0] == "sym" and name in t.sizes and got not in t.sizes[name]:
                    *most, final = (str(v) for v in t.sizes[name])
                    one_of = f"{', '.join(most)} or {final}" if most else final
                    raise bad(
                        f"{n} has {name} = {got} ({where}, shape {shape}); it must be "
                        f"{one_of}: {t.sizes_why}",
                        f"{n}.{name}",
                        x,
                    )
                if name in env:
                    want = env[name][0]
                    if got != (want if c == 1 else c * want):
                        if t.match is not None and env[name][1].startswith(t.match + "."):
                            raise self._mismatch(n, t, x, vals[t.match])
                        raise self._dims(n, t, shape, env, name)
                    continue
                if c > 1 and got % c:
                    last = pos in (-1, len(shape) - 1)
                    side = "last dimension" if last else f"dimension {_index_text(pos)}"
                    even = f"an even {side}" if c == 2 else f"the {side} a multiple of {c}"
                    raise bad(
                        f"{n} must be {t.layout()} ({even}), got shape {shape}", f"{n}.shape", x
                    )
                env[name] = (got if c == 1 else got // c, where)
            if t.contiguous is True and not x.is_contiguous():
                raise bad(
                    f"{n} must be contiguous{why}, got strides {tuple(x.stride())}",
                    f"{n}.contiguous",
                    x,
                )
            if t.contiguous == "last" and x.stride(-1) != 1:
                raise bad(
                    f"{n} must have a unit stride in its last dimension{why}, got {x.stride()}",
                    f"{n}.contiguous",
                    x,
                )
        for n, t in self.tensors.items():
            x = vals[n]
            if n == self.anchor or t.device == "any" or x is None:
                continue
            ref = t.device or self.anchor
            r = vals[ref]
            if x.get_device() != r.get_device():
                raise bad(
                    f"{n} must be on {ref}'s device ({r.device}), got {x.device}", f"{n}.device", x
                )

    def _dims(
        self, n: str, t: Tensor, shape: tuple[int, ...], env: dict[str, Any], sym: str | None
    ) -> errors.InvalidArgumentError:
        want: list[str] = []
        for tok, pos in t.positions(len(shape)):
            if tok[0] == "rest":
                known = env.get(tok[1]) if tok[1] is not None else None
                got: Any = known[0] if known is not None else shape[pos]
                want += [str(v) for v in got]
            elif tok[0] == "int":
                want.append(str(tok[1]))
            elif tok[0] == "any":
                want.append(str(shape[pos]))
            else:
                v = env.get(tok[1])
                want.append(str(v[0] * tok[2]) if v is not None else tok[1])
        expect = f"({', '.join(want)}{',' if len(want) == 1 else ''})"
        rank = "" if t.has_rest else f"{t.rank_text()} "
        src = f" ({sym} = {env[sym][0]} from {env[sym][1]})" if sym else ""
        return refusal(
            f"{self.where}: {n} must be {rank}{t.layout()} = {expect}{src}, got shape {shape}",
            f"{n}.shape",
            shape=shape,
        )

    def _mismatch(self, n: str, t: Tensor, x: Any, o: Any) -> errors.InvalidArgumentError:
        assert t.match is not None
        theirs = {tok[1] for tok in self.tensors[t.match].tokens if tok[0] in ("sym", "rest")}
        shared = [tok[1] for tok in t.tokens if tok[0] in ("sym", "rest") and tok[1] in theirs]
        what = ", ".join(["dtype", *shared[:-1]]) + (f" and {shared[-1]}" if shared else "")
        return refusal(
            f"{self.where}: {n} must match {t.match} in {what}: {t.match} {tuple(o.shape)} "
            f"{o.dtype}, {n} {tuple(x.shape)} {x.dtype}",
            f"{n}.shape",
            shape=x.shape,
            dtype=x.dtype,
        )
