"""The installed jax's own ``x.__dlpack__`` against ``jax-export`` for that
release, by the conformance runner (dlroute.check).

``jax-export==<jax.__version__>`` is the version whose manifest covers the
installed release. The runner calls the real ``__dlpack__`` of a real CPU
array on every case of that version the CPU client reaches, and on every
combination of ``stream``, ``max_version``, ``dl_device`` and ``copy`` the
release takes; the rules get the facts the code reads from this very
process and must answer the same: the capsule's name, its device, its
DLPack version and flags, whether the data was copied, or the exception,
type and message, byte for byte. A case for another client (a GPU array,
two devices) is counted as unreachable with its reason.
"""

from __future__ import annotations

import jax
import pytest

import dlroute
from dlroute import check
from dlroute.check import _base
from dlroute.check._jax import JaxChecker


@pytest.fixture(scope="module")
def export_rules() -> dlroute.RuleSet:
    return dlroute.load().ruleset_for_installed("jax-export", package="jax")


@pytest.fixture(scope="module")
def rows(export_rules: dlroute.RuleSet) -> list[check.Result]:
    report = check.run(["jax"], exchanges=False)
    out = [r for r in report.results if r.ref.startswith("jax-export@")]
    assert {r.ref for r in out} == {export_rules.ref}, "the runner chose another version than jax-export==release"
    return out


def test_every_request_matches_the_installed_jax(rows: list[check.Result]) -> None:
    generated = [r for r in rows if r.case.startswith("x.__dlpack__(")]
    assert len(generated) >= 4 * 10 * 10 * 3 - 1, "every combination of the four keywords ran"
    diffs = [r for r in rows if r.status == "differ"]
    assert not diffs, f"{len(diffs)} of {len(rows)} calls differ; first: {[(r.case, r.want, r.got) for r in diffs[:3]]}"


def test_cases_for_other_clients_are_unreachable_with_a_reason(rows: list[check.Result]) -> None:
    away = [r for r in rows if r.status == "unreachable"]
    assert any(r.why == "needs a jax cuda client (this jax's is cpu)" for r in away)
    assert all(r.why for r in away)


def test_another_era_differs_where_the_release_does(export_rules: dlroute.RuleSet) -> None:
    """The comparison can fail: a neighbouring version and the installed
    release's decide some real call differently."""
    real = JaxChecker()
    base = real.facts()
    eng = dlroute.load()
    others = [r["ref"] for r in eng.rulesets() if r["name"] == "jax-export" and r["ref"] != export_rules.ref]
    assert others
    # (3, 0), kDLCUDAHost, tells the eras before jax 0.10.2 from it.
    calls = [(mv, dl) for mv in [(1, 0), (0, 5), (1,)] for dl in [(1, 0), (2, 0), (3, 0), (20, 0)]]
    for other in others:
        rs = eng.ruleset(other)
        assert any(_base.decided_export(rs.explain(dict(base, max_version=list(mv), dl_device=list(dl))))
                   != real.export({"max_version": mv, "dl_device": dl}) for mv, dl in calls), \
            f"{other} decides like jax {jax.__version__} ({export_rules.ref}) on every call"
