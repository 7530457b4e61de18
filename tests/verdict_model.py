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
"""

from __future__ import annotations

from dataclasses import dataclass

PASSED, FAILED, ERROR, TIMEOUT, SKIPPED, ABSENT = "passed", "failed", "error", "timeout", "skipped", "absent"
STATUSES = (PASSED, FAILED, ERROR, TIMEOUT, SKIPPED, ABSENT)
FAILING = (FAILED, ERROR, TIMEOUT)
RAN = (PASSED, FAILED, ERROR, TIMEOUT)  # it started in that run (a skip or a test not collected did not)
ENDED = (PASSED, FAILED, ERROR)  # it ran and ended there (health, --aa)
RERUN_BEFORE_BLAME = ("broken", "fails", "fixed")

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

    @property
    def file(self) -> str:
        return self.name.split("::", 1)[0]

    @property
    def seen(self) -> bool:
        """It has a record: it was collected in one of the two first runs."""
        return self.candidate[0] != ABSENT or (self.baseline is not None and self.baseline[0] != ABSENT)


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


OUTRIGHT = (FAILED, ERROR)  # it failed, and how it ended is known (a time-limit stop is not: no evidence)


def evidence(runs: tuple[str, ...]) -> tuple[bool, bool]:
    """(it passed in one of a side's runs, it failed outright in one). A test the first run did not
    collect did not pass there (a failure); a skip, a re-run that did not collect it, or a stop at
    the time limit (how it would have ended is not known) is no evidence either way."""
    return PASSED in runs, runs[0] == ABSENT or any(s in OUTRIGHT for s in runs)


def rerun_changed(runs: tuple[str, ...], reruns: int) -> bool:
    """Whether a side's first run and its first ``reruns`` re-runs hold a pass and an outright failure."""
    passed, failed = evidence(runs[:1 + reruns])
    return passed and failed


def settled(runs: tuple[str, ...], reruns: int) -> str:
    """What a side's runs say (when they agree): passed when one passed, failed outright when one
    did (its first run's way when that is one), else its first run (a time-limit stop, a skip)."""
    seen = runs[:1 + reruns]
    if PASSED in seen:
        return PASSED
    if seen[0] in (FAILED, ERROR, ABSENT):
        return seen[0]
    return next((s for s in seen[1:] if s in OUTRIGHT), seen[0])


def aa_flipped(f: Facts) -> bool:
    """--aa: it ran and ended in both of the baseline's whole runs, passing in one and failing in the other."""
    before = f.baseline[0] if f.baseline else ABSENT
    return before in ENDED and f.aa in ENDED and (before == PASSED) != (f.aa == PASSED)


def final_class(f: Facts, reruns: int, aa: bool) -> str:
    """The class a test ends with: its first class, flaky when known or seen to flip."""
    cls = first_class(f.baseline[0] if f.baseline is not None else None, f.candidate[0])
    if cls not in RERUN_BEFORE_BLAME:  # a pass stays a pass, fails-both is never re-run
        return cls
    if f.known or (aa and f.baseline is not None and aa_flipped(f)):
        return "flaky"
    sides = [f.candidate] + ([f.baseline] if f.baseline is not None else [])
    if any(rerun_changed(runs, reruns) for runs in sides):
        return "flaky"
    # what every run of each side settles on: broken needs the baseline to have passed (or, stopped in
    # every run there, to have failed outright in none) and the candidate to have failed in every run
    # that ended; a baseline that failed outright on a re-run never passed there (fails-both)
    return first_class(settled(f.baseline, reruns) if f.baseline is not None else None, settled(f.candidate, reruns))


def classes(suite: list[Facts], reruns: int, aa: bool) -> dict[str, str]:
    return {f.name: final_class(f, reruns, aa) for f in suite if f.seen}


def ran(suite: list[Facts], side: str) -> int:
    return sum(1 for f in suite if f.seen and (getattr(f, side) or (ABSENT,))[0] in RAN)


def suite_verdict(suite: list[Facts], reruns: int, aa: bool) -> str:
    """The verdict on a suite with a baseline (the crater's dependent, ``check --tests --baseline``),
    decided on the tests that ran on both sides (a test the candidate alone ran compares with nothing)."""
    got = classes(suite, reruns, aa)
    both = [f for f in suite if f.seen and f.baseline[0] in RAN and f.candidate[0] in RAN]
    if ran(suite, "baseline") == 0:
        return NOT_RUN
    if any(c == "broken" for c in got.values()):  # a break is a break, whatever else did not run
        return BROKEN
    if not both:  # none of the tests that ran in the baseline ran in the candidate
        return NONE_RAN
    if all(f.candidate[0] == TIMEOUT and f.baseline[0] == TIMEOUT for f in both):
        return NOT_RUN  # every test that ran on both sides was stopped at the time limit on both: none ended
    return SAFE


def split_verdict(suite: list[Facts], reruns: int, aa: bool, lost_files: set[str], parts_lost: bool) -> str:
    """A split dependent's verdict: its whole suite's, or, with parts that did not come back (their
    files ``lost_files``), broken when a part that came back holds a broken test, else not run."""
    if not parts_lost:
        return suite_verdict(suite, reruns, aa)
    got = classes(suite, reruns, aa)
    kept = [f for f in suite if f.file not in lost_files and f.seen]
    return BROKEN if any(got[f.name] == "broken" for f in kept) else NOT_RUN


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
    got = classes(suite, reruns, aa)
    ran_b = sum(1 for f in suite if f.seen and f.baseline[0] in ENDED)
    both = sum(1 for c in got.values() if c == "fails-both")
    return ran_b > 0 and both > ran_b / 2


def held_run(suite: list[Facts], reruns: int, aa: bool) -> str:
    """What holding the confounder said over the suite's broken tests ("" when none is broken)."""
    got = classes(suite, reruns, aa)
    broken = [f for f in suite if f.seen and got[f.name] == "broken"]
    if not broken:
        return ""
    passing = sum(1 for f in broken if f.held == PASSED)
    return "the cause" if passing == len(broken) else "not the cause" if not passing else "a cause"
