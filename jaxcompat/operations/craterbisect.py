"""``crater --bisect``: beside a broken group of a crater report, the first commit of the package
the candidate moves at which that group's tests break.

- **Which package, which releases.** The one package whose exact pin differs between the baseline
  and the candidate (jax first, then the ecosystem's other packages): its baseline release is the
  good end, its candidate release the bad one. A candidate that moves no release (a URL, a range)
  gives no walk, said as such.
- **Which tests.** The group's dependent with the most broken tests, those tests only, the
  dependent at the release (or commit) the crater judged; a step's verdict is the crater's own
  (``crater.judge`` with the commit's source as the candidate): present where one of those tests
  is broken with the group's signature family, absent where none is, cannot say where the
  dependent could not be judged.
- **Which groups.** Those no rule and no API history explains; every group with ``all``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from jaxcompat._util.text import quiet
from jaxcompat.env.candidate import parse_requirement
from jaxcompat.env.commits import HistoryError
from jaxcompat.model.matrix import Matrix
from jaxcompat.model.vocab import BisectState
from jaxcompat.operations import commitbisect, crater
from jaxcompat.operations.bisect import Target

ORDER = ("jax", "equinox", "diffrax", "optimistix", "lineax", "chex")
UNEXPLAINED, ALL = "unexplained", "all"


@dataclass
class GroupBisect:
    """A broken group's first bad commit (or why there is none)."""

    signature: str
    dependent: str
    tests: list[str] = field(default_factory=list)
    package: str = ""
    good: str = ""
    bad: str = ""
    first: str = ""  # the commit's hash
    title: str = ""
    date: str = ""
    pull_request: str = ""
    range: list[str] = field(default_factory=list)  # skipped commits surround it
    commits: int = 0
    steps: int = 0
    wall_s: float = 0.0
    message: str = ""

    def to_dict(self) -> dict:
        return {**asdict(self), "line": line(self)}


# (dependent, its broken tests, package, good, bad) -> the walk
Run = Callable[[str, list[str], str, str, str], commitbisect.CommitBisect]


def moved_package(plan: crater.Plan) -> tuple[str, str, str] | None:
    """(package, baseline release, candidate release) of the first package both sides pin exactly
    and the candidate moves; None where none is."""
    base, cand = _exact(plan.baseline), _exact(plan.candidate)
    moved = [n for n in cand if n in base and base[n] != cand[n]]
    moved.sort(key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
    return (moved[0], base[moved[0]], cand[moved[0]]) if moved else None


def _exact(reqs) -> dict[str, str]:
    out = {}
    for text in reqs:
        req = parse_requirement(text)
        pins = [s.version for s in req.specifier if s.operator == "=="]
        if pins and not req.url:
            out[req.name.lower()] = pins[0]
    return out


def chosen(groups: list[crater.Group], which: str) -> list[crater.Group]:
    return [g for g in groups if which == ALL or not (g.explained_by or g.api)]


def bisect_group(g: crater.Group, plan: crater.Plan, run: Run,
                 moved: tuple[str, str, str] | None = None) -> GroupBisect:
    """The group's first bad commit, walked over its largest dependent's broken tests (``moved``:
    the package and releases to walk, default the one the candidate moves)."""
    dep = sorted(g.tests, key=lambda d: (-len(g.tests[d]), d))[0]
    rec = GroupBisect(g.signature.key, dep, sorted(g.tests[dep]))
    moved = moved or moved_package(plan)
    if moved is None:
        rec.message = ("no commits to walk: the candidate moves no package from one release to another "
                       "(pin both sides exactly, e.g. jax==0.4.33 against --baseline jax==0.4.31)")
        return rec
    rec.package, rec.good, rec.bad = moved
    try:
        result = run(dep, rec.tests, *moved)
    except (HistoryError, OSError, ValueError) as e:
        rec.message = f"cannot bisect: {e}"
        return rec
    rec.commits, rec.steps, rec.wall_s, rec.message = result.commits, len(result.steps), result.wall_s, result.message
    rec.range = list(result.range)
    if result.first:
        c = result.first
        rec.first, rec.title, rec.date, rec.pull_request = c.sha, c.title, c.date, c.pull_request
    return rec


def line(rec: GroupBisect) -> str:
    """The renderer's line beside the group."""
    if not rec.first:
        return f"first bad commit: none named — {rec.message}"
    where = (f"one of {len(rec.range)} commits up to {rec.first[:12]}" if rec.range else rec.first[:12])
    return (f"first bad commit in {rec.package} {rec.good} -> {rec.bad}: {where} {rec.title}"
            + (f" ({rec.pull_request})" if rec.pull_request else "") + f", {rec.date[:10]}"
            + f" [{rec.steps} steps over {rec.commits} commits, {rec.wall_s:.0f} s; {rec.dependent}'s tests]")


def from_report(data: dict, python: str) -> tuple[crater.Plan, list[crater.DependentResult]]:
    """A crater report's (``crater.json``) plan and dependents' results, as they were judged."""
    if not (isinstance(data, dict) and data.get("kind") == "crater" and isinstance(data.get("dependents"), list)):
        raise ValueError("not a crater report (no \"kind\": \"crater\" with its \"dependents\")")
    plan = crater.Plan(tuple(data.get("candidate", ())), tuple(data.get("baseline", ())), python=python,
                       as_of=data.get("as_of") or None)
    return plan, [crater.DependentResult.from_dict(d) for d in data["dependents"]]


def annotator(which: str, plan: crater.Plan, run: Run, progress=quiet):
    """What ``crater.write`` calls on its groups: each chosen group gets its record (``g.bisect``)."""
    def annotate(groups: list[crater.Group], results) -> None:
        for g in chosen(groups, which):
            progress(f"bisect: {g.signature.key} ({len(g.tests)} dependent(s))")
            g.bisect = bisect_group(g, plan, run).to_dict()
            progress(f"  {g.bisect['line']}")
    return annotate


def runner(deps, results: list[crater.DependentResult], plan: crater.Plan, matrix: Matrix, state_dir: Path,
           progress=quiet) -> Run:
    """The real walk: each step is the crater's judgement of the dependent's broken tests with the
    package from the commit's source as the candidate."""
    by_name = {d.name: d for d in deps}
    judged = {r.name: r for r in results}

    def run(name: str, tests: list[str], package: str, good: str, bad: str) -> commitbisect.CommitBisect:
        if name not in by_name or name not in judged:
            raise ValueError(f"{name} is not in the dependents file of this run")
        dep, res = replace(by_name[name], tests=tuple(tests)), judged[name]
        family = {crater.signature_of(t).family for t in res.broken() if t.test in tests}
        probe = dependent_probe(dep, res.commit or res.version, plan, matrix, state_dir, set(tests), family)
        sig = next(crater.signature_of(t) for t in res.broken() if t.test in tests)
        pins = [p for p in plan.candidate if parse_requirement(p).name.lower() != package]
        return commitbisect.bisect_commits(matrix, Target.of_signature(sig, tests), package, good=good, bad=bad,
                                           pins=pins, python=plan.python, state_dir=state_dir, probe=probe,
                                           progress=progress)
    return run


def dependent_probe(dep, version: str, plan: crater.Plan, matrix: Matrix, state_dir: Path, tests: set[str],
                    families: set) -> commitbisect.Probe:
    """A step as the crater judges the dependent with the step's requirements as the candidate."""
    def probe(reqs: list[str], step_id: str) -> tuple[BisectState, str, str]:
        step = crater.Plan(tuple(reqs), plan.baseline, python=plan.python, as_of=plan.as_of)
        res = crater.judge(dep, step, matrix, state_dir, version=version)
        if not res.verdict.judged:
            return BisectState.UNKNOWN, str(res.verdict), res.cause[:300]
        hit = [t.test for t in res.broken() if t.test in tests and crater.signature_of(t).family in families]
        if hit:
            return BisectState.PRESENT, "broken", f"{len(hit)} of {len(tests)} tests broken"
        return BisectState.ABSENT, "pass", ""
    return probe
