"""Confirmed regressions: a suite's health (a baseline that mostly fails is flagged and judged on
the rest), and what broke in an earlier report (``--rerun-failures REPORT``: crater.json or
check.json), to run only that again."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from jaxcompat._util.jsonfile import read_json
from jaxcompat.knowledge.signature import normalise
from jaxcompat.model.health import UNHEALTHY_SHARE, Health
from jaxcompat.model.usertests import UserTest, function_of
from jaxcompat.model.vocab import RAN, SuiteHealth, UserTestStatus

RERUN = (UserTestStatus.BROKEN, UserTestStatus.FAILS)  # what "broke" in a report


class ReportError(ValueError):
    """A --rerun-failures report that cannot be used (one line: the file, what is wrong, the fix)."""


def health(tests: list[UserTest]) -> Health:
    """``unhealthy`` when more than half of the tests that ran in the baseline fail on both sides,
    with the most common error among them."""
    ran = [t for t in tests if t.baseline in RAN]
    both = [t for t in tests if t.cls == UserTestStatus.FAILS_BOTH]
    if not ran or len(both) <= UNHEALTHY_SHARE * len(ran):
        return Health(SuiteHealth.HEALTHY, len(ran), len(both))
    errors = Counter(_signature(t) for t in both)
    signature, count = max(errors.items(), key=lambda kv: (kv[1], kv[0]))
    return Health(SuiteHealth.UNHEALTHY, len(ran), len(both), signature, count)


def _signature(t: UserTest) -> str:
    head = (t.message or "").split(": ", 1)
    error = head[0].rsplit(".", 1)[-1] if len(head) == 2 and head[0].replace(".", "").isidentifier() else ""
    return f"{error or 'failed'}: {normalise(t.message or '', error)}"


def failures_of(path: str) -> dict[str, list[str]]:
    """Project -> the tests that broke (``broken``, or ``fails`` without a baseline) in an earlier
    crater.json (per dependent) or check.json (the tested project, by its folder's name)."""
    fix = "name a crater.json or check.json an earlier run wrote"
    data = read_json(Path(path), ReportError, unreadable=fix, damaged=fix)
    if isinstance(data, dict) and data.get("kind") == "crater" and isinstance(data.get("dependents"), list):
        per = {d.get("name", ""): d.get("tests", []) for d in data["dependents"] if isinstance(d, dict)}
    elif isinstance(data, dict) and isinstance(data.get("user_tests"), list):
        per = {str(data.get("user_tests_target", "")): data["user_tests"]}
    else:
        raise ReportError(f"--rerun-failures {path}: neither a crater report (crater.json) nor a check --tests "
                          f"report (check.json with user_tests); {fix}")
    out = {}
    for project, tests in per.items():
        # a test whose id changed between the sides (``was``): its function, every id of it on each side (the
        # baseline has none of the candidate's ids), so that they are paired again (model/usertests.renamed)
        broke = [function_of(t["test"]) if t.get("was") else t["test"]
                 for t in tests if isinstance(t, dict) and t.get("class") in RERUN and t.get("test")]
        if broke:
            out[project] = list(dict.fromkeys(broke))
    if not out:
        raise ReportError(f"--rerun-failures {path}: no test broke in it, so nothing to re-run (drop "
                          "--rerun-failures to run every test)")
    return out
