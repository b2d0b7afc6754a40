"""The runner's jax side (:mod:`dlroute.check`): two rule sets.

- ``jax`` (``__dlpack_device__``): the installed release's own
  ``ArrayImpl.__dlpack_device__`` (jax/_src/array.py, called unchanged)
  runs on stand-ins that answer exactly the attributes it reads, so every
  case is reachable on any machine, and so is a generated space of
  platforms, tricky ``platform_version`` strings, memory kinds, hardware
  ids and shard counts.
- ``jax-export`` (``x.__dlpack__``): the real export of a real array here.
  The rules get the facts the code reads from this very process (the
  client's platform, the backends and those that failed to start, the
  device's repr and str); a case that states other facts (a cuda client,
  two devices) is unreachable here. Beside the cases, every combination of
  ``stream``, ``max_version``, ``dl_device`` and ``copy`` below.
- ``jax-import`` (``jax.dlpack.from_dlpack``): in ``_jax_import``.
"""

from __future__ import annotations

import inspect
import itertools
from types import SimpleNamespace
from typing import Any, Iterable

from ._jax_import import ImportChecks, capsule_facts
from ._base import (Checker, Outcome, Unreachable, decided_device, decided_export, observed_export, raised,
                    seen_as_decided)

PLATFORMS = ["cpu", "gpu", "tpu", "METAL", "neuron", ""]
PLATFORM_VERSIONS = [
    "cpu", "cuda 12030", "rocm 60200", "oneapi 2026.0", "<unknown>", "", "CUDA 12", "ROCm",
    "nvfork 1.0", "HIP build, rocm 60200", "cuda-rocm", "xcudax", "rocmcuda", "PJRT C API\ncuda",
    "TFRT TPU v5 lite", "sycl oneapi",
]
MEMORY_KINDS = [None, "device", "pinned_host", "unpinned_host", "PINNED_HOST"]
HARDWARE_IDS = [None, 0, 3]
SHARDS = [0, 1, 2]

STREAMS = [None, 0, 1, -1]
MAX_VERSIONS = [None, (1, 0), (0, 5), (0, 4), (2, 0), (1,), (1, 3), (0, 9), (1, 0, 0), ()]
DL_DEVICES = [None, (), (0, 0), (1, 0), (1, 1), (2, 0), (3, 0), (10, 0), (20, 0), (99, 0)]
COPIES = [None, True, False]


def standin(inp: dict[str, Any]) -> Any:
    """An object with what ArrayImpl.__dlpack_device__ reads: _arrays,
    platform(), sharding.memory_kind and sharding._internal_device_list
    (jax/_src/array.py's _get_device), whose device has client.platform_version
    and local_hardware_id; and device() and devices(), that device, which
    jax 0.4.20 and 0.4.21-0.4.29 read instead."""
    device = SimpleNamespace(client=SimpleNamespace(platform_version=inp.get("platform_version", "")),
                             local_hardware_id=inp.get("local_hardware_id"))
    sharding = SimpleNamespace(memory_kind=inp.get("memory_kind"), _internal_device_list=[device])
    platform = inp.get("platform", "")
    return SimpleNamespace(_arrays=[object()] * inp.get("shards", 1), platform=lambda: platform, sharding=sharding,
                           device=lambda: device, devices=lambda: [device])


class JaxChecker(ImportChecks, Checker):
    library = "jax"
    rulesets = ("jax", "jax-export", "jax-import")

    def __init__(self) -> None:
        import jax
        import jax.numpy as jnp
        from jax._src import array as jax_array
        from jax._src import xla_bridge

        self.jax, self.jnp, self.impl, self.xla_bridge = jax, jnp, jax_array.ArrayImpl, xla_bridge
        self.x = jnp.arange(4.0)
        self.keywords = tuple(inspect.signature(self.impl.__dlpack__).parameters)[1:]

    # --- __dlpack_device__ on stand-ins ---

    def device(self, inp: dict[str, Any]) -> Outcome:
        try:
            code, device_id = self.impl.__dlpack_device__(standin(inp))
        except Exception as e:  # the outcome compared is the exception itself
            return raised(e)
        return {"device": [int(code), device_id]}

    # --- the export, on this process's array ---

    def facts(self) -> dict[str, Any]:
        """What the export reads of x and of this process, as jax-export's
        inputs name them."""
        (dev,) = self.x.devices()
        return {
            "client_platform": dev.client.platform,
            "memory_kind": self.x.sharding.memory_kind,
            "local_hardware_id": dev.local_hardware_id,
            "devices": 1,
            "backends": list(self.xla_bridge.backends()),
            "backend_errors": dict(self.xla_bridge._backend_errors),
            "device_repr": repr(dev),
            "device_str": str(dev),
        }

    def export(self, kwargs: dict[str, Any], named: Iterable[str] = (), x: Any = None) -> Outcome:
        """x.__dlpack__ (default: this process's float32 array) with the
        keywords ``named``, in that order and each even as None, then the
        others this release takes or whose value is not None; where the
        capsule's dtype is not x's (jax 0.4.23's bool as uint8),
        ``"values"`` says so."""
        x = self.x if x is None else x
        passed = {k: kwargs.get(k) for k in named}
        passed.update((k, v) for k, v in kwargs.items() if k not in passed and (k in self.keywords or v is not None))
        try:
            capsule = x.__dlpack__(**passed)
        except Exception as e:
            return raised(e)
        dtype = capsule_dtype(capsule)
        out = observed_export(capsule, x.unsafe_buffer_pointer())
        if x.dtype == bool and dtype != (6, 8):
            out["values"] = f"the capsule says DLPack type {dtype} where jax holds bool"
        return out

    def run(self, name: str, inp: dict[str, Any], rs: Any) -> tuple[Outcome, Outcome]:
        if name == "jax-import":
            return self.run_import(inp, rs)
        if name == "jax":
            return decided_device(rs.explain(inp)), self.device(inp)
        real = self.facts()
        for k, v in inp.items():
            if k in real and v != real[k]:
                raise Unreachable(_why(k, v, real[k]))
        if "local_device_ids" in inp:
            raise Unreachable("states the ids each backend finds (local_device_ids): not this process's")
        dtype = (inp.get("dtype_code", 2), inp.get("dtype_bits", 32))
        if dtype not in ((2, 32), (6, 8)):
            raise Unreachable(f"states an array of DLPack dtype {dtype}: the runner exports float32 and bool")
        x = self.jnp.array([True, False]) if dtype == (6, 8) else None
        full = dict(real, **inp)
        kwargs = {k: tuple(full[k]) if isinstance(full.get(k), list) else full.get(k)
                  for k in ("stream", "max_version", "dl_device", "copy")}
        want = decided_export(rs.explain(full))
        return want, seen_as_decided(want, self.export(kwargs, inp.get("keywords", ()), x))

    def sweeps(self, name: str, rs: Any) -> Iterable[tuple[str, Outcome, Outcome]]:
        if name == "jax-import":
            yield from self.import_sweeps(rs)
            return
        if name == "jax":
            for p, pv, mk, hw, shards in itertools.product(PLATFORMS, PLATFORM_VERSIONS, MEMORY_KINDS,
                                                           HARDWARE_IDS, SHARDS):
                inp = {"platform": p, "platform_version": pv, "memory_kind": mk, "local_hardware_id": hw,
                       "shards": shards}
                yield f"generated: {inp}", decided_device(rs.explain(inp)), self.device(inp)
            return
        real = self.facts()
        for stream, mv, dl, copy in itertools.product(STREAMS, MAX_VERSIONS, DL_DEVICES, COPIES):
            kwargs = {"stream": stream, "max_version": mv, "dl_device": dl, "copy": copy}
            if any(v is not None and k not in self.keywords for k, v in kwargs.items()):
                continue  # a keyword this release does not take
            inp = dict(real, stream=stream, copy=copy, max_version=None if mv is None else list(mv),
                       dl_device=None if dl is None else list(dl))
            yield f"x.__dlpack__({_call(kwargs)})", decided_export(rs.explain(inp)), self.export(kwargs)
        if "keywords" in {i["name"] for i in rs.inputs}:
            # a keyword this release does not take, passed as None (or with
            # stream=None before it): Python's TypeError all the same
            for k in ("max_version", "dl_device", "copy"):
                for named in ([k], ["stream", k], [k, "stream"]):
                    inp = dict(real, keywords=named)
                    yield (f"x.__dlpack__({', '.join(f'{n}=None' for n in named)})",
                           decided_export(rs.explain(inp)), self.export({}, named))

    # --- exchanges ---

    ARRAYS = ("jnp.arange(6.0)", "jnp.array([True, False])", "jnp.arange(4.0).astype(jnp.complex64)",
              "jnp.arange(4.0).astype(jnp.bfloat16)", "jnp.arange(4, dtype=jnp.uint16)", "jnp.array(3.0)",
              "jnp.zeros((0,))", "jnp.arange(6.0).reshape(2, 3).T")

    def namespace(self) -> dict[str, Any]:
        return {"jnp": self.jnp}

    def consume(self, x: Any, kwargs: dict[str, Any]) -> Any:
        # in from_dlpack's order, device before copy: a release that takes
        # neither (jax 0.4.26 and older) names the first in its TypeError
        ordered = {k: kwargs[k] for k in ("device", "copy") if k in kwargs}
        return self.jax.dlpack.from_dlpack(x, **ordered, **{k: v for k, v in kwargs.items() if k not in ordered})

    def devices(self) -> list[Any]:
        return [None, self.jax.devices()[0], "cpu"]

    def consumer_inputs(self) -> dict[str, Any]:
        # the backends this jax has (a kDLCUDAHost array needs jax's cuda backend) and x64
        return self._here()


def capsule_dtype(capsule: Any) -> tuple[int, int]:
    """The (code, bits) of an unused capsule's DLPack dtype."""
    f = capsule_facts(capsule)
    return int(f["dtype_code"]), int(f["dtype_bits"])


def _why(key: str, case: Any, here: Any) -> str:
    if key == "client_platform":
        return f"needs a jax {case} client (this jax's is {here})"
    if key == "devices":
        return f"needs an array over {case} devices"
    if isinstance(case, (dict, list)):
        return f"states other {key} than this process's"
    return f"states {key} {case!r}; this process's is {here!r}"


def _call(kwargs: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items() if v is not None)
