"""The engine: rules opened by :func:`load`, their rule sets, and the
decisions they answer (the top level re-exports what a user calls)."""

from __future__ import annotations

import json
import os
import threading
import weakref
from importlib.metadata import PackageNotFoundError, version
from typing import Any, NamedTuple, Sequence

from . import _cells, _encode, _native
from ._cells import Cell
from ._memo import MEMO_SIZE, Memo
from ._types import NOT_PASSED, Decision, NotPassed, ProcessFacts, RuleSetInfo, Step
from .errors import EvaluationError, HostError, InputError, NoRuleSetError, LoadError, release_warning

__all__ = ["Engine", "RuleSet", "Exchange", "load", "default_engine", "library_version", "MEMO_SIZE"]


def library_version() -> str:
    """The version of the loaded libdlroute (``dlroute_version()``),
    loading it first. Raises LibraryError."""
    return _native.version()


def load(rules: str | os.PathLike[str] | bytes | None = None, key: str | os.PathLike[str] | None = None) -> Engine:
    """Opens rules and compiles every rule set in them.

    Args:
        rules: None for the rules embedded in the library; else the path of
            a rules directory (``<name>/<version>/`` folders, as ``dlroute
            --rules`` takes) or of a bundle from ``dlroute bundle build``
            (every file's digest is checked).
        key: a public key (the text ``name+hash+key`` or the path of a
            ``.pub`` file) that the bundle must be signed by; None checks no
            signature.

    Raises:
        LoadError: the rules do not load; ``err.errors`` lists each error
            with its file, line and column.
        DlrouteError: code ``too_many_open``: 64 rules are open in the
            process (``DLROUTE_MAX_OPEN``); close some first.
        LibraryError: libdlroute cannot be found, built or loaded, or has
            another ABI version; ForkedError in a forked child.
        TypeError: rules or key is not a str, a path or bytes.
    """
    path = b"" if rules is None else _path_bytes(rules, "rules")
    k = b"" if key is None else _path_bytes(key, "key")
    status, out, handle = _native.open_rules(path, k)
    if status == _native.LOAD_ERROR:
        errors = _native.parse(out) or []
        first = errors[0] if errors else {"code": "load_error", "message": "the rules did not load"}
        where = _position(first)
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise LoadError(first.get("code", "load_error"), f"{where}{first.get('message', '')}{more}", errors)
    if status != _native.OK:
        raise _native.fail(status, out, "dlroute.load")
    return Engine(handle, rules)


_default: Engine | None = None
_default_lock = threading.Lock()


def default_engine() -> Engine:
    """The embedded rules, loaded once per process: what ``rules=None``
    means everywhere in the package."""
    global _default
    with _default_lock:
        if _default is None:
            _default = load()
        return _default


def _path_bytes(p: Any, what: str) -> bytes:
    """A path as the file system names it (os.fsencode: a name Python read
    from the system, undecodable bytes and all, is those bytes again)."""
    try:
        return os.fsencode(p)
    except TypeError:
        raise TypeError(f"{what} is a path (str, bytes or os.PathLike), not {type(p).__name__}") from None
    except UnicodeEncodeError as e:
        message = f"{what} {p!r} is no file name here: it holds a character the file system cannot encode ({e.reason})"
        raise LoadError("read_error", message, [{"code": "read_error", "message": message}]) from None


def _position(e: dict[str, Any]) -> str:
    pos = e.get("position") or {}
    if not pos.get("file"):
        return ""
    return f"{pos['file']}:{pos.get('line', 0)}:{pos.get('column', 0)}: "


class Engine:
    """Rules opened by :func:`load`: every rule-set version in them,
    compiled. Safe to use from many threads. Close it with ``close()`` or
    ``with``; its rule sets stop working then."""

    def __init__(self, handle: int, origin: Any) -> None:
        self._handle = handle
        self.origin = origin
        # ref -> its rule set and the release warning it comes with
        self._rulesets: dict[str, tuple[RuleSet, dict[str, Any] | None]] = {}
        self._lock = threading.Lock()
        self._cells: Memo[tuple[str, bytes], str] = Memo()  # interop answers, by request
        self._finalizer = weakref.finalize(self, _close, handle)

    def ruleset(self, ref: str, *, strict: bool = False) -> RuleSet:
        """The rule set ``ref``: a name (``"jax"``, its newest version),
        ``name@version`` (``"jax@v2"``, ``"exchange@v1"``), or
        ``name==release`` (``"jax==0.10.2"``: the version whose manifest
        covers that release of what it mirrors; ``dlroute rules`` lists the
        ranges and what was checked).

        A release that no version was checked against is answered with a
        :class:`UncheckedReleaseWarning` (``warnings.warn``) saying what
        was: one newer than every range gets the newest range's version; a
        pre-release or development build (``"1.13.0a0+gitunknown"``) is
        read as its release. ``strict=True`` (default False) raises
        instead. A local label alone (``"2.11.0+cpu"``) and a post-release
        are the release itself.

        Raises:
            NoRuleSetError: the rules hold no such name or version, or no
                version covers the release (older than every range, or in
                a gap between two: the message names the nearest); with
                ``strict=True``, a release no version was checked against
                (code ``unchecked_release``).
        """
        if not isinstance(ref, str):
            raise TypeError(f"a rule-set ref is a str, such as 'jax' or 'jax@v2', not {type(ref).__name__}")
        return self._ruleset(ref, strict, 2)

    def _ruleset(self, ref: str, strict: bool, stacklevel: int) -> RuleSet:
        rs, warning = self._lookup(ref)
        if warning:
            release_warning(warning, strict, stacklevel + 1)
        return rs

    def _lookup(self, ref: str) -> tuple[RuleSet, dict[str, Any] | None]:
        """The rule set ``ref`` and the release warning it comes with,
        warned of by nobody. Raises NoRuleSetError."""
        with self._lock:
            hit = self._rulesets.get(ref)
        if hit is None:
            r = ref.encode("utf-8", "surrogatepass")  # the library names what it cannot find
            status, out, handle = _native.ruleset(self._handle, r)
            if status == _native.NO_RULESET:
                e = _native.parse(out) or {}
                raise NoRuleSetError(e.get("code", "no_ruleset"), e.get("message", f"no rule set {ref}"), e)
            if status != _native.OK:
                raise _native.fail(status, out, f"Engine.ruleset({ref!r})")
            warning = _native.parse(out) if out else None
            with self._lock:
                hit = self._rulesets.setdefault(ref, (RuleSet(self, handle), warning))
        return hit

    def ruleset_for_installed(self, name: str, package: str | None = None, *, strict: bool = False) -> RuleSet:
        """The version of rule set ``name`` for the release of ``package``
        (default: ``name``) installed in this environment, as its
        distribution metadata says: ``eng.ruleset_for_installed("jax")`` is
        ``eng.ruleset("jax==0.10.2")`` where jax 0.10.2 is installed. The
        package is not imported. A release no version was checked against
        is answered with a :class:`UncheckedReleaseWarning`, or refused
        under ``strict=True``, as :meth:`ruleset` says.

        Raises:
            NoRuleSetError: the package is not installed (the hint says
                how to install it, or to name a version), no version covers
                its release (the message names the nearest), or under
                ``strict=True`` one no version was checked against.
        """
        package = package or name
        try:
            release = version(package)
        except PackageNotFoundError:
            message = f"{package} is not installed here, so no release of it picks a version of rule set {name}"
            raise NoRuleSetError("no_ruleset", message, {
                "code": "no_ruleset", "message": message,
                "hint": f'install it (pip install {package}), or name a version: engine.ruleset("{name}@<version>")'})
        return self._ruleset(f"{name}=={release}", strict, 2)

    def rulesets(self) -> list[RuleSetInfo]:
        """Every rule-set version in the rules, as
        ``{"ref": "jax@v3", "name": "jax", "version": "v3", "default": True}``
        (``default``: the version a bare name picks)."""
        status, out = _native.call("dlroute_rulesets", self._handle)
        if status != _native.OK:
            raise _native.fail(status, out, "Engine.rulesets()")
        infos: list[RuleSetInfo] = json.loads(out)
        return infos

    def interop(self, producer: str, consumer: str, *, array: dict[str, Any] | None = None,
                copy: bool | None | NotPassed = NOT_PASSED, device: Any = NOT_PASSED,
                process: ProcessFacts | None = None, strict: bool = False) -> Cell:
        """What ``consumer``'s ``from_dlpack(x, copy=copy, device=device)``
        does with ``producer``'s array ``x``: one cell of ``dlroute
        interop``, decided by chaining both rule sets (nothing is run).

        Args:
            producer: a rule set that answers the four calls of an
                exchange, or ``"jax"`` (its ``__dlpack__`` is jax-export's
                of the same release): ``"numpy"``, ``"torch@v1"``,
                ``"jax==0.10.2"``.
            consumer: such a rule set, ``"torch"``, ``"numpy@v2"``.
            array: the producer's inputs that describe ``x``, such as
                ``{"platform": "gpu", "platform_version": "<unknown>"}``
                for jax; those left out take their defaults (None: the
                ordinary array). :func:`dlroute.interop.array_of` reads
                them from a real array. ``"array_str"``, the array's
                text (:func:`dlroute.arrays.array_text`), goes to a
                consumer whose error prints the array (jax's), to no
                other.
            copy, device: ``from_dlpack``'s arguments, each where given:
                ``copy=None`` is a keyword passed as None (torch 1.13
                refuses it), not the argument left out.
            process: what the consumer's process is, a
                :class:`dlroute.ProcessFacts` such as ``{"cuda_driver":
                False}`` (a CUDA build of torch without a driver) or
                ``{"backends": ["cpu"], "x64": True}``; each consumer
                reads those its rule set declares. None (the default):
                the rules' defaults, whatever this process is
                (:func:`dlroute.ask` reads them from this process).
            strict: raise, rather than warn, for a ``name==release`` that
                no version was checked against (default False; see
                :meth:`ruleset`).

        Returns:
            A :class:`dlroute.interop.Cell`: its ``outcome``, the
            exception's ``error_type`` and ``error_message``, the
            ``steps``, what each side was ``checked`` against (``run``:
            both were run here against a real release), and ``json``,
            byte for byte the line ``dlroute interop --json`` writes for
            the cell.

        Raises:
            InputError: an array input or argument the rule sets do not
                take or of the wrong type.
            NoRuleSetError: no such rule set, or one that is no library
                on its side (``exchange``; ``jax`` as a consumer): the
                hint lists the libraries.
            EvaluationError: the rules cannot decide a step.
        """
        return _cells.cell(self, producer, consumer, array=array, copy=copy, device=device, process=process,
                           strict=strict, stacklevel=2)

    def interop_matrix(self, producers: Sequence[str] | None = None, consumers: Sequence[str] | None = None,
                       *, copy: bool | None | NotPassed = NOT_PASSED, device: Any = NOT_PASSED,
                       strict: bool = False) -> list[Cell]:
        """Every array the producers' rules distinguish (the platforms and
        memory kinds of their ``__dlpack_device__`` cases) into every
        consumer, in the order ``dlroute interop --json`` writes them.
        None or empty: every library's newest version. Raises as
        :meth:`interop`."""
        return _cells.matrix(self, producers, consumers, copy=copy, device=device, strict=strict, stacklevel=2)

    def close(self) -> None:
        """Releases the rules; their rule sets raise LibraryError (code
        ``closed``) afterwards, remembered answers or not. Closing twice
        does nothing."""
        self._finalizer()
        self._cells.clear()
        with self._lock:
            for rs, _ in self._rulesets.values():
                for memo in (rs._decisions, rs._lines, rs._exchanges):
                    memo.clear()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<dlroute.Engine {self.origin or 'embedded rules'}>"


def _close(handle: int) -> None:
    _native.close(handle)


class Exchange(NamedTuple):
    """What the exchange rules decided for ``x.__dlpack__(...)`` and what
    carrying it out takes.

    Attributes:
        step: ``"in_place"`` (export the producer's buffer as it is),
            ``"copy_to_host"`` (copy into host memory, export the copy) or
            ``"raise"`` (the decision is an exception: ``decision["error"]``).
        decision: the decision, as :meth:`RuleSet.resolve` returns it.
    """

    step: Step
    decision: Decision


class RuleSet:
    """One rule-set version of an :class:`Engine`. Safe to use from many
    threads. Answers are remembered by input, so a repeated input costs a
    dictionary lookup."""

    def __init__(self, engine: Engine, handle: int) -> None:
        self._engine = engine  # keeps the rules open while the rule set lives
        self._handle = handle
        # answers by input: resolve_json's lines, resolve's decisions and
        # exchange's; the caller gets a copy of a decision (_copy)
        self._lines: Memo[bytes, str] = Memo()
        self._decisions: Memo[Any, Decision] = Memo()
        self._exchanges: Memo[Any, Exchange] = Memo()
        status, out = _native.call("dlroute_describe", handle)
        if status != _native.OK:
            raise _native.fail(status, out, "RuleSet")
        desc = json.loads(out)
        self.ref: str = desc["ref"]
        self.inputs: list[dict[str, Any]] = desc["inputs"]
        self.rules: list[str] = desc["rules"]
        self.device_types: dict[str, int] = {d["name"]: d["code"] for d in desc["device_types"]}
        self._want = _encode.want_of(self.inputs)

    def __repr__(self) -> str:
        return f"<dlroute.RuleSet {self.ref}>"

    def resolve_json(self, line: str | bytes) -> str:
        """Decides one JSON input object and returns, byte for byte, the
        line ``dlroute resolve --json`` writes for that line (without the
        newline): the decision, ``{"input_error":...}`` or
        ``{"eval_error":...}``. It never raises for a bad input; that is
        the line's to say (a str with a lone surrogate, which UTF-8 cannot
        encode, is the ``invalid_utf8`` line).

        Raises:
            TypeError: line is neither a str nor bytes-like.
        """
        if isinstance(line, str):
            data = line.encode("utf-8", "surrogatepass")  # as the bytes of a line that is not UTF-8
        elif isinstance(line, (bytes, bytearray, memoryview)):
            data = bytes(line)
        else:
            raise TypeError(f"a line is a str or bytes, not {type(line).__name__}")
        hit = self._lines.get(data)
        if hit is not None:
            return hit
        status, out = _native.call("dlroute_resolve_json", self._handle, data)
        if status not in (_native.OK, _native.INPUT_ERROR, _native.EVAL_ERROR):
            raise _native.fail(status, out, f"RuleSet({self.ref}).resolve_json")
        text = out.decode()
        if status == _native.OK:
            self._lines.put(data, text)
        return text

    def resolve(self, input: dict[str, Any]) -> Decision:
        """Decides an input (a dict of the rule set's inputs; those left out
        take their defaults) and returns the decision, as ``dlroute resolve
        --json`` writes it: ``{"device_type": "kDLCUDA", "device_type_code":
        2, "device_id": 0, "rule": ..., "ruleset": ...}``, or for the rules'
        own exception ``{"error": {"type": "BufferError", "message": ...},
        "rule": ..., "ruleset": ...}``. The dict is the caller's to change.

        Raises:
            InputError: the input is not valid for the rule set (code
                ``unknown_field``, ``wrong_type``, ...), including a value
                no JSON input can hold (bytes, an object, ``nan``:
                ``wrong_type``; a str with a lone surrogate:
                ``invalid_utf8``).
            EvaluationError: the rules could not decide it.
            TypeError: input is not a dict.
        """
        try:
            values = input.values()
            key: Any = (*input, *values, *map(type, values))
            hit = self._decisions.get(key)
        except (TypeError, AttributeError):
            key = _key(input)
            hit = None if key is None else self._decisions.get(key)
        if hit is not None:
            out = hit.copy()  # a flat decision is the caller's after a shallow copy
            return _copy(hit) if "error" in out or "flags" in out else out  # type: ignore[return-value]
        decision: Decision = self._decide("dlroute_resolve_json", self._line(input))
        if key is not None:
            self._decisions.put(key, decision)
        return _copy(decision)

    def explain(self, input: dict[str, Any]) -> dict[str, Any]:
        """Decides an input as :meth:`resolve` does and says how:
        ``{"decision": {...}, "trace": {"rules": [...], "values": [...]}}``,
        each rule tried and each value computed, with its position in the
        rule file. Raises as :meth:`resolve`."""
        explained: dict[str, Any] = self._decide("dlroute_explain_json", self._line(input))
        return explained

    def exchange(self, input: dict[str, Any]) -> Exchange:
        """Decides an input of an exchange rule set (``"exchange"``: the
        array's inputs and ``dl_device``, ``copy``, ``max_version``,
        ``stream`` of ``x.__dlpack__``) and says what carrying it out takes.

        Raises:
            InputError, EvaluationError: as :meth:`resolve`.
            HostError: code ``no_copier`` for a decision to copy onto a
                device, which no host here can make.
        """
        try:
            values = input.values()
            key: Any = (*input, *values, *map(type, values))
            hit = self._exchanges[key]
        except KeyError:
            hit = None
        except (TypeError, AttributeError):
            key = _key(input)
            hit = self._exchanges.get(key) if key is not None else None
        if hit is not None:
            return Exchange(hit.step, _copy(hit.decision))
        data = self._line(input)
        status, out, step = _native.exchange(self._handle, data)
        ex = Exchange(_native.STEPS[step], self._answer(status, out))  # type: ignore[arg-type]
        if key is not None:
            self._exchanges.put(key, ex)
        return Exchange(ex.step, _copy(ex.decision))

    def _line(self, input: dict[str, Any]) -> bytes:
        if not isinstance(input, dict):
            raise TypeError(f"an input is a dict of the rule set's inputs, not {type(input).__name__}")
        return _encode.encode_fields(input, lambda k: f"input {k}", self._want)

    def _decide(self, entry: str, data: bytes) -> Any:
        status, out = _native.call(entry, self._handle, data)
        return self._answer(status, out)

    def _answer(self, status: int, out: bytes) -> Any:
        if status == _native.OK:
            return json.loads(out)
        if status in (_native.INPUT_ERROR, _native.EVAL_ERROR):
            line = json.loads(out)
            kind, e = next(iter(line.items()))
            cls = InputError if kind == "input_error" else EvaluationError
            raise cls(e["code"], f"{_position(e)}{e['message']}", e)
        if status == _native.HOST_ERROR:
            e = json.loads(out)
            raise HostError(e["code"], e["message"], e)
        raise _native.fail(status, out, f"RuleSet({self.ref})")


def _key(input: dict[str, Any]) -> Any:
    """The memo's key of an input: its names, its values and their types
    (True == 1 == 1.0 in Python, and the rules tell them apart), flat;
    lists (a shape, a device pair) as tuples; None where a value is still
    not hashable (the input is decided every time). The fast paths of
    resolve and exchange build the same key inline.

    Raises:
        TypeError: input is not a dict.
    """
    if not isinstance(input, dict):
        raise TypeError(f"an input is a dict of the rule set's inputs, not {type(input).__name__}")
    try:
        key = (*input, *map(_frozen, input.values()), *map(type, input.values()))
        hash(key)
    except (TypeError, RecursionError):
        return None
    return key


def _frozen(v: Any) -> Any:
    if type(v) is list:
        return (list, *map(_frozen, v))  # the type: an input's list is not its tuple
    return v


def _copy(d: Decision) -> Decision:
    """A decision the caller may change without changing the memo's: its
    only nested values are "error" (a dict) and "flags" (a list)."""
    out = d.copy()
    if "error" in out:
        out["error"] = out["error"].copy()
    if "flags" in out:
        out["flags"] = out["flags"].copy()
    return out
