"""Red team 13's findings against the import-skip rule as 437e02f made it (plugin/pytest_plugin:
every skip notes, when it is made, the import error being handled then, under its reason;
model/usertests.import_skip; run/runner._error_over_skip; model/usertests.enclosing), kept as tests
through the real CLI (check --tests over fake cells, each side this interpreter, the candidate's run
told apart by its cell id in $JAXCOMPAT_RESULTS, as tests/test_redteam12.py does). Each asserts the
truth by the tool's own rule: a test that passed in the baseline and skips itself out of the candidate
for an import that fails there (whatever its skip's reason says) is broken, exit 1; a skip that is the
project's own choice stays skipped, exit 0."""

from __future__ import annotations

import pytest

from tests.test_redteam9_usertests import BODY, EQX, _candidate
from tests.test_redteam12 import _verdict
from tests.test_usertests import _user_project

# ---------------------------------------------------------------- A1: an import skip with no reason at collection

NO_REASON = '''import pytest

try:
    import fakeeqx  # noqa: F401
except ImportError:
    pytest.skip(allow_module_level=True)
''' + BODY

NO_REASON_UNITTEST = '''import unittest

try:
    import fakeeqx  # noqa: F401
except ImportError:
    raise unittest.SkipTest()
''' + BODY


def _lost(tmp_path, test_mod, name="tests/test_mod.py::test_a", **more):
    cand = _candidate()
    modules = {"test_other": "def test_c():\n    pass\n", "test_mod": test_mod, "fakeeqx": EQX, **more}
    project = _user_project(tmp_path / "proj", "", **{k: v.replace("CANDIDATE", cand) for k, v in modules.items()})
    proc, by, out = _verdict(tmp_path, project)
    return proc, by[name], out


def test_a_module_skipped_with_no_reason_for_a_lost_import_is_not_safe(tmp_path):
    """``try: import fakeeqx except ImportError: pytest.skip(allow_module_level=True)`` at a test
    module's top (no reason given); fakeeqx imports in the baseline and raises ImportError in the
    candidate. Plain pytest: test_a passed before, and now the module is skipped (its report says
    "Skipped"), exit 0. The plugin keys the import error a skip was made for by the skip's reason, and
    an empty reason is never looked up (``_skip_import``: ``if r``): the module's collection skip has
    no error_types, and the tool said "skipped", exit 0. Before 437e02f (plugin/_watched noted the skip
    of collector.collect by node id) the same module read broken: new in this diff."""
    proc, got, out = _lost(tmp_path, NO_REASON)
    assert got[:2] == ("passed", "skipped"), got
    assert (proc.returncode, got[2]) == (1, "broken"), out


def test_a_module_skipped_by_a_bare_unittest_skiptest_for_a_lost_import_is_not_safe(tmp_path):
    """The same with ``raise unittest.SkipTest()`` (no reason): pytest's report says
    "unittest.case.SkipTest", the registry holds "" and is never asked: "skipped", exit 0. (At d49d9b5
    a unittest skip at collection was not noted at all: not new, but the diff's A2 fix misses it.)"""
    proc, got, out = _lost(tmp_path, NO_REASON_UNITTEST)
    assert got[:2] == ("passed", "skipped"), got
    assert (proc.returncode, got[2]) == (1, "broken"), out


# ---------------------------------------------------------------- A2: an imperative xfail made for a lost import

XFAIL_IN_EXCEPT = '''import pytest


def test_a():
    try:
        import fakeeqx  # noqa: F401
    except ImportError:
        pytest.xfail("needs equinox")


def test_b():
    pass
'''


def test_an_xfail_made_for_a_lost_import_is_not_safe(tmp_path):
    """``try: import fakeeqx except ImportError: pytest.xfail("needs equinox")`` in a test; fakeeqx
    imports in the baseline and raises ImportError in the candidate. Plain pytest: test_a passed before
    and is XFAIL now ("needs equinox"), exit 0: the test no longer runs for a module the candidate
    lost, exactly as ``pytest.skip`` there (which reads broken). The plugin notes the import error for
    pytest's skip and unittest's SkipTest only (pytest.xfail's exception is no skip), and since the
    diff an xfail's record says "expected to fail: needs equinox" instead of pytest's failure text
    (which held the ImportError): "skipped", exit 0. At d49d9b5 the same test read broken (its message
    carried "ImportError"): new in this diff."""
    proc, got, out = _lost(tmp_path, XFAIL_IN_EXCEPT)
    assert got[:2] == ("passed", "skipped"), got
    assert (proc.returncode, got[2]) == (1, "broken"), out


# -------------------------------------------------- B1: a version gate made while an unrelated ImportError is handled

VERSIONED = 'import os\n\n__version__ = "1.0" if "CANDIDATE" in os.environ["JAXCOMPAT_RESULTS"] else "3.0"\n'

FALLBACK = '''import pytest

try:
    import fakeeqx_accel as fakeeqx  # noqa: F401  (the optional compiled build: installed nowhere)
except ImportError:
    fakeeqx = pytest.importorskip("fakeeqx", minversion="2.0")
''' + BODY


def test_a_minimum_version_skip_in_a_fallback_import_stays_the_project_s_choice(tmp_path):
    """The fallback idiom: ``try: import fakeeqx_accel as fakeeqx except ImportError: fakeeqx =
    pytest.importorskip("fakeeqx", minversion="2.0")``: the accelerated build is installed on neither
    side (its ImportError is the same on both); fakeeqx imports on both, 3.0 in the baseline, 1.0 in the
    candidate. Plain pytest: passed before, skipped now ("module 'fakeeqx' has __version__ '1.0', required
    is: '2.0'"), exit 0 — a minimum-version skip, the project's own choice by the tool's rule (the
    control test in tests/test_redteam9_usertests.py). But the skip is made while the accelerated
    build's ImportError is still being handled, and the plugin notes whatever import error sys.exc_info
    holds when a skip is made: the tool said "broken", exit 1, a false alarm. Not new: d49d9b5 reads it
    broken too (the skip's __context__ is that ImportError); the diff's chain walk keeps it."""
    proc, got, out = _lost(tmp_path, FALLBACK, fakeeqx=VERSIONED)
    assert got[:2] == ("passed", "skipped"), got
    assert (proc.returncode, got[2]) == (0, "skipped"), out


# ------------------------------------------- B2: a deliberate skip whose error came through a script's top-level code

EXAMPLE = '''import os

# the example needs two devices; the candidate's machine (here: its run) shows one
DEVICES = 1 if "CANDIDATE" in os.environ["JAXCOMPAT_RESULTS"] else 2
if DEVICES < 2:
    raise SystemExit("this example needs 2 devices")
'''

RUN_EXAMPLE = '''import pathlib
import runpy

import pytest


def test_a():
    try:
        runpy.run_path(str(pathlib.Path(__file__).with_name("example_shard.py")), run_name="__main__")
    except SystemExit as e:
        pytest.skip(f"example not runnable here: {e}")


def test_b():
    pass
'''


def test_a_device_skip_around_an_example_script_stays_the_project_s_choice(tmp_path):
    """A test that runs an example script (``runpy.run_path``, as the ecosystem's test_examples do) and
    skips when the script exits early: the script, at its top, needs two devices and exits with
    SystemExit("this example needs 2 devices") on a machine with one (here the candidate's run).
    Plain pytest: passed before, skipped now ("example not runnable here: this example needs 2
    devices"), exit 0: a missing device, the project's own choice by the tool's rule. The plugin takes
    any error whose traceback holds a ``<module>`` frame below the catching frame for an import error
    (plugin/_raised_importing): a script run by runpy (or exec, eval: their code is "<module>" too)
    is one: the tool said "broken", exit 1, a false alarm. At d49d9b5 only an ImportError counted: new
    in this diff."""
    proc, got, out = _lost(tmp_path, RUN_EXAMPLE, example_shard=EXAMPLE)
    assert got[:2] == ("passed", "skipped"), got
    assert (proc.returncode, got[2]) == (0, "skipped"), out


# ---------------------------------------------------------------- B3: two modules' skips with one reason (the registry)

KERNELS = '''import pytest

try:
    import faketriton  # noqa: F401  (installed on neither side: no GPU toolchain here)
except ImportError:
    pytest.skip("requires a GPU", allow_module_level=True)


def test_kernel():
    pass
'''

ON_GPU = '''import os

import pytest

BACKEND = "cpu" if "CANDIDATE" in os.environ["JAXCOMPAT_RESULTS"] else "gpu"  # the candidate runs on a CPU
if BACKEND != "gpu":
    pytest.skip("requires a GPU", allow_module_level=True)
''' + BODY


KERNELS_UNITTEST = '''import unittest


class TestKernel(unittest.TestCase):
    def setUp(self):
        try:
            import faketriton  # noqa: F401  (installed on neither side: no GPU toolchain here)
        except ImportError:
            self.skipTest("requires a GPU")

    def test_kernel(self):
        pass
'''

ON_GPU_TEST = '''import os

import pytest

BACKEND = "cpu" if "CANDIDATE" in os.environ["JAXCOMPAT_RESULTS"] else "gpu"  # the candidate runs on a CPU


def test_a():
    if BACKEND != "gpu":
        pytest.skip("requires a GPU")


def test_b():
    pass
'''


@pytest.mark.parametrize("kernels, test_mod", [(KERNELS, ON_GPU), (KERNELS_UNITTEST, ON_GPU_TEST)],
                         ids=["module-skips", "unittest-then-test-skip"])
def test_a_device_skip_sharing_its_reason_with_an_import_skip_stays_the_project_s_choice(tmp_path, kernels,
                                                                                            test_mod):
    """tests/test_gpu_kernels.py skips itself, on both sides, when its GPU toolchain does not import
    (``except ImportError: pytest.skip("requires a GPU", allow_module_level=True)``); tests/test_mod.py
    skips itself with the same words when the backend is no GPU (``if backend != "gpu":``), which the
    candidate's run is not. Plain pytest: test_mod's tests passed before and are skipped now ("requires
    a GPU"), exit 0: a missing device, the project's own choice by the tool's rule. The plugin notes an
    import skip by its reason alone (``_import_skips``), and a collection skip is looked up by its
    reason (``_skip_import``): test_mod's deliberate skip is taken for test_gpu_kernels' import skip:
    the tool said "broken", exit 1, a false alarm. The same in a test (second variant): a
    unittest.TestCase's ``setUp`` skips ("requires a GPU") for the toolchain that does not import, on
    both sides; test_mod's test_a, run after it, skips itself with those words on a CPU: a test's
    pytest skip that noted no import error is looked up among the unittest skips' reasons
    (``_skip_import(..., unittest_only=True)``): "broken", exit 1. At d49d9b5 skips were noted by node
    id (collection) or on the exception (tests): new in this diff."""
    proc, got, out = _lost(tmp_path, test_mod, test_gpu_kernels=kernels)
    assert got[:2] == ("passed", "skipped"), got
    assert (proc.returncode, got[2]) == (0, "skipped"), out


# ---------------------------------------------------------------- A3: a reason pytest reports trimmed

LONG_REASON = '''import pytest

try:
    import fakeeqx  # noqa: F401
except ImportError:
    pytest.skip("""
        these tests need equinox:
            pip install equinox
    """, allow_module_level=True)
''' + BODY


def test_a_module_skipped_for_a_lost_import_with_a_long_reason_is_not_safe(tmp_path):
    """``except ImportError: pytest.skip(\"\"\"<newline> these tests need equinox: ... <newline>\"\"\",
    allow_module_level=True)`` at a test module's top (a triple-quoted reason, which ends in a newline
    and blanks); fakeeqx imports in the baseline and raises ImportError in the candidate. Plain pytest:
    passed before, the module skipped now, exit 0. pytest's collection report carries the reason with
    its end stripped (ExceptionInfo.exconly rstrips), the registry holds it as it was made, and
    ``_skip_import`` compares them exactly (or as "...: REASON"): no error_types, "skipped", exit 0.
    At d49d9b5 (noted by node id) it read broken: new in this diff."""
    proc, got, out = _lost(tmp_path, LONG_REASON)
    assert got[:2] == ("passed", "skipped"), got
    assert (proc.returncode, got[2]) == (1, "broken"), out


# ---------------------------------------------- B4: a library's own error, raised while it handled an optional import

FAKEFFT = '''import os


def fft(n):
    if "CANDIDATE" not in os.environ["JAXCOMPAT_RESULTS"] or n < 1024:
        return [0.0] * n
    # the new version hands large sizes to an optional backend, and says so when it is absent
    try:
        import fakeducc  # noqa: F401  (installed on neither side)
    except ImportError:
        raise NotImplementedError(f"fft of size {n} needs the ducc backend")
'''

GATE = '''import pytest

import fakefft


def test_a():
    try:
        fakefft.fft(4096)
    except NotImplementedError:
        pytest.skip("large fft not supported by this version")


def test_b():
    pass
'''


def test_a_skip_on_a_library_s_not_implemented_stays_the_project_s_choice(tmp_path):
    """fakefft (a dependency, imported fine on both sides) raises NotImplementedError for a size its
    candidate version does not support; it raises it inside its own ``except ImportError:`` of an
    optional backend installed on neither side (a common way to say "this needs X"). The test catches
    the NotImplementedError and skips ("large fft not supported by this version"). Plain pytest: passed
    before, skipped now, exit 0; no module the project imports was lost (fakefft imports on both sides,
    fakeducc on neither). The plugin walks the handled error's chain of causes down to any ImportError
    (the NotImplementedError's __context__): "broken", exit 1, a false alarm. At d49d9b5 only the
    skip's own __context__ counted (here a NotImplementedError): new in this diff."""
    proc, got, out = _lost(tmp_path, GATE, fakefft=FAKEFFT)
    assert got[:2] == ("passed", "skipped"), got
    assert (proc.returncode, got[2]) == (0, "skipped"), out


# ---------------------------------------------------------- A4: an xfail-marked test that now fails for a lost import

XFAIL_LOST = '''import pytest


@pytest.mark.xfail(reason="tolerance too tight on some CPUs")
def test_a():
    import fakeeqx  # noqa: F401
    assert 1.0 + 1e-7 != 1.0


def test_b():
    pass
'''


def test_an_xfail_marked_test_that_fails_for_a_lost_import_is_not_safe(tmp_path):
    """``@pytest.mark.xfail(reason="tolerance too tight on some CPUs")`` (non-strict: a numerical
    flake) on a test that imports fakeeqx; it imports in the baseline, raises ImportError in the
    candidate. Plain pytest: XPASS before, XFAIL now (its -rx line shows the reason; the failure is
    ``ImportError: cannot import name 'shaped_abstractify'``), exit 0. The test no longer runs at all in
    the candidate, for a lost module, not for the tolerance its marker names. Since the diff an
    xfail's record carries "expected to fail: <reason>" and no error_types (the failure's classes are
    not kept), so nothing says ImportError: "skipped", exit 0. At d49d9b5 the record carried pytest's
    failure text (with "ImportError") and read broken: new in this diff (the B2 fix of red team 12
    traded it away; keeping the failure's classes in error_types would tell the two apart)."""
    proc, got, out = _lost(tmp_path, XFAIL_LOST)
    assert got[:2] == ("passed", "skipped"), got
    assert (proc.returncode, got[2]) == (1, "broken"), out


# ---------------------------------------------------------------- C1: a project's SkipTest that is also its own error

OWN_SKIP = '''import os
import unittest

DEVICES = 1 if "CANDIDATE" in os.environ["JAXCOMPAT_RESULTS"] else 2


class ProjectError(Exception):
    def __init__(self, message, *, hint=""):
        super().__init__(message)
        self.hint = hint


class NeedsDevices(unittest.SkipTest, ProjectError):
    """A skip that unittest and pytest honour, and that the project's error reports know."""


def test_a():
    if DEVICES < 2:
        raise NeedsDevices("needs 2 devices", hint="run on a multi-GPU host")


def test_b():
    pass
'''


def test_a_skiptest_subclass_with_a_base_of_its_own_still_skips(tmp_path):
    """``class NeedsDevices(unittest.SkipTest, ProjectError)`` where ProjectError's ``__init__`` takes
    ``(message, *, hint="")`` (multiple inheritance from SkipTest is a real idiom: irctest's
    ``NotImplementedByController(unittest.SkipTest, NotImplementedError)``); test_a raises
    ``NeedsDevices("needs 2 devices", hint=...)`` on the candidate's one-device machine. Plain pytest:
    passed before, skipped now ("needs 2 devices"), exit 0: a missing device, the project's choice.
    The plugin sets ``unittest.SkipTest.__init__`` (a class that had none of its own, so the MRO
    went on to ProjectError's) to a wrapper calling ``Exception.__init__``: ProjectError's __init__ is
    never reached, the keyword is refused, and the raise itself fails with TypeError ("NeedsDevices()
    takes no keyword arguments") in the user's run: the tool said "broken" (passed before, fails
    after), exit 1; the project's own pytest run, under the plugin, fails a test that skips without
    it. (Without the keyword, ``hint`` is silently never set; a class deriving from both SkipTest and
    pytest's Skipped loses Skipped's __init__, and its repr raises AttributeError: 'msg'.) New in
    this diff."""
    proc, got, out = _lost(tmp_path, OWN_SKIP)
    assert got == ("passed", "skipped", "skipped"), (got, out)
    assert proc.returncode == 0, out
