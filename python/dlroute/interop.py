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
  :func:`array_of`, against the releases installed here. A cell that
  raises carries its :class:`Remedy`, the cheapest fix the rules say
  crosses (``cell.remedy.fix``: ``"x.cpu()"``).
- :func:`catch_set`: the exception types one library's arrays can raise
  in another's ``from_dlpack`` over every release covered, and the
  ``except`` line that catches them.

Nothing is carried out: no array is touched but to read where it lives.
"""

from __future__ import annotations

import functools
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from ._cells import CatchSet, Cell, Outcome, Remedy, catch_set as _catch_set, cell
from ._engine import Engine, default_engine
from ._process import facts_here
from ._types import NOT_PASSED, NotPassed, ProcessFacts
from .arrays import _jax_inputs, array_text, facts_of, is_jax_like

__all__ = ["CatchSet", "Cell", "Outcome", "Remedy", "ask", "array_of", "catch_set", "installed_ref"]

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
    library, inputs = _library_inputs(x)
    facts = facts_of(x)
    if library == "numpy":
        facts.pop("writeable")  # numpy's own input, read above
    return library, {**inputs, **facts}


def _library_inputs(x: Any) -> tuple[str, dict[str, Any]]:
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
    try:
        return f"{name}=={version(name)}"
    except PackageNotFoundError:
        return name


def ask(x: Any, consumer: str, *, copy: bool | None | NotPassed = NOT_PASSED, device: Any = NOT_PASSED,
        process: ProcessFacts | None = None, producer: str | None = None, rules: Engine | None = None,
        strict: bool = False) -> Cell:
    """What ``consumer.from_dlpack(x, copy=copy, device=device)`` does with
    the real array ``x``, decided before anything runs: in place, a copy
    and who makes it, or the exception, its type and exact message.

    Args:
        x: a JAX array, torch tensor or numpy array (see :func:`array_of`).
        consumer: the consuming library, ``"torch"``, ``"numpy"`` or
            ``"jax"`` (``jax.dlpack.from_dlpack``, which
            ``jax.numpy.from_dlpack`` calls): a bare name is the release
            installed here (:func:`installed_ref`), a ref (``"torch@v1"``,
            ``"numpy==2.5.0"``, ``"jax==0.10.2"``) that version.
        copy, device: from_dlpack's arguments, each where given: ``copy=None``
            is a keyword passed as None (torch 1.13 refuses it), not the
            argument left out. A JAX device or single-device Sharding is
            read as jax reads it.
        process: what the consumer's process is (a
            :class:`dlroute.ProcessFacts`: torch's ``gpu_build`` and
            ``cuda_driver``, jax's ``backends`` and ``x64``, numpy's
            ``ml_dtypes``, ...); each consumer reads those its rule set
            declares. None (the default): read from this process, from
            the consumer's library where it is imported (else the rules'
            defaults).
        producer: the producer's rule set; default the library of ``x`` at
            its installed release.
        rules: an :class:`~dlroute.Engine`; None for the embedded rules,
            loaded once per process.
        strict: raise, rather than warn, where an installed release is
            one no version was checked against (default False).

    Where the answer is an exception that prints the array (jax's
    TypeError for a device type it does not take), the array's text is
    ``str(x)`` (:func:`dlroute.arrays.array_text`), read only then.

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
    library, inputs = array_of(x)
    if process is None:
        process = facts_here(consumer.partition("==")[0].partition("@")[0])
    return cell(rules or default_engine(), installed_ref(producer or library), installed_ref(consumer), array=inputs, copy=copy,
                device=device, process=process, strict=strict, stacklevel=2, text=lambda: array_text(x))


def catch_set(producer: str, consumer: str, *, rules: Engine | None = None) -> CatchSet:
    """The portable catch set of ``producer``'s arrays into ``consumer``'s
    ``from_dlpack``: the exception types the exchange can raise over every
    version of both libraries the rules hold (every array the producer's
    rules distinguish and every array class it makes; ``from_dlpack(x)``,
    and ``copy=True`` and ``copy=False`` where the consumer takes them),
    as ``dlroute interop --catch`` prints it::

        cs = dlroute.interop.catch_set("numpy", "torch")
        cs.except_line  # 'except (BufferError, RuntimeError, TypeError):'
        try:
            y = torch.from_dlpack(x)
        except cs.exceptions:
            y = torch.from_dlpack(np.asarray(x).copy())

    ``SilentlyDifferent`` and the signals that end the interpreter are
    not raised, so they are in ``cs.uncatchable``, not ``cs.types``.

    Args:
        producer, consumer: library names (``"numpy"``, ``"jax"``: every
            version), or refs (``"torch@v1"``, ``"jax==0.10.2"``: that
            one).
        rules: an :class:`~dlroute.Engine`; None for the embedded rules.

    The answer is remembered by the engine: over every version it takes
    the library a second or more.

    Raises:
        dlroute.NoRuleSetError: a name the rules lack, or a library that
            is not one on its side (code ``no_ruleset``).
        TypeError: producer or consumer is not a str.
    """
    return _catch_set(rules or default_engine(), producer, consumer)
