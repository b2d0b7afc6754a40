"""dlroute.routing: real exchanges between JAX (CPU), numpy 2 and torch
through the exchange rules; the seed's unknown GPU platform copied through
host memory; the rules' exceptions with their exact type and message."""

from __future__ import annotations

import inspect

import warnings
from typing import Any, Callable

import pytest

np = pytest.importorskip("numpy")
jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    torch = pytest.importorskip("torch")

import dlroute  # noqa: E402
import dlroute.check  # noqa: E402
from dlroute import routing  # noqa: E402
from dlroute._capsules import read_capsule  # noqa: E402
from dlroute.routing import DecidedError, Routed, from_dlpack  # noqa: E402
from standin import GpuArray  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Failed to initialize NumPy:UserWarning")

IS_COPIED = 1 << 1
READ_ONLY = 1 << 0

# What the installed releases do differently (the two stacks of the Python
# tests): jax 0.12 exports a versioned capsule, READ_ONLY, for DLPack 1.x
# (jax-export@v2); torch 2 takes max_version, device= and copy= itself; a
# CUDA build of torch without a CUDA device fails on a CUDA producer, as
# it asks that device's current stream.
JAX_VERSIONED = dlroute.check.release_tuple(jax.__version__) >= (0, 12)
TORCH_1 = torch.__version__.startswith("1.")
TORCH_NO_DEVICE = bool(torch.version.cuda) and not torch.cuda.is_available()
TORCH_TAKES = set(inspect.signature(torch.from_dlpack).parameters)  # 1.13: ext_tensor alone

def capsule_info(capsule: Any) -> tuple[str, int | None]:
    """The capsule's name and, for a versioned one, its flags."""
    info = read_capsule(capsule)
    return info["capsule"], info["flags"]


DATA = np.arange(12, dtype=np.float32).reshape(3, 4)


def aligned_numpy() -> np.ndarray:
    """DATA in a 64-byte aligned buffer: JAX imports in place only from such
    a buffer (and copies otherwise)."""
    raw = np.empty(DATA.nbytes + 64, dtype=np.uint8)
    start = -raw.ctypes.data % 64
    out = raw[start:start + DATA.nbytes].view(np.float32).reshape(DATA.shape)
    out[...] = DATA
    return out


PRODUCERS: dict[str, Callable[[], Any]] = {
    "jax": lambda: jnp.asarray(DATA),
    "numpy": aligned_numpy,
    "torch": lambda: torch.from_dlpack(aligned_numpy()).clone(),
}


def pointer(x: Any) -> int:
    if isinstance(x, np.ndarray):
        return x.ctypes.data
    if isinstance(x, torch.Tensor):
        return x.data_ptr()
    return x.unsafe_buffer_pointer()


def as_numpy(x: Any) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return np.from_dlpack(x)
    return np.asarray(x)


PAIRS = [(p, c) for p in PRODUCERS for c in ("numpy", "torch", "jax")]


@pytest.mark.parametrize("producer,consumer", PAIRS, ids=[f"{p}->{c}" for p, c in PAIRS])
def test_exchange_in_place(producer, consumer):
    x = PRODUCERS[producer]()
    out = from_dlpack(x, consumer=consumer)
    np.testing.assert_array_equal(as_numpy(out), DATA)
    assert pointer(out) == pointer(x), "an export in place shares the producer's buffer"


@pytest.mark.parametrize("producer,consumer", PAIRS, ids=[f"{p}->{c}" for p, c in PAIRS])
def test_exchange_copy_true(producer, consumer):
    x = PRODUCERS[producer]()
    if consumer == "torch" and "copy" not in TORCH_TAKES:
        # torch 1.13's own TypeError, as torch.from_dlpack(x, copy=True) raises; the wrapper carries copy instead
        with pytest.raises(TypeError, match=r"^from_dlpack\(\) got an unexpected keyword argument 'copy'$"):
            from_dlpack(x, consumer=consumer, copy=True)
        out = torch.from_dlpack(Routed(x, copy=True))
    else:
        out = from_dlpack(x, consumer=consumer, copy=True)
    np.testing.assert_array_equal(as_numpy(out), DATA)
    assert pointer(out) != pointer(x)


@pytest.mark.parametrize("kwargs", [{"device": "cpu"}, {"device": None}, {"copy": None}, {"copy": False}],
                         ids=repr)
def test_keywords_are_the_consumers(kwargs):
    """from_dlpack's device and copy reach the consumer as passed (None
    too): torch 1.13, whose from_dlpack(ext_tensor) takes neither, raises
    the TypeError torch.from_dlpack(x, **kwargs) raises, and a torch that
    takes them makes the array."""
    x = np.arange(3.0)
    try:
        want = torch.from_dlpack(x, **kwargs)
    except TypeError as real:
        with pytest.raises(TypeError) as e:
            from_dlpack(x, "torch", **kwargs)
        assert str(e.value) == str(real)
        return
    assert from_dlpack(x, "torch", **kwargs).tolist() == want.tolist()


@pytest.mark.parametrize("consumer", [np.from_dlpack, torch.from_dlpack, jnp.from_dlpack],
                         ids=["np", "torch", "jnp"])
def test_routed_with_the_consumers_own_from_dlpack(consumer):
    x = jnp.asarray(DATA)
    out = consumer(Routed(x))
    np.testing.assert_array_equal(as_numpy(out), DATA)
    assert pointer(out) == pointer(x)


def test_decide_steps():
    x = np.arange(3.0)
    assert routing.decide(x).step == "in_place"
    step, decision = routing.decide(x, copy=True, max_version=(1, 0))
    assert step == "copy_to_host"
    assert decision["flags"] == ["DLPACK_FLAG_BITMASK_IS_COPIED"]
    assert decision["capsule"] == "dltensor_versioned"
    assert routing.decide(x, stream=1).step == "raise"


# The seed: an unknown GPU platform, where JAX raises.

SEED = "Unknown GPU platform for __dlpack__: <unknown>"


def seed_array() -> GpuArray:
    return GpuArray(DATA.copy(), "<unknown>")


def test_seed_without_dlroute_raises():
    """The seed's line: torch.from_dlpack(gpu_x) asks __dlpack_device__ first."""
    with pytest.raises(BufferError) as e:
        torch.from_dlpack(seed_array())
    assert str(e.value) == SEED


@pytest.mark.parametrize("consumer", ["numpy", "torch", "jax"])
def test_seed_copied_through_host(consumer):
    g = seed_array()
    out = from_dlpack(g, consumer=consumer)
    np.testing.assert_array_equal(as_numpy(out), DATA)
    assert pointer(out) != g.data.ctypes.data, "a host copy, not the stand-in's buffer"
    assert Routed(g).__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError) as e:  # the stand-in itself still raises JAX's error, where asked
        g.__dlpack_device__()
    assert str(e.value) == SEED


def test_jax_consumer_refusal_is_decided_before_the_exchange():
    """from_dlpack(x, consumer="jax") raises what jax-import decides jax's
    from_dlpack raises (another device with copy=False), with the rule in
    a note, before the array is touched; real jax raises the same."""
    x = jnp.asarray(DATA)
    with pytest.raises(ValueError) as e:
        from_dlpack(x, consumer="jax", device="cpu", copy=False)
    assert any("device-needs-copy of jax-import@" in n for n in e.value.__notes__)
    with pytest.raises(ValueError) as real:
        jnp.from_dlpack(x, device="cpu", copy=False)
    assert str(e.value) == str(real.value)
    np.testing.assert_array_equal(as_numpy(from_dlpack(x, consumer="jax", device=jax.devices()[0])), DATA)


@pytest.mark.parametrize("max_version,want", [
    ((1, 0), ("dltensor_versioned", IS_COPIED)),
    ((1, 3), ("dltensor_versioned", IS_COPIED)),
    ((2, 0), ("dltensor_versioned", IS_COPIED)),
    ((0, 8), ("dltensor", None)),
    (None, ("dltensor", None)),
], ids=["1.0", "1.3", "2.0", "0.8", "none"])
def test_seed_capsule_is_copied(max_version, want):
    cap = Routed(seed_array()).__dlpack__(max_version=max_version)
    assert capsule_info(cap) == want
    decision = routing.decide(seed_array(), max_version=max_version).decision
    assert decision["rule"] == "unknown-platform-host-copy"
    assert decision.get("flags", []) == (["DLPACK_FLAG_BITMASK_IS_COPIED"] if want[1] else [])


def test_in_place_capsule_is_the_producers():
    """In place, the producer's own capsule passes through: JAX before 0.12
    makes an unversioned one even for a consumer of DLPack 1.x (0.12 a
    versioned one, READ_ONLY); numpy a versioned one without IS_COPIED."""
    want_jax = ("dltensor_versioned", READ_ONLY) if JAX_VERSIONED else ("dltensor", None)
    assert capsule_info(Routed(jnp.asarray(DATA)).__dlpack__(max_version=(1, 0))) == want_jax
    assert capsule_info(Routed(np.arange(3.0)).__dlpack__(max_version=(1, 0))) == ("dltensor_versioned", 0)
    # torch 1.13 takes no max_version: asked again with stream alone.
    want_torch = ("dltensor", None) if TORCH_1 else ("dltensor_versioned", 0)
    assert capsule_info(Routed(torch.arange(3.0)).__dlpack__(max_version=(1, 0))) == want_torch


def test_copy_of_a_read_only_host_view_is_writable():
    """A JAX CPU array's host view is read-only; its copy is the consumer's."""
    out = from_dlpack(jnp.asarray(DATA), consumer="numpy", copy=True)
    assert out.flags.writeable
    out[0, 0] = 99.0


def test_gpu_to_host_copy_by_dl_device():
    g = GpuArray(DATA.copy(), "cuda 12030", local_hardware_id=0)
    outs = [from_dlpack(g, consumer="numpy", device="cpu"), np.from_dlpack(Routed(g, dl_device=(1, 0)))]
    if not TORCH_NO_DEVICE and "device" in TORCH_TAKES:
        outs.append(from_dlpack(g, consumer="torch", device="cpu"))
    for out in outs:
        np.testing.assert_array_equal(as_numpy(out), DATA)
    assert capsule_info(Routed(g).__dlpack__(dl_device=(1, 0), max_version=(1, 1))) == (
        "dltensor_versioned", IS_COPIED)


# The rules' exceptions, with their exact type and message.

CUDA = dict(platform_version="cuda 12030", local_hardware_id=0)
ERRORS = [
    (lambda: Routed(seed_array(), copy=False), {},
     BufferError, SEED + "; only a copy through host memory could export it, and copy=False forbids one"),
    (lambda: Routed(GpuArray(DATA, **CUDA)), dict(dl_device=(1, 0), copy=False),
     BufferError, "exporting on (kDLCPU, 0) needs a copy of the array, and copy=False forbids one"),
    (lambda: Routed(GpuArray(DATA, **CUDA)), dict(dl_device=(2, 1)),
     BufferError, "the array can be exported on its own device or copied to host memory (kDLCPU, 0), "
                  "not on (kDLCUDA, 1)"),
    (lambda: Routed(np.arange(3.0)), dict(stream=1),
     ValueError, "stream must be None for an export on (kDLCPU, 0); got 1"),
    (lambda: Routed(jnp.arange(3.0)), dict(dl_device=(99, 0)),
     ValueError, "dl_device names device type 99, which is not a DLPack device type"),
    (lambda: Routed(torch.arange(3.0)), dict(max_version=(1, -1)),
     ValueError, "max_version must be a pair (major, minor) of numbers 0 or more"),
    (lambda: Routed(GpuArray(DATA, shards=2, **CUDA)), {},
     BufferError, "__dlpack__ only supported for unsharded arrays."),
    (lambda: Routed(GpuArray(DATA, "cuda 12030", local_hardware_id=None)), {},
     BufferError, "Couldn't get local_hardware_id for __dlpack__"),
    (lambda: Routed(GpuArray(DATA, **CUDA)), dict(stream=0),
     ValueError, "stream=0 is ambiguous on CUDA; use 1 (legacy default stream), 2 (per-thread default stream) "
                 "or a stream pointer"),
]


@pytest.mark.parametrize("make,kwargs,exc,message", ERRORS, ids=[e[3][:40] for e in ERRORS])
def test_rules_exceptions(make, kwargs, exc, message):
    with pytest.raises(exc) as e:
        make().__dlpack__(**kwargs)
    assert type(e.value) is exc
    assert str(e.value) == message
    assert e.value.decision["error"] == {"type": exc.__name__, "message": message}


def test_rules_exceptions_through_the_consumer():
    with pytest.raises(BufferError) as e:
        from_dlpack(seed_array(), consumer="numpy", copy=False)
    assert str(e.value).startswith(SEED + "; only a copy")
    if TORCH_1:
        with pytest.raises(BufferError) as e:  # torch 1.13 takes no copy=: the wrapper carries it
            torch.from_dlpack(Routed(GpuArray(DATA, **CUDA), dl_device=(1, 0), copy=False))
        assert str(e.value) == "exporting on (kDLCPU, 0) needs a copy of the array, and copy=False forbids one"
    with pytest.raises(BufferError) as e:  # a sharded array raises at __dlpack_device__, as JAX does
        torch.from_dlpack(Routed(GpuArray(DATA, shards=2, **CUDA)))
    assert str(e.value) == "__dlpack__ only supported for unsharded arrays."


def test_copy_onto_a_device_is_no_copier():
    with pytest.raises(dlroute.HostError) as e:
        Routed(GpuArray(DATA, **CUDA), copy=True).__dlpack__()
    assert e.value.code == "no_copier"


def test_dlpack_device_raises_the_rules_error():
    with pytest.raises(BufferError) as e:
        routing.dlpack_device(seed_array())
    assert str(e.value) == SEED
    assert e.value.decision["rule"] == "gpu-unknown-platform"


def test_another_rule_set_version():
    """exchange@v1 raises JAX's ValueError where v2 follows the standard's
    BufferError."""
    eng = dlroute.load()
    try:
        v1 = eng.ruleset("exchange@v1")
        with pytest.raises(ValueError) as e:
            Routed(GpuArray(DATA, **CUDA), copy=False, rules=v1).__dlpack__(dl_device=(1, 0))
        assert type(e.value) is ValueError
        assert str(e.value) == "exporting on (kDLCPU, 0) needs a copy of the array, and copy=False forbids one"
        assert Routed(seed_array(), rules=eng).__dlpack_device__() == (1, 0)
    finally:
        eng.close()


@pytest.mark.parametrize("error,cls", [
    ({"type": "BufferError", "message": "m"}, BufferError),
    ({"type": "ValueError", "message": "m"}, ValueError),
    ({"type": "RuntimeError", "message": "m"}, RuntimeError),
    ({"type": "jax.errors.JaxRuntimeError", "message": "m"}, DecidedError),
    ({"type": "SystemExit", "message": "m"}, DecidedError),
    ({"type": "DeprecationWarning", "message": "m"}, DecidedError),
    ({"type": "print", "message": "m"}, DecidedError),
])
def test_error_type_names(error, cls):
    with pytest.raises(Exception) as e:
        routing._raise({"error": error, "rule": "r", "ruleset": "x@v1"})
    assert type(e.value) is cls
    assert str(e.value) == "m"


def test_bad_arguments():
    with pytest.raises(TypeError):
        Routed(np.arange(3.0), copy="yes")
    with pytest.raises(TypeError):
        Routed(np.arange(3.0)).__dlpack__(stream=1.5)
    with pytest.raises(ValueError, match="consumer is one of 'numpy', 'torch', 'jax', 'cupy'"):
        from_dlpack(np.arange(3.0), "cuppy")
    with pytest.raises(TypeError):
        routing.dlpack_device(np.arange(3.0), rules="rules/")


def test_a_new_marker_in_the_rules_exports_in_place(tmp_path):
    """The README's edit: a marker for a fork's platform_version, added to
    the jax rules, turns its host copy into an export on the GPU, with no
    change to any code."""
    import shutil
    from pathlib import Path

    rules = tmp_path / "rules"
    shutil.copytree(Path(__file__).resolve().parents[2] / "rules", rules,
                    ignore=shutil.ignore_patterns("*.go"))
    path = rules / "jax" / "v3" / "rules.yaml"
    text = path.read_text()
    row = "      - {marker: oneapi, device: kDLOneAPI}\n"
    assert row in text
    path.write_text(text.replace(row, row + "      - {marker: nvfork, device: kDLCUDA, pinned_host: kDLCUDAHost}\n"))
    g = GpuArray(DATA, "nvfork 1.0", local_hardware_id=1)
    assert routing.decide(g).step == "copy_to_host"  # the embedded rules: an unknown platform
    with dlroute.load(str(rules)) as eng:
        assert routing.dlpack_device(g, rules=eng) == (2, 1)
        step, decision = routing.decide(g, rules=eng)
        assert (step, decision["rule"], decision["device_type"]) == ("in_place", "in-place", "kDLCUDA")
