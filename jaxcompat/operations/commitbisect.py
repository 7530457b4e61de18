"""From "this release breaks it" to "this commit broke it": bisect along a package's commits.

Between a good release and a bad one, the package's first-parent commits are walked as
``git bisect --first-parent`` would: each step installs the package from that commit's source
(jax over the jaxlib release the commit accepts; equinox, diffrax, optimistix and lineax are pure
Python), runs only the target's cases and judges them as a release step is judged
(``bisect.judge``: present, absent, cannot say). A commit that cannot be built, installed or
imported (or whose checkout or files git fails to give) cannot say and is skipped; where skipped
commits surround the change the answer is the range; where an end cannot say, nothing is judged.
``fixed=True`` looks for the first commit at which the failure stops instead.
Every step's environment is a cell of its own, cached by commit; the other packages are resolved
as of the bad release's date, so the steps differ in the package alone.

A jax commit that cannot say over the newest jaxlib it accepts is tried over the others
``history.jaxlib_fallbacks`` gives before it is skipped: the newest it accepts is not always the
one it was written against. A boundary is a commit only where both its sides ran over the same
jaxlib (``Walker.align``): else no commit is named (the failure follows jaxlib, or the boundary
coincides with a change of jaxlib: not judged).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from jaxcompat._util.statedir import StateDir
from jaxcompat._util.text import quiet
from jaxcompat.env import commits as history
from jaxcompat.env import releases
from jaxcompat.env.candidate import candidate_cell, parse_requirement
from jaxcompat.env.gitsource import GitError
from jaxcompat.model.commits import CommitBisect, CommitStep
from jaxcompat.model.matrix import Matrix
from jaxcompat.model.outcomes import CellResult
from jaxcompat.model.vocab import BisectState
from jaxcompat.operations.bisect import Target, judge
from jaxcompat.run.cell import run_cell

PRESENT, ABSENT, UNKNOWN = BisectState.PRESENT, BisectState.ABSENT, BisectState.UNKNOWN


StateOf = Callable[[int], BisectState]


def transition(n: int, state_of: StateOf, becomes: BisectState) -> tuple[int, int, list[int]]:
    """Over commits 0..n-1, where commit 0 is not ``becomes`` and commit n-1 is: (lo, hi, skipped)
    with lo the last index judged otherwise and hi the first judged ``becomes`` after it; hi - lo is
    1 unless every commit between them could not say (``skipped``: those tried and unknown)."""
    lo, hi, skipped = 0, n - 1, []
    while hi - lo > 1:
        k = _judged_near((lo + hi) // 2, lo, hi, state_of, skipped)
        if k is None:
            break
        if state_of(k) == becomes:
            hi = k
        else:
            lo = k
    return lo, hi, sorted(set(skipped))


def _judged_near(mid: int, lo: int, hi: int, state_of: StateOf, skipped: list[int]) -> int | None:
    """The commit nearest ``mid`` strictly between lo and hi that can say (as ``git bisect skip``)."""
    for d in range(0, hi - lo):
        for k in dict.fromkeys((mid + d, mid - d)):
            if lo < k < hi:
                if state_of(k) != UNKNOWN:
                    return k
                skipped.append(k)
    return None


Install = Callable[[str], tuple[list[str], str]]  # commit -> (requirements for the package, note)
Others = Callable[[str], list[tuple[list[str], str]]]  # commit -> the other ways to install it, in order
Observe = Callable[[list[str], str], CellResult]  # (requirements, step id) -> the cell as run
Over = Callable[[str, str], list[str] | None]  # (commit, jaxlib) -> requirements; None: it does not accept it


class Walker:
    """One step per commit, memoised; the record of each."""

    def __init__(self, shas: list[str], target: Target, pins: list[str], install: Install, observe: Observe,
                 package: str, progress=quiet, others: Others | None = None, over: Over | None = None):
        self.shas, self.target, self.pins, self.install, self.observe = shas, target, pins, install, observe
        self.package, self.progress, self.others, self.over = package, progress, others, over
        self.memo: dict[int, CommitStep] = {}
        self.ran: set[tuple[str, str]] = set()  # (commit, jaxlib) of every step run
        self.prefer = ""  # the jaxlib both sides of a boundary were aligned over: tried first from then on
        self.unaligned: tuple[int, int] | None = None  # a boundary whose sides' jaxlibs could not be made one

    def __call__(self, k: int) -> BisectState:
        if k not in self.memo:
            first = self._over_jaxlib(self.shas[k], self.prefer) if self.prefer else None
            if first is None or first.state == UNKNOWN:
                step = self._step(self.shas[k])
                step = self._over_others(step) if step.state == UNKNOWN and self.others else step
                if first is not None:
                    step.tried.insert(0, f"{first.jaxlib}: {first.detail or first.signature}")
                first = step
            self.memo[k] = first
        return self.memo[k].state

    def align(self, a: int, b: int) -> bool:
        """Steps a and b ran over different jaxlibs: b over a's if b accepts it and was not run
        over it yet, else a over b's; the new step replaces the old where it can say (the old one
        kept in its ``also``). False where neither could be run and say."""
        for k, other in ((b, a), (a, b)):
            jaxlib, old = self.memo[other].jaxlib, self.memo[k]
            if (old.commit, jaxlib) in self.ran:
                continue
            step = self._over_jaxlib(old.commit, jaxlib)
            if step is not None and step.state != UNKNOWN:
                step.also = [*old.also, f"{old.jaxlib}: {old.state}" + (f" ({old.signature})" if old.signature else "")]
                step.tried = old.tried
                self.memo[k], self.prefer = step, jaxlib
                return True
        return False

    def _over_jaxlib(self, sha: str, jaxlib: str) -> CommitStep | None:
        """The commit over that jaxlib; None where it does not accept it (or git cannot give it)."""
        try:
            reqs = self.over(sha, jaxlib) if self.over else None
        except (history.HistoryError, GitError, OSError, ValueError):
            reqs = None
        if reqs is None:
            return None
        t0 = time.monotonic()
        self.ran.add((sha, jaxlib))
        pins = [p for p in self.pins if parse_requirement(p).name.lower() not in _names(reqs)]
        state, sig, detail = judge(self.observe(reqs + pins, f"bisect-{self.package}-{sha[:12]}-jaxlib-{jaxlib}"),
                                   self.target)
        self.progress(f"  {sha[:12]}: {state} ({sig}) over jaxlib {jaxlib}, to match a neighbour's")
        return CommitStep(sha, state, sig, detail, time.monotonic() - t0, jaxlib)

    def _step(self, sha: str) -> CommitStep:
        t0 = time.monotonic()
        try:
            reqs, note = self.install(sha)
        except (history.HistoryError, GitError, OSError, ValueError) as e:  # git: a checkout, a blob, a file
            step = CommitStep(sha, UNKNOWN, "git failed" if isinstance(e, GitError) else "cannot build",
                              str(e)[:300], time.monotonic() - t0)
        else:
            others = [p for p in self.pins if parse_requirement(p).name.lower() not in _names(reqs)]
            result = self.observe(reqs + others, f"bisect-{self.package}-{sha[:12]}")
            state, sig, detail = judge(result, self.target)
            step = CommitStep(sha, state, sig, detail, time.monotonic() - t0, note)
            self.ran.add((sha, note))
        self.progress(f"  {sha[:12]}: {step.state} ({step.signature}) {step.seconds:.0f} s"
                      + (f" [jaxlib {step.jaxlib}]" if step.jaxlib else "")
                      + (f": {step.detail}" if step.state == UNKNOWN and step.detail else ""))
        return step

    def _over_others(self, first: CommitStep) -> CommitStep:
        """A commit that could not say over its first way to install, over each other way in turn
        (``others``: a jax commit over an older jaxlib) until one can say; what each said kept."""
        t0, step, tried = time.monotonic(), first, []
        sha = first.commit
        for reqs, note in self._other_ways(sha):
            if (sha, note) in self.ran:
                continue
            tried.append(f"{step.jaxlib}: {step.detail or step.signature}")
            pins = [p for p in self.pins if parse_requirement(p).name.lower() not in _names(reqs)]
            self.ran.add((sha, note))
            state, sig, detail = judge(self.observe(reqs + pins, f"bisect-{self.package}-{sha[:12]}-jaxlib-{note}"),
                                       self.target)
            step = CommitStep(sha, state, sig, detail, first.seconds + time.monotonic() - t0, note, list(tried))
            self.progress(f"  {sha[:12]}: {state} ({sig}) over jaxlib {note}, after {tried[-1]}"
                          + (f": {detail}" if state == UNKNOWN and detail else ""))
            if state != UNKNOWN:
                break
        return step

    def _other_ways(self, sha: str) -> list[tuple[list[str], str]]:
        try:
            return self.others(sha) if self.others else []
        except (history.HistoryError, GitError, OSError, ValueError):
            return []


def _names(reqs: list[str]) -> set[str]:
    return {parse_requirement(r).name.lower() for r in reqs}


def walk(shas: list[str], walker: Walker, fixed: bool) -> tuple[int, int, list[int], str]:
    """(lo, hi, skipped, message): the ends are judged first; the failure must be absent at the
    good end and present at the bad one (``fixed``: present at the good end, absent at the bad)."""
    want_start, want_end = (PRESENT, ABSENT) if fixed else (ABSENT, PRESENT)
    n = len(shas)
    start, end = walker(0), walker(n - 1)
    if UNKNOWN in (start, end):
        return 0, n - 1, [], "nothing judged: " + "; ".join(
            f"the {'good' if k == 0 else 'bad'} end {shas[k][:12]} could not say ({walker.memo[k].signature}"
            + (f": {walker.memo[k].detail}" if walker.memo[k].detail else "") + ")"
            for k in dict.fromkeys((0, n - 1)) if walker.memo[k].state == UNKNOWN)
    if start != want_start or end != want_end:
        return 0, n - 1, [], (f"the ends do not disagree as asked: {want_start} expected at the good end, "
                              f"{want_end} at the bad one; judged {start} and {end}")
    wants = (want_start, want_end)
    while walker.memo[0].jaxlib != walker.memo[n - 1].jaxlib and walker.align(0, n - 1):  # the ends, where they can
        if (walker.memo[0].state, walker.memo[n - 1].state) != wants:
            return 0, n - 1, [], _jaxlib_cause(walker.package, walker.memo[0], walker.memo[n - 1])
    lo, hi, skipped = transition(n, walker, want_end)
    while walker.memo[lo].jaxlib != walker.memo[hi].jaxlib:  # a boundary is a commit only over one jaxlib
        if not walker.align(lo, hi):
            walker.unaligned = (lo, hi)
            return lo, hi, skipped, _jaxlib_change(walker.memo[lo], walker.memo[hi])
        if (walker.memo[0].state, walker.memo[n - 1].state) != wants:
            return 0, n - 1, [], _jaxlib_cause(walker.package, walker.memo[0], walker.memo[n - 1])
        lo, hi, skipped = transition(n, walker, want_end)
    return lo, hi, skipped, ""


def _jaxlib_change(a: CommitStep, b: CommitStep) -> str:
    return (f"no commit named: the boundary {a.commit[:12]} ({a.state} over jaxlib {a.jaxlib}) -> {b.commit[:12]} "
            f"({b.state} over jaxlib {b.jaxlib}) coincides with a change of jaxlib, {a.jaxlib} -> {b.jaxlib}, "
            "and neither commit could be judged over the other's: the change may be jaxlib's, not a commit's")


def _jaxlib_cause(package: str, good: CommitStep, bad: CommitStep) -> str:
    ends = "; ".join(f"the {end} end {s.commit[:12]} is {s.state} over jaxlib {s.jaxlib}"
                     + (f" (over jaxlib {', '.join(s.also)})" if s.also else "")
                     for end, s in (("good", good), ("bad", bad)))
    return f"no commit of {package}: over one jaxlib the ends agree, the failure follows jaxlib, not a commit: {ends}"


def bisect_commits(matrix: Matrix, target: Target, package: str, *, good: str, bad: str, pins: list[str],
                   python: str, state_dir: Path, repo: str | None = None, fixed: bool = False,
                   use_cache: bool = True, progress=quiet, install: Install | None = None,
                   observe: Observe | None = None, date: str | None = None) -> CommitBisect:
    """``date`` (default: the day after the bad release) is the resolution date of every step;
    ``install`` and ``observe`` replace the checkout and the real cells (tests)."""
    t0 = time.monotonic()
    cache = StateDir(state_dir).cache
    url = history.repository(package, repo)
    history.fetch(url, cache)
    shas = history.first_parents(url, history.tag_of(package, good, url, cache),
                                 history.tag_of(package, bad, url, cache), cache, package, (good, bad))
    result = CommitBisect(package, target.id, url, good, bad, fixed, commits=len(shas) - 1)
    progress(f"{len(shas) - 1} first-parent commits from {package} {good} to {bad}: "
             f"about {max(1, (len(shas) - 1).bit_length())} steps")
    others, over = ((other_jaxlibs(url, state_dir), jaxlib_over(url, state_dir)) if install is None and package == "jax"
                    else (None, None))
    install = install or source_installer(package, url, state_dir)
    date = date or _day_after(releases.release_date(package, bad, cache))
    observe = observe or step_observer(matrix, python, state_dir, date, use_cache, target.cases)
    walker = Walker(shas, target, pins, install, observe, package, progress, others, over)
    lo, hi, skipped, problem = walk(shas, walker, fixed)
    result.steps = [walker.memo[k] for k in sorted(walker.memo)]
    result.judged = UNKNOWN not in (walker.memo[0].state, walker.memo[len(shas) - 1].state) and not walker.unaligned
    result.wall_s = round(time.monotonic() - t0, 1)
    if problem:
        result.message = problem
        return result
    _answer(result, url, shas, lo, hi, cache)
    return result


def _answer(result: CommitBisect, url: str, shas: list[str], lo: int, hi: int, cache: Path) -> None:
    result.first = history.describe(url, shas[hi], cache)
    if not result.first.pull_request:
        result.first.pull_request = history.pull_request_of(url, shas[hi], cache)
    result.last_before = shas[lo]
    if hi - lo > 1:
        result.range = shas[lo + 1:hi + 1]
    result.shipped_in = history.shipped_in(result.package, url, shas[hi], cache)
    result.changelog = history.changelog_entry(result.package, result.shipped_in, url, cache, result.first)
    verb = "stops" if result.fixed else "starts"
    where = (f"in one of {len(result.range)} commits {result.range[0][:12]}..{shas[hi][:12]} (the others "
             "could not be built or run)" if result.range else f"at {shas[hi][:12]}")
    result.message = (f"{result.target} {verb} {where}: {result.first.title}"
                      + (f" ({result.first.pull_request})" if result.first.pull_request else "")
                      + (f", shipped in {result.package} {result.shipped_in}" if result.shipped_in else ""))


def _day_after(date: str) -> str:
    return (dt.date.fromisoformat(date) + dt.timedelta(days=1)).isoformat()


def source_installer(package: str, url: str, state_dir: Path) -> Install:
    """A commit as requirements: the package from its checked-out tree (and for jax, the jaxlib
    release that commit accepts; where none is on the index unyanked, the first fallback)."""
    cache, src = StateDir(state_dir).cache, StateDir(state_dir).commits(package)

    def install(sha: str) -> tuple[list[str], str]:
        tree, _absent = history.checkout(url, sha, cache, src)
        reqs = [f"{package} @ {tree.resolve().as_uri()}"]
        if package != "jax":
            return reqs, ""
        version, minimum = history.jax_versions(url, sha, cache)
        jaxlib = history.jaxlib_for(version, minimum, cache) or next(iter(_fallbacks(url, sha, cache)), "")
        if not jaxlib:
            raise history.HistoryError(f"no jaxlib release between {minimum} and {version}")
        return reqs + [f"jaxlib=={jaxlib}"], jaxlib
    return install


def other_jaxlibs(url: str, state_dir: Path) -> Others:
    """A jax commit over the other jaxlib releases it may run over, in the order to try them
    (``history.jaxlib_fallbacks``)."""
    cache, src = StateDir(state_dir).cache, StateDir(state_dir).commits("jax")

    def others(sha: str) -> list[tuple[list[str], str]]:
        tree, _absent = history.checkout(url, sha, cache, src)
        return [([f"jax @ {tree.resolve().as_uri()}", f"jaxlib=={j}"], j) for j in _fallbacks(url, sha, cache)]
    return others


def jaxlib_over(url: str, state_dir: Path) -> Over:
    """A jax commit over a given jaxlib release, where it accepts it (``history.accepts``)."""
    cache, src = StateDir(state_dir).cache, StateDir(state_dir).commits("jax")

    def over(sha: str, jaxlib: str) -> list[str] | None:
        if not history.accepts(*history.jax_versions(url, sha, cache), jaxlib):
            return None
        tree, _absent = history.checkout(url, sha, cache, src)
        return [f"jax @ {tree.resolve().as_uri()}", f"jaxlib=={jaxlib}"]
    return over


def _fallbacks(url: str, sha: str, cache: Path) -> list[str]:
    version, minimum = history.jax_versions(url, sha, cache)
    return history.jaxlib_fallbacks(version, minimum, history.describe(url, sha, cache, files=False).date, cache)


def step_observer(matrix: Matrix, python: str, state_dir: Path, date: str, use_cache: bool,
                  cases: tuple[str, ...]) -> Observe:
    """A step as a real cell: the target's cases only, every other package as of ``date``."""
    def observe(reqs: list[str], step_id: str) -> CellResult:
        cell = replace(candidate_cell(reqs, python=python, cell_id=step_id, companions=False), date=date)
        return run_cell(cell, matrix, state_dir=state_dir, reports_dir=None, case_args=list(cases),
                        compile_bytecode=False, use_cache=use_cache)
    return observe
