"""``python -m dlroute check``: the installed releases against their rules.

For each array library installed here (numpy, torch, jax, cupy) the runner
finds the rule-set version whose manifest covers the installed release (or,
where none does, the nearest, and says whether it holds), and runs that
release's own functions on every case of the version's tests.yaml that this
machine can reach: the producer's ``__dlpack_device__`` and ``__dlpack__``
with the keywords the case passes, the consumer's ``from_dlpack`` (what it
asks a producer, and what it makes of a capsule), and the exchanges between
every pair of installed libraries, each cell of ``dlroute interop`` for a
real array. What the library does is compared with what the rules decide
for the same input, byte for byte: the device, the capsule's kind, its
DLPack version (where the rules state it) and flags, whether the data was
shared or copied, or the exception's type and message.

A case this machine cannot reach (a CUDA tensor without a CUDA device, a
jax client on another platform) is counted with its reason, never guessed.

>>> from dlroute import check
>>> report = check.run(["numpy"])          # doctest: +SKIP
>>> report.differences                     # doctest: +SKIP
0

The rules and their tests.yaml come from one rules directory: ``rules``
(default: the checkout's ``rules/`` when the package runs from a checkout,
else the copy installed with the package). Running needs PyYAML, to read
tests.yaml and the manifests.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

__all__ = ["LIBRARIES", "Outcome", "Result", "Report", "Target", "run", "main", "rules_dir"]

#: The libraries the runner knows, in the order it reports them.
LIBRARIES = ("numpy", "torch", "jax", "cupy")

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
    here = Path(__file__).resolve().parent
    checkout = here.parent.parent / "rules"
    if (here.parent.parent / "go.mod").is_file() and checkout.is_dir():
        return checkout
    return here / "_rules"


def _yaml(path: Path) -> Any:
    try:
        import yaml
    except ImportError:
        raise ImportError("python -m dlroute check reads tests.yaml with PyYAML: pip install pyyaml") from None
    return yaml.safe_load(path.read_text())


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
    from . import NoRuleSetError, UncheckedReleaseWarning, load

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
    from ._capsules import read_capsule

    c = read_capsule(capsule)
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


class Checker:
    """One library's side: ``rulesets`` it is checked by, and ``run(name,
    input, explanation)`` giving the observed outcome and the decided one, or
    raising Unreachable. ``sweeps`` are generated cases beside tests.yaml's."""

    library: str = ""
    rulesets: tuple[str, ...] = ()

    def release(self) -> str:
        from importlib.metadata import version

        return version(self.library)

    def run(self, name: str, inp: dict[str, Any], rs: Any) -> tuple[Outcome, Outcome]:
        """(decided, observed) for one case of rule set ``name``'s version
        ``rs``; raises Unreachable."""
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
        its expression and the array."""
        return [(expr, self.make(expr)) for expr in self.ARRAYS]

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


def _checkers() -> dict[str, Callable[[], Checker]]:
    from . import _check_arrays, _check_jax

    return {"numpy": _check_arrays.NumpyChecker, "torch": _check_arrays.TorchChecker,
            "jax": _check_jax.JaxChecker, "cupy": _check_arrays.CupyChecker}


def installed(library: str) -> str | None:
    """The release of ``library`` installed here, or None; it must import."""
    return probe(library)[0]


def probe(library: str) -> tuple[str | None, str | None]:
    """(release, None) for a library installed here that imports, else
    (None, why): it is not installed, or the exception its import raised.
    The release is the distribution's (``numpy``, ``torch``), else the
    module's ``__version__`` (CuPy installs as ``cupy-cuda12x``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        module = importlib.import_module(library)
    except ModuleNotFoundError as e:
        if e.name == library:
            return None, "it is not installed here"
        return None, f"its import raised {type(e).__name__}: {e}"
    except Exception as e:  # any failure to import: reported, never guessed around
        return None, f"its import raised {type(e).__name__}: {e}"
    try:
        return version(library), None
    except PackageNotFoundError:
        release = getattr(module, "__version__", None)
        return (str(release), None) if release else (None, "it imports but names no release")


def run(libraries: Sequence[str] | None = None, *, rules: str | Path | None = None,
        ruleset: Sequence[str] = (), exchanges: bool = True) -> Report:
    """Runs the installed releases of ``libraries`` (default: all of
    LIBRARIES that are installed) against their rules.

    Args:
        libraries: names from LIBRARIES (default: every one, where one
            that is absent or does not import is a note); a library named
            here that is absent or does not import raises ImportError with
            the reason.
        rules: a rules directory (default :func:`rules_dir`).
        ruleset: refs (``numpy@v1``) to run instead of the version that
            covers the installed release, one per rule-set name.
        exchanges: also run each pair's exchanges (interop cells).
    """
    import warnings

    from . import load

    with warnings.catch_warnings():
        # The libraries' own warnings (torch 1.13 under numpy 2) are not the report's.
        warnings.simplefilter("ignore")
        return _run(libraries, rules, ruleset, exchanges)


def _run(libraries: Sequence[str] | None, rules: str | Path | None, ruleset: Sequence[str],
         exchanges: bool) -> Report:
    from . import load

    root = rules_dir(rules)
    named = bool(libraries)
    names = list(libraries or LIBRARIES)
    forced = {r.split("@")[0]: r for r in ruleset}
    report = Report()
    engine = load(str(root))
    checkers: dict[str, Checker] = {}
    for lib in names:
        if lib not in LIBRARIES:
            raise ValueError(f"dlroute check knows {', '.join(LIBRARIES)}, not {lib!r}")
        release, why = probe(lib)
        if release is None:
            if named:
                raise ImportError(f"{lib} was named but cannot be checked: {why}\nhint: install it (or fix its "
                                  f"import), or leave {lib} off the command line to check what is installed")
            report.notes.append(f"{lib} is not checked: {why}")
            continue
        checker = _checkers()[lib]()
        checkers[lib] = checker
        for name in checker.rulesets:
            if name in forced:
                ref, covered, span = forced[name], False, "given"
            else:
                ref, covered, span = choose_version(root, name, release, engine)
            report.targets.append(Target(lib, name, release, ref, covered, span, checked_as(root, ref, release)))
            rs = engine.ruleset(ref)
            for case in load_cases(root, ref):
                report.results.append(_one(lib, ref, case["name"], lambda: checker.run(name, case["input"], rs)))
            for case_name, want, got in checker.sweeps(name, rs):
                status = "agree" if compare(want, got) else "differ"
                report.results.append(Result(lib, ref, case_name, status, None, want, got))
    if exchanges and len(checkers) > 1:
        from ._check_exchange import run_exchanges

        refs = {t.ruleset: t.ref for t in report.targets}
        for t in report.targets:
            if t.ruleset == "jax" and t.covered and t.range != "given":
                # jax's two other rule sets pair with it by release
                # (jax-export, jax-import): the release, not a version.
                refs["jax"] = f"jax=={t.release}"
        report.results.extend(run_exchanges(engine, checkers, refs))
    engine.close()
    return report


def _one(lib: str, ref: str, name: str, call: Callable[[], tuple[Outcome, Outcome]]) -> Result:
    try:
        want, got = call()
    except Unreachable as e:
        return Result(lib, ref, name, "unreachable", str(e))
    return Result(lib, ref, name, "agree" if compare(want, got) else "differ", None, want, got)


# --- the command ----------------------------------------------------------------


def table(report: Report) -> str:
    """The report as text: a table per library, then each difference."""
    lines: list[str] = []
    for t in report.targets:
        how = ("covers it" if t.covered else "was asked for (--ruleset)" if t.range == "given"
               else f"is the nearest (releases {t.range}); it does not cover it")
        if t.checked:
            how += f" (its manifest: checked by {t.checked})"
        lines.append(f"{t.library} {t.release}: {t.ruleset} -> {t.ref} {how}")
    rows = report.counts()
    if rows:
        lines.append("")
        head = ("library", "rules", "run", "agree", "differ", "unreachable")
        width = [max(len(head[0]), *(len(r["library"]) for r in rows)),
                 max(len(head[1]), *(len(r["ref"]) for r in rows)), 5, 6, 6, 11]
        fmt = "  ".join(f"{{:{'<' if i < 2 else '>'}{w}}}" for i, w in enumerate(width))
        lines.append(fmt.format(*head))
        for r in rows:
            lines.append(fmt.format(r["library"], r["ref"], r["run"], r["agree"], r["differ"], r["unreachable"]))
            for why, n in sorted(r["reasons"].items(), key=lambda kv: -kv[1]):
                lines.append(f"    {n:>4} cannot be reached here: {why}")
    for t in report.targets:
        if not t.covered:
            row = [r for r in rows if r["ref"] == t.ref]
            holds = row and row[0]["differ"] == 0
            lines.append(f"{t.ref} {'holds' if holds else 'does not hold'} for {t.library} {t.release}")
    for note in report.notes:
        lines.append(f"note: {note}")
    diffs = [r for r in report.results if r.status == "differ"]
    for r in diffs:
        lines.append(f"DIFFERS {r.ref}: {r.case}\n    rules:   {json.dumps(r.want)}\n    library: {json.dumps(r.got)}")
    lines.append(f"{len(diffs)} difference{'s' if len(diffs) != 1 else ''}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """``python -m dlroute check [LIBRARY ...] [--json] [--ruleset REF] [--rules PATH]``:
    exit status 0 when every case run agrees, 1 on any difference, 2 when
    it cannot run (a library named that is not installed or does not
    import, with the reason)."""
    import argparse

    from . import DlrouteError

    p = argparse.ArgumentParser(prog="python -m dlroute check",
                                description="run the installed releases' own DLPack functions against their rules")
    p.add_argument("libraries", nargs="*",
                   help=f"libraries to check (default: those installed of {', '.join(LIBRARIES)})")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument("--ruleset", action="append", default=[], metavar="REF",
                   help="run this version (numpy@v1) instead of the one that covers the installed release")
    p.add_argument("--rules", default=None, help="a rules directory (default: the checkout's or the package's)")
    p.add_argument("--no-exchanges", action="store_true", help="skip the exchanges between installed libraries")
    args = p.parse_args(argv)
    for lib in args.libraries:
        if lib not in LIBRARIES:
            print(f"error: dlroute check knows {', '.join(LIBRARIES)}, not {lib!r}", file=sys.stderr)
            return 2
    try:
        report = run(args.libraries, rules=args.rules, ruleset=args.ruleset, exchanges=not args.no_exchanges)
    except (DlrouteError, LookupError, OSError, ImportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(report.to_json()) if args.json else table(report))
    return 1 if report.differences else 0
