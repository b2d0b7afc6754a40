"""Interop cells asked of the library: :meth:`dlroute.Engine.interop` and
:meth:`dlroute.Engine.interop_matrix` send a request (rule-set refs, the
producer's array inputs, from_dlpack's keywords, the consumer's process
facts) and read back the lines ``dlroute interop --json`` writes; the
library chains the four calls of the exchange. :mod:`dlroute.interop`
asks them for real arrays."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence

from . import _encode, _native
from ._memo import Memo
from ._process import FACTS
from ._types import NOT_PASSED, NotPassed, ProcessFacts
from .errors import DlrouteError, EvaluationError, InputError, NoRuleSetError, decided_exception, release_warning

if TYPE_CHECKING:
    from ._engine import Engine

__all__ = ["CatchSet", "Cell", "Outcome", "Remedy", "catch_set", "cell", "matrix"]

#: What an exchange comes to: the consumer's array shares the producer's
#: memory; the producer's ``__dlpack__`` copied; the consumer copied after
#: the import; each copied once; or an exception reaches the user.
Outcome = Literal["in_place", "producer_copy", "consumer_copy", "both_copy", "error"]


@dataclass(frozen=True)
class Remedy:
    """The cheapest fix for an exchange that raises or reads silently
    different values, found by deciding the exchange again with the fix
    applied (``dlroute interop`` marks the cell with it).

    Attributes:
        kind: which fix: ``"detach"``, ``"resolve_neg"``,
            ``"resolve_conj"``, ``"dense"``, ``"contiguous"``,
            ``"writeable"``, ``"drop_keywords"``, ``"copy"``, ``"cast"``,
            ``"host_copy"`` or ``"through_numpy"``, cheapest first.
        fix: the fix as its user writes it, in the words of the library
            whose call changes: ``"x.contiguous()"``, ``"x.cpu()"``,
            ``"np.from_dlpack(x, copy=True)"``,
            ``"torch.from_dlpack(np.asarray(x))"``.
        outcome: what the exchange comes to with the fix: ``"in_place"``
            or a copy (never ``"error"``).
    """

    kind: str
    fix: str
    outcome: Outcome


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
        remedy: for a cell that raises (``outcome`` ``"error"``, a
            ``SilentlyDifferent`` included), the cheapest fix that makes
            it cross, checked by the rules (:class:`Remedy`); None where
            it crosses, or where no fix the rules know of does.
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
    remedy: Remedy | None = None

    @classmethod
    def from_json(cls, line: str) -> Cell:
        """The cell of a line of ``dlroute interop --json``."""
        c = json.loads(line)
        err = c.get("error") or {}
        dev = c.get("device")
        rem = c.get("remedy")
        return cls(c["producer"], c["consumer"], c["array"]["platform"], c["array"]["memory"],
                   c["array"]["input"], c["outcome"], err.get("type"), err.get("message"),
                   (dev["device_type_code"], dev["device_id"]) if dev else None, c["steps"],
                   c.get("checked") or {}, line,
                   Remedy(rem["kind"], rem["fix"], rem["outcome"]) if rem else None)

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
        return decided_exception({**decision, "error": {"type": self.error_type, "message": self.error_message or ""}})

    def __str__(self) -> str:
        """The cell as ``dlroute interop``'s table shows it, uncut."""
        if self.outcome == "error":
            msg = " ".join((self.error_message or "").split())
            return f"{self.error_type}: {msg}" if msg else str(self.error_type)
        return {"in_place": "in place", "producer_copy": "copy (producer)",
                "consumer_copy": "copy (consumer)", "both_copy": "copy (both)"}[self.outcome]


@dataclass(frozen=True)
class CatchSet:
    """What a program that hands one library's arrays to another's
    ``from_dlpack`` has to catch, over every release the rules cover:
    ``dlroute interop --catch``.

    Attributes:
        producer, consumer: the libraries as asked (``"numpy"``: every
            version; a ref such as ``"torch@v1"``: that one).
        types: the exception types the exchanges raise, sorted, by their
            Python names (``"BufferError"``, ``"ArrowInvalid"``).
        uncatchable: the outcomes no ``except`` catches, sorted:
            ``"SilentlyDifferent"`` (values read wrong, nothing raised),
            ``"SIGABRT"`` and ``"SIGSEGV"`` (the interpreter dies).
        except_line: the clause that catches ``types``, to paste:
            ``"except (BufferError, RuntimeError, TypeError):"``; a
            library's type is named by the built-in it derives from where
            there is one (pyarrow's ``ArrowInvalid`` by ``ValueError``);
            ``""`` where nothing is raised.
        producer_versions, consumer_versions: the rule-set versions
            decided, each of one side into each of the other (jax's
            producer as ``"jax@v3+jax-export@v2"``).
        exchanges: how many exchanges were decided: every array the
            producer's rules distinguish and every array class it makes,
            by ``from_dlpack(x)`` and, where the consumer takes it, with
            ``copy=True`` and ``copy=False``.
        json: the set as ``dlroute interop --catch --json`` writes it.
    """

    producer: str
    consumer: str
    types: tuple[str, ...]
    uncatchable: tuple[str, ...]
    except_line: str
    producer_versions: tuple[str, ...] = field(repr=False)
    consumer_versions: tuple[str, ...] = field(repr=False)
    exchanges: int = field(repr=False)
    json: str = field(repr=False)

    @classmethod
    def from_json(cls, line: str) -> CatchSet:
        """The catch set of a line of ``dlroute interop --catch --json``."""
        c = json.loads(line)
        return cls(c["producer"], c["consumer"], tuple(c["types"]), tuple(c.get("uncatchable") or ()), c["except"],
                   tuple(c["producer_versions"]), tuple(c["consumer_versions"]), c["exchanges"], line)

    @property
    def exceptions(self) -> tuple[type[BaseException], ...]:
        """The classes of :attr:`except_line`, for ``except
        cs.exceptions:``: the built-ins, and a library's own class where
        its library is imported (one not imported raises nothing here)."""
        names = self.except_line.removeprefix("except ").strip("():").split(", ") if self.except_line else []
        out: list[type[BaseException]] = []
        for name in names:
            cls = _exception_class(name)
            if cls is not None:
                out.append(cls)
        return tuple(out)


#: The modules of the except line's qualified names, by their alias.
_ALIASES = {"tf": "tensorflow"}


def _exception_class(name: str) -> type[BaseException] | None:
    """The class ``name`` of an except line names: a built-in, or
    ``alias.path.Class`` in a module already imported; None otherwise."""
    import builtins
    import sys

    head, _, rest = name.partition(".")
    obj: Any = getattr(builtins, name, None) if not rest else sys.modules.get(_ALIASES.get(head, head))
    for part in rest.split(".") if rest else ():
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) and issubclass(obj, BaseException) else None


def catch_set(engine: Engine, producer: str, consumer: str) -> CatchSet:
    """:func:`dlroute.interop.catch_set`."""
    if not isinstance(producer, str) or not isinstance(consumer, str):
        raise TypeError("producer and consumer are library names or rule-set refs (str), such as 'numpy' or 'torch@v1'")
    req = {"producers": [producer], "consumers": [consumer], "catch": True}
    line = _request("dlroute_interop_matrix_json", engine, _dumps(req), f"catch_set({producer!r}, {consumer!r})")
    return CatchSet.from_json(line.strip())


def _kwargs(copy: bool | None | NotPassed, device: Any) -> dict[str, Any]:
    """from_dlpack's arguments as the rules read them: each one passed, an
    explicit None included (torch 1.13 refuses ``copy=None``), and none
    left out."""
    if copy is not NOT_PASSED and copy is not None and not isinstance(copy, bool):
        raise TypeError(f"copy is True, False or None, not {copy!r}")
    out: dict[str, Any] = {}
    if copy is not NOT_PASSED:
        out["copy"] = copy
    if device is not NOT_PASSED:
        out.update(_device_kwargs(device))
    return out


def _is_jax_device(d: Any) -> bool:
    return type(d).__module__.split(".")[0] in ("jax", "jaxlib") and hasattr(d, "platform") and hasattr(d, "id")


def _device_kwargs(device: Any) -> dict[str, Any]:
    """from_dlpack's ``device`` as the rules read it: a JAX Device as its
    repr (``"CpuDevice(id=0)"``, what jax-import compares and prints); a
    JAX Sharding as its one device, with ``sharding_devices`` (jax refuses
    a Sharding over more than one); anything else (None too) as it is."""
    devices = getattr(device, "device_set", None)
    if devices is not None and type(device).__module__.split(".")[0] in ("jax", "jaxlib"):
        out: dict[str, Any] = {"sharding_devices": len(devices)}
        if len(devices) == 1:
            out["device"] = repr(next(iter(devices)))
        return out
    if _is_jax_device(device):
        return {"device": repr(device)}
    return {"device": device}


def _request(entry: str, engine: Engine, data: bytes, what: str) -> str:
    """The library's answer to an interop request, remembered by the
    engine by request (a cell costs the library a few milliseconds)."""
    key = (entry, data)
    hit = engine._cells.get(key)
    if hit is not None:
        return hit
    status, out = _native.call(entry, engine._handle, data)
    if status == _native.OK:
        return engine._cells.put(key, out.decode())
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


#: The array's text (:func:`dlroute.arrays.array_text`) in an interop
#: request's ``array``: no producer input, but what a consumer whose error
#: prints the array (jax's from_dlpack) reads, handed to it alone.
ARRAY_TEXT = "array_str"


def cell(engine: Engine, producer: str, consumer: str, *, array: dict[str, Any] | None = None,
         copy: bool | None | NotPassed = NOT_PASSED, device: Any = NOT_PASSED, process: ProcessFacts | None = None,
         strict: bool = False, stacklevel: int = 1, text: Callable[[], str] | None = None) -> Cell:
    """:meth:`dlroute.Engine.interop`. ``array``'s ``array_str`` goes to a
    consumer that declares it, and nowhere else; without it, ``text``
    (the real array's, for :func:`dlroute.ask`) is called only where the
    cell is an exception, the one place the text shows, and the cell
    decided again with it."""
    if not isinstance(producer, str) or not isinstance(consumer, str):
        raise TypeError("producer and consumer are rule-set refs (str), such as 'jax' or 'torch@v1'")
    if array is not None and not isinstance(array, dict):
        raise TypeError(f"array is a dict of the producer's inputs, not {type(array).__name__}")
    array = dict(array or {})
    given_text = array.pop(ARRAY_TEXT, None)
    if given_text is not None and not isinstance(given_text, str):
        raise TypeError(f"array's {ARRAY_TEXT} is the array's text, str(x), not {type(given_text).__name__}")
    req: dict[str, Any] = {"producer": producer, "consumer": consumer}
    if array:
        req["array"] = array
    # the consumer's inputs, asked only where a fact or a text may go to it
    declared = _declared(engine, consumer) if process or given_text is not None or text is not None else None
    reads_text = declared is not None and ARRAY_TEXT in declared
    kwargs = {**_facts(process, declared), **_kwargs(copy, device)}
    if given_text is not None and reads_text:
        kwargs[ARRAY_TEXT] = given_text
    what = f"Engine.interop({producer!r}, {consumer!r})"
    c = _decide(engine, req, kwargs, what)
    if c.outcome == "error" and reads_text and given_text is None and text is not None:
        c = _decide(engine, req, {**kwargs, ARRAY_TEXT: text()}, what)
    _warn([c], strict, stacklevel + 1)
    return c


def _decide(engine: Engine, req: dict[str, Any], kwargs: dict[str, Any], what: str) -> Cell:
    if kwargs:
        req = {**req, "kwargs": kwargs}
    return Cell.from_json(_request("dlroute_interop_json", engine, _dumps(req), what))


def _declared(engine: Engine, consumer: str) -> set[str] | None:
    """The input names of the consumer's rule set (jax's from_dlpack is
    jax-import's); None where the ref names none, which the interop
    request then says."""
    lib, sep, rest = consumer.partition("==") if "==" in consumer else consumer.partition("@")
    ref = ("jax-import" if lib == "jax" else lib) + sep + rest
    try:
        return {i["name"] for i in engine._lookup(ref)[0].inputs}
    except DlrouteError:
        return None


def _facts(process: ProcessFacts | None, declared: set[str] | None) -> dict[str, Any]:
    """Those of the process facts that the consumer's rule set declares
    (``declared``; None: all, and the request says what is wrong with the
    ref): the facts say what the process is, and each library reads its
    own (an older version reads fewer). A name that is no fact is a
    TypeError."""
    if not process:
        return {}
    if not isinstance(process, dict):
        raise TypeError(f"process is a dict of process facts (dlroute.ProcessFacts), not {type(process).__name__}")
    unknown = sorted(process.keys() - FACTS)
    if unknown:
        raise TypeError(f"process names {', '.join(unknown)}, which is no process fact; "
                        f"the facts are {', '.join(sorted(FACTS))}")
    if declared is None:
        return dict(process)
    return {k: v for k, v in process.items() if k in declared}


def matrix(engine: Engine, producers: Sequence[str] | None = None, consumers: Sequence[str] | None = None,
           *, copy: bool | None | NotPassed = NOT_PASSED, device: Any = NOT_PASSED, strict: bool = False,
           stacklevel: int = 1) -> list[Cell]:
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
