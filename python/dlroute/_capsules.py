"""DLPack capsules made by hand, and read back, with ctypes (for
:mod:`dlroute.check`): a producer on any device type for the consumers
under test (numpy refuses a kDLCUDA capsule before it reads a byte, so host
memory can stand behind any device), and the fields of a capsule a real
library made: its name, device, data pointer, and for a versioned capsule
its DLPack version and flags. numpy is imported only to make a capsule."""

from __future__ import annotations

import ctypes
from typing import Any



class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


_new = ctypes.pythonapi.PyCapsule_New
_new.restype = ctypes.py_object
_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]

# What the hand-made capsules point at, kept alive for the process: their
# deleters are NULL (dlpack.h allows it), so nothing frees them; or, for
# a consumer that calls a deleter without asking whether there is one
# (torch 1.12 and older, when the tensor it made is freed: a segmentation
# fault), a Python function that frees nothing. Not that one for every
# consumer: torch 2.x calls the deleter of a capsule it refuses while its
# own exception is set, and a Python deleter then turns the exception
# into SystemError.
_keep: list[Any] = []
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda _: None)
_DELETER_ADDRESS = ctypes.cast(_DELETER, ctypes.c_void_p).value


def make_capsule(device: tuple[int, int], *, versioned: bool, version: tuple[int, int] = (1, 0),
                 flags: int = 0, data: Any = None, used: bool = False,
                 dtype: tuple[int, int, int] = (2, 64, 1), shape: Any = None, strides: Any = None,
                 deleter: bool = False) -> Any:
    """A "dltensor" or "dltensor_versioned" capsule of a float64 vector in
    host memory (data, or six fresh numbers), labelled with device; used
    names it "used_dltensor" ("used_dltensor_versioned"), as a consumer
    renames a capsule it has read. ``dtype`` (code, bits, lanes), ``shape``
    and ``strides`` (in elements) label it otherwise; the buffer behind it
    is 64 float64s (512 bytes), enough for any shape of up to 512 bytes
    that the strides reach from its middle, where negative strides start.
    ``deleter`` gives it a deleter that frees nothing, for a consumer that
    calls one without asking; else it has none."""
    import numpy as np

    start = 0
    if data is not None:
        arr = data
    elif shape is None:
        arr = np.arange(6.0)
    else:
        arr = np.zeros(64)
        if strides is not None and any(s < 0 for s in strides):
            start = 256
    dims = [arr.shape[0]] if shape is None else list(shape)
    c_shape = (ctypes.c_int64 * max(len(dims), 1))(*dims)
    if strides is None and shape is None:
        strides = [1]
    c_strides = None if strides is None else (ctypes.c_int64 * max(len(strides), 1))(*strides)
    t = DLTensor(arr.ctypes.data + start, DLDevice(*device), len(dims), DLDataType(*dtype), c_shape,
                 c_strides, 0)
    shape, strides = c_shape, c_strides
    if versioned:
        m: Any = DLManagedTensorVersioned(DLPackVersion(*version), None, _DELETER_ADDRESS if deleter else None, flags, t)
        name = b"dltensor_versioned"
    else:
        m = DLManagedTensor(t, None, _DELETER_ADDRESS if deleter else None)
        name = b"dltensor"
    if used:
        name = b"used_" + name
    # The capsule keeps a pointer to its name, not the name: the bytes
    # object must outlive it, as the array and the structures must.
    _keep.extend([arr, shape, strides, m, name])
    return _new(ctypes.addressof(m), name, None)


class CapsuleProducer:
    """An object whose __dlpack__ hands out one capsule, whatever it is asked."""

    def __init__(self, capsule: Any, device: tuple[int, int] = (1, 0)) -> None:
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device


def read_capsule(capsule: Any) -> dict[str, Any]:
    """The name, device, data pointer and, for a versioned capsule, the
    DLPack version (major, minor) and flags of an unused capsule; None for
    those of an unversioned one."""
    name = _get_name(capsule).decode()
    p = _get_pointer(capsule, name.encode())
    if name == "dltensor_versioned":
        m = DLManagedTensorVersioned.from_address(p)
        flags: int | None = m.flags
        version: tuple[int, int] | None = (m.version.major, m.version.minor)
    else:
        m = DLManagedTensor.from_address(p)
        flags = version = None
    t = m.dl_tensor
    return {"capsule": name, "device": (t.device.device_type, t.device.device_id), "data": t.data or 0,
            "version": version, "flags": flags}
