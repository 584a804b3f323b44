"""Live contract of ``fi_compat.comm`` against the FlashInfer release of the cell.

``import flashinfer.comm`` on this CPU-only host fails in ways fi_compat must explain
(``_issues.py`` rows, ``OptionalDependency`` rows of ``_adapters/comm.py``):

* to 0.6.13 ``comm/cuda_ipc.py`` asserts libcudart is loaded (a torch build without CUDA
  loads none): ``FlashInferImportError`` naming ``comm-import-libcudart-not-loaded``;
* from 0.6.0 (0.2.7.post1 for the MNNVL submodules) it needs cuda-python, on
  0.6.10-0.6.13 cuda-tile: ``OptionalDependencyMissingError`` naming the package;
* on 0.6.16-0.6.16.post3 and Python < 3.12 it raises TypeError (``array.array[int]``):
  ``FlashInferImportError`` naming ``comm-import-python-below-3.12``.

The first call's typed error is asserted against that prediction in the cell as it is.
Then :func:`test_again_with_a_cuda_runtime_and_cuda_python` runs this module once more
in a subprocess with what a GPU host has (libcudart loaded before FlashInfer, found on
this host, and cuda-python from the matrix's DSL folder, without the CuTe DSL): where
``flashinfer.comm`` imports there, every case of ``tests/support/comm_cases.py`` runs with
the spy bound to ``inspect.signature`` of the real function, and the classes and
re-exports are checked to be FlashInfer's own.  The kernels need several GPUs: nothing
here launches one.
"""

from __future__ import annotations

import ctypes
import glob
import inspect
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

CELL = os.environ.get("FI_COMPAT_CELL")
EXPECT = os.environ.get("FI_COMPAT_CELL_EXPECT", "live")
INNER = os.environ.get("FI_COMPAT_COMM_INNER") == "1"  # the subprocess run
if INNER and os.environ.get("FI_COMPAT_COMM_LIBCUDART"):
    ctypes.CDLL(os.environ["FI_COMPAT_COMM_LIBCUDART"])  # as a CUDA torch does at import

import fi_compat.comm  # noqa: E402, F401  (binds the stubs: the tables' parameter lists)
from fi_compat import enums, errors  # noqa: E402
from fi_compat._adapters import comm as tables  # noqa: E402
from fi_compat.registry import at_least, place  # noqa: E402

pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(CELL is None, reason="no FlashInfer release cell (run tools/matrix.py)"),
    # `import flashinfer` itself crashes here (a crashed import leaves submodules in
    # sys.modules that later tests of the cell would reach)
    pytest.mark.skipif(EXPECT == "import-crash", reason="import flashinfer fails here"),
]


def _available(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _cudart_loaded() -> bool:
    try:
        with open("/proc/self/maps") as fh:
            return "libcudart" in fh.read()
    except OSError:
        return False


def _cuda_python_major() -> int | None:
    from importlib import metadata

    try:
        return int(metadata.version("cuda-python").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        return None


def predicted(release: str, module: str = "flashinfer.comm") -> tuple[type[Exception] | None, str]:
    """What ``import <module>`` (``flashinfer.comm`` or one of its submodules) does here,
    from fi_compat's own tables: (the typed error, a word its message holds), or
    (None, "") where it imports."""
    pl = place(release)
    if EXPECT == "cubin-mismatch":
        return errors.FlashInferImportError, "cubin"
    if not at_least(pl, "0.6.14") and not _cudart_loaded():
        return errors.FlashInferImportError, "comm-import-libcudart-not-loaded"
    # the package reaches comm/mnnvl.py from 0.6.0; the MNNVL submodules always
    mnnvl = module not in (tables.COMM, tables.TRTLLM_AR, tables.VLLM_AR)
    if (mnnvl or at_least(pl, "0.6.0")) and not _available("cuda"):
        return errors.OptionalDependencyMissingError, "cuda-python"
    major = _cuda_python_major()
    if (mnnvl or at_least(pl, "0.6.0")) and not at_least(pl, "0.4.0") and (major or 0) >= 13:
        return errors.FlashInferImportError, "comm-mnnvl-cuda-python-13"
    if at_least(pl, "0.6.10") and not at_least(pl, "0.6.14") and not _available("cuda.tile"):
        return errors.OptionalDependencyMissingError, "cuda-tile"
    if at_least(pl, "0.6.16") and not at_least(pl, "0.6.16.post4") and sys.version_info < (3, 12):
        return errors.FlashInferImportError, "comm-import-python-below-3.12"
    return None, ""


def _package_entry() -> Any:
    """The facade whose module is ``flashinfer.comm`` itself, existing in the cell."""
    for key in ("allreduce_fusion", "trtllm_create_ipc_workspace_for_all_reduce_fusion"):
        e = tables.SPECS[key]
        if e.exists_in(place(str(CELL))):
            return e
    return None


def _resolve(e: Any) -> Any:
    from fi_compat.detection import Distribution

    a = e.select(Distribution("flashinfer-python", str(CELL), "<cell>", ""))
    return a.resolve()


def test_the_first_call_raises_what_the_tables_predict() -> None:
    e = _package_entry()
    if e is None:
        pytest.skip(f"flashinfer-python {CELL} has no flashinfer.comm fi_compat serves")
    error, word = predicted(str(CELL))
    if error is None:
        fn = _resolve(e)
        assert callable(fn) and fn.__module__.startswith("flashinfer.comm")
        return
    with pytest.raises(error) as ei:
        _resolve(e)
    assert type(ei.value) is error, repr(ei.value)
    assert word in str(ei.value), str(ei.value)
    # the classes and the re-exports resolve to stand-ins that raise the same error
    from fi_compat import comm

    with pytest.raises(error, match=word):
        comm.Mapping(world_size=1)


@pytest.fixture(scope="module")
def live() -> None:
    if _package_entry() is None:
        pytest.skip(f"flashinfer-python {CELL} has no flashinfer.comm fi_compat serves")
    if predicted(str(CELL))[0] is not None:
        pytest.skip(f"flashinfer.comm does not import in this cell ({predicted(str(CELL))[1]})")


def _here() -> list[str]:
    """The entry points of the cell's release whose module imports here."""
    from support.comm_cases import ENTRIES

    return [
        k
        for k, e in ENTRIES.items()
        if e.exists_in(place(str(CELL))) and predicted(str(CELL), e.module)[0] is None
    ]


def test_each_submodule_raises_what_the_tables_predict(live: None) -> None:
    """Where flashinfer.comm imports, an MNNVL submodule may still not (cuda-python 13 on
    0.2.7.post1-0.3.x): each entry point's first call says so, typed."""
    from support.comm_cases import ENTRIES

    for e in ENTRIES.values():
        error, word = predicted(str(CELL), e.module)
        if not e.exists_in(place(str(CELL))) or error is None:
            continue
        with pytest.raises(error, match=word):
            _resolve(e)


def _real(key: str) -> Any:
    from support.comm_cases import ENTRIES

    fn = _resolve(ENTRIES[key])
    return getattr(fn, "__func__", fn)


def test_live_signatures_equal_the_snapshots(live: None) -> None:
    from support.comm_cases import ENTRIES
    from support.spy import snapshot_signature

    for key in _here():
        got = [(p.name, p.kind) for p in inspect.signature(_real(key)).parameters.values()]
        want = [
            (p.name, p.kind)
            for p in snapshot_signature(str(CELL), ENTRIES[key]).parameters.values()
        ]
        assert got == want, key


def test_live_policy(live: None) -> None:
    """Every case, the spy bound to the real function's signature."""
    from support.comm_cases import CASES

    for key in _here():
        sig = inspect.signature(_real(key))
        for case in CASES:
            case(key, str(CELL), sig)


def test_classes_and_reexports_are_flashinfers_own(live: None) -> None:
    import importlib

    from fi_compat import comm
    from fi_compat.comm import mnnvl, trtllm_alltoall

    pl = place(str(CELL))
    for spec in tables.ALL_REEXPORTS:
        mod = importlib.import_module(spec.facade)
        got = getattr(mod, spec.name)
        error, word = predicted(str(CELL), spec.module)
        if spec.exists_in(pl) and error is not None:
            with pytest.raises(error, match=word):
                got()
        elif spec.exists_in(pl):
            assert got is getattr(importlib.import_module(spec.module), spec.name), spec.name
        else:
            with pytest.raises(errors.UnsupportedFlashInferVersionError):
                got()
    here = set(_here())
    if "MoeAlltoAll.dispatch" in here:
        base = importlib.import_module(tables.MOE_A2A).MoeAlltoAll
        assert issubclass(comm.MoeAlltoAll, base) and comm.MoeAlltoAll is not base
    if "MnnvlMoe.mnnvl_moe_alltoallv" in here:
        base = importlib.import_module(tables.ALLTOALL).MnnvlMoe
        cls = trtllm_alltoall.MnnvlMoe
        assert issubclass(cls, base)
        assert isinstance(cls.__dict__["mnnvl_moe_alltoallv"], staticmethod)
    assert isinstance(mnnvl.is_mnnvl_fabric_supported, type(test_live_policy))


def test_live_enums_equal_the_snapshots(live: None) -> None:
    """FlashInfer's plain classes of integer constants hold the snapshot's values."""
    import flashinfer.comm as fc

    for name in ("AllReduceFusionPattern", "QuantizationSFLayout"):
        cls = getattr(enums, name)
        want = cls.values_in(str(CELL))
        own = getattr(fc, name, None)
        if want is None or own is None:
            continue
        got = {
            cls._older_names_.get(k, k): v
            for k, v in vars(own).items()
            if not k.startswith("_") and type(v) is int
        }
        assert got == want, name


# -- the same module on what a GPU host has ----------------------------------------------


def _matrix() -> Path | None:
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if Path(p).name == f"fi-{CELL}":
            return Path(p).parent
    return None


def _libcudart() -> str | None:
    own = os.environ.get("FI_COMPAT_LIBCUDART")
    if own:
        return own
    for pattern in (
        "/usr/local/cuda*/lib*/libcudart.so*",
        "/usr/local/cuda*/targets/*/lib/libcudart.so*",
        "/usr/lib/x86_64-linux-gnu/libcudart.so*",
    ):
        for path in sorted(glob.glob(pattern)):
            if ".a" not in Path(path).suffixes:
                return path
    return None


def _cuda_python(tmp: Path) -> str | None:
    """cuda-python alone: the matrix's DSL folder linked without the CuTe DSL (whose
    presence makes ``import flashinfer`` crash on a CPU-only torch, 0.6.15-0.7.0.post1)."""
    if _available("cuda"):
        return None
    m = _matrix()
    dsl = m / "dsl" if m is not None else None
    if dsl is None or not (dsl / "cuda").is_dir():
        return None
    out = tmp / "cuda-python"
    out.mkdir()
    for p in dsl.iterdir():
        if p.name == "cuda" or p.name.startswith(
            ("cuda_bindings", "cuda_core", "cuda_pathfinder", "cuda_python")
        ):
            (out / p.name).symlink_to(p)
    return str(out)


@pytest.mark.skipif(INNER, reason="the subprocess run itself")
def test_again_with_a_cuda_runtime_and_cuda_python(tmp_path: Path) -> None:
    if _package_entry() is None:
        pytest.skip(f"flashinfer-python {CELL} has no flashinfer.comm fi_compat serves")
    if EXPECT == "cubin-mismatch":
        pytest.skip("import flashinfer fails here whatever comm needs (cubin mismatch)")
    env = dict(os.environ, FI_COMPAT_COMM_INNER="1")
    cudart = _libcudart()
    if cudart is None and not at_least(place(str(CELL)), "0.6.14"):
        pytest.skip("no libcudart on this host to load before FlashInfer")
    if cudart is not None:
        env["FI_COMPAT_COMM_LIBCUDART"] = cudart
    extra = _cuda_python(tmp_path)
    if extra is not None:
        env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], extra])
    root = Path(__file__).resolve().parents[2]
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", __file__],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    print(r.stdout[-2000:])
