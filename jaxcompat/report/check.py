"""What ``check --tests`` says, shaped from the records (``CellResult``, ``Comparison``, the new
warnings, the suite's health): the text it prints, and its files (check.json: the candidate's cell,
the user's tests one by one and what the run says as a whole; check-tests.xml, check.md,
check.html: report/formats/ renders them from ``outputs.UserTestsReport``, ``report.emit`` writes
them). A plain ``check`` writes ``reports.cell_json``."""

from __future__ import annotations

import json

from jaxcompat.model.health import Health
from jaxcompat.model.outcomes import CellResult
from jaxcompat.model.records import dump
from jaxcompat.model.usertests import Comparison, UserTest, counts
from jaxcompat.model.vocab import Outcome
from jaxcompat.model.warnings import NewWarning
from jaxcompat.report import warnings as shown_warnings
from jaxcompat.report.usertests import verdict


def summary(cmp: Comparison) -> dict:
    """What check.json says about the run as a whole (beside the per-test records)."""
    sides = ["candidate"] + (["baseline"] if cmp.with_baseline else [])
    causes = {"candidate": cmp.candidate_cause, "baseline": cmp.baseline_cause}
    return {"judged": not cmp.unjudged, "unjudged": cmp.unjudged, "classes": counts(cmp.tests),
            **({"held_at_baseline": cmp.sides.to_dict()} if cmp.sides else {}),
            "sides": {side: {"ran": cmp.ran.get(side, 0), "uncollectable": cmp.uncollectable.get(side, []),
                             "cause": causes[side]} for side in sides}}


def user_tests_json(result: CellResult, cmp: Comparison, *, project: str, warned: list[NewWarning],
                    health: Health) -> str:
    """check.json's text (``project``: the tested project's name)."""
    data = {
        **result.to_dict(),
        "user_tests": dump(cmp.tests),
        "user_tests_target": project,
        "user_tests_run": {
            **summary(cmp),
            "cells": cmp.cells,
            "test_dependencies": cmp.test_dependencies,
            "test_dependencies_left_out": cmp.left_out,
            "new_warnings": [w.to_dict() for w in warned], "health": health.to_dict(), "learned": cmp.learned,
        },
        "user_tests_versions": {"candidate": cmp.candidate_versions, "baseline": cmp.baseline_versions},
    }
    return json.dumps(data, indent=2) + "\n"


def not_exercised(result: CellResult, tests: list[UserTest]) -> list[str]:
    """Known failures our cases hit in the candidate that none of the user's tests ran into."""
    seen = {t.explained_by for t in tests if t.explained_by}
    hit = [r.failure for r in result.results if r.outcome == Outcome.REPRODUCED and r.failure]
    return [f for f in dict.fromkeys(hit) if f not in seen]


def tests_text(result: CellResult, cmp: Comparison, described: str, *, warned: list[NewWarning], health: Health,
               learned: str, api: str, ours: str) -> str:
    """What check --tests prints (check.md and check.html open with it): the new warnings, the
    verdict on the user's tests (``described``: what ran), the suite's health, what --aa learned,
    jax's API history (``api``), the known failures our cases hit in the candidate (``result``)
    that no test ran into, then our cases' verdict (``ours``)."""
    mine = "\n".join(filter(None, [*shown_warnings.lines(warned, projects=False), verdict(cmp, described),
                                    shown_warnings.health_line(health), learned]))
    mine += "\n" * bool(api) + api
    if extra := not_exercised(result, cmp.tests):
        mine += ("\n  i known failures this candidate hits that your tests did not run into (see below): "
                 + ", ".join(extra))
    return f"{mine}\n\nOur cases in the candidate:\n{ours}"
