"""The decision's inputs, read from array objects.

The ``jax`` rule set decides JAX's ``__dlpack_device__`` from five inputs:
``platform``, ``platform_version``, ``memory_kind``, ``local_hardware_id``
and ``shards``. :func:`inputs_of` reads them from an array:

- **JAX arrays**, and anything with their attributes (the GPU stand-in of the
  tests): ``x.platform()``, the device's ``client.platform_version`` and
  ``local_hardware_id``, ``x.sharding.memory_kind`` and
  ``len(x.addressable_shards)``, exactly what ``jax/_src/array.py`` reads.
  JAX is never imported: the attributes are read as they are.
- **Everything else that speaks DLPack** (torch tensors, numpy arrays, CuPy,
  ...): the rule set describes JAX arrays, so another library's array is
  described as the JAX array on the same memory would be. Its own
  ``__dlpack_device__()`` says where the memory is; kDLCPU becomes platform
  ``cpu``, kDLCUDA / kDLROCM / kDLOneAPI platform ``gpu`` with a version that
  names the platform (for torch: ``cuda <torch.version.cuda>`` or
  ``rocm <torch.version.hip>``; else the bare marker), the host types
  (kDLCUDAHost, kDLROCMHost) the same with ``memory_kind`` ``pinned_host``.
  A device JAX has no row for (kDLMetal, a torch ``mps`` tensor, ...) keeps
  its own platform name, and the rules raise for it as JAX would for such a
  platform, although that library itself may export it.

:func:`host_array` gives the array's data in host memory as a numpy array,
for a copy through host memory. This module imports nothing but the
standard library; numpy only inside :func:`host_array`.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

__all__ = ["inputs_of", "facts_of", "c_exchange_api_of", "C_EXCHANGE_ATTRIBUTES", "array_text", "host_array", "is_jax_like", "DEVICE_TYPE_NAMES", "DTYPE_CODES",
           "MAX_ARRAY_TEXT"]

#: The longest array text (:func:`array_text`) handed to the rules, in
#: UTF-8 bytes: the engine's limit on a string input (engine.MaxStringLen),
#: so that a long array's text is cut rather than refused (``too_long``).
MAX_ARRAY_TEXT = 4096

# DLPack device type codes (dlpack.h v1.1, and 19-21 added in 2026).
DEVICE_TYPE_NAMES: dict[int, str] = {
    1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL", 7: "kDLVulkan",
    8: "kDLMetal", 9: "kDLVPI", 10: "kDLROCM", 11: "kDLROCMHost", 12: "kDLExtDev",
    13: "kDLCUDAManaged", 14: "kDLOneAPI", 15: "kDLWebGPU", 16: "kDLHexagon",
    17: "kDLMAIA", 18: "kDLTrn", 19: "kDLTPU", 20: "kDLTPUHost", 21: "kDLAscend",
}

# A producer's DLPack device type -> (platform, the marker its
# platform_version carries, memory_kind), as JAX would describe an array
# there. kDLCUDAManaged has no JAX row: CUDA device memory is the nearest.
_GPU_TYPES: dict[int, tuple[str, str]] = {
    2: ("cuda", "device"),
    3: ("cuda", "pinned_host"),
    13: ("cuda", "device"),
    10: ("rocm", "device"),
    11: ("rocm", "pinned_host"),
    14: ("oneapi", "device"),
}


def is_jax_like(x: Any) -> bool:
    """True for an object with the attributes JAX's ``__dlpack_device__``
    reads: ``platform()``, ``sharding``, ``devices()`` and
    ``addressable_shards`` (a ``jax.Array``, or the tests' stand-in)."""
    return (callable(getattr(x, "platform", None)) and hasattr(x, "sharding")
            and callable(getattr(x, "devices", None)) and hasattr(x, "addressable_shards"))


def inputs_of(x: Any) -> dict[str, Any]:
    """The ``jax`` rule set's inputs for the array ``x``.

    Returns a dict with ``platform``, ``platform_version``,
    ``local_hardware_id`` (an int, or None where PJRT does not know it) and
    ``shards``, and ``memory_kind`` where the array has one (left out, the
    rules take ``device``, as JAX treats a sharding without a memory kind).
    The exchange rule set takes the same inputs plus the four arguments of
    ``__dlpack__``.

    Raises:
        TypeError: ``x`` is neither JAX-like nor has ``__dlpack_device__``.
        Whatever the producer's own ``__dlpack_device__`` raises, for a
        non-JAX array whose device it cannot name.
    """
    if is_jax_like(x):
        return _jax_inputs(x)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return _torch_inputs(x, torch)
    if callable(getattr(x, "__dlpack_device__", None)):
        code, device_id = x.__dlpack_device__()
        return _dlpack_inputs(int(code), int(device_id), None)
    raise TypeError(f"dlroute cannot read the DLPack inputs of a {type(x).__module__}.{type(x).__qualname__}: "
                    "it is not a JAX array and has no __dlpack_device__")


def _jax_inputs(x: Any) -> dict[str, Any]:
    shards = list(x.addressable_shards)
    # JAX's _get_device: the array's one device (for several shards the
    # rules raise before they look at it; the first shard's stands in).
    device = shards[0].device if shards else next(iter(x.devices()))
    out: dict[str, Any] = {
        "platform": x.platform(),
        "platform_version": device.client.platform_version,
        "local_hardware_id": device.local_hardware_id,
        "shards": len(shards),
    }
    memory_kind = getattr(x.sharding, "memory_kind", None)
    if memory_kind is not None:
        out["memory_kind"] = memory_kind
    return out


def _torch_inputs(t: Any, torch: Any) -> dict[str, Any]:
    code, device_id = t.__dlpack_device__()
    code = int(code)
    if code in _GPU_TYPES:
        marker = _GPU_TYPES[code][0]
        version = {"cuda": getattr(torch.version, "cuda", None),
                   "rocm": getattr(torch.version, "hip", None),
                   "oneapi": getattr(torch.version, "xpu", None)}[marker]
        return _dlpack_inputs(code, int(device_id), f"{marker} {version}" if version else None)
    if code == 1:
        return _dlpack_inputs(code, int(device_id), None)
    return _other_platform(t.device.type, int(device_id))


def _dlpack_inputs(code: int, device_id: int, version: str | None) -> dict[str, Any]:
    if code == 1:
        return {"platform": "cpu", "platform_version": "cpu", "local_hardware_id": device_id, "shards": 1}
    if code in _GPU_TYPES:
        marker, memory_kind = _GPU_TYPES[code]
        return {"platform": "gpu", "platform_version": version or marker, "memory_kind": memory_kind,
                "local_hardware_id": device_id, "shards": 1}
    if code == 20:
        return {"platform": "tpu", "platform_version": "tpu", "memory_kind": "pinned_host",
                "local_hardware_id": device_id, "shards": 1}
    name = DEVICE_TYPE_NAMES.get(code)
    return _other_platform(name[3:].lower() if name else f"dlpack device type {code}", device_id)


def _other_platform(platform: str, device_id: int) -> dict[str, Any]:
    return {"platform": platform, "platform_version": platform, "local_hardware_id": device_id, "shards": 1}


def host_array(x: Any) -> Any:
    """The data of ``x`` in host memory, as a ``numpy.ndarray``: the array
    itself for numpy, a view where the data is already host memory (a JAX
    CPU array: read-only), else a transfer. Callers that hand the data on
    copy it (``__dlpack__(copy=True)``), so a view is never exported as a
    copy.

    JAX arrays (and the stand-in) through ``numpy.asarray``; torch tensors
    through ``tensor.detach().cpu()`` and ``numpy.from_dlpack`` (not
    ``tensor.numpy()``, which fails with "Numpy is not available" where torch
    was built against numpy 1.x and numpy 2 is installed);
    anything else through ``__array__`` or ``numpy.from_dlpack(x,
    device="cpu")``.

    Raises:
        ImportError: numpy is not installed.
        TypeError: ``x`` offers no way to read its data on the host.
    """
    import numpy as np

    if isinstance(x, np.ndarray):
        return x
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        t = x.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        return np.from_dlpack(t.resolve_conj().resolve_neg())
    if is_jax_like(x) or hasattr(x, "__array__"):
        return np.asarray(x)
    if hasattr(x, "__dlpack__"):
        return np.from_dlpack(x, device="cpu")
    raise TypeError(f"dlroute cannot read the data of a {type(x).__qualname__} on the host")


#: DLPack's DLDataTypeCode of each dtype name numpy, torch and JAX (through
#: ml_dtypes) give (dlpack.h: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4,
#: kDLComplex 5, kDLBool 6, then the float8, float6 and float4 codes).
DTYPE_CODES = {"bool": 6, "bfloat16": 4, "float8_e3m4": 7, "float8_e4m3": 8, "float8_e4m3b11fnuz": 9,
               "float8_e4m3fn": 10, "float8_e4m3fnuz": 11, "float8_e5m2": 12, "float8_e5m2fnuz": 13,
               "float8_e8m0fnu": 14, "float6_e2m3fn": 15, "float6_e3m2fn": 16, "float4_e2m1fn": 17}
_KIND_CODES = (("uint", 1), ("int", 0), ("float", 2), ("complex", 5))


def _dtype_fact(name: str, bits: int) -> dict[str, int]:
    code = DTYPE_CODES.get(name)
    if code is None:
        code = next((c for prefix, c in _KIND_CODES if name.startswith(prefix)), None)
    if code is None:
        raise TypeError(f"the dtype {name} has no DLPack code")
    return {"dtype_code": code, "dtype_bits": bits, "dtype_lanes": 1}


def _alignment(pointer: int) -> int:
    """The largest power of two up to 64 that divides pointer."""
    a = 64
    while a > 1 and pointer % a:
        a //= 2
    return a


def _c_strides(shape: list[int]) -> list[int]:
    """The strides, in elements, of a C-contiguous array of shape."""
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return out


def array_text(x: Any) -> str:
    """``str(x)``, the text a consumer prints the producer's array with (jax's
    TypeError for a device type it does not take formats it with
    ``f"{x}"``), cut to :data:`MAX_ARRAY_TEXT` UTF-8 bytes at a character's
    end: a longer text's rules message is the library's up to the cut.
    ``str`` of an array on a device reads its values, so it is asked only
    where a consumer's error prints them (:meth:`dlroute.Engine.interop`'s
    ``array_str``)."""
    text = str(x)
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= MAX_ARRAY_TEXT:
        return text
    return data[:MAX_ARRAY_TEXT].decode("utf-8", "ignore")


def facts_of(x: Any) -> dict[str, Any]:
    """The facts of ``x`` that decide an exchange, by the names every rule
    set that reads one declares (rules/README.md, "Array facts"): its dtype
    as DLPack writes it (``dtype_code``, ``dtype_bits``, ``dtype_lanes``),
    ``shape``, ``strides`` (in elements, as its capsule carries them; None
    where they are C order's),
    ``writeable`` (numpy's flag; a torch tensor is), ``data_alignment``
    (the largest power of two up to 64 dividing its data pointer) and
    ``dlpack_device_enum`` (its ``__dlpack_device__()`` returns an IntEnum,
    as torch's and JAX's do) and, for a torch tensor, ``neg``
    (``x.is_neg()``: a negated view, whose memory holds the values
    un-negated; no capsule says so). Read from the attributes the library itself
    has (no library is imported); a fact ``x`` does not say is left out.

    Raises:
        TypeError: a dtype with no DLPack code (numpy's object or str).
    """
    out: dict[str, Any] = {}
    np = sys.modules.get("numpy")
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        name = str(x.dtype).removeprefix("torch.")
        out.update(_dtype_fact(name, x.element_size() * 8))
        out["shape"] = list(x.shape)
        if x.layout == torch.strided:
            out["strides"] = None if x.is_contiguous() else list(x.stride())
            out["data_alignment"] = _alignment(x.data_ptr()) if x.device.type != "meta" else 64
        out["writeable"] = True
        out["neg"] = bool(x.is_neg())
    elif np is not None and isinstance(x, np.ndarray):
        out.update(_dtype_fact(x.dtype.name, x.dtype.itemsize * 8))
        out["shape"] = list(x.shape)
        # the strides its capsule carries (numpy's export copies them as
        # they are), None only where they are C order's: numpy's own empty
        # array has stride 0 and a slice of one element keeps its step,
        # which a consumer that reads strides (pyarrow) refuses
        strides = [s // x.dtype.itemsize for s in x.strides]
        out["strides"] = None if strides == _c_strides(list(x.shape)) else strides
        out["writeable"] = bool(x.flags.writeable)
        out["data_alignment"] = _alignment(x.ctypes.data)
    elif is_jax_like(x):
        out.update(_dtype_fact(x.dtype.name, x.dtype.itemsize * 8))
        out["shape"] = list(x.shape)
        try:
            out["data_alignment"] = _alignment(x.unsafe_buffer_pointer())
        except Exception:  # a sharded or deleted array has no one pointer
            pass
    try:
        code = x.__dlpack_device__()[0]
        out["dlpack_device_enum"] = type(code) is not int
    except Exception:  # a device the library cannot name: its library's kind
        if torch is not None and isinstance(x, torch.Tensor) or is_jax_like(x):
            out["dlpack_device_enum"] = True
    return out


#: The attributes through which an array type exposes DLPack 1.3's C
#: exchange API, in the order :func:`c_exchange_api_of` lists them: the
#: standard's name, then TVM FFI 0.1.0-0.1.4's.
C_EXCHANGE_ATTRIBUTES = ("__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__")

#: The name of the capsule that holds a DLPackExchangeAPI.
_EXCHANGE_CAPSULE = b"dlpack_exchange_api"


def c_exchange_api_of(x: Any) -> list[dict[str, Any]]:
    """How ``type(x)`` exposes DLPack 1.3's C exchange API (rules/README.md,
    "The C exchange lane"), as a producer's rule set states it in its value
    ``c_exchange_api``: for each of :data:`C_EXCHANGE_ATTRIBUTES` the type
    has, its ``attribute``, its ``form`` (``capsule``: a PyCapsule named
    ``dlpack_exchange_api``; ``int``: the struct's address; else the name
    of what it is, a capsule of another name as ``capsule <name>``) and
    the ``version`` [major, minor] its DLPackExchangeAPIHeader says, read
    from the struct (left out where there is no struct to read). Empty
    where the type has neither attribute. Nothing is called but the
    attribute's lookup: the API's functions are not run.
    """
    out: list[dict[str, Any]] = []
    for attr in C_EXCHANGE_ATTRIBUTES:
        try:
            api = getattr(type(x), attr)
        except AttributeError:
            continue
        entry: dict[str, Any] = {"attribute": attr}
        address = 0
        if isinstance(api, int) and not isinstance(api, bool):
            entry["form"], address = "int", api
        elif type(api).__name__ == "PyCapsule":
            name = _capsule_name(api)
            if name == _EXCHANGE_CAPSULE:
                entry["form"], address = "capsule", _capsule_pointer(api, name)
            else:
                entry["form"] = "capsule " + (name or b"").decode("utf-8", "replace")
        else:
            entry["form"] = type(api).__name__
        if address:
            version = (ctypes.c_uint32 * 2).from_address(address)  # DLPackExchangeAPIHeader.version
            entry["version"] = [int(version[0]), int(version[1])]
        out.append(entry)
    return out


def _capsule_name(capsule: Any) -> bytes | None:
    get = ctypes.pythonapi.PyCapsule_GetName
    get.restype, get.argtypes = ctypes.c_char_p, [ctypes.py_object]
    name: bytes | None = get(capsule)
    return name


def _capsule_pointer(capsule: Any, name: bytes) -> int:
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    pointer: int | None = get(capsule, name)
    return pointer or 0
