"""``crater --bisect``: each broken group traced to the upstream commit that broke it.

The candidate moves one package of the ecosystem from the baseline's release to its own (jax
0.4.31 -> 0.4.33): its commits between the two releases' tags are bisected (``commitbisect``).
A group a rule explains is bisected on the rule's own cases (the matrix's minimal reproduction);
a group no rule explains, on the broken tests themselves, in the dependent that broke most, its
source as the crater took it. The answers go to ``bisect.json`` beside the crater's results, and
``crater.write`` puts each beside its group.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from packaging.utils import canonicalize_name

from jaxcompat._util.atomic import write_text
from jaxcompat._util.text import first_line, quiet
from jaxcompat.env.candidate import candidate_cell, parse_requirement
from jaxcompat.env.commits import HistoryError
from jaxcompat.env.gitsource import GitError
from jaxcompat.knowledge import signature as signatures
from jaxcompat.knowledge.cratergroups import Group
from jaxcompat.knowledge.outcomes import CellResult, RawResult, classify
from jaxcompat.model.commits import CommitBisect
from jaxcompat.model.crater import DependentResult
from jaxcompat.model.dependents import Dependents
from jaxcompat.model.matrix import Matrix
from jaxcompat.model.usertests import UserTest
from jaxcompat.model.vocab import CellStatus, TestStatus, UserTestStatus
from jaxcompat.operations import commitbisect, crater, usertests
from jaxcompat.operations.bisect import BisectError, Target, rule_target
from jaxcompat.plugin.packages import ECOSYSTEM

MAX_TESTS = 20  # a group's tests run at each step (its dependent's first ones)


def moved(plan: crater.Plan) -> tuple[str, str, str] | None:
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


def run(out_dir: Path, results: list[DependentResult], plan: crater.Plan, matrix: Matrix,
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
        except (BisectError, HistoryError, GitError, ValueError) as e:
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


def _target(g: Group, plan: crater.Plan, matrix: Matrix, dependents: Dependents,
            results: list[DependentResult], state_dir: Path, package: str):
    """(target, observe or None, other pins): a rule's cases where a rule explains the group, else
    the broken tests of the dependent that broke most."""
    pins = [p for p in plan.candidate
            if canonicalize_name(parse_requirement(p).name) not in (package, "jaxlib")]
    if g.explained_by and matrix.failure(g.explained_by) is not None:
        return rule_target(g.explained_by, matrix), None, pins
    name, tests = max(g.tests.items(), key=lambda kv: len(kv[1]))
    dep, res = dependents.get(name), next(r for r in results if r.name == name)
    if dep is None:
        raise BisectError(f"{name} is not in the dependents file")
    root, utarget = crater.source_of(dep, plan, state_dir, res.commit or res.version or None)
    tests = tests[:MAX_TESTS]
    sig = g.signature
    target = Target(sig.key, tuple(tests), lambda raw: _same_failure(raw, sig), signature=sig)
    return target, dependent_observer(utarget, tests, matrix, state_dir, res.python or plan.python), pins


def _same_failure(raw: RawResult, sig: signatures.Signature) -> bool:
    """The group's failure at a step: its error type *and* its message's signature, read from the
    step's result as the crater read the group's (``crater.signature_of``). A step failing otherwise
    (another error, or the same type with another message) is another failure, never this one."""
    if raw.status in (TestStatus.PASSED, TestStatus.SKIPPED):
        return False
    seen = crater.signature_of(UserTest(raw.case, usertests.status(raw), None, UserTestStatus.BROKEN,
                                        message=first_line(raw.message, 400), traceback=raw.traceback))
    return (seen.error, seen.message) == (sig.error, sig.message)


def dependent_observer(target: usertests.Target, tests: list[str], matrix: Matrix, state_dir: Path,
                       python: str) -> commitbisect.Observe:
    """A step as the dependent's own tests (only ``tests``) in an environment with the commit."""
    def observe(reqs: list[str], step_id: str) -> CellResult:
        cell = target.cell(replace(candidate_cell(reqs, python=python, cell_id=step_id, companions=False)))
        seen = usertests.observe(cell, matrix, state_dir, replace(target, only=tuple(tests)), nodeids=tests)
        if seen.error:
            return CellResult(id=step_id, python=python, backend="cpu", status=CellStatus.INSTALL_ERROR,
                              message=seen.error)
        out = CellResult(id=step_id, python=python, backend="cpu", status=CellStatus.OK, versions=dict(seen.versions))
        out.results = [classify(r, (), out.versions, "cpu") for r in seen.results.values()]
        return out
    return observe
