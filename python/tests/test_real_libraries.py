"""The numpy and torch rule sets against the real libraries installed here.

Every case of a rule-set version that mirrors an installed release is run
on that release: the case's input becomes a real call (x.__dlpack_device__(),
x.__dlpack__(...), np.from_dlpack(...)), and what the library does, the
capsule it makes or the exception it raises, type and message byte for
byte, must be what the rules decide for the same input through the dlroute
package. A case the CPU build cannot reach is skipped, saying why
(_unreachable).

Arrays on other devices are stood for by capsules made by hand
(dlpack_capsules.py): host memory labelled kDLCUDAHost, kDLCUDA, ...;
numpy refuses a device it cannot read before it touches a byte. The
consumer's request is observed by a producer that records how __dlpack__
is called.
"""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest

np = pytest.importorskip("numpy")
yaml = pytest.importorskip("yaml")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    torch = pytest.importorskip("torch")
    import torch.utils.dlpack  # noqa: E402

import dlroute  # noqa: E402
from dlpack_capsules import CapsuleProducer, make_capsule, read_capsule  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Failed to initialize NumPy:UserWarning")

RULES = Path(__file__).resolve().parent.parent.parent / "rules"
FLAGS = {"DLPACK_FLAG_BITMASK_READ_ONLY": 1, "DLPACK_FLAG_BITMASK_IS_COPIED": 2,
         "DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED": 4}


def cases(ref: str) -> list[Any]:
    name, version = ref.split("@")
    data = yaml.safe_load((RULES / name / version / "tests.yaml").read_text())
    return [pytest.param(ref, c["input"], id=f"{ref}: {c['name']}") for c in data["cases"]]


@pytest.fixture(scope="module")
def engine() -> dlroute.Engine:
    with dlroute.load() as eng:
        yield eng


def raised(e: BaseException) -> tuple:
    return ("raise", type(e).__name__, str(e))


def expected(decision: dict[str, Any]) -> tuple:
    """A decision as the outcome a user would observe."""
    if "error" in decision:
        return ("raise", decision["error"]["type"], decision["error"]["message"])
    capsule = decision.get("capsule")
    flags = None
    if capsule == "dltensor_versioned":
        flags = sum(FLAGS[f] for f in decision.get("flags", []))
    return ("device", decision["device_type_code"], decision["device_id"], decision.get("copy", False), capsule, flags)


def values(explanation: dict[str, Any]) -> dict[str, Any]:
    return {v["name"]: v.get("value") for v in explanation["trace"]["values"]}


def as_json(v: Any) -> Any:
    """A Python argument as the rules write it: tuples are lists."""
    return list(v) if isinstance(v, tuple) else v


# --- numpy ------------------------------------------------------------------

def numpy_array(inp: dict[str, Any]) -> Any:
    """The array the input describes: one numpy made, or one made from a
    capsule on origin_device (versioned, so writeable; the one
    __dlpack_device__ case on kDLCUDAHost reads the unversioned branch)."""
    dev = tuple(inp.get("origin_device", [1, 0]))
    if dev == (1, 0):
        x = np.arange(6.0)
    else:
        unversioned = inp["call"] == "__dlpack_device__" and dev == (3, 0)
        x = np.from_dlpack(CapsuleProducer(make_capsule(dev, versioned=not unversioned)))
    if not inp.get("writeable", True):
        x.flags.writeable = False
    return x


def dlpack_kwargs(inp: dict[str, Any]) -> dict[str, Any]:
    """__dlpack__'s keywords as the input passes them, in its order."""
    kw: dict[str, Any] = {}
    for k in inp.get("keywords", []):
        v = inp.get(k)
        kw[k] = tuple(v) if isinstance(v, list) else v
    return kw


def export(x: Any, kwargs: dict[str, Any], pointer: int) -> tuple:
    try:
        capsule = x.__dlpack__(**kwargs)
    except Exception as e:  # the library's own exception is the outcome
        return raised(e)
    c = read_capsule(capsule)
    return ("device", *c["device"], c["data"] != pointer, c["capsule"], c["flags"])


class Recorder:
    """A producer that records each __dlpack__ call (keywords in order) and
    answers with a real numpy capsule, or first raises TypeError(fail)."""

    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[list[tuple[str, Any]]] = []
        self.device_calls = 0
        self.fail = fail

    def __dlpack_device__(self) -> tuple[int, int]:
        self.device_calls += 1
        return (1, 0)

    def __dlpack__(self, **kwargs: Any) -> Any:
        self.calls.append(list(kwargs.items()))
        if self.fail is not None and len(self.calls) == 1:
            raise TypeError(self.fail)
        return np.arange(6.0).__dlpack__(max_version=kwargs.get("max_version"))


def check_request(consumer: Callable[..., Any], inp: dict[str, Any], explanation: dict[str, Any]) -> None:
    """The consumer's calls of a recording producer against the request the
    rules decide: the exception, or the keywords of attempt `attempt`. A
    producer for attempt 2 raises TypeError(failed_message) first."""
    attempt = inp.get("attempt", 1)
    producer = Recorder(fail=inp.get("failed_message") if attempt == 2 else None)
    kwargs = {k: inp[k] for k in ("device", "copy") if inp.get(k) is not None and k in _params(consumer)}
    decision, vals = explanation["decision"], values(explanation)
    try:
        consumer(producer, **kwargs)
        outcome: tuple = ("returned",)
    except Exception as e:
        outcome = raised(e)
    assert (producer.device_calls > 0) == vals["calls_dlpack_device"]
    if "error" in decision:
        assert outcome == expected(decision)
        assert len(producer.calls) == attempt - 1, "the consumer must fail before calling again"
        return
    assert outcome == ("returned",)
    call = producer.calls[attempt - 1]
    assert [k for k, _ in call] == vals["request_keywords"]
    assert {k: as_json(v) for k, v in call} == vals["request_kwargs"]
    # The decision's summary of the request agrees with the call.
    asked = dict(call)
    assert decision.get("copy", False) == (asked.get("copy") is True)
    versioned = asked.get("max_version") is not None and asked["max_version"][0] >= 1
    assert decision.get("capsule") == ("dltensor_versioned" if versioned else "dltensor")


def _params(consumer: Callable[..., Any]) -> tuple[str, ...]:
    """The keywords of from_dlpack a case's inputs may pass to consumer."""
    if consumer is np.from_dlpack:
        return ("device", "copy")
    return tuple(inspect.signature(consumer).parameters)[1:]


def numpy_import(inp: dict[str, Any]) -> tuple:
    """np.from_dlpack of the capsule the input describes: a real library's
    where one makes it (torch's unversioned kDLCPU, numpy's own versioned),
    else one made by hand."""
    dev = tuple(inp.get("capsule_device", [1, 0]))
    versioned = inp.get("capsule", "dltensor_versioned") == "dltensor_versioned"
    version = tuple(inp.get("capsule_version", [1, 0]))
    if dev == (1, 0) and not versioned:
        capsule = torch.utils.dlpack.to_dlpack(torch.arange(6.0))
    elif dev == (1, 0) and version == (1, 0):
        capsule = np.arange(6.0).__dlpack__(max_version=(1, 0))
    else:
        capsule = make_capsule(dev, versioned=versioned, version=version)
    pointer = read_capsule(capsule)["data"]
    try:
        y = np.from_dlpack(CapsuleProducer(capsule))
    except Exception as e:
        return raised(e)
    return ("device", *y.__dlpack_device__(), y.ctypes.data != pointer, None, None)


def run_numpy(inp: dict[str, Any], explanation: dict[str, Any]) -> None:
    call, decision = inp["call"], explanation["decision"]
    if call == "__dlpack_device__":
        assert ("device", *numpy_array(inp).__dlpack_device__()) == expected(decision)[:3]
    elif call == "__dlpack__":
        x = numpy_array(inp)
        assert export(x, dlpack_kwargs(inp), x.ctypes.data) == expected(decision)
    elif call == "request":
        check_request(np.from_dlpack, inp, explanation)
    elif call == "from_dlpack":
        want = expected(decision)
        assert numpy_import(inp) == (want if want[0] == "raise" else want[:4] + (None, None))
    else:
        assert decision["error"]["type"] == "ValueError"  # the rules' own refusal of an unknown call


# --- torch -------------------------------------------------------------------

def torch_tensor(inp: dict[str, Any]) -> Any:
    """The tensor the input describes, on a device a CPU build has (cpu, meta)."""
    t = torch.arange(6.0, device=inp.get("device_type", "cpu"))
    if inp.get("conj"):
        t = torch.arange(6.0).to(torch.complex64).conj()
    if inp.get("layout", "strided") == "sparse_coo":
        t = t.to_sparse()
    if inp.get("requires_grad"):
        t = t.requires_grad_()
    return t


def torch_import(inp: dict[str, Any]) -> tuple:
    """torch.from_dlpack of the capsule the input describes: numpy's own
    where numpy makes it (kDLCPU), else one made by hand."""
    dev = tuple(inp.get("capsule_device", [1, 0]))
    versioned = inp.get("capsule", "dltensor") == "dltensor_versioned"
    if dev == (1, 0):
        capsule = np.arange(6.0).__dlpack__(max_version=(1, 0) if versioned else None)
    else:
        capsule = make_capsule(dev, versioned=versioned)
    pointer = read_capsule(capsule)["data"]
    try:
        y = torch.from_dlpack(capsule)
    except Exception as e:
        return raised(e)
    # A tensor on torch's hip device has no __dlpack_device__ in 1.13.
    device = {"cpu": 1, "cuda": 2, "hip": 10}[y.device.type]
    return ("device", device, y.device.index or 0, y.data_ptr() != pointer, None, None)


def run_torch(inp: dict[str, Any], explanation: dict[str, Any]) -> None:
    call, decision = inp["call"], explanation["decision"]
    if call == "__dlpack_device__":
        try:
            outcome: tuple = ("device", *torch_tensor(inp).__dlpack_device__())
        except Exception as e:
            outcome = raised(e)
        want = expected(decision)
        assert outcome == (want if want[0] == "raise" else want[:3])
    elif call == "__dlpack__":
        t = torch_tensor(inp)
        pointer = t.data_ptr() if t.layout == torch.strided and t.device.type == "cpu" else 0
        assert export(t, dlpack_kwargs(inp), pointer) == expected(decision)
    elif call == "request":
        device = tuple(inp.get("producer_device", [1, 0]))
        def from_dlpack(producer: Any, copy: bool | None = None) -> Any:
            # copy reaches torch only when the case gives it, as a caller's keyword would.
            return torch.from_dlpack(_AtDevice(producer, device), **({} if copy is None else {"copy": copy}))
        check_request(from_dlpack, inp, explanation)
    elif call == "from_dlpack":
        want = expected(decision)
        assert torch_import(inp) == (want if want[0] == "raise" else want[:4] + (None, None))
    else:
        assert decision["error"]["type"] == "ValueError"


class _AtDevice:
    """A recording producer that reports device from __dlpack_device__."""

    def __init__(self, producer: Recorder, device: tuple[int, int]) -> None:
        self.producer, self.device = producer, device

    def __dlpack_device__(self) -> tuple[int, int]:
        self.producer.__dlpack_device__()
        return self.device

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.producer.__dlpack__(**kwargs)


# --- the installed releases and the versions that mirror them -----------------

REAL: dict[str, tuple[Callable[[], bool], Callable[[dict[str, Any], dict[str, Any]], None]]] = {
    "numpy@v1": (lambda: np.__version__.startswith("2.4."), run_numpy),
    "torch@v1": (lambda: torch.__version__.startswith("1.13.") and torch.version.cuda is None, run_torch),
}

# Versions read from the source only: no release they mirror is installed
# here, so none of their cases runs against a real library.
FROM_SOURCE: dict[str, str] = {
    "torch@v1.1": "torch 2.9 is not installed here (Debian's torch is 1.13); torch@v1.1 is from source only",
    "torch@v2": "torch 2.x is not installed here (Debian's torch is 1.13); torch@v2 is from source only",
}


@pytest.mark.parametrize("ref", sorted(FROM_SOURCE))
def test_from_source_only(ref: str) -> None:
    pytest.skip(FROM_SOURCE[ref])


def _unreachable(ref: str, inp: dict[str, Any]) -> str | None:
    """Why a CPU build cannot run the case, or None."""
    if ref.startswith("torch@"):
        if inp.get("device_type") in ("cuda", "mps", "xpu") or inp.get("pinned") or inp.get("hip"):
            return "a CPU build of torch has no cuda, mps or xpu tensors and no pinned memory"
        if inp["call"] == "request" and inp.get("gpu_build", True) and tuple(inp.get("producer_device", [1, 0]))[0] in (2, 10):
            return "a CPU build of torch has no CUDA stream to pass (its own refusal is the gpu_build: false case)"
        if inp["call"] == "from_dlpack" and tuple(inp.get("capsule_device", [1, 0]))[0] == 2:
            return "a CPU build of torch initialises CUDA to import a kDLCUDA capsule, and fails with a traceback"
    return None


@pytest.mark.parametrize("ref, inp", [p for ref in REAL for p in cases(ref)])
def test_real_library(engine: dlroute.Engine, ref: str, inp: dict[str, Any]) -> None:
    installed, run = REAL[ref]
    assert installed(), f"{ref} mirrors another release than the one installed"
    why = _unreachable(ref, inp)
    if why:
        pytest.skip(why)
    run(inp, engine.ruleset(ref).explain(inp))
