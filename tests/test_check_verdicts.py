"""check and check --env decide their exit through the one invariant (model/verdicts.decide): the
machine, our own harness or the index is "could not judge" (2), never "not safe" (1); a cell whose
every case was skipped is never "✓ safe" (0). Each failed on 084bcdf (noted per test)."""

from __future__ import annotations

import pytest

import jaxcompat.operations.check as check_operation
from jaxcompat.commands import main
from jaxcompat.model.outcomes import CaseResult, CellResult

UNREACHABLE = ("error: Failed to fetch: `https://pypi.org/simple/jax/`\n  Caused by: error sending request for url "
               "(https://pypi.org/simple/jax/): dns error: failed to lookup address information")


def _check(tmp_path, capsys, monkeypatch, cell: CellResult) -> tuple[int, str]:
    def fake(c, matrix, **kw):
        cell.id = c.id
        return cell
    monkeypatch.setattr(check_operation, "run_cell", fake)
    code = main(["check", "jax==0.4.33", "--python", "3.12", "--no-verify-escapes", "--reports",
                 str(tmp_path / "reports"), "--state", str(tmp_path / "state")])
    said = capsys.readouterr()
    return code, said.out + said.err


@pytest.mark.parametrize("status, message", [
    ("harness-error", "the harness's own child died"),  # a bug of ours
    ("backend-missing", "no NVIDIA GPU on this machine"),  # this machine
    ("python-missing", "no interpreter 3.12"),
    ("unresolvable", UNREACHABLE),  # the index did not answer: not the releases' doing
])
def test_a_cell_that_says_nothing_of_the_candidate_is_exit_2(tmp_path, capsys, monkeypatch, status, message):
    """084bcdf: exit 1 ("the candidate does not work") for each."""
    code, out = _check(tmp_path, capsys, monkeypatch, CellResult("c", "3.12", "cpu", status, message=message))
    assert code == 2, out
    assert "could not judge" in out


def test_a_candidate_that_does_not_resolve_is_still_not_safe(tmp_path, capsys, monkeypatch):
    cell = CellResult("c", "3.12", "cpu", "unresolvable", message="No solution found when resolving dependencies")
    code, out = _check(tmp_path, capsys, monkeypatch, cell)
    assert code == 1, out


def _case(name: str, outcome: str) -> CaseResult:
    return CaseResult(case=f"cases/{name}.py::test_x", failure=None, expected="pass", outcome=outcome,
                      duration_s=0.1, message="needs a GPU" if outcome == "skipped" else "")


def test_every_case_skipped_is_not_safe(tmp_path, capsys, monkeypatch):
    """084bcdf: "✓ safe: 0 case(s) pass, 2 skipped", exit 0."""
    cell = CellResult("c", "3.12", "cpu", "ok", results=[_case("a", "skipped"), _case("b", "skipped")])
    code, out = _check(tmp_path, capsys, monkeypatch, cell)
    assert code == 2 and "✓ safe" not in out, out
    assert "every case was skipped" in out


def test_cases_that_ran_and_passed_are_safe(tmp_path, capsys, monkeypatch):
    cell = CellResult("c", "3.12", "cpu", "ok", results=[_case("a", "pass"), _case("b", "skipped")])
    code, out = _check(tmp_path, capsys, monkeypatch, cell)
    assert code == 0 and "✓ safe: 1 case(s) pass, 1 skipped" in out, out
