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

import argparse
import importlib
import json
import sys
import warnings
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Callable, Sequence

from .._engine import load
from ..errors import DlrouteError
from ._base import (LIBRARIES, Checker, Outcome, Report, Result, Target, Unreachable, checked_as, choose_version,
                    compare, load_cases, release_tuple, rules_dir)
from ._exchange import run_exchanges
from ._libraries import CHECKERS

__all__ = ["LIBRARIES", "Outcome", "Result", "Report", "Target", "run", "main", "rules_dir", "choose_version",
           "release_tuple", "installed", "probe"]


def installed(library: str) -> str | None:
    """The release of ``library`` installed here, or None; it must import."""
    return probe(library)[0]


def probe(library: str) -> tuple[str | None, str | None]:
    """(release, None) for a library installed here that imports, else
    (None, why): it is not installed, or the exception its import raised.
    The release is the distribution's (``numpy``, ``torch``), else the
    module's ``__version__`` (CuPy installs as ``cupy-cuda12x``)."""
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
    with warnings.catch_warnings():
        # The libraries' own warnings (torch 1.13 under numpy 2) are not the report's.
        warnings.simplefilter("ignore")
        return _run(libraries, rules, ruleset, exchanges)


def _run(libraries: Sequence[str] | None, rules: str | Path | None, ruleset: Sequence[str],
         exchanges: bool) -> Report:
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
        checker = CHECKERS[lib]()
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
        refs = {t.ruleset: t.ref for t in report.targets}
        # a library whose rule set is named otherwise (array_api_strict's array-api-strict)
        refs.update({t.library: t.ref for t in report.targets if t.library not in refs})
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
    except Exception as e:
        # An exception the runner did not expect while it set the case up
        # or read what happened: no traceback that ends the run, but a
        # difference, so the run fails and says where.
        return Result(lib, ref, name, "differ", None, None, {"runner_failed": f"{type(e).__name__}: {e}"})
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
