"""Which libraries exchange: ask before you exchange.

``torch.from_dlpack(x)`` either works, copies, or raises; which one depends
on both libraries' code, and users learn it by running it. dlroute decides
it from the two libraries' rule sets, chained through the four calls of an
exchange (the consumer's request, the producer's ``__dlpack_device__`` and
``__dlpack__``, the consumer's import: rules/README.md, "Libraries on both
sides"), as ``dlroute interop`` does:

>>> import dlroute
>>> with dlroute.load() as eng:
...     cell = eng.interop("jax", "torch", array={"platform": "gpu", "platform_version": "<unknown>"})
>>> cell.outcome, cell.error_type, cell.error_message
('error', 'BufferError', 'Unknown GPU platform for __dlpack__: <unknown>')

- :meth:`dlroute.Engine.interop` and :meth:`dlroute.Engine.interop_matrix`:
  a cell, or the matrix, from rule-set refs and the producer's inputs.
  ``cell.json`` is byte for byte the line ``dlroute interop --json``
  writes for that cell.
- :func:`ask`: the cell for a real array, its library and inputs read by
  :func:`array_of`, against the releases installed here.

Nothing is carried out: no array is touched but to read where it lives.
"""

from __future__ import annotations

import builtins
import functools
import json
import sys
import threading
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Sequence

from . import _encode, _native
from .errors import EvaluationError, InputError, NoRuleSetError, release_warning

if TYPE_CHECKING:
    from ._engine import Engine

__all__ = ["Cell", "Outcome", "ask", "array_of", "installed_ref"]

#: What an exchange comes to: the consumer's array shares the producer's
#: memory; the producer's ``__dlpack__`` copied; the consumer copied after
#: the import; each copied once; or an exception reaches the user.
Outcome = Literal["in_place", "producer_copy", "consumer_copy", "both_copy", "error"]


@dataclass(frozen=True)
class Cell:
    """One exchange decided: ``consumer.from_dlpack(x, **kwargs)`` for the
    producer's array ``x``.

    Attributes:
        producer, consumer: the rule-set refs that decided, such as
            ``"jax@v3"`` and ``"torch@v1"``.
        platform, memory: the array as the matrix's rows name it, such as
            ``'gpu "cuda 12030"'`` and ``"pinned_host"`` (``"-"``: none).
        array: the producer's inputs that describe the array, the defaults
            of those left out filled in.
        outcome: ``"in_place"``, ``"producer_copy"``, ``"consumer_copy"``,
            ``"both_copy"`` or ``"error"``.
        error_type, error_message: the exception the user sees, by its
            Python type's name (``"BufferError"``) and its exact message;
            None unless ``outcome`` is ``"error"``.
        device: ``(device_type_code, device_id)`` of the consumer's array,
            as ``__dlpack_device__`` writes a device; None for an error.
        steps: each call asked, in order: ``{"call", "attempt", "input",
            "decision", ...}``; the last decided the cell.
        checked: what each side's versions were checked against:
            ``{"run": bool, "producer": [...], "consumer": [...]}``, each
            version ``{"ruleset", "checked": {release: "run" | "source"},
            "release_warning"?}`` (jax's producer is two: its
            ``__dlpack_device__``'s and jax-export's). ``run`` (also
            :attr:`run`) is True where every version was run here against
            a real release and no ref named a release outside what was
            checked.
        json: the cell as ``dlroute interop --json`` writes it, without
            the newline.
    """

    producer: str
    consumer: str
    platform: str
    memory: str
    array: dict[str, Any]
    outcome: Outcome
    error_type: str | None
    error_message: str | None
    device: tuple[int, int] | None
    steps: list[dict[str, Any]] = field(repr=False)
    checked: dict[str, Any] = field(repr=False)
    json: str = field(repr=False)

    @classmethod
    def from_json(cls, line: str) -> Cell:
        """The cell of a line of ``dlroute interop --json``."""
        c = json.loads(line)
        err = c.get("error") or {}
        dev = c.get("device")
        return cls(c["producer"], c["consumer"], c["array"]["platform"], c["array"]["memory"],
                   c["array"]["input"], c["outcome"], err.get("type"), err.get("message"),
                   (dev["device_type_code"], dev["device_id"]) if dev else None, c["steps"],
                   c.get("checked") or {}, line)

    @property
    def run(self) -> bool:
        """Both sides' versions were run here against a real release of
        theirs, and no ref named a release outside what was checked."""
        return bool(self.checked.get("run"))

    @property
    def release_warnings(self) -> list[dict[str, Any]]:
        """The engine's warnings for the refs that named a release no
        version was checked against, producer's first (the details of a
        :class:`dlroute.UncheckedReleaseWarning`)."""
        sides = self.checked.get("producer", []) + self.checked.get("consumer", [])
        return [v["release_warning"] for v in sides if v.get("release_warning")]

    @property
    def ok(self) -> bool:
        """The exchange makes an array: ``outcome`` is not ``"error"``."""
        return self.outcome != "error"

    @property
    def copies(self) -> bool:
        """The exchange copies the data (by either side)."""
        return self.outcome in ("producer_copy", "consumer_copy", "both_copy")

    @property
    def decider(self) -> dict[str, Any]:
        """The step that decided the cell: the last."""
        return self.steps[-1]

    def exception(self) -> Exception | None:
        """The exception ``from_dlpack`` raises, as an object (not raised):
        the builtin of ``error_type`` (``BufferError``, ``TypeError``,
        ...) with the rules' message, else a
        :class:`dlroute.routing.DecidedError`; None for an exchange that
        works. Its ``decision`` attribute is the deciding step's."""
        if self.error_type is None:
            return None
        decision = self.decider["decision"]
        cls = getattr(builtins, self.error_type, None)
        if isinstance(cls, type) and issubclass(cls, Exception) and not issubclass(cls, Warning):
            exc: Exception = cls(self.error_message)
        else:
            from .routing import DecidedError

            exc = DecidedError(self.error_type, self.error_message or "", decision)
        exc.decision = decision  # type: ignore[attr-defined]
        return exc

    def __str__(self) -> str:
        """The cell as ``dlroute interop``'s table shows it, uncut."""
        if self.outcome == "error":
            msg = " ".join((self.error_message or "").split())
            return f"{self.error_type}: {msg}" if msg else str(self.error_type)
        return {"in_place": "in place", "producer_copy": "copy (producer)",
                "consumer_copy": "copy (consumer)", "both_copy": "copy (both)"}[self.outcome]


# Answers by request, per engine: a cell costs the library a few
# milliseconds, and a process asks about a handful of arrays.
_answers: weakref.WeakKeyDictionary[Any, dict[bytes, str]] = weakref.WeakKeyDictionary()
_answers_lock = threading.Lock()


def _kwargs(copy: bool | None, device: Any) -> dict[str, Any]:
    if copy is not None and not isinstance(copy, bool):
        raise TypeError(f"copy is True, False or None, not {copy!r}")
    out: dict[str, Any] = {}
    if copy is not None:
        out["copy"] = copy
    out.update(_device_kwargs(device))
    return out


def _is_jax_device(d: Any) -> bool:
    return type(d).__module__.split(".")[0] in ("jax", "jaxlib") and hasattr(d, "platform") and hasattr(d, "id")


def _device_kwargs(device: Any) -> dict[str, Any]:
    """from_dlpack's ``device`` as the rules read it: a JAX Device as its
    repr (``"CpuDevice(id=0)"``, what jax-import compares and prints); a
    JAX Sharding as its one device, with ``sharding_devices`` (jax refuses
    a Sharding over more than one); anything else as it is."""
    if device is None:
        return {}
    devices = getattr(device, "device_set", None)
    if devices is not None and type(device).__module__.split(".")[0] in ("jax", "jaxlib"):
        out: dict[str, Any] = {"sharding_devices": len(devices)}
        if len(devices) == 1:
            out["device"] = repr(next(iter(devices)))
        return out
    if _is_jax_device(device):
        return {"device": repr(device)}
    return {"device": device}


def _jax_here() -> dict[str, Any]:
    """What jax's from_dlpack reads of this process, as jax-import's inputs
    name them: the backends it has and whether x64 is on; nothing where jax
    is not imported (the rules' defaults: a jax that has the producer's
    device, x64 off)."""
    jax = sys.modules.get("jax")
    if jax is None:
        return {}
    from jax._src import xla_bridge

    return {"backends": list(xla_bridge.backends()), "x64": bool(jax.config.read("jax_enable_x64"))}


def _request(entry: str, engine: Engine, data: bytes, what: str) -> str:
    from ._engine import MEMO_SIZE

    with _answers_lock:
        memo = _answers.setdefault(engine, {})
        hit = memo.get(data)
    if hit is not None:
        return hit
    status, out = _native.call(entry, engine._handle, data)
    if status == _native.OK:
        text = out.decode()
        with _answers_lock:
            if len(memo) >= MEMO_SIZE:
                memo.clear()
            memo[data] = text
        return text
    if status in (_native.INPUT_ERROR, _native.EVAL_ERROR, _native.NO_RULESET):
        e = _native.parse(out) or {}
        cls = {_native.INPUT_ERROR: InputError, _native.EVAL_ERROR: EvaluationError}.get(status, NoRuleSetError)
        raise cls(e.get("code", _native.STATUS_NAMES[status]), e.get("message", what), e)
    raise _native.fail(status, out, what)


def _dumps(req: dict[str, Any]) -> bytes:
    """The request's JSON; a field of the array or kwargs with no JSON form
    is an InputError naming it (_encode). A ref with a lone surrogate goes
    as the bytes it would be, and the library answers invalid_utf8."""
    try:
        return _encode.dumps(req).encode()
    except (TypeError, ValueError, RecursionError):
        pass
    if "array" in req:
        _encode.encode_fields(req["array"], lambda k: f"the array: input {k}")
    if "kwargs" in req:
        _encode.encode_fields(req["kwargs"], lambda k: f"from_dlpack's {k}")
    return _encode.dumps(req).encode("utf-8", "surrogatepass")


def _warn(cells: list[Cell], strict: bool, stacklevel: int) -> None:
    """Warns once of each release warning of cells, or under strict raises
    the first as NoRuleSetError."""
    seen = set()
    for c in cells:
        for w in c.release_warnings:
            key = (w.get("ref"), w.get("ruleset"))
            if key not in seen:
                seen.add(key)
                release_warning(w, strict, stacklevel + 1)


def cell(engine: Engine, producer: str, consumer: str, *, array: dict[str, Any] | None = None,
         copy: bool | None = None, device: Any = None, strict: bool = False, stacklevel: int = 1,
         consumer_inputs: dict[str, Any] | None = None) -> Cell:
    """:meth:`dlroute.Engine.interop`; ``consumer_inputs`` are other inputs
    of the consumer's rule set, each it declares, that say what the
    consumer's process is (torch's ``cuda_driver``, numpy's ``ml_dtypes``)."""
    if not isinstance(producer, str) or not isinstance(consumer, str):
        raise TypeError("producer and consumer are rule-set refs (str), such as 'jax' or 'torch@v1'")
    if array is not None and not isinstance(array, dict):
        raise TypeError(f"array is a dict of the producer's inputs, not {type(array).__name__}")
    req: dict[str, Any] = {"producer": producer, "consumer": consumer}
    if array:
        req["array"] = array
    kwargs = {**(consumer_inputs or {}), **_kwargs(copy, device)}
    if kwargs:
        req["kwargs"] = kwargs
    what = f"Engine.interop({producer!r}, {consumer!r})"
    c = Cell.from_json(_request("dlroute_interop_json", engine, _dumps(req), what))
    _warn([c], strict, stacklevel + 1)
    return c


def matrix(engine: Engine, producers: Sequence[str] | None = None, consumers: Sequence[str] | None = None,
           *, copy: bool | None = None, device: Any = None, strict: bool = False, stacklevel: int = 1) -> list[Cell]:
    """:meth:`dlroute.Engine.interop_matrix`."""
    req: dict[str, Any] = {}
    for key, refs in (("producers", producers), ("consumers", consumers)):
        if refs is None:
            continue
        if isinstance(refs, str) or not all(isinstance(r, str) for r in refs):
            raise TypeError(f"{key} is a list of rule-set refs, not {refs!r}")
        req[key] = list(refs)
    kwargs = _kwargs(copy, device)
    if kwargs:
        req["kwargs"] = kwargs
    text = _request("dlroute_interop_matrix_json", engine, _dumps(req), "Engine.interop_matrix()")
    cells = [Cell.from_json(line) for line in text.splitlines()]
    _warn(cells, strict, stacklevel + 1)
    return cells


# --- real arrays -------------------------------------------------------------


def array_of(x: Any) -> tuple[str, dict[str, Any]]:
    """The producer library of the array ``x`` and the inputs of its rule
    set that describe ``x``, read from ``x`` as the library itself reads
    them (no library is imported):

    - a JAX array (or anything with its attributes): ``"jax"``, the inputs
      of :func:`dlroute.arrays.inputs_of` (``platform``,
      ``platform_version``, ``memory_kind``, ``local_hardware_id``,
      ``shards``);
    - a torch tensor: ``"torch"``, ``device_type`` and ``device_index``
      (``x.device``), ``pinned`` (``x.is_pinned()``), ``hip``
      (``torch.version.hip`` is set), ``requires_grad``, ``conj``
      (``x.is_conj()``) and ``layout`` (``"strided"``, ...);
    - a ``numpy.ndarray``: ``"numpy"``, ``origin_device`` (its
      ``__dlpack_device__()``: where the memory of an array made from a
      capsule lives) and ``writeable``;

    and, for each, its facts (:func:`dlroute.arrays.facts_of`: dtype,
    shape, strides, ...), which reach every call of both sides whose rule
    set reads them.

    Raises:
        TypeError: ``x`` is none of these; name its library's inputs
            yourself with :meth:`dlroute.Engine.interop`'s ``array``.
    """
    from .arrays import facts_of

    library, inputs = _library_inputs(x)
    facts = facts_of(x)
    if library == "numpy":
        facts.pop("writeable")  # numpy's own input, read above
    return library, {**inputs, **facts}


def _library_inputs(x: Any) -> tuple[str, dict[str, Any]]:
    from .arrays import _jax_inputs, is_jax_like

    if is_jax_like(x):
        return "jax", _jax_inputs(x)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        try:
            pinned = bool(x.is_pinned())
        except RuntimeError:  # a build without an accelerator may not say
            pinned = False
        return "torch", {
            "device_type": x.device.type, "device_index": x.device.index, "pinned": pinned,
            "hip": bool(getattr(torch.version, "hip", None)), "requires_grad": bool(x.requires_grad),
            "conj": bool(x.is_conj()), "layout": str(x.layout).removeprefix("torch."),
        }
    np = sys.modules.get("numpy")
    if np is not None and isinstance(x, np.ndarray):
        code, device_id = x.__dlpack_device__()
        return "numpy", {"origin_device": [int(code), int(device_id)], "writeable": bool(x.flags.writeable)}
    raise TypeError(f"dlroute cannot tell the DLPack library of a {type(x).__module__}.{type(x).__qualname__}: "
                    "it reads JAX arrays, torch tensors and numpy arrays; for another, name its rule set and "
                    "inputs with Engine.interop(producer, consumer, array={...})")


def installed_ref(name: str) -> str:
    """The rule-set ref of library ``name`` for the release installed here,
    ``"numpy==2.4.6"``, read from its distribution's metadata; a ref (with
    ``@`` or ``==``) as it is, and a name not installed as it is (its newest
    version)."""
    if "@" in name or "==" in name:
        return name
    return _installed_ref(name)


@functools.cache
def _installed_ref(name: str) -> str:
    # Remembered: reading the metadata scans every distribution on sys.path
    # (about a millisecond), and the release a process imported does not
    # change while it runs. Every routed exchange into a named consumer asks.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{name}=={version(name)}"
    except PackageNotFoundError:
        return name


_default: Engine | None = None
_default_lock = threading.Lock()


def ask(x: Any, consumer: str, *, copy: bool | None = None, device: Any = None,
        producer: str | None = None, rules: Engine | None = None, strict: bool = False) -> Cell:
    """What ``consumer.from_dlpack(x, copy=copy, device=device)`` does with
    the real array ``x``, decided before anything runs: in place, a copy
    and who makes it, or the exception, its type and exact message.

    Args:
        x: a JAX array, torch tensor or numpy array (see :func:`array_of`).
        consumer: the consuming library, ``"torch"``, ``"numpy"`` or
            ``"jax"`` (``jax.dlpack.from_dlpack``, which
            ``jax.numpy.from_dlpack`` calls): a bare name is the release
            installed here (:func:`installed_ref`), a ref (``"torch@v1"``,
            ``"numpy==2.5.0"``, ``"jax==0.10.2"``) that version. For jax,
            the backends and x64 setting of the jax imported here are the
            rules' inputs.
        copy, device: from_dlpack's arguments; None (the default) is not
            passed. A JAX device or single-device Sharding is read as jax
            reads it.
        producer: the producer's rule set; default the library of ``x`` at
            its installed release.
        rules: an :class:`~dlroute.Engine`; None for the embedded rules,
            loaded once per process.
        strict: raise, rather than warn, where an installed release is
            one no version was checked against (default False).

    An installed release newer than every version's range, or a
    pre-release or development build, is answered with a
    :class:`dlroute.UncheckedReleaseWarning` that says what the version
    used was checked against; ``cell.checked`` says it for both sides.

    Raises:
        TypeError: dlroute cannot tell the library of ``x``.
        dlroute.NoRuleSetError: no rule-set version covers an installed
            release (older than every range, or in a gap: the message
            names the nearest); under ``strict=True``, one that no version
            was checked against (code ``unchecked_release``).
        dlroute.InputError: an argument the consumer's rules do not take.
    """
    global _default
    library, inputs = array_of(x)
    if rules is None:
        from ._engine import load

        with _default_lock:
            if _default is None:
                _default = load()
            rules = _default
    here = _jax_here() if _library(consumer) == "jax" else {}
    return cell(rules, installed_ref(producer or library), installed_ref(consumer),
                array=inputs, copy=copy, device=device, strict=strict, stacklevel=2, consumer_inputs=here)


def _library(ref: str) -> str:
    """The library a ref names: ``"jax"`` of ``"jax==0.10.2"`` or ``"jax@v3"``."""
    return ref.split("==")[0].split("@")[0]
