"""Red team 12's findings against the import-skip rule (plugin/pytest_plugin._import_failure,
model/usertests.import_skip), kept as tests through the real CLI (check --tests over fake cells, each
side this interpreter, the candidate's run told apart by its cell id in $JAXCOMPAT_RESULTS, as
tests/test_redteam9_usertests.py does). Each test asserts the truth by the tool's own rule: a test that
passed in the baseline and skips itself out of the candidate for an import that fails there (whatever
its skip's reason says) is broken, exit 1. All pass now; B3 (a version gate read broken) is a false
alarm kept by choice, held as a strict xfail."""

from __future__ import annotations

import pytest

from tests.test_redteam9_usertests import BODY, EQX, _candidate
from tests.test_usertests import _check, _user_project


def _verdict(tmp_path, project):
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    by = {t["test"]: (t["baseline"], t["candidate"], t["class"]) for t in data["user_tests"]}
    return proc, by, proc.stdout + proc.stderr


# ---------------------------------------------------------------- A1: a folder's conftest skips it for a lost import

SUB_CONFTEST = '''import pytest

try:
    import fakeeqx  # noqa: F401
except ImportError:
    pytest.skip("needs equinox", allow_module_level=True)
'''


@pytest.mark.parametrize("conftest", [
    SUB_CONFTEST,
    'import pytest\n\npytest.importorskip("fakeeqx", reason="needs equinox", exc_type=ImportError)\n',
], ids=["except-import-own-words", "importorskip-reason"])
def test_a_folder_whose_conftest_skips_it_for_a_lost_import_is_not_safe(tmp_path, conftest):
    """tests/sub/conftest.py: ``try: import fakeeqx except ImportError: pytest.skip("needs equinox",
    allow_module_level=True)`` (or ``pytest.importorskip("fakeeqx", reason="needs equinox")``); fakeeqx
    imports in the baseline and raises ImportError in the candidate.
    Plain pytest: tests/sub/test_s.py::test_a passed before, and now the folder tests/sub is skipped
    ("needs equinox"), exit 0. The same skip raised in a test module reads broken (red team 9, A2), but
    a folder's conftest is imported by pytest's Directory collection outside ``collector.collect``
    (pytest_make_collect_report loads it first), which is all that plugin/_watched wraps: the folder's
    skip record has no error_types, and the tool said "skipped", exit 0."""
    cand = _candidate()
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n")
    sub = project / "tests" / "sub"
    sub.mkdir()
    (sub / "conftest.py").write_text(conftest)
    (sub / "fakeeqx.py").write_text(EQX.replace("CANDIDATE", cand))
    (sub / "test_s.py").write_text(BODY)
    proc, by, out = _verdict(tmp_path, project)
    assert by["tests/sub/test_s.py::test_a"][:2] == ("passed", "skipped"), by
    assert (proc.returncode, by["tests/sub/test_s.py::test_a"][2]) == (1, "broken"), out


# ---------------------------------------------------------------- A2: unittest's own skip, raised in except ImportError

UNITTEST_CASE = '''import unittest


class TestEqx(unittest.TestCase):
    def test_a(self):
        try:
            import fakeeqx  # noqa: F401
        except ImportError:
            self.skipTest("needs equinox")
'''

UNITTEST_RAISE = '''import unittest


def test_a():
    try:
        import fakeeqx  # noqa: F401
    except ImportError:
        raise unittest.SkipTest("needs equinox")
'''

UNITTEST_MODULE = '''import unittest

try:
    import fakeeqx  # noqa: F401
except ImportError:
    raise unittest.SkipTest("needs equinox")
''' + BODY


@pytest.mark.parametrize("test_mod, name", [
    (UNITTEST_CASE, "tests/test_mod.py::TestEqx::test_a"),
    (UNITTEST_RAISE, "tests/test_mod.py::test_a"),
    (UNITTEST_MODULE, "tests/test_mod.py::test_a"),
], ids=["TestCase.skipTest", "raise-SkipTest-in-test", "raise-SkipTest-in-module"])
def test_a_unittest_skip_raised_for_a_lost_import_is_not_safe(tmp_path, test_mod, name):
    """``self.skipTest("needs equinox")`` (a unittest.TestCase, absltest's too: the JAX ecosystem's
    suites), or ``raise unittest.SkipTest(...)`` in a test or at a module's top, inside
    ``except ImportError:`` of an import that works in the baseline and fails in the candidate. Plain
    pytest: passed before, skipped now ("needs equinox"), exit 0. The same with ``pytest.skip`` reads
    broken; but pytest turns unittest's skip into its own skip raised afresh (unittest's addSkip /
    runner's SkipTest conversion: its __context__ is unittest's SkipTest, or nothing), or keeps
    unittest.SkipTest at collection (not a ``pytest.skip.Exception``): no error_types, and the tool
    said "skipped", exit 0."""
    cand = _candidate()
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n", test_mod=test_mod,
                            fakeeqx=EQX.replace("CANDIDATE", cand))
    proc, by, out = _verdict(tmp_path, project)
    assert by[name][:2] == ("passed", "skipped"), by
    assert (proc.returncode, by[name][2]) == (1, "broken"), out


# ---------------------------------------------------------------- C1: a collection error's traceback, from the plugin

GENERATE = '''import os


def pytest_generate_tests(metafunc):
    if "x" in metafunc.fixturenames:
        if "CANDIDATE" in os.environ["JAXCOMPAT_RESULTS"]:
            raise ValueError("bad params")  # stands for a jax name this hook reads, gone in the candidate
        metafunc.parametrize("x", [1])
'''


def test_a_collection_error_outside_the_module_keeps_its_own_frames_first(tmp_path):
    """A conftest's ``pytest_generate_tests`` raises in the candidate (collecting tests/test_mod.py fails
    there; the error's traceback has no frame in the module itself). Plain pytest: the collection error;
    plugin/_own_frames_first keeps the project's frames first (tests/conftest.py), as it did before the
    diff. The diff's ``collector.collect`` wrapper (plugin/_watched) adds a frame of its own above them:
    pytest names it by the path the cell imported the plugin from, the shim folder under the state
    folder (run/runner.plugin_path: <state>/runs/<cell>-user/pythonpath/jaxcompat/...), relative to the
    project where that is shorter (a state folder beside the project: ``../state/runs/...``, or the
    default ``~/.cache/jax-compat`` for a project under the home: ``../.cache/jax-compat/runs/...``).
    A relative frame is no "import machinery" to _own_frames_first, so the report's traceback starts
    with the tool's own shim path and every pytest and pluggy frame below it (the user's frame last);
    here, where the cell's pytest is this interpreter's, check.json named its site-packages by their
    absolute path (a machine path in a report; before the diff these frames were cut)."""
    cand = _candidate()
    project = _user_project(tmp_path / "proj", "", test_mod="def test_a(x):\n    pass\n")
    (project / "tests" / "conftest.py").write_text(GENERATE.replace("CANDIDATE", cand))
    proc, data = _check(tmp_path, project, "--baseline", "jax==0.4.31", "jax==0.4.33")
    by = {t["test"]: t for t in data["user_tests"]}
    t = by.get("tests/test_mod.py::test_a[1]") or by["tests/test_mod.py"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "jaxcompat/plugin" not in t["traceback"] and "pythonpath" not in t["traceback"], t["traceback"]
    # here the cell's pytest is this interpreter's, outside the state folder: its frames named a machine path
    assert not [ln for ln in t["traceback"].splitlines() if ln.startswith("/")], t["traceback"]
    assert t["traceback"].lstrip().startswith("tests/conftest.py"), t["traceback"]  # the project's frame first


# ---------------------------------------------------------------- B1: a class that skipped itself whole reads broken

LEGACY = '''import os

import pytest


def pytest_generate_tests(metafunc):
    if "legacy" in metafunc.fixturenames and "CANDIDATE" in os.environ["JAXCOMPAT_RESULTS"]:
        pytest.skip("the legacy API is gone in this jax; not tested")
'''


@pytest.mark.parametrize("where", ["module", "class"])
def test_a_deliberate_skip_of_a_whole_class_stays_skipped(tmp_path, where):
    """tests/conftest.py's ``pytest_generate_tests`` skips, in the candidate only, the functions that ask
    for ``legacy`` (a deliberate skip, no import in sight: the project stopped testing an API the new jax
    removed). pytest then skips the collector that was generating them: the module, for a module-level
    function; the class (``tests/test_mod.py::TestLegacy``), for a method. Plain pytest: passed before,
    skipped now ("the legacy API is gone..."), exit 0 either way. The tool reads the module's skip for
    its tests (``model/usertests.enclosing``: skipped, exit 0), but ``enclosing`` looks a test's
    collector up by its module's path only: a class's own collect record is never found, so its
    methods read absent in the candidate, "broken" (passed before, fail after), exit 1: a false alarm
    (the module variant is the control)."""
    cand = _candidate()
    body = ("def test_a(legacy):\n    pass\n" if where == "module" else
            "def test_c():\n    pass\n\n\nclass TestLegacy:\n    def test_a(self, legacy):\n        pass\n")
    name = "tests/test_mod.py::test_a" if where == "module" else "tests/test_mod.py::TestLegacy::test_a"
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n", test_mod=body)
    (project / "tests" / "conftest.py").write_text(LEGACY.replace("CANDIDATE", cand))
    (project / "tests" / "test_mod.py").write_text("import pytest\n\n\n@pytest.fixture\ndef legacy():\n"
                                                  "    return 1\n\n\n" + body)
    proc, by, out = _verdict(tmp_path, project)
    assert by[name] == ("passed", "skipped", "skipped"), by
    assert proc.returncode == 0, out


# ---------------------------------------------------------------- B2: an expected failure read as a lost import

XFAIL = '''import os

import pytest


@pytest.mark.xfail(reason="wrong result on some jax versions (an upstream bug)")
def test_a():
    try:
        import fakescipy  # noqa: F401  (optional: a reference value)
    except ImportError:
        fakescipy = None
    assert "CANDIDATE" not in os.environ["JAXCOMPAT_RESULTS"], "wrong result"
'''


def test_an_expected_failure_is_no_lost_import(tmp_path):
    """A test marked ``xfail`` (a known upstream bug) XPASSes in the baseline and fails, as expected,
    in the candidate with an AssertionError; it imports nothing that fails (its optional import is
    absent on both sides, and handled). Plain pytest: XPASS before, XFAIL now, exit 0 both times. The
    plugin records an xfailed test as skipped with pytest's whole failure text as its message (the
    test's source shown there holds ``except ImportError:``); model/usertests.import_skip reads any
    skip whose message holds "ImportError" as a lost import: "broken", exit 1, a false alarm."""
    cand = _candidate()
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n",
                            test_mod=XFAIL.replace("CANDIDATE", cand))
    proc, by, out = _verdict(tmp_path, project)
    assert by["tests/test_mod.py::test_a"][:2] == ("passed", "skipped"), by
    assert (proc.returncode, by["tests/test_mod.py::test_a"][2]) == (0, "skipped"), out


# ---------------------------------------------------------------- A3: a dependency whose import raises AttributeError

# stands for ``import equinox`` failing in the candidate the way jax's removals most often show: the package
# reads a removed jax name at its top (``jax.tree_map``, gone in jax 0.6): AttributeError, not ImportError
EQX_ATTR = EQX.replace("ImportError(\"cannot import name 'shaped_abstractify' from 'jax.api_util'\")",
                       "AttributeError(\"module 'jax' has no attribute 'tree_map'\")")


@pytest.mark.parametrize("where", ["module", "test"])
def test_a_skip_for_a_dependency_that_no_longer_imports_is_not_safe(tmp_path, where):
    """``try: import fakeeqx except Exception: pytest.skip("equinox not available")`` (at the module's top,
    or in the test); fakeeqx imports in the baseline and, in the candidate, its import raises
    AttributeError (it reads a jax name the upgrade removed). Plain pytest: passed before, skipped now,
    exit 0: the test lost a module it needs, the very case the diff reads broken when the import raises
    ImportError. The plugin only notes a skip whose __context__ is an ImportError; an import statement
    that raised anything else is no import error to it: the tool said "skipped", exit 0."""
    cand = _candidate()
    guarded = ("try:\n    import fakeeqx  # noqa: F401\nexcept Exception:\n"
               "    pytest.skip(\"equinox not available\"{})\n")
    if where == "module":
        test_mod = "import pytest\n\n" + guarded.format(", allow_module_level=True") + BODY
    else:
        test_mod = ("import pytest\n\n\ndef test_a():\n" + "".join("    " + ln + "\n" for ln in
                    guarded.format("").splitlines()) + "\n\ndef test_b():\n    pass\n")
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n", test_mod=test_mod,
                            fakeeqx=EQX_ATTR.replace("CANDIDATE", cand))
    proc, by, out = _verdict(tmp_path, project)
    assert by["tests/test_mod.py::test_a"][:2] == ("passed", "skipped"), by
    assert (proc.returncode, by["tests/test_mod.py::test_a"][2]) == (1, "broken"), out


# ---------------------------------------------------------------- A4: pytest's doctest skip for a lost import

DOCTESTED = '''import fakeeqx  # noqa: F401


def g():
    """
    >>> g()
    2
    """
    return 2
'''


def test_doctests_of_a_module_that_no_longer_imports_are_not_safe(tmp_path):
    """addopts ``--doctest-modules --doctest-ignore-import-errors`` (pytest's own way to skip a module it
    cannot import); tests/helpers.py imports fakeeqx, which imports in the baseline and raises ImportError
    in the candidate. Plain pytest: the doctest tests/helpers.py::helpers.g passed before; now pytest
    skips the module ("unable to import module PosixPath('...')"), exit 0. pytest raises that skip in
    ``except Collector.CollectError`` (the ImportError is the CollectError's cause, one link further):
    _import_failure reads only the skip's own __context__ and the message holds none of _IMPORT_FAILED's
    words: the tool said "skipped", exit 0."""
    cand = _candidate()
    project = _user_project(tmp_path / "proj", "--doctest-modules --doctest-ignore-import-errors",
                            test_other="def test_c():\n    pass\n", helpers=DOCTESTED,
                            fakeeqx=EQX.replace("CANDIDATE", cand))
    proc, by, out = _verdict(tmp_path, project)
    assert by["tests/helpers.py::helpers.g"][:2] == ("passed", "skipped"), by
    assert (proc.returncode, by["tests/helpers.py::helpers.g"][2]) == (1, "broken"), out


# ---------------------------------------------------------------- C2: a project's own wrapper of collector.collect

TIMED = '''import pytest


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    collect = collector.collect  # the project times each collector (a profiling conftest)
    collector.collect = lambda: list(collect())
    try:
        return (yield)
    finally:
        del collector.collect
'''


def test_a_project_that_wraps_collector_collect_itself_still_runs(tmp_path):
    """tests/conftest.py wraps ``collector.collect`` for the time of pytest_make_collect_report and
    deletes its attribute after, the same idiom as the diff's plugin/_watched; nothing differs between
    the sides. Plain pytest: every test passes, on both sides, exit 0. With the plugin, the two wrappers
    nest: the inner one's ``del collector.collect`` removes the outer one's attribute too, and the
    outer's ``del`` raises AttributeError: INTERNALERROR, pytest stops before running a test, on both
    sides: the tool could not judge (exit 2) an upgrade that changes nothing, and it said why wrongly:
    "pytest collected no tests (its configuration's testpaths/python_files found none)"."""
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n", test_mod=BODY)
    (project / "tests" / "conftest.py").write_text(TIMED)
    proc, by, out = _verdict(tmp_path, project)
    assert proc.returncode == 0, out
    assert by["tests/test_mod.py::test_a"] == ("passed", "passed", "pass"), by


def test_a_test_module_that_no_longer_imports_under_doctest_modules_is_not_safe(tmp_path):
    """addopts ``--doctest-modules --doctest-ignore-import-errors``; tests/test_mod.py imports fakeeqx at its
    top, which raises ImportError in the candidate. Plain pytest: its tests passed before; now "ERROR
    tests/test_mod.py" (a collection error: the Module) beside "SKIPPED unable to import module" (the
    DoctestModule of the same file, the same node id), exit 1. The plugin emits both records under one
    id, the doctest's skip first, and run/runner keeps the first: the module reads skipped for a reason
    that names no import error (A4) and the tool said "skipped", exit 0, where plain pytest fails."""
    cand = _candidate()
    project = _user_project(tmp_path / "proj", "--doctest-modules --doctest-ignore-import-errors",
                            test_other="def test_c():\n    pass\n", test_mod="import fakeeqx  # noqa: F401\n" + BODY,
                            fakeeqx=EQX.replace("CANDIDATE", cand))
    proc, by, out = _verdict(tmp_path, project)
    assert by["tests/test_mod.py::test_a"][0] == "passed", by
    assert (proc.returncode, by["tests/test_mod.py::test_a"][2]) == (1, "broken"), out


# ---------------------------------------------------------------- B3: a version gate written as except ImportError

GATE = '''import pytest


def test_a():
    try:
        from fakejax import tree_map  # noqa: F401
    except ImportError:
        pytest.skip("tree_map was removed from jax; this test of its alias covers the older jax only")


def test_b():
    pass
'''

FAKEJAX = '''import os

if "CANDIDATE" not in os.environ["JAXCOMPAT_RESULTS"]:
    def tree_map(f, tree):
        return f(tree)
'''


@pytest.mark.xfail(strict=True, reason="kept by choice: a skip made for an import the candidate lost reads broken "
                   "whatever its reason says; a gate and a lost dependency look the same to pytest, and a wrong "
                   "'safe' is worse than this false alarm (the verdict shows the skip's own reason)")
def test_a_version_gate_written_as_except_import_error_stays_the_project_s_choice(tmp_path):
    """A test of a removed jax alias that the project gates by import, as compat layers do: ``try: from
    jax import tree_map except ImportError: pytest.skip("... covers the older jax only")``; the candidate's
    (fake) jax no longer has the name. Plain pytest: passed before, skipped now, exit 0; the skip's
    reason says the project expected it (it is a ``skipif`` on the version in all but form; nothing the
    test needs on the new jax is lost). Before the diff: skipped, exit 0. With it, any skip raised in
    ``except ImportError`` reads as a lost module: "broken", exit 1 (a new false alarm; the diff means
    it, "whatever its reason says": the lead's call whether a reason that names the removal should
    count as the project's choice)."""
    cand = _candidate()
    project = _user_project(tmp_path / "proj", "", test_other="def test_c():\n    pass\n", test_mod=GATE,
                            fakejax=FAKEJAX.replace("CANDIDATE", cand))
    proc, by, out = _verdict(tmp_path, project)
    assert by["tests/test_mod.py::test_a"] == ("passed", "skipped", "skipped"), by
    assert proc.returncode == 0, out
