"""latest --refresh-baseline (the nightly's proposal) never blesses what fails the run: an
environment that no longer works and that no rule explains stays out of the baseline; one a rule
explains (an expected cell error) is the new normal and is stored. The proposal's body (the
workflow's own extract of latest.md) carries the "Kept out of the baseline" section."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from jaxcompat.model.outcomes import parse_cells
from jaxcompat.operations.latest import refresh_baseline, update_baseline
from jaxcompat.report.latest import held_section

REPO = Path(__file__).resolve().parent.parent


def _cell(status: str, outcome: str, results: dict[str, str], jax: str = "0.12.0.1"):
    return parse_cells({"cells": [{"id": "latest", "status": status, "outcome": outcome, "versions": {"jax": jax},
                                   "results": [{"case": c, "outcome": o, "message": f"E: {o}"}
                                               for c, o in results.items()]}]})


@pytest.mark.parametrize("outcome, stored", [("cell-error", False), ("expected", True)])
def test_an_environment_that_no_longer_works_is_stored_only_when_a_rule_explains_it(tmp_path, outcome, stored):
    """084bcdf stored a cell-error as the new baseline (the next night: no change); 1b71c70 kept
    out even one a rule explains, so the proposal could never follow a known failure."""
    path = tmp_path / "baseline.json"
    old = _cell("ok", "ok", {"cases/a.py::test_x": "pass"}, jax="0.11.2")
    update_baseline(path, [c.to_dict() for c in old])
    tonight = _cell("import-error", outcome, {})[0]
    done = refresh_baseline(path, tonight, old)
    kept = json.loads(path.read_text())["cells"][0]
    assert bool(done) == stored
    assert (kept["status"] == "import-error") == stored
    assert bool(done.held) != stored
    if not stored:
        assert "import-error" in done.held[0] and "not stored" in done.held[0]


def test_the_proposal_body_carries_what_was_kept_out(tmp_path):
    """The workflow builds the PR body from latest.md with its own sed: the section must be in it."""
    workflow = (REPO / ".github" / "workflows" / "nightly.yml").read_text(encoding="utf-8")
    [expr] = re.findall(r"sed -n '([^']*)' reports/latest\.md >> reports/nightly-pr\.md", workflow)
    path = tmp_path / "baseline.json"
    old = _cell("ok", "ok", {"cases/a.py::test_x": "pass"})
    update_baseline(path, [c.to_dict() for c in old])
    done = refresh_baseline(path, _cell("ok", "ok", {"cases/a.py::test_x": "regression"})[0], old)
    latest_md = "# jax-compat\n\n## Since the baseline\n\n```\n...\n```\n\n" + "\n".join(held_section(done))
    body = subprocess.run(["sed", "-n", expr], input=latest_md, capture_output=True, text=True, check=True).stdout
    assert "## Kept out of the baseline" in body and "cases/a.py::test_x: pass -> regression" in body


def _latest(tmp_path, monkeypatch, baseline_cells, tonight_cell) -> int:
    from jaxcompat.commands import main
    from jaxcompat.operations import latest
    from tests.helpers import make_tree

    make_tree(tmp_path)
    path = tmp_path / "baseline.json"
    update_baseline(path, [c.to_dict() for c in baseline_cells])
    monkeypatch.setattr(latest, "run_latest", lambda *a, **k: tonight_cell)
    return main(["latest", "--matrix", str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"),
                 "--state", str(tmp_path / "state"), "--baseline", str(path)])


@pytest.mark.parametrize("status, outcome", [("python-missing", "unavailable"), ("backend-missing", "unavailable"),
                                             ("not-run", "interrupted")])
def test_a_night_that_judged_nothing_is_not_no_regression(tmp_path, monkeypatch, status, outcome):
    """084bcdf: exit 0 for a night whose newest releases never ran (the same as the baseline's)."""
    same = _cell(status, outcome, {})
    code = _latest(tmp_path, monkeypatch, same, same[0])
    assert code == 2


def test_a_night_whose_every_case_skipped_is_not_no_regression(tmp_path, monkeypatch):
    cells = _cell("ok", "ok", {"cases/a.py::test_x": "skipped"})
    assert _latest(tmp_path, monkeypatch, cells, cells[0]) == 2


def test_a_night_as_the_rules_predict_is_0_and_a_known_cell_error_too(tmp_path, monkeypatch):
    cells = _cell("ok", "ok", {"cases/a.py::test_x": "pass", "cases/a.py::test_y": "reproduced"})
    assert _latest(tmp_path, monkeypatch, cells, cells[0]) == 0
    known = _cell("unresolvable", "expected", {})
    (tmp_path / "k").mkdir()
    assert _latest(tmp_path / "k", monkeypatch, known, known[0]) == 0
