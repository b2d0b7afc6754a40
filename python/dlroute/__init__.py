"""dlroute: how an array crosses DLPack, decided by versioned rules.

``torch.from_dlpack(x)`` either shares ``x``'s memory, copies it, or raises
(a JAX GPU array whose platform JAX does not know: ``BufferError: Unknown
GPU platform for __dlpack__: ...``); which one is decided in the libraries'
code. dlroute decides it from rules, and carries the decision out:

>>> import numpy as np, dlroute
>>> y = dlroute.from_dlpack(np.arange(3.0), "numpy")   # np.from_dlpack, as the rules decide
>>> dlroute.ask(np.arange(3.0), "numpy", copy=True).outcome
'producer_copy'

- :func:`from_dlpack`: ``x`` as an array of the consumer's library
  (``"numpy"``, ``"torch"``, ``"jax"``, ``"cupy"``): in place where the
  rules export it so, a host copy where they say so (where the library
  itself would raise), or the rules' exception with the library's type
  and message.
- :class:`Routed`: ``x`` wrapped so that any consumer's ``from_dlpack``
  gets the rules' decision (``torch.from_dlpack(dlroute.Routed(x))``).
- :func:`ask`: what ``consumer.from_dlpack(x)`` would do, before anything
  runs, and the fix where it would raise (``Cell.remedy``).
- :func:`catch_set`: the exceptions one library's arrays can raise in
  another's ``from_dlpack`` over every release the rules cover
  (``except dlroute.catch_set("numpy", "torch").exceptions:``).
- :func:`load`: the rules themselves: ``dlroute.load().ruleset("jax")
  .resolve({...})``.

:mod:`dlroute.testing` makes an array that looks like a JAX GPU array on a
platform JAX does not know, to try all of this without a GPU. The package
needs nothing but the standard library; numpy only where it makes a host
copy.
"""


from ._engine import Engine, Exchange, RuleSet, library_version, load
from ._types import CapsuleKind, DecidedException, Decision, DeviceTypeName, ProcessFacts, RuleSetInfo, Step
from ._version import __version__
from .errors import (DecidedError, DlrouteError, EvaluationError, ForkedError, HostError, InputError, LibraryError,
                     LoadError, NoRuleSetError, UncheckedReleaseWarning)
from .errors import renamed as _renamed
from .interop import CatchSet, Cell, Outcome, Remedy, ask, catch_set
from .routing import Routed, decide, dlpack_device, from_dlpack

__all__ = [
    "from_dlpack",
    "Routed",
    "ask",
    "catch_set",
    "CatchSet",
    "Remedy",
    "load",
    "decide",
    "dlpack_device",
    "library_version",
    "Engine",
    "RuleSet",
    "Exchange",
    "Cell",
    "Decision",
    "DecidedException",
    "DeviceTypeName",
    "Step",
    "CapsuleKind",
    "Outcome",
    "ProcessFacts",
    "RuleSetInfo",
    "DlrouteError",
    "InputError",
    "EvaluationError",
    "HostError",
    "LoadError",
    "NoRuleSetError",
    "LibraryError",
    "ForkedError",
    "DecidedError",
    "UncheckedReleaseWarning",
]


def __getattr__(name: str) -> type[DlrouteError]:
    # dlroute.EvalError and dlroute.RulesError, the names of 0.1, with a
    # DeprecationWarning (errors.py RENAMED).
    return _renamed(__name__, name)


def __dir__() -> list[str]:
    # What a user calls, not the modules it is made of (dlroute.testing,
    # dlroute.check and the others stay importable by name).
    return list(__all__)
