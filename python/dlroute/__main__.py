"""python -m dlroute: the package's own small command line.

    python -m dlroute resolve [--ruleset REF] [--rules PATH] [--key KEY] < inputs.jsonl
    python -m dlroute rulesets [--rules PATH] [--key KEY]
    python -m dlroute version
    python -m dlroute check [numpy|torch|jax|cupy ...] [--json] [--ruleset REF] [--rules PATH]

``resolve`` reads one JSON input per line on stdin and writes, for each,
the line ``RuleSet.resolve_json`` answers: what ``dlroute resolve --json``
writes for that line alone (an error names line 1). Exit status 0; 1 when
a line was not decided; 2 when the rules or the library cannot be used.

``check`` runs the installed releases' own DLPack functions on every case
of the rule-set version that covers each (:mod:`dlroute.check`): exit
status 0 when all agree, 1 on any difference, 2 when it cannot run.
"""

from __future__ import annotations

import argparse
import json
import sys

from . import DlrouteError, check, library_version, load
from ._version import __version__


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:1] == ["check"]:
        return check.main(args_in[1:])
    p = argparse.ArgumentParser(prog="python -m dlroute", description="dlroute's rules, in process")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("resolve", help="answer JSON input lines on stdin as `dlroute resolve --json` does")
    r.add_argument("--ruleset", default="jax", help="NAME[@VERSION]; without a version, the newest (default: jax)")
    for cmd in (r, sub.add_parser("rulesets", help="list the rule-set versions, one JSON object per line")):
        cmd.add_argument("--rules", default=None, help="a rules directory or bundle (default: the embedded rules)")
        cmd.add_argument("--key", default=None, help="the public key a bundle must be signed by")
    sub.add_parser("version", help="print the package's and the library's versions")
    sub.add_parser("check", help="run the installed numpy, torch, jax, cupy against their rules (check --help)")
    args = p.parse_args(args_in)
    try:
        if args.command == "version":
            print(f"dlroute {__version__} (libdlroute {library_version()})")
            return 0
        engine = load(args.rules, args.key)
        if args.command == "rulesets":
            for entry in engine.rulesets():
                print(json.dumps(entry))
            return 0
        rs = engine.ruleset(args.ruleset)
    except DlrouteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    status = 0
    out = sys.stdout
    for raw in sys.stdin.buffer:
        line = raw[:-1] if raw.endswith(b"\n") else raw
        if line.endswith(b"\r"):
            line = line[:-1]
        answer = rs.resolve_json(line)
        if answer.startswith(('{"input_error":', '{"eval_error":')):
            status = 1
        out.write(answer)
        out.write("\n")
        out.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
