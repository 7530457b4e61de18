"""Red team 9's wrong "safe"s, kept as tests (check --tests, the real CLI over fake cells:
tests/fake_matrix.py; each side is this interpreter, the candidate's run told apart by its cell id in
$JAXCOMPAT_RESULTS, as tests/test_usertests.py does).

A1: a module that skips itself for a lost dependency (``except ImportError as e: pytest.skip(f"... {e}")``)
read skipped, exit 0; its skip's reason carries the import error: broken (model/usertests.import_skip).
A2: the same with importorskip given a reason of its own, or a skip raised in ``except ImportError``
whose reason names no import error: the plugin notes the import error the skip was raised for
(plugin/pytest_plugin._import_failure): broken. A minimum-version skip stays skipped.
A4: a module imported in the baseline (its tests skipped by markers) that cannot be collected in the
candidate read "fails", exit 0; plain pytest goes from exit 0 to a collection error: broken.
A3: ids that changed wholesale are paired by run order; another test's known or re-run flakiness on
the baseline side was carried onto a real break through the pairing: flaky, exit 0."""

from __future__ import annotations

import json

import pytest

from tests.test_usertests import _check, _user_project

# stands for ``import equinox`` failing in the candidate: the upgrade broke a dependency's import
EQX = '''import os

if "CANDIDATE" in os.environ["JAXCOMPAT_RESULTS"]:
    raise ImportError("cannot import name 'shaped_abstractify' from 'jax.api_util'")
'''

# the same, as a module that is no longer there (importorskip catches ModuleNotFoundError alone since pytest 9.1)
MNF = EQX.replace("ImportError(\"cannot import name 'shaped_abstractify' from 'jax.api_util'\")",
                  "ModuleNotFoundError(\"No module named 'jax.experimental.host_callback'\")")

BODY = '''

def test_a():
    pass


def test_b():
    pass
'''

IDIOM = '''import pytest

try:
    import fakeeqx  # noqa: F401
except ImportError as e:
    pytest.skip(f"equinox not available: {e}", allow_module_level=True)
''' + BODY



def _candidate() -> str:
    from jaxcompat.env.candidate import candidate_cell

    return candidate_cell(["jax==0.4.33"], python="auto").id


@pytest.mark.parametrize("modules", [
    # the common idiom: a module skips itself when a dependency does not import; in the candidate
    # it does not (the upgrade broke it): before this change, its tests read broken (absent)
    {"test_mod": IDIOM, "fakeeqx": EQX},
    # importorskip with its own reason: a lost module all the same, but the message lacks "could not import '"
    {"test_mod": 'import pytest\n\npytest.importorskip("fakeeqx", reason="needs equinox")\n' + BODY, "fakeeqx": MNF},
    # the same inside each test
    {"test_mod": BODY.replace("    pass", '    pytest.importorskip("fakeeqx", reason="needs equinox")')
     .replace("\n\ndef", "import pytest\n\n\ndef", 1), "fakeeqx": MNF},
    # a skip of its own words, raised while the import error is handled
    {"test_mod": IDIOM.replace('f"equinox not available: {e}"', '"equinox not available"'), "fakeeqx": EQX},
], ids=["try-import-skip", "importorskip-reason", "importorskip-reason-in-test", "except-import-own-words"])
def test_a_module_that_skips_itself_for_a_lost_dependency_is_not_safe(tmp_path, modules):
    cand = _candidate()
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n",
                            **{k: v.replace("CANDIDATE", cand) for k, v in modules.items()})
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    by = {t["test"]: (t["baseline"], t["candidate"], t["class"]) for t in data["user_tests"]}
    assert by["tests/test_mod.py::test_a"][:2] == ("passed", "skipped"), by
    # the truth by the tool's own rule (model/usertests.import_skip): a test that passed and skips
    # itself out of the candidate for an import that fails lost a module it needs: broken, exit 1
    assert (proc.returncode, by["tests/test_mod.py::test_a"][2]) == (1, "broken"), out


def test_a_minimum_version_skip_stays_the_project_s_choice(tmp_path):
    """The control: ``importorskip(..., minversion=...)`` that the candidate's version does not meet is
    a skip on a version (as ``skipif``), no lost module: skipped, exit 0."""
    cand = _candidate()
    fake = 'import os\n\n__version__ = "1.0" if "CANDIDATE" in os.environ["JAXCOMPAT_RESULTS"] else "3.0"\n'
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n",
                            test_mod='import pytest\n\npytest.importorskip("fakeeqx", minversion="2.0")\n' + BODY,
                            fakeeqx=fake.replace("CANDIDATE", cand))
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    by = {t["test"]: (t["baseline"], t["candidate"], t["class"]) for t in data["user_tests"]}
    assert by["tests/test_mod.py::test_a"] == ("passed", "skipped", "skipped"), by
    assert proc.returncode == 0, proc.stdout + proc.stderr


SORTED_IDS = '''import os

import json

import pytest

CANDIDATE = "CELL" in os.environ["JAXCOMPAT_RESULTS"]  # the candidate's run (every side is this interpreter)
# the ids are the kinds' names as the library spells them, sorted; the spelling changed with the upgrade
NAMES = {"timing": "Y_TIMING", "math": "X_MATH"} if CANDIDATE else {"timing": "a:timing", "math": "b:math"}


@pytest.mark.parametrize("kind", sorted(NAMES.values()))
def test_kind(kind):
    if "math" in kind.lower():
        assert not CANDIDATE, "the upgrade broke the math"  # deterministic: plain pytest fails it every time
'''


def test_a_real_break_is_not_taken_for_another_test_s_known_flakiness(tmp_path):
    from jaxcompat.env.candidate import candidate_cell

    cell = candidate_cell(["jax==0.4.33"], python="auto").id
    project = _user_project(tmp_path / "proj", "", test_k=SORTED_IDS.replace("CELL", cell))
    flaky = tmp_path / "flaky.json"  # the timing test (asserts speed) is known to flip by itself
    flaky.write_text(json.dumps({"kind": "jax-compat flaky tests", "projects": {"proj": {
        "tests/test_k.py::test_kind[a:timing]": {"seen": "passed, then failed", "learned": "2026-11-01",
                                                 "times": 3}}}}))
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "--flaky-file", str(flaky), "jax==0.4.33")
    out = proc.stdout + proc.stderr
    got = {t["test"]: (t.get("was"), t["class"]) for t in data["user_tests"]}
    # the truth: test_kind[X_MATH] is the math test (b:math before, passed), failing every run: broken
    assert (proc.returncode, got["tests/test_k.py::test_kind[X_MATH]"][1]) == (1, "broken"), (got, out)


FLIPS_ON_RERUN = '''import os
from pathlib import Path

import json

import pytest

CANDIDATE = "CELL" in os.environ["JAXCOMPAT_RESULTS"]
NAMES = {"timing": "Y_TIMING", "math": "X_MATH"} if CANDIDATE else {"timing": "a:timing", "math": "b:math"}
RUNS = Path(__file__).parent / "timing-runs"  # the timing test is slow the second time it runs (load)


@pytest.mark.parametrize("kind", sorted(NAMES.values()))
def test_kind(kind):
    if "math" in kind.lower():
        assert not CANDIDATE, "the upgrade broke the math"
    elif not CANDIDATE:
        with RUNS.open("a") as f:
            f.write("x")
        assert len(RUNS.read_text()) < 2, "too slow"
'''


def test_a_real_break_is_not_taken_for_the_flip_of_another_test_on_its_re_run(tmp_path):
    """No flaky file: the re-run before blame runs the paired baseline id (the timing test), which flips
    there; the math test's deterministic break in the candidate reads flaky."""
    from jaxcompat.env.candidate import candidate_cell

    cell = candidate_cell(["jax==0.4.33"], python="auto").id
    project = _user_project(tmp_path / "proj", "", test_k=FLIPS_ON_RERUN.replace("CELL", cell))
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    got = {t["test"]: (t.get("was"), t["class"], t["note"]) for t in data["user_tests"]}
    assert (proc.returncode, got["tests/test_k.py::test_kind[X_MATH]"][1]) == (1, "broken"), (got, out)


SKIPPED_HERE = '''import pytest

import fakeeqx  # noqa: F401


@pytest.mark.skip(reason="needs a GPU")
def test_a():
    pass


@pytest.mark.skipif(True, reason="slow")
def test_b():
    pass
'''


def test_a_module_imported_before_that_cannot_be_collected_after_is_broken_though_its_tests_skipped(tmp_path):
    """A4: every test of the module skipped by a marker in the baseline (so it was imported there);
    in the candidate the module cannot even be imported. Plain pytest: exit 0 before, a collection
    error (exit 2) after. It read "fails" (no passing run before), exit 0; the module's own record is
    now the break, with its error."""
    cand = _candidate()
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n",
                            test_mod=SKIPPED_HERE, fakeeqx=EQX.replace("CANDIDATE", cand))
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    by = {t["test"]: t for t in data["user_tests"]}
    assert by["tests/test_mod.py"]["class"] == "broken", by
    assert by["tests/test_mod.py"]["baseline"] == "passed" and by["tests/test_mod.py"]["candidate"] == "error"
    assert "shaped_abstractify" in by["tests/test_mod.py"]["message"]
    assert by["tests/test_other.py::test_c"]["class"] == "pass"
    # its tests, skipped before, fail after (their module's error) on every run: their re-runs read it
    # as the first run does (they read "skipped" after a re-run, which could not collect them either)
    assert {by[f"tests/test_mod.py::test_{x}"]["class"] for x in "ab"} == {"fails"}, by
    assert proc.returncode == 1, out
