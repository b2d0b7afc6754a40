"""A pytest plugin of the e2e tier's TestPython (e2e/python/python_test.go),
which loads it with ``-p dlroute_e2e``. It tells the Go test, one JSON
object a line on the file descriptor $DLROUTE_E2E_FD:

- ``{"event": "start", "test": ...}`` as each test starts, and
  ``{"event": "end", "test": ..., "outcome": ...}`` as it ends ("passed",
  "failed" or "skipped", the worst of its phases), by its node id
  (``tests/test_core.py::test_x[numpy]``), so that the test command prints
  each test as it ends rather than nothing for minutes;
- ``{"event": "report", "report": ..., "table": ...}`` once the `report`
  fixture of python/tests/test_real_libraries.py has run the conformance
  runner: the report as ``python -m dlroute check --json`` prints it, and
  as text, as the command prints it. The Go test checks it, so that the
  runner runs once per stack, not again as a command.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

_FD = int(os.environ["DLROUTE_E2E_FD"])
#: the fixture whose value is the conformance runner's report, and its file
_REPORT_FIXTURE = ("report", "test_real_libraries.py")

_outcomes: dict[str, str] = {}


def _send(**event: Any) -> None:
    data = (json.dumps(event) + "\n").encode()
    while data:
        data = data[os.write(_FD, data):]


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    _send(event="start", test=nodeid)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    outcome = _outcomes.get(report.nodeid, "passed")
    if report.failed:
        outcome = "failed"
    elif report.skipped and outcome == "passed":
        outcome = "skipped"
    _outcomes[report.nodeid] = outcome
    if report.when == "teardown":
        _send(event="end", test=report.nodeid, outcome=_outcomes.pop(report.nodeid))


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Any:
    value = yield
    name, module = _REPORT_FIXTURE
    if fixturedef.argname == name and fixturedef.baseid.endswith(module):
        from dlroute import check

        _send(event="report", report=value.to_json(), table=check.table(value))
    return value
