"""The typed surface: the generated ``.pyi`` files of the facade modules (``tools/stubs.py``)
are current, mypy reads the public API as typed (wrapper instances, a misspelt keyword,
``written_for``), and the wrapper classes' runtime docstrings are fi_compat's own."""

from __future__ import annotations

import hashlib
import os
import pydoc
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT
from fi_compat._core import facts
from fi_compat._facades import FACADES, entry_points
from support.inherited import DATA, ROWS, callers, stable, stand_in

# One call per line; each line either reveals a type (``reveal_type``) or is a type error
# (``# error: <code>``); any other mypy message fails the test.
SNIPPET = """\
from typing import Any

import torch

import fi_compat
from fi_compat import {modules}

x: torch.Tensor = torch.empty(1)
w = decode.BatchDecodeWithPagedKVCacheWrapper(x, "NHD")
reveal_type(w)  # reveal: fi_compat.decode.BatchDecodeWithPagedKVCacheWrapper
w.plan(x, x, x, 8, 8, 128, 16, q_data_type="bfloat16")
w.plan(x, x, x, 8, 8, 128, 16, q_datatype="bfloat16")  # error: call-arg
w.plan(x, x, x, 8, 8, 128, 16, "NONE")  # error: call-arg
reveal_type(w.begin_forward)  # reveal: def (indptr:
w.run_return_lse(x, x, return_lse=True)  # error: call-arg
a: Any = w.forward(x, x)
b: Any = w.is_cuda_graph_enabled
g = decode.CUDAGraphBatchDecodeWithPagedKVCacheWrapper(x, x, x, x)
g.run(x, x, return_lse=True)
p = prefill.BatchPrefillWithPagedKVCacheWrapper(x)
reveal_type(p)  # reveal: fi_compat.prefill.BatchPrefillWithPagedKVCacheWrapper
c = cascade.MultiLevelCascadeAttentionWrapper(2, x)
c.forward(x, x)
m = mla.BatchMLAPagedAttentionWrapper(x)
norm.rmsnorm(x, x, eps=1e-6)
norm.rmsnorm(x, x, epsilon=1e-6)  # error: call-arg
decode.trtllm_batch_decode_with_kv_cache(x, x, x, x, x, 8, kv_block_scales=x)
wf = fi_compat.written_for("0.5.3")
reveal_type(wf)  # reveal: fi_compat._written.WrittenFor
reveal_type(wf.decode)  # reveal: fi_compat.decode._Written
v = wf.decode.BatchDecodeWithPagedKVCacheWrapper(x, "NHD")
reveal_type(v)  # reveal: fi_compat.decode._Written.BatchDecodeWithPagedKVCacheWrapper
v.plan(x, x, x, 8, 8, 128, 16, "NONE", -1, None, "float16", None, None, 1.0)
stable_w: decode.BatchDecodeWithPagedKVCacheWrapper = v
reveal_type(wf.norm.rmsnorm(x, x, 1e-6))  # reveal: Any
reveal_type(wf.fused_moe.ActivationType.Swiglu)  # reveal: fi_compat.enums.ActivationType
wf.nonexistent  # error: attr-defined
"""

CONFIG = """\
[mypy]
strict = True
# fi_compat's own ignores are about torch's types, skipped here
warn_unused_ignores = False
# torch's own types are not under test here and would cost a cold run ~25 s
[mypy-torch,torch.*]
follow_imports = skip
follow_imports_for_stubs = True
"""


def test_stubs_are_current() -> None:
    r = subprocess.run(
        [sys.executable, "tools/stubs.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert r.returncode == 0, f"stale .pyi files: run python tools/stubs.py\n{r.stderr}"


def test_every_facade_has_its_stub_and_the_package_is_typed() -> None:
    pkg = ROOT / "src" / "fi_compat"
    assert (pkg / "py.typed").is_file()
    for module in FACADES:
        stub = pkg / module / "__init__.pyi" if (pkg / module).is_dir() else pkg / f"{module}.pyi"
        assert stub.is_file(), module
    assert (pkg / "_written.pyi").is_file()


def test_kwargs_stay_where_a_release_has_a_parameter_without_a_stable_name() -> None:
    """The typed ``**kwargs`` (pass-through) is kept exactly where some served release has
    a parameter only it can reach; the stub text agrees."""
    unlisted = {e.dotted: facts.unlisted(e) for e in entry_points()}
    assert unlisted["fi_compat.decode.trtllm_batch_decode_with_kv_cache"] == ["kv_block_scales"]
    assert unlisted["fi_compat.norm.rmsnorm"] == []
    facade_of = {e.dotted: e.facade for e in entry_points()}
    for dotted, names in unlisted.items():
        module = facade_of[dotted].removeprefix("fi_compat.")
        if module not in FACADES:
            continue  # a submodule of a facade package (fi_compat.comm.mnnvl): no .pyi
        name = dotted.removeprefix(facade_of[dotted] + ".")
        pkg = ROOT / "src" / "fi_compat" / module
        text = (pkg / "__init__.pyi" if pkg.is_dir() else pkg.with_suffix(".pyi")).read_text()
        cls, _, method = name.rpartition(".")
        block = text.split(f"\nclass {cls}:", 1)[1] if cls else text
        sig = block.split(f"def {method}(", 1)[1].split(")", 1)[0]
        assert ("**kwargs: Any" in sig) == bool(names), (dotted, names)


def _mypy_cache() -> str:
    """A per-user, per-mypy-version cache outside the tree: a cold run takes ~10 s, a
    warm one ~2 s."""
    import mypy.version

    key = hashlib.sha1(f"{sys.executable}{mypy.version.__version__}".encode()).hexdigest()[:12]
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return str(Path(tempfile.gettempdir()) / f"fi_compat-mypy-{uid}-{key}")


def test_public_api_is_typed(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    snippet = SNIPPET.format(modules=", ".join(sorted(FACADES)))
    (tmp_path / "snippet.py").write_text(snippet)
    (tmp_path / "mypy.ini").write_text(CONFIG)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(tmp_path / "mypy.ini"),
            "--cache-dir",
            _mypy_cache(),
            "--no-error-summary",
            "--show-error-codes",
            "snippet.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(ROOT / "src")},
        timeout=300,
    )
    lines = snippet.splitlines()
    want: dict[int, tuple[str, str]] = {}
    for i, line in enumerate(lines, 1):
        found = re.search(r"# (reveal|error): (.+)$", line)
        if found:
            want[int(i)] = (found[1], found[2])
    got: dict[int, list[tuple[str, str]]] = {}
    for msg in r.stdout.splitlines():
        m = re.match(r"snippet\.py:(\d+): (error|note): (.*)$", msg)
        assert m, f"mypy said, outside the snippet: {msg}\n{r.stdout}{r.stderr}"
        n, kind, text = int(m[1]), m[2], m[3]
        if kind == "note" and not text.startswith("Revealed type is"):
            continue  # "defined here" notes of an error
        got.setdefault(n, []).append((kind, text))
    for n, (kind, what) in want.items():
        seen = got.pop(n, [])
        if kind == "reveal":
            assert any(t.startswith(f'Revealed type is "{what}') for _, t in seen), (
                lines[n - 1],
                seen,
            )
        else:
            assert any(k == "error" and t.endswith(f"[{what}]") for k, t in seen), (
                lines[n - 1],
                seen,
            )
    assert not got, f"unexpected mypy messages: {got}\n{r.stderr}"


def test_wrapper_docstrings_are_fi_compat_s_own() -> None:
    """``help()`` of a stable wrapper class shows fi_compat's docstring (what the class
    is, which methods are fi_compat's, which are the installed FlashInfer class's own),
    not FlashInfer's (``flashinfer.BatchDecodeWithPagedKVCacheWrapper(...)``,
    ``data_type=torch.float16``); FlashInfer's inherited methods that call the stable
    ones say that they run in the release view."""
    flashinfer_doc = (
        ">>> flashinfer.BatchDecodeWithPagedKVCacheWrapper(ws, data_type=torch.float16)"
    )
    for cls, row in ROWS.items():
        release = next(r for r, rid in DATA["classes"][cls].items() if rid is not None)
        base = stand_in(cls, release)
        base = type(cls, (base,), {"__doc__": flashinfer_doc, "__module__": base.__module__})
        stable_cls, _ = stable(cls, release, base=base)
        assert stable_cls.__doc__ == row.docstring(), cls
        text = pydoc.render_doc(stable_cls, renderer=pydoc.plaintext)
        head = text.split("Method resolution order", 1)[0]
        assert "data_type=torch.float16" not in head and "fi_compat's methods" in head, cls
        own = callers(cls, release)
        for name in own:
            doc = getattr(stable_cls, name).__doc__
            assert doc.startswith(f"FlashInfer's own ``{name}``"), (cls, name, doc)
            assert f"``{name}``" in row.docstring(), (cls, name)


def test_flashinfer_methods_are_the_audited_ones() -> None:
    """Each class row's ``flashinfer_methods`` (named in its docstring and typed in its
    ``.pyi``) are the inherited methods that call a stable one in some release, as the
    audit of every release (``tests/support/internal_calls.json``) finds them."""
    for cls, row in ROWS.items():
        audited = {m for r, rid in DATA["classes"][cls].items() if rid for m in callers(cls, r)}
        assert set(row.flashinfer_methods) == audited, cls
