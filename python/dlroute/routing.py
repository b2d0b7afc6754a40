"""DLPack exchanges decided by the rules.

An array library decides in its own code which DLPack device an array
advertises and how ``x.__dlpack__(...)`` goes; here the rules decide it:

- :func:`dlpack_device`: what ``x.__dlpack_device__()`` returns, decided by
  the ``jax`` rule set (for a JAX array, what JAX itself returns).
- :class:`Routed`: a wrapper whose ``__dlpack_device__`` and ``__dlpack__``
  carry out the ``exchange`` rule set's decision, so any consumer
  (``np.from_dlpack(Routed(x))``, ``torch.from_dlpack(Routed(x))``,
  ``jax.numpy.from_dlpack(Routed(x))``) gets it: the producer's own capsule
  where the array exports in place, a copy through host memory (with
  IS_COPIED in a versioned capsule) where the rules say so, or the rules'
  exception with its exact type and message.
- :func:`from_dlpack`: ``consumer.from_dlpack(Routed(x))`` for numpy,
  torch, jax or cupy by name, with ``device`` and ``copy`` as the Array
  API's ``from_dlpack`` takes them; a repeated exchange of the same kind
  of array costs what the consumer's own ``from_dlpack`` does, and a
  microsecond or so.
- :func:`decide`: the exchange decision for ``x``, carried out by nothing.

A JAX GPU array whose ``platform_version`` names no platform JAX knows is
copied through host memory here, where ``torch.from_dlpack(x)`` raises
``BufferError: Unknown GPU platform for __dlpack__: ...``. numpy is
imported only to make a host copy. The top level (``dlroute.from_dlpack``,
``dlroute.Routed``) is where a user reaches these.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys as _sys
import warnings
import weakref
from typing import TYPE_CHECKING, Any, Callable, Literal, NoReturn, Sequence, Union, cast, overload

from ._engine import Engine, Exchange, RuleSet, _key, default_engine
from ._memo import Memo
from ._types import NOT_PASSED, Decision, NotPassed
from .arrays import inputs_of, host_array, is_jax_like
from .errors import DecidedError, DlrouteError, UncheckedReleaseWarning, decided_exception
from .interop import array_of, ask, installed_ref

if TYPE_CHECKING:
    import jax
    import numpy
    import torch

__all__ = ["Routed", "from_dlpack", "dlpack_device", "decide", "DecidedError", "Rules"]

#: What the ``rules`` argument takes: None for the embedded rules (loaded
#: once per process), an :class:`~dlroute.Engine` (its ``"jax"`` or
#: ``"exchange"`` rule set is used), or the :class:`~dlroute.RuleSet`
#: itself (``eng.ruleset("exchange@v1")``).
Rules = Union[Engine, RuleSet, None]

# The embedded rules' rule sets by name, once asked for (they warn of
# nothing: a bare name is the newest version).
_defaults: dict[str, RuleSet] = {}


def _ruleset(rules: Rules, name: str) -> RuleSet:
    if rules is None:
        rs = _defaults.get(name)
        if rs is not None:
            return rs
    if isinstance(rules, RuleSet):
        return rules
    if isinstance(rules, Engine):
        return rules.ruleset(name)
    if rules is not None:
        raise TypeError(f"rules is None, a dlroute.Engine or a dlroute.RuleSet, not {type(rules).__name__}")
    rs = _defaults[name] = default_engine().ruleset(name)
    return rs


def _raise(decision: Decision) -> NoReturn:
    """Raises the exception ``decision`` names: the builtin of that name
    (``BufferError``, ``ValueError``, ...), else :class:`DecidedError`. The
    message is the rules' exactly; the decision is the exception's
    ``decision`` attribute, and a note names the rule."""
    exc = decided_exception(decision)
    exc.add_note(f"decided by rule {decision.get('rule')} of {decision.get('ruleset')} (dlroute)")
    raise exc


def _pair(value: Any, what: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{what} is a pair of ints or None, not {type(value).__name__}") from None
    if not all(isinstance(i, int) for i in items):  # DLDeviceType is an IntEnum: an int
        raise TypeError(f"{what} is a pair of ints or None, not {value!r}")
    return tuple(int(i) for i in items)


def _exchange_input(x: Any, dl_device: Any, copy: bool | None, max_version: Any,
                    stream: int | None) -> dict[str, Any]:
    if copy is not None and not isinstance(copy, bool):
        raise TypeError(f"copy is True, False or None, not {copy!r}")
    if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int)):
        raise TypeError(f"stream is an int or None, not {stream!r}")
    data = inputs_of(x)
    data.update(dl_device=_pair(dl_device, "dl_device"), copy=copy,
                max_version=_pair(max_version, "max_version"), stream=stream)
    return data


def dlpack_device(x: Any, *, rules: Rules = None) -> tuple[int, int]:
    """What ``x.__dlpack_device__()`` returns, decided by the ``jax`` rule
    set from :func:`dlroute.arrays.inputs_of` ``(x)``: ``(device_type_code,
    device_id)``, such as ``(1, 0)`` for a CPU array (JAX returns the same
    pair, its first item a ``DLDeviceType``, which is an ``IntEnum``).

    Args:
        rules: None for the embedded rules; a :class:`~dlroute.Engine` (its
            ``"jax"`` rule set), or the rule set itself.

    Raises:
        BufferError, ValueError, ...: the exception the rules decide, with
            their exact message (JAX's ``Unknown GPU platform for
            __dlpack__: ...`` for a GPU platform JAX does not know).
        TypeError: dlroute cannot read the inputs of ``x``.
        dlroute.InputError, dlroute.EvaluationError: the rules refuse the input or
            cannot decide it.
    """
    decision = _ruleset(rules, "jax").resolve(inputs_of(x))
    if "error" in decision:
        _raise(decision)
    return decision["device_type_code"], decision["device_id"]


def decide(x: Any, *, dl_device: Sequence[int] | None = None, copy: bool | None = None,
           max_version: Sequence[int] | None = None, stream: int | None = None,
           rules: Rules = None) -> Exchange:
    """The ``exchange`` rule set's decision for ``x.__dlpack__(stream=,
    max_version=, dl_device=, copy=)``, carried out by nothing: a
    :class:`~dlroute.Exchange` ``(step, decision)``, ``step`` one of
    ``"in_place"``, ``"copy_to_host"`` and ``"raise"``.

    Args: those of ``__dlpack__`` (all None by default: the array's own
        device, a copy only where needed, an unversioned capsule, no
        stream), and ``rules`` as for :func:`dlpack_device` (its
        ``"exchange"`` rule set).

    Raises:
        TypeError: an argument of the wrong type, or an ``x`` whose inputs
            dlroute cannot read.
        dlroute.InputError, dlroute.EvaluationError: the rules refuse the input or
            cannot decide it.
        dlroute.HostError: code ``no_copier`` for a copy onto a device, which
            no host here makes.
    """
    return _ruleset(rules, "exchange").exchange(_exchange_input(x, dl_device, copy, max_version, stream))


class Routed:
    """``x`` as the exchange rules export it: hand it to any DLPack
    consumer (``np.from_dlpack(Routed(x))``, ``torch.from_dlpack(...)``,
    ``jax.numpy.from_dlpack(...)``).

    ``__dlpack_device__()`` is the device the rules export ``x`` on (host
    memory, ``(1, 0)``, for a GPU platform JAX does not know, where JAX
    raises); ``__dlpack__(...)`` asks the rules with the consumer's
    arguments and then passes the producer's own capsule through (in place),
    makes a host copy and exports that (``numpy``'s ``__dlpack__(copy=True)``:
    IS_COPIED is set where the capsule is versioned), or raises the rules'
    exception.

    Args:
        x: the producer's array: a JAX array (or anything with its
            attributes), a torch tensor, a numpy array, or any object with
            ``__dlpack_device__`` and ``__dlpack__``.
        copy: the copy request (None: copy only where needed) to use where
            the consumer's ``__dlpack__`` call gives none: torch 1.13 and
            ``jax.numpy.from_dlpack`` never pass ``copy``. Default None.
        dl_device: likewise the device the data should be exported on,
            ``(device_type_code, device_id)``; default None, the array's own.
        rules: as for :func:`dlpack_device` (the ``"exchange"`` rule set).
        consumer: the consumer's library (``"torch"``, or a rule-set ref
            such as ``"torch@v2"``; a name is the release installed here),
            or None (default: not known). An array whose exchange its rules
            say would abort the interpreter (``SIGABRT``: a negative stride
            into torch 1.13-2.13) is never handed to it: it gets a
            contiguous host copy instead, or, with ``copy=False``, a
            RuntimeError with torch 2.15's text and a hint.

    A consumer's own ``copy`` or ``dl_device``, where it passes one, wins
    over the wrapper's. A torch view with the negative or conjugate bit is
    exported resolved (``x.resolve_conj().resolve_neg()``, a copy), since
    no capsule carries the bit; ``copy=False`` raises BufferError for it.
    """

    __slots__ = ("array", "copy", "dl_device", "_rules", "_abort", "_steps")

    def __init__(self, x: Any, *, copy: bool | None = None, dl_device: Sequence[int] | None = None,
                 rules: Rules = None, consumer: str | None = None) -> None:
        if copy is not None and not isinstance(copy, bool):
            raise TypeError(f"copy is True, False or None, not {copy!r}")
        self.array = x
        self.copy = copy
        self.dl_device = None if dl_device is None else tuple(_pair(dl_device, "dl_device") or ())
        self._rules = _ruleset(rules, "exchange")
        self._abort = None if consumer is None else _refused_import(x, consumer, rules)
        self._steps: list[str] | None = None  # from_dlpack's record of what each __dlpack__ did

    def __repr__(self) -> str:
        return f"Routed({self.array!r}, copy={self.copy!r}, dl_device={self.dl_device!r})"

    def decide(self, *, stream: int | None = None, max_version: Sequence[int] | None = None,
               dl_device: Sequence[int] | None = None, copy: bool | None = None) -> Exchange:
        """The decision ``__dlpack__`` with these arguments carries out (the
        wrapper's ``copy`` and ``dl_device`` fill in those left None).
        Raises as :func:`decide`."""
        return self._rules.exchange(_exchange_input(
            self.array, self.dl_device if dl_device is None else dl_device,
            self.copy if copy is None else copy, max_version, stream))

    def __dlpack_device__(self) -> tuple[int, int]:
        """The device the rules export the array on, for an export with the
        wrapper's ``copy`` and ``dl_device``: ``(device_type_code,
        device_id)``.

        Raises:
            BufferError, ValueError, ...: the rules' exception (a sharded
                array: ``__dlpack__ only supported for unsharded arrays.``).
        """
        decision = self._rules.resolve(_exchange_input(self.array, self.dl_device, self.copy, None, None))
        if "error" in decision:
            _raise(decision)
        return decision["device_type_code"], decision["device_id"]

    def __dlpack__(self, *, stream: int | None = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """Exports the array as the exchange rules decide for these
        arguments (all None by default, as the Array API's ``__dlpack__``).

        Returns:
            A ``dltensor`` or ``dltensor_versioned`` capsule: the producer's
            own where the array exports in place (a producer that reads no
            ``max_version`` makes ``dltensor``, which every consumer reads);
            else that of a host copy, versioned with IS_COPIED where the
            rules say ``dltensor_versioned``.

        Raises:
            BufferError, ValueError, ...: the rules' exception, with its exact
                type and message (``copy=False`` where a copy is needed).
            dlroute.HostError: code ``no_copier`` for a copy onto a device.
            Whatever the producer's own ``__dlpack__`` raises.
        """
        dl_device = self.dl_device if dl_device is None else dl_device  # type: ignore[assignment]
        copy = self.copy if copy is None else copy
        step, decision = self._rules.exchange(_exchange_input(self.array, dl_device, copy, max_version, stream))
        if step == "in_place" and self._abort is not None:
            ref, kind, message = self._abort
            if copy is False:
                raise RuntimeError(f"{message}\nhint: {ref} aborts the interpreter ({kind}) on this array, which "
                                   "dlroute never hands it; copy=None or copy=True passes a contiguous host copy "
                                   "(or pass numpy.ascontiguousarray(x) yourself)")
            if self._steps is not None:
                self._steps.append("contiguous_copy")  # not in place: from_dlpack makes no plan of it
            host = host_array(self.array).copy(order="C")  # contiguous, the consumer's own
            if max_version is not None and tuple(max_version) >= (1, 0):
                return host.__dlpack__(max_version=(max_version[0], max_version[1]), copy=True)  # IS_COPIED
            return host.__dlpack__()
        if self._steps is not None:
            self._steps.append(step)
        if step == "raise":
            _raise(decision)
        if step == "in_place":
            x = _resolved(self.array, copy)
            if x is not self.array and self._steps is not None:
                self._steps.append("resolved_copy")  # not in place: from_dlpack makes no plan of it
            return _producer_capsule(x, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)
        if step == "copy_to_host":
            _refuse_as_producer(self.array)
            host = host_array(self.array)
            if decision.get("capsule") == "dltensor_versioned":
                return host.__dlpack__(max_version=tuple(max_version or (1, 0)), copy=True)  # IS_COPIED
            return host.__dlpack__(copy=True)
        raise DlrouteError("unknown_step", f"the library asked for a step {step!r} this package does not know",
                           decision)


def _refused_import(x: Any, consumer: str, rules: Rules) -> tuple[str, str, str] | None:
    """(the consumer's ref, ``"SIGABRT"``, the library's text) where the
    consumer's rules say its from_dlpack aborts the interpreter on x's
    capsule but imports a contiguous host copy's: a negative stride into
    torch 1.13-2.13. None where the import succeeds or raises (torch 2.14
    on raises RuntimeError for that stride: the consumer's own error
    reaches the user, as copies follow the consumer's library), where a
    copy would fail too, or where dlroute cannot tell (a library it does
    not read, a release no version covers)."""
    engine = rules if isinstance(rules, Engine) else default_engine()
    try:
        facts = array_of(x)[1]
    except TypeError:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rs = engine.ruleset(installed_ref(consumer))
    except DlrouteError:
        return None
    declared = {i["name"] for i in rs.inputs}
    if "call" not in declared:
        return None
    given = {k: v for k, v in facts.items() if k in declared and k in _FACTS}
    error = rs.resolve({"call": "from_dlpack", **given}).get("error")
    if not error or error["type"] != "SIGABRT":
        return None
    copied = {k: v for k, v in given.items() if k not in _LAYOUT}  # C-contiguous, writeable, aligned
    if rs.resolve({"call": "from_dlpack", **copied}).get("error"):
        return None
    return rs.ref, error["type"], error["message"]


#: The facts a contiguous host copy changes: its layout, not its dtype or shape.
_LAYOUT = ("strides", "writeable", "data_alignment")


#: The array facts a consumer's import reads (rules/README.md, "Array facts").
_FACTS = ("dtype_code", "dtype_bits", "dtype_lanes", "shape", "strides", "writeable", "data_alignment")


def _refuse_as_producer(x: Any) -> None:
    """Raises what the producer's own ``__dlpack__`` raises for an array
    it refuses to export, copy or not: a torch tensor that requires grad
    (``Can't export tensors that require gradient, use tensor.detach()``);
    the type is the installed torch's (BufferError from torch 2.x,
    RuntimeError from 1.13). A host copy follows the producer's library;
    ``x.detach()`` is how a user asks otherwise, as torch's message says."""
    torch = _sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor) and x.requires_grad:
        x.__dlpack__()  # raises before it makes anything


def _resolved(x: Any, copy: bool | None | NotPassed) -> Any:
    """x, unless it is a torch view with the negative or conjugate bit
    (``x.is_neg()``, ``x.is_conj()``), which no capsule carries: then its
    values, ``x.resolve_conj().resolve_neg()`` (a copy). torch's own
    exchange hands a negated view's memory over as it is, and every
    consumer reads the values with their signs flipped (rules/README.md,
    "Array facts"); a conjugated view its ``__dlpack__`` refuses.

    Raises:
        BufferError: ``copy=False`` for such a view, which crosses right
            only as a copy.
    """
    torch = _sys.modules.get("torch")
    if torch is None or not isinstance(x, torch.Tensor) or not (x.is_neg() or x.is_conj()):
        return x
    if copy is False:
        bit = "negative" if x.is_neg() else "conjugate"
        raise BufferError(f"copy=False, but a tensor with the {bit} bit set crosses with its values only as a copy "
                          "(its capsule would hold the memory without the bit)\nhint: copy=None or copy=True "
                          "resolves it (x.resolve_conj().resolve_neg()), or pass that yourself")
    return x.resolve_conj().resolve_neg()


def _producer_capsule(x: Any, *, stream: int | None, max_version: Any, dl_device: Any, copy: bool | None) -> Any:
    """The producer's own capsule. A producer that predates DLPack 1.0
    (torch 1.13, numpy 1.x) takes only ``stream``: as numpy's own
    ``from_dlpack`` does, a TypeError for the newer keywords is answered by
    asking again with ``stream`` alone (the capsule is then unversioned,
    which a consumer of any version reads)."""
    kwargs = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device), ("copy", copy))
              if v is not None}
    if stream is not None:
        kwargs["stream"] = stream
    if not (kwargs.keys() - {"stream"}):
        return x.__dlpack__(**kwargs)
    try:
        return x.__dlpack__(**kwargs)
    except TypeError:
        return x.__dlpack__() if stream is None else x.__dlpack__(stream=stream)


#: The consumers :func:`from_dlpack` takes by name: the module and the
#: function (a dotted path in it), imported on first use.
_CONSUMERS = {
    "numpy": ("numpy", "from_dlpack"),
    "torch": ("torch", "from_dlpack"),
    "jax": ("jax.numpy", "from_dlpack"),
    "cupy": ("cupy", "from_dlpack"),
    "array-api-strict": ("array_api_strict", "from_dlpack"),
    "mlx": ("mlx.core", "from_dlpack"),
    "onnxruntime": ("onnxruntime", "OrtValue.from_dlpack"),
    "paddle": ("paddle.utils.dlpack", "from_dlpack"),
    "pyarrow": ("pyarrow", "Array.from_dlpack"),
    "tensorflow": ("tensorflow", "experimental.dlpack.from_dlpack"),
    "warp": ("warp", "from_dlpack"),
}

#: The consumers whose from_dlpack takes a capsule, not an array: they
#: are called as their users call them, ``from_dlpack(x.__dlpack__())``
#: (rules/tensorflow's rules decide that call).
_TAKES_A_CAPSULE = frozenset({"tensorflow"})

#: What :func:`from_dlpack`'s ``consumer`` takes by name.
Consumer = Literal["numpy", "torch", "jax", "cupy", "array-api-strict", "mlx", "onnxruntime", "paddle", "pyarrow",
                   "tensorflow", "warp"]

_consumers: dict[str, Callable[..., Any]] = {}


def _consumer(consumer: str | Callable[..., Any]) -> Callable[..., Any]:
    fn = _consumers.get(consumer) if isinstance(consumer, str) else None
    if fn is not None:
        return fn
    if callable(consumer):
        return consumer
    if consumer not in _CONSUMERS:
        raise ValueError(f"consumer is one of {', '.join(map(repr, _CONSUMERS))} or a from_dlpack callable, "
                         f"not {consumer!r}")
    module, path = _CONSUMERS[consumer]
    found: Callable[..., Any] = functools.reduce(getattr, path.split("."), cast(Any, importlib.import_module(module)))
    if consumer in _TAKES_A_CAPSULE:
        takes_a_capsule = found
        found = lambda x, **kwargs: takes_a_capsule(x.__dlpack__(), **kwargs)  # noqa: E731
    _consumers[consumer] = found
    return found


def _call_of(device: Any, copy: bool | None | NotPassed) -> dict[str, Any]:
    """The keywords the consumer's from_dlpack gets: ``device`` and
    ``copy``, each where the caller passed it (None too), as the caller
    passed it. A consumer that takes no such keyword raises its own
    TypeError, as it would called directly (torch 1.13's
    ``from_dlpack() got an unexpected keyword argument 'device'``)."""
    if copy is not NOT_PASSED and copy is not None and not isinstance(copy, bool):
        raise TypeError(f"copy is True, False or None, not {copy!r}")
    kwargs: dict[str, Any] = {}
    if device is not NOT_PASSED:
        kwargs["device"] = device
    if copy is not NOT_PASSED:
        kwargs["copy"] = copy
    return kwargs


def _refuse_as_jax(x: Any, device: Any, copy: bool | None | NotPassed, rules: Rules) -> None:
    """Raises what jax's own from_dlpack would raise for ``x`` (the
    jax-import rules' refusals, of its request or of its import: a device
    type it does not take, another device with ``copy=False``, strides it
    cannot lay out, a buffer it cannot view), decided by the cell of
    :func:`dlroute.interop.ask` before the exchange runs. A refusal of the
    producer's is not raised here: :class:`Routed` carries out the
    exchange rules' answer to it. Where no rules answer (a jax release no
    version covers, an array whose library dlroute does not read), jax
    itself answers."""
    try:
        with warnings.catch_warnings():
            # what the releases were checked against is ask's to say, not this check's
            warnings.simplefilter("ignore", UncheckedReleaseWarning)
            cell = ask(x, "jax", copy=copy, device=device, rules=rules if isinstance(rules, Engine) else None)
    except (DlrouteError, TypeError):
        return  # no rules for this jax or this array's library: jax itself answers
    decision = cell.decider["decision"]
    if cell.outcome == "error" and str(decision.get("ruleset", "")).startswith("jax-import@"):
        _raise(decision)


# The plans of exchanges the embedded rules export in place, by (consumer,
# device, copy, the array's inputs): the consumer's keywords. Where every
# __dlpack__ the consumer made was decided in place, on the array's own
# device, and the consumer got copy and device itself, handing it the
# array itself does exactly what the wrapper would. Any other exchange
# goes through the wrapper each time (its decisions are remembered too).
_plans: Memo[Any, dict[str, Any]] = Memo()

# The inputs of JAX arrays, by id: a JAX array's placement never changes,
# and reading it costs more than the exchange. Each entry leaves with its
# array (a weak reference's callback).
_jax_keys: Memo[int, tuple[weakref.ref[Any], Any]] = Memo()
# Whether a type is JAX-like (is_jax_like), by type.
_jax_types: dict[type, bool] = {}


def _forget_jax_key(i: int, _: object) -> None:
    _jax_keys.pop(i, None)


def _jax_inputs_key(x: Any) -> Any:
    """A JAX array's inputs as a memo key, remembered by the array (None
    where they hold something unhashable)."""
    hit = _jax_keys.get(id(x))
    if hit is not None and hit[0]() is x:
        return hit[1]
    key = _key(inputs_of(x))
    if key is not None:
        i = id(x)
        try:
            ref = weakref.ref(x, functools.partial(_forget_jax_key, i))
        except TypeError:
            return key
        _jax_keys.put(i, (ref, key))
    return key


@overload
def from_dlpack(x: Any, /, consumer: Literal["numpy"], *, device: Any = NOT_PASSED,
                copy: bool | None | NotPassed = NOT_PASSED, rules: Rules = None) -> numpy.ndarray[Any, Any]: ...
@overload
def from_dlpack(x: Any, /, consumer: Literal["torch"], *, device: Any = NOT_PASSED,
                copy: bool | None | NotPassed = NOT_PASSED, rules: Rules = None) -> torch.Tensor: ...
@overload
def from_dlpack(x: Any, /, consumer: Literal["jax"], *, device: Any = NOT_PASSED,
                copy: bool | None | NotPassed = NOT_PASSED, rules: Rules = None) -> jax.Array: ...
@overload
def from_dlpack(x: Any, /, consumer: str | Callable[..., Any], *, device: Any = NOT_PASSED,
                copy: bool | None | NotPassed = NOT_PASSED, rules: Rules = None) -> Any: ...


def from_dlpack(x: Any, /, consumer: str | Callable[..., Any], *, device: Any = NOT_PASSED,
                copy: bool | None | NotPassed = NOT_PASSED, rules: Rules = None) -> Any:
    """``x`` as an array of the consumer's library, exchanged as the
    exchange rules decide: ``consumer.from_dlpack(Routed(x, ...))``.

    A JAX GPU array whose platform JAX does not know, where
    ``torch.from_dlpack(x)`` raises ``BufferError: Unknown GPU platform
    for __dlpack__: ...``, comes back as a host copy; an array the rules
    export in place shares its memory, as the consumer's own call would.

    Args:
        x: the producer's array (as :class:`Routed` takes it), or a
            capsule (``torch.utils.dlpack.to_dlpack(t)``), which goes to a
            consumer that takes capsules (torch, cupy) as it is: it says
            nothing the rules could read.
        consumer: ``"numpy"`` (``numpy.from_dlpack``), ``"torch"``
            (``torch.from_dlpack``), ``"jax"`` (``jax.numpy.from_dlpack``),
            ``"cupy"`` (``cupy.from_dlpack``), or any ``from_dlpack``
            callable; positional or by keyword.
        device, copy: ``from_dlpack``'s own arguments, passed to the
            consumer exactly where given (``copy=None`` too): the consumer
            takes what its release takes, and one that has no such keyword
            raises its own TypeError, as called directly (torch 1.13:
            ``from_dlpack() got an unexpected keyword argument
            'device'``; ``torch.from_dlpack(dlroute.Routed(x, copy=True))``
            carries a copy request to it instead). ``device`` is where the
            result should be (``"cpu"``, a ``torch.device``, a JAX device);
            ``copy`` True always copies, False never (the rules raise
            where a copy is needed), None copies only where needed, and
            reaches the rules too (``jax.numpy.from_dlpack`` does not pass
            it on to ``__dlpack__``).
        rules: as for :func:`dlpack_device` (the ``"exchange"`` rule set).

    Returns:
        The consumer's array: sharing memory with ``x`` where the rules
        export it in place, else holding a host copy. A copy follows the
        producer's library: a torch tensor that requires grad is refused
        with torch's own exception, copy or not (``x.detach()`` first, as
        its message says). A torch view with the negative or conjugate bit
        (``torch._neg_view(t)``, ``t.conj().imag``, ``t.conj()``), whose
        bit no capsule carries, is first resolved, a copy
        (``x.resolve_conj().resolve_neg()``): the consumer gets the values
        the view reads, where torch's own exchange hands a negated view's
        memory over un-negated and refuses a conjugated one. An array the
        consumer would abort the interpreter on (a negative stride into
        torch 1.13-2.13) is a contiguous host copy.

    Raises:
        BufferError, ValueError, ...: the rules' exception, with its exact
            type and message; for ``consumer="jax"`` also what the
            jax-import rules decide jax's from_dlpack raises (before
            anything runs); whatever the consumer raises.
        RuntimeError: ``copy=False`` for an array the consumer would abort
            on, with torch 2.15's text and a hint.
        BufferError: ``copy=False`` for a torch view with the negative or
            conjugate bit, which crosses right only as a copy.
        TypeError: a ``device`` or ``copy`` the consumer does not take (its
            own).
        ValueError: an unknown consumer name.
    """
    fn = _consumers.get(consumer) if isinstance(consumer, str) else None
    if fn is None:
        fn = _consumer(consumer)
    x = _resolved(x, copy)  # before the plan: a view's inputs are its tensor's
    # The plan: a hit is an exchange the embedded rules export in place, so
    # the consumer gets the array itself. (Rules given as an Engine or a
    # RuleSet are asked each time: a plan would outlive their close().)
    t = type(x)
    jax_like = _jax_types.get(t)
    if jax_like is None:
        jax_like = _jax_types[t] = is_jax_like(x)
    d = None
    strides: Any = None
    if jax_like:
        inputs = _jax_inputs_key(x)
    else:
        try:
            d = inputs_of(x)
        except TypeError:
            if t.__name__ == "PyCapsule":  # a legacy capsule: the consumer's to take or refuse
                return fn(x, **_call_of(device, copy))
            raise
        values = d.values()
        # the strides too: a negative one decides whether torch aborts
        strides = getattr(x, "strides", None)
        if strides is None and callable(getattr(x, "stride", None)):
            strides = tuple(x.stride())
        inputs = (*d, *values, *map(type, values), strides)  # _key's, inline
    plan_key: Any = None
    kwargs = None
    if rules is None and inputs is not None:
        plan_key = (fn, device, copy, inputs)
        try:
            kwargs = _plans.get(plan_key)
        except TypeError:  # a list among the inputs (a shape), or an unhashable device
            frozen = _key(d) if d is not None else None
            plan_key = None if frozen is None else (fn, device, copy, frozen, strides)
            try:
                kwargs = None if plan_key is None else _plans.get(plan_key)
            except TypeError:
                plan_key = None
        if kwargs is not None:
            return fn(x, **kwargs) if kwargs else fn(x)
    name = consumer if isinstance(consumer, str) else None
    if name == "jax":
        _refuse_as_jax(x, device, copy, rules)
    kwargs = _call_of(device, copy)
    routed = Routed(x, copy=None if copy is NOT_PASSED else copy, rules=rules, consumer=name)
    if plan_key is None:
        return fn(routed, **kwargs)
    routed._steps = []
    out = fn(routed, **kwargs)
    in_place = bool(routed._steps) and all(s == "in_place" for s in routed._steps)
    if in_place:
        try:
            in_place = tuple(map(int, x.__dlpack_device__())) == routed.__dlpack_device__()
        except Exception:
            in_place = False
    if in_place:
        _plans.put(plan_key, kwargs)
    return out
