"""The exceptions dlroute raises, each with a stable ``code``.

The codes are those of the engine (ERRORS.md lists them): match on
``err.code``, never on the message. ``str(err)`` is the message, and the
hint on a line of its own; the hints name the Python call
(``engine.ruleset("numpy@v2")``) where the engine's name the command line's
flag. The rules' own decisions to raise
(``BufferError``, ``ValueError``, ...) are not these: ``RuleSet.resolve``
returns them as decisions, and :mod:`dlroute.routing` raises them with
their exact type and message.
"""

from __future__ import annotations

import builtins
import re
import warnings
from typing import Any

__all__ = [
    "DlrouteError",
    "InputError",
    "EvaluationError",
    "HostError",
    "LoadError",
    "NoRuleSetError",
    "LibraryError",
    "ForkedError",
    "UncheckedReleaseWarning",
    "DecidedError",
    "decided_exception",
]


class DlrouteError(Exception):
    """Base of dlroute's exceptions.

    Attributes:
        code: the stable code, such as ``"wrong_type"`` or ``"load_error"``.
        message: the engine's message, without the code.
        details: the error object(s) the library returned, parsed from JSON
            (with ``position``, ``source`` and ``hint`` where the engine gave
            them), or ``None``.
        hint: what to do about it, where the engine says (the versions
            nearest a release no version covers, the names loaded), in
            Python's words, or ``None``. ``str(err)`` is the message and
            then the hint, on a line of its own.
    """

    def __init__(self, code: str, message: str, details: Any = None) -> None:
        hint = details.get("hint") if isinstance(details, dict) else None
        hint = python_hint(hint) if hint else None
        super().__init__(message + (f"\nhint: {hint}" if hint else ""))
        self.code = code
        self.message = message
        self.details = details
        self.hint = hint

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled whole (a forked child's answerer sends them): the default
        # would call the class with str(err) alone.
        return _rebuild, (type(self), self.code, self.message, self.details)


def _rebuild(cls: type[DlrouteError], code: str, message: str, details: Any) -> DlrouteError:
    err = cls.__new__(cls)
    DlrouteError.__init__(err, code, message, details)
    return err


# The engine's hints name the command line's flags; a Python caller reads
# the call that does the same.
_CLI_WORDS = [
    (re.compile(r"--ruleset (\S+?@<version>)"), r'engine.ruleset("\1")'),
    (re.compile(r"`dlroute rules` lists them"), "engine.rulesets() lists them"),
    (re.compile(r"point --rules at"), "give dlroute.load()"),
    (re.compile(r"a strict mode \(--strict-release, strict=True\)"), "strict=True"),
    (re.compile(r"\(DiffOptions\.MaxInputs, or dlroute diff --max-inputs N\)"), "(dlroute diff --max-inputs N)"),
]


def python_hint(hint: str) -> str:
    """The engine's hint with its command-line flags said as the Python
    calls that do the same (``--ruleset torch@<version>`` is
    ``engine.ruleset("torch@<version>")``)."""
    for pattern, words in _CLI_WORDS:
        hint = pattern.sub(words, hint)
    return hint


class InputError(DlrouteError, ValueError):
    """An input that is not valid for the rule set (``input_error``).

    Codes: ``json_syntax``, ``unknown_field``, ``missing_field``,
    ``wrong_type``, ``too_long``, ``invalid_utf8``. It is a ``ValueError``
    too, as an argument of the wrong value is in Python.
    """


class EvaluationError(DlrouteError):
    """The rules could not decide the input (``eval_error``): an expression
    failed, exceeded its cost limit, or no rule matched. ``details`` holds
    the position in the rule file."""


class HostError(DlrouteError):
    """The rules decided, and no host here can carry the decision out
    (``host_error``): code ``no_copier`` for a copy onto a device, which no
    copier here makes. Not an :class:`EvaluationError`: the rules did
    decide, and the Node package and the WebAssembly module say the same
    (their ``HostError``, ``host_error``)."""


class LoadError(DlrouteError):
    """The rules did not load (``load_error``). ``errors`` lists every error,
    each a dict with ``code``, ``message`` and, where the engine knows it,
    ``position`` (``file``, ``line``, ``column``), ``source`` and ``hint``."""

    @property
    def errors(self) -> list[dict[str, Any]]:
        return list(self.details or [])


# The names EvaluationError and LoadError had in 0.1, before they took the
# Node package's (and LoadError the status's, load_error): still answered,
# with a DeprecationWarning, until the next minor version.
RENAMED = {"EvalError": "EvaluationError", "RulesError": "LoadError"}


def renamed(module: str, name: str) -> type[DlrouteError]:
    """The exception an old name stands for, with a DeprecationWarning at
    the caller's line; AttributeError for any other name of module."""
    if name not in RENAMED:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    new = RENAMED[name]
    warnings.warn(f"dlroute.{name} is now dlroute.{new}; the old name goes in the next minor version",
                  DeprecationWarning, stacklevel=3)
    cls: type[DlrouteError] = globals()[new]
    return cls


def __getattr__(name: str) -> type[DlrouteError]:
    return renamed(__name__, name)


class NoRuleSetError(DlrouteError, LookupError):
    """No rule set of that name or version (``no_ruleset``), or under
    ``strict=True`` a release no version was checked against
    (``unchecked_release``: the message is the warning's)."""


class UncheckedReleaseWarning(UserWarning):
    """A release ref (``"numpy==2.6.0"``, ``"torch==1.13.0a0+gitunknown"``)
    answered by a version that was not checked against that release: the
    release is newer than every version's range, so the newest stands in
    for it, or it is a pre-release or development build, read as the
    release it is a build of. The message says what the version was
    checked against, run here or read from source; ``strict=True`` raises
    :class:`NoRuleSetError` (code ``unchecked_release``) instead.

    Attributes:
        code: ``"unchecked_release"``.
        ref: the ref as named; ruleset: the version that answers it
            (``"numpy@v2"``).
        details: the engine's warning, parsed from JSON: ``release``,
            ``build`` and ``read_as`` for a build, ``newer``, ``releases``
            (``first``, ``last``, ``checked``: release -> ``"run"`` or
            ``"source"``), ``message``, ``hint``.
    """

    def __init__(self, details: dict[str, Any]) -> None:
        super().__init__(details.get("message", "a release no version was checked against"))
        self.code: str = details.get("code", "unchecked_release")
        self.ref: str | None = details.get("ref")
        self.ruleset: str | None = details.get("ruleset")
        self.details = details


def release_warning(details: dict[str, Any], strict: bool, stacklevel: int) -> None:
    """Warns of details, the engine's release warning, or under strict
    raises NoRuleSetError with it, as ``--strict-release`` refuses."""
    if strict:
        refusal = dict(details)
        refusal["hint"] = (f"name the version to use it anyway (engine.ruleset({details.get('ruleset')!r})), or check the "
                           "release first: `python -m dlroute check`")
        raise NoRuleSetError("unchecked_release", "refused (strict): " + details.get("message", ""), refusal)
    warnings.warn(UncheckedReleaseWarning(details), stacklevel=stacklevel + 1)


class LibraryError(DlrouteError, ImportError):
    """libdlroute cannot be used: it is missing and cannot be built, it does
    not load, or it has another ABI version (``code``: ``no_library``,
    ``build_failed``, ``load_failed``, ``abi_version``, ``closed``,
    ``internal``)."""


class ForkedError(LibraryError):
    """A call from a child of the process that loaded libdlroute (code
    ``forked``). The library runs a Go runtime, which does not survive
    ``fork()``; use the ``"spawn"`` or ``"forkserver"`` start method of
    :mod:`multiprocessing` (``torch.utils.data.DataLoader(...,
    multiprocessing_context="spawn")``), and load dlroute in the child."""


class DecidedError(DlrouteError):
    """An exception the rules decided whose type (``type_name``) is not a
    Python builtin exception. ``str(err)`` is the rules' message, exactly;
    ``code`` is ``"decided"``."""

    def __init__(self, type_name: str, message: str, decision: Any) -> None:
        super().__init__("decided", message, decision)
        self.type_name = type_name

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.type_name, self.message, self.details)

    def __str__(self) -> str:
        return self.message


def decided_exception(decision: Any) -> Exception:
    """The exception a decision's ``error`` names, not raised: the builtin
    of that name (``BufferError``, ``ValueError``, ...), else a
    :class:`DecidedError`, with the rules' message exactly and the decision
    as its ``decision`` attribute."""
    err = decision["error"]
    cls = getattr(builtins, err["type"], None)
    if isinstance(cls, type) and issubclass(cls, Exception) and not issubclass(cls, Warning):
        exc: Exception = cls(err["message"])
    else:
        exc = DecidedError(err["type"], err["message"], decision)
    exc.decision = decision  # type: ignore[attr-defined]
    return exc
