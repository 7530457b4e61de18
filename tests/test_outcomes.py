"""Expectation rules and outcome classification (the heart of 'what should happen')."""

from __future__ import annotations

import pytest

from jaxcompat.knowledge.config import load
from jaxcompat.knowledge.outcomes import check_import_rules, classify, classify_cell_error
from jaxcompat.knowledge.rules import applies, covers
from jaxcompat.model.outcomes import CellResult, RawResult
from tests.helpers import MINIMAL, make_tree

BUG = "cases/test_demo.py::test_bug"
CONTROL = "cases/test_demo.py::test_control_ok"
AFFECTED = {"jax": "0.4.33", "jaxlib": "0.4.33", "equinox": "0.11.7"}
FIXED = {"jax": "0.4.33", "jaxlib": "0.4.33", "equinox": "0.11.8"}
CLEAN_JAX = {"jax": "0.4.31", "jaxlib": "0.4.31", "equinox": "0.11.7"}


@pytest.fixture
def failures(tmp_path):
    return load(make_tree(tmp_path)).failures


def _failed(case=BUG, types=("XlaRuntimeError", "RuntimeError", "Exception"),
            msg="XlaRuntimeError: boom. Unfortunately you do not appear to be using filter_jit"):
    return RawResult(case=case, status="failed", error_types=list(types), message=msg, duration_s=0.5)


def test_applies_all_clauses_must_hold(failures):
    (f,) = failures
    assert applies(f, AFFECTED, "cpu")
    assert not applies(f, FIXED, "cpu")
    assert not applies(f, CLEAN_JAX, "cpu")
    assert not applies(f, {"jax": "0.4.33"}, "cpu")  # equinox absent: the clause cannot hold


def test_prerelease_versions_are_compared(failures):
    (f,) = failures
    assert applies(f, {"jax": "0.4.34.dev20241001", "equinox": "0.11.7rc1"}, "cpu")


def test_backend_condition(tmp_path):
    m = load(make_tree(tmp_path, MINIMAL.replace('fix = "', 'backend = ["cpu"]\nfix = "')))
    (f,) = m.failures
    assert applies(f, AFFECTED, "cpu") and not applies(f, AFFECTED, "cuda12")


def test_reproduced(failures):
    r = classify(_failed(), failures, AFFECTED, "cpu")
    assert (r.outcome, r.failure, r.expected) == ("reproduced", "demo-bug", "fail")
    assert r.fix == "upgrade equinox to >=0.11.8" and r.upstream


def test_stale_when_a_known_failure_no_longer_reproduces(failures):
    r = classify(RawResult(BUG, "passed"), failures, AFFECTED, "cpu")
    assert (r.outcome, r.failure) == ("stale", "demo-bug")


def test_mismatch_on_a_different_message(failures):
    r = classify(_failed(msg="XlaRuntimeError: something else"), failures, AFFECTED, "cpu")
    assert (r.outcome, r.failure) == ("mismatch", "demo-bug")


def test_mismatch_on_a_different_type(failures):
    r = classify(_failed(types=("ValueError", "Exception")), failures, AFFECTED, "cpu")
    assert r.outcome == "mismatch"


def test_regression_when_no_rule_applies(failures):
    r = classify(_failed(), failures, FIXED, "cpu")
    assert (r.outcome, r.failure, r.expected) == ("regression", None, "pass")


def test_control_failing_is_a_regression_even_in_an_affected_cell(failures):
    r = classify(_failed(case=CONTROL), failures, AFFECTED, "cpu")
    assert r.outcome == "regression"


def test_pass_and_skip(failures):
    assert classify(RawResult(BUG, "passed"), failures, FIXED, "cpu").outcome == "pass"
    s = classify(RawResult(BUG, "skipped", message="needs gpu"), failures, AFFECTED, "cpu")
    assert s.outcome == "skipped" and s.message == "needs gpu"


@pytest.mark.parametrize("status", ["timeout", "crash"])
def test_timeout_and_crash_are_their_own_outcomes(failures, status):
    assert classify(RawResult(BUG, status), failures, AFFECTED, "cpu").outcome == status


IMPORT_RULE = MINIMAL + '''
[[failure]]
id = "numpy2-import"
stage = "import"
affects = { jax = "<0.4.26", numpy = ">=2" }
error = "AttributeError"
match = "issubsctype"
upstream = ["https://github.com/jax-ml/jax/issues/19246"]
fix = "constrain numpy<2"
'''


def test_expected_import_error(tmp_path):
    fs = load(make_tree(tmp_path, IMPORT_RULE)).failures
    cell = CellResult(id="c", python="3.11", backend="cpu", status="import-error",
                      message="AttributeError: `np.issubsctype` was removed in the NumPy 2.0 release")
    classify_cell_error(cell, "import", fs, {"jax": "0.4.13", "numpy": "2.1.1"})
    assert (cell.outcome, cell.failure) == ("expected", "numpy2-import") and not cell.failing


def test_unexpected_import_error_fails_the_cell(tmp_path):
    fs = load(make_tree(tmp_path, IMPORT_RULE)).failures
    cell = CellResult(id="c", python="3.11", backend="cpu", status="import-error", message="boom")
    classify_cell_error(cell, "import", fs, {"jax": "0.4.13", "numpy": "2.1.1"})
    assert cell.outcome == "cell-error" and cell.failing


def test_import_rule_stale_when_everything_imports(tmp_path):
    fs = load(make_tree(tmp_path, IMPORT_RULE)).failures
    cell = CellResult(id="c", python="3.11", backend="cpu", status="ok")
    check_import_rules(cell, fs, {"jax": "0.4.13", "numpy": "2.1.1"})
    assert cell.outcome == "stale" and cell.failing


def test_cell_failing_follows_its_results(failures):
    cell = CellResult(id="c", python="3.11", backend="cpu", status="ok")
    cell.results = [classify(_failed(), failures, AFFECTED, "cpu")]
    assert not cell.failing
    cell.results.append(classify(RawResult(CONTROL, "failed", ["ValueError"], "x"), failures, AFFECTED, "cpu"))
    assert cell.failing


def test_python_missing_does_not_fail_the_run():
    cell = CellResult(id="c", python="3.9", backend="cpu", status="python-missing", outcome="unavailable")
    assert not cell.failing


def test_resolution_date_ignores_reuploaded_jaxlib(tmp_path):
    import json

    from jaxcompat.env import releases

    (tmp_path / "releases-jax.json").write_text(json.dumps({"0.4.13": {"date": "2023-06-23", "yanked": False}}))
    (tmp_path / "releases-jaxlib.json").write_text(json.dumps({"0.4.13": {"date": "2025-12-05", "yanked": False}}))
    (tmp_path / "releases-equinox.json").write_text(json.dumps({"0.10.6": {"date": "2023-06-14", "yanked": False}}))
    pins = {"jax": "0.4.13", "jaxlib": "0.4.13", "equinox": "0.10.6"}
    assert releases.resolution_date(pins, tmp_path) == "2023-06-24"
    assert releases.resolution_date({"jaxlib": "0.4.13"}, tmp_path) == "2025-12-06"


def test_a_case_can_narrow_the_failure_range(tmp_path):
    text = MINIMAL.replace('cases = ["cases/test_demo.py::test_bug"]',
                           'cases = [{ case = "cases/test_demo.py::test_bug", affects = { jax = "<0.4.34" } },'
                           ' "cases/test_demo.py::test_control_ok"]')
    (f,) = load(make_tree(tmp_path, text)).failures
    assert applies(f, {"jax": "0.4.33", "equinox": "0.11.7"}, "cpu", BUG)
    assert not applies(f, {"jax": "0.4.35", "equinox": "0.11.7"}, "cpu", BUG)
    assert applies(f, {"jax": "0.4.35", "equinox": "0.11.7"}, "cpu", CONTROL)  # the failure's own range


def test_a_parametrized_test_is_covered_by_its_function_or_its_exact_id(tmp_path):
    cases = {"test_demo.py": "import pytest\n\n@pytest.mark.parametrize('k', ['a', 'b'])\ndef test_bug(k):\n    pass\n"}
    text = MINIMAL.replace('cases = ["cases/test_demo.py::test_bug"]', 'cases = ["cases/test_demo.py::test_bug[a]"]')
    (f,) = load(make_tree(tmp_path, text, cases)).failures
    assert covers(f, "cases/test_demo.py::test_bug[a]") and not covers(f, "cases/test_demo.py::test_bug[b]")
    (g,) = load(make_tree(tmp_path, MINIMAL, cases)).failures
    assert covers(g, "cases/test_demo.py::test_bug[a]") and covers(g, "cases/test_demo.py::test_bug[b]")


def test_collateral_cases_reproduce_when_they_fail_and_pass_when_they_pass(tmp_path):
    text = MINIMAL.replace('fix = "', 'collateral = ["cases"]\nfix = "')
    (f,) = load(make_tree(tmp_path, text)).failures
    other = "cases/test_demo.py::test_control_ok"
    assert classify(_failed(case=other), [f], AFFECTED, "cpu").outcome == "reproduced"
    assert classify(RawResult(other, "passed"), [f], AFFECTED, "cpu").outcome == "pass"
    assert classify(_failed(case=other, msg="other"), [f], AFFECTED, "cpu").outcome == "regression"
    assert classify(_failed(case=other), [f], FIXED, "cpu").outcome == "regression"


def test_a_rule_can_document_a_crash(tmp_path):
    from jaxcompat.knowledge.config import load
    from jaxcompat.knowledge.outcomes import classify
    from jaxcompat.model.outcomes import RawResult
    from tests.helpers import CRASH_RULE, make_tree

    failures = load(make_tree(tmp_path, CRASH_RULE)).failures
    broken = {"jax": "0.4.23", "jaxlib": "0.4.23", "numpy": "2.1.1", "equinox": "0.11.9"}
    crash = RawResult("cases/test_demo.py::test_control_ok", "crash", message="killed by signal SIGSEGV (11)")
    assert classify(crash, failures, broken, "cpu").outcome == "reproduced"
    assert classify(crash, failures, {**broken, "numpy": "1.26.4"}, "cpu").outcome == "crash"


def test_the_documented_outcome_table_is_the_vocabulary():
    """docs/outcomes.md documents Outcome (jaxcompat/model/vocab.py); it cannot import it, so it is checked."""
    import re
    from pathlib import Path

    from jaxcompat.model.vocab import Outcome

    table = (Path(__file__).resolve().parent.parent / "docs" / "outcomes.md").read_text()
    documented: dict[str, bool] = {}
    for names, fails in re.findall(r"^\| (`[^|]+`) \| [^|]+ \| (yes|no) \|$", table, re.M):
        for name in re.findall(r"`([a-z-]+)`", names):
            documented[name] = fails == "yes"
    assert documented == {o.value: o.fails for o in Outcome}
