"""The nightly run: the newest release of every package, compared with the committed baseline.

The cell pins every package to ``latest`` on the newest Python this machine has that the
newest releases accept; its result is compared with the baseline's ``latest`` cell (what moved:
outcomes, versions), and an issue body is drafted when something regressed (the texts: report/latest.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from jaxcompat._util.atomic import write_text
from jaxcompat._util.text import quiet
from jaxcompat.env.pythons import PythonMissing, find_python
from jaxcompat.model.index import NO_INDEX, IndexOptions
from jaxcompat.model.latest import Refresh
from jaxcompat.model.matrix import LATEST, Cell, Matrix
from jaxcompat.model.outcomes import FAILING_OUTCOMES, CellResult
from jaxcompat.model.vocab import CellOutcome, CellStatus
from jaxcompat.plugin.packages import ECOSYSTEM
from jaxcompat.report.compare import compare
from jaxcompat.report.latest import issue_body, latest_md, terminal_text
from jaxcompat.report.outputs import LatestReport
from jaxcompat.report.reports import matrix_dict, read_cells
from jaxcompat.run.cell import run_cell

PACKAGES = ECOSYSTEM
PYTHONS = ("3.14", "3.13", "3.12", "3.11")
CELL_ID = "latest"


def latest_cell(python: str, index: IndexOptions = NO_INDEX) -> Cell:
    """Every package at its newest: with ``index`` (an upstream-dev night), the newest that those
    indexes have, pre-releases too with ``--pre``."""
    return Cell(id=CELL_ID, python=python, backend="cpu", pins={p: LATEST for p in PACKAGES},
                note="the newest release of every package", index=index)


def run_latest(matrix: Matrix, *, state_dir: Path, reports_dir: Path, pythons=PYTHONS,
               use_cache: bool = True, progress=quiet, index: IndexOptions = NO_INDEX) -> CellResult:
    """Try the newest Python first; fall back while the newest releases cannot resolve on it."""
    result: CellResult | None = None
    tried = []
    for version in pythons:
        try:
            find_python(version)
        except PythonMissing:
            tried.append(f"{version} (not installed)")
            continue
        progress(f"latest: trying Python {version}")
        result = run_cell(latest_cell(version, index), matrix, state_dir=state_dir, reports_dir=reports_dir,
                          use_cache=use_cache)
        if result.status != CellStatus.UNRESOLVABLE:
            return result
        tried.append(f"{version} (newest releases do not resolve)")
    if result is None:
        result = CellResult(id=CELL_ID, python=pythons[-1], backend="cpu", status=CellStatus.PYTHON_MISSING,
                            outcome=CellOutcome.CELL_ERROR, message="no usable Python: " + ", ".join(tried))
    return result


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"cells": []}


def load_baseline(path: Path) -> list[CellResult]:
    """The baseline's cells as records (none when there is no baseline yet)."""
    return read_cells(path, missing_ok=True)


def baseline_latest(baseline: list[CellResult]) -> list[CellResult]:
    return [c for c in baseline if c.id == CELL_ID]


def update_baseline(path: Path, cells: list[dict]) -> None:
    """Replace the baseline's entries for these cell ids (an explicit user action only)."""
    data = _read(path)
    ids = {c["id"] for c in cells}
    data["cells"] = [c for c in data.get("cells", []) if c.get("id") not in ids] + cells
    data.setdefault("schema", 1)
    write_text(path, json.dumps(data, indent=2) + "\n")


def refresh_baseline(path: Path, result: CellResult, baseline: list[CellResult]) -> Refresh:
    """Store tonight's result as the baseline's ``latest`` cell when it differs from it (outcomes,
    versions, status, cases added to the suite since): the nightly proposes that as a change, so
    the next night reports only what moved after it. Never a regression: a case that fails the run
    tonight keeps the baseline's record (a new one is left out), a cell that no longer works and no
    rule explains (not ``expected``) is not stored at all; those are the night's findings
    (``held``). Unchanged, the file is left as it is."""
    old = baseline_latest(baseline)
    diff = compare(old, [result], match_single=True)
    if diff.empty:
        return Refresh()
    if result.status != CellStatus.OK and result.outcome != CellOutcome.EXPECTED:
        # an environment no rule explains (or one this machine could not build): not the new normal
        was = next((m.before for m in diff.status), "")
        return Refresh(False, [f"the environment: {was + ' -> ' if was else ''}{result.status}, {result.outcome} "
                               "(tonight's result not stored)"])
    regressed = {m.case: f"{m.case}: {m.before} -> {m.after}" for m in diff.moved if m.after in FAILING_OUTCOMES}
    new = result.to_dict()
    if regressed:
        before = {r["case"]: r for r in old[0].to_dict()["results"]} if old else {}
        new["results"] = [before.get(r["case"]) if r["case"] in regressed else r for r in new["results"]]
        new["results"] = [r for r in new["results"] if r is not None]
    update_baseline(path, [new])
    return Refresh(True, list(regressed.values()))


def report_latest(result: CellResult, baseline: list[CellResult],
                  held: list[str] = ()) -> tuple[LatestReport, str, bool]:
    """Tonight's report (``report.emit`` writes latest.json, latest.md, closed by ``held``: what was
    kept out of the baseline, and when something regressed latest-issue.md), the terminal's text and
    whether tonight regressed."""
    new = matrix_dict([result], {"matrix_file": "(latest releases)"})
    diff = compare(baseline_latest(baseline), [result], match_single=True)
    regressed = result.failing or diff.regressed
    body = issue_body(result, diff) if regressed else ""
    said = LatestReport("latest", data=new, markdown=latest_md(result, diff, body), issue=body if regressed else None,
                        held=list(held))
    return said, terminal_text(result, diff), regressed
