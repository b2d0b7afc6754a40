"""dlroute.arrays: the decision's inputs read from real arrays (JAX on CPU,
numpy, torch) and from the GPU stand-in, checked against JAX's own
``__dlpack_device__``; and the stand-in checked against a real jax.Array."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # torch built against numpy 1.x warns under numpy 2
    torch = pytest.importorskip("torch")

import dlroute  # noqa: E402
from dlroute import arrays, routing  # noqa: E402
from dlroute._capsules import read_capsule  # noqa: E402
from standin import GpuArray  # noqa: E402

PYTHON_DIR = Path(__file__).resolve().parents[1]

# torch 1.13 was built against numpy 1.x; under numpy 2 it warns once and
# its own numpy bridge (tensor.numpy()) is off. DLPack works regardless.
pytestmark = pytest.mark.filterwarnings("ignore:Failed to initialize NumPy:UserWarning")


def _raised(fn, *args) -> tuple[str, str] | Any:
    """What fn(*args) gives: its value, or (exception type name, message)."""
    try:
        out = fn(*args)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e)
    return (int(out[0]), int(out[1]))


# The memory kinds the CPU client of this JAX has (checked by
# test_cpu_memory_kinds, so a JAX that adds or drops one is noticed).
CPU_MEMORY_KINDS = ["device", "pinned_host", "unpinned_host"]


def test_cpu_memory_kinds():
    dev = jax.devices("cpu")[0]
    assert sorted(m.kind for m in dev.addressable_memories()) == sorted(CPU_MEMORY_KINDS)


@pytest.mark.parametrize("memory_kind", CPU_MEMORY_KINDS)
@pytest.mark.parametrize("make", [
    lambda: jnp.arange(6.0),
    lambda: jnp.ones((2, 3), dtype=jnp.int32),
    lambda: jnp.asarray(True),
], ids=["f32-vector", "i32-matrix", "bool-scalar"])
def test_jax_cpu_inputs(make, memory_kind):
    dev = jax.devices("cpu")[0]
    x = jax.device_put(make(), jax.sharding.SingleDeviceSharding(dev, memory_kind=memory_kind))
    assert arrays.is_jax_like(x)
    assert arrays.inputs_of(x) == {
        "platform": "cpu",
        "platform_version": dev.client.platform_version,
        "memory_kind": memory_kind,
        "local_hardware_id": dev.local_hardware_id,
        "shards": 1,
    }
    assert routing.dlpack_device(x) == x.__dlpack_device__() == (1, 0)


def test_jax_sharded_inputs_in_a_child():
    """A sharded array needs two CPU devices, which are set before JAX
    starts: in a child, so this process's JAX keeps its one device."""
    code = textwrap.dedent("""
        import json, jax, jax.numpy as jnp, numpy as np
        from jax.sharding import Mesh, NamedSharding, PartitionSpec
        from dlroute import arrays, routing
        mesh = Mesh(np.array(jax.devices()), ("x",))
        x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, PartitionSpec("x")))
        out = {"inputs": arrays.inputs_of(x)}
        for who, fn in (("jax", x.__dlpack_device__), ("rules", lambda: routing.dlpack_device(x))):
            try:
                fn()
            except BufferError as e:
                out[who] = str(e)
        print(json.dumps(out))
    """)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2",
               PYTHONPATH=os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    import json

    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["inputs"]["shards"] == 2
    assert out["inputs"]["platform"] == "cpu"
    assert out["rules"] == out["jax"] == "__dlpack__ only supported for unsharded arrays."


@pytest.mark.parametrize("make", [
    lambda: np.arange(5.0),
    lambda: np.zeros((2, 2), dtype=np.uint8),
    lambda: np.arange(4)[::2],
], ids=["vector", "matrix", "strided"])
def test_numpy_inputs(make):
    x = make()
    assert arrays.inputs_of(x) == {"platform": "cpu", "platform_version": "cpu", "local_hardware_id": 0,
                                   "shards": 1}
    assert routing.dlpack_device(x) == x.__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("make", [
    lambda: torch.arange(5.0),
    lambda: torch.zeros(2, 3, dtype=torch.int64),
    lambda: torch.ones(3, requires_grad=True),
], ids=["vector", "matrix", "requires-grad"])
def test_torch_cpu_inputs(make):
    t = make()
    assert arrays.inputs_of(t) == {"platform": "cpu", "platform_version": "cpu", "local_hardware_id": 0,
                                   "shards": 1}
    code, device_id = t.__dlpack_device__()
    assert routing.dlpack_device(t) == (int(code), device_id) == (1, 0)


class Producer:
    """Any DLPack producer: only __dlpack_device__."""

    def __init__(self, code: int, device_id: int) -> None:
        self.device = (code, device_id)

    def __dlpack_device__(self):
        return self.device


@pytest.mark.parametrize("device,inputs,decided", [
    ((1, 0), {"platform": "cpu", "platform_version": "cpu", "local_hardware_id": 0, "shards": 1}, (1, 0)),
    ((2, 1), {"platform": "gpu", "platform_version": "cuda", "memory_kind": "device", "local_hardware_id": 1,
              "shards": 1}, (2, 1)),
    ((3, 0), {"platform": "gpu", "platform_version": "cuda", "memory_kind": "pinned_host",
              "local_hardware_id": 0, "shards": 1}, (3, 0)),
    ((10, 2), {"platform": "gpu", "platform_version": "rocm", "memory_kind": "device", "local_hardware_id": 2,
               "shards": 1}, (10, 2)),
    ((11, 0), {"platform": "gpu", "platform_version": "rocm", "memory_kind": "pinned_host",
               "local_hardware_id": 0, "shards": 1}, (11, 0)),
    ((14, 0), {"platform": "gpu", "platform_version": "oneapi", "memory_kind": "device", "local_hardware_id": 0,
               "shards": 1}, (14, 0)),
    ((20, 0), {"platform": "tpu", "platform_version": "tpu", "memory_kind": "pinned_host",
               "local_hardware_id": 0, "shards": 1}, (20, 0)),
    # JAX has no row for Metal: the rules raise as JAX does for such a platform.
    ((8, 0), {"platform": "metal", "platform_version": "metal", "local_hardware_id": 0, "shards": 1},
     ("BufferError", "__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: metal")),
], ids=["cpu", "cuda", "cuda-host", "rocm", "rocm-host", "oneapi", "tpu-host", "metal"])
def test_dlpack_producer_inputs(device, inputs, decided):
    p = Producer(*device)
    assert arrays.inputs_of(p) == inputs
    assert _raised(routing.dlpack_device, p) == decided


def test_inputs_of_refuses_what_is_not_an_array():
    with pytest.raises(TypeError, match="not a JAX array and has no __dlpack_device__"):
        arrays.inputs_of([1, 2, 3])


# The stand-in, against a real jax.Array.

def _shape_of(v: Any) -> str:
    """What kind of thing v is, as far as dlroute reads it."""
    if v is None or isinstance(v, str):
        return "str-or-none"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, (set, frozenset)):
        return "set"
    if isinstance(v, (list, tuple)):
        return "sequence"
    if callable(v):
        return "callable"
    return "object"


def _walk(x: Any, path: str) -> Any:
    v = x
    for part in path.split("."):
        if part.endswith("()"):
            v = getattr(v, part[:-2])()
        elif part.endswith("[0]"):
            v = getattr(v, part[:-3])[0]
        else:
            v = getattr(v, part)
    return v


# Every attribute jax/_src/array.py's __dlpack_device__, dlroute.arrays and
# the stand-in's users read, and the kind of value each is.
JAX_ATTRIBUTES = [
    ("platform", "callable"),
    ("platform()", "str-or-none"),
    ("sharding", "object"),
    ("sharding.memory_kind", "str-or-none"),
    ("sharding.device_set", "set"),
    ("devices", "callable"),
    ("devices()", "set"),
    ("addressable_shards", "sequence"),
    ("addressable_shards[0].device", "object"),
    ("addressable_shards[0].data", "object"),
    ("addressable_shards[0].index", "sequence"),
    ("addressable_shards[0].device.platform", "str-or-none"),
    ("addressable_shards[0].device.id", "int"),
    ("addressable_shards[0].device.local_hardware_id", "int"),
    ("addressable_shards[0].device.device_kind", "str-or-none"),
    ("addressable_shards[0].device.client", "object"),
    ("addressable_shards[0].device.client.platform", "str-or-none"),
    ("addressable_shards[0].device.client.platform_version", "str-or-none"),
    ("shape", "sequence"),
    ("__dlpack_device__", "callable"),
    ("__dlpack__", "callable"),
]


@pytest.mark.parametrize("path,kind", JAX_ATTRIBUTES, ids=[p for p, _ in JAX_ATTRIBUTES])
def test_standin_matches_jax(path, kind):
    real = jnp.arange(4.0)
    fake = GpuArray(np.arange(4.0), "<unknown>")
    assert _shape_of(_walk(real, path)) == kind, f"jax.Array.{path} is no longer {kind}"
    assert _shape_of(_walk(fake, path)) == kind, f"the stand-in's {path} is not {kind} as JAX's"


def test_standin_devices_are_the_shards_devices():
    for x in (jnp.arange(4.0), GpuArray(np.arange(4.0))):
        assert x.devices() == {s.device for s in x.addressable_shards} == set(x.sharding.device_set)


def test_standin_dlpack_signature_is_jax():
    real = inspect.signature(type(jnp.arange(1.0)).__dlpack__).parameters
    fake = inspect.signature(GpuArray.__dlpack__).parameters
    assert [(p.name, p.kind, p.default) for p in real.values()] == [
        (p.name, p.kind, p.default) for p in fake.values()]


def test_standin_inputs_have_jax_shape():
    real = arrays.inputs_of(jnp.arange(4.0))
    fake = arrays.inputs_of(GpuArray(np.arange(4.0), "<unknown>"))
    assert real.keys() == fake.keys()
    assert {k: type(v) for k, v in real.items()} == {k: type(v) for k, v in fake.items()}


# JAX's table (the stand-in runs JAX's code) and the rules agree.
STANDIN_CASES = [
    dict(platform_version="cuda 12030"),
    dict(platform_version="cuda 12030", memory_kind="pinned_host"),
    dict(platform_version="PJRT C API\ncuda 12030", local_hardware_id=3),
    dict(platform_version="rocm 60200"),
    dict(platform_version='rocm "60200"', memory_kind="pinned_host"),
    dict(platform_version="oneapi 2026.0", memory_kind="pinned_host"),
    dict(platform_version="cuda rocm"),
    dict(platform_version="<unknown>"),
    dict(platform_version="CUDA 12030"),
    dict(platform_version="nvfork 1.0"),
    dict(platform_version="cuda 12030", local_hardware_id=None),
    dict(platform_version="<unknown>", local_hardware_id=None),
    dict(platform_version="cuda 12030", shards=2),
    dict(platform_version="cuda 12030", memory_kind=None),
]


@pytest.mark.parametrize("kw", STANDIN_CASES, ids=[repr(k)[1:-1] for k in STANDIN_CASES])
def test_standin_device_agrees_with_rules(kw):
    g = GpuArray(np.arange(4.0), **kw)
    assert _raised(routing.dlpack_device, g) == _raised(g.__dlpack_device__)


def test_seed_standin_raises_jax_error():
    g = GpuArray(np.arange(4.0), "<unknown>")
    with pytest.raises(BufferError) as e:
        g.__dlpack_device__()
    assert str(e.value) == "Unknown GPU platform for __dlpack__: <unknown>"


@pytest.mark.parametrize("kw", [dict(platform_version="<unknown>"), dict(platform_version="cuda 12030"),
                                dict(platform_version="rocm 60200", client_platform="rocm"),
                                dict(memory_kind="pinned_host"), dict(shards=2)], ids=repr)
def test_standin_exports_as_jax_does(kw):
    """The stand-in's __dlpack__ is JAX's: it never asks __dlpack_device__,
    and its capsule's device is the client's, what the jax-export rules
    decide (numpy then refuses a GPU device: Unsupported device in
    DLTensor.)."""
    g = GpuArray(np.arange(4.0), **kw)
    rules = dlroute.load().ruleset("jax-export")
    asked = {"client_platform": g.client_platform, "memory_kind": g.memory_kind, "local_hardware_id": 0,
             "devices": g.shards}
    want = rules.resolve(asked)
    try:
        got = read_capsule(g.__dlpack__())["device"]
    except BufferError as e:
        assert want.get("error") == {"type": "BufferError", "message": str(e)}
        return
    assert "error" not in want, want
    assert got == (want["device_type_code"], want["device_id"])


def test_standin_exports_to_a_stream_reader_nothing():
    with pytest.raises(BufferError, match="a consumer that passes a stream"):
        GpuArray(np.arange(4.0)).__dlpack__(stream=1)


# Host data.

@pytest.mark.parametrize("make", [
    lambda: jnp.arange(6.0).reshape(2, 3),
    lambda: np.arange(6.0).reshape(2, 3),
    lambda: torch.arange(6.0).reshape(2, 3),
    lambda: torch.arange(6.0, requires_grad=True).reshape(2, 3),
    lambda: GpuArray(np.arange(6.0).reshape(2, 3), "<unknown>"),
], ids=["jax", "numpy", "torch", "torch-grad", "standin"])
def test_host_array(make):
    h = arrays.host_array(make())
    assert isinstance(h, np.ndarray)
    np.testing.assert_array_equal(h, np.arange(6.0).reshape(2, 3))
