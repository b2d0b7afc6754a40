"""dlroute.interop: ask before you exchange. The cells of Engine.interop
are, byte for byte, those of `dlroute interop --json`; and for real CPU
arrays (numpy 2.4, JAX's CPU build, Debian's torch 1.13) the answer is
what the real consumer's from_dlpack then does: the same exception, type
and message, or an array that shares the producer's memory exactly when
the answer is in place."""

from __future__ import annotations

import json
import subprocess
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest

np = pytest.importorskip("numpy")
jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    torch = pytest.importorskip("torch")

import dlroute  # noqa: E402
from dlroute import interop  # noqa: E402
from dlroute import check  # noqa: E402
from dlroute.arrays import host_array  # noqa: E402
from dlroute.routing import DecidedError  # noqa: E402
from standin import GpuArray  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Failed to initialize NumPy:UserWarning")

SEED = {"platform": "gpu", "platform_version": "<unknown>"}
# The torch rule set for the torch installed here, as the conformance runner
# chooses it: Debian's torch says 1.13.0a0+gitunknown, read by its base
# release, 1.13.0, which torch@v1 covers (rules/torch/v1/manifest.yaml).
TORCH = check.choose_version(check.rules_dir(), "torch", torch.__version__)[0]


@pytest.fixture(scope="module")
def engine() -> dlroute.Engine:
    with dlroute.load() as eng:
        yield eng


def cli_lines(cli: Path, *args: str) -> list[str]:
    out = subprocess.run([str(cli), "interop", "--json", *args], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


# --- the same cells as the command line --------------------------------------

# Derived from the rule files: torch calls __dlpack_device__ first, where
# jax@v3's gpu-unknown-platform raises; numpy does not, jax-export exports
# kDLCUDA, and numpy@v2's import refuses that device.
@pytest.mark.parametrize("consumer, error_type, message, decider", [
    ("torch", "BufferError", "Unknown GPU platform for __dlpack__: <unknown>", ("__dlpack_device__", "jax@v3")),
    ("numpy", "BufferError", "Unsupported device in DLTensor.", ("from_dlpack", "numpy@v2")),
])
def test_seed_is_the_commands_cell(engine: dlroute.Engine, dlroute_cli: Path, consumer: str, error_type: str,
                                   message: str, decider: tuple[str, str]) -> None:
    cell = engine.interop("jax", consumer, array=SEED)
    assert (cell.outcome, cell.error_type, cell.error_message) == ("error", error_type, message)
    assert (cell.decider["call"], cell.decider["decision"]["ruleset"]) == decider
    assert not cell.ok and cell.device is None
    assert (cell.platform, cell.memory) == ("gpu <unknown>", "device")
    # The command's line for the same array, found by its input.
    lines = [line for line in cli_lines(dlroute_cli, "--producer", "jax", "--consumer", consumer)
             if json.loads(line)["array"]["input"] == cell.array]
    assert lines == [cell.json]


# --copy none is copy not passed.
@pytest.mark.parametrize("kwargs, flag", [({}, "none"), ({"copy": True}, "true"), ({"copy": False}, "false")])
def test_matrix_is_the_commands(engine: dlroute.Engine, dlroute_cli: Path, kwargs: dict, flag: str) -> None:
    cells = engine.interop_matrix(["jax", "numpy", "torch"], ["torch", "numpy"], **kwargs)
    want = cli_lines(dlroute_cli, "--producer", "jax,numpy,torch", "--consumer", "torch,numpy", "--copy", flag)
    assert [c.json for c in cells] == want


def test_numpy_into_torch_in_place(engine: dlroute.Engine) -> None:
    cell = engine.interop("numpy", "torch")
    assert (cell.outcome, cell.device, cell.error_type) == ("in_place", (1, 0), None)
    assert str(cell) == "in place" and cell.ok and not cell.copies
    # The rows numpy@v2's rules distinguish: its own array, and arrays
    # made from capsules on the host types it imports.
    calls = [s["call"] for s in cell.steps]
    assert calls == ["__dlpack_device__", "request", "__dlpack__", "from_dlpack"]


def test_exception_object(engine: dlroute.Engine) -> None:
    e = engine.interop("jax", "torch", array=SEED).exception()
    assert type(e) is BufferError and str(e) == "Unknown GPU platform for __dlpack__: <unknown>"
    assert e.decision["rule"] == "gpu-unknown-platform"
    # JAX's own exception type is no builtin.
    cell = engine.interop("jax", "numpy", array={"platform": "METAL", "platform_version": "metal 1.0"})
    assert cell.error_type == "JaxRuntimeError"
    exc = cell.exception()
    assert isinstance(exc, DecidedError) and exc.type_name == "JaxRuntimeError"
    assert engine.interop("numpy", "numpy").exception() is None


# --- real arrays: the answer, then what the consumer really does -------------

def pointer(a: Any) -> int:
    if isinstance(a, np.ndarray):
        return a.ctypes.data
    if isinstance(a, torch.Tensor):
        return a.data_ptr()
    return a.unsafe_buffer_pointer()  # a jax.Array


def readonly() -> Any:
    a = np.arange(4.0)
    a.flags.writeable = False
    return a


CONSUMERS: dict[str, Callable[..., Any]] = {"numpy": np.from_dlpack, TORCH: torch.from_dlpack,
                                           "jax": jax.dlpack.from_dlpack}

# (the array, the consumer, from_dlpack's copy, the producer's rule set
# where its installed release is not one: Debian's torch).
REAL = [
    pytest.param(lambda: np.arange(4.0), TORCH, None, None, id="numpy->torch"),
    pytest.param(readonly, TORCH, None, None, id="numpy readonly->torch"),
    pytest.param(lambda: np.arange(4.0), "numpy", None, None, id="numpy->numpy"),
    pytest.param(lambda: np.arange(4.0), "numpy", True, None, id="numpy->numpy copy=True"),
    pytest.param(lambda: np.arange(4.0), "numpy", False, None, id="numpy->numpy copy=False"),
    pytest.param(readonly, "numpy", None, None, id="numpy readonly->numpy"),
    pytest.param(lambda: torch.arange(4.0), "numpy", None, TORCH, id="torch->numpy"),
    pytest.param(lambda: torch.arange(4.0), "numpy", False, TORCH, id="torch->numpy copy=False"),
    pytest.param(lambda: torch.arange(4.0), "numpy", True, TORCH, id="torch->numpy copy=True"),
    pytest.param(lambda: torch.ones(3, requires_grad=True), "numpy", None, TORCH, id="torch requires_grad->numpy"),
    pytest.param(lambda: torch.ones(3, dtype=torch.complex64).conj(), "numpy", None, TORCH, id="torch conj->numpy"),
    pytest.param(lambda: torch.arange(4.0), TORCH, None, TORCH, id="torch->torch"),
    pytest.param(lambda: torch.ones(3, requires_grad=True), TORCH, None, TORCH, id="torch requires_grad->torch"),
    pytest.param(lambda: jnp.arange(4.0), "numpy", None, None, id="jax->numpy"),
    pytest.param(lambda: jnp.arange(4.0), TORCH, None, None, id="jax->torch"),
    pytest.param(lambda: jnp.arange(4.0), "numpy", True, None, id="jax->numpy copy=True"),
    # The seed's array, played by the stand-in (its __dlpack_device__ is
    # JAX's code): torch meets JAX's error before it asks for a capsule.
    pytest.param(lambda: GpuArray(np.arange(6.0), platform_version="<unknown>"), TORCH, None, None,
                 id="jax gpu <unknown>->torch"),
    # A JAX array on CUDA into torch: what torch's build and driver here
    # make of it (Debian's CPU build: AssertionError before it asks for a
    # capsule; a CUDA wheel without a driver: its RuntimeError), the
    # process facts ask reads from the torch imported here.
    pytest.param(lambda: GpuArray(np.arange(6.0)), TORCH, None, None, id="jax gpu cuda->torch"),
    # torch 1.13's from_dlpack takes no copy: a TypeError before it asks.
    pytest.param(lambda: np.arange(4.0), TORCH, True, None, id="numpy->torch copy=True"),
    # jax's from_dlpack (jax-import), of arrays whose buffers are 64-byte
    # aligned float32, as the rules' facts default: jax and torch's own.
    pytest.param(lambda: jnp.arange(4.0), "jax", None, None, id="jax->jax"),
    pytest.param(lambda: jnp.arange(4.0), "jax", False, None, id="jax->jax copy=False"),
    pytest.param(lambda: jnp.arange(4.0), "jax", True, None, id="jax->jax copy=True"),
    pytest.param(lambda: torch.arange(4.0), "jax", None, TORCH, id="torch->jax"),
    pytest.param(lambda: torch.arange(4.0), "jax", False, TORCH, id="torch->jax copy=False"),
    pytest.param(lambda: torch.ones(3, requires_grad=True), "jax", None, TORCH, id="torch requires_grad->jax"),
]


@pytest.mark.parametrize("make, consumer, copy, producer", REAL)
def test_answer_is_what_happens(make: Callable[[], Any], consumer: str, copy: bool | None,
                                producer: str | None) -> None:
    kwargs = {} if copy is None else {"copy": copy}
    _agree(make(), consumer, producer, kwargs)


# from_dlpack(x, copy=None): a keyword passed, which torch 1.13 refuses.
@pytest.mark.parametrize("make, consumer, producer", [
    pytest.param(lambda: np.arange(4.0), TORCH, None, id="numpy->torch"),
    pytest.param(lambda: torch.arange(4.0), TORCH, TORCH, id="torch->torch"),
    pytest.param(lambda: np.arange(4.0), "numpy", None, id="numpy->numpy"),
    pytest.param(lambda: jnp.arange(4.0), "jax", None, id="jax->jax"),
])
def test_copy_none_passed_is_what_happens(make: Callable[[], Any], consumer: str, producer: str | None) -> None:
    _agree(make(), consumer, producer, {"copy": None})


def _agree(x: Any, consumer: str, producer: str | None, kwargs: dict[str, Any]) -> None:
    """ask's cell for consumer.from_dlpack(x, **kwargs) is what the real
    call does."""
    cell = interop.ask(x, consumer, producer=producer, **kwargs)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = CONSUMERS[consumer](x, **kwargs)
    except Exception as e:  # noqa: BLE001: the outcome to compare
        assert (type(e).__name__, str(e)) == (cell.error_type, cell.error_message), cell
        return
    assert cell.ok, f"the rules said {cell}, and from_dlpack made an array"
    assert (pointer(y) == pointer(x)) == (cell.outcome == "in_place"), cell
    np.testing.assert_array_equal(host_array(y), host_array(x))


# --- remedies and catch sets ----------------------------------------------


def test_cell_remedy(engine: dlroute.Engine) -> None:
    """A cell that raises carries the cheapest fix the rules say crosses,
    as the command's --json writes it; a cell that crosses has none."""
    cell = engine.interop("torch", "numpy", array={"device_type": "cuda", "device_index": 0})
    assert cell.remedy == interop.Remedy("host_copy", "x.cpu()", "in_place"), cell.json
    assert json.loads(cell.json)["remedy"] == {"kind": "host_copy", "fix": "x.cpu()", "outcome": "in_place"}
    assert engine.interop("numpy", "torch").remedy is None


def _values(x: Any) -> Any:
    """The values x holds, as numpy reads them after every view is
    resolved."""
    if isinstance(x, torch.Tensor):
        if x.layout != torch.strided:
            x = x.to_dense()
        x = x.detach().resolve_conj().resolve_neg()
    return host_array(x)


# Arrays whose exchange raises, or reads silently different values, on
# both stacks (torch 1.13 and 2.15, numpy 2.4 and 2.5, jax 0.10.2 and
# 0.12), and the remedy's kind: the remedy, applied to the real array,
# crosses into the real consumer with the producer's values.
REMEDIES = [
    pytest.param(lambda: torch._neg_view(torch.tensor([2.0, -4.0])), "numpy", "resolve_neg", id="neg->numpy"),
    pytest.param(lambda: torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64).conj(), "numpy", "resolve_conj",
                 id="conj->numpy"),
    pytest.param(lambda: torch.ones(3, requires_grad=True), "numpy", "detach", id="requires_grad->numpy"),
    pytest.param(lambda: torch.eye(2).to_sparse(), "numpy", "dense", id="sparse->numpy"),
    pytest.param(lambda: np.arange(8.0)[::-1], "jax", "contiguous", id="numpy reversed->jax"),
]


@pytest.mark.parametrize("make, consumer, kind", REMEDIES)
def test_remedy_is_what_crosses(make: Callable[[], Any], consumer: str, kind: str) -> None:
    x = make()
    producer = TORCH if isinstance(x, torch.Tensor) else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cell = interop.ask(x, consumer, producer=producer)
    assert cell.outcome == "error" and cell.remedy is not None and cell.remedy.kind == kind, cell.json
    # The fix is Python: a call on x, or (the consumer's words) the whole
    # exchange.
    names = {"x": x, "np": np, "torch": torch, "jax": jax, "jnp": jnp}
    fixed = eval(cell.remedy.fix, names)  # noqa: S307: the rules' own text
    if kind not in ("drop_keywords", "copy", "through_numpy"):
        fixed = CONSUMERS[consumer](fixed)
    np.testing.assert_array_equal(host_array(fixed), _values(x))


def test_catch_set(engine: dlroute.Engine) -> None:
    """numpy into torch, over every version of both: numpy@v2's
    kDLCUDAHost array is a BufferError in torch 2.15, and torch 1.13 to
    2.13 abort on a negative stride, which no except catches."""
    cs = interop.catch_set("numpy", "torch", rules=engine)
    assert "BufferError" in cs.types and "SIGABRT" in cs.uncatchable and "SIGABRT" not in cs.types
    assert cs.except_line == "except (" + ", ".join(cs.types) + "):"
    assert BufferError in cs.exceptions and all(isinstance(c, type) for c in cs.exceptions)
    assert len(cs.producer_versions) >= 8 and "torch@v1" in cs.consumer_versions
    assert json.loads(cs.json)["except"] == cs.except_line
    assert interop.catch_set("numpy", "torch", rules=engine) == cs  # remembered
    one = interop.catch_set("torch@v1", "jax==0.10.2", rules=engine)
    assert (one.producer_versions, one.consumer_versions) == (("torch@v1",), ("jax-import@v1.1",))


def test_catch_set_is_the_commands(engine: dlroute.Engine, dlroute_cli: Path) -> None:
    out = subprocess.run([str(dlroute_cli), "interop", "--catch", "--json", "--producer", "torch@v1",
                          "--consumer", "jax"], capture_output=True, text=True, check=True)
    assert interop.catch_set("torch@v1", "jax", rules=engine).json == out.stdout.strip()


def test_catch_set_refusals(engine: dlroute.Engine) -> None:
    with pytest.raises(dlroute.NoRuleSetError) as e:
        interop.catch_set("nosuch", "torch", rules=engine)
    assert e.value.code == "no_ruleset"
    with pytest.raises(dlroute.NoRuleSetError, match="exchange@v2 cannot be a consumer"):
        interop.catch_set("numpy", "exchange", rules=engine)
    with pytest.raises(TypeError):
        interop.catch_set(["numpy"], "torch", rules=engine)  # type: ignore[arg-type]


def test_jax_devices_are_read_as_jax_reads_them() -> None:
    """device= a jax Device is its repr to the rules, a Sharding its one
    device; a string is no jax device (jax's device_put refuses it)."""
    from jax.sharding import SingleDeviceSharding

    x, dev = jnp.arange(4.0), jax.devices()[0]
    assert interop.ask(x, "jax", device=dev, copy=False).outcome == "in_place"
    assert interop.ask(x, "jax", device=SingleDeviceSharding(dev)).outcome == "in_place"
    cell = interop.ask(x, "jax", device="cpu", copy=False)
    assert (cell.error_type, cell.decider["decision"]["rule"]) == ("ValueError", "device-needs-copy")
    with pytest.raises(ValueError) as real:
        jax.dlpack.from_dlpack(x, device="cpu", copy=False)
    assert str(real.value) == cell.error_message


def test_array_of() -> None:
    library, inputs = interop.array_of(np.arange(3.0))
    assert library == "numpy"
    assert {k: inputs[k] for k in ("origin_device", "writeable", "dtype_code", "dtype_bits", "shape", "strides",
                                   "dlpack_device_enum")} == {
        "origin_device": [1, 0], "writeable": True, "dtype_code": 2, "dtype_bits": 64, "shape": [3], "strides": None,
        "dlpack_device_enum": False}
    library, inputs = interop.array_of(torch.ones(2, requires_grad=True))
    assert library == "torch"
    assert {k: v for k, v in inputs.items() if k not in ("data_alignment",)} == {
        "device_type": "cpu", "device_index": None, "pinned": False, "hip": False, "requires_grad": True,
        "conj": False, "layout": "strided", "dtype_code": 2, "dtype_bits": 32, "dtype_lanes": 1, "shape": [2],
        "strides": None, "writeable": True, "dlpack_device_enum": True, "neg": False}
    library, inputs = interop.array_of(jnp.arange(3.0))
    assert library == "jax" and inputs["platform"] == "cpu" and inputs["shards"] == 1
    with pytest.raises(TypeError, match="cannot tell the DLPack library of a builtins.list"):
        interop.array_of([1, 2])


def test_real_array_is_the_rows_cell(engine: dlroute.Engine) -> None:
    # An ordinary array, read from the real thing, is the matrix's row.
    got = interop.ask(torch.arange(8.0), "numpy@v2", producer=TORCH, rules=engine,
                      process={})  # float32, a vector of 8; the rules' default process
    row = [c for c in engine.interop_matrix([TORCH], ["numpy@v2"]) if (c.platform, c.memory) == ("cpu", "-")]
    assert [got.json] == [c.json for c in row]


def test_installed_ref() -> None:
    assert interop.installed_ref("numpy") == f"numpy=={np.__version__}"
    assert interop.installed_ref("torch@v1") == "torch@v1"
    assert interop.installed_ref("no-such-library-here") == "no-such-library-here"


# --- the consumer's process ------------------------------------------------

CUDA_ARRAY = {"platform": "gpu", "platform_version": "cuda 12030"}


def test_process_facts_reach_the_consumer(engine: dlroute.Engine) -> None:
    """A fact is the process's: each consumer reads those its rule set
    declares (x64 is jax's), the rest are the rules' defaults."""
    cpu_build = engine.interop("jax", "torch@v1", array=CUDA_ARRAY, process={"gpu_build": False, "x64": True})
    assert (cpu_build.error_type, cpu_build.error_message) == ("AssertionError", "Torch not compiled with CUDA enabled")
    assert engine.interop("jax", "torch@v1", array=CUDA_ARRAY, process={"gpu_build": True}).ok
    no_driver = engine.interop("jax", "torch@v3", array=CUDA_ARRAY, process={"cuda_driver": False})
    assert no_driver.error_type == "RuntimeError" and "NVIDIA driver" in (no_driver.error_message or "")
    x64 = engine.interop("numpy", "jax", array={"dtype_bits": 64}, process={"x64": True, "gpu_build": False})
    assert x64.outcome != engine.interop("numpy", "jax", array={"dtype_bits": 64}).outcome


def test_a_process_fact_misspelt_is_refused(engine: dlroute.Engine) -> None:
    with pytest.raises(TypeError, match="process names gpu_biuld, which is no process fact; the facts are "):
        engine.interop("numpy", "torch", process={"gpu_biuld": False})  # type: ignore[typeddict-unknown-key]


def test_ask_reads_the_process_or_takes_it(engine: dlroute.Engine) -> None:
    """ask reads the process's facts by default (of the torch imported
    here), and takes them as a keyword."""
    x = GpuArray(np.arange(6.0))
    here = interop.ask(x, TORCH, rules=engine)
    assert here.json == interop.ask(x, TORCH, rules=engine, process=dlroute._process.facts_here("torch")).json
    cell = interop.ask(x, "torch@v1", rules=engine, process={"gpu_build": False})
    assert (cell.error_type, cell.error_message) == ("AssertionError", "Torch not compiled with CUDA enabled")


# --- refusals ----------------------------------------------------------------

@pytest.mark.parametrize("call, error, code, says", [
    (lambda e: e.interop("jax", "jax@v2"), dlroute.NoRuleSetError, "no_ruleset", "jax@v2 cannot be a consumer"),
    (lambda e: e.interop("jax-import", "numpy"), dlroute.NoRuleSetError, "no_ruleset", "cannot be a producer"),
    (lambda e: e.interop("exchange", "numpy"), dlroute.NoRuleSetError, "no_ruleset", "cannot be a producer"),
    (lambda e: e.interop("nosuch", "numpy"), dlroute.NoRuleSetError, "no_ruleset", "nosuch"),
    (lambda e: e.interop("numpy", "torch", array={"copy": True}), dlroute.InputError, "unknown_field",
     "names copy, which the exchange sets"),
    (lambda e: e.interop("jax", "torch", array={"platfrom": "gpu"}), dlroute.InputError, "unknown_field",
     'unknown input "platfrom"'),
    (lambda e: e.interop("jax", "torch", array={"platform": 7}), dlroute.InputError, "wrong_type", "input platform"),
    (lambda e: e.interop("numpy", "numpy", device=7), dlroute.InputError, "wrong_type", "input device"),
    (lambda e: e.interop_matrix(consumers=["jax-export"]), dlroute.NoRuleSetError, "no_ruleset", "cannot be a consumer"),
])
def test_refusals(engine: dlroute.Engine, call: Callable, error: type, code: str, says: str) -> None:
    with pytest.raises(error) as info:
        call(engine)
    assert info.value.code == code and says in info.value.message


def test_no_library_hint(engine: dlroute.Engine) -> None:
    with pytest.raises(LookupError) as info:  # NoRuleSetError is a LookupError
        engine.interop("numpy", "exchange")
    every = "array-api-strict, cupy, jax, mlx, numpy, onnxruntime, paddle, pyarrow, tensorflow, torch, warp"
    assert info.value.hint.startswith(f"producers: {every}; consumers: {every}")


def test_argument_types(engine: dlroute.Engine) -> None:
    with pytest.raises(TypeError, match="copy is True, False or None"):
        engine.interop("numpy", "numpy", copy="yes")
    with pytest.raises(TypeError, match="array is a dict"):
        engine.interop("numpy", "numpy", array=[1, 0])
    with pytest.raises(TypeError, match="producers is a list"):
        engine.interop_matrix("numpy")


def test_closed() -> None:
    eng = dlroute.load()
    eng.close()
    with pytest.raises(dlroute.LibraryError) as info:
        eng.interop("numpy", "torch")
    assert info.value.code == "closed"
