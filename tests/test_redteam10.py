"""Red team 10's findings against 71d75aa (since e03709a), kept as failing tests through the public
interface (check --tests over fake cells: tests/fake_matrix.py, as tests/test_redteam9_usertests.py).

B1: a re-run reads a test whose module cannot be collected as its module's error (``_seen``). A test
re-run alone (its node id on pytest's command line) may not be collectable where the whole suite was:
its module imports what another module of the suite set up first (sys.path, sys.modules). In the
baseline it passed (first run), then "error" on its re-run: "passed, then error", flaky, exit 0;
plain pytest (whole suite) passes it before and fails it after, every run."""

from __future__ import annotations

import json

import pytest

from tests.test_redteam9_usertests import SKIPPED_HERE, _candidate
from tests.test_usertests import _check, _user_project

# collected first: puts the suite's helpers folder on sys.path (as a conftest-less suite often does)
FIRST = '''import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "helpers"))


def test_setup():
    pass
'''

# collected second: imports a helper that only the first module made importable
SECOND = '''import os

import suite_helper  # noqa: F401

CANDIDATE = "CELL" in os.environ["JAXCOMPAT_RESULTS"]


def test_math():
    assert not CANDIDATE, "the upgrade broke the math"  # deterministic: plain pytest fails it every run
'''


def test_a_real_break_is_not_flaky_because_its_module_cannot_be_collected_alone(tmp_path):
    cell = _candidate()
    project = _user_project(tmp_path / "proj", "", test_a=FIRST, test_b=SECOND.replace("CELL", cell))
    (project / "tests" / "helpers").mkdir()
    (project / "tests" / "helpers" / "suite_helper.py").write_text("X = 1\n")
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    by = {t["test"]: (t["baseline"], t["candidate"], t["class"], t["note"]) for t in data["user_tests"]}
    assert by["tests/test_b.py::test_math"][:2] == ("passed", "failed"), by
    # the truth (plain pytest over the whole suite, each side): passed before, fails after, every run
    assert (proc.returncode, by["tests/test_b.py::test_math"][2]) == (1, "broken"), (by, out)


# stands for ``import equinox`` failing in the candidate (as tests/test_redteam9_usertests.EQX)
EQX = '''import os

if "CANDIDATE" in os.environ["JAXCOMPAT_RESULTS"]:
    raise ImportError("cannot import name 'shaped_abstractify' from 'jax.api_util'")
'''

# the baseline lacks an optional module (importorskip skips the whole module); the candidate has it,
# and importing it raises what importorskip does not catch: a collection error
SKIPS_BEFORE = '''import os

import json

import pytest

if "CANDIDATE" in os.environ["JAXCOMPAT_RESULTS"]:
    raise AttributeError("module 'jax.experimental' has no attribute 'shard_alike'")
pytest.skip("needs jax.experimental.shard_alike", allow_module_level=True)


def test_a():
    pass
'''

# a module with no test of its own in the baseline (its tests are made only where a feature is there)
NO_TESTS_BEFORE = '''import fakeeqx  # noqa: F401
'''


def _plain_pytest_exit_2_after(tmp_path, **modules: str):
    cand = _candidate()
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n",
                            **{k: v.replace("CANDIDATE", cand) for k, v in modules.items()})
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    return proc, {t["test"]: t for t in data["user_tests"]}


def test_a_module_that_skipped_itself_before_and_cannot_be_collected_after_is_not_safe(tmp_path):
    """C1: plain pytest: exit 0 before (1 passed, 1 skipped), "Interrupted: 1 error during collection",
    exit 2, nothing run, after. It reads "fails" (skipped -> error), exit 0."""
    proc, by = _plain_pytest_exit_2_after(tmp_path, test_mod=SKIPS_BEFORE)
    out = proc.stdout + proc.stderr
    assert (by["tests/test_mod.py"]["baseline"], by["tests/test_mod.py"]["candidate"]) == ("skipped", "error"), by
    assert proc.returncode == 1, (by["tests/test_mod.py"]["class"], out)


def test_a_module_with_no_test_before_that_cannot_be_collected_after_is_not_safe(tmp_path):
    """C2: the module was imported in the baseline (no test collected from it); in the candidate it
    cannot be: plain pytest exit 0 before, exit 2 (collection interrupted, nothing run) after. It
    reads "fails" (absent -> error), exit 0."""
    proc, by = _plain_pytest_exit_2_after(tmp_path, test_mod=NO_TESTS_BEFORE, fakeeqx=EQX)
    out = proc.stdout + proc.stderr
    assert by["tests/test_mod.py"]["candidate"] == "error", by
    assert proc.returncode == 1, (by["tests/test_mod.py"]["class"], out)




def test_rerun_failures_of_a_module_no_longer_imported_confirms_the_break(tmp_path):
    """D1: red team 9's A4 (fixed here: the module's own record is broken, exit 1), then
    --rerun-failures of that report: only that module on each side; it should say the same
    (plain pytest on that module: exit 0, 2 skipped, before; exit 2, a collection error, after)."""
    cand = _candidate()
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n",
                            test_mod=SKIPPED_HERE, fakeeqx=EQX.replace("CANDIDATE", cand))
    first, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    classes = {t["test"]: t["class"] for t in data["user_tests"]}
    assert first.returncode == 1 and classes["tests/test_mod.py"] == "broken"
    report = tmp_path / "first.json"
    report.write_text((tmp_path / "reports" / "check.json").read_text())
    proc, again = _check(tmp_path, project, "--baseline", "jax==0.4.31", "--rerun-failures", str(report), "jax==0.4.33")
    out = proc.stdout + proc.stderr
    got = {t["test"]: t["class"] for t in again.get("user_tests", [])}
    assert (proc.returncode, got.get("tests/test_mod.py")) == (1, "broken"), (got, out)


# imports only where a counter allows: the first import in the candidate fails, the later ones do not
FLAKY_EQX = '''import os
from pathlib import Path

if "CANDIDATE" in os.environ["JAXCOMPAT_RESULTS"]:
    mark = Path(__file__).parent / "imported-once"
    if not mark.exists():
        mark.write_text("")
        raise ImportError("cannot import name 'shaped_abstractify' (a race on first import)")
'''


@pytest.mark.parametrize("tests_of_mod", ["skipped", "passing"])
def test_a_module_whose_import_flips_in_the_candidate_is_judged_alike_whatever_its_tests_did(tmp_path, tests_of_mod):
    """B2: the candidate's first import of the module fails, its re-run imports it. Red team 10 found it
    judged two ways (its test that passed before: flaky, exit 0; its tests skipped by a marker: its record
    broken, exit 1). Red team 11 (A1) showed the re-run's import is no evidence either way: a module run
    alone can import what the whole run could not (a sibling module poisoned sys.modules), and reading it
    as a flip made a real break flaky, exit 0. So the whole run decides, alike in both: broken, exit 1 (a
    flaky import is a false alarm kept, rather than a break read safe)."""
    cand = _candidate()
    mod = SKIPPED_HERE if tests_of_mod == "skipped" else "import fakeeqx  # noqa: F401\n\n\ndef test_a():\n    pass\n"
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n",
                            test_mod=mod, fakeeqx=FLAKY_EQX.replace("CANDIDATE", cand))
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    got = {t["test"]: (t["class"], t["note"]) for t in data["user_tests"]}
    assert (project / "tests" / "imported-once").exists()
    broken = "tests/test_mod.py" if tests_of_mod == "skipped" else "tests/test_mod.py::test_a"
    assert (proc.returncode, got[broken][0]) == (1, "broken"), (got, out)


# the other way: the baseline cannot import the module (its dependency broke there), the candidate can
EQX_BEFORE = '''import os

if "CANDIDATE" not in os.environ["JAXCOMPAT_RESULTS"]:
    raise ImportError("cannot import name 'tree_flatten_with_path' from 'jax.tree_util'")
'''

NEWLY_IMPORTED = '''import fakeeqx  # noqa: F401


def test_new():
    assert False, "fails where it can run at last"
'''


def test_a_test_whose_module_did_not_import_before_is_not_failing_before_after_its_re_run(tmp_path):
    """E1: the module cannot be imported in the baseline; in the candidate its test runs and fails.
    classify's own rule: it did not run before, "fails" (no passing run before to compare). It is re-run
    (a "fails"), and the baseline's re-run, which cannot collect it either, now reads its module's error
    (``_seen``): the test "failed before and after: not the upgrade's doing" (fails-both). Plain pytest
    on the baseline: a collection error, the test never ran."""
    cand = _candidate()
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n",
                            test_mod=NEWLY_IMPORTED, fakeeqx=EQX_BEFORE.replace("CANDIDATE", cand))
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "--reruns", "0", "jax==0.4.33")
    no_rerun = {t["test"]: t["class"] for t in data["user_tests"]}["tests/test_mod.py::test_new"]
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    got = {t["test"]: (t["baseline"], t["class"], t["note"]) for t in data["user_tests"]}
    assert no_rerun == "fails", no_rerun
    assert got["tests/test_mod.py::test_new"][1] == "fails", (got, out)


ONE = '''
    [[dependent]]
    name = "beta"
    version = "latest"
    depends_on = ["jax"]
'''


def test_the_crater_does_not_call_a_break_flaky_because_its_module_cannot_be_collected_alone(tmp_path):
    """B1 through the crater: the dependent's test passed before and fails after, every whole-suite run;
    its re-run alone cannot collect its module (another module puts its helpers on sys.path)."""
    from jaxcompat.env.candidate import candidate_cell
    from tests.test_crater import _crater, _tree

    cell = candidate_cell(["jax==0.4.33"], python="auto", companions=False).id
    tmp = _tree(tmp_path, ONE, beta=FIRST)  # tests/test_mod.py: collected before test_z.py
    tests = tmp / "src" / "beta" / "tests"
    (tests / "test_z.py").write_text(SECOND.replace("CELL", cell))
    (tests / "helpers").mkdir()
    (tests / "helpers" / "suite_helper.py").write_text("X = 1\n")
    proc = _crater(tmp, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    data = json.loads((tmp / "reports" / "crater" / "crater.json").read_text())
    [beta] = data["dependents"]
    got = {t["test"]: (t["baseline"], t["candidate"], t["class"]) for t in beta["tests"]}
    assert got["tests/test_z.py::test_math"][:2] == ("passed", "failed"), got
    assert (proc.returncode, beta["verdict"]) == (1, "broken"), (got, out)


KILLED_CRATER = '''
import subprocess, sys, time
from pathlib import Path
from types import SimpleNamespace
from jaxcompat.operations import crater

def judge(dep, plan, matrix, state_dir, progress, version):
    # stands for the installer (uv) building the dependent's environment: in the child's process group
    with open(sys.argv[2], "w") as f:
        f.write(str(subprocess.Popen(["sleep", "60"]).pid))
    time.sleep(3600)

crater.judge = judge
dep = SimpleNamespace(unit="hangy", budget_s=3600.0)
crater.isolated(dep, None, None, Path(sys.argv[1]))
'''


def test_a_crater_killed_hard_leaves_none_of_its_child_s_processes_running(tmp_path):
    """F1: the crater's own budget path stops the child, then kills what is left of its process group
    ("an installer still writing an environment, which the next run of that environment would collide
    with"). The child's stop when its crater dies (``die_with``) kills its test processes only, then
    exits: an installer it started runs on unwatched."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script, pid_file = tmp_path / "killed.py", tmp_path / "installer.pid"
    script.write_text(KILLED_CRATER)
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "state"), str(pid_file)],
                            env={**os.environ, "PYTHONPATH": os.getcwd()})
    for _ in range(300):
        if pid_file.is_file() and pid_file.read_text():
            break
        time.sleep(0.1)
    installer = int(pid_file.read_text())
    proc.kill()
    proc.wait()
    time.sleep(5)  # die_with looks every second
    child = subprocess.run(["pgrep", "-f", str(script)], capture_output=True, text=True).stdout.split()
    alive = subprocess.run(["ps", "-o", "stat=", "-p", str(installer)], capture_output=True, text=True).stdout.strip()
    for pid in [installer, *map(int, child)]:  # whatever of this test runs on
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not child, child  # the forked child itself stopped (this diff)
    assert alive in ("", "Z"), f"the installer ({installer}) runs on: {alive}"
