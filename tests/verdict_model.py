"""The reference model of the verdict: what ``check --tests`` and the crater must answer, from the raw
facts alone, written apart from the implementation (nothing of jaxcompat is imported here; a test
holds this module to that). Slow and obvious on purpose; ``tests/test_verdict_model.py`` generates
suites and holds the judge to it.

The facts of one test (``Facts``): what it did on each side in the first run and in each re-run
(passed, failed, error — a crash, or a failure outside the test itself —, timeout — stopped at the
time limit —, skipped, absent — not collected in that run), in the baseline's second whole run
(``--aa``), whether the flaky file names it, and what it did with a confounder held at the
baseline's version. The facts of a run: the re-runs asked for, --aa, which parts of a split
dependent came back, which stored results a plan names.

What follows from them:

- A test's first class, from its two first runs (``first_class``).
- Re-runs and flaky knowledge: a test of a class that is re-run before blame (broken, fails,
  fixed) is flaky when the flaky file names it, when --aa saw it pass in one of the baseline's two
  runs and fail in the other, or when one side's runs (its first and its re-runs) hold a pass and an
  outright failure (failed, error; the first run not collecting it). A stop at the time limit is
  no evidence (how it would have ended is not known), nor is a skip or a re-run that did not
  collect it. Else its class is the first class of what each side's runs settle on: passed when
  one passed, failed outright when one did, else its first run. So a test that passed in the
  baseline and fails on every candidate run is broken; a baseline stopped, then failing outright,
  never passed (fails-both); one that passed, then was stopped, still passed.
- A suite's verdict (``suite_verdict``), on the tests that ran on both sides (a test the candidate
  alone ran compares with nothing): not run when none ran in the baseline; none ran (not safe)
  when none of those ran in the candidate; broken when one is; not run when every test that ran on
  both sides was stopped at the time limit on both; else safe. It is the whole suite's: splitting
  it in parts never changes it.
- A split dependent with a part that did not come to a comparison (missing, a side not installed,
  left from an earlier run) or with parts of different releases: broken when a part compared holds
  a broken test (nothing else can mend a break), else not run.
- A result no plan names (left from another or an earlier run, or written by no shard whose plan
  is stored) never enters a verdict; plans of two runs (another candidate, baseline, day, Python or
  index) are refused: exit 2.
- The exit: 1 when a suite is broken or none of its tests ran in the candidate; 0 when every one
  is safe; else 2 (nothing at all is 2 too).
- Health: unhealthy when more than half of the tests that ran in the baseline (passed, failed or
  error there) fail on both sides. A confounder held at the baseline's version: "the cause" when
  every broken test passes then, "not the cause" when none does, "a cause" between, not tried when
  no test is broken.

Modules (``Facts.candidate_module``, ``baseline_module``, ``aa_module``: the state of the test's
module in each run of a side — the first, then each re-run — and in --aa's second baseline run;
every test of a file holds the same). A module is ``ok`` (collected), ``uncollectable`` (an
error at import: pytest reports one record for the module, its file path, and none of its
tests), or skips itself whole at import (``skips``; ``skips-import`` when the skip's reason is an
import error's text, "could not import 'x'", "No module named 'x'"). Plain pytest's ground truth:
a suite that goes from exit 0 to a collection error is not safe; a test that never ran before
compares with nothing; a skip is no evidence either way.

- A test is seen when it was collected in one of the two first runs (its module collected there).
  Where its module could not be collected in a run, the module's error stands for it there: in
  the candidate it fails (``error``: passed before, broken; failed before, fails-both; never ran
  before, fails), in the baseline it did not run (it compares with nothing: fails or pass). Where
  its module skipped itself, it is skipped there; a test that passed before whose module skipped
  itself in the candidate for an import error lost a module it needs: broken.
- Re-runs read a test's module as the first run does: its module's error is an outright failure
  on that side (a test that passed in one of a side's runs and whose module could not be collected
  in another is flaky), its module's skip no evidence, nor a re-run (of the test alone) that cannot
  collect its module: one test run alone can miss what the whole run collected (a path a sibling
  module put on sys.path), so it is a re-run that did not collect it (red team 10, B1: a break read
  flaky). A side's runs settle as above: a test whose module could not be collected in the
  baseline's first run did not run there (fails, as with no re-run, not fails-both).
- A module's own record is listed where none of its tests stands for it: where it could not be
  collected (or skipped itself) in the candidate and none of its tests was collected in the
  baseline, or where it was collected in the candidate with none of its tests and not in the
  baseline. Its class: skipped itself in the candidate, or collected there: skipped; cannot be
  collected in the candidate: fails without a baseline, fails-both where it could not be collected
  in the baseline either, else broken (the baseline collected it, or it skipped itself there:
  plain pytest went from exit 0 to a collection error).
- A module the baseline collected, with its tests, none of which passed there (skipped by
  markers, failing), that cannot be collected in the candidate: its tests take its error (fails,
  fails-both) and it is listed itself as broken, baseline "passed" (it imported: exit 0 to a
  collection error). Where one of its tests passed before, that test is the break and the module
  is not listed.
- A module's own record is never re-run, and a test whose module the candidate's whole first run
  could not collect is not re-run there: one test or module run alone can import what the whole run
  could not, or the other way round (red team 11, A1: a break read flaky, exit 0). A module whose
  import flips therefore keeps the class of its first run: a false alarm kept rather than a wrong
  safe. The baseline's re-runs of such a test still count (the test itself ran there).
- --aa: a module's record never flips (a test whose module was not collected in one of the two
  baseline runs did not run and end in both). A module record counts as one test in the suite's
  health (its baseline: passed where collected, error where not). The confounder's held run
  collects every module.
- A test, or a module, standing for a module that could not be collected did not run on that
  side: it is never one of the tests that ran on both sides, and the side's count of tests that
  ran leaves it out.
- A suite none of whose tests ran in the baseline (all skipped there) is broken where a module its
  baseline collected cannot be collected in the candidate (that record reads broken: plain pytest
  went from exit 0 to a collection error; red team 10, D1: --rerun-failures of that module said
  "cannot judge"); else not judged (not run, exit 2). That holds where the baseline's pytest found
  nothing else to run at all: a split dependent's part may hold only that module, and a part is
  judged as its whole suite would be.
- Design choice kept (not safe either way): without a
  baseline, a suite none of whose tests ran in the candidate (every module uncollectable) is not
  judged (exit 2), not failing (exit 1): nothing tells the upgrade's doing from the environment's.
"""

from __future__ import annotations

from dataclasses import dataclass

PASSED, FAILED, ERROR, TIMEOUT, SKIPPED, ABSENT = "passed", "failed", "error", "timeout", "skipped", "absent"
STATUSES = (PASSED, FAILED, ERROR, TIMEOUT, SKIPPED, ABSENT)
FAILING = (FAILED, ERROR, TIMEOUT)
RAN = (PASSED, FAILED, ERROR, TIMEOUT)  # it started in that run (a skip or a test not collected did not)
ENDED = (PASSED, FAILED, ERROR)  # it ran and ended there (health, --aa)
RERUN_BEFORE_BLAME = ("broken", "fails", "fixed")

OK, UNCOLLECTABLE, SKIPS, SKIPS_IMPORT = "ok", "uncollectable", "skips", "skips-import"
MODULE_STATES = (OK, UNCOLLECTABLE, SKIPS, SKIPS_IMPORT)
MODULE_ERROR = "module-error"  # in that run its module could not be collected: the module's error stands for it

SAFE, BROKEN, NONE_RAN, NOT_RUN = "safe", "broken", "none-ran", "not-run"


@dataclass(frozen=True)
class Facts:
    """One test's raw facts."""

    name: str  # its node id: FILE::NAME
    candidate: tuple[str, ...]  # the first run, then each re-run
    baseline: tuple[str, ...] | None  # the same; None: no baseline side (``check --tests`` alone)
    aa: str = ABSENT  # the baseline's second whole run (--aa)
    known: bool = False  # the flaky file names it
    held: str = PASSED  # in the candidate with the confounder held at the baseline's version
    candidate_module: tuple[str, ...] = ()  # its module in each candidate run (the first, the re-runs); (): ok
    baseline_module: tuple[str, ...] = ()  # the same in the baseline
    aa_module: str = OK  # its module in --aa's second baseline run

    @property
    def file(self) -> str:
        return self.name.split("::", 1)[0]

    def module(self, side: str, k: int) -> str:
        """Its module's state in a side's ``k``-th run (0: the first)."""
        states = self.candidate_module if side == "candidate" else self.baseline_module
        return states[min(k, len(states) - 1)] if states else OK

    def collected(self, side: str) -> bool:
        """It was collected in the side's first run (its module too)."""
        runs = getattr(self, side)
        return runs is not None and self.module(side, 0) == OK and runs[0] != ABSENT

    @property
    def seen(self) -> bool:
        """It has a record: it was collected in one of the two first runs."""
        return self.collected("candidate") or self.collected("baseline")


def in_run(f: Facts, side: str, k: int) -> str:
    """What a side's ``k``-th run says of a test: its own status where its module was collected,
    else its module's skip, or, in the first run, its module's error (``MODULE_ERROR``); a re-run
    (of the test alone) that cannot collect its module did not collect it (absent)."""
    state = f.module(side, k)
    if state == OK:
        runs = getattr(f, side)
        return runs[min(k, len(runs) - 1)]
    if state == UNCOLLECTABLE:  # on a re-run of the test alone: no evidence (not collected there)
        return MODULE_ERROR if k == 0 else ABSENT
    return SKIPPED


def first_class(before: str | None, after: str) -> str:
    """A test's class from its first run before (None: no baseline) and after."""
    if after == SKIPPED:
        return "skipped"
    if after == ABSENT:  # not collected in the candidate: broken if it passed before, else not judged here
        return "broken" if before == PASSED else "skipped"
    if before in (None, ABSENT, SKIPPED):  # nothing ran before to compare with
        return "fails" if after in FAILING else "pass"
    if after in FAILING:
        if before == PASSED:
            return "broken"
        if before == TIMEOUT and after != TIMEOUT:  # stopped before, failed outright now: it did not fail before
            return "broken"
        return "fails-both"
    return "fixed" if before in (FAILED, ERROR) else "pass"  # a test stopped before and passing now: a pass


def test_class(f: Facts, before: str | None, after: str) -> str:
    """``first_class`` of what a side says: its module's error in the candidate fails there (error),
    in the baseline it did not run (absent); a test that passed before whose module skipped itself
    in the candidate's first run for an import error is broken."""
    cls = first_class(ABSENT if before == MODULE_ERROR else before, ERROR if after == MODULE_ERROR else after)
    if cls == "skipped" and before == PASSED and f.module("candidate", 0) == SKIPS_IMPORT:
        return "broken"
    return cls


OUTRIGHT = (FAILED, ERROR, MODULE_ERROR)  # it failed, and how it ended is known (a time-limit stop is not)


def evidence(runs: tuple[str, ...]) -> tuple[bool, bool]:
    """(it passed in one of a side's runs, it failed outright in one). A test the first run did not
    collect did not pass there (a failure), nor one whose module could not be collected in a run;
    a skip (its own or its module's), a re-run that did not collect it, or a stop at the time limit
    (how it would have ended is not known) is no evidence either way."""
    return PASSED in runs, runs[0] == ABSENT or any(s in OUTRIGHT for s in runs)


def rerun_changed(runs: tuple[str, ...]) -> bool:
    """Whether a side's runs hold a pass and an outright failure."""
    passed, failed = evidence(runs)
    return passed and failed


def settled(seen: tuple[str, ...]) -> str:
    """What a side's runs say (when they agree): passed when one passed, failed outright when one
    did (its first run's way when that is one), else its first run (a time-limit stop, a skip)."""
    if PASSED in seen:
        return PASSED
    if seen[0] in (FAILED, ERROR, ABSENT, MODULE_ERROR):
        return seen[0]  # (its module's error in the first run: in the baseline it did not run there)
    # its module's error on a re-run: it failed there (a baseline that could not collect it failed before)
    return next((ERROR if s == MODULE_ERROR else s for s in seen[1:] if s in OUTRIGHT), seen[0])


def runs_of(f: Facts, side: str, reruns: int) -> tuple[str, ...]:
    """A side's runs of a test; in the candidate, one whose module its first run could not collect
    has that run alone: a re-run of it alone may import what the whole run could not (red team 11, A1)."""
    if side == "candidate" and in_run(f, side, 0) == MODULE_ERROR:
        return (MODULE_ERROR,)
    return tuple(in_run(f, side, k) for k in range(1 + reruns))


def aa_flipped(f: Facts) -> bool:
    """--aa: it ran and ended in both of the baseline's whole runs, passing in one and failing in the other."""
    before = in_run(f, "baseline", 0) if f.baseline else ABSENT
    again = f.aa if f.aa_module == OK else ABSENT
    return before in ENDED and again in ENDED and (before == PASSED) != (again == PASSED)


def final_class(f: Facts, reruns: int, aa: bool) -> str:
    """The class a test ends with: its first class, flaky when known or seen to flip."""
    before = in_run(f, "baseline", 0) if f.baseline is not None else None
    cls = test_class(f, before, in_run(f, "candidate", 0))
    if cls not in RERUN_BEFORE_BLAME:  # a pass stays a pass, fails-both is never re-run
        return cls
    if f.known or (aa and f.baseline is not None and aa_flipped(f)):
        return "flaky"
    sides = [runs_of(f, "candidate", reruns)] + ([runs_of(f, "baseline", reruns)] if f.baseline is not None else [])
    if any(rerun_changed(runs) for runs in sides):
        return "flaky"
    # what every run of each side settles on: broken needs the baseline to have passed (or, stopped in
    # every run there, to have failed outright in none) and the candidate to have failed in every run
    # that ended; a baseline that failed outright on a re-run never passed there (fails-both)
    return test_class(f, settled(sides[1]) if f.baseline is not None else None, settled(sides[0]))


# -------------------------------------------------------------------- modules' own records


def _files(suite: list[Facts]) -> dict[str, list[Facts]]:
    out: dict[str, list[Facts]] = {}
    for f in suite:
        out.setdefault(f.file, []).append(f)
    return out


def _module_class(before: str | None, after: str) -> str:
    """A module's class from what it did (its record is never re-run; the baseline's collected is passed)."""
    if after != ERROR:
        return "skipped"
    if before in (None, ABSENT):
        return "fails"
    return "fails-both" if before == ERROR else "broken"


def module_records(suite: list[Facts], reruns: int) -> dict[str, tuple[str | None, str]]:
    """The modules listed as records of their own: module -> (its baseline, its class)."""
    out = {}
    for file, tests in _files(suite).items():
        with_baseline = tests[0].baseline is not None
        after_state = tests[0].module("candidate", 0)
        before_state = tests[0].module("baseline", 0) if with_baseline else None
        in_candidate = any(f.collected("candidate") for f in tests)
        in_baseline = any(f.collected("baseline") for f in tests)
        lost = (after_state == UNCOLLECTABLE and in_baseline
                and not any(f.baseline[0] == PASSED for f in tests if f.collected("baseline")))
        if after_state != OK and (not in_baseline or lost):
            before = {None: None, OK: PASSED, UNCOLLECTABLE: ERROR}.get(before_state, SKIPPED)
            out[file] = (before, _module_class(before, ERROR if after_state == UNCOLLECTABLE else SKIPPED))
        elif after_state == OK and with_baseline and before_state != OK and not in_candidate:
            out[file] = (ERROR if before_state == UNCOLLECTABLE else SKIPPED, "skipped")
    return out


def records(suite: list[Facts], reruns: int, aa: bool) -> dict[str, tuple[str | None, str]]:
    """Every record: test or module -> (its baseline, its class)."""
    out = {f.name: (_before(f), final_class(f, reruns, aa)) for f in suite if f.seen}
    out.update(module_records(suite, reruns))
    return out


def _before(f: Facts) -> str | None:
    """A test's baseline as its record says: absent where its module was not collected there."""
    if f.baseline is None:
        return None
    return f.baseline[0] if f.module("baseline", 0) == OK else ABSENT


def classes(suite: list[Facts], reruns: int, aa: bool) -> dict[str, str]:
    return {name: cls for name, (_, cls) in records(suite, reruns, aa).items()}


def ran(suite: list[Facts], side: str) -> int:
    """The tests that started in a side's first run (a module that could not be collected is no run)."""
    return sum(1 for f in suite if f.seen and getattr(f, side) is not None and in_run(f, side, 0) in RAN)


def ran_both(suite: list[Facts]) -> list[Facts]:
    return [f for f in suite if f.seen and f.baseline is not None
            and in_run(f, "baseline", 0) in RAN and in_run(f, "candidate", 0) in RAN]


def suite_verdict(suite: list[Facts], reruns: int, aa: bool) -> str:
    """The verdict on a suite with a baseline (the crater's dependent, ``check --tests --baseline``),
    decided on the tests that ran on both sides (a test the candidate alone ran compares with nothing)."""
    got = classes(suite, reruns, aa)
    both = ran_both(suite)
    if any(c == "broken" for c in got.values()):  # a break is a break, whatever else did not run
        return BROKEN
    if ran(suite, "baseline") == 0:
        return NOT_RUN
    if not both:  # none of the tests that ran in the baseline ran in the candidate
        return NONE_RAN
    if all(in_run(f, "candidate", 0) == TIMEOUT and in_run(f, "baseline", 0) == TIMEOUT for f in both):
        return NOT_RUN  # every test that ran on both sides was stopped at the time limit on both: none ended
    return SAFE


def split_verdict(suite: list[Facts], reruns: int, aa: bool, lost_files: set[str], parts_lost: bool) -> str:
    """A split dependent's verdict: its whole suite's, or, with parts that did not come back (their
    files ``lost_files``), broken when a part that came back holds a broken test, else not run."""
    if not parts_lost:
        return suite_verdict(suite, reruns, aa)
    got = classes(suite, reruns, aa)
    return BROKEN if any(c == "broken" for name, c in got.items() if name.split("::")[0] not in lost_files) \
        else NOT_RUN


def check_exit(suite: list[Facts], reruns: int, aa: bool) -> int:
    """``check --tests``: with a baseline as the suite's verdict says; alone, 2 when none ran in the
    candidate, 1 when one fails, else 0."""
    if suite and suite[0].baseline is not None:
        return run_exit([suite_verdict(suite, reruns, aa)])
    if ran(suite, "candidate") == 0:
        return 2
    return 1 if "fails" in classes(suite, reruns, aa).values() else 0


def run_exit(verdicts: list[str]) -> int:
    if any(v in (BROKEN, NONE_RAN) for v in verdicts):
        return 1
    return 0 if verdicts and all(v == SAFE for v in verdicts) else 2


def unhealthy(suite: list[Facts], reruns: int, aa: bool) -> bool:
    got = records(suite, reruns, aa)
    ran_b = sum(1 for before, _ in got.values() if before in ENDED)
    both = sum(1 for _, c in got.values() if c == "fails-both")
    return ran_b > 0 and both > ran_b / 2


def held_run(suite: list[Facts], reruns: int, aa: bool) -> str:
    """What holding the confounder said over the suite's broken tests ("" when none is broken); a
    broken module is collected there (it passes)."""
    got = classes(suite, reruns, aa)
    broken = [name for name, c in got.items() if c == "broken"]
    if not broken:
        return ""
    held = {f.name: f.held for f in suite}
    passing = sum(1 for name in broken if held.get(name, PASSED) == PASSED)
    return "the cause" if passing == len(broken) else "not the cause" if not passing else "a cause"
