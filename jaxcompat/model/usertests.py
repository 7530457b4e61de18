"""The records of the user's own tests (``check --tests``, the crater): each test's class before
and after an upgrade, and the comparison of a whole suite. No I/O: operations/usertests.py makes
them, report/usertests.py renders them.

The classes a test can get are ``TEST_CLASSES`` below, defined once. Exit status of a check
with --tests: 1 exactly when a test is ``broken`` (with a baseline) or ``fails`` (without one);
``flaky`` never counts as broken.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from jaxcompat._util.text import last_line
from jaxcompat.model.outcomes import RawResult
from jaxcompat.model.records import Record, attr
from jaxcompat.model.sides import Sides
from jaxcompat.model.vocab import RAN, CellStatus, FlakyOrigin, Kind, Phase, TestStatus, UserTestSide, UserTestStatus
from jaxcompat.model.warnings import TestWarning


class UserTestClass(NamedTuple):
    """What a class of user test means, and what follows from it."""

    meaning: str
    heading: str  # its group in the verdict ("": not listed there)
    failed: bool  # it failed in the candidate: explained by a rule, or shown with its traceback
    rerun: bool  # run once more in both environments before blaming (or crediting) the upgrade
    fails_check: tuple[bool, ...] = ()  # fails the check with a baseline (True) / without one (False)
    junit: Kind | None = None  # how it ends in check-tests.xml (None: passed)


# In the verdict's order.
TEST_CLASSES = {
    UserTestStatus.BROKEN: UserTestClass(
        "passed before, fails after: the upgrade's doing",
        "✗ broken by the upgrade (passed before, fail after)",
        True,
        True,
        (True,),
        Kind.FAILURE,
    ),
    UserTestStatus.FAILS: UserTestClass(
        "fails, with no passing run before to compare",
        "✗ failing after (no passing run before to compare)",
        True,
        True,
        (False,),
        Kind.FAILURE,
    ),
    UserTestStatus.FAILS_BOTH: UserTestClass(
        "failed before and after: not the upgrade's doing",
        "· failing before and after (not the upgrade's doing)",
        True,
        False,
        (),
        Kind.FAILURE,
    ),
    UserTestStatus.FLAKY: UserTestClass(
        "its outcome changed when run again (never blamed on the upgrade)",
        "? flaky (the outcome changed when run again; not blamed on the upgrade)",
        False,
        False,
        (),
        Kind.FAILURE,
    ),
    UserTestStatus.FIXED: UserTestClass("failed before, passes after", "✓ fixed by the upgrade", False, True),
    UserTestStatus.PASS: UserTestClass("passes (before too, if it ran)", "", False, False),
    UserTestStatus.SKIPPED: UserTestClass("skipped in the candidate", "", False, False, (), Kind.SKIPPED),
}


@dataclass
class UserTest(Record):
    test: str  # node id, relative to the project
    candidate: UserTestSide
    baseline: UserTestSide | None = attr(omit=lambda t: t.baseline is None)  # None without --baseline
    cls: UserTestStatus = attr(key="class")  # see the module's table
    explained_by: str | None = None
    explained_by_api: str = ""  # no rule explains it, jax's API history does (apiexplain)
    fix: str = ""
    upstream: list[str] = field(default_factory=list)
    message: str = ""
    traceback: str = ""
    note: str = ""
    was: str = attr("", omit=True)  # its id in the baseline, where its function's ids all changed (``renamed``)
    phase: Phase = attr(Phase.CALL, omit=True)  # where it failed: collecting its module, setup, the test, teardown
    new_warnings: list[TestWarning] = attr(default_factory=list, omit=True)  # raised here, not in the baseline
    flaky: FlakyOrigin | None = attr(None, omit=True)  # class flaky: how it came to be
    _keys = ("test", "candidate", "baseline", "explained_by", "explained_by_api", "fix", "upstream", "message",
             "traceback", "note", "was", "phase", "new_warnings", "flaky", "class")  # its class last

    @property
    def shown(self) -> str:
        """The message as a person reads it: where it failed, when not in the test itself."""
        return f"{self.phase.prefix}{self.message}" if self.phase != Phase.CALL and self.message else self.message


def test_class(before: UserTestSide | None, after: UserTestSide) -> UserTestStatus:
    """The class of a test from what it did before (None: no baseline) and after the upgrade."""
    side, cls = UserTestSide, UserTestStatus
    if after == side.SKIPPED:
        return cls.SKIPPED
    if after == side.ABSENT:  # not collected in the candidate (its module failed to import there)
        return cls.BROKEN if before == side.PASSED else cls.SKIPPED
    if before in (None, side.ABSENT, side.SKIPPED):
        return cls.FAILS if after.fails else cls.PASS
    if after.fails:
        # stopped at the time limit in the baseline, failed outright in the candidate: it did not fail
        # before (seen: diffrax's test_against, 495 s in the baseline under load, a ValueError in the
        # candidate at once; "fails-both" hid the break plain pytest shows)
        failed_outright = after != side.TIMEOUT and before == side.TIMEOUT
        return cls.BROKEN if before == side.PASSED or failed_outright else cls.FAILS_BOTH
    return cls.FIXED if before.fails and before != side.TIMEOUT else cls.PASS


# what a skip's reason says when an import failed: importorskip's own words, or the import error's text
# carried into the reason (``except ImportError as e: pytest.skip(f"... {e}")``; red team 9)
_IMPORT_FAILED = ("could not import '", "No module named '", "cannot import name '", "ImportError",
                  "ModuleNotFoundError")


def import_skip(raw) -> bool:
    """A skip for an import that fails (``pytest.importorskip``: "could not import 'x': ..."). A test
    that passed in the baseline and is so skipped in the candidate lost a module it needs there: it
    is broken (plain pytest says "skipped" and exits 0; a suite whose tests skip themselves out of
    the candidate is not safe); so is one whose skip's reason carries an import error's text, or that
    the plugin saw made for an import error (a skip's ``error_types``: the classes of that error;
    importorskip given a reason of its own, a skip made in ``except ImportError`` or while an import
    raised; plugin/pytest_plugin._import_failure). Other
    skip reasons (``skipif`` on a version, a missing device) are the project's own choice and stay
    skipped."""
    if raw is None:
        return False
    made_for = raw.status == TestStatus.SKIPPED and bool(raw.error_types)
    return made_for or any(m in (raw.message or "") for m in _IMPORT_FAILED)


def renamed(candidate: Observed, baseline: Observed) -> dict[str, str]:
    """The parametrized tests whose ids changed wholesale between the sides (ids built from
    ``str(device)``: ``test_x[cpu:0]`` in the baseline, ``test_x[TFRT_CPU_0]`` in the candidate):
    candidate id -> the baseline's id it stands for, so that the two are judged as one test. Only
    where a test function (its id without ``[...]``) has as many ids on each side, none in common,
    and every one of the baseline's passed: they are paired in the order pytest ran them (the order
    of the results), which may pair the wrong ids; so a pair is judged by its candidate's runs alone
    (every baseline id passed; no re-run or flakiness of the baseline id is read for it: red team 9).
    Anything less (ids in common, counts that differ, a baseline
    id that did not pass) is left as it is: a test absent in the candidate is broken."""
    sides = [_by_function(candidate.results), _by_function(baseline.results)]
    out: dict[str, str] = {}
    for function, after in sides[0].items():
        before = sides[1].get(function, [])
        if (len(after) == len(before) and not set(after) & set(before)
                and all(status(baseline.results[b]) == UserTestSide.PASSED for b in before)):
            out.update(zip(after, before, strict=True))
    return out


def _by_function(results: dict[str, RawResult]) -> dict[str, list[str]]:
    """The parametrized tests' ids (``file::test[id]``), in the order of ``results``, per function."""
    out: dict[str, list[str]] = {}
    for name, raw in results.items():
        if function_of(name) != name and raw.phase != Phase.COLLECT:
            out.setdefault(function_of(name), []).append(name)
    return out


def function_of(name: str) -> str:
    """A parametrized test's id without its parameters (``file::test[id]`` -> ``file::test``); else ``name``."""
    cut = name.find("[", name.find("::"))
    return name[:cut] if "::" in name and cut > 0 and name.endswith("]") else name


def changed(runs: list[UserTestSide]) -> bool:
    """Whether a side's runs of a test (its first, then its re-runs) disagree: it passed in one and
    failed outright in another (failed, error; a test the first run did not collect did not pass
    there). A time-limit stop is how it would have ended not known: no evidence either way, as a
    skip or a re-run that did not collect it. So a test that fails on every run of a side, whatever
    the way, never changed."""
    passed, failed = _evidence(runs)
    return passed and failed


def settled(runs: list[UserTestSide]) -> UserTestSide:
    """What a side's runs of a test say it does (when they agree, ``changed``): passed when a run
    passed, failed outright when one did, else as its first run (stopped at the time limit, skipped)."""
    passed, _ = _evidence(runs)
    if passed:
        return UserTestSide.PASSED
    if runs[0] in (UserTestSide.FAILED, UserTestSide.ERROR, UserTestSide.ABSENT):
        return runs[0]
    return next((s for s in runs[1:] if s in (UserTestSide.FAILED, UserTestSide.ERROR)), runs[0])


def _evidence(runs: list[UserTestSide]) -> tuple[bool, bool]:
    """(it passed in a run, it failed outright in one)."""
    outright = (UserTestSide.FAILED, UserTestSide.ERROR)
    return (UserTestSide.PASSED in runs,
            runs[0] == UserTestSide.ABSENT or any(s in outright for s in runs))


def stopped_both(tests: list[UserTest]) -> list[UserTest]:
    """The tests stopped at the time limit on both sides: fails-both, but not judged (plain pytest,
    with no limit, would have seen them end)."""
    return [t for t in tests if t.candidate == UserTestSide.TIMEOUT and t.baseline == UserTestSide.TIMEOUT]


RAN_SIDES = (UserTestSide.PASSED, UserTestSide.FAILED, UserTestSide.ERROR, UserTestSide.TIMEOUT)  # it started


def ran_both(tests: list[UserTest]) -> list[UserTest]:
    """The tests that started on both sides (a skip, a test not collected, or one standing for its
    module that could not be collected, did not start there)."""
    return [t for t in tests if t.baseline is not None and t.baseline in RAN_SIDES and t.candidate in RAN_SIDES
            and not (t.phase == Phase.COLLECT and t.candidate.fails)]


def counts(tests: list[UserTest]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in tests:
        out[t.cls] = out.get(t.cls, 0) + 1
    return dict(sorted(out.items()))


def failing(tests: list[UserTest], with_baseline: bool) -> list[UserTest]:
    return [t for t in tests if with_baseline in TEST_CLASSES[t.cls].fails_check]


@dataclass
class Comparison:
    tests: list[UserTest]
    with_baseline: bool
    error: str = ""  # the tests could not start in the candidate
    candidate_versions: dict[str, str] = field(default_factory=dict)
    baseline_versions: dict[str, str] = field(default_factory=dict)
    baseline_error: str = ""
    status: dict[str, CellStatus] = field(default_factory=dict)  # how far each side's environment got
    ran: dict[str, int] = field(default_factory=dict)  # tests that ran, per side
    uncollectable: dict[str, list[str]] = field(default_factory=dict)  # modules, per side
    candidate_cause: str = ""
    baseline_cause: str = ""
    sides: Sides | None = None  # with a baseline: what the sides share, and their confounders
    learned: dict[str, str] = field(default_factory=dict)  # --aa: tests that flipped by themselves
    cells: dict[str, str] = field(default_factory=dict)  # the cell's id, per side
    test_dependencies: list[str] = field(default_factory=list)  # what was installed for the tests
    left_out: list[str] = field(default_factory=list)  # of them, what the candidate pins itself
    timeout_s: float = 0.0  # one test's time limit they ran under
    baseline_reused: str = ""  # the baseline's run re-used from the result cache: when it ran ("" = now)

    @property
    def unjudged(self) -> str:
        """Why no verdict on the upgrade can be given ("" when one can): the tests did not run in
        the baseline (nothing to compare with), or, without a baseline, not in the candidate."""
        # a module the baseline collected and the candidate cannot (its tests all skipped before) is
        # judged broken though none ran before (red team 10, D1: --rerun-failures of it said "cannot judge")
        broke = any(t.cls == UserTestStatus.BROKEN for t in self.tests)
        if self.with_baseline and not self.ran.get("baseline") and not broke:
            both = " nor in the candidate" if not self.ran.get("candidate") else ""
            return (
                f"your tests did not run in the baseline{both}: {self.baseline_cause or last_line(self.baseline_error)}"
            )
        if not self.with_baseline and not self.ran.get("candidate"):
            return f"your tests did not run in the candidate: {self.candidate_cause or last_line(self.error)}"
        both = ran_both(self.tests)  # a test broken beside tests stopped on both sides is judged: it passed before
        if self.with_baseline and both and len(stopped_both(both)) == len(both) and not failing(self.tests, True):
            return (f"every test that ran was stopped at the time limit ({self.timeout_s:g} s) on both sides (a test "
                    "only the candidate ran compares with nothing): none ended, none was judged; give them longer "
                    "(--test-timeout, or test_timeout_s for the crater)")
        return ""

    @property
    def none_ran(self) -> bool:
        """Its tests ran in the baseline and none of those ran in the candidate (all skipped, not
        collected there): a test that ran in the candidate alone compares with nothing. Without a
        baseline: none ran in the candidate."""
        if not self.ran.get("candidate"):
            return True
        return self.with_baseline and not ran_both(self.tests)

    @property
    def failed(self) -> bool:
        return bool(self.error) or bool(failing(self.tests, self.with_baseline)) or self.none_ran


@dataclass(frozen=True)
class Confirm:
    """How a break is confirmed before blame: re-runs of what changed, on both sides (``reruns``,
    0 = none), the baseline run twice to learn the tests that flip by themselves (``aa``), and the
    tests an earlier --aa learned flip (``known``: test -> what was seen)."""

    reruns: int = 1
    aa: bool = False
    known: tuple[tuple[str, str], ...] = ()


@dataclass
class Observed:
    """The user's tests in one environment."""

    results: dict[str, RawResult] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    error: str = ""  # why the tests could not start there (install, resolution, pytest itself)
    status: CellStatus = CellStatus.OK  # how far its environment got (not OK: ``error`` says why)
    cause: str = ""  # when no test ran: the one-line cause and how to provide what is missing
    warning_filter: str = ""  # the project's setting that turns a DeprecationWarning into an error, if any
    locked: dict[str, str] = field(default_factory=dict)  # every package of the environment's lock
    reused: str = ""  # re-used from the result cache: when it ran (``kept``); "" = it ran now

    @property
    def ran(self) -> int:
        """Tests that started (passed, failed, crashed or hung): skips and modules that could not
        be collected are not runs."""
        return sum(1 for r in self.results.values() if r.status != TestStatus.SKIPPED and not collect_error(r))

    @property
    def collected_nothing(self) -> bool:
        """pytest ran to its end and found nothing to run (exit 5: ``no_test``), as a split part
        may; not a pytest stopped before collecting (an INTERNALERROR, a usage error)."""
        return not self.results and self.error.startswith(no_test(5, ""))

    @property
    def uncollectable(self) -> list[str]:
        """Modules (or the session, ".") that could not be collected."""
        return [k for k, r in self.results.items() if collect_error(r)]


def no_test(rc: int, tail: str) -> str:
    """Why no test started, where pytest ran and none did (``Observed.error``)."""
    return f"pytest exited with code {rc} before running any test:\n{tail}"


def collect_error(raw: RawResult) -> bool:
    return raw.phase == Phase.COLLECT and raw.status != TestStatus.SKIPPED


def collect_skip(raw: RawResult) -> bool:
    """A module (or folder) that skipped itself whole while it was collected: none of its tests ran."""
    return raw.phase == Phase.COLLECT and raw.status == TestStatus.SKIPPED


def status(raw: RawResult | None) -> UserTestSide:
    if raw is None:
        return UserTestSide.ABSENT
    if raw.status == TestStatus.TIMEOUT:
        return UserTestSide.TIMEOUT
    if raw.status == TestStatus.CRASH or (raw.status == TestStatus.FAILED and raw.phase != Phase.CALL):
        return UserTestSide.ERROR
    return UserTestSide(raw.status.value)


def fails(s: UserTestSide | None) -> bool:
    return s is not None and s.fails


def suspects(tests: list[UserTest]) -> list[str]:
    """The tests to run once more before blaming (or crediting) the upgrade."""
    return [t.test for t in tests if TEST_CLASSES[t.cls].rerun]


def flips(first: Observed, second: Observed) -> dict[str, str]:
    """The tests that passed in one of two runs of the same environment and failed in the other."""
    if second.error:
        return {}
    out = {}
    for name in first.results.keys() & second.results.keys():
        s1, s2 = status(first.results[name]), status(second.results[name])
        if s1 in RAN and s2 in RAN and fails(s1) != fails(s2):
            out[name] = f"{s1}, then {s2}"
    return dict(sorted(out.items()))



# ---------------------------------------------------------------- which record stands for a test


def _stands_for(key: str, name: str) -> bool:
    """Whether the collection error ``key`` (a module, a folder, or ".") covers the test ``name``."""
    return key == "." or name.startswith(key + "::") or name.startswith(key + "/")


def enclosing(name: str, broken: dict[str, RawResult]) -> RawResult | None:
    """The collection error (or skip) that stands for a test that was not collected: its class's
    (``test_x.py::TestY``: a class skipped whole while collected; red team 12, B1), else its module's,
    else the nearest folder's (a conftest there failed), else the session's (".")."""
    parts = name.split("::")
    for i in range(len(parts) - 1, 1, -1):
        if "::".join(parts[:i]) in broken:
            return broken["::".join(parts[:i])]
    path = parts[0]
    while True:
        if path in broken:
            return broken[path]
        if "/" not in path:
            return broken.get(".")
        path = path.rpartition("/")[0]


def module_records(run: Observed | None) -> dict[str, RawResult]:
    """The records, in ``run``, of the modules (or folders, or ".") that could not be collected or
    that skipped themselves whole at import."""
    return {k: r for k, r in (run.results if run else {}).items() if collect_error(r) or collect_skip(r)}


def seen_in(run: Observed, errors: bool = False):
    """A test's record in ``run`` (name -> record): its own, else the skip of its module (or folder)
    that skipped itself whole there; with ``errors`` (the candidate's first run, as ``classify``
    reads it) the error of its module that could not be collected there. Elsewhere such an error is
    no evidence: the baseline's own run did not run the test (it "did not pass before"), and a re-run
    of one test id can fail to collect what the whole run collected (a path a sibling module added:
    red team 10, B1, a break read flaky)."""
    whole = {k: r for k, r in module_records(run).items() if errors or collect_skip(r)}
    return lambda name: run.results.get(name) or enclosing(name, whole)


def standing_in(candidate: Observed, baseline: Observed | None, broken_modules: dict[str, RawResult],
                broken_before: dict[str, RawResult]) -> set[str]:
    """The module records not listed, each standing in for its tests. A module that cannot even be
    imported in the candidate: its tests take its error, and the module's own record is not counted
    again beside them; one that skipped itself whole at import there (pytest.skip(allow_module_level=True),
    a module-level importorskip): its tests take its skip. And the other way: a module that could not
    be collected (or skipped itself) in the baseline gives its tests that ran in the candidate its
    record as their baseline (they did not pass before)."""
    if baseline is None:
        return set()
    after = {m for m in broken_modules
             if any(_stands_for(m, t) and t not in candidate.results for t in baseline.results)}
    return after | {m for m in broken_before if m not in candidate.results
                    and any(_stands_for(m, t) and t not in baseline.results for t in candidate.results)}


def no_longer_imported(broken: dict[str, RawResult], baseline: Observed) -> set[str]:
    """The candidate's modules (or folders) that cannot be collected, where the baseline collected
    them and none of their tests passed there: no test of theirs can read broken, yet plain pytest
    went from exit 0 to a collection error, so their own record is the break (red team 9, A4; red
    team 10, C1/C2). Collected there: its environment built, its pytest run to its end, no collection
    error of the module, of a folder above it or of a module under it (red team 11, A2/A3); it may
    have skipped itself whole, or held no test."""
    if baseline.status != CellStatus.OK or (not baseline.results and not baseline.collected_nothing):
        return set()  # its pytest stopped before collecting (red team 11, A2: a conftest's INTERNALERROR)
    errors_before = {k: r for k, r in baseline.results.items() if collect_error(r)}
    seen = [(t, r) for t, r in baseline.results.items() if not collect_error(r) and not collect_skip(r)]
    return {m for m, r in broken.items() if collect_error(r) and enclosing(m, errors_before) is None
            and not any(_stands_for(m, k) for k in errors_before)  # a folder holding one (red team 11, A3)
            and not any(_stands_for(m, t) and x.status == TestStatus.PASSED for t, x in seen)}


def before_of(name: str, was: str, baseline: Observed | None, broken_before: dict[str, RawResult],
              lost: bool) -> tuple[RawResult | None, UserTestSide | None, UserTestSide | None]:
    """A record's baseline (``was``: its id there): (its record, its status as shown, the status it
    is judged by). A test whose module (or folder) could not be collected or skipped itself whole
    there did not run before: absent (never a test that ran on both sides). A module no longer
    imported (``lost``) was collected there (or skipped itself whole): exit 0 there, a collection
    error now, judged as passed before."""
    if baseline is None:
        return None, None, None
    raw = baseline.results.get(was) or enclosing(name, broken_before)
    before = UserTestSide.ABSENT if was not in baseline.results and raw is not None else status(raw)
    if lost:
        shown = UserTestSide.SKIPPED if before == UserTestSide.SKIPPED else UserTestSide.PASSED
        return None, shown, UserTestSide.PASSED
    return raw, before, before
