"""Inputs as the JSON the library reads, and the InputError of a field no
JSON input can hold.

A dict of inputs is written with ``json.dumps`` and sent as UTF-8. Some
Python values have no JSON form: bytes, an object, ``nan``, a string with
a lone surrogate (``"\\ud800"``, which UTF-8 cannot encode). They raise
InputError with the code the JSON path gives the nearest JSON input
(``wrong_type``, ``invalid_utf8``, ``unknown_field`` for a name that is no
string), naming the field, never a raw TypeError or UnicodeEncodeError.
The walk that finds the field runs only when ``json.dumps`` or the UTF-8
encoding has failed, so a good input costs one ``dumps``.
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Iterable

from .errors import InputError

# How deep the walk follows lists and dicts, short of Python's recursion
# limit: deeper is refused, as json.dumps would fail on it anyway.
MAX_DEPTH = 200


def encode_fields(fields: dict[Any, Any], name: Callable[[str], str],
                  want: Callable[[str], str | None] = lambda _: None) -> bytes:
    """The JSON object of fields, as UTF-8 bytes.

    Args:
        fields: the dict to send.
        name: how a message names the field of a key (``"input
            memory_kind"``).
        want: the declared type of a key, as the engine writes it
            (``"string or null"``), or None when it is not known here.

    Raises:
        InputError: a field with no JSON form (code ``wrong_type`` or
            ``invalid_utf8``), or a key that is not a string (code
            ``unknown_field``).
    """
    try:
        return dumps(fields).encode()
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        pass
    for key, value in fields.items():
        if not isinstance(key, str):
            raise _error("unknown_field", f"{name(str(key))} is a Python {type(key).__qualname__}, not a field "
                                          "name: names are strings")
        if _lone_surrogate(key) is not None:
            raise _error("invalid_utf8", f"{name(ascii(key))} is not valid UTF-8: the name holds a lone surrogate")
        problem = _problem(value, "", 0, set())
        if problem is not None:
            code, what = problem
            w = want(key) if code == "wrong_type" else None
            raise _error(code, f"{name(key)} {what}" + (f"; want {w}" if w else ""))
    # Nothing found: a type json.dumps refuses for a reason not walked here.
    raise _error("wrong_type", f"the fields have no JSON form: {dumps_error(fields)}")


def dumps(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps_error(v: Any) -> str:
    try:
        dumps(v).encode()
    except (TypeError, ValueError, RecursionError) as e:
        return str(e)
    return "none"


def want_of(inputs: Iterable[dict[str, Any]]) -> Callable[[str], str | None]:
    """The declared type of each input, as the engine's messages write it:
    ``string?`` is ``string or null``."""
    types = {}
    for d in inputs:
        t = d.get("type", "")
        types[d["name"]] = t[:-1] + " or null" if t.endswith("?") else t
    return types.get


def _error(code: str, message: str) -> InputError:
    return InputError(code, message, {"code": code, "message": message})


def _lone_surrogate(s: str) -> int | None:
    try:
        s.encode()
    except UnicodeEncodeError as e:
        return e.start
    return None


def _problem(v: Any, at: str, depth: int, seen: set[int]) -> tuple[str, str] | None:
    """What keeps v, at path at inside a field, from being JSON: (code, the
    message's words), or None."""
    where = f" at {at}" if at else ""
    if v is None or isinstance(v, (bool, int)):
        return None
    if isinstance(v, str):
        i = _lone_surrogate(v)
        if i is None:
            return None
        return "invalid_utf8", f"is not valid UTF-8: it holds a lone surrogate (U+{ord(v[i]):04X} at index {i}){where}"
    if isinstance(v, float):
        if math.isfinite(v):
            return None
        return "wrong_type", (f"is {v!r}" if not at else f"holds {v!r} at {at}") + ", which JSON has no number for"
    if isinstance(v, (list, tuple, dict)):
        if depth >= MAX_DEPTH or id(v) in seen:
            return "wrong_type", f"nests deeper than {MAX_DEPTH} levels, or holds itself{where}"
        seen.add(id(v))
        items = enumerate(v) if not isinstance(v, dict) else v.items()
        for k, x in items:
            if isinstance(v, dict):
                if not isinstance(k, (str, int, float, bool)) and k is not None:
                    return "wrong_type", f"has a key that is a Python {type(k).__qualname__}{where}"
                if isinstance(k, str) and _lone_surrogate(k) is not None:
                    return "invalid_utf8", f"is not valid UTF-8: a key holds a lone surrogate{where}"
            problem = _problem(x, f"{at}[{k!r}]", depth + 1, seen)
            if problem is not None:
                return problem
        seen.discard(id(v))
        return None
    kind = f"a Python {type(v).__qualname__}"
    return "wrong_type", (f"is {kind}" if not at else f"holds {kind} at {at}")
