"""check --tests over modules that skip themselves or cannot be collected, through the real CLI over
fake cells (tests/fake_matrix.py; each side is this interpreter, the candidate's run told apart by
its cell id in $JAXCOMPAT_RESULTS, as tests/test_redteam9_usertests.py does). The property model of
the verdict (tests/verdict_model.py) found these; tests/test_verdict_model.py holds the same facts
through the scripted comparison and the crater."""

from __future__ import annotations

from tests.test_redteam9_usertests import EQX, _candidate
from tests.test_usertests import _check, _user_project

# imports a dependency (fakeeqx, whose import the upgrade breaks), then skips itself: it needs a GPU
SKIPS_ITSELF = '''import pytest

import fakeeqx  # noqa: F401

pytest.skip("needs a GPU", allow_module_level=True)


def test_a():
    pass
'''

# a module of the tests' helpers: collected, with no test of its own
NO_TEST = '''import fakeeqx  # noqa: F401


def close(a, b):
    return abs(a - b) < 1e-6
'''


def test_a_module_the_baseline_collected_without_a_test_that_cannot_be_collected_after_is_broken(tmp_path):
    """In the baseline one module skipped itself whole (after importing the dependency) and one was
    collected with no test; in the candidate neither can be imported. Plain pytest: exit 0, then
    collection errors. Both read `fails` (nothing passed before), exit 0: each is `broken` now, with
    its error (as e742ced made a module whose tests were skipped by markers)."""
    cand = _candidate()
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n", test_gpu=SKIPS_ITSELF,
                            test_helpers=NO_TEST, fakeeqx=EQX.replace("CANDIDATE", cand))
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    by = {t["test"]: (t["baseline"], t["candidate"], t["class"]) for t in data["user_tests"]}
    assert by["tests/test_gpu.py"] == ("skipped", "error", "broken"), by
    assert by["tests/test_helpers.py"] == ("passed", "error", "broken"), by
    assert by["tests/test_other.py::test_c"][2] == "pass"
    assert proc.returncode == 1 and "shaped_abstractify" in out, out
