"""Arrays that look like JAX GPU arrays, for trying dlroute without a GPU.

``torch.from_dlpack(x)`` of a JAX GPU array whose client's
``platform_version`` names no platform JAX knows raises ``BufferError:
Unknown GPU platform for __dlpack__: <unknown>``; the CPU build of JAX
cannot make such an array. :class:`GpuArray` can:

>>> import numpy as np, dlroute
>>> from dlroute.testing import GpuArray
>>> x = GpuArray(np.arange(6.0), platform_version="<unknown>")
>>> x.__dlpack_device__()                # what torch.from_dlpack(x) asks first
Traceback (most recent call last):
    ...
BufferError: Unknown GPU platform for __dlpack__: <unknown>
>>> dlroute.from_dlpack(x, "numpy")      # a host copy, as the rules decide
array([0., 1., 2., 3., 4., 5.])

It presents a real array's data (a numpy array) behind the attributes a
``jax.Array`` on a GPU has and that ``jax/_src/array.py`` reads:
``platform()``, ``sharding.memory_kind``, ``devices()``,
``addressable_shards`` (each with ``.device``), and on the device
``platform``, ``client.platform_version``, ``client.platform`` and
``local_hardware_id``. dlroute's tests check these names and shapes
against a real ``jax.Array`` (``test_arrays.test_standin_matches_jax``), so
it cannot drift from JAX's attributes unnoticed.

Its ``__dlpack_device__`` is JAX's code (``Array.__dlpack_device__`` at
jax-ml/jax@1e1c6a8fc0), so it raises what JAX raises, with JAX's messages.
Its ``__dlpack__`` is JAX's too: it never asks ``__dlpack_device__``, so
JAX's error for a platform it does not know reaches a user only through a
consumer that asks that first (``torch.from_dlpack(x)``); the capsule's
device is the client's (``client_platform``: kDLCUDA, or kDLCUDAHost for
pinned host memory), whatever ``platform_version`` says, so
``np.from_dlpack(x)`` raises numpy's ``Unsupported device in DLTensor.``,
as it does for a real JAX GPU array. The stand-in holds host memory: its
capsule is numpy's own, labelled with the GPU device, which numpy refuses
before it reads a byte; a consumer that passes a ``stream`` (torch or CuPy
on a GPU, which would read it as device memory) gets a BufferError
instead. ``dl_device=(kDLCPU, 0)`` exports a host copy, as JAX's
``device_put`` to the CPU does. ``numpy.asarray`` reads its data, as
``numpy.asarray`` of a real GPU array copies it to the host. It needs
numpy.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._capsules import DLDevice, DLManagedTensor, _get_pointer as _capsule_pointer

__all__ = ["GpuArray", "Client", "Device", "Sharding", "Shard", "DLDeviceType"]


class DLDeviceType(enum.IntEnum):
    """JAX's ``jax._src.dlpack.DLDeviceType`` (the codes it uses)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLROCM = 10
    kDLROCMHost = 11
    kDLOneAPI = 14
    kDLTPUHost = 20


@dataclass(frozen=True)
class Client:
    """A PJRT client: ``platform`` (``cuda``, ``rocm``, ...; JAX reports the
    device's ``platform`` as ``gpu``) and the free-form ``platform_version``."""

    platform_version: str
    platform: str = "cuda"


@dataclass(frozen=True)
class Device:
    """A ``jax.Device``: ``platform`` ``gpu``, its ``client`` and
    ``local_hardware_id`` (None where PJRT does not know it)."""

    client: Client
    id: int = 0
    local_hardware_id: int | None = 0
    platform: str = "gpu"
    device_kind: str = "stand-in GPU"

    def __repr__(self) -> str:
        return f"StandinGpuDevice(id={self.id})"


@dataclass(frozen=True)
class Sharding:
    """A ``jax.sharding.Sharding``: its devices and ``memory_kind``."""

    device_set: frozenset[Device]
    memory_kind: str | None = "device"


@dataclass(frozen=True)
class Shard:
    """A ``jax.Shard``: the shard's ``device`` and ``data``."""

    device: Device
    data: Any
    index: tuple[slice, ...] = ()


@dataclass
class GpuArray:
    """A JAX array on a GPU, standing in: ``data`` (a numpy array) on the
    devices of ``devices`` (one shard on each), with ``memory_kind``.

    ``GpuArray(np.arange(4.0), "<unknown>")`` is an array on a GPU
    platform JAX does not know; ``GpuArray(data)`` one on CUDA, and
    ``platform_version="rocm 60342"``, ``memory_kind="pinned_host"``,
    ``local_hardware_id=None``, ``shards=2`` the other cases JAX decides.
    """

    data: np.ndarray
    platform_version: str = "cuda 12030"
    memory_kind: str | None = "device"
    local_hardware_id: int | None = 0
    shards: int = 1
    client_platform: str = "cuda"
    _devices: list[Device] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        client = Client(self.platform_version, self.client_platform)
        self._devices = [Device(client, id=i, local_hardware_id=self.local_hardware_id if i == 0 else i)
                         for i in range(self.shards)]

    # The attributes JAX's __dlpack_device__ reads.
    def platform(self) -> str:
        return "gpu"

    @property
    def sharding(self) -> Sharding:
        return Sharding(frozenset(self._devices), self.memory_kind)

    def devices(self) -> set[Device]:
        return set(self._devices)

    @property
    def addressable_shards(self) -> list[Shard]:
        parts = np.array_split(self.data, len(self._devices)) if self._devices else []
        return [Shard(d, p) for d, p in zip(self._devices, parts)]

    @property
    def _arrays(self) -> list[Any]:
        return [s.data for s in self.addressable_shards]

    # Array-like.
    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = np.asarray(self.data, dtype=dtype)
        return out.copy() if copy else out

    # JAX's __dlpack_device__, as jax/_src/array.py has it.
    def __dlpack_device__(self) -> tuple[DLDeviceType, int]:
        if len(self._arrays) != 1:
            raise BufferError("__dlpack__ only supported for unsharded arrays.")

        if self.platform() == "cpu":
            return DLDeviceType.kDLCPU, 0

        elif self.platform() == "gpu":
            platform_version = _get_device(self).client.platform_version
            if "cuda" in platform_version:
                if self.sharding.memory_kind == "pinned_host":
                    dl_device_type = DLDeviceType.kDLCUDAHost
                else:
                    dl_device_type = DLDeviceType.kDLCUDA
            elif "rocm" in platform_version:
                if self.sharding.memory_kind == "pinned_host":
                    dl_device_type = DLDeviceType.kDLROCMHost
                else:
                    dl_device_type = DLDeviceType.kDLROCM
            elif "oneapi" in platform_version:
                dl_device_type = DLDeviceType.kDLOneAPI
            else:
                raise BufferError("Unknown GPU platform for __dlpack__: "
                                  f"{platform_version}")

            local_hardware_id = _get_device(self).local_hardware_id
            if local_hardware_id is None:
                raise BufferError("Couldn't get local_hardware_id for __dlpack__")

            return dl_device_type, local_hardware_id

        elif self.platform() == "tpu":
            if self.sharding.memory_kind == "pinned_host":
                dl_device_type = DLDeviceType.kDLTPUHost
            else:
                raise BufferError(
                    "__dlpack__ device only supported for TPU pinned host memory"
                )

            local_hardware_id = _get_device(self).local_hardware_id
            if local_hardware_id is None:
                raise BufferError("Couldn't get local_hardware_id for __dlpack__")

            return dl_device_type, local_hardware_id

        else:
            raise BufferError(
                "__dlpack__ device only supported for CPU, GPU and TPU pinned host, "
                f"got platform: {self.platform()}"
            )

    # JAX's __dlpack__ and to_dlpack, as jax/_src/array.py and dlpack.py
    # have them: the array's own device (not __dlpack_device__, whose
    # errors a consumer meets only where it asks that first, as torch does).
    def __dlpack__(self, *, stream: int | Any | None = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[DLDeviceType, int] | None = None, copy: bool | None = None) -> Any:
        device_set = self.sharding.device_set
        if len(device_set) > 1:
            raise BufferError(
                "to_dlpack can only pack a dlpack tensor from an array on a singular "
                f"device, but an array with a Sharding over {len(device_set)} devices "
                "was provided."
            )
        src_device, = device_set
        dl_device_type, local_hardware_id = dl_device if dl_device else (None, None)
        target = None
        if dl_device_type:
            platform = _DL_DEVICE_TO_PLATFORM.get(dl_device_type)
            if platform is None:
                raise BufferError(
                    "The device specification passed to to_dlpack contains an"
                    f" unsupported device type (DLDeviceType: {dl_device_type})"
                )
            target = (platform, local_hardware_id)
        if max_version is not None and tuple(max_version) < (0, 5):
            raise BufferError(
                "JAX does not support any version below (0, 5) but "
                f"version ({max_version}) was requested."
            )
        here = (self.client_platform, src_device.local_hardware_id)
        if target is not None and target != here:
            if target[0] != "cpu":
                raise BufferError(f"the stand-in has one device, {src_device!r}, and cannot move to {target}")
            if copy is not None and not copy:
                raise ValueError(
                    f"Specified device=CpuDevice(id={target[1]}) which requires a copy since the source device "
                    f"is {src_device!r}, however copy=False. Set copy=True or "
                    "copy=None to perform the requested operation."
                )
            return np.array(self.data).__dlpack__()  # device_put to the host: a copy there
        if stream is not None:
            # A consumer that synchronizes a stream reads device memory (torch
            # and CuPy on a GPU): a GPU capsule over host memory would be read
            # as device memory, so the stand-in stops here.
            raise BufferError(f"the stand-in holds host memory only, and a consumer that passes a stream "
                              f"(stream={stream!r}) reads device memory: it exports to consumers that read "
                              "the capsule's device first, as numpy does")
        code = _EXPORTED.get((self.client_platform, self.memory_kind == "pinned_host"))
        if code is None:
            raise BufferError(f"the stand-in cannot say which DLPack device a {self.client_platform} client exports")
        return _labelled(np.array(self.data) if copy else np.asarray(self.data), code, src_device.local_hardware_id)


#: jax/_src/dlpack.py's _DL_DEVICE_TO_PLATFORM.
_DL_DEVICE_TO_PLATFORM = {
    DLDeviceType.kDLCPU: "cpu",
    DLDeviceType.kDLCUDA: "cuda",
    DLDeviceType.kDLCUDAHost: "cuda",
    DLDeviceType.kDLROCM: "rocm",
}

#: The device of the capsule a GPU client's buffer is exported on, by the
#: client's platform and whether the memory is pinned host memory: the
#: client's, whatever its platform_version says (the jax-export rules).
_EXPORTED = {
    ("cuda", False): DLDeviceType.kDLCUDA,
    ("cuda", True): DLDeviceType.kDLCUDAHost,
    ("rocm", False): DLDeviceType.kDLROCM,
    ("rocm", True): DLDeviceType.kDLROCMHost,
}


def _labelled(data: np.ndarray, device_type: int, device_id: int | None) -> Any:
    """numpy's own capsule of data, its device labelled (device_type,
    device_id): the buffer is host memory, so only a consumer that refuses
    the device before it reads a byte (numpy: ``Unsupported device in
    DLTensor.``) may be handed it; numpy's deleter frees it as ever."""
    capsule = np.ascontiguousarray(data).__dlpack__()
    tensor = DLManagedTensor.from_address(_capsule_pointer(capsule, b"dltensor")).dl_tensor
    tensor.device = DLDevice(int(device_type), 0 if device_id is None else device_id)
    return capsule


def _get_device(a: GpuArray) -> Device:
    return a.addressable_shards[0].device
