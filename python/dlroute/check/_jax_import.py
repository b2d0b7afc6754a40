"""The runner's jax-import side (:mod:`dlroute.check`): JAX as a consumer.

- tests.yaml's cases: ``request`` ones through ``jax.dlpack.from_dlpack`` of
  a producer that records how it is asked (its ``__dlpack_device__`` says
  the case's ``producer_device``, its ``str()`` is the case's
  ``array_str``), ``from_dlpack`` ones through ``from_dlpack`` of a real
  numpy array made to the case's facts (dtype, shape, strides, and a data
  pointer aligned to exactly ``data_alignment`` bytes). A case that needs
  a device, backend or second device this process lacks is unreachable.
- sweeps: real producers made here (numpy, torch where it imports, and jax
  itself; 64-byte aligned and not; dtypes; transposed, negative, gapped and
  zero strides; 0-d and empty; read-only), each into ``jax.dlpack.from_dlpack``
  and ``jax.numpy.from_dlpack`` with every ``copy=`` and ``device=`` (none,
  this process's device, the string ``"cpu"``). The rules decide the
  request, the real producer answers the keywords they name (and a
  TypeError is the failed message of the next attempt), and the rules
  decide the import from the capsule the producer made: its device, kind,
  dtype, shape, strides and alignment. A producer that refuses the
  request's keywords (torch's ``requires_grad``) decides nothing of jax's
  and is left out. Where the rules declare ``keywords`` (jax 0.4.20 to
  0.4.26, whose from_dlpack takes neither keyword), the first producer is
  also asked with ``device=None`` and ``copy=None`` passed; where they
  declare ``called``, ``jnp.from_dlpack`` is named to them as the function
  called (before 0.4.26 it takes the legacy path).

Keywords are passed in from_dlpack's order, ``device`` before ``copy`` (a
release that takes neither names the first in its TypeError), after those
a case names in ``keywords``; a keyword ``keywords`` names is passed even as
None.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Iterable

from .._capsules import (CapsuleProducer, DLDataType, DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLTensor,
                        _get_name, _get_pointer, _keep, _new)
from ._base import (Outcome, Recorder, Unreachable, _as_json, as_reported, decided_import, pointer, raised,
                    run_child, seen_as_decided, values, values_difference)

COPIES = [None, True, False]

#: numpy's dtype of each DLPack (code, bits) the cases state.
DTYPES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
          (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
          (2, 16): "float16", (2, 32): "float32", (2, 64): "float64",
          (5, 64): "complex64", (5, 128): "complex128", (6, 8): "bool"}


def alignment(pointer: int) -> int:
    """The largest power of two at most 64 that divides pointer."""
    a = 64
    while a > 1 and pointer % a:
        a //= 2
    return a


def capsule_facts(capsule: Any) -> dict[str, Any]:
    """What an unused capsule says of its array, as jax-import's inputs
    name them, with its device and kind."""
    name = _get_name(capsule).decode()
    p = _get_pointer(capsule, name.encode())
    m: Any = (DLManagedTensorVersioned if name == "dltensor_versioned" else DLManagedTensor).from_address(p)
    t = m.dl_tensor
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = [t.strides[i] for i in range(t.ndim)] if t.strides else None
    return {"capsule_device": [t.device.device_type, t.device.device_id], "capsule": name,
            "dtype_code": t.dtype.code, "dtype_bits": t.dtype.bits, "shape": shape, "strides": strides,
            "data_alignment": alignment((t.data or 0) + t.byte_offset), "data": (t.data or 0) + t.byte_offset}


def dtype_capsule(code: int, bits: int, lanes: int) -> Any:
    """An unversioned kDLCPU capsule of four elements of any DLPack dtype,
    64-byte aligned, made by hand (no deleter: only for a consumer that
    refuses it before taking it)."""
    import ctypes

    import numpy as np

    arr = np.zeros(64 + 4 * 32, np.uint8)
    shape, strides = (ctypes.c_int64 * 1)(4), (ctypes.c_int64 * 1)(1)
    t = DLTensor(arr.ctypes.data + (-arr.ctypes.data) % 64, DLDevice(1, 0), 1, DLDataType(code, bits, lanes),
                 shape, strides, 0)
    m = DLManagedTensor(t, None, None)
    _keep.extend([arr, shape, strides, m])
    return _new(ctypes.addressof(m), b"dltensor", None)


def make_array(np: Any, code: int, bits: int, shape: list[int], strides: list[int] | None, align: int) -> Any:
    """A numpy array of the dtype (code, bits), shape and strides (in
    elements; None: C order), whose data pointer is aligned to exactly
    ``align`` bytes (64: at least 64), holding distinct values."""
    dt = np.dtype(DTYPES[(code, bits)])
    item = dt.itemsize
    if strides is None:
        strides, step = [], 1
        for n in reversed(shape):
            strides.insert(0, step)
            step *= max(n, 1)
    live = [(n, s) for n, s in zip(shape, strides) if n > 0]
    empty = len(live) < len(shape)
    lo = 0 if empty else sum((n - 1) * s for n, s in live if s < 0)
    hi = 0 if empty else sum((n - 1) * s for n, s in live if s > 0)
    buf = np.zeros((hi - lo + 1) * item + 256, np.uint8)
    start = (-buf.ctypes.data) % 64 + -(-(-lo * item) // 64) * 64 + (align % 64)
    # distinct values (0, 1, 2, ... in memory order), so that an import
    # that reads the memory in another order reads other values
    span = np.ndarray((hi - lo + 1,), dtype=dt, buffer=buf, offset=start + lo * item)
    span[...] = (np.arange(hi - lo + 1) % (2 if dt.kind == "b" else 97)).astype(dt)
    first = np.ndarray((1,), dtype=dt, buffer=buf, offset=start)
    return np.lib.stride_tricks.as_strided(first, shape=tuple(shape), strides=tuple(s * item for s in strides))


def _made(x: Any, y: Any) -> Outcome:
    """What jax made of x: y's device, whether it shares x's memory, and,
    where y does not read as x does, ``"values"`` saying how."""
    out: Outcome = {"device": [int(c) for c in y.__dlpack_device__()], "copy": pointer(y) != pointer(x)}
    difference = values_difference(x, y)
    if difference:
        out["values"] = difference
    return out


class _Producer(Recorder):
    """A recording producer whose str() is the case's array_str."""

    def __init__(self, failures: int, fail: str, device: tuple[int, int], text: str) -> None:
        super().__init__(failures, fail, device)
        self.text = text

    def __str__(self) -> str:
        return self.text


class ImportChecks:
    """jax-import's cases and sweeps, for JaxChecker (self.jax, self.jnp,
    self.xla_bridge)."""

    jax: Any
    jnp: Any
    xla_bridge: Any

    def _here(self) -> dict[str, Any]:
        return {"backends": list(self.xla_bridge.backends()), "x64": bool(self.jax.config.read("jax_enable_x64"))}

    def _device(self, value: Any) -> Any:
        """The jax device a case's device names (its repr), or the string
        as it is; Unreachable where this process has no such device."""
        if value is None or not isinstance(value, str) or "Device(id=" not in value:
            return value
        for d in self.jax.devices():
            if repr(d) == value:
                return d
        raise Unreachable(f"needs the jax device {value} (this process has {', '.join(map(repr, self.jax.devices()))})")

    def _kwargs(self, inp: dict[str, Any]) -> dict[str, Any]:
        """from_dlpack's keywords for a case: those it names in keywords
        first, in that order and even as None, then device and copy where
        given."""
        kwargs: dict[str, Any] = {k: None for k in inp.get("keywords", []) if k in ("device", "copy")}
        device = self._device(inp.get("device"))
        n = inp.get("sharding_devices", 0)
        if n > 1:
            raise Unreachable(f"needs a Sharding over {n} devices")
        if n == 1:
            from jax.sharding import SingleDeviceSharding

            device = SingleDeviceSharding(device if device is not None else self.jax.devices()[0])
        if device is not None:
            kwargs["device"] = device
        if inp.get("copy") is not None:
            kwargs["copy"] = inp["copy"]
        return kwargs

    def _function(self, inp: dict[str, Any]) -> Callable[..., Any]:
        """The from_dlpack the case calls (the input ``called``)."""
        if inp.get("called", "jax.dlpack.from_dlpack") == "jnp.from_dlpack":
            return self.jnp.from_dlpack
        return self.jax.dlpack.from_dlpack

    def run_import(self, inp: dict[str, Any], rs: Any) -> tuple[Outcome, Outcome]:
        explanation = rs.explain(inp)
        here = self._here()
        call = inp.get("call")
        if call not in ("request", "from_dlpack"):
            raise Unreachable("not a call of the library: the rules' own refusal of an unknown call")
        if "backends" in inp and inp["backends"] != here["backends"]:
            raise Unreachable(f"states the backends {inp['backends']}; this jax has {here['backends']}")
        if inp.get("neg") and rs.resolve(dict(inp, neg=False)) != rs.resolve(inp):
            # The runner's capsules are numpy's memory, which has no negative
            # bit; torch -> jax exchanges run a real negated view.
            raise Unreachable("needs a torch negated view's capsule (the exchanges from torch run one)")
        platform = values(explanation).get("producer_platform")
        if "backends" not in inp and platform and platform not in here["backends"]:
            raise Unreachable(f"needs a jax with the {platform} backend (this one has {here['backends']})")
        with self._x64(inp.get("x64", False)):
            if call == "request":
                return self._request(inp, explanation)
            want = decided_import(explanation)
            return want, seen_as_decided(want, self._import(inp, explanation["decision"]))

    def _x64(self, on: bool) -> Any:
        jax = self.jax

        class Scope:
            def __enter__(self) -> None:
                self.was = bool(jax.config.read("jax_enable_x64"))
                jax.config.update("jax_enable_x64", on)

            def __exit__(self, *exc: Any) -> None:
                jax.config.update("jax_enable_x64", self.was)

        return Scope()

    def _request(self, inp: dict[str, Any], explanation: dict[str, Any]) -> tuple[Outcome, Outcome]:
        """As _arrays.request: the calls of a recording producer, and
        the request the rules decide."""
        attempt = inp.get("attempt", 1)
        device = as_reported(inp, tuple(inp.get("producer_device", [1, 0])))
        producer = _Producer(attempt - 1, inp.get("failed_message", ""), device, inp.get("array_str", ""))  # type: ignore[arg-type]
        kwargs = self._kwargs(inp)
        decision, vals = explanation["decision"], values(explanation)
        try:
            self._function(inp)(producer, **kwargs)
            error: Outcome | None = None
        except Exception as e:
            error = raised(e)
        got: Outcome = {"calls_dlpack_device": producer.device_calls > 0}
        want: Outcome = {"calls_dlpack_device": bool(vals.get("calls_dlpack_device"))}
        if "error" in decision:
            want.update({"raise": [decision["error"]["type"], decision["error"]["message"]], "calls": attempt - 1})
            got.update(error or {"raise": None})
            got["calls"] = len(producer.calls)
            return want, got
        want.update({"keywords": vals.get("request_keywords"), "kwargs": vals.get("request_kwargs")})
        if len(producer.calls) < attempt:
            got.update(error or {})
            got["calls"] = len(producer.calls)
        else:
            call = producer.calls[attempt - 1]
            got.update({"keywords": [k for k, _ in call], "kwargs": {k: _as_json(v) for k, v in call}})
        return want, got

    def _import(self, inp: dict[str, Any], decided: dict[str, Any]) -> Outcome:
        import numpy as np

        for key in ("producer_device", "capsule_device"):
            if list(inp.get(key, [1, 0])) != [1, 0]:
                raise Unreachable(f"needs a producer on {inp[key]}: this process has only CPU memory")
        dtype = (inp.get("dtype_code", 2), inp.get("dtype_bits", 32))
        lanes = inp.get("dtype_lanes", 1)
        kwargs = self._kwargs(inp)
        if dtype not in DTYPES or lanes != 1:
            if "error" not in decided:
                raise Unreachable(f"numpy makes no array of DLPack dtype {dtype} with {lanes} lane(s), and jax "
                                  "would keep a capsule made by hand, which nothing frees")
            # Refused before jax takes the capsule, the rules say. Were they
            # wrong, jax would keep a capsule with no deleter and abort the
            # interpreter freeing it (std::bad_function_call): in a child.
            return run_child({"kind": "method", "library": "jax", "method": "import_by_hand", "args": [inp]})
        x = make_array(np, *dtype, list(inp.get("shape", [8])), inp.get("strides"), inp.get("data_alignment", 64))
        try:
            y = self._function(inp)(x, **kwargs)
        except Exception as e:
            return raised(e)
        return _made(x, y)

    def import_by_hand(self, inp: dict[str, Any]) -> Outcome:
        """from_dlpack of a capsule made by hand of the case's dtype (one no
        numpy array has), which jax should refuse: its exception, or
        ``{"device": None}`` where it took it. Run in a child (run_child)."""
        dtype = (inp.get("dtype_code", 2), inp.get("dtype_bits", 32))
        with self._x64(inp.get("x64", False)):
            try:
                self._function(inp)(CapsuleProducer(dtype_capsule(*dtype, inp.get("dtype_lanes", 1))),
                                    **self._kwargs(inp))
            except Exception as e:
                return raised(e)
            return {"device": None}

    # --- real producers ---

    def producers(self) -> list[tuple[str, Callable[[], Any]]]:
        """Real arrays made here, each by a function (a fresh array per call)."""
        import numpy as np

        jnp = self.jnp
        out: list[tuple[str, Callable[[], Any]]] = []
        def numpy_array(code: int, bits: int, shape: list[int], strides: list[int] | None,
                        align: int) -> Callable[[], Any]:
            return lambda: make_array(np, code, bits, shape, strides, align)

        for (code, bits), align in itertools.product([(2, 32), (2, 64), (6, 8), (5, 64), (5, 128), (0, 64), (2, 16),
                                                      (1, 8)], [64, 16]):
            out.append((f"numpy {DTYPES[(code, bits)]}[8] {align}-byte aligned",
                        numpy_array(code, bits, [8], None, align)))
        layouts: list[tuple[str, list[int], list[int] | None]] = [
            ("transposed", [3, 2], [1, 3]), ("reversed", [8], [-1]), ("every other", [4], [2]),
            ("broadcast", [2, 4], [4, 0]), ("0-d", [], []), ("empty", [0], None),
            ("empty, odd strides", [0, 2], [5, -2]), ("one row", [1, 8], [99, 1])]
        for what, shape, strides in layouts:
            for align in (64, 32):
                out.append((f"numpy float32 {what} {shape} {strides} {align}-byte aligned",
                            numpy_array(2, 32, shape, strides, align)))
        for align in (64, 32):  # 64 bits, which jax converts to 32 with x64 off
            out.append((f"numpy float64 transposed [3, 2] [1, 3] {align}-byte aligned",
                        numpy_array(2, 64, [3, 2], [1, 3], align)))

        def read_only() -> Any:
            x = make_array(np, 2, 32, [8], None, 64)
            x.flags.writeable = False
            return x

        out += [("numpy float32[8] read-only", read_only), ("np.arange(6.0)", lambda: np.arange(6.0))]
        try:
            import torch
        except Exception:  # torch is optional here: its producers are left out
            pass
        else:
            out += [("torch.arange(8.0)", lambda: torch.arange(8.0)),
                    ("torch.arange(64.0)[1:9] (4-byte aligned)", lambda: torch.arange(64.0)[1:9]),
                    ("torch.ones(8, bool)", lambda: torch.ones(8, dtype=torch.bool)),
                    ("torch.ones(8, bfloat16)", lambda: torch.ones(8, dtype=torch.bfloat16)),
                    ("torch.ones(8, float64)", lambda: torch.ones(8, dtype=torch.float64)),
                    ("torch.ones(3, 2).t()", lambda: torch.ones(3, 2).t()),
                    ("torch.arange(8.0)[::2]", lambda: torch.arange(8.0)[::2]),
                    ("torch.ones(1).expand(4)", lambda: torch.ones(1).expand(4))]
            if hasattr(torch, "float8_e4m3fn"):
                out.append(("torch.zeros(8, float8_e4m3fn)", lambda: torch.zeros(8, dtype=torch.float8_e4m3fn)))
        out += [("jnp.arange(8.0)", lambda: jnp.arange(8.0)), ("jnp.ones((3, 2))", lambda: jnp.ones((3, 2))),
                ("jnp.zeros(())", lambda: jnp.zeros(()))]
        return out

    def import_sweeps(self, rs: Any) -> Iterable[tuple[str, Outcome, Outcome]]:
        devices = [None, self.jax.devices()[0], "cpu"]
        consumers = [("jax.dlpack.from_dlpack", self.jax.dlpack.from_dlpack), ("jnp.from_dlpack", self.jnp.from_dlpack)]
        declared = {i["name"] for i in rs.inputs}
        producers = self.producers()
        calls = [(p, {k: v for k, v in (("device", device), ("copy", copy)) if v is not None})
                 for p, copy, device in itertools.product(producers, COPIES, devices)]
        if "keywords" in declared:  # passed as None: a TypeError where from_dlpack takes no keyword
            calls += [(producers[0], kw) for kw in ({"device": None}, {"copy": None}, {"device": None, "copy": None},
                                                    {"copy": None, "device": None})]
        for ((what, make), kwargs), (fname, fn) in itertools.product(calls, consumers):
            x = make()
            want = self._decided(rs, x, kwargs, fname if "called" in declared else None, "keywords" in declared)
            if want is None:
                continue
            try:
                got = seen_as_decided(want, _made(x, fn(x, **kwargs)))
            except Exception as e:
                got = raised(e)
            yield f"{fname}({what}{''.join(f', {k}={v!r}' for k, v in kwargs.items())})", want, got

    def _decided(self, rs: Any, x: Any, kwargs: dict[str, Any], called: str | None,
                 keywords: bool) -> Outcome | None:
        """The rules' outcome for jax's from_dlpack(x, **kwargs): the request
        decided, asked of the real producer, and the import decided from
        its capsule; None where the producer refuses (nothing of jax's).
        ``called`` names the function to rules that declare it; ``keywords``:
        they declare the keywords passed."""
        code, device_id = x.__dlpack_device__()
        base: dict[str, Any] = dict(self._here(), producer_device=[int(code), int(device_id)], copy=kwargs.get("copy"))
        device = kwargs.get("device")
        if device is not None:
            base["device"] = repr(device) if not isinstance(device, str) else device
        if called is not None:
            base["called"] = called
        if keywords:
            base["keywords"] = list(kwargs)
        base["array_str"] = str(x)
        failed = ""
        for attempt in range(1, 9):
            exp = rs.explain(dict(base, call="request", attempt=attempt, failed_message=failed))
            d = exp["decision"]
            if "error" in d:
                return {"raise": [d["error"]["type"], d["error"]["message"]]}
            vals = values(exp)
            kw = {k: tuple(v) if isinstance(v, list) else v for k, v in (vals.get("request_kwargs") or {}).items()}
            try:
                capsule = x.__dlpack__(**kw)
            except TypeError as e:
                failed = str(e)
                continue
            except Exception:
                return None
            facts = capsule_facts(capsule)
            data = facts.pop("data")
            inp = dict(base, call="from_dlpack", attempt=attempt, **facts)
            inp.pop("array_str")
            inp.pop("backends")
            out = decided_import(rs.explain(inp))
            if "copy" in out:
                out["copy"] = out["copy"] or data != pointer(x)
            return out
        return None
