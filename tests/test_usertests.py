"""check --tests: the user's tests classified before/after, failures explained by the rules,
flaky tests never blamed, the reports and the exit status. No jax: a folder of plain tests runs
in this interpreter (tests/fake_matrix.py), a fake rule stands for a documented failure."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from jaxcompat.env import testtarget
from jaxcompat.knowledge.config import load
from jaxcompat.model.outcomes import RawResult
from jaxcompat.model.usertests import TEST_CLASSES, Observed
from jaxcompat.model.usertests import test_class as class_of  # not a test: pytest would collect the bare name
from jaxcompat.model.vocab import UserTestSide, UserTestStatus
from jaxcompat.operations import usertests
from tests.helpers import MINIMAL, failure_toml, make_tree

REPO = Path(__file__).resolve().parent.parent
DRIVER = REPO / "tests" / "fake_matrix.py"

RULE = MINIMAL + failure_toml("closure-bug", "cases/test_demo.py::test_bug", '{ pytest = ">=1" }', "ValueError",
                              "Closure-converted function called with different dynamic arguments",
                              "upgrade equinox to >=0.11.7")


@pytest.mark.parametrize("before, after, cls", [
    ("passed", "passed", "pass"), ("passed", "failed", "broken"), ("passed", "error", "broken"),
    ("failed", "passed", "fixed"), ("failed", "failed", "fails-both"), ("error", "failed", "fails-both"),
    (None, "failed", "fails"), (None, "passed", "pass"), ("skipped", "failed", "fails"),
    ("absent", "failed", "fails"), ("passed", "skipped", "skipped"), ("passed", "absent", "broken"),
    ("failed", "absent", "skipped"),
    # stopped at the case time limit: a test the baseline did not finish and the candidate fails
    # outright is broken (was fails-both: diffrax's test_against, broken by plain pytest's account)
    ("timeout", "failed", "broken"), ("timeout", "error", "broken"), ("timeout", "timeout", "fails-both"),
    ("timeout", "passed", "pass"), ("passed", "timeout", "broken"), ("failed", "timeout", "fails-both"),
])
def test_the_class_of_a_test(before, after, cls):
    got = class_of(UserTestSide(before) if before else None, UserTestSide(after))
    assert got == cls and type(got) is UserTestStatus  # the word, as its type (model/vocab.py)


def _obs(**statuses) -> Observed:
    results = {}
    for name, st in statuses.items():
        msg = (
            "ValueError: Closure-converted function called with different dynamic arguments"
            if st == "closure"
            else "AssertionError: no"
        )
        types = ["ValueError", "Exception"] if st == "closure" else ["AssertionError", "Exception"]
        results[f"tests/test_x.py::{name}"] = RawResult(case=f"tests/test_x.py::{name}",
                                                        status="failed" if st in ("closure", "failed") else st,
                                                        error_types=types if st != "passed" else [],
                                                        message=msg if st != "passed" else "", traceback="tb")
    return Observed(results=results, versions={"pytest": "8.0.0"})


def test_failures_are_explained_by_the_rule_whose_error_they_are(tmp_path):
    matrix = load(make_tree(tmp_path, RULE))
    after = _obs(a="closure", b="failed", c="passed", d="failed")
    before = _obs(a="passed", b="passed", c="failed", d="failed")
    tests = {t.test.split("::")[1]: t for t in usertests.classify(after, before, matrix, "cpu")}
    assert tests["a"].cls == "broken" and tests["a"].explained_by == "closure-bug"
    assert tests["a"].fix == "upgrade equinox to >=0.11.7"
    assert tests["b"].cls == "broken" and tests["b"].explained_by is None and tests["b"].traceback == "tb"
    assert tests["c"].cls == "fixed" and tests["d"].cls == "fails-both"
    flaky = usertests.classify(after, before, matrix, "cpu", {"tests/test_x.py::b": "candidate: failed, then passed"})
    assert [t.cls for t in flaky if t.test.endswith("::b")] == ["flaky"]
    record = tests["a"].to_dict()
    assert set(record) >= {"test", "baseline", "candidate", "class", "explained_by", "fix", "traceback"}
    assert "baseline" not in usertests.classify(after, None, matrix, "cpu")[0].to_dict()


def test_a_test_that_passed_and_skips_itself_for_a_failing_import_is_broken(tmp_path):
    """Red team 6 (F8): five tests that passed before hit ``pytest.importorskip`` in the candidate (a
    module it removed): plain pytest says skipped and exits 0; the check said safe. They are broken,
    with the skip's reason as their message; a skip for another reason (``skipif``) stays skipped,
    and so does an import skip of a test that did not pass before."""
    matrix = load(make_tree(tmp_path, RULE))
    skip = "Skipped: could not import 'jax.experimental.foo': No module named 'jax.experimental.foo'"
    after = Observed(results={f"tests/test_x.py::{n}": RawResult(case=f"tests/test_x.py::{n}", status="skipped",
                                                                 message=m, error_types=[])
                              for n, m in (("a", skip), ("b", "Skipped: needs jax<0.5"), ("c", skip))},
                     versions={"pytest": "8.0.0"})
    before = _obs(a="passed", b="passed", c="failed")
    tests = {t.test.split("::")[1]: t for t in usertests.classify(after, before, matrix, "cpu")}
    assert tests["a"].cls == "broken" and "could not import 'jax.experimental.foo'" in tests["a"].message
    assert tests["b"].cls == "skipped" and tests["c"].cls == "skipped"
    assert [t.cls for t in usertests.classify(after, None, matrix, "cpu")] == ["skipped"] * 3  # no baseline


def test_a_fixed_test_says_what_it_failed_with_before(tmp_path):
    """A test the upgrade fixed carried no message: the verdict's 'fixed' group said '(no message)'
    where the baseline's failure (equinox's weak-type error, fixed by 0.11.7) is what a user reads."""
    matrix = load(make_tree(tmp_path, RULE))
    (fixed,) = usertests.classify(_obs(c="passed"), _obs(c="closure"), matrix, "cpu")
    assert fixed.cls == "fixed"
    assert fixed.message == "before: ValueError: Closure-converted function called with different dynamic arguments"
    assert fixed.traceback == "" and fixed.explained_by is None  # the candidate's record: it passed


def test_bad_tests_paths_get_one_line_errors(tmp_path):
    with pytest.raises(testtarget.TestsError, match="no such file"):
        testtarget.locate(str(tmp_path / "nope"))
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(testtarget.TestsError, match="not a directory"):
        testtarget.locate(str(tmp_path / "f.txt"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(testtarget.TestsError, match="no test_"):
        testtarget.locate(str(tmp_path / "empty"))
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text('[project]\nname = "p"\n[project.optional-dependencies]\ntest = ["pytest"]\n')
    target = testtarget.locate(str(proj))
    assert target.project and target.deps.extras == ("test",) and target.editable().endswith("proj[test]")
    (proj / "pyproject.toml").write_text('[project]\nname = "p"\n')
    (proj / "requirements").mkdir()
    (proj / "requirements" / "requirements-test.txt").write_text(
        "# tests\ncloudpickle==2.2.0\n-r other.txt\ndm-tree>=0.1.5\n"
    )
    target = testtarget.locate(str(proj))
    assert target.deps.requirements == ("cloudpickle==2.2.0", "dm-tree>=0.1.5")
    assert "requirements/requirements-test.txt" in target.deps.describe()
    (proj / "requirements" / "requirements-test.txt").write_text("not a requirement!\n")
    with pytest.raises(testtarget.TestsError, match="not a PEP 508 requirement"):
        testtarget.locate(str(proj))


USER_TESTS = '''
import os

def test_ok():
    pass

def test_closure():
    raise ValueError("Closure-converted function called with different dynamic arguments to the example")

def test_own_bug():
    assert 1 + 1 == 3

def test_flaky(tmp_path_factory):
    marker = os.path.join(os.environ["FLAKY_DIR"], "seen")
    if not os.path.exists(marker):
        open(marker, "w").close()
        raise RuntimeError("first run fails")
'''


@pytest.mark.integration
def test_check_with_tests_end_to_end(tmp_path):
    """A folder of tests through the real CLI: classes, explanation, reports, exit status 1."""
    make_tree(tmp_path, RULE.replace('pins = { jax = "0.4.33", equinox = "0.11.7" }', 'pins = { jax = "0.4.33" }'))
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    user = tmp_path / "user"
    user.mkdir()
    (user / "test_user.py").write_text(USER_TESTS)
    flaky_dir = tmp_path / "flaky"
    flaky_dir.mkdir()
    proc = subprocess.run([sys.executable, str(DRIVER), "check", "--matrix", str(tmp_path / "matrix.toml"),
                           "--reports", str(tmp_path / "reports"), "--state", str(tmp_path / "state"),
                           "--tests", str(user), "--no-verify-escapes", "jax==0.4.33"],
                          capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "FLAKY_DIR": str(flaky_dir)})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # without a baseline, a failing test fails the check
    assert out.index("Your tests") < out.index("Our cases in the candidate")
    assert "this looks like closure-bug — fix: upgrade equinox to >=0.11.7" in out
    data = json.loads((tmp_path / "reports" / "check.json").read_text())
    by = {t["test"].split("::")[1]: t for t in data["user_tests"]}
    assert by["test_ok"]["class"] == "pass" and by["test_ok"]["candidate"] == "passed"
    assert by["test_closure"]["class"] == "fails" and by["test_closure"]["explained_by"] == "closure-bug"
    assert by["test_own_bug"]["class"] == "fails" and by["test_own_bug"]["explained_by"] is None
    assert "assert 1 + 1 == 3" in by["test_own_bug"]["traceback"] or "test_own_bug" in by["test_own_bug"]["traceback"]
    assert by["test_flaky"]["class"] == "flaky" and "failed, then passed" in by["test_flaky"]["note"]
    assert "baseline" not in by["test_ok"]
    xml = (tmp_path / "reports" / "check-tests.xml").read_text()
    assert 'name="test_closure"' in xml and "closure-bug" in xml
    assert "| fails | `test_user.py::test_closure`" in (tmp_path / "reports" / "check.md").read_text()
    assert "closure-bug" in (tmp_path / "reports" / "check.html").read_text()


@pytest.mark.integration
def test_our_cases_failing_unpredicted_in_the_candidate_fail_check_tests_too(tmp_path):
    """Red team 6 (F12): a case of ours regressed in the candidate while the user's tests passed:
    check.json held the regression and the exit and the page said safe. The exit and the page now
    agree with check.json (1, not safe); a known failure our cases reproduce is said and, with the
    user's tests passing, does not fail the check (docs/check.md)."""
    cases = {"test_demo.py": "def test_bug():\n    raise ValueError('it broke')\n\n"
                             "def test_control_ok():\n    pass\n"}
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    proj = tmp_path / "proj"
    (proj / "tests").mkdir(parents=True)
    (proj / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "1"\n')
    (proj / "tests" / "test_mine.py").write_text("def test_mine():\n    pass\n")
    for rule, code, banner in (("", 1, "v-not-safe"), (failure_toml("demo-bug", "cases/test_demo.py::test_bug",
                                                                      '{ pytest = ">=1" }', "ValueError", "it broke",
                                                                      "pin it"), 0, "v-safe")):
        make_tree(tmp_path, MINIMAL.split("[[failure]]")[0] + rule, cases)
        reports = tmp_path / f"reports{code}"
        proc = subprocess.run([sys.executable, str(DRIVER), "check", "--matrix", str(tmp_path / "matrix.toml"),
                               "--reports", str(reports), "--state", str(tmp_path / "state"), "--tests", str(proj),
                               "--no-verify-escapes", "jax==0.4.33"], capture_output=True, text=True, timeout=300)
        data = json.loads((reports / "check.json").read_text())
        outcome = {r["case"].split("::")[1]: r["outcome"] for r in data["results"]}["test_bug"]
        assert outcome == ("regression" if code else "reproduced"), proc.stdout + proc.stderr
        assert proc.returncode == code, proc.stdout + proc.stderr
        assert f'class="verdict-banner {banner}"' in (reports / "check.html").read_text()


def test_baseline_without_tests_is_refused(tmp_path):
    make_tree(tmp_path)
    proc = subprocess.run([sys.executable, str(DRIVER), "check", "--matrix", str(tmp_path / "matrix.toml"),
                           "--reports", str(tmp_path / "reports"), "--state", str(tmp_path / "state"),
                           "--baseline", "jax==0.4.31", "jax==0.4.33"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "give --tests PATH too" in proc.stderr and "Traceback" not in proc.stderr


def test_a_module_that_fails_to_import_in_the_candidate_breaks_each_of_its_tests(tmp_path):
    matrix = load(make_tree(tmp_path, RULE))
    before = _obs(a="passed", b="passed")
    after = Observed(results={"tests/test_x.py": RawResult(
        case="tests/test_x.py", status="failed", error_types=["ValueError"], phase="collect",
        message="E   ValueError: Closure-converted function called with different dynamic arguments")},
        versions={"pytest": "8.0.0"})
    tests = usertests.classify(after, before, matrix, "cpu")
    assert [(t.test, t.cls, t.candidate, t.explained_by) for t in tests] == [
        ("tests/test_x.py::a", "broken", "error", "closure-bug"),
        ("tests/test_x.py::b", "broken", "error", "closure-bug"),
    ]


def test_a_module_that_fails_to_import_is_explained_by_the_import_rule_that_documents_its_error(tmp_path):
    """flowjax 19.1.2, jax 0.7.2 -> 0.10.1 with equinox held at 0.13.0: every test module failed at
    collection with equinox's own import error; the import-stage rule that documents it (its error and
    message) names the fix beside each broken test, not only beside our cases."""
    rule = (failure_toml("eqx-import-bug", "cases/test_demo.py::test_bug", '{ somepkg = ">=1" }', "AttributeError",
                         "batching.NotMapped is deprecated", "upgrade equinox to >=0.13.1")
            .replace('cases = ["cases/test_demo.py::test_bug"]\n', 'stage = "import"\n'))
    matrix = load(make_tree(tmp_path, MINIMAL + rule))
    before = _obs(a="passed")
    after = Observed(results={"tests/test_x.py": RawResult(
        case="tests/test_x.py", status="failed", error_types=["AttributeError", "Exception"], phase="collect",
        message="E   AttributeError: jax.interpreters.batching.NotMapped is deprecated.",
        traceback=("tests/test_x.py:1: in <module>\n    import somepkg\n"
                   ".venv/lib/python3.11/site-packages/somepkg/__init__.py:3: in <module>\n    from x import y\n"))},
        versions={"pytest": "8.0.0", "somepkg": "1.0"})
    [t] = usertests.classify(after, before, matrix, "cpu")
    assert (t.cls, t.explained_by, t.fix) == ("broken", "eqx-import-bug", "upgrade equinox to >=0.13.1")
    outside = load(make_tree(tmp_path, MINIMAL + rule.replace('">=1"', '"<1"')))  # not these versions
    assert usertests.classify(after, before, outside, "cpu")[0].explained_by is None
    # red team 8: the same error raised by the project's own code (no frame in the rule's package) is not
    # the rule's: unexplained, its traceback shown, jax's API history asked
    own = Observed(results={"tests/test_x.py": replace(after.results["tests/test_x.py"],
                                                       traceback="tests/test_x.py:1: in <module>\n    import jax\n")},
                   versions=after.versions)
    assert usertests.classify(own, before, matrix, "cpu")[0].explained_by is None


def test_the_test_classes_are_defined_once_and_documented():
    readme = (Path(__file__).resolve().parents[1] / "docs" / "check.md").read_text()
    assert all(f"`{cls}`" in readme for cls in TEST_CLASSES)
    assert [c for c, k in TEST_CLASSES.items() if k.fails_check] == ["broken", "fails"]


def _check(tmp_path, project: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    make_tree(tmp_path, RULE.replace('pins = { jax = "0.4.33", equinox = "0.11.7" }', 'pins = { jax = "0.4.33" }'))
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    proc = subprocess.run([sys.executable, str(DRIVER), "check", "--matrix", str(tmp_path / "matrix.toml"),
                           "--reports", str(tmp_path / "reports"), "--state", str(tmp_path / "state"),
                           "--tests", str(project), "--no-verify-escapes", *args],
                          capture_output=True, text=True, timeout=300)
    path = tmp_path / "reports" / "check.json"
    return proc, json.loads(path.read_text()) if path.is_file() else {}


def _user_project(root: Path, addopts: str, **modules: str) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text(f'[project]\nname = "userproj"\nversion = "1"\n'
                                         f'[project.optional-dependencies]\ndev = ["missingdep_xyz"]\n'
                                         f'[tool.pytest.ini_options]\ntestpaths = ["tests"]\naddopts = "{addopts}"\n')
    for name, text in modules.items():
        (root / "tests" / f"{name}.py").write_text(text)
    return root


@pytest.mark.integration
def test_a_suite_that_cannot_be_collected_is_never_safe(tmp_path):
    """Every module needs a package named in addopts that is not installed: both sides collect
    nothing, so the upgrade cannot be judged: exit 2, the cause (and how to provide it) first."""
    needs = "import missingdep_xyz\n\ndef test_a():\n    pass\n"
    project = _user_project(tmp_path / "proj", "-W ignore:::missingdep_xyz", test_one=needs, test_two=needs)
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "--extra", "dev", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    verdict = next(ln for ln in out.splitlines() if "cannot judge" in ln)
    assert out.index("cannot judge") < out.index("Your tests")
    assert ("your tests did not run in the baseline nor in the candidate: ModuleNotFoundError: No module named "
            "'missingdep_xyz', needed by `addopts` in pyproject.toml; add it with --with missingdep_xyz") in verdict
    run = data["user_tests_run"]
    assert run["judged"] is False and run["sides"]["baseline"]["ran"] == 0 and run["sides"]["candidate"]["ran"] == 0
    assert sorted(run["sides"]["candidate"]["uncollectable"]) == ["tests/test_one.py", "tests/test_two.py"]
    assert run["test_dependencies"] == ["extra `dev`"]
    tb = {t["test"]: t for t in data["user_tests"]}["tests/test_one.py"]["traceback"]
    assert "import missingdep_xyz" in tb and "ModuleNotFoundError" in tb  # the collection error keeps its traceback
    assert "importlib" not in tb and "Our cases in the candidate" in out
    # without a baseline: the candidate ran nothing, so nothing can be said either
    proc, data = _check(tmp_path, project, "jax==0.4.33")
    assert proc.returncode == 2 and "your tests did not run in the candidate: ModuleNotFoundError" in proc.stdout


ONE_BROKEN = '''import os

def test_same():
    pass

def test_upgrade_breaks_me():
    # the candidate's run fails, the baseline's passes (every side is this interpreter in the fake)
    assert "CANDIDATE" not in os.environ["JAXCOMPAT_RESULTS"], "broken by the upgrade"
'''


@pytest.mark.integration
def test_one_uncollectable_module_does_not_stop_the_others(tmp_path):
    """pytest alone stops the session at a collection error; here every other module runs and is
    classified, the bad module is reported with its error, and what the upgrade broke fails the check."""
    from jaxcompat.env.candidate import candidate_cell

    candidate = candidate_cell(["jax==0.4.33"], python="auto").id
    project = _user_project(tmp_path / "proj", "-x", test_bad="import missingdep_xyz\n",
                            test_good=ONE_BROKEN.replace("CANDIDATE", candidate),
                            test_more="def test_1():\n    pass\n\ndef test_2():\n    assert False, 'both sides'\n")
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    classes = {t["test"]: t["class"] for t in data["user_tests"]}
    assert classes == {"tests/test_bad.py": "fails-both", "tests/test_good.py::test_same": "pass",
                       "tests/test_good.py::test_upgrade_breaks_me": "broken",
                       "tests/test_more.py::test_1": "pass", "tests/test_more.py::test_2": "fails-both"}
    sides = data["user_tests_run"]["sides"]
    assert sides["candidate"]["ran"] == sides["baseline"]["ran"] == 4  # -x in addopts did not stop the run
    assert sides["candidate"]["uncollectable"] == ["tests/test_bad.py"]
    assert "ran 4 in the candidate, 4 in the baseline" in out
    assert "1 module(s) could not be collected in the candidate" in out
    assert "1 × AssertionError: broken by the upgrade" in out


@pytest.mark.integration
def test_xdist_in_addopts_runs_in_one_process_and_keeps_every_result(tmp_path):
    """`-n 2` in the project's addopts: the watched runner reads one event stream, so the tests
    run in one process, and a failing test is recorded failing (not the controller's 'passed')."""
    pytest.importorskip("xdist")
    project = _user_project(
        tmp_path / "proj",
        "-n 2",
        test_a="import os\n\ndef test_ok():\n    assert 'PYTEST_XDIST_WORKER' not in os.environ\n\n"
        "def test_no():\n    assert 0\n",
    )
    proc, data = _check(tmp_path, project, "jax==0.4.33")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert {t["test"]: t["candidate"] for t in data["user_tests"]} == {"tests/test_a.py::test_ok": "passed",
                                                                      "tests/test_a.py::test_no": "failed"}


@pytest.mark.integration
def test_a_test_that_kills_the_interpreter_is_reported_and_the_rest_still_run(tmp_path):
    """A segfault (as inside XLA after many compilations): that test is an error with the signal,
    pytest starts again from the next test, as pytest-xdist replaces a dead worker."""
    crash = "import os, signal\n\ndef test_1():\n    pass\n\ndef test_crash():\n    os.kill(os.getpid(), signal.SIGSEGV)\n\ndef test_3():\n    pass\n"
    project = _user_project(tmp_path / "proj", "", test_c=crash)
    proc, data = _check(tmp_path, project, "jax==0.4.33")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    by = {t["test"].split("::")[1]: t for t in data["user_tests"]}
    assert by["test_1"]["candidate"] == by["test_3"]["candidate"] == "passed"
    assert by["test_crash"]["candidate"] == "error" and "SIGSEGV" in by["test_crash"]["message"]
    assert data["user_tests_run"]["sides"]["candidate"]["ran"] == 3


@pytest.mark.integration
def test_a_test_stopped_at_the_limit_on_both_sides_is_said_not_judged(tmp_path):
    """diffrax's test_against met the 300 s case limit on both sides of a replay: 'fails-both, not
    the upgrade's doing' said of a test no side saw end. --test-timeout sets the limit; a test
    stopped at it on both sides is named as not judged."""
    slow = "import time\n\ndef test_fast():\n    pass\n\ndef test_slow():\n    time.sleep(60)\n"
    project = _user_project(tmp_path / "proj", "", test_s=slow)
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "--test-timeout", "3", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "1 test(s) stopped at the time limit (3 s) on both sides: not judged" in out, out
    by = {t["test"].split("::")[1]: t for t in data["user_tests"]}
    assert by["test_slow"]["candidate"] == by["test_slow"]["baseline"] == "timeout"
    assert "killed after 3 s" in by["test_slow"]["message"]


def test_two_ids_that_would_be_one_once_scrubbed_keep_their_own():
    """Red team 7 (R2): a test parametrized over a path and the same path spelled another way became one
    id once scrubbed; the failing one was lost and the suite read safe (plain pytest: 1 failed)."""
    from jaxcompat.report.scrub import PROJECT, Scrubber
    from jaxcompat.run.userrun import _ids

    scrub = Scrubber({"/home/u/proj": PROJECT})
    got = _ids(["t.py::test_p[/home/u/proj/data]", f"t.py::test_p[{PROJECT}/data]", "t.py::test_q[/home/u/proj/x]"],
               scrub)
    assert got == {"t.py::test_p[/home/u/proj/data]": "t.py::test_p[/home/u/proj/data]",
                   f"t.py::test_p[{PROJECT}/data]": f"t.py::test_p[{PROJECT}/data]",
                   "t.py::test_q[/home/u/proj/x]": f"t.py::test_q[{PROJECT}/x]"}


SKIPS_IN_CANDIDATE = '''import os

import pytest

if "CANDIDATE" in os.environ["JAXCOMPAT_RESULTS"]:  # the candidate's run (every side is this interpreter)
    REASON


def test_a():
    pass


def test_b():
    pass
'''


@pytest.mark.integration
@pytest.mark.parametrize("skip, code, cls, message", [
    ('pytest.skip("needs jax<0.5", allow_module_level=True)', 0, "skipped", "Skipped: needs jax<0.5"),
    ('pytest.importorskip("missingdep_xyz")', 1, "broken", "Skipped: could not import 'missingdep_xyz'"),
])
def test_a_module_that_skips_itself_at_import_in_the_candidate_gives_its_tests_its_skip(tmp_path, skip, code, cls,
                                                                                        message):
    """Red team 8 (R1): a module skipped whole at import in the candidate (pytest: "1 skipped", none of its
    tests collected) read as two tests broken (absent). Its tests take the module's skip; a skip for an
    import that fails (importorskip) is a lost dependency: broken, as a test's own importorskip is."""
    from jaxcompat.env.candidate import candidate_cell

    candidate = candidate_cell(["jax==0.4.33"], python="auto").id
    project = _user_project(tmp_path / "proj", "", test_mod=SKIPS_IN_CANDIDATE.replace("CANDIDATE", candidate)
                            .replace("REASON", skip), test_other="def test_c():\n    pass\n")
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    assert proc.returncode == code, out
    by = {t["test"]: t for t in data["user_tests"]}
    assert sorted(by) == ["tests/test_mod.py::test_a", "tests/test_mod.py::test_b", "tests/test_other.py::test_c"]
    for name in ("tests/test_mod.py::test_a", "tests/test_mod.py::test_b"):
        assert (by[name]["class"], by[name]["baseline"], by[name]["candidate"]) == (cls, "passed", "skipped"), out
        assert by[name]["message"].startswith(message), by[name]
    assert by["tests/test_other.py::test_c"]["class"] == "pass"
    assert data["user_tests_run"]["sides"]["candidate"]["uncollectable"] == []


RENAMED_IDS = '''import os

import pytest

CANDIDATE = "CELL" in os.environ["JAXCOMPAT_RESULTS"]  # the candidate's run (every side is this interpreter)
DEVICES = ["TFRT_CPU_0", "TFRT_CPU_1", "TFRT_CPU_2"] if CANDIDATE else ["cpu:0", "cpu:1", "cpu:2"]


@pytest.mark.parametrize("device", DEVICES)
def test_x(device):
    assert not (CANDIDATE and BREAKS), "broken by the upgrade"
'''


@pytest.mark.integration
@pytest.mark.parametrize("breaks, code, classes", [
    ('device == "TFRT_CPU_1"', 1, ["pass", "broken", "pass"]),
    ("False", 0, ["pass", "pass", "pass"]),
])
def test_parametrized_ids_that_changed_wholesale_are_judged_as_the_same_tests(tmp_path, breaks, code, classes):
    """Red team 8 (F11): ids built from ``str(device)`` changed with jaxlib (``cpu:0`` -> ``TFRT_CPU_0``): the
    baseline's ids read broken (absent), the candidate's new. The same function with as many ids, none in
    common, all passing before: matched in the order pytest collected them, each judged as one test."""
    from jaxcompat.env.candidate import candidate_cell

    candidate = candidate_cell(["jax==0.4.33"], python="auto").id
    project = _user_project(tmp_path / "proj", "", test_dev=RENAMED_IDS.replace("CELL", candidate)
                            .replace("BREAKS", breaks))
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    assert proc.returncode == code, out
    got = [(t["test"], t["baseline"], t["class"], t["note"]) for t in data["user_tests"]]
    assert got == [(f"tests/test_dev.py::test_x[TFRT_CPU_{k}]", "passed", cls,
                    f"id changed: tests/test_dev.py::test_x[cpu:{k}] -> tests/test_dev.py::test_x[TFRT_CPU_{k}]")
                   for k, cls in enumerate(classes)], out
    assert [t["was"] for t in data["user_tests"]] == [f"tests/test_dev.py::test_x[cpu:{k}]" for k in range(3)]
    assert ("! 3 test id(s) changed between the sides (all the ids of a parametrized test): each judged as the same "
            "test, paired in the order they ran: tests/test_dev.py::test_x[cpu:0] -> "
            "tests/test_dev.py::test_x[TFRT_CPU_0], ") in out
    if code:  # --rerun-failures: the function runs whole on each side, its ids paired again
        proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "--rerun-failures",
                            str(tmp_path / "reports" / "check.json"), "jax==0.4.33")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert [(t["test"], t["class"], t["was"]) for t in data["user_tests"]] == [
            (f"tests/test_dev.py::test_x[TFRT_CPU_{k}]", cls, f"tests/test_dev.py::test_x[cpu:{k}]")
            for k, cls in enumerate(classes)]


def _side(tmp_path: Path, proj: Path, side: str, nodeids: list[str] | None = None) -> Observed:
    """The project's tests run as ``observe`` runs them (the real runner and plugin, this interpreter),
    ``SIDE`` telling the project which side it is; the results keyed by their ids, in their order."""
    from jaxcompat.run.runner import run_cases

    run = run_cases(sys.executable, proj, nodeids or [], backend="cpu", imports=[], timeout_s=60,
                    workdir=tmp_path / f"{side}-{len(list(tmp_path.glob(side + '-*')))}", project=True,
                    extra_env={"SIDE": side})
    return Observed(results={r.case: r for r in run.results}, versions={"pytest": "8.0.0"})


def _project(root: Path, **modules: str) -> Path:
    for name, text in modules.items():
        (root / "tests" / f"{name}.py").parent.mkdir(parents=True, exist_ok=True)
        (root / "tests" / f"{name}.py").write_text(text)
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    return root


ON_SIDE = ("import os\n\nimport pytest\n\nif os.environ['SIDE'] == 'WHERE':\n    SKIP\n\n\n"
           "def test_a():\n    pass\n\n\ndef test_b():\n    pass\n")


def test_a_module_skipped_whole_at_import_gives_its_tests_its_skip(tmp_path):
    """Red team 8 (R1): pytest reports a module that skips itself at import as one skipped collector, none of
    its tests collected; the plugin records it (a skip while collecting), and its tests that passed before take
    its skip (not "broken, absent"), or are broken where the skip is for an import that fails (importorskip),
    as a test's own importorskip is. The module's own record is not counted beside its tests; it is no
    module that could not be collected, and no test that ran."""
    (tmp_path / "m").mkdir()
    matrix = load(make_tree(tmp_path / "m", RULE))
    proj = _project(tmp_path / "proj",
                    test_mod=ON_SIDE.replace("WHERE", "candidate").replace(
                        "SKIP", "pytest.skip('needs jax<0.5', allow_module_level=True)"),
                    test_imp=ON_SIDE.replace("WHERE", "candidate").replace("SKIP", "pytest.importorskip('nodep_xyz')"),
                    test_old=ON_SIDE.replace("WHERE", "baseline").replace(
                        "SKIP", "pytest.skip('needs jax>=0.5', allow_module_level=True)"),
                    test_other="def test_c():\n    pass\n")
    after, before = _side(tmp_path, proj, "candidate"), _side(tmp_path, proj, "baseline")
    assert after.results["tests/test_mod.py"].phase == "collect" and after.results["tests/test_mod.py"].status == "skipped"
    assert after.results["tests/test_mod.py"].message == "Skipped: needs jax<0.5"
    assert after.uncollectable == [] and after.ran == 3 and before.ran == 5
    got = {t.test: (t.baseline, t.candidate, t.cls, t.message) for t in usertests.classify(after, before, matrix, "cpu")}
    imp = "Skipped: could not import 'nodep_xyz': No module named 'nodep_xyz'"
    assert got == {
        "tests/test_mod.py::test_a": ("passed", "skipped", "skipped", "Skipped: needs jax<0.5"),
        "tests/test_mod.py::test_b": ("passed", "skipped", "skipped", "Skipped: needs jax<0.5"),
        "tests/test_imp.py::test_a": ("passed", "skipped", "broken", imp),
        "tests/test_imp.py::test_b": ("passed", "skipped", "broken", imp),
        # the other way: skipped whole in the baseline, they did not run before
        "tests/test_old.py::test_a": ("absent", "passed", "pass", ""),
        "tests/test_old.py::test_b": ("absent", "passed", "pass", ""),
        "tests/test_other.py::test_c": ("passed", "passed", "pass", ""),
    }
    # without a baseline, or skipped on both sides: the module is one skipped record, as pytest counts it
    alone = {t.test: t.cls for t in usertests.classify(after, None, matrix, "cpu")}
    assert alone["tests/test_mod.py"] == alone["tests/test_imp.py"] == "skipped"
    both = {t.test: t.cls for t in usertests.classify(after, after, matrix, "cpu")}
    assert both["tests/test_mod.py"] == "skipped" and "tests/test_mod.py::test_a" not in both
    # a re-run of its tests meets the module's skip again: skipped there, not absent
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(usertests.userrun, "observe", lambda cell, m, s, target, nodeids: _side(tmp_path, proj, cell, nodeids))
        names = ["tests/test_imp.py::test_a", "tests/test_mod.py::test_a"]
        changed, settle = usertests.rerun(names, [("candidate", after, "candidate"), ("baseline", before, "baseline")],
                                          matrix, tmp_path, None, 1)
    assert changed == {} and settle == {n: {"candidate": "skipped", "baseline": "passed"} for n in names}
    tests = {t.test: t for t in usertests.classify(after, before, matrix, "cpu", settle=settle)}
    assert (tests[names[0]].cls, tests[names[0]].message, tests[names[0]].note) == ("broken", imp, "")


DEVICE_IDS = '''import os

import pytest

CANDIDATE = os.environ["SIDE"] == "candidate"


@pytest.mark.parametrize("device", ["TFRT_CPU_0", "TFRT_CPU_1", "TFRT_CPU_2"] if CANDIDATE else ["cpu:0", "cpu:1", "cpu:2"])
def test_x(device):
    assert device != "TFRT_CPU_1", "broken by the upgrade"


@pytest.mark.parametrize("device", ["TFRT_CPU_0", "TFRT_CPU_1"] if CANDIDATE else ["cpu:0", "cpu:1", "cpu:2"])
def test_fewer(device):
    pass


@pytest.mark.parametrize("device", ["TFRT_CPU_0", "both"] if CANDIDATE else ["cpu:0", "both"])
def test_common(device):
    pass


@pytest.mark.parametrize("device", ["TFRT_CPU_0", "TFRT_CPU_1"] if CANDIDATE else ["cpu:0", "cpu:1"])
def test_failed_before(device):
    assert CANDIDATE or device == "cpu:0"
'''


def test_parametrized_ids_that_changed_wholesale_are_one_test_each(tmp_path):
    """Red team 8 (F11): ids built from ``str(device)`` changed with jaxlib; the baseline's read broken (absent),
    the candidate's new. Where a function has as many ids on each side, none in common, and all passed before,
    they are paired in the order pytest ran them and judged as one test each (the candidate's id, the change in
    its note); anything less stays as it was: a test absent in the candidate is broken."""
    (tmp_path / "m").mkdir()
    matrix = load(make_tree(tmp_path / "m", RULE))
    proj = _project(tmp_path / "proj", test_dev=DEVICE_IDS)
    after, before = _side(tmp_path, proj, "candidate"), _side(tmp_path, proj, "baseline")
    got = {t.test.split("::")[1]: (t.baseline, t.candidate, t.cls, t.note)
           for t in usertests.classify(after, before, matrix, "cpu")}
    changed = "id changed: tests/test_dev.py::test_x[cpu:{0}] -> tests/test_dev.py::test_x[TFRT_CPU_{0}]"
    assert got == {
        "test_x[TFRT_CPU_0]": ("passed", "passed", "pass", changed.format(0)),
        "test_x[TFRT_CPU_1]": ("passed", "failed", "broken", changed.format(1)),
        "test_x[TFRT_CPU_2]": ("passed", "passed", "pass", changed.format(2)),
        # as many ids, but not all changed; fewer ids; not all passed before: as before
        "test_fewer[TFRT_CPU_0]": ("absent", "passed", "pass", ""),
        "test_fewer[TFRT_CPU_1]": ("absent", "passed", "pass", ""),
        "test_fewer[cpu:0]": ("passed", "absent", "broken", ""),
        "test_fewer[cpu:1]": ("passed", "absent", "broken", ""),
        "test_fewer[cpu:2]": ("passed", "absent", "broken", ""),
        "test_common[TFRT_CPU_0]": ("absent", "passed", "pass", ""),
        "test_common[both]": ("passed", "passed", "pass", ""),
        "test_common[cpu:0]": ("passed", "absent", "broken", ""),
        "test_failed_before[TFRT_CPU_0]": ("absent", "passed", "pass", ""),
        "test_failed_before[TFRT_CPU_1]": ("absent", "passed", "pass", ""),
        "test_failed_before[cpu:0]": ("passed", "absent", "broken", ""),
        "test_failed_before[cpu:1]": ("failed", "absent", "skipped", ""),
    }
    # re-run before blame: a paired id runs on the candidate's side, under its own id there
    asked = []

    def observe(cell, m, s, target, nodeids):
        asked.append((cell, nodeids))
        return _side(tmp_path, proj, cell, nodeids)

    broken = "tests/test_dev.py::test_x[TFRT_CPU_1]"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(usertests.userrun, "observe", observe)
        flipped, settle = usertests.rerun([broken], [("candidate", after, "candidate"), ("baseline", before, "baseline")],
                                          matrix, tmp_path, None, 1)
    # a paired id is re-run on the candidate's side only: the pairing is by run order, so the baseline id's
    # runs may be another test's (red team 9)
    assert asked == [("candidate", [broken])]
    assert flipped == {} and settle == {broken: {"candidate": "failed"}}
    (t,) = [t for t in usertests.classify(after, before, matrix, "cpu", settle=settle) if t.test == broken]
    assert (t.cls, t.note, t.was) == ("broken", changed.format(1), "tests/test_dev.py::test_x[cpu:1]")
    # the baseline's run twice saw its old id flip: not carried onto the paired test (red team 9), which
    # its own runs alone excuse
    (t,) = [t for t in usertests.classify(after, before, matrix, "cpu", {"tests/test_dev.py::test_x[cpu:1]": "x"})
            if t.test == broken]
    assert t.cls == "broken" and t.note == changed.format(1)
    (t,) = [t for t in usertests.classify(after, before, matrix, "cpu", {broken: "x"}) if t.test == broken]
    assert t.cls == "flaky" and t.note == changed.format(1) + "; x"
