"""check.json of ``check --tests``: the candidate's cell, the user's tests one by one, and what the run
says as a whole, shaped from the records (``CellResult``, ``Comparison``, the new warnings, the
suite's health); commands/check.py writes it. A plain ``check`` writes ``reports.cell_json``."""

from __future__ import annotations

import json

from jaxcompat.knowledge.outcomes import CellResult
from jaxcompat.model.health import Health
from jaxcompat.model.usertests import Comparison, counts
from jaxcompat.model.warnings import NewWarning


def summary(cmp: Comparison) -> dict:
    """What check.json says about the run as a whole (beside the per-test records)."""
    sides = ["candidate"] + (["baseline"] if cmp.with_baseline else [])
    causes = {"candidate": cmp.candidate_cause, "baseline": cmp.baseline_cause}
    return {"judged": not cmp.unjudged, "unjudged": cmp.unjudged, "classes": counts(cmp.tests),
            **({"held_at_baseline": cmp.sides.to_dict()} if cmp.sides else {}),
            "sides": {side: {"ran": cmp.ran.get(side, 0), "uncollectable": cmp.uncollectable.get(side, []),
                             "cause": causes[side]} for side in sides}}


def user_tests_json(result: CellResult, cmp: Comparison, *, project: str, cells: dict[str, str],
                    test_dependencies: list[str], left_out: list[str], warned: list[NewWarning],
                    health: Health) -> str:
    """check.json's text: ``project`` is the tested project's name, ``cells`` the ids of the
    candidate's (and the baseline's) cells, ``test_dependencies`` what was installed for the tests
    and ``left_out`` what of it the candidate pins itself."""
    data = {
        **result.to_dict(),
        "user_tests": cmp.to_dict(),
        "user_tests_target": project,
        "user_tests_run": {
            **summary(cmp),
            "cells": cells,
            "test_dependencies": test_dependencies,
            "test_dependencies_left_out": left_out,
            "new_warnings": [w.to_dict() for w in warned], "health": health.to_dict(), "learned": cmp.learned,
        },
        "user_tests_versions": {"candidate": cmp.candidate_versions, "baseline": cmp.baseline_versions},
    }
    return json.dumps(data, indent=2) + "\n"
