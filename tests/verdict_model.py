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
  runs and fail in the other, or when a re-run on either side passed where that side's first run
  failed (or was not collected) or failed where it passed. Failing is failing whatever the way:
  failed, error and timeout are one outcome; a skip, or a re-run that did not collect it, is no
  evidence. So a test that passed in the baseline and fails on every candidate run is broken.
- A suite's verdict (``suite_verdict``): not run when none of its tests ran in the baseline, or
  when every test that ran was stopped at the time limit on both sides and none is broken; none
  ran (not safe) when tests ran in the baseline and none in the candidate; broken when one is;
  else safe. It is the whole suite's: splitting it in parts never changes it.
- A split dependent with a part that did not come back: broken when a part that came back holds a
  broken test (nothing else can mend a break), else not run.
- A result no plan names (left from another or an earlier run) never enters a verdict; plans of
  two runs (another candidate, baseline, day, Python or index) are refused: exit 2.
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


def _passes(status: str, first: bool) -> bool | None:
    """A run's outcome: True passed, False failed, None no evidence. A test the first run did not
    collect did not pass there; one a re-run did not collect says nothing."""
    if status == PASSED:
        return True
    if status in FAILING or (first and status == ABSENT):
        return False
    return None


def rerun_changed(runs: tuple[str, ...], reruns: int) -> bool:
    """Whether one of a side's first ``reruns`` re-runs passed where its first run failed, or the other way."""
    first = _passes(runs[0], True)
    return first is not None and any(_passes(again, False) not in (None, first) for again in runs[1:1 + reruns])


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
    return "flaky" if any(rerun_changed(runs, reruns) for runs in sides) else cls


def classes(suite: list[Facts], reruns: int, aa: bool) -> dict[str, str]:
    return {f.name: final_class(f, reruns, aa) for f in suite if f.seen}


def ran(suite: list[Facts], side: str) -> int:
    return sum(1 for f in suite if f.seen and (getattr(f, side) or (ABSENT,))[0] in RAN)


def suite_verdict(suite: list[Facts], reruns: int, aa: bool) -> str:
    """The verdict on a suite with a baseline (the crater's dependent, ``check --tests --baseline``)."""
    got = classes(suite, reruns, aa)
    ran_b, ran_c = ran(suite, "baseline"), ran(suite, "candidate")
    broken = any(c == "broken" for c in got.values())
    stopped = sum(1 for f in suite if f.seen and f.candidate[0] == TIMEOUT and f.baseline[0] == TIMEOUT)
    if ran_b == 0:
        return NOT_RUN
    if ran_c == 0:
        return NONE_RAN
    if broken:
        return BROKEN
    if stopped and stopped >= ran_c:
        return NOT_RUN
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
