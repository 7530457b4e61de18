"""check --tests on a project whose own warning filter turns jax's deprecations into errors
(`filterwarnings = ["error"]`, `-W error`): a test that was not collected is explained as what it
is, with what to pin or change, and its traceback is kept (issue 33, part 5). No jax: the outputs
in tests/data/warning-as-error/ were recorded from a real run (equinox 0.13.0 under jax 0.7.1,
pytest 9.2, a small project whose conftest imports equinox; machine paths replaced)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jaxcompat._util.text import frames
from jaxcompat.apihistory.apitimeline import Timeline
from jaxcompat.env.testdeps import warning_filter
from jaxcompat.knowledge.config import load
from jaxcompat.model.outcomes import RawResult
from jaxcompat.model.target import Target
from jaxcompat.model.usertests import Comparison, Observed
from jaxcompat.model.vocab import Phase
from jaxcompat.operations import usertests
from jaxcompat.report import usertests as user_report
from jaxcompat.run import userrun
from tests.helpers import MINIMAL, make_tree

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "warning-as-error"
DRIVER = REPO / "tests" / "fake_matrix.py"
TESTS = ["tests/test_model.py::test_call_shape", "tests/test_model.py::test_grad_is_finite",
         "tests/test_model.py::test_jit_matches_eager"]
NAME = "jax.interpreters.batching.NotMapped"


def _history() -> tuple[str, str]:
    st = Timeline.load().name("jax.interpreters.batching", "NotMapped", Timeline.load().newest)
    return st.deprecated_in, st.removed_in


def _passed() -> Observed:
    return Observed(results={t: RawResult(case=t, status="passed") for t in TESTS},
                              versions={"jax": "0.7.0", "equinox": "0.13.0"})


def test_a_conftest_pytest_could_not_import_is_recorded_with_its_traceback():
    """pytest stops in its configuration (exit 4) before the plugin sees anything: its output is
    the only record, and it becomes the collection error of the folder the conftest configures."""
    raw = userrun.conftest_failure((DATA / "conftest-notmapped.log").read_text())
    assert raw is not None and raw.case == "tests" and raw.phase is Phase.COLLECT and raw.status == "failed"
    assert raw.message == f"DeprecationWarning: {NAME} is deprecated."
    assert raw.error_types[:2] == ["DeprecationWarning", "Warning"]
    assert "tests/conftest.py:4: in <module>" in raw.traceback and "equinox/internal/_noinline.py:185" in raw.traceback
    assert userrun.conftest_failure("1 passed in 0.1s\n") is None
    root = userrun.conftest_failure("ImportError while loading conftest 'conftest.py'.\nconftest.py:1: in <module>\n"
                                      "    import nope\nE   ModuleNotFoundError: No module named 'nope'\n")
    assert root.case == "." and root.error_types[0] == "ModuleNotFoundError"


def test_pytest_frames_are_read_by_the_one_frame_parser():
    fs = frames((DATA / "conftest-notmapped.log").read_text())
    assert fs[0].path == "tests/conftest.py" and fs[0].line == 4
    assert [f.package for f in fs if f.package][-2:] == ["equinox", "jax"]
    assert fs[-2].in_package == "equinox/internal/_noinline.py" and fs[-2].line == 185


def test_every_test_under_a_conftest_that_failed_is_broken_and_explained(tmp_path):
    deprecated_in, removed_in = _history()
    assert deprecated_in == "0.7.1"  # what the committed timeline says: the jax the break is seen on
    matrix = load(REPO / "matrix.toml")
    raw = userrun.conftest_failure((DATA / "conftest-notmapped.log").read_text())
    after = Observed(results={raw.case: raw}, versions={"jax": "0.7.1", "equinox": "0.13.0"},
                               warning_filter='filterwarnings "error" in pyproject.toml')
    tests = usertests.classify(after, _passed(), matrix, "cpu")
    assert [(t.test, t.cls, t.candidate, t.phase) for t in tests] == [(n, "broken", "error", Phase.COLLECT)
                                                                      for n in TESTS]
    t = tests[0]
    assert t.explained_by is None and t.traceback == raw.traceback
    assert t.explained_by_api == (
        f"not collected: equinox 0.13.0 uses {NAME} (equinox/internal/_noinline.py:185), deprecated in jax "
        f"{deprecated_in}, removed in {removed_in}; the project's own warning filter "
        f'(filterwarnings "error" in pyproject.toml) makes that DeprecationWarning an error')
    rule = next(f for f in matrix.failures if f.match.search(raw.message) and any("equinox" in c for c in f.affects))
    assert t.fix.startswith(f"{rule.fix} (known failure {rule.id}")
    assert '"ignore::DeprecationWarning:equinox"' in t.fix and f"pin jax<{deprecated_in}" in t.fix
    cmp = Comparison(tests, with_baseline=True, ran={"candidate": 0, "baseline": 3},
                               uncollectable={"candidate": ["tests"], "baseline": []})
    text = user_report.verdict(cmp, Target(root=tmp_path, project=True).describe())
    assert f"3 × [collect] DeprecationWarning: {NAME} is deprecated." in text
    assert "jax's API history: not collected: equinox 0.13.0 uses" in text and "what to pin or change: " in text
    assert "(no message)" not in text and "no traceback was recorded" not in text
    # the JUnit file and the HTML page say the same
    assert "broken: not collected: equinox 0.13.0 uses" in user_report.junit(tests, "tinyproj")
    assert "not collected: equinox 0.13.0 uses" in user_report.html_section(tests, True)


def test_a_test_module_whose_import_warns_is_explained_the_same_way():
    """The plugin records a module's collection error itself (here pytest got to collecting)."""
    (event,) = [json.loads(line) for line in (DATA / "module-notmapped.jsonl").read_text().splitlines()]
    raw = RawResult.from_dict(event)
    after = Observed(results={raw.case: raw}, versions={"jax": "0.7.1", "equinox": "0.13.0"},
                               warning_filter="")
    (t, *_) = usertests.classify(after, _passed(), load(REPO / "matrix.toml"), "cpu")
    assert t.cls == "broken" and t.explained_by_api.startswith(f"not collected: equinox 0.13.0 uses {NAME}")
    assert "a warning filter of the project makes that DeprecationWarning an error" in t.explained_by_api


def test_a_deprecation_that_is_not_jax_s_or_not_an_error_is_not_explained_so(tmp_path):
    matrix = load(make_tree(tmp_path, MINIMAL))
    other = RawResult(case="tests/test_x.py", status="failed", phase="collect", error_types=["DeprecationWarning"],
                      message="DeprecationWarning: numpy.foo is deprecated", traceback="")
    plain = RawResult(case="tests/test_x.py", status="failed", phase="collect", error_types=["ImportError"],
                      message=f"ImportError: {NAME} is deprecated.", traceback="")
    for raw in (other, plain):
        after = Observed(results={raw.case: raw}, versions={"jax": "0.7.1"}, warning_filter="x")
        (t,) = usertests.classify(after, None, matrix, "cpu")
        assert not t.explained_by_api.startswith("not collected")


@pytest.mark.parametrize("config, text, said", [
    ("pyproject.toml", '[tool.pytest.ini_options]\nfilterwarnings = ["error", "ignore::UserWarning"]\n',
     'filterwarnings "error" in pyproject.toml'),
    ("pytest.ini", "[pytest]\nfilterwarnings =\n    ignore::UserWarning\n    error::DeprecationWarning\n",
     'filterwarnings "error::DeprecationWarning" in pytest.ini'),
    ("setup.cfg", "[tool:pytest]\naddopts = -q -W error::DeprecationWarning\n",
     'addopts "-W error::DeprecationWarning" in setup.cfg'),
    ("pyproject.toml", '[tool.pytest.ini_options]\naddopts = ["-Werror"]\n', 'addopts "-Werror" in pyproject.toml'),
    ("pyproject.toml", '[tool.pytest.ini_options]\nfilterwarnings = ["error::UserWarning"]\n', ""),
    ("pyproject.toml", "[tool.pytest.ini_options]\n", ""),
])
def test_the_project_s_own_setting_that_makes_a_deprecation_an_error(tmp_path, config, text, said):
    (tmp_path / config).write_text(text)
    assert warning_filter(tmp_path) == said


CONFTEST = '''import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "vendor", "site-packages"))
import equinox  # noqa: E402,F401
'''
# A stand-in for jax with the real mechanism: a module __getattr__ serving a `_deprecations` table
# that warns from jax/_src/deprecations.py, deprecating NotMapped in the candidate only.
JAX_DEPRECATIONS = '''import warnings


def getattr_(module, table):
    def __getattr__(name):
        if name in table:
            warnings.warn(table[name][0], DeprecationWarning, stacklevel=2)
            return table[name][1]
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return __getattr__
'''
BATCHING = '''import os

from jax._src.deprecations import getattr_


class _NotMapped:
    pass


if "CANDIDATE" in os.environ.get("JAXCOMPAT_RESULTS", ""):
    __getattr__ = getattr_(__name__, {"NotMapped": ("jax.interpreters.batching.NotMapped is deprecated.", _NotMapped)})
else:
    NotMapped = _NotMapped
'''
EQUINOX = '''from jax.interpreters import batching


class _MetaBatchTransform:
    batch_axes: "list[int]" = [batching.NotMapped]
'''


@pytest.mark.integration
def test_check_tests_on_a_project_that_makes_deprecations_errors(tmp_path):
    """The whole CLI over fake cells: a project with filterwarnings = ["error"] whose conftest
    imports a package that touches a name the candidate's jax deprecates. Every test is broken,
    explained, with its traceback, and what to pin or change."""
    from jaxcompat.env.candidate import candidate_cell

    candidate = candidate_cell(["jax==0.7.1"], python="auto").id
    make_tree(tmp_path, MINIMAL.replace('pins = { jax = "0.4.33", equinox = "0.11.7" }', 'pins = { jax = "0.7.1" }'))
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    proj = tmp_path / "proj"
    site = proj / "tests" / "vendor" / "site-packages"
    for path, text in {"jax/__init__.py": "", "jax/_src/__init__.py": "", "jax/_src/deprecations.py": JAX_DEPRECATIONS,
                       "jax/interpreters/__init__.py": "",
                       "jax/interpreters/batching.py": BATCHING.replace("CANDIDATE", candidate),
                       "equinox/__init__.py": "from equinox.internal import _noinline  # noqa: F401\n",
                       "equinox/internal/__init__.py": "", "equinox/internal/_noinline.py": EQUINOX}.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(text)
    (proj / "pyproject.toml").write_text('[project]\nname = "tinyproj"\nversion = "0.1.0"\n[tool.pytest.ini_options]\n'
                                         'testpaths = ["tests"]\nfilterwarnings = ["error"]\n')
    (proj / "tests" / "conftest.py").write_text(CONFTEST)
    (proj / "tests" / "test_model.py").write_text("def test_a():\n    pass\n\n\ndef test_b():\n    pass\n")
    proc = subprocess.run([sys.executable, str(DRIVER), "check", "--matrix", str(tmp_path / "matrix.toml"),
                           "--reports", str(tmp_path / "reports"), "--state", str(tmp_path / "state"),
                           "--tests", str(proj), "--no-verify-escapes", "--baseline", "jax==0.7.0", "jax==0.7.1"],
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    deprecated_in, removed_in = _history()
    assert f"2 × [collect] DeprecationWarning: {NAME} is deprecated." in out
    assert (f"jax's API history: not collected: equinox uses {NAME} (equinox/internal/_noinline.py:5), deprecated in "
            f"jax {deprecated_in}, removed in {removed_in}; the project's own warning filter (filterwarnings "
            f'"error" in pyproject.toml) makes that DeprecationWarning an error') in out
    assert '"ignore::DeprecationWarning:equinox"' in out and f"pin jax<{deprecated_in}" in out
    assert "no traceback was recorded" not in out and "(no message)" not in out
    data = json.loads((tmp_path / "reports" / "check.json").read_text())
    by = {t["test"]: t for t in data["user_tests"]}
    assert set(by) == {"tests/test_model.py::test_a", "tests/test_model.py::test_b"}
    t = by["tests/test_model.py::test_a"]
    assert t["class"] == "broken" and t["phase"] == "collect" and "tests/conftest.py:5: in <module>" in t["traceback"]
    assert data["user_tests_run"]["sides"]["candidate"]["uncollectable"] == ["tests"]
    assert str(tmp_path) not in json.dumps(data)


def test_a_session_error_stands_only_for_the_tests_it_kept_from_running(tmp_path):
    """A collection error of the session (".") or a folder gives its error to the tests that did
    not run because of it; where every test still ran, it stays a record of its own."""
    matrix = load(make_tree(tmp_path, MINIMAL))
    err = RawResult(case=".", status="failed", phase="collect", error_types=["ImportError"],
                    message="ImportError: x", traceback="conftest.py:1: in <module>")
    ran = {t: RawResult(case=t, status="passed") for t in TESTS}
    tests = usertests.classify(Observed(results={".": err, **ran}), _passed(), matrix, "cpu")
    assert {t.test: t.cls for t in tests} == {**{t: "pass" for t in TESTS}, ".": "fails"}
    tests = usertests.classify(Observed(results={".": err, TESTS[0]: ran[TESTS[0]]}), _passed(), matrix,
                               "cpu")
    assert {t.test: t.cls for t in tests} == {TESTS[0]: "pass", TESTS[1]: "broken", TESTS[2]: "broken"}
    assert all(t.traceback == err.traceback for t in tests if t.cls == "broken")


def test_a_deprecated_name_in_the_project_s_own_test_says_what_to_use_instead(tmp_path):
    """The warning raised while a test runs, from the project's own code (not a dependency's):
    the test failed (it was collected), and the fix is the replacement jax names."""
    t = Timeline.load()
    st = t.name("jax", "tree_map", t.newest)
    assert st.replacement and st.deprecated_in
    raw = RawResult(case="tests/test_t.py::test_map", status="failed", error_types=["DeprecationWarning", "Warning"],
                    message=f"DeprecationWarning: {st.message or 'jax.tree_map is deprecated'}",
                    traceback="tests/test_t.py:3: in test_map\n    jax.tree_map(f, x)\n")
    after = Observed(results={raw.case: raw}, versions={"jax": st.deprecated_in},
                               warning_filter='addopts "-W error" in pytest.ini')
    (u,) = usertests.classify(after, None, load(make_tree(tmp_path, MINIMAL)), "cpu")
    assert u.explained_by_api.startswith("failed: your code uses jax.tree_map (tests/test_t.py:3)")
    assert u.fix.startswith(f"use {st.replacement} instead of jax.tree_map in your code; or pin jax<{st.deprecated_in}")
