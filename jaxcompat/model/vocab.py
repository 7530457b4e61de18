"""The words of jax-compat, each defined once, as a type.

Every vocabulary is a ``Word``: an enum whose members *are* their strings (``Outcome.PASS ==
"pass"``, the same hash, the same JSON), so the reports' schema does not change and a record read
from an old report compares equal to the member. What a word means (its label in the grids, whether
it fails the run, whether a cell status says anything about the releases) is a property of the
member, defined here and nowhere else.
"""

from __future__ import annotations

from enum import Enum


class Word(str, Enum):
    """A member is its string: compares, hashes, formats and serialises as its value."""

    __hash__ = str.__hash__

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    @classmethod
    def parse(cls, text: str, where: str = ""):
        """The member spelled ``text``; a ValueError naming the allowed words otherwise."""
        try:
            return cls(text)
        except ValueError:
            raise ValueError(f"{where + ': ' if where else ''}{text!r} is not a {cls.__name__}; "
                             f"use one of: {', '.join(m.value for m in cls)}") from None


class Outcome(Word):
    """What a case's result means once the rules are applied."""

    PASS = "pass"
    REPRODUCED = "reproduced"
    REGRESSION = "regression"
    STALE = "stale"
    MISMATCH = "mismatch"
    SKIPPED = "skipped"
    TIMEOUT = "timeout"
    CRASH = "crash"
    FLAKY = "flaky"

    @property
    def label(self) -> str:  # in the grids (terminal, markdown, HTML)
        return _OUTCOME[self][0]

    @property
    def meaning(self) -> str:
        return _OUTCOME[self][1]

    @property
    def fails(self) -> bool:  # fails the run
        return _OUTCOME[self][2]


_OUTCOME = {
    Outcome.PASS: ("pass", "behaved correctly, no known failure applies", False),
    Outcome.REPRODUCED: ("REPRO", "a known failure applies and occurred with the documented error", False),
    Outcome.REGRESSION: ("REGR!", "failed, and no known failure applies", True),
    Outcome.STALE: ("STALE!", "a known failure applies but the case passed (the rule is out of date)", True),
    Outcome.MISMATCH: ("MISM!", "a known failure applies but a different error occurred", True),
    Outcome.SKIPPED: ("skip", "backend absent or a precondition not met (the reason is kept)", False),
    Outcome.TIMEOUT: ("TIME!", "ran past its time limit and was killed", True),
    Outcome.CRASH: ("CRASH!", "the interpreter died while running the case", True),
    Outcome.FLAKY: ("FLAKY!", "with --repeat N, the outcome was not the same every time", True),
}


class CellStatus(Word):
    """How far a cell got."""

    OK = "ok"
    PYTHON_MISSING = "python-missing"
    BACKEND_MISSING = "backend-missing"
    UNRESOLVABLE = "unresolvable"
    INSTALL_ERROR = "install-error"
    IMPORT_ERROR = "import-error"
    RUN_ERROR = "run-error"
    HARNESS_ERROR = "harness-error"
    NOT_RUN = "not-run"

    @property
    def symbol(self) -> str:  # in the text grids
        return _CELL_STATUS[self][0]

    @property
    def label(self) -> str:  # in the HTML band
        return _CELL_STATUS[self][1]

    @property
    def meaning(self) -> str:
        return _CELL_STATUS[self][2]

    @property
    def installable(self) -> bool:
        """The releases installed together: the resolver found a set and it installed (a missing
        interpreter says nothing either way, so it is not counted as installable)."""
        return self not in (CellStatus.UNRESOLVABLE, CellStatus.INSTALL_ERROR, CellStatus.PYTHON_MISSING)

    @property
    def says_something(self) -> bool:
        """Whether a cell that ended so is evidence about the releases (see ``observed``): not when
        it did not finish, or when this machine lacks the interpreter or the device."""
        return self not in (CellStatus.NOT_RUN, CellStatus.PYTHON_MISSING, CellStatus.BACKEND_MISSING,
                            CellStatus.HARNESS_ERROR)


_CELL_STATUS = {
    CellStatus.OK: ("ok", "ok", "every package imported and the cases ran"),
    CellStatus.PYTHON_MISSING: ("nopy", "no python", "the interpreter is not on this machine"),
    CellStatus.BACKEND_MISSING: ("nodev", "no device", "the cell's accelerator (GPU/TPU) is not on this machine"),
    CellStatus.UNRESOLVABLE: ("unres", "unresolvable", "the resolver found no co-installable set (its own message)"),
    CellStatus.INSTALL_ERROR: ("inst!", "install error", "the environment could not be installed"),
    CellStatus.IMPORT_ERROR: ("import", "import error", "a package failed to import (the interpreter's traceback)"),
    CellStatus.RUN_ERROR: ("run!", "run error", "pytest died before running any case"),
    CellStatus.HARNESS_ERROR: ("ours!", "harness error", "jax-compat itself failed before it could look at the "
                               "releases (uv missing, a bug of ours): run it again"),
    CellStatus.NOT_RUN: ("notrun", "not run", "the run was interrupted before this cell finished"),
}


class CellOutcome(Word):
    """A cell's verdict as a whole (its cases have their own ``Outcome``)."""

    OK = "ok"
    EXPECTED = "expected"
    CELL_ERROR = "cell-error"
    STALE = "stale"
    UNAVAILABLE = "unavailable"
    INTERRUPTED = "interrupted"

    @property
    def meaning(self) -> str:
        return _CELL_OUTCOME[self][0]

    @property
    def fails(self) -> bool:
        return _CELL_OUTCOME[self][1]


_CELL_OUTCOME = {
    CellOutcome.OK: ("ran; see its squares", False),
    CellOutcome.EXPECTED: (
        "a known resolve/import-stage failure explains the cell error (does not fail the run)",
        False,
    ),
    CellOutcome.CELL_ERROR: ("a cell error no rule explains (fails the run)", True),
    CellOutcome.STALE: ("an import-stage rule predicted an error but every package imported (fails the run)", True),
    CellOutcome.UNAVAILABLE: ("could not run here (e.g. python missing; does not fail the run)", False),
    CellOutcome.INTERRUPTED: ("the run was interrupted (re-run with --only-missing)", False),
}


class TestStatus(Word):
    """What pytest saw for one test, before any knowledge is applied."""

    __test__ = False  # not a test class, whatever pytest's name pattern says

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    TIMEOUT = "timeout"
    CRASH = "crash"


class Expectation(Word):
    """What the rules predict for a case: a known failure applies (``fail``) or none does."""

    PASS = "pass"
    FAIL = "fail"


class Phase(Word):
    """Where in pytest's protocol a test failed: its module's collection, its fixtures' setup,
    the test itself, or the teardown."""

    COLLECT = "collect"
    SETUP = "setup"
    CALL = "call"
    TEARDOWN = "teardown"

    @property
    def prefix(self) -> str:
        """How reports before the ``phase`` field marked it in the message (read, never written)."""
        return f"[{self.value}] "

    @classmethod
    def of_message(cls, message: str) -> Phase:
        """The phase an old record's message prefix names (``[collect] …``), else CALL."""
        for p in (cls.COLLECT, cls.SETUP, cls.TEARDOWN):
            if message.startswith(p.prefix):
                return p
        return cls.CALL


class BisectState(Word):
    """What one step of a bisection says about the failure."""

    PRESENT = "present"
    ABSENT = "absent"
    UNKNOWN = "cannot say"


class TimelineState(Word):
    """A public name of jax in one release (the timeline's one-letter codes)."""

    PRESENT = "+"
    DEPRECATED = "D"
    REMOVED = "R"  # removed from the module, still answered by its deprecation table
    GONE = "-"
    UNKNOWN = ""  # never changed, or never seen

    @property
    def broken(self) -> bool:
        return self in (TimelineState.REMOVED, TimelineState.GONE)


class FindingLevel(Word):
    """How much a scan finding weighs, as SARIF says it (each rule has one: scanrules/)."""

    ERROR = "error"  # scan's exit status is 1
    WARNING = "warning"  # said, exit 0


class UserTestStatus(Word):
    """The class of one of the user's own tests, before and after (``check --tests``)."""

    __test__ = False

    BROKEN = "broken"
    FAILS = "fails"
    FAILS_BOTH = "fails-both"
    FLAKY = "flaky"
    FIXED = "fixed"
    PASS = "pass"
    SKIPPED = "skipped"


class UserTestSide(Word):
    """What one of the user's own tests did in one environment (``check --tests``)."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERROR = "error"  # crashed, or failed outside the test itself (collect, setup, teardown)
    TIMEOUT = "timeout"  # stopped at the case time limit: how it would have ended is not known
    ABSENT = "absent"  # not collected there (its module could not be imported)

    @property
    def fails(self) -> bool:
        return self in (UserTestSide.FAILED, UserTestSide.ERROR, UserTestSide.TIMEOUT)


RAN = (UserTestSide.PASSED, UserTestSide.FAILED, UserTestSide.ERROR)  # a test's statuses that mean it ran on that side


class BindProblem(Word):
    """Why a call does not bind to a callable's parameters, as Python would say it."""

    TOO_MANY_POSITIONAL = "too many positional arguments"
    UNKNOWN_KEYWORD = "unexpected keyword argument"
    POSITIONAL_ONLY_BY_KEYWORD = "positional-only parameter passed by keyword"
    MULTIPLE_VALUES = "multiple values for one parameter"
    MISSING_REQUIRED = "missing a required argument"


class DependentVerdict(Word):
    """What the crater says of one dependent project (its own tests, baseline and candidate)."""

    BROKEN = "broken"  # a test passed in the baseline and fails in the candidate (after a re-run)
    SAFE = "safe"  # its tests ran on both sides and the candidate broke none
    CAPPED = "capped"  # its own requirements exclude the candidate (or the baseline): not judged, never safe
    NO_SOURCE = "no-source"  # its sdist or git ref could not be fetched or has no tests
    INSTALL_ERROR = "install-error"  # it (or its test dependencies) could not be installed on a side
    NOT_RUN = "not-run"  # installed, but no test ran in the baseline: nothing to compare with
    CRASHED = "crashed"  # the crater's own work on it died (not one test: the whole dependent)
    OVER_BUDGET = "over-budget"  # ran past its time budget and was stopped
    UNREACHABLE = "index-unreachable"  # the package index (or the network) did not answer: never a cap
    NONE_RAN = "none-ran"  # its tests ran in the baseline, none in the candidate (all skipped): not safe

    @property
    def judged(self) -> bool:
        """The candidate was judged on this dependent's tests (broken, safe, or none of them ran in
        the candidate where they ran in the baseline)."""
        return self in (DependentVerdict.BROKEN, DependentVerdict.SAFE, DependentVerdict.NONE_RAN)

    @property
    def meaning(self) -> str:
        return _DEPENDENT[self]


_DEPENDENT = {
    DependentVerdict.BROKEN: "passed in the baseline, fails in the candidate (re-run on both sides first)",
    DependentVerdict.SAFE: "its tests ran on both sides; the candidate broke none of them",
    DependentVerdict.CAPPED: "its own requirements exclude the candidate (the cap is named): not judged",
    DependentVerdict.NO_SOURCE: "its source (sdist or git ref) could not be fetched, or holds no tests",
    DependentVerdict.INSTALL_ERROR: "it or its test dependencies could not be installed on a side",
    DependentVerdict.NOT_RUN: "installed, but none of its tests ran in the baseline: nothing to compare with",
    DependentVerdict.CRASHED: "the crater's work on it died (its cause is kept); the others' results stand",
    DependentVerdict.OVER_BUDGET: "ran past its time budget and was stopped; the others' results stand",
    DependentVerdict.UNREACHABLE: "the package index or the network did not answer on a side: not judged, "
                                  "never a cap",
    DependentVerdict.NONE_RAN: "its tests ran in the baseline and none ran in the candidate (all skipped or not "
                               "collected there): not safe, as check --tests says",
}


class FlakyOrigin(Word):
    """How a test came to be called ``flaky`` (never blamed on the upgrade)."""

    RERUN = "flipped-on-rerun"  # run again on a side (--reruns N), its outcome changed
    AA = "flipped-in-aa"  # the baseline run twice (--aa), its outcome changed by itself
    KNOWN = "flaky-known"  # an earlier --aa learned it flips (the flaky file), and it failed on one side now


class SuiteHealth(Word):
    """Whether a suite's baseline says much: one that mostly fails before the upgrade is judged on the rest."""

    HEALTHY = "healthy"
    UNHEALTHY = "unhealthy"  # more than half of the tests that ran in the baseline fail on both sides


class Kind(Word):
    """How a test case ended, in JUnit's words (report/junit.py writes it; ``TEST_CLASSES`` maps the
    user's tests' classes onto it)."""

    PASSED = "passed"
    FAILURE = "failure"
    ERROR = "error"
    SKIPPED = "skipped"


class EnvironmentKind(Word):
    """Where a cell's environment came from."""

    BUILT = "built"  # the suite resolved and installed it
    EXISTING = "existing"  # it was pointed at (check --env): its versions were read, not chosen


class Verdict(Word):
    """What a run says as a whole, one word per exit status (``model/verdicts.decide``): the first
    thing a report's page shows."""

    SAFE = "safe"  # exit 0
    NOT_SAFE = "not-safe"  # exit 1
    NOT_JUDGED = "could-not-judge"  # exit 2

    @classmethod
    def of(cls, code: int) -> Verdict:
        return {0: cls.SAFE, 1: cls.NOT_SAFE}.get(code, cls.NOT_JUDGED)

    @property
    def label(self) -> str:
        return self.value.replace("-", " ")

    @property
    def meaning(self) -> str:
        return _VERDICT[self]


_VERDICT = {
    Verdict.SAFE: "every selected suite was judged on both sides, with tests run in the candidate, and none broke",
    Verdict.NOT_SAFE: "the candidate breaks a test that passed before (or stops every test that ran before)",
    Verdict.NOT_JUDGED: "something selected was not judged (not run, capped, unreachable, crashed or missing): "
                        "never read as safe",
}
