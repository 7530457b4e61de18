"""``crater --bisect``: each broken group traced to the upstream commit that broke it.

The candidate moves one package of the ecosystem from the baseline's release to its own (jax
0.4.31 -> 0.4.33): its commits between the two releases' tags are bisected (``commitbisect``).
A group a rule explains is bisected on the rule's own cases (the matrix's minimal reproduction);
a group no rule explains, on the broken tests themselves. Either way the steps run in the own
environment of the dependent that broke most (``Steps``): its source as the crater took it
(fetched where this state folder lacks it), its test requirements, its baseline's lock held, and
only the moved package changed. The answers go to ``bisect.json`` beside the crater's results, and
``crater.write`` puts each beside its group.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.utils import canonicalize_name

from jaxcompat._util.atomic import write_text
from jaxcompat._util.text import first_line, quiet
from jaxcompat.env.candidate import candidate_cell, parse_requirement
from jaxcompat.env.commits import HistoryError
from jaxcompat.env.gitsource import GitError
from jaxcompat.env.projects import SourceMissing
from jaxcompat.env.sides import FORCED, hold
from jaxcompat.knowledge import signature as signatures
from jaxcompat.knowledge.cratergroups import Group
from jaxcompat.knowledge.outcomes import classify
from jaxcompat.model.commits import CommitBisect
from jaxcompat.model.crater import DependentResult, Plan
from jaxcompat.model.dependents import Dependents
from jaxcompat.model.matrix import Matrix
from jaxcompat.model.outcomes import CellResult, RawResult
from jaxcompat.model.stages import Ended
from jaxcompat.model.target import Target as TestTarget
from jaxcompat.model.usertests import UserTest, status
from jaxcompat.model.vocab import CellStatus, TestStatus, UserTestStatus
from jaxcompat.operations import commitbisect, crater
from jaxcompat.operations.bisect import BisectError, Target, rule_target
from jaxcompat.plugin.packages import ECOSYSTEM
from jaxcompat.run import cell as cells
from jaxcompat.run import userrun

MAX_TESTS = 20  # a group's tests run at each step (its dependent's first ones)


def moved(plan: Plan) -> tuple[str, str, str] | None:
    """(package, baseline's release, candidate's release): the first package of the ecosystem the
    candidate pins at another release than the baseline (jaxlib follows jax), or None."""
    def exact(texts) -> dict[str, str]:
        out = {}
        for t in texts:
            req = parse_requirement(t)
            pins = [s.version for s in req.specifier if s.operator == "=="]
            if pins and not req.url:
                out[canonicalize_name(req.name)] = pins[0]
        return out
    cand, base = exact(plan.candidate), exact(plan.baseline)
    for pkg in ECOSYSTEM:
        if pkg != "jaxlib" and pkg in cand and pkg in base and cand[pkg] != base[pkg]:
            return pkg, base[pkg], cand[pkg]
    return None


def chosen(groups: list[Group], mode: str) -> list[Group]:
    """``unexplained``: the groups no rule explains; ``all``: every group."""
    return [g for g in groups if mode == "all" or not g.explained_by]


def run(out_dir: Path, results: list[DependentResult], plan: Plan, matrix: Matrix,
        dependents: Dependents, state_dir: Path, mode: str = "unexplained", progress=quiet,
        bisector=commitbisect.bisect_commits, targeter=None) -> dict[str, dict]:
    """Every chosen group bisected; the records (by group signature) written to ``bisect.json``.
    ``bisector`` and ``targeter`` replace the walk and the choice of target (tests)."""
    targeter = targeter or _target
    axis = moved(plan)
    found: dict[str, dict] = {}
    for g in chosen(crater.group(results), mode):
        if axis is None:
            found[g.signature.key] = {"message": "not bisected: the candidate moves no release of the ecosystem "
                                                 "(a git ref or a wheel has no two tags to walk between)"}
            continue
        package, good, bad = axis
        progress(f"bisect {g.signature.key} along {package}'s commits {good} -> {bad}")
        try:
            target, observe, pins = targeter(g, plan, matrix, dependents, results, state_dir, package)
            res = bisector(matrix, target, package, good=good, bad=bad, pins=pins, python=plan.python,
                           state_dir=state_dir, progress=progress, **({"observe": observe} if observe else {}))
        except (BisectError, HistoryError, GitError, SourceMissing, ValueError) as e:
            found[g.signature.key] = {"message": f"not bisected: {e}"}
            continue
        found[g.signature.key] = record(res)
    write_text(out_dir / crater.BISECT_FILE, json.dumps(found, indent=1) + "\n")
    return found


def record(res: CommitBisect) -> dict:
    """What a crater report keeps of a bisection."""
    first = res.first
    return {"message": res.message, "package": res.package, "good": res.good, "bad": res.bad,
            "commit": first.sha if first else "", "title": first.title if first else "",
            "date": first.date if first else "", "pull_request": first.pull_request if first else "",
            "references": first.references if first else [], "range": res.range, "shipped_in": res.shipped_in,
            "steps": len(res.steps), "commits": res.commits, "judged": res.judged, "wall_s": res.wall_s}


def _target(g: Group, plan: Plan, matrix: Matrix, dependents: Dependents,
            results: list[DependentResult], state_dir: Path, package: str):
    """(target, observe, other pins): the steps in the environment of the dependent that broke most
    (``Steps``), on the rule's cases where a rule explains the group, else on its broken tests."""
    pins = [p for p in plan.candidate
            if canonicalize_name(parse_requirement(p).name) not in (package, "jaxlib")]
    name, tests = max(g.tests.items(), key=lambda kv: len(kv[1]))
    dep, res = dependents.get(name), next(r for r in results if r.name == name)
    if dep is None:
        raise BisectError(f"{name} is not in the dependents file")
    root, utarget = crater.source_of(dep, plan, state_dir, res.commit or res.version or None)
    steps = Steps(utarget, plan, package, res.python or plan.python, matrix, state_dir)
    if g.explained_by and matrix.failure(g.explained_by) is not None:
        target = rule_target(g.explained_by, matrix)
        return target, rule_observer(steps, target.cases), pins
    tests = tests[:MAX_TESTS]
    sig = g.signature
    target = Target(sig.key, tuple(tests), lambda raw: _same_failure(raw, sig), signature=sig)
    return target, dependent_observer(steps, tests), pins


def _same_failure(raw: RawResult, sig: signatures.Signature) -> bool:
    """The group's failure at a step: its error type *and* its message's signature, read from the
    step's result as the crater read the group's (``crater.signature_of``). A step failing otherwise
    (another error, or the same type with another message) is another failure, never this one."""
    if raw.status in (TestStatus.PASSED, TestStatus.SKIPPED):
        return False
    seen = crater.signature_of(UserTest(raw.case, status(raw), None, UserTestStatus.BROKEN,
                                        message=first_line(raw.message, 400), traceback=raw.traceback))
    return (seen.error, seen.message) == (sig.error, sig.message)


class BaselineMissing(Exception):
    """The dependent's baseline could not be resolved again: its steps have no environment."""


@dataclass
class Steps:
    """Where a crater group's steps run: the dependent's own environment as the crater built its
    baseline — its source as the crater took it, installed with its test requirements, on the same
    Python, as of the same day — held at the baseline's lock (uv constraints, as the crater holds
    its candidate) for every package but the moved one and what it brings (jax's jaxlib), which
    each step installs from its commit. A git dependent brings no pins: without its own
    environment the steps had the moved package, jaxlib and pytest only."""

    target: TestTarget
    plan: Plan
    package: str
    python: str
    matrix: Matrix
    state_dir: Path
    held: dict[str, str] | None = None  # the baseline's lock less the moved package, once resolved

    def baseline(self):
        """The dependent's baseline side (a cell), as ``crater.judge`` builds it."""
        cell = candidate_cell(list(self.plan.baseline), python=self.python, companions=False)
        return crater.replayed(self.target.cell(cell), self.plan)

    def lock(self) -> dict[str, str]:
        """The baseline's locked versions (the crater's lock, from the lock cache; resolved as of
        the same day in a state folder that lacks it), the moved package aside."""
        if self.held is None:
            base = self.baseline()
            got = cells.resolve_cell(base, self.matrix, self.state_dir)
            if isinstance(got, Ended):
                raise BaselineMissing(f"the baseline of {self.target.root.name} could not be resolved: "
                                      f"{got.status}: {got.message}")
            aside = {self.package, *FORCED.get(self.package, ())}
            self.held = {d: v for d, v in cells.lock_versions(got.lock).items() if d not in aside}
        return self.held

    def cell(self, reqs: list[str], step_id: str):
        """A step's cell: the commit's requirements in the dependent's environment, held at the baseline."""
        cell = candidate_cell(reqs, python=self.python, cell_id=step_id, companions=False)
        return hold(crater.replayed(self.target.cell(cell), self.plan), self.lock())


def rule_observer(steps: Steps, cases: tuple[str, ...]) -> commitbisect.Observe:
    """A step as the rule's cases, run in the dependent's environment."""
    def observe(reqs: list[str], step_id: str) -> CellResult:
        try:
            cell = steps.cell(reqs, step_id)
        except BaselineMissing as e:
            return _not_built(step_id, steps.python, str(e))
        return cells.run_cell(cell, steps.matrix, state_dir=steps.state_dir, reports_dir=None,
                              case_args=list(cases), compile_bytecode=False)
    return observe


def dependent_observer(steps: Steps, tests: list[str]) -> commitbisect.Observe:
    """A step as the dependent's own tests (only ``tests``), in its environment."""
    def observe(reqs: list[str], step_id: str) -> CellResult:
        try:
            cell = steps.cell(reqs, step_id)
        except BaselineMissing as e:
            return _not_built(step_id, steps.python, str(e))
        seen = userrun.observe(cell, steps.matrix, steps.state_dir, replace(steps.target, only=tuple(tests)),
                                 nodeids=tests)
        if seen.error:
            return _not_built(step_id, steps.python, seen.error)
        out = CellResult(id=step_id, python=steps.python, backend="cpu", status=CellStatus.OK,
                         versions=dict(seen.versions))
        out.results = [classify(r, (), out.versions, "cpu") for r in seen.results.values()]
        return out
    return observe


def _not_built(step_id: str, python: str, message: str) -> CellResult:
    return CellResult(id=step_id, python=python, backend="cpu", status=CellStatus.INSTALL_ERROR, message=message)
