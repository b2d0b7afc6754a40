"""The runner's numpy, torch and cupy sides (:mod:`dlroute.check`).

A case's input becomes a real call: ``x.__dlpack_device__()``,
``x.__dlpack__(**keywords)`` on an array made as the input describes, the
consumer's ``from_dlpack`` of a producer that records how it is asked (the
``request`` cases), or of a capsule (``from_dlpack``). Arrays on devices
this machine has no memory for are stood for by capsules made by hand
(numpy refuses a device it cannot read before it touches a byte); a case
that needs a device, build or backend this machine lacks is Unreachable,
saying which.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from .._capsules import CapsuleProducer, make_capsule, read_capsule
from ._base import (FACTS, Checker, Outcome, Unreachable, capsule_facts, decided_device, decided_export, decided_import, defaults,
                    dlpack_kwargs, empty_aware, export, numpy_capsule, pointer, raised, release_tuple, request, run_child,
                    seen_as_decided, values_difference, with_c_exchange_api)

Explain = Callable[[dict[str, Any]], dict[str, Any]]


def negated_import(consume: Callable[[Any], Any], inp: dict[str, Any], want: Outcome) -> Outcome | None:
    """What ``consume`` (a consumer's from_dlpack) makes of a real negated
    torch view, for a case whose capsule is one (``neg``), with the values
    compared (``_base.values_difference``), read as the rules' silent
    difference where the import succeeded with other values; None for any
    other case. The view is of torch's ordinary vector; a case that names
    other facts (a capsule the consumer refuses for them) is made by hand,
    as any other case's."""
    if not inp.get("neg") or any(k in inp for k in FACTS):
        return None  # a capsule the consumer refuses for its facts is made by hand, as any other case's
    try:
        import torch
    except ImportError:
        raise Unreachable("needs torch to make a negated view") from None
    x = torch._neg_view(torch.arange(1.0, 7.0))
    try:
        y = consume(x)
    except Exception as e:
        return raised(e)
    got: Outcome = {"device": [int(v) for v in y.__dlpack_device__()], "copy": pointer(y) != pointer(x)}
    difference = values_difference(x, y)
    if difference:
        got["values"] = difference
    return seen_as_decided(want, got)


def numpy_reader(np: Any) -> Callable[[Any], Any] | None:
    """The function this numpy imports a producer with: ``np.from_dlpack``,
    or numpy 1.22's private ``np._from_dlpack``; None where it has neither.
    The runner's own means of making an array from a capsule, not a call a
    case checks (those call ``np.from_dlpack`` as a user does)."""
    return getattr(np, "from_dlpack", None) or getattr(np, "_from_dlpack", None)


@functools.lru_cache(maxsize=None)
def reads_versioned(np: Any) -> bool:
    """This numpy imports a ``dltensor_versioned`` capsule (numpy 2.1 on;
    before, ``ValueError: PyCapsule_GetPointer called with incorrect
    name``), asked of numpy itself."""
    read = numpy_reader(np)
    if read is None:
        return False
    try:
        read(CapsuleProducer(make_capsule((1, 0), versioned=True)))
    except Exception:  # any refusal: the runner then hands it unversioned capsules
        return False
    return True


def negative_strides(inp: dict[str, Any]) -> bool:
    """The case's capsule has a negative stride: an import torch 1.13-2.13
    abort the interpreter on, made in a child."""
    return any(s < 0 for s in inp.get("strides") or [])


def _numpy_dtype(np: Any, dtype: tuple[int, int, int]) -> Any:
    """The numpy dtype of a DLPack (code, bits, lanes): bool, int, uint,
    float or complex; Unreachable for one numpy has no dtype of."""
    code, bits, lanes = dtype
    kind = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}.get(code)
    if kind is None or lanes != 1 or bits % 8:
        raise Unreachable(f"needs an array of DLPack dtype {list(dtype)}, which numpy has no dtype of")
    return np.dtype(f"{kind}{bits // 8}")


def _read_only(x: Any) -> Any:
    x.flags.writeable = False
    return x


def _capsule(device: tuple[int, int] = (1, 0), *, versioned: bool = True) -> Any:
    """A producer of one capsule made by hand on device (versioned unless
    asked: torch 1.13 reads only ``dltensor``)."""
    return CapsuleProducer(make_capsule(device, versioned=versioned), device)


# --- numpy ------------------------------------------------------------------------


class NumpyChecker(Checker):
    library = "numpy"
    rulesets = ("numpy",)

    def __init__(self) -> None:
        import numpy

        self.np = numpy

    def array(self, inp: dict[str, Any]) -> Any:
        """The array the input describes: one numpy made, or one made from a
        capsule on origin_device (versioned, so writeable; the one
        __dlpack_device__ case on kDLCUDAHost reads the unversioned branch)."""
        np = self.np
        dev = tuple(inp.get("origin_device", [1, 0]))
        dtype = (inp.get("dtype_code", 2), inp.get("dtype_bits", 64), inp.get("dtype_lanes", 1))
        if dev == (1, 0):
            x = np.arange(6.0).astype(_numpy_dtype(np, dtype))
        else:
            unversioned = inp["call"] == "__dlpack_device__" and dev == (3, 0)
            facts: dict[str, Any] = {} if dtype == (2, 64, 1) else {"dtype": dtype, "shape": [6]}
            x = self.imported(dev, versioned=not unversioned, **facts)
        if not inp.get("writeable", True):
            x.flags.writeable = False
        return x

    def imported(self, device: tuple[int, int] = (1, 0), *, versioned: bool = True, **facts: Any) -> Any:
        """An array numpy imports from a capsule made by hand on device:
        versioned where asked and this numpy reads versioned capsules (2.1
        on), else unversioned; read by ``np.from_dlpack`` (numpy 1.22's
        ``np._from_dlpack``). Raises Unreachable where this numpy imports
        none, or refuses the capsule: a case on such an array cannot be
        made here."""
        read = numpy_reader(self.np)
        if read is None:
            raise Unreachable("needs a numpy that imports DLPack capsules (np.from_dlpack, numpy 1.22 on)")
        capsule = make_capsule(device, versioned=versioned and reads_versioned(self.np), **facts)
        try:
            return read(CapsuleProducer(capsule, device))
        except Exception as e:
            raise Unreachable(f"needs an array imported on {list(device)}, which this numpy refuses: "
                              f"{type(e).__name__}: {e}") from None

    def run(self, name: str, inp: dict[str, Any], rs: Any) -> tuple[Outcome, Outcome]:
        np = self.np
        call = inp.get("call")
        explanation = rs.explain(inp)
        if call == "__dlpack_device__":
            return decided_device(explanation), {"device": list(self.array(inp).__dlpack_device__())}
        if call == "__dlpack__":
            x = self.array(inp)
            return decided_export(explanation), export(x, dlpack_kwargs(inp), x.ctypes.data)
        if call == "request":
            # Looked up inside the call, as a user's np.from_dlpack(x) is:
            # numpy 1.22 has none, and its AttributeError is the outcome.
            return request(lambda *a, **k: np.from_dlpack(*a, **k), inp, explanation)
        if call == "from_dlpack":
            import sys

            read = numpy_reader(np)
            negated = negated_import(read, inp, decided_import(explanation)) if read is not None else None
            if negated is not None:
                return decided_import(explanation), negated
            dflt = defaults(rs)
            if "ml_dtypes" in dflt and inp.get("ml_dtypes", False) != ("ml_dtypes" in sys.modules):
                if inp.get("ml_dtypes"):
                    try:
                        import ml_dtypes  # noqa: F401  (what jax imports)
                    except ImportError:
                        raise Unreachable("needs ml_dtypes installed") from None
                else:  # a process that has not imported it (this one has: jax did)
                    return empty_aware(inp, decided_import(explanation),
                                       run_child({"kind": "import", "library": "numpy", "inp": inp, "dflt": dflt}))
            return empty_aware(inp, decided_import(explanation), self.import_(inp, dflt))
        raise Unreachable("not a call of the library: the rules' own refusal of an unknown call")

    def import_(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        """np.from_dlpack of the capsule the input describes: torch's where
        torch is here and makes it (unversioned kDLCPU), numpy's own where
        it makes that version, else one made by hand."""
        np = self.np
        dev = tuple(inp.get("capsule_device", dflt.get("capsule_device") or [1, 0]))
        versioned = inp.get("capsule", dflt.get("capsule") or "dltensor_versioned") == "dltensor_versioned"
        version = tuple(inp.get("capsule_version", dflt.get("capsule_version") or [1, 0]))
        own = read_capsule(numpy_capsule(np, (1, 0)))["version"]  # None: numpy makes no versioned capsule
        facts = capsule_facts(inp, dflt)
        if dev == (1, 0) and versioned and version == own and not facts:
            capsule = numpy_capsule(np, (1, 0))
        else:
            capsule = make_capsule(dev, versioned=versioned, version=version, **facts)
        pointer = read_capsule(capsule)["data"]
        try:
            y = np.from_dlpack(CapsuleProducer(capsule))
        except Exception as e:
            return raised(e)
        return {"device": list(y.__dlpack_device__()), "copy": y.ctypes.data != pointer}

    ARRAYS = ("np.arange(6.0)", "_read_only(np.arange(6.0))", "np.array([True, False, True])",
              "np.arange(4.0).astype(np.complex64)", "np.arange(4, dtype=np.uint16)", "np.array(3.0)",
              "np.zeros((0,))", "np.arange(8.0)[::2]", "np.arange(6.0).reshape(2, 3).T", "np.arange(8.0)[::-1]",
              "np.arange(8.0).reshape(2, 4)[:, ::-1]", "_imported()", "_imported((3, 0))")

    def namespace(self) -> dict[str, Any]:
        # _imported: an array numpy imported (np.from_dlpack(_capsule()),
        # unversioned where this numpy reads no versioned capsule).
        return {"np": self.np, "_read_only": _read_only, "_capsule": _capsule, "_imported": self.imported}

    def consume(self, x: Any, kwargs: dict[str, Any]) -> Any:
        return self.np.from_dlpack(x, **kwargs)

    def consumer_inputs(self) -> dict[str, Any]:
        import sys

        return {"ml_dtypes": "ml_dtypes" in sys.modules}

    def devices(self) -> list[Any]:
        return [None, "cpu"]


# --- torch ------------------------------------------------------------------------


class TorchChecker(Checker):
    library = "torch"
    rulesets = ("torch",)

    def __init__(self) -> None:
        import torch
        import torch.utils.dlpack  # noqa: F401

        self.torch = torch
        self.cuda = bool(torch.cuda.is_available())
        self.hip = bool(getattr(torch.version, "hip", None))
        self.gpu_build = bool(torch.version.cuda or torch.version.hip)
        self.git_build = getattr(torch.version, "git_version", "Unknown") != "Unknown"
        xpu = getattr(torch, "xpu", None)
        self.xpu_build = bool(xpu is not None and getattr(xpu, "_is_compiled", lambda: False)())
        name = getattr(torch._C, "_get_privateuse1_backend_name", lambda: "privateuseone")()
        self.privateuse1_backend = name != "privateuseone"
        # A CUDA build on a machine without an NVIDIA driver (every PyPI
        # wheel on a CPU machine): torch.cuda.is_available() is False.
        self.no_driver = self.gpu_build and not self.hip and not self.cuda
        # torch 1.12 and older call an imported capsule's deleter without
        # asking whether it has one (make_capsule's deleter).
        self.calls_any_deleter = release_tuple(torch.__version__) < (1, 13)

    #: Build facts of the rules, each with what a case of either value needs
    #: of this torch: (when the case says True, when it says False).
    BUILDS = (("gpu_build", "a CUDA or ROCm build of torch", "a CPU-only build of torch"),
              ("xpu_build", "an XPU build of torch", "a torch without an XPU build"),
              ("privateuse1_backend", "a registered PrivateUse1 backend",
               "a torch without a registered PrivateUse1 backend"),
              ("git_build", "a torch built from git (a PyPI wheel)",
               "a torch built from a source tarball (Debian's python3-torch)"))

    def _needs(self, inp: dict[str, Any], dflt: dict[str, Any], rs: Any) -> None:
        """Raises Unreachable for a case that needs a device or build this
        torch lacks, saying which. A case runs where its build facts are
        this torch's, or differ in none the rules decide on: a CPU-only
        build's answer to a CUDA target (Torch not compiled with CUDA
        enabled) runs on a CPU-only build, and a build without XPU's answer
        to device='xpu' on one without XPU, no device needed."""
        def eff(k: str) -> Any:
            return inp.get(k, dflt.get(k))

        if "hip" in dflt and bool(eff("hip")) != self.hip:
            raise Unreachable("needs a ROCm build of torch" if eff("hip") else "needs a torch that is not a ROCm build")
        call = inp.get("call")
        gpu_producer = tuple(inp.get("producer_device", [1, 0]))[0] in (2, 3, 10, 11, 13)
        # A build fact this torch differs in matters only where the rules
        # decide otherwise with this torch's value.
        for k, yes, no in self.BUILDS:
            if k in dflt and bool(eff(k)) != getattr(self, k) and \
                    rs.resolve(dict(inp, **{k: getattr(self, k)})) != rs.resolve(inp):
                raise Unreachable(f"needs {yes}" if eff(k) else f"needs {no}")
        # The case is a CPU-only build's answer, and this torch is one (the
        # loop above): a CUDA target raises before any device is touched.
        cpu_build = "gpu_build" in dflt and not eff("gpu_build") and not self.gpu_build
        # The case is a CUDA build's answer without a driver, and this torch
        # is one: a CUDA target fails at CUDA's initialisation, no device needed.
        no_driver = "cuda_driver" in dflt and not eff("cuda_driver")
        if no_driver and not self.no_driver:
            raise Unreachable("needs a CUDA build of torch on a machine without an NVIDIA driver")
        cpu_build = cpu_build or no_driver
        if eff("xla_on_cuda"):
            raise Unreachable("needs torch_xla on a CUDA device")
        gpu = "a ROCm device" if self.hip else "a CUDA device"
        t = inp.get("device_type", "cpu")
        if t == "cuda" or eff("pinned"):
            if not self.cuda:
                raise Unreachable(f"needs {gpu}")
            idx = inp.get("device_index") or 0
            if idx >= self.torch.cuda.device_count():
                raise Unreachable(f"needs {idx + 1} CUDA devices")
            if "current_device" in inp and inp["current_device"] != self.torch.cuda.current_device():
                raise Unreachable("needs another current CUDA device")
        elif t not in ("cpu", "meta"):
            raise Unreachable(f"needs a torch {t} device")
        asked = str(inp.get("device") or "").split(":")[0]
        dl = inp.get("dl_device") or [1, 0]
        # kDLCUDAHost (3) as dl_device is no device torch names: refused on
        # any torch, with or without a GPU.
        cuda_target = asked == "cuda" or (call == "__dlpack__" and dl[0] in (2, 13))
        if cuda_target and not self.cuda and not cpu_build:
            raise Unreachable(f"needs {gpu}")
        # device='xpu' on a build without XPU is refused before any device
        # is looked for: it runs where the case and this torch lack XPU.
        xpu_absent = asked == "xpu" and "xpu_build" in dflt and not eff("xpu_build") and not self.xpu_build
        if asked and asked not in ("cpu", "cuda", "meta") and not xpu_absent:
            raise Unreachable(f"needs a torch {asked} device")
        if call == "request" and gpu_producer and self.gpu_build and not self.cuda:
            raise Unreachable(f"needs {gpu}: torch.from_dlpack asks the current stream of a GPU producer")
        capsule = tuple(inp.get("capsule_device", [1, 0]))[0]
        if call == "from_dlpack" and capsule in (2, 13) and not (cpu_build and capsule == 2):
            raise Unreachable("a kDLCUDA capsule needs device memory behind it; the runner's are host memory")

    def tensor(self, inp: dict[str, Any]) -> Any:
        torch = self.torch
        t = inp.get("device_type", "cpu")
        if t == "cuda":
            t = f"cuda:{inp.get('device_index') or 0}"
        # torch 1.10 has no meta kernel for arange; a meta tensor holds no
        # numbers, so empty() is the same tensor on every release.
        x = torch.empty(6, device=t) if t == "meta" else torch.arange(6.0, device=t)
        if inp.get("dtype_code") == 6:
            x = x > 2  # a bool tensor
        if inp.get("pinned"):
            x = x.pin_memory()
        if inp.get("conj"):
            x = torch.arange(6.0, device=t).to(torch.complex64).conj()
        if inp.get("neg"):
            x = torch._neg_view(x)  # reads -x; its memory still holds x
        if inp.get("layout", "strided") == "sparse_coo":
            x = x.to_sparse()
        if inp.get("requires_grad"):
            x = x.requires_grad_()
        return x

    def wrapped(self, x: Any, inp: dict[str, Any]) -> Any:
        """x as the case hands it out: in a ReadOnlyTensorWrapper (torch 2.14
        on, an export-only view) where the case says so."""
        if inp.get("read_only_wrapper"):
            return self.torch.utils.dlpack.ReadOnlyTensorWrapper(x)
        return x

    def run(self, name: str, inp: dict[str, Any], rs: Any) -> tuple[Outcome, Outcome]:
        torch = self.torch
        dflt = defaults(rs)
        call = inp.get("call")
        if call not in ("__dlpack_device__", "__dlpack__", "request", "from_dlpack"):
            raise Unreachable("not a call of the library: the rules' own refusal of an unknown call")
        self._needs(inp, dflt, rs)
        explanation = rs.explain(inp)
        if call == "__dlpack_device__":
            x: Any = None
            try:
                x = self.wrapped(self.tensor(inp), inp)
                got: Outcome = {"device": [int(v) for v in x.__dlpack_device__()]}
            except Exception as e:
                got = raised(e)
            return with_c_exchange_api(decided_device(explanation), got, explanation,
                                       self.wrapped(self.torch.empty(0), inp), x)
        if call == "__dlpack__":
            t = self.tensor(inp)
            pointer = t.data_ptr() if t.layout == torch.strided else 0
            return decided_export(explanation), export(self.wrapped(t, inp), dlpack_kwargs(inp), pointer)
        if call == "request":
            code, device_id = inp.get("producer_device", [1, 0])
            if inp.get("dlpack_device_enum"):
                code = torch.utils.dlpack.DLDeviceType(code)  # as torch's and jax's __dlpack_device__ return it
            return request(torch.from_dlpack, inp, explanation, (code, device_id))
        negated = negated_import(torch.from_dlpack, inp, decided_import(explanation))
        if negated is not None:
            return decided_import(explanation), negated
        if negative_strides(inp):
            return empty_aware(inp, decided_import(explanation),
                               run_child({"kind": "import", "library": "torch", "inp": inp, "dflt": dflt}))
        return empty_aware(inp, decided_import(explanation), self.import_(inp, dflt))

    def import_(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        """torch.from_dlpack of the capsule the input describes: numpy's own
        where numpy makes it (unversioned kDLCPU), else one made by hand;
        with device=, copy= or a later attempt, handed out by a producer
        whose first attempt-1 __dlpack__ calls raise TypeError."""
        dev = tuple(inp.get("capsule_device", dflt.get("capsule_device") or [1, 0]))
        name = inp.get("capsule", dflt.get("capsule") or "dltensor")
        used = name.startswith("used_")
        versioned = name.removeprefix("used_") == "dltensor_versioned"
        version = tuple(inp.get("capsule_version", dflt.get("capsule_version") or [1, 0]))
        facts = capsule_facts(inp, dflt)
        if dev == (1, 0) and not versioned and not used and not facts:
            import numpy as np

            capsule = np.arange(6.0).__dlpack__()
        else:
            capsule = make_capsule(dev, versioned=versioned, version=version, used=used,
                                   deleter=self.calls_any_deleter, **facts)
        pointer = read_capsule(capsule)["data"] if not used else None
        kwargs = {k: inp[k] for k in ("device", "copy") if inp.get(k) is not None}
        attempt = inp.get("attempt", 1)
        source: Any = capsule
        if kwargs or attempt > 1:
            source = _Handing(capsule, dev, attempt - 1, inp.get("failed_message", "x"))
        try:
            y = self.torch.from_dlpack(source, **kwargs)
        except Exception as e:
            return raised(e)
        return {"device": _torch_device(y, self.hip), "copy": pointer is not None and y.data_ptr() != pointer}
    ARRAYS = ("torch.arange(6.0)", "torch.tensor([True, False])", "torch.arange(4.0).to(torch.complex64)",
              "torch.arange(4.0).to(torch.bfloat16)", "torch.tensor(3.0)", "torch.zeros(0)", "torch.arange(8.0)[::2]",
              "torch.arange(6.0).reshape(2, 3).T", "torch.arange(3.0).requires_grad_()",
              "(torch.arange(3.0) * 1j).conj()", "torch._neg_view(torch.arange(1.0, 4.0))",
              "(torch.arange(1.0, 4.0) * 1j).conj().imag", "torch.arange(3.0).to_sparse()",
              "torch.from_dlpack(_capsule(versioned=False))")

    def namespace(self) -> dict[str, Any]:
        return {"torch": self.torch, "_capsule": _capsule}

    def arrays(self) -> list[tuple[str, Any]]:
        out = super().arrays()
        if self.cuda:
            out.append(("torch.arange(6.0, device='cuda')", self.torch.arange(6.0, device="cuda")))
        return out

    def consume(self, x: Any, kwargs: dict[str, Any]) -> Any:
        return self.torch.from_dlpack(x, **kwargs)

    def devices(self) -> list[Any]:
        params = inspect.signature(self.torch.from_dlpack).parameters
        return [None, "cpu", "cuda"] if "device" in params else [None]

    def consumer_inputs(self) -> dict[str, Any]:
        return {"cuda_driver": False} if self.no_driver else {}


def _torch_device(y: Any, hip: bool) -> list[int]:
    """A tensor's device as DLPack writes it (a tensor on torch's hip
    device has no __dlpack_device__ in 1.13; an mps tensor's is kDLMetal)."""
    code = {"cpu": 1, "cuda": 10 if hip else 2, "hip": 10, "mps": 8, "xpu": 14, "privateuseone": 12, "maia": 17,
            "meta": 1}.get(y.device.type, -1)
    return [code, y.device.index or 0]


class _Handing:
    """A producer that hands out one capsule, after raising TypeError for
    its first ``failures`` __dlpack__ calls."""

    def __init__(self, capsule: Any, device: tuple[int, int], failures: int, message: str) -> None:
        self.capsule, self.device, self.failures, self.message = capsule, device, failures, message
        self.calls = 0

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device

    def __dlpack__(self, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls <= self.failures:
            raise TypeError(self.message)
        return self.capsule


# --- cupy -------------------------------------------------------------------------


class CupyChecker(Checker):
    """CuPy needs a CUDA or ROCm device for every array it makes: where it
    imports, each case runs as numpy's do, on its own arrays."""

    library = "cupy"
    rulesets = ("cupy",)

    def __init__(self) -> None:
        import cupy

        self.cupy = cupy
        try:
            self.devices_here = cupy.cuda.runtime.getDeviceCount()
        except Exception:
            self.devices_here = 0

    def run(self, name: str, inp: dict[str, Any], rs: Any) -> tuple[Outcome, Outcome]:
        if not self.devices_here:
            raise Unreachable("needs a CUDA device (every CuPy array lives on one)")
        cp = self.cupy
        call = inp.get("call")
        if inp.get("hip") or inp.get("managed") or inp.get("device_id", 0) >= self.devices_here:
            raise Unreachable("needs a ROCm build, managed memory or more devices")
        explanation = rs.explain(inp)
        with cp.cuda.Device(inp.get("device_id", 0)):
            x = cp.arange(6.0)
            if call == "__dlpack_device__":
                return decided_device(explanation), {"device": [int(v) for v in x.__dlpack_device__()]}
            if call == "__dlpack__":
                return decided_export(explanation), export(x, dlpack_kwargs(inp), x.data.ptr)
            if call == "request":
                return request(cp.from_dlpack, inp, explanation, tuple(inp.get("producer_device", [1, 0])))
        raise Unreachable("the runner does not make cupy capsules by hand")

    def arrays(self) -> list[tuple[str, Any]]:
        return [("cupy.arange(6.0)", self.cupy.arange(6.0))] if self.devices_here else []

    def consume(self, x: Any, kwargs: dict[str, Any]) -> Any:
        return self.cupy.from_dlpack(x, **kwargs)

    def devices(self) -> list[Any]:
        return [None]
