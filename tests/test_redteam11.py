"""Red team 11's findings against 997599d (since 71d75aa), kept as failing tests through the public
interface (check --tests over fake cells: tests/fake_matrix.py, as tests/test_redteam10.py).

A1: the mirror of red team 10's B1. A module that cannot be collected in the candidate's whole run
because of what a sibling module collected before it did (sys.modules, sys.path, a monkeypatch by a
library the sibling imports) imports when one of its tests, or the module itself, is re-run alone.
The re-run then reads passed and the break reads "flaky", exit 0; plain pytest over the whole suite
(what the user runs) goes from passing to a collection error, every run. New in this diff for a
module's own record (``_seen``: "a module's own record re-run where it now imports reads passed");
for a test of a module whose tests passed before, ``_seen`` still reads the re-run alone (older:
it read flaky at 71d75aa too).

A2: a module the baseline never collected is taken for one it collected (``_no_longer_imported``
asks only that the baseline's status is "ok" and holds no collection error of it). A baseline whose
pytest stopped before collecting anything (an INTERNALERROR in a conftest's pytest_configure, exit 3;
the same for a crash at collection) keeps status "ok" with no record: every module the candidate
cannot import, even one that could not be imported on either side, reads `broken`, its baseline
"passed", exit 1, where nothing ran before to compare with (check --tests, and the crater: `broken`
for `not-run`). New in this diff (the old rule asked for a test of the module seen in the baseline;
the crater's ``verdict_of`` now puts a broken record before "none ran in the baseline")."""

from __future__ import annotations

from tests.test_redteam9_usertests import _candidate
from tests.test_usertests import _check, _user_project

# collected first: in the candidate only, what it sets up makes the sibling's import fail (as a new
# version of a library imported here could: here, a helper module hidden from later imports)
FIRST = '''import os
import sys

if "CELL" in os.environ["JAXCOMPAT_RESULTS"]:
    sys.modules["suite_helper"] = None  # a later ``import suite_helper`` raises ImportError


def test_setup():
    pass
'''

# collected second: imports a helper next to it; tests skipped by a marker (a "lost" module) or passing
SECOND_SKIPPED = '''import pytest

import suite_helper  # noqa: F401


@pytest.mark.skip(reason="needs a GPU")
def test_math():
    pass
'''

SECOND_PASSING = '''import suite_helper  # noqa: F401


def test_math():
    pass
'''


def _run(tmp_path, second: str):
    cell = _candidate()
    project = _user_project(tmp_path / "proj", "", test_a=FIRST.replace("CELL", cell), test_b=second)
    (project / "tests" / "suite_helper.py").write_text("X = 1\n")
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    return proc, {t["test"]: (t["baseline"], t["candidate"], t["class"], t["note"]) for t in data["user_tests"]}


def test_a_lost_module_that_imports_alone_is_not_flaky(tmp_path):
    """A1 (module record, new): plain pytest: exit 0 before (1 passed, 1 skipped); after, "ERROR
    collecting tests/test_b.py ... ImportError", exit 2, every run. It reads the module's record
    "flaky" (re-run alone, it imports), exit 0."""
    proc, by = _run(tmp_path, SECOND_SKIPPED)
    out = proc.stdout + proc.stderr
    assert by["tests/test_b.py"][1] == "error", by
    assert (proc.returncode, by["tests/test_b.py"][2]) == (1, "broken"), (by, out)


def test_a_test_whose_module_imports_alone_is_not_flaky(tmp_path):
    """A1 (a test that passed before, older): plain pytest: test_b.py::test_math passed before; after,
    a collection error, exit 2, every run. Its re-run alone passes: "flaky", exit 0."""
    proc, by = _run(tmp_path, SECOND_PASSING)
    out = proc.stdout + proc.stderr
    assert by["tests/test_b.py::test_math"][:2] == ("passed", "error"), by
    assert (proc.returncode, by["tests/test_b.py::test_math"][2]) == (1, "broken"), (by, out)


# the project's conftest: in the baseline only, pytest stops in its configuration (an option of jax
# the old version lacks), before anything is collected: "INTERNALERROR", exit 3, no test record
CONFIGURE = '''import os


def pytest_configure(config):
    if "CELL" not in os.environ["JAXCOMPAT_RESULTS"]:
        raise RuntimeError("Unrecognized config option: jax_new_flag")
'''

# a module that cannot be imported on either side (a dependency installed on neither)
NEVER_IMPORTS = '''import missingdep_xyz  # noqa: F401


def test_it():
    pass
'''


def test_a_module_the_baseline_never_collected_is_not_lost(tmp_path):
    """A2 (new: ``_no_longer_imported`` no longer asks that the baseline collected the module). The
    baseline's pytest stopped before collecting anything (exit 3, its status still "ok", no record);
    the candidate cannot import a module that needs a package installed on neither side. Plain
    pytest: exit 3 before (nothing collected), exit 2 after (the same ModuleNotFoundError it would
    have met before): nothing that passed broke, and nothing ran before to compare with: "cannot
    judge", exit 2. It reads the module "broken", its baseline "passed", exit 1."""
    cell = _candidate()
    project = _user_project(tmp_path / "proj", "", test_mod=NEVER_IMPORTS,
                            test_other="def test_c():\n    pass\n")
    (project / "conftest.py").write_text(CONFIGURE.replace("CELL", cell))
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    by = {t["test"]: (t["baseline"], t["candidate"], t["class"]) for t in data["user_tests"]}
    assert by.get("tests/test_mod.py", (None, "error"))[1] == "error", (by, out)
    assert data["user_tests_run"]["sides"]["baseline"]["ran"] == 0, out
    assert by.get("tests/test_mod.py", ("absent",))[0] != "passed", (by, out)  # it was never collected there
    assert proc.returncode == 2, (by, out)


def test_a_dependent_whose_baseline_never_collected_is_not_broken(tmp_path):
    """A2 in the crater (new: ``verdict_of`` now puts a broken record before "none ran in the
    baseline"): the same dependent, its baseline's pytest stopped in its configuration (exit 3,
    nothing collected), a module importing a package installed on neither side. Plain pytest: exit 3
    before, exit 2 after: nothing to compare with, `not-run`. It reads `broken`, exit 1."""
    import json

    from jaxcompat.env.candidate import candidate_cell
    from tests.test_crater import _crater, _tree

    deps = '''
    [[dependent]]
    name = "beta"
    version = "latest"
    depends_on = ["jax"]
    '''
    tmp = _tree(tmp_path, deps, beta=NEVER_IMPORTS)
    cand = candidate_cell(["jax==0.4.33"], python="auto", companions=False).id
    (tmp / "src" / "beta" / "conftest.py").write_text(CONFIGURE.replace("CELL", cand))
    (tmp / "src" / "beta" / "tests" / "test_other.py").write_text("def test_c():\n    pass\n")
    proc = _crater(tmp, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    data = json.loads((tmp / "reports" / "crater" / "crater.json").read_text())
    [beta] = data["dependents"]
    assert beta["ran"].get("baseline", 0) == 0, (beta, out)
    assert (proc.returncode != 1, beta["verdict"]) == (True, "not-run"), (beta["verdict"], beta.get("tests"), out)


def test_a_folder_whose_modules_could_not_be_collected_before_is_not_lost(tmp_path):
    """A3 (new: ``_no_longer_imported`` asks only for no collection error of the folder itself, or
    above it, in the baseline). tests/sub's only module cannot be imported on either side (a package
    installed on neither); in the candidate tests/sub's conftest fails first. Plain pytest: a
    collection error before (tests/sub/test_x.py), a collection error after (tests/sub): the folder
    was never collected without error, no test of it ever ran; nothing broke. It reads tests/sub
    `broken`, its baseline "passed", exit 1."""
    cell = _candidate()
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n")
    sub = project / "tests" / "sub"
    sub.mkdir()
    (sub / "conftest.py").write_text(
        'import os\n\nif "CELL" in os.environ["JAXCOMPAT_RESULTS"]:\n'
        '    raise ImportError("cannot import name \'foo\' from \'jax\'")\n'.replace("CELL", cell))
    (sub / "test_x.py").write_text(NEVER_IMPORTS)
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    by = {t["test"]: (t["baseline"], t["candidate"], t["class"]) for t in data["user_tests"]}
    assert proc.returncode != 1, (by, out)
