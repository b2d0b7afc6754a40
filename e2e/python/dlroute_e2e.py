"""A pytest plugin of the e2e tier's TestPython (e2e/python/python_test.go),
which loads it with ``-p dlroute_e2e``. It tells the Go test, one JSON
object a line on the file descriptor $DLROUTE_E2E_FD:

- ``{"event": "start", "test": ...}`` as each test starts, and
  ``{"event": "end", "test": ..., "outcome": ...}`` as it ends ("passed",
  "failed" or "skipped", the worst of its phases), by its node id
  (``tests/test_core.py::test_x[numpy]``), so that the test command prints
  each test as it ends rather than nothing for minutes;
- ``{"event": "step", "test": ..., "step": ...}`` as the conformance
  runner (dlroute.check.run), inside a test, starts each rule-set version
  (``numpy@v1``) and then the exchanges: a run takes minutes on a busy
  machine, and each step is a line of its own; and, within a step,
  ``"exchanges, 120 so far"`` once PROGRESS_EVERY has passed since the
  last line, as a case or an exchange ends, so that a step of minutes
  (the exchanges, each of whose children starts an interpreter) still
  prints a line each PROGRESS_EVERY;
- ``{"event": "report", "report": ..., "table": ...}`` once the session
  fixture `report` of python/tests/conftest.py has run the conformance
  runner: the report as ``python -m dlroute check --json`` prints it, and
  as text, as the command prints it. The Go test checks it, so that the
  runner runs once per stack, not again as a command.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

_FD = int(os.environ["DLROUTE_E2E_FD"])
#: the fixture whose value is the conformance runner's report, and its
#: conftest.py's directory, as pytest's node ids name it
_REPORT_FIXTURE = ("report", "tests")

#: how long a step runs before a line says how far it is: the test
#: command prints a line at least every 60 s (issue 36), and one case or
#: exchange takes seconds on a busy machine.
PROGRESS_EVERY = 20.0

_outcomes: dict[str, str] = {}
_current = ""  # the node id of the test running
_step = ""  # the runner's step running in it
_done = 0  # the cases or exchanges of _step that have ended
_sent = time.monotonic()  # when the last event was sent


def _send(**event: Any) -> None:
    global _sent
    data = (json.dumps(event) + "\n").encode()
    while data:
        data = data[os.write(_FD, data):]
    _sent = time.monotonic()


def _one_more() -> None:
    """Counts a case or exchange of the step that ended, and tells how
    far the step is where PROGRESS_EVERY has passed without a line."""
    global _done
    _done += 1
    if _step and time.monotonic() - _sent >= PROGRESS_EVERY:
        _send(event="step", test=_current, step=f"{_step}, {_done} so far")


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    global _current
    _current = nodeid
    _send(event="start", test=nodeid)


def pytest_configure(config: pytest.Config) -> None:
    """Wraps the runner's two per-step calls, found by name in
    dlroute.check (load_cases(root, ref) for each version, run_exchanges
    for the exchanges), to tell each step as it starts, and its calls of
    each case or exchange (check._one; consumed and run_child in
    check._exchange), to count them. Where they are gone the steps are
    not told, or not counted: the tests run as before."""
    from dlroute import check

    def told(name: str, step: Any) -> None:
        f = getattr(check, name, None)
        if callable(f):
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                global _step, _done
                _step, _done = step(args), 0
                _send(event="step", test=_current, step=_step)
                return f(*args, **kwargs)

            setattr(check, name, wrapper)

    def counted(module: Any, name: str) -> None:
        f = getattr(module, name, None)
        if callable(f):
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                try:
                    return f(*args, **kwargs)
                finally:
                    _one_more()

            setattr(module, name, wrapper)

    told("load_cases", lambda args: str(args[1]) if len(args) > 1 else "cases")
    told("run_exchanges", lambda args: "exchanges")
    counted(check, "_one")
    exchange = getattr(check, "_exchange", None)
    for name in ("consumed", "run_child"):
        counted(exchange, name)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global _step
    outcome = _outcomes.get(report.nodeid, "passed")
    if report.failed:
        outcome = "failed"
    elif report.skipped and outcome == "passed":
        outcome = "skipped"
    _outcomes[report.nodeid] = outcome
    if report.when == "teardown":
        _step = ""
        _send(event="end", test=report.nodeid, outcome=_outcomes.pop(report.nodeid))


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Any:
    value = yield
    name, directory = _REPORT_FIXTURE
    if fixturedef.argname == name and fixturedef.baseid == directory:
        from dlroute import check

        _send(event="report", report=value.to_json(), table=check.table(value))
    return value
