"""The tensor-contract language (``fi_compat._core.contract``): parse errors at import,
each check's message, symbolic dims, optional tensors, device relations, hooks, and the
generated fast check agreeing with the diagnostic on random shapes."""

from __future__ import annotations

import linecache
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fi_compat import errors
from fi_compat._core import REQUIRED, EntryPoint, Param
from fi_compat._core.contract import FP16, INDEX, Contract, Tensor
from fi_compat._core.table import parse_kind

BF = torch.bfloat16


def contract(
    tensors: dict[str, Tensor],
    annotations: dict[str, str] | None = None,
    hook: Any = None,
    extra: tuple[str, ...] = (),
) -> Contract:
    """A compiled contract over parameters annotated ``Tensor`` (or as given)."""
    entry = SimpleNamespace(facade="fi_compat.test", name="f", validate=None)
    c = Contract(entry, tensors, hook, extra)  # type: ignore[arg-type]
    params = {}
    for n in c.args:
        ann = (annotations or {}).get(n, "Tensor")
        p = Param(n)
        p.kind = parse_kind(ann, frozenset())
        p.default = None if "None" in ann else REQUIRED
        params[n] = p
    c.bind(params)
    c.compile()
    return c


def refused(c: Contract, fragment: str, *args: Any) -> str:
    """The fast check and the diagnostic both refuse ``args``, with ``fragment``."""
    assert c.function is not None
    with pytest.raises(errors.InvalidArgumentError, match=fragment) as ei:
        c.function(*args)
    with pytest.raises(errors.InvalidArgumentError, match=fragment):
        c.diagnose(*args)
    return str(ei.value)


class OnDevice(torch.Tensor):
    """A CPU tensor that reports another CUDA index (device relations without a GPU)."""

    index = 1

    def get_device(self) -> int:  # type: ignore[override]
        return self.index


def on_device(t: torch.Tensor, index: int = 1) -> torch.Tensor:
    out = torch.Tensor._make_subclass(OnDevice, t)
    out.index = index  # type: ignore[attr-defined]
    return out


# -- the language: what cannot be parsed is a ValueError at import ------------------------


@pytest.mark.parametrize(
    ("build", "fragment"),
    [
        (lambda: Tensor("a b!"), "cannot parse the dimension 'b!'"),
        (lambda: Tensor("1*a"), "k >= 2"),
        (lambda: Tensor("... a ..."), "more than one"),
        (lambda: Tensor("*a b *c"), "more than one"),
        (lambda: Tensor("_x"), "cannot parse"),
        (lambda: Tensor("a", dtypes=("float17",)), "unknown dtype names"),
        (lambda: Tensor("a b", rank=2), "already fix the rank"),
        (lambda: Tensor("... a b", rank=(1, 2)), "smaller than"),
        (lambda: Tensor("a", like="x"), "like= is the whole shape"),
        (lambda: Tensor("a", dtypes=FP16, dtype="x"), "one of dtypes="),
        (lambda: Tensor(match="x"), "give dims"),
        (lambda: Tensor("a", contiguous="first"), "contiguous must be"),
        (lambda: Tensor(contiguous="last"), "at least one dimension"),
        (lambda: Tensor("a b", sizes={"c": (1,)}, sizes_why="."), "no plain named dimension"),
        (lambda: Tensor("2*a", sizes={"a": (1,)}, sizes_why="."), "no plain named dimension"),
        (lambda: Tensor("a", sizes={"a": ()}, sizes_why="."), "non-empty tuple"),
        (lambda: Tensor("a", sizes={"a": (1.5,)}, sizes_why="."), "non-empty tuple"),
        (lambda: Tensor("a", sizes={"a": (1,)}), "needs sizes_why"),
    ],
)
def test_parse_errors(build: Any, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        build()


def test_a_relation_names_a_tensor_declared_before() -> None:
    with pytest.raises(ValueError, match="dtype='y' names no tensor declared before it"):
        contract({"x": Tensor("a", dtype="y"), "y": Tensor("a")})
    with pytest.raises(ValueError, match="names no tensor"):
        contract({"x": Tensor("a"), "y": Tensor("a", device="z")})


def test_bind_checks_the_stub() -> None:
    with pytest.raises(ValueError, match="is no Tensor"):
        contract({"x": Tensor("a")}, {"x": "int"})
    with pytest.raises(ValueError, match="cannot be optional"):
        contract({"x": Tensor("a")}, {"x": "Tensor | None"})
    with pytest.raises(ValueError, match="relates to y, which is optional"):
        contract(
            {"x": Tensor("a"), "y": Tensor("a"), "z": Tensor(like="y")}, {"y": "Tensor | None"}
        )
    with pytest.raises(ValueError, match="first bound by the optional y"):
        contract({"x": Tensor("a"), "y": Tensor("b"), "z": Tensor("b")}, {"y": "Tensor | None"})


def _entry(contracts: dict[str, Tensor]) -> EntryPoint:
    return EntryPoint(
        facade="fi_compat.example",
        name="reorder_rows_for_gated_act_gemm",
        module="flashinfer",
        params=[Param("x")],
        contracts=contracts,
    )


def reorder_rows_for_gated_act_gemm(x: Tensor, **kwargs: Any) -> Tensor:  # type: ignore[valid-type]
    raise NotImplementedError


reorder_rows_for_gated_act_gemm.__annotations__ = {"x": "Tensor", "return": "Tensor"}


def test_an_unknown_key_is_an_error_when_the_stub_is_bound() -> None:
    e = _entry({"x": Tensor("rows cols"), "y": Tensor("cols")})
    with pytest.raises(ValueError, match=r"contracts for \['y'\], which the stub does not"):
        e.bind_stub(reorder_rows_for_gated_act_gemm)


def test_an_entry_point_compiles_its_contract_at_the_first_call() -> None:
    e = _entry({"x": Tensor("rows 2*half", dtypes=FP16)})
    e.bind_stub(reorder_rows_for_gated_act_gemm)
    assert e.validate_args == ("x",) and e.contract is not None
    assert e.contract.function is None  # nothing compiled (nor torch imported) at import
    assert e.validate(torch.zeros(3, 4, dtype=BF)) == -1  # the CUDA index (-1: off CUDA)
    fn = e.contract.function
    assert e.validate is fn and fn is not None
    filename = fn.__code__.co_filename
    assert filename == "<fi_compat contract fi_compat.example.reorder_rows_for_gated_act_gemm>"
    assert "".join(linecache.getlines(filename)) == e.contract.source
    with pytest.raises(errors.InvalidArgumentError, match="an even last dimension"):
        e.validate(torch.zeros(3, 5, dtype=BF))


def test_no_torch_at_import() -> None:
    code = (
        "import sys\nimport fi_compat.norm, fi_compat.activation, fi_compat.page, "
        "fi_compat.rope\nfrom fi_compat._adapters.norm import SPECS\n"
        "assert SPECS['rmsnorm'].contract.function is None\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'torch'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- each check's message -------------------------------------------------------------------


def test_not_a_tensor() -> None:
    c = contract({"x": Tensor("a"), "y": Tensor("a")}, {"y": "Tensor | None"})
    refused(c, "x must be a torch.Tensor, got list", [1], None)
    refused(c, "y must be a torch.Tensor or None, got str", torch.zeros(2), "y")


def test_rank_and_dtype_messages() -> None:
    c = contract(
        {
            "q": Tensor("nnz heads dim", dtypes=FP16, why="the kernels dispatch on those"),
            "idx": Tensor("_", dtypes=INDEX),
            "rows": Tensor("... h", rank=(2, 3)),
        }
    )
    ok = (torch.zeros(2, 3, 4, dtype=BF), torch.zeros(2, dtype=torch.int32), torch.zeros(1, 5))
    assert c.function is not None and c.function(*ok) == -1
    refused(
        c, r"q must be 3-D \[nnz, heads, dim\], got shape \(2, 12\)", ok[0].view(2, 12), *ok[1:]
    )
    refused(
        c,
        r"q must be float16 or bfloat16 \[nnz, heads, dim\] \(the kernels dispatch on those\), "
        r"got \(2, 3, 4\) torch.float32",
        ok[0].float(),
        *ok[1:],
    )
    msg = "idx must be a 1-D int32 or int64 tensor, got (2,) torch.float32"
    assert refused(c, "idx must be a 1-D int32", ok[0], ok[1].float(), ok[2]).endswith(msg)
    refused(c, r"idx must be a 1-D int32 or int64 tensor, got \(1, 2\)", ok[0], ok[1][None], ok[2])
    refused(c, r"rows must be 2-D or 3-D \[\.\.\., h\], got shape \(5,\)", *ok[:2], torch.zeros(5))


def test_relations() -> None:
    c = contract(
        {
            "x": Tensor("b h", dtypes=FP16),
            "w": Tensor("h", dtype="x", why="read as that type"),
            "out": Tensor(like="x"),
        },
        {"out": "Tensor | None"},
    )
    x, w = torch.zeros(3, 8, dtype=BF), torch.zeros(8, dtype=BF)
    assert c.function is not None and c.function(x, w, None) == -1 and c.function(x, w, x) == -1
    refused(
        c,
        r"w must have x's dtype \(torch.bfloat16; read as that type\), got torch.float32",
        x,
        w.float(),
        None,
    )
    refused(
        c,
        r"out must have x's shape and dtype \(3, 8\) torch.bfloat16, got \(3, 4\) torch.bfloat16",
        x,
        w,
        x[:, :4],
    )
    refused(c, "out must have x's shape and dtype", x, w, x.half())


def test_symbolic_dims_agree_across_parameters() -> None:
    c = contract(
        {
            "q": Tensor("nnz heads dim", dtypes=FP16),
            "k": Tensor("nnz kv_heads dim", match="q"),
            "pos": Tensor("nnz", dtypes=INDEX),
            "w": Tensor("dim"),
        }
    )
    q, k = torch.zeros(5, 4, 64, dtype=BF), torch.zeros(5, 2, 64, dtype=BF)
    pos, w = torch.zeros(5, dtype=torch.int64), torch.zeros(64)
    assert c.function is not None and c.function(q, k, pos, w) == -1  # heads may differ
    refused(
        c,
        r"k must match q in dtype, nnz and dim: q \(5, 4, 64\) torch.bfloat16, k \(5, 2, 32\)",
        q,
        k[..., :32],
        pos,
        w,
    )
    refused(c, "k must match q in dtype", q, k.half(), pos, w)
    refused(
        c,
        r"pos must be 1-D \[nnz\] = \(5,\) \(nnz = 5 from q.shape\[0\]\), got shape \(4,\)",
        q,
        k,
        pos[:4],
        w,
    )
    refused(c, r"w must be 1-D \[dim\] = \(64,\) \(dim = 64 from q.shape\[2\]\)", q, k, pos, w[:8])


def test_multiples_literals_and_named_groups() -> None:
    c = contract(
        {"x": Tensor("*batch 2*d", dtypes=FP16), "out": Tensor("*batch d 1")},
        {"out": "Tensor | None"},
    )
    x = torch.zeros(2, 3, 8, dtype=BF)
    assert c.function is not None
    assert c.function(x, None) == -1 and c.function(x, torch.zeros(2, 3, 4, 1)) == -1
    refused(
        c,
        r"x must be \[\.\.\., 2\*d\] \(an even last dimension\), got shape \(2, 3, 7\)",
        x[..., :7],
        None,
    )
    refused(
        c,
        r"out must be \[\.\.\., d, 1\] = \(2, 3, 4, 1\) \(d = 4 from x.shape\[-1\]\)",
        x,
        torch.zeros(2, 3, 5, 1),
    )
    refused(
        c,
        r"\(batch = \(2, 3\) from x.shape\[:2\]\), got shape \(3, 3, 4, 1\)",
        x,
        torch.zeros(3, 3, 4, 1),
    )
    refused(
        c,
        r"out must be \[\.\.\., d, 1\] = \(2, 3, 4, 1\), got shape \(2, 3, 4, 2\)",
        x,
        torch.zeros(2, 3, 4, 2),
    )
    c3 = contract({"x": Tensor("r 3*c _")})
    refused(
        c3, r"x must be \[r, 3\*c, _\] \(the dimension 1 a multiple of 3\)", torch.zeros(2, 4, 1)
    )


def test_sizes_a_dimension_may_take() -> None:
    """``sizes=``: a named dimension limited to the values a kernel dispatches on; one
    membership test in the fast check, the accepted values and the why in the message."""
    why = "the kernel has those. Fix: another size"
    c = contract(
        {
            "q": Tensor("n h d", dtypes=FP16, sizes={"d": (64, 128)}, sizes_why=why),
            "k": Tensor("n g d", match="q"),
        }
    )
    assert c.function is not None
    assert "_s_q[2] in _SZ_q_d" in c.source
    for d in (64, 128):
        q = torch.zeros(2, 4, d, dtype=BF)
        assert c.function(q, torch.zeros(2, 1, d, dtype=BF)) == -1
    msg = refused(
        c,
        r"q has d = 80 \(q.shape\[2\], shape \(2, 4, 80\)\); it must be 64 or 128: the kernel",
        torch.zeros(2, 4, 80, dtype=BF),
        torch.zeros(2, 1, 80, dtype=BF),
    )
    assert msg.endswith("Fix: another size")
    refused(  # k agrees with q: the usual message, not the sizes one
        c,
        "k must match q",
        torch.zeros(2, 4, 64, dtype=BF),
        torch.zeros(2, 1, 80, dtype=BF),
    )


def test_optional_tensors() -> None:
    c = contract({"x": Tensor("n"), "buf": Tensor("n", dtypes="int32")}, {"buf": "Tensor | None"})
    x = torch.zeros(4)
    assert c.function is not None and c.function(x, None) == -1
    assert c.function(x, torch.zeros(4, dtype=torch.int32)) == -1
    refused(c, "buf must be int32", x, torch.zeros(4, dtype=torch.int64))
    refused(c, r"buf must be 1-D \[n\] = \(4,\)", x, torch.zeros(3, dtype=torch.int32))


def test_contiguity() -> None:
    c = contract({"x": Tensor("a b", contiguous=True), "y": Tensor("a b", contiguous="last")})
    t = torch.zeros(4, 6)
    assert c.function is not None and c.function(t, t) == -1
    assert c.function(t, torch.zeros(8, 6)[::2]) == -1  # rows strided, last dim unit stride
    refused(c, r"x must be contiguous, got strides \(1, 4\)", torch.zeros(6, 4).t(), t)
    refused(c, "y must have a unit stride in its last dimension", t, torch.zeros(6, 4).t())


def test_device_relations() -> None:
    c = contract(
        {
            "x": Tensor("a"),
            "y": Tensor("a"),
            "z": Tensor("a", device="y"),
            "h": Tensor("a", device="any"),
        }
    )
    t = torch.zeros(3)
    assert c.function is not None and c.function(t, t, t, on_device(t)) == -1
    assert c.function(on_device(t), on_device(t), on_device(t), t) == 1  # the first tensor's index
    refused(c, r"y must be on x's device \(cpu\), got cpu", t, on_device(t), on_device(t), t)
    refused(c, "z must be on y's device", t, t, on_device(t), t)


def test_a_hook_runs_after_the_contract_with_its_extra_arguments() -> None:
    seen: list[tuple[Any, ...]] = []

    def hook(x: Any, size: Any) -> None:
        seen.append((x.shape, size))
        if size != x.shape[0]:
            raise errors.InvalidArgumentError(f"size {size} is not x.shape[0]")

    c = contract({"x": Tensor("n")}, {"size": "int"}, hook=hook, extra=("size",))
    assert c.args == ("x", "size") and c.function is not None
    assert c.function(torch.zeros(3), 3) == -1 and seen == [((3,), 3)]
    with pytest.raises(errors.InvalidArgumentError, match="size 2 is not"):
        c.function(torch.zeros(3), 2)
    with pytest.raises(errors.InvalidArgumentError, match="x must be 1-D"):
        c.function(torch.zeros(3, 1), 3)  # the contract first: the hook never sees it
    assert len(seen) == 2

    def buggy(x: Any, size: Any) -> None:
        raise TypeError("a bug in the hook")

    c = contract({"x": Tensor("n")}, {"size": "int"}, hook=buggy, extra=("size",))
    assert c.function is not None
    with pytest.raises(TypeError, match="a bug in the hook"):  # not swallowed as "invalid"
        c.function(torch.zeros(3), 3)


# -- the fast check and the diagnostic agree ----------------------------------------------

AGREE = {
    "x": Tensor("*batch 2*d", dtypes=FP16),
    "w": Tensor("d", dtype="x", sizes={"d": (1, 2)}, sizes_why="a kernel's sizes"),
    "k": Tensor("*batch d", match="x"),
    "r": Tensor(like="x"),
    "idx": Tensor("_", dtypes=INDEX, contiguous=True),
    "out": Tensor("... 2 d", rank=(2, 3, 4)),
}
DTYPES = [torch.bfloat16, torch.float16, torch.float32, torch.int32, torch.int64]


@st.composite
def tensors(draw: Any) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from([None, 3, "x"]))
    shape = draw(st.lists(st.integers(0, 4), min_size=0, max_size=4))
    t = torch.empty(shape, dtype=draw(st.sampled_from(DTYPES)))
    if t.dim() >= 2 and draw(st.booleans()):
        t = t.transpose(0, 1)
    return on_device(t) if draw(st.integers(0, 9)) == 0 else t


@st.composite
def calls(draw: Any) -> Any:
    """Arguments near the contract: a valid call with one or two values redrawn."""
    b = draw(st.lists(st.integers(1, 3), max_size=3))  # 3: a group longer than two dims
    d = draw(st.integers(1, 3))
    dt = draw(st.sampled_from(FP16))
    x = torch.empty((*b, 2 * d), dtype=getattr(torch, dt))
    args = {
        "x": x,
        "w": torch.empty(d, dtype=x.dtype),
        "k": torch.empty((*b, d), dtype=x.dtype),
        "r": torch.empty_like(x),
        "idx": torch.empty(draw(st.integers(0, 3)), dtype=torch.int32),
        "out": draw(st.sampled_from([None, torch.empty(1, 2, d)])),
    }
    for name in draw(st.lists(st.sampled_from(list(args)), max_size=2)):
        args[name] = draw(tensors())
    return tuple(args.values())


@settings(max_examples=400, deadline=None)
@given(calls())
def test_the_fast_check_and_the_diagnostic_agree(args: tuple[Any, ...]) -> None:
    c = AGREED
    assert c.function is not None
    try:
        c.diagnose(*args)
        diagnosed = None
    except errors.InvalidArgumentError as exc:
        diagnosed = str(exc)
    except (AttributeError, TypeError) as exc:  # a non-tensor in a relation's target
        diagnosed = repr(exc)
    try:
        got = c.function(*args)
        fast = None
    except errors.InvalidArgumentError as exc:
        fast, got = str(exc), None
    except (AttributeError, TypeError) as exc:
        fast, got = repr(exc), None
    assert (fast is None) == (diagnosed is None), (fast, diagnosed)
    if fast is None:
        assert got == args[0].get_device()
    else:
        assert fast == diagnosed  # the fast path raises the diagnostic's error


AGREED = contract(AGREE, {"out": "Tensor | None"})
