"""Facts about this host read without importing torch (~2 s) or FlashInfer.

* :func:`torch_build`: torch's version and CUDA build from ``torch/version.py``, as text.
* :func:`capability_without_torch`: the compute capability of the device torch would call
  ``cuda:0``, from the driver's NVML library through :mod:`ctypes` (a few ms), where that
  is exact; :data:`UNKNOWN` where only torch can tell (then the caller imports torch).
"""

from __future__ import annotations

import os

UNKNOWN = "unknown"


def torch_build() -> dict[str, str | None]:
    """torch's version and CUDA build from its files, without importing it."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return {"version": None, "cuda": None, "hip": None, "location": None}
    loc = next(iter(spec.submodule_search_locations))
    out: dict[str, str | None] = {"version": None, "cuda": None, "hip": None, "location": loc}
    try:
        with open(os.path.join(loc, "version.py"), encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError):
        return out
    keys = {"__version__": "version", "cuda": "cuda", "hip": "hip"}
    for node in tree.body:
        target = getattr(node, "target", None) or (getattr(node, "targets", None) or [None])[0]
        name = getattr(target, "id", None)
        if name in keys and getattr(node, "value", None) is not None:
            try:
                value = ast.literal_eval(node.value)  # type: ignore[attr-defined]
            except ValueError:
                continue
            out[keys[name]] = value
    return out


def _visible_index(env: dict[str, str]) -> int | str | None:
    """The NVML index of torch's ``cuda:0`` from ``CUDA_VISIBLE_DEVICES``: an int, None
    (no device visible), or UNKNOWN (UUIDs, MIG instances: only CUDA maps those)."""
    vis = env.get("CUDA_VISIBLE_DEVICES")
    if vis is None:
        return 0
    first = vis.split(",")[0].strip()
    if first == "" or first.startswith("-"):
        return None  # CUDA treats an empty list or a negative id as "no device"
    return int(first) if first.isdigit() else UNKNOWN


def capability_without_torch(
    env: dict[str, str] | None = None,
    nvml: object = None,
    build: dict[str, str | None] | None = None,
) -> tuple[int, int] | str | None:
    """(major, minor) of torch's ``cuda:0``, None where torch would see no CUDA device,
    or UNKNOWN where only torch can say.  ``nvml`` (a loaded NVML library) and ``build``
    (:func:`torch_build`'s answer) are read from the host unless given (tests)."""
    import ctypes

    env = dict(os.environ) if env is None else env
    build = torch_build() if build is None else build
    if build["location"] is None or (build["cuda"] is None and build["hip"] is None):
        return None  # no torch, or a CPU-only build: torch.cuda.is_available() is False
    if build["cuda"] is None:
        return UNKNOWN  # ROCm: no NVML
    index = _visible_index(env)
    if index is None or index == UNKNOWN:
        return index
    if nvml is None:
        try:
            nvml = ctypes.CDLL("libnvidia-ml.so.1")
        except OSError:
            return None  # no NVIDIA driver: torch finds no device either
    lib: ctypes.CDLL = nvml  # type: ignore[assignment]
    if lib.nvmlInit_v2() != 0:
        return UNKNOWN
    try:
        count = ctypes.c_uint(0)
        if lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0:
            return UNKNOWN
        caps = []
        for i in range(count.value):
            handle = ctypes.c_void_p()
            major, minor = ctypes.c_int(0), ctypes.c_int(0)
            if lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(handle)) != 0:
                return UNKNOWN
            if lib.nvmlDeviceGetCudaComputeCapability(
                handle, ctypes.byref(major), ctypes.byref(minor)
            ):
                return UNKNOWN
            caps.append((major.value, minor.value))
    finally:
        lib.nvmlShutdown()
    if int(index) >= len(caps):
        return UNKNOWN
    # CUDA numbers devices fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID (NVML's
    # order): exact only where the order cannot matter
    if env.get("CUDA_DEVICE_ORDER") != "PCI_BUS_ID" and len(set(caps)) > 1:
        return UNKNOWN
    return caps[int(index)]
