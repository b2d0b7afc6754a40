"""What the runner's parts share (:mod:`dlroute.check`): its results and
report, the rules directory and the version chosen for a release, the
outcomes decided and observed, :class:`Checker`, one library's side, and
the calls every checker makes (the export, the request a recording
producer sees, a capsule's facts, the C exchange API's export). The
library checkers import this module; it imports none of them."""

from __future__ import annotations

import ctypes
import functools
import json
import math
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import warnings
import weakref
from dataclasses import asdict, dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable, Iterable

from .. import _capsules
from ..arrays import c_exchange_api_of
from .._engine import load
from ..errors import NoRuleSetError, UncheckedReleaseWarning

#: The libraries the runner knows, in the order it reports them.
LIBRARIES = ("numpy", "torch", "jax", "cupy", "pyarrow", "array_api_strict", "onnxruntime", "tensorflow", "paddle", "mlx", "warp")

FLAG_BITS = {"DLPACK_FLAG_BITMASK_READ_ONLY": 1, "DLPACK_FLAG_BITMASK_IS_COPIED": 2,
             "DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED": 4}

#: An observed or decided outcome: a dict such as {"raise": ["BufferError",
#: "..."]} or {"device": [1, 0], "capsule": "dltensor", "copy": False}.
Outcome = dict


class Unreachable(Exception):
    """A case this machine cannot run; the message says why."""


@dataclass
class Result:
    """One case run (or not): ``status`` is "agree", "differ" or
    "unreachable" (``why`` says why); ``want`` is what the rules decide,
    ``got`` what the library did."""

    library: str
    ref: str
    case: str
    status: str
    why: str | None = None
    want: Outcome | None = None
    got: Outcome | None = None


@dataclass
class Target:
    """A library installed here and the rule-set version run against it.
    ``covered``: that version's manifest covers ``release``; otherwise it is
    the nearest, and the table says whether it holds."""

    library: str
    ruleset: str
    release: str
    ref: str
    covered: bool
    range: str
    #: how the manifest says this release was checked ("run", "source"), or None
    checked: str | None = None


@dataclass
class Report:
    """Every result, by library, and the targets they were run against."""

    targets: list[Target] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def differences(self) -> int:
        return sum(r.status == "differ" for r in self.results)

    def counts(self) -> list[dict[str, Any]]:
        """One row per (library, ref): cases run, agree, differ, unreachable
        and the reasons, each with its count."""
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        for r in self.results:
            row = rows.setdefault((r.library, r.ref), {"library": r.library, "ref": r.ref, "run": 0, "agree": 0,
                                                      "differ": 0, "unreachable": 0, "reasons": {}})
            row[r.status] += 1
            if r.status == "unreachable":
                row["reasons"][r.why] = row["reasons"].get(r.why, 0) + 1
            else:
                row["run"] += 1
        return list(rows.values())

    def to_json(self) -> dict[str, Any]:
        return {"targets": [asdict(t) for t in self.targets], "summary": self.counts(), "notes": self.notes,
                "differences": [asdict(r) for r in self.results if r.status == "differ"],
                "unreachable": [asdict(r) for r in self.results if r.status == "unreachable"]}


# --- rules and releases ---------------------------------------------------------


def rules_dir(path: str | Path | None = None) -> Path:
    """The rules directory: ``path``; else the checkout's ``rules/`` where
    the package runs from a checkout; else the package's installed copy."""
    if path is not None:
        return Path(path)
    package = Path(__file__).resolve().parent.parent
    checkout = package.parent.parent / "rules"
    if (package.parent.parent / "go.mod").is_file() and checkout.is_dir():
        return checkout
    return package / "_rules"


def _yaml(path: Path) -> Any:
    try:
        import yaml
    except ImportError:
        raise ImportError("python -m dlroute check reads tests.yaml with PyYAML, which it was installed "
                          "without\nhint: pip install 'dlroute[check]' (or pip install pyyaml)") from None
    # libyaml's loader where PyYAML was built with it (its wheels and
    # Debian's are): the same safe schema, several times as fast on the
    # cases of every version (BENCHMARKS.md, "The machine's CPU, not the
    # processes'").
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def release_tuple(release: str) -> tuple[int, ...]:
    """The base release of a version string: 2.15.0+cu132 and 1.13.0a0+gitunknown
    read as (2, 15, 0) and (1, 13, 0)."""
    m = re.match(r"\d+(?:\.\d+)*", release)
    if not m:
        raise ValueError(f"{release!r} is not a release number")
    return tuple(int(p) for p in m.group(0).split("."))


def _padded(t: tuple[int, ...], n: int = 4) -> tuple[int, ...]:
    return t + (0,) * (n - len(t))


def checked_as(root: Path, ref: str, release: str) -> str | None:
    """How ref's manifest says release was checked against its real code
    (mirrors.releases.checked: "run" or "source"), or None. The release is
    read by its base release, as choose_version reads it: 2.15.0+cpu is
    2.15.0."""
    rel = _releases(root, ref)
    base = _padded(release_tuple(release))
    for key, how in (rel.get("checked") or {}).items():
        if _padded(release_tuple(str(key))) == base:
            return how
    return None


def choose_version(root: Path, name: str, release: str, engine: Any = None) -> tuple[str, bool, str]:
    """The version of rule set ``name`` that ``engine.ruleset(f"{name}=={release}")``
    gives a user of ``release`` (the engine's own choice, ``engine`` loaded
    from ``root`` when None), as (ref, covered, "first-last"): covered
    unless the release is newer than every range (the engine answers it
    with the newest version and a warning). Where the engine refuses, a
    release older than every range or in a gap between two, it is the
    nearest version by release, with covered False: what a range would
    grow to cover."""
    own = engine is None
    if own:
        engine = load(str(root))
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always", UncheckedReleaseWarning)
            ref = engine.ruleset(f"{name}=={release}").ref
    except NoRuleSetError:
        return _nearest(root, name, release)  # or raises, where two ranges hold it
    finally:
        if own:
            engine.close()
    newer = any(issubclass(w.category, UncheckedReleaseWarning) and w.message.details.get("newer")
                for w in record)
    return ref, not newer, _span(root, ref)


def _releases(root: Path, ref: str) -> dict[str, Any]:
    """mirrors.releases of ref's manifest, or {}."""
    name, version = ref.split("@")
    path = root / name / version / "manifest.yaml"
    return ((_yaml(path).get("mirrors") or {}).get("releases") or {}) if path.is_file() else {}


def _span(root: Path, ref: str) -> str:
    rel = _releases(root, ref)
    return f"{rel.get('first', '')}-{rel.get('last', '')}"


def _nearest(root: Path, name: str, release: str) -> tuple[str, bool, str]:
    """The version of name whose range is nearest release, which the engine
    gives no version for, with covered False; a LookupError naming them
    where two ranges hold it, which the engine refuses too."""
    base = _padded(release_tuple(release))
    best: tuple[int, str] | None = None
    covering: list[str] = []
    for manifest in sorted((root / name).glob("*/manifest.yaml")):
        ref = f"{name}@{manifest.parent.name}"
        rel = _releases(root, ref)
        if not rel:
            continue
        first, last = (_padded(release_tuple(str(rel[end]))) for end in ("first", "last"))
        if first <= base <= last:
            covering.append(f"{ref} ({_span(root, ref)})")
        gap = min(abs(_distance(base, first)), abs(_distance(base, last)))
        if best is None or gap < best[0]:
            best = (gap, ref)
    if len(covering) > 1:
        raise LookupError(f"{release} lies in the releases of {len(covering)} versions of {name}: "
                          + ", ".join(covering) + "; a release is covered by one version only")
    if best is None:
        raise LookupError(f"no version of {name} names the releases it mirrors")
    return best[1], False, _span(root, best[1])


def _distance(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    return sum((x - y) * 1000 ** (len(a) - i) for i, (x, y) in enumerate(zip(a, b)))


def load_cases(root: Path, ref: str) -> list[dict[str, Any]]:
    name, version = ref.split("@")
    return _yaml(root / name / version / "tests.yaml")["cases"]


# --- decisions as outcomes ------------------------------------------------------


def values(explanation: dict[str, Any]) -> dict[str, Any]:
    """The values the rules computed, by name."""
    return {v["name"]: v.get("value") for v in explanation["trace"]["values"]}


def raised(e: BaseException) -> Outcome:
    return {"raise": [type(e).__name__, str(e)]}


def decided_export(explanation: dict[str, Any]) -> Outcome:
    """A decision of a producer's ``__dlpack__`` as the capsule it makes.
    The DLPack version is compared where the rules state it (a value named
    ``export_version``)."""
    d = explanation["decision"]
    if "error" in d:
        return {"raise": [d["error"]["type"], d["error"]["message"]]}
    out: Outcome = {"device": [d["device_type_code"], d["device_id"]], "capsule": d.get("capsule", "dltensor"),
                    "copy": bool(d.get("copy", False))}
    if out["capsule"] == "dltensor_versioned":
        out["flags"] = sum(FLAG_BITS[f] for f in d.get("flags", []))
        version = values(explanation).get("export_version")
        if version is not None:
            out["version"] = list(version)
    return out


def decided_device(explanation: dict[str, Any]) -> Outcome:
    d = explanation["decision"]
    if "error" in d:
        return {"raise": [d["error"]["type"], d["error"]["message"]]}
    return {"device": [d["device_type_code"], d["device_id"]]}


def decided_import(explanation: dict[str, Any]) -> Outcome:
    """A consumer's import decided: the array's device and whether it copies."""
    d = explanation["decision"]
    if "error" in d:
        return {"raise": [d["error"]["type"], d["error"]["message"]]}
    return {"device": [d["device_type_code"], d["device_id"]], "copy": bool(d.get("copy", False))}


def observed_export(capsule: Any, pointer: int | None) -> Outcome:
    """What a real capsule says, in decided_export's form (``want`` says
    whether to compare the version: the rules may not state it)."""
    c = _capsules.read_capsule(capsule)
    out: Outcome = {"device": list(c["device"]), "capsule": c["capsule"],
                    "copy": pointer is not None and c["data"] != pointer}
    if c["capsule"] == "dltensor_versioned":
        out["flags"] = c["flags"]
        out["version"] = list(c["version"])
    return out


def compare(want: Outcome, got: Outcome) -> bool:
    """Byte for byte, over what the rules state: a version the rules leave
    unstated is not compared."""
    if "version" in got and "version" not in want:
        got = {k: v for k, v in got.items() if k != "version"}
    return want == got


# --- running --------------------------------------------------------------------


#: The calls a case of a library's own rule set makes (its ``call`` input);
#: the rules refuse any other, and no library has one to run.
CALLS = ("__dlpack_device__", "__dlpack__", "request", "from_dlpack")


class Checker:
    """One library's side: ``rulesets`` it is checked by, and ``run(name,
    input, explanation)`` giving the observed outcome and the decided one, or
    raising Unreachable. ``sweeps`` are generated cases beside tests.yaml's.

    :meth:`run` is the dispatch every library's rule set shares; a library
    gives its own parts as hooks: :meth:`case_array` (the array a case
    describes), :meth:`import_` (its from_dlpack of a capsule made by hand)
    and :meth:`consume`, and where it needs them :meth:`reachable`,
    :meth:`data_pointer`, :meth:`requested` and :meth:`imported`. numpy,
    torch, cupy and jax, whose rule sets run other calls too, have a
    ``run`` of their own."""

    library: str = ""
    rulesets: tuple[str, ...] = ()

    def release(self) -> str:
        return version(self.library)

    def run(self, name: str, inp: dict[str, Any], rs: Any) -> tuple[Outcome, Outcome]:
        """(decided, observed) for one case of rule set ``name``'s version
        ``rs``: the case's call (one of :data:`CALLS`) made of the
        library's own functions. Raises Unreachable: a call the rules
        refuse (no library has it), or a case :meth:`reachable` says this
        machine cannot run."""
        call = inp.get("call")
        if call not in CALLS:
            raise Unreachable("not a call of the library: the rules' own refusal of an unknown call")
        dflt = defaults(rs)
        self.reachable(inp, dflt)
        explanation = rs.explain(inp)
        if call == "__dlpack_device__":
            x = None
            try:
                x = self.case_array(inp, dflt)
                got: Outcome = {"device": device_of(x)}
            except Unreachable:
                raise
            except Exception as e:  # the library's own refusal is the outcome
                got = raised(e)
            if x is None:  # no array: no type to read the C exchange API of
                return decided_device(explanation), got
            # the C exchange API of x's type beside the device, as the
            # rules state it and as the type exposes it (none: both empty)
            return with_c_exchange_api(decided_device(explanation), got, explanation, x, x)
        if call == "__dlpack__":
            x = self.case_array(inp, dflt)
            return empty_aware(inp, decided_export(explanation),
                               export(x, dlpack_kwargs(inp), self.data_pointer(x, inp)))
        if call == "request":
            return self.requested(inp, explanation, dflt)
        want = decided_import(explanation)
        view = negated_view(inp)
        if view is not None:  # the consumer's import of it, with the values compared
            return want, seen_as_decided(want, consumed(self, view, {}))
        return empty_aware(inp, want, seen_as_decided(want, self.imported(inp, dflt)))

    def reachable(self, inp: dict[str, Any], dflt: dict[str, Any]) -> None:
        """Raises Unreachable where this machine cannot run the case (a
        build, device or device count it lacks); ``dflt``: the rule set's
        input defaults."""

    def case_array(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Any:
        """The library's array a ``__dlpack_device__`` or ``__dlpack__``
        case describes; raises Unreachable where it cannot be made here."""
        raise NotImplementedError

    def data_pointer(self, x: Any, inp: dict[str, Any]) -> int:
        """Where the data of x, case_array's, starts: what a capsule that
        shares it points at (:func:`pointer`, unless the library says)."""
        return pointer(x)

    def requested(self, inp: dict[str, Any], explanation: dict[str, Any],
                  dflt: dict[str, Any]) -> tuple[Outcome, Outcome]:
        """(decided, observed) of a ``request`` case: what :meth:`consume`
        asks a recording producer on ``producer_device`` (looked up inside
        the call, as a user's is: a release without from_dlpack raises
        AttributeError, which is the outcome)."""
        device = tuple(inp.get("producer_device", [1, 0]))
        return request(lambda producer, **kwargs: self.consume(producer, kwargs), inp, explanation, device)

    def imported(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        """What a ``from_dlpack`` case observes: :meth:`import_`, unless the
        library runs it elsewhere (in a child, where the call may kill the
        interpreter)."""
        return self.import_(inp, dflt)

    def import_(self, inp: dict[str, Any], dflt: dict[str, Any]) -> Outcome:
        """The library's from_dlpack of the capsule a ``from_dlpack`` case
        describes, made by hand (:func:`case_capsule`): the array's device
        and whether it copied, or the exception."""
        raise NotImplementedError

    def sweeps(self, name: str, rs: Any) -> Iterable[tuple[str, Outcome, Outcome]]:
        """Generated cases beside tests.yaml's: (name, decided, observed)."""
        return ()

    #: The expressions of the real arrays this library makes for the
    #: exchanges (one of each class whose exchanges can differ), evaluated
    #: by :meth:`make`.
    ARRAYS: tuple[str, ...] = ()

    def namespace(self) -> dict[str, Any]:
        """The names ARRAYS' expressions use."""
        return {}

    def make(self, expr: str) -> Any:
        """The array expr makes (one of ARRAYS; a child makes it again)."""
        return eval(expr, self.namespace())  # noqa: S307 - the runner's own expressions

    def arrays(self) -> list[tuple[str, Any]]:
        """Real arrays this library makes here, for the exchanges: each as
        its expression and the array, or an :class:`Unreachable` saying why
        this library cannot make it here (its own exception)."""
        out: list[tuple[str, Any]] = []
        for expr in self.ARRAYS:
            try:
                out.append((expr, self.make(expr)))
            except Unreachable as e:
                out.append((expr, e))
            except Exception as e:  # the library's own refusal: the array cannot be made here
                out.append((expr, Unreachable(f"{self.library} cannot make it here: {type(e).__name__}: {e}")))
        return out

    def array_inputs(self, x: Any) -> dict[str, Any]:
        """The inputs of this library's rule set that describe its array x,
        with x's facts: :func:`dlroute.interop.array_of`'s, where it knows
        the library, and x's text (``array_str``, which jax's error
        prints); a checker of a library it does not know says them."""
        from ..arrays import array_text
        from ..interop import array_of

        return {**array_of(x)[1], "array_str": array_text(x)}

    def consume(self, x: Any, kwargs: dict[str, Any]) -> Any:
        """``from_dlpack(x, **kwargs)``; None where it is no consumer."""
        raise NotImplementedError

    def devices(self) -> list[Any]:
        """The ``device=`` values its from_dlpack is asked with (None: not passed)."""
        return [None]

    def consumer_inputs(self) -> dict[str, Any]:
        """Its rule set's inputs that say what this process is, as a
        consumer: torch's cuda_driver, numpy's ml_dtypes."""
        return {}


# --- what a library made -------------------------------------------------------


def pointer(x: Any) -> int:
    """The address of x's data, however its library says it (an
    array_api_strict Array: its numpy array's)."""
    for read in (lambda: x.ctypes.data, lambda: x._array.ctypes.data, lambda: x.data_ptr(),
                 lambda: x.unsafe_buffer_pointer(), lambda: x.data.ptr, lambda: x.ptr):
        try:
            return int(read())
        except (AttributeError, TypeError):
            continue
    try:
        # an array with no pointer attribute (TensorFlow's, MLX's): the
        # capsule it exports of itself
        capsule = x.__dlpack__()
        name = _capsules.read_capsule(capsule)["capsule"].encode()
        struct = _capsules.DLManagedTensorVersioned if name == b"dltensor_versioned" else _capsules.DLManagedTensor
        t = struct.from_address(_capsules._get_pointer(capsule, name)).dl_tensor
        return int(t.data or 0) + int(t.byte_offset)  # where its first element is, as numpy's pointer says
    except Exception:
        raise TypeError(f"cannot read the data pointer of a {type(x).__qualname__}") from None


def exported_facts(capsule: Any, device_code: Any = 1, device_id: Any = 0) -> dict[str, Any]:
    """The array facts (rules/README.md, "Array facts") an unused capsule
    carries: its dtype, shape, strides and data alignment; whether
    ``device_code``, the producer's ``__dlpack_device__()[0]``, is an
    IntEnum; and whether ``device_id``, its ``[1]``, is None (paddle's CPU
    and pinned tensors). For the arrays of a library
    :func:`dlroute.arrays.facts_of` does not read (TensorFlow's, MLX's).

    The strides are the capsule's as they are, None only where it has
    none or they are C order's exactly, as facts_of reads numpy's: an
    empty array's stride 0 or a size-1 dimension's other stride is what a
    consumer that reads strides reads (pyarrow refuses it)."""
    c = _capsules.read_capsule(capsule)
    name = c["capsule"].encode()
    struct = _capsules.DLManagedTensorVersioned if name == b"dltensor_versioned" else _capsules.DLManagedTensor
    t = struct.from_address(_capsules._get_pointer(capsule, name)).dl_tensor
    shape = [int(t.shape[i]) for i in range(t.ndim)]
    strides = [int(t.strides[i]) for i in range(t.ndim)] if t.strides else None
    c_order = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    if strides == c_order:
        strides = None
    alignment = 64
    while alignment > 1 and c["data"] % alignment:
        alignment //= 2
    return {"dtype_code": int(t.dtype.code), "dtype_bits": int(t.dtype.bits), "dtype_lanes": int(t.dtype.lanes),
            "shape": shape, "strides": strides, "data_alignment": alignment,
            "dlpack_device_enum": type(device_code) is not int, "dlpack_device_id_none": device_id is None}


def negated_view(inp: dict[str, Any]) -> Any:
    """A real negated torch view (of torch's vector 1 to 6) for a
    ``from_dlpack`` case whose capsule is one (``neg``) and names no other
    fact (one the consumer refuses for them is made by hand, as any other
    case's); None for any other case. Raises Unreachable without torch."""
    if not inp.get("neg") or any(k in inp for k in FACTS):
        return None
    try:
        import torch
    except ImportError:
        raise Unreachable("needs torch to make a negated view") from None
    return torch._neg_view(torch.arange(1.0, 7.0))


def case_capsule(inp: dict[str, Any], dflt: dict[str, Any], *, kind: str = "dltensor",
                 version: tuple[int, int] = (1, 0), deleter: bool = False,
                 make: Any = None) -> tuple[Any, tuple[int, int], int | None]:
    """The capsule a ``from_dlpack`` case describes, made by hand
    (``make``: :func:`dlroute._capsules.make_capsule` unless given): on
    ``capsule_device``, named ``capsule`` (``used_...``: one a consumer has
    read already), of ``capsule_version`` and the case's array facts, each
    the rule set's default where the case names none, else ``kind`` and
    ``version``; ``deleter``: with a deleter that frees nothing, for a
    consumer that calls it. Returned with the device it is labelled with
    and its data pointer (None for a used one: no import shares it)."""
    dev = tuple(inp.get("capsule_device", dflt.get("capsule_device") or [1, 0]))
    name = inp.get("capsule", dflt.get("capsule") or kind)
    used = name.startswith("used_")
    capsule = (make or _capsules.make_capsule)(
        dev, versioned=name.removeprefix("used_") == "dltensor_versioned", used=used,
        version=tuple(inp.get("capsule_version", dflt.get("capsule_version") or version)), deleter=deleter,
        **capsule_facts(inp, dflt))
    return capsule, dev, None if used else _capsules.read_capsule(capsule)["data"]


def as_reported(inp: dict[str, Any], device: tuple[Any, Any]) -> tuple[Any, Any]:
    """device, a recording producer's ``__dlpack_device__()``, as the
    case's producer reports it: the id None on a host device (kDLCPU,
    kDLCUDAHost) where the case says ``dlpack_device_id_none`` (paddle's
    CPU and pinned tensors, rules/README.md "Array facts")."""
    if inp.get("dlpack_device_id_none") and int(device[0]) in (1, 3):
        return device[0], None
    return device


def device_of(y: Any) -> list[int]:
    """y.__dlpack_device__() as ints, a None id read as 0."""
    code, device_id = y.__dlpack_device__()
    return [int(code), 0 if device_id is None else int(device_id)]  # paddle's CPU tensors say None


def consumed(consumer: Checker, x: Any, kwargs: dict[str, Any]) -> Outcome:
    """What the consumer's from_dlpack made of x: its device and whether it
    shares x's memory, or the exception; and, where the array it made does
    not read as x does (:func:`values_difference`), ``"values"``, saying
    how."""
    try:
        y = consumer.consume(x, kwargs)
        out: Outcome = {"device": device_of(y), "copy": pointer(y) != pointer(x)}
    except Exception as e:
        return raised(e)
    difference = values_difference(x, y)
    if difference:
        out["values"] = difference
    return out


# --- values: what the consumer reads against what the producer holds ------------


#: The type of the error a rule states for an exchange that crosses but
#: whose values the consumer reads differently from the producer (a torch
#: view with the negative bit: rules/README.md, "Array facts"). Nothing
#: raises it: the runner sees it as a call that succeeded with other values.
SILENTLY_DIFFERENT = "SilentlyDifferent"


def seen_as_decided(want: Outcome, got: Outcome) -> Outcome:
    """got, read as the rules' silent difference where they decided one and
    the call did cross with other values (``"values"`` in got): nothing
    else can be seen of it (the message is the rules' own)."""
    if want.get("raise", [None])[0] == SILENTLY_DIFFERENT and "values" in got:
        return dict(want)
    return got


def _logical(a: Any) -> tuple[str, list[int], Any]:
    """(dtype name, shape, values as nested Python lists) of an array as its
    own library reads it: a torch view's negative and conjugate bits
    applied, a sparse tensor densified, a wrapper's numpy array
    (:func:`_unwrapped`) read as numpy reads it.

    Raises:
        TypeError: a that no reader here reads (no ``tolist()`` or
            ``numpy()``, no dtype or shape): a library the runner added
            without a reader of its arrays.
    """
    a = _unwrapped(a)
    layout = str(getattr(a, "layout", "strided"))
    if layout.startswith("torch.") and "strided" not in layout:  # paddle's layout is a data layout (NCHW)
        a = a.to_dense()
    detach = getattr(a, "detach", None)
    if callable(detach):
        a = detach()
    if not callable(getattr(a, "tolist", None)) and callable(getattr(a, "numpy", None)):
        a = a.numpy()  # TensorFlow's and Warp's arrays: their own numpy copy
    if not callable(getattr(a, "tolist", None)):
        raise TypeError(f"the runner reads no values of a {type(a).__module__}.{type(a).__qualname__}")
    dtype = _dtype_name(a.dtype)
    if dtype == "bfloat16" and type(a).__module__.split(".")[0] == "paddle":
        a = a.astype("float32")  # paddle's tolist() of bfloat16 gives the bits, as uint16s
    return dtype, [int(n) for n in a.shape], a.tolist()


def _unwrapped(a: Any) -> Any:
    """The numpy array that holds a's values, for an array of a library
    that wraps one or has no dtype and shape of numpy's kind: a pyarrow
    Array's values (``to_numpy(zero_copy_only=False)``: a bool array is
    bit-packed, so never a view), an array_api_strict Array's ``._array``
    (the numpy array it wraps), an OrtValue's ``numpy()``; any other a."""
    library = type(a).__module__.split(".")[0]
    if library == "pyarrow":
        return a.to_numpy(zero_copy_only=False)
    if library == "array_api_strict":
        return a._array
    if library == "onnxruntime":
        return _ortvalue_values(a)
    return a


def _ortvalue_values(a: Any) -> Any:
    """An OrtValue's values as a numpy array: its ``numpy()``, but for
    bfloat16, which numpy has no dtype of (``numpy()`` raises): its bits,
    each the upper half of a float32 of the same value."""
    import numpy as np

    if a.data_type() != "tensor(bfloat16)":
        return a.numpy()
    shape = [int(n) for n in a.shape()]
    n = math.prod(shape)
    bits = np.ctypeslib.as_array((ctypes.c_uint16 * n).from_address(a.data_ptr())) if n else np.zeros(0, np.uint16)
    return (bits.astype(np.uint32) << 16).view(np.float32).reshape(shape)


def _dtype_name(dtype: Any) -> str:
    """A dtype's bare name however its library prints it: torch.float32,
    paddle.float32, mlx.core.float32 and TensorFlow's <dtype: 'float32'>
    are float32."""
    names = re.findall(r"[a-z]+[0-9]*", str(dtype))
    return names[-1] if names else str(dtype)


#: A dtype's kind: a consumer that reads another kind (uint8 for bool)
#: reads other values, whatever their numbers; one that reads a narrower
#: width of the same kind (JAX without x64: float32 for float64) is
#: compared by the values themselves.
def _kind(dtype: str) -> str:
    for kind in ("bool", "uint", "int", "complex", "float", "bfloat"):
        if dtype.startswith(kind):
            return "float" if kind == "bfloat" else kind
    return dtype


def _same(a: Any, b: Any) -> bool:
    """Equal nested values, a NaN equal to a NaN (a complex one part by part)."""
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, complex) or isinstance(b, complex):
        a, b = complex(a), complex(b)
        return _same(a.real, b.real) and _same(a.imag, b.imag)
    return bool(a == b) or (a != a and b != b)


def values_difference(x: Any, y: Any) -> str | None:
    """How the consumer's array y reads differently from the producer's x
    (another dtype kind, shape or values, as each library reads its own
    array), or None where they read alike. Strides are the consumer's to
    choose and are not compared. Nothing is left uncompared unsaid: an
    array that cannot be read (paddle reads a negative stride's memory
    elsewhere: a MemoryError; an array of a library the runner has no
    reader of) reads otherwise, the exception saying why, so that a
    comparison that could not be made is a difference, never an agreement."""
    try:
        xd, xs, xv = _logical(x)
    except Exception as e:
        return _unreadable("producer", e)
    try:
        yd, ys, yv = _logical(y)
    except Exception as e:
        return _unreadable("consumer", e)
    if _kind(xd) != _kind(yd):
        return f"the consumer reads {yd} where the producer holds {xd}"
    if xs != ys:
        return f"the consumer reads the shape {ys} where the producer's is {xs}"
    if not _same(xv, yv):
        return f"the consumer reads {_short(yv)} where the producer reads {_short(xv)}"
    return None


def _unreadable(side: str, e: Exception) -> str:
    """Why side's array cannot be read: the exception's type, and its text
    but for a MemoryError's, the allocator's, which varies by machine."""
    why = type(e).__name__ if isinstance(e, MemoryError) else f"{type(e).__name__}: {e}"
    return f"the {side}'s array cannot be read: {why}"


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 80 else s[:77] + "..."


# --- a call that may kill the interpreter, in a child (_child.py) ----------------


#: How long a child may run: an import or an exchange of a small array
#: takes well under a second once the libraries are imported (torch's
#: import is the most of it).
TIMEOUT_S = 180


def run_child(spec: dict[str, Any]) -> dict[str, Any]:
    """The outcome of spec run in a child interpreter (this one's
    executable, the package on its path) that has imported only the
    libraries spec names, as a fresh one would: jax's import, for one,
    teaches numpy bfloat16. Calls that name the same libraries, which
    the runner makes one after another, share one :class:`Child`, so that
    a run pays an import per library or pair of them, not per call; a
    call that kills it is only its own outcome, and the next starts
    another."""
    global _shared
    key = tuple(sorted({spec[k] for k in ("library", "producer", "consumer") if k in spec}))
    if _shared is not None and _shared.pid != os.getpid():
        _shared = None  # a fork's parent's, which the parent ends
    elif _shared is not None and _shared.key != key:
        _shared.close()
        _shared = None
    if _shared is None:
        _shared = Child(key)
    return _shared.call(spec)


#: What starts each outcome line of ``python -m dlroute.check._child --serve``
#: (its MARK; that module imports this one, so it is not imported here).
CHILD_MARK = "\x1edlroute-child "


class Child:
    """One child interpreter, ``python -m dlroute.check._child --serve``,
    that runs the calls which may kill the interpreter one after another:
    a crash ends only the call in flight, whose outcome it is (the signal
    and the text the library printed, as ``_base.run_child`` reads them),
    and the next call starts a new child. One child for the calls that
    name the same libraries (run_child), not one per call: a start costs
    the libraries' import."""

    def __init__(self, key: tuple[str, ...] = ()) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.err: Any = None
        self.key = key  # the libraries its calls name (run_child)
        self.pid = os.getpid()  # the process whose child it is

    def _start(self) -> subprocess.Popen[str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                          env.get("PYTHONPATH")]))
        self.err = tempfile.TemporaryFile(mode="w+")
        proc = subprocess.Popen([sys.executable, "-W", "ignore", "-m", "dlroute.check._child", "--serve"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, text=True, env=env)
        weakref.finalize(self, _stop, proc, self.pid, self.err)
        return proc

    def call(self, spec: dict[str, Any]) -> Outcome:
        """The outcome of spec (``_child``'s SPEC) in the child."""
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(spec) + "\n")
            proc.stdin.flush()
        except BrokenPipeError:
            pass  # it died starting: its exit says why, below
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while True:
                if not sel.select(TIMEOUT_S):
                    proc.kill()
                    proc.wait()
                    self._release(proc)
                    return {"child": f"did not end within {TIMEOUT_S} s"}
                line = proc.stdout.readline()
                if not line:
                    return self._ended(proc)
                if line.startswith(CHILD_MARK):
                    out: Outcome = json.loads(line[len(CHILD_MARK):])
                    return out

    def close(self) -> None:
        """Ends the child, if one runs."""
        if self.proc is not None:
            self._release(self.proc)

    def _release(self, proc: subprocess.Popen[str]) -> None:
        """Ends proc, if it still runs, and forgets it and its stderr's
        file, both closed (_stop)."""
        _stop(proc, self.pid, self.err)
        self.proc, self.err = None, None

    def _ended(self, proc: subprocess.Popen[str]) -> Outcome:
        """The outcome of a child that ended in the call: the signal that
        killed it and the library's last ``what():`` text, or its exit."""
        rc = proc.wait()
        self.err.seek(0)
        stderr = self.err.read()
        self._release(proc)
        if rc < 0:
            what = re.findall(r"what\(\):\s+(.*)", stderr)
            return {"raise": [signal.Signals(-rc).name, what[-1].strip() if what else ""]}
        return {"child": f"exit {rc}: {stderr.strip()[-600:]}"}


def _stop(proc: subprocess.Popen[str], owner: int, err: Any) -> None:
    """Ends a child of the process owner: its stdin closed, it ends its
    loop. Then it closes what owner holds of the child, its pipes and err,
    the file its stderr went to (each a ResourceWarning otherwise). In a
    fork of owner it does nothing: the child is not the fork's."""
    if os.getpid() != owner:
        return
    if proc.poll() is None and proc.stdin is not None:
        try:
            proc.stdin.close()
            proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
    for f in (proc.stdin, proc.stdout, err):
        if f is not None:
            try:
                f.close()
            except OSError:
                pass  # a write still buffered for a child that is gone



#: run_child's child, made by its first call.
_shared: Child | None = None


# --- the calls every checker makes -------------------------------------------


def dlpack_kwargs(inp: dict[str, Any]) -> dict[str, Any]:
    """__dlpack__'s keywords as the input passes them, in its order."""
    kw: dict[str, Any] = {}
    for k in inp.get("keywords", []):
        v = inp.get(k)
        kw[k] = tuple(v) if isinstance(v, list) else v
    return kw


def export(x: Any, kwargs: dict[str, Any], pointer: int) -> Outcome:
    try:
        capsule = x.__dlpack__(**kwargs)
    except Exception as e:  # the library's own exception is the outcome
        return raised(e)
    return observed_export(capsule, pointer)


def with_c_exchange_api(want: Outcome, got: Outcome, explanation: dict[str, Any], x: Any,
                        case: Any = None) -> tuple[Outcome, Outcome]:
    """A ``__dlpack_device__`` case's outcomes with the C exchange API of
    the array's type beside the device (rules/README.md, "The C exchange
    lane"): as the rules state it, their value ``c_exchange_api`` (none
    where they name no such value), and as ``type(x)`` exposes it
    (:func:`dlroute.arrays.c_exchange_api_of`), so that a release whose type
    gains, loses or changes the attribute differs from its rules. Where
    the rules state ``c_exchange_export`` and the case's array ``case``
    was made, what the API exports of it (:func:`c_lane_export`) too."""
    stated = values(explanation)
    want = {**want, "c_exchange_api": stated.get("c_exchange_api") or []}
    got = {**got, "c_exchange_api": c_exchange_api_of(x)}
    if stated.get("c_exchange_export") is not None and case is not None:
        want["c_exchange_export"] = stated["c_exchange_export"]
        got["c_exchange_export"] = c_lane_export(case)
    return want, got


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLTensorHead(ctypes.Structure):
    """DLTensor up to its device: the data pointer, then the device."""
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice)]


class _ManagedTensorVersioned(ctypes.Structure):
    """DLManagedTensorVersioned up to its DLTensor's device."""


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_ManagedTensorVersioned))
_ManagedTensorVersioned._fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                                    ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter),
                                    ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensorHead)]
_FromPyObject = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object,
                                  ctypes.POINTER(ctypes.POINTER(_ManagedTensorVersioned)))


class _ExchangeAPI(ctypes.Structure):
    """DLPackExchangeAPI (dlpack.h 1.3) up to managed_tensor_from_py_object_no_sync."""
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("prev_api", ctypes.c_void_p),
                ("managed_tensor_allocator", ctypes.c_void_p), ("managed_tensor_from_py_object_no_sync", _FromPyObject)]


def c_lane_export(x: Any) -> Outcome:
    """What the C lane makes of x: its type's ``__dlpack_c_exchange_api__``
    ``managed_tensor_from_py_object_no_sync``, as a consumer that takes the
    lane calls it; the export's ``device`` and ``flags`` (then deleted), or
    ``{"raise": [type]}``: the exception's type alone, as its text names
    the build's source path."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    api = _ExchangeAPI.from_address(get(type(x).__dlpack_c_exchange_api__, b"dlpack_exchange_api"))
    out = ctypes.POINTER(_ManagedTensorVersioned)()
    try:
        if api.managed_tensor_from_py_object_no_sync(x, ctypes.byref(out)) != 0:
            return {"raise": ["a nonzero status without an exception"]}
    except Exception as e:
        return {"raise": [type(e).__name__]}
    m = out.contents
    got: Outcome = {"device": [m.dl_tensor.device.device_type, m.dl_tensor.device.device_id], "flags": int(m.flags)}
    m.deleter(out)
    return got


def _as_json(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


class Recorder:
    """A producer that records each __dlpack__ call (keywords in order) and
    answers with a real numpy capsule, after raising TypeError(fail) for the
    first ``failures`` calls; ``device`` is what __dlpack_device__ says."""

    def __init__(self, failures: int = 0, fail: str = "", device: tuple[int, int] = (1, 0)) -> None:
        self.calls: list[list[tuple[str, Any]]] = []
        self.device_calls = 0
        self.failures, self.fail, self.device = failures, fail, device

    def __dlpack_device__(self) -> tuple[int, int]:
        self.device_calls += 1
        return self.device

    def __dlpack__(self, **kwargs: Any) -> Any:
        import numpy as np

        self.calls.append(list(kwargs.items()))
        if len(self.calls) <= self.failures:
            raise TypeError(self.fail)
        return numpy_capsule(np, kwargs.get("max_version"))


@functools.lru_cache(maxsize=None)
def takes_max_version(np: Any) -> bool:
    """This numpy's ``__dlpack__`` takes ``max_version`` (numpy 2.1 on;
    before, it is a TypeError), asked of numpy itself."""
    try:
        np.arange(1.0).__dlpack__(max_version=(1, 0))
    except TypeError:
        return False
    return True


def numpy_capsule(np: Any, max_version: Any = None) -> Any:
    """``np.arange(6.0).__dlpack__(max_version=max_version)``, asked
    without max_version where this numpy does not take it (its capsule is
    then the unversioned one, what an older numpy hands any consumer)."""
    x = np.arange(6.0)
    return x.__dlpack__(max_version=max_version) if takes_max_version(np) else x.__dlpack__()


def request(consumer: Callable[..., Any], inp: dict[str, Any], explanation: dict[str, Any],
            device: tuple[int, int] = (1, 0)) -> tuple[Outcome, Outcome]:
    """The consumer's calls of a recording producer, and the request the
    rules decide: the exception (and that no further call was made), or the
    keywords and values of attempt ``attempt``."""
    attempt = inp.get("attempt", 1)
    producer = Recorder(attempt - 1, inp.get("failed_message", ""), as_reported(inp, device))
    # A keyword the case gives is passed, as a caller would, even where the
    # release's from_dlpack does not take it (its TypeError is the outcome).
    # A keyword the case names in keywords is passed even as None
    # (from_dlpack(x, copy=None), which torch 1.13 refuses).
    # In the case's keywords order (Python names the first it refuses),
    # then device before copy, as dlroute's own exchanges pass them.
    named = [k for k in inp.get("keywords", []) if k in ("device", "copy")]
    kwargs = {k: inp.get(k) for k in named + [k for k in ("device", "copy") if k not in named]
              if inp.get(k) is not None or k in named}
    decision, vals = explanation["decision"], values(explanation)
    try:
        consumer(producer, **kwargs)
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
    if error is not None:
        got.update(error)
    elif len(producer.calls) < attempt:
        got["calls"] = len(producer.calls)
    else:
        call = producer.calls[attempt - 1]
        got.update({"keywords": [k for k, _ in call], "kwargs": {k: _as_json(v) for k, v in call}})
    return want, got


def defaults(explain_rs: Any) -> dict[str, Any]:
    return {i["name"]: i.get("default") for i in explain_rs.inputs}


#: The array facts a capsule made by hand carries (rules/README.md, "Array facts").
FACTS = ("dtype_code", "dtype_bits", "dtype_lanes", "shape", "strides")


def capsule_facts(inp: dict[str, Any], dflt: dict[str, Any]) -> dict[str, Any]:
    """make_capsule's dtype, shape and strides for a case that names a
    fact; {} for one that names none (the float64 vector of six)."""
    if not any(k in inp for k in FACTS):
        return {}
    def eff(k: str, fallback: Any) -> Any:
        return inp.get(k, dflt.get(k, fallback))
    return {"dtype": (eff("dtype_code", 2), eff("dtype_bits", 32), eff("dtype_lanes", 1)),
            "shape": list(eff("shape", [8])), "strides": eff("strides", None)}


def empty_aware(inp: dict[str, Any], want: Outcome, got: Outcome) -> tuple[Outcome, Outcome]:
    """(want, got), without whether it copied for an empty array: the data
    pointer of an array of no elements says nothing of a copy."""
    if 0 in (inp.get("shape") or [1]):
        want, got = dict(want), dict(got)
        want.pop("copy", None)
        got.pop("copy", None)
    return want, got
