"""Where a failure starts and stops along one package's releases.

The failure is a *target*: a documented one (a rule id, or a case a rule covers), or one no rule
knows, named by its error signature (``signature.py``) and the cases that showed it. Candidates
are the package's releases that co-install with the other pins by their own metadata (yanked ones
only when named). Each step is an ordinary cell (resolved as of its date, cached) and is judged
*failure present / absent*: present when a target case fails with the target's error, absent when
every target case passes; anything else (cannot install, import error, all skipped, another
failure) cannot say and is skipped, like ``git bisect skip``. From one present release, binary
searches find the lowest and highest releases that can say, then the start and the end of the
affected range: O(log n) environments per boundary. ``region.py`` runs this along several
packages and draws the rectangle. The records: model/bisect.py; their text: report/bisect.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

from jaxcompat._util.statedir import StateDir
from jaxcompat._util.text import first_line, last_line, quiet
from jaxcompat.env import releases, resolution
from jaxcompat.env.candidate import candidate_cell, parse_requirement
from jaxcompat.knowledge import rules
from jaxcompat.knowledge.outcomes import error_matches
from jaxcompat.knowledge.signature import Signature
from jaxcompat.model.bisect import BisectResult, Step
from jaxcompat.model.matrix import Failure, Matrix
from jaxcompat.model.outcomes import CellResult, RawResult
from jaxcompat.model.vocab import BisectState, CellStatus, TestStatus
from jaxcompat.run.cell import run_cell


class BisectError(ValueError):
    pass


PRESENT, ABSENT, UNKNOWN = BisectState.PRESENT, BisectState.ABSENT, BisectState.UNKNOWN


@dataclass(frozen=True)
class Target:
    """What a step looks for: the cases to run and how to tell the failure when it shows."""

    id: str  # a rule id, or a signature's key
    cases: tuple[str, ...]
    matches: Callable[[RawResult], bool] = field(compare=False, repr=False)
    # where to look first: a rule's `affects`, or the combination where the failure was seen
    hints: tuple[dict, ...] = ()
    signature: Signature | None = None  # set when no rule knows it

    @classmethod
    def of_signature(cls, sig: Signature, cases, seen: dict[str, str] | None = None) -> Target:
        from packaging.specifiers import SpecifierSet

        hint = {d: SpecifierSet(f"=={v}") for d, v in (seen or {}).items()}
        return cls(sig.key, tuple(cases), sig.matches, (hint,) if hint else (), sig)


def target_failure(target: str, matrix: Matrix) -> tuple[Failure, list[str]]:
    """A failure id stands for its cases; a case stands for the rule that covers it."""
    f = matrix.failure(target)
    if f is not None:
        return f, [e.case for e in f.cases] if f.cases else [matrix.settings.cases_dir]
    path = target.split("::")[0]
    if not (matrix.root / path).is_file():
        ids = ", ".join(x.id for x in matrix.failures)
        raise BisectError(f"{target!r} is neither a failure id ({ids}) nor a case file")
    covering = [
        x for x in matrix.failures if rules.covers(x, target) or any(rules.names(target, e.case) for e in x.cases)
    ]
    if not covering:
        raise BisectError(f"no [[failure]] rule covers {target!r}: bisect looks for a documented failure")
    return covering[0], [target]


def rule_target(target: str, matrix: Matrix) -> Target:
    f, cases = target_failure(target, matrix)
    return Target(f.id, tuple(cases),
                  lambda r: r.status == TestStatus.FAILED and error_matches(f, r.error_types, r.message),
                  tuple(f.affects))


def judge(result: CellResult, target: Target) -> tuple[str, str, str]:
    """(state, signature, detail): is the failure present in this step?"""
    if result.status != CellStatus.OK:
        return UNKNOWN, f"cell:{result.status}", last_line(result.message)
    raws = [r.raw() for r in result.results]
    hit = next((r for r in raws if target.matches(r)), None)
    failing = sorted({r.error_types[0] if r.error_types else r.status for r in raws
                      if r.status not in (TestStatus.PASSED, TestStatus.SKIPPED)})
    sig = ("fail: " + ", ".join(failing)) if failing else (
        "pass" if any(r.status == TestStatus.PASSED for r in raws) else "all skipped")
    if hit is not None:
        return PRESENT, sig, first_line(hit.message, 200)
    if not failing and sig == "pass":
        return ABSENT, sig, ""
    passed = [r.case for r in raws if r.status == TestStatus.PASSED]
    if target.signature is not None and passed:
        # One failure, one cause: a case that showed it where it was seen and passes here says it
        # is absent, whatever else breaks the other cases (a rule's cases keep the strict reading).
        return ABSENT, f"{sig}; {len(passed)} passed", ""
    other = next((r.message for r in raws if r.status not in (TestStatus.PASSED, TestStatus.SKIPPED)), "")
    return UNKNOWN, sig, first_line(other, 200) or "every target case skipped"


def co_installable(package: str, versions: list[str], pins: list[str], cache: Path) -> list[str]:
    """The releases whose metadata accepts every exact pin, and that every pinned release accepts."""
    exact = {}
    for p in pins:
        req = parse_requirement(p)
        spec = [s.version for s in req.specifier if s.operator == "=="]
        if spec:
            exact[canonicalize_name(req.name)] = spec[0]
    out = []
    for v in versions:
        try:
            ok = all(resolution.declared(package, v, d, cache).contains(Version(pv), prereleases=True)
                     and resolution.declared(d, pv, package, cache).contains(Version(v), prereleases=True)
                     for d, pv in exact.items() if d != package)
        except Exception:  # noqa: BLE001 - unreadable metadata: let the resolver decide
            ok = True
        if ok:
            out.append(v)
    return out


Observe = Callable[[list[str], str, list[str]], CellResult]  # (requirements, cell id, cases) -> result


def observer(matrix: Matrix, *, python: str, state_dir: Path, use_cache: bool = True) -> Observe:
    """Steps as real cells: resolved as of their date, installed, run, cached."""
    def observe(reqs: list[str], cell_id: str, cases: list[str]) -> CellResult:
        cell = candidate_cell(reqs, python=python, cell_id=cell_id)
        return run_cell(cell, matrix, state_dir=state_dir, reports_dir=None, case_args=cases,
                        compile_bytecode=False, use_cache=use_cache)  # a step runs once
    return observe


def bisect(matrix: Matrix, target: str | Target, package: str, *, good: str | None, bad: str | None,
           pins: list[str], python: str, state_dir: Path, use_cache: bool = True,
           progress=quiet, observe: Observe | None = None, candidates: list[str] | None = None) -> BisectResult:
    """``candidates`` (oldest first) and ``observe`` replace the package index and real cells
    (a replay of recorded observations)."""
    package = canonicalize_name(package)
    tgt = target if isinstance(target, Target) else rule_target(target, matrix)
    if candidates is None:
        candidates = _candidates(package, good, bad, pins, StateDir(state_dir).cache)
    result = BisectResult(package=package, target=tgt.id, cases=list(tgt.cases), candidates=list(candidates))
    observe = observe or observer(matrix, python=python, state_dir=state_dir, use_cache=use_cache)
    run = _Steps(result, candidates, tgt, pins, observe, progress)
    p = _find_present(candidates, tgt, package, run)
    if p is None:
        judged = [s for s in result.steps if s.state != UNKNOWN]
        result.message = (f"no change: {tgt.id} is absent from every {package} release "
                          f"tried ({', '.join(s.version for s in judged) or 'none could say'})")
    else:
        _bound(result, candidates, p, run)
    return result


def _candidates(package: str, good: str | None, bad: str | None, pins: list[str], cache: Path) -> list[str]:
    """The releases to walk: not yanked (unless named), between --good and --bad, co-installable
    with the other pins."""
    named = {v for v in (good, bad) if v}
    info = releases.release_info(package, cache)
    for v in named:
        if v not in info:
            raise BisectError(f"{package} {v} is not a release on the package index")
    lo, hi = (Version(good) if good else None), (Version(bad) if bad else None)
    candidates = [v for v in releases.versions(package, cache, include_yanked=True)
                  if (not info[v]["yanked"] or v in named)
                  and (lo is None or Version(v) >= lo) and (hi is None or Version(v) <= hi)]
    candidates = co_installable(package, candidates, pins, cache)
    if len(candidates) < 2:
        raise BisectError(f"fewer than two releases of {package} co-install with {' '.join(pins) or 'nothing'}"
                          + (f" between {good} and {bad}" if named else ""))
    return candidates


class _Steps:
    """Runs the k-th candidate once (a step is memoised) and judges whether the failure is there."""

    def __init__(self, result: BisectResult, candidates: list[str], target: Target, pins: list[str],
                 observe: Observe, progress):
        self.result, self.candidates, self.target = result, candidates, target
        self.pins, self.observe, self.progress = pins, observe, progress
        self.memo: dict[int, Step] = {}

    def __call__(self, k: int) -> Step:
        if k in self.memo:
            return self.memo[k]
        package, version = self.result.package, self.candidates[k]
        reqs = [p for p in self.pins if canonicalize_name(parse_requirement(p).name) != package]
        reqs.append(f"{package}=={version}")
        res = self.observe(reqs, f"bisect-{package}-{version}", self.result.cases)
        self.result.observations.append(record(reqs, res))
        state, sig, detail = judge(res, self.target)
        step = Step(version=version, signature=sig, versions=res.versions, state=state, detail=detail,
                    installable=res.installable)
        self.memo[k] = step
        self.result.steps.append(step)
        self.progress(
            f"  {package} {version}: {state} ({sig})" + (f": {detail}" if state == UNKNOWN and detail else "")
        )
        if state == UNKNOWN:
            self.result.skipped.append(version)
        return step


def _bound(result: BisectResult, candidates: list[str], p: int, run: _Steps) -> None:
    """From one release where the failure is present, walk out to where it starts and stops."""
    package, memo = result.package, run.memo
    low = _edge(0, p, run, lowest=True)      # lowest release that can say
    high = _edge(p, len(candidates) - 1, run, lowest=False)  # highest release that can say
    if run(low).state == PRESENT:
        start = low
    else:
        start = _transition(low, p, run, PRESENT)
        result.last_good = candidates[_last_judged_below(start, low, memo)]
    result.first_bad = candidates[start]
    if run(high).state != PRESENT:
        end = _transition(p, high, run, ABSENT)
        result.fixed = candidates[end]
        result.last_affected = candidates[_last_judged_below(end, p, memo, state=PRESENT)]
    result.good = memo.get(low) if memo.get(low) and memo[low].state == ABSENT else None
    result.bad = memo[p]
    intro = (f"introduced in {result.first_bad} (last clean {result.last_good})" if result.last_good else
             f"present from {result.first_bad}, the oldest {package} release that can say")
    fix = (f"fixed in {result.fixed} (last affected {result.last_affected})" if result.fixed else
           f"not fixed up to {candidates[high]}, the newest {package} release that can say")
    result.message = f"{run.target.id} along {package}: {intro}; {fix}"


def record(reqs: list[str], res: CellResult) -> dict:
    """One observation as kept in a report: the requirements asked for and the cell as seen."""
    d = res.to_dict()
    keep = ("id", "python", "backend", "status", "versions", "requested", "date", "message")
    return {"requirements": list(reqs), **{k: d[k] for k in keep if k in d},
            "results": [asdict(r.raw()) for r in res.results]}


def observed_cell(rec: dict, cases: list[str] | None = None) -> CellResult:
    """A recorded observation as a cell, its results judged by no rule (``reclassify`` applies them)."""
    from jaxcompat.knowledge.outcomes import classify

    cell = CellResult.from_dict({k: v for k, v in rec.items() if k not in ("requirements", "results")})
    cell.results = [classify(RawResult.from_dict(r), (), cell.versions, cell.backend) for r in rec["results"]
                    if not cases or any(rules.names(c, r["case"]) for c in cases)]
    return cell


def _find_present(candidates: list[str], failure: Target, package: str, run) -> int | None:
    """A release where the failure shows: first where the target says it was (a rule's bounds,
    the combination where it was seen), then a coarse scan."""
    order: list[int] = []
    for clause in failure.hints:
        spec = clause.get(package)
        if spec is None:
            continue
        inside = [i for i, v in enumerate(candidates) if spec.contains(Version(v), prereleases=True)]
        order += inside[:1] + inside[-1:] + inside[len(inside) // 2:len(inside) // 2 + 1]
    n = len(candidates)
    order += [n - 1, n // 2, 0, n // 4, 3 * n // 4]
    for k in dict.fromkeys(order):
        if run(k).state == PRESENT:
            return k
    return None


def _edge(i: int, j: int, run, *, lowest: bool) -> int:
    """Binary search for the lowest (or highest) index in [i, j] that can say; releases that cannot
    (too old or too new to import beside the other pins) are assumed to sit at the far end."""
    known = j if lowest else i  # the present release found: it can say
    far = i if lowest else j
    if run(far).state != UNKNOWN:
        return far
    while abs(known - far) > 1:
        mid = (known + far) // 2
        if run(mid).state != UNKNOWN:
            known = mid
        else:
            far = mid
    return known


def _transition(i: int, j: int, run, becomes: str) -> int:
    """The first index after ``i`` whose state is ``becomes`` (run(j) has it, run(i) does not);
    steps that cannot say are skipped by trying their neighbours."""
    while j - i > 1:
        mid = (i + j) // 2
        k = _judged_near(mid, i, j, run)
        if k is None:
            break
        if run(k).state == becomes:
            j = k
        else:
            i = k
    return j


def _judged_near(mid: int, i: int, j: int, run) -> int | None:
    for d in range(0, j - i):
        for k in (mid + d, mid - d):
            if i < k < j and run(k).state != UNKNOWN:
                return k
    return None


def _last_judged_below(k: int, floor: int, memo: dict[int, Step], state: str | None = None) -> int:
    for x in range(k - 1, floor - 1, -1):
        if x in memo and memo[x].state != UNKNOWN and (state is None or memo[x].state == state):
            return x
    return floor
