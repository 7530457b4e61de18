"""The judge held to the reference model of the verdict (``tests/verdict_model.py``).

Suites are generated — each test's statuses on both sides over its first run and its re-runs,
skips, time limits, tests not collected, the flaky file, --aa's second baseline run, modules that
cannot be collected or skip themselves whole (either side, the first run, re-runs, --aa's second
run), a confounder and what holding it does — and run through the real code: ``check --tests``'s comparison
(``usertests.compare`` with the runs of the tests scripted) and the crater (``crater.run`` of every
unit, a split dependent's parts on shards, then ``crater --report-only``), with shards missing,
lost or stale (an earlier run of the same plan too), a side not installed for a unit, parts of
different releases. Each test's class, each dependent's verdict, health and confounder, and the exit
must be the model's: so splitting a suite never changes its verdict, a re-run never turns a test
that fails on every candidate run into anything but broken, and a result no plan names never
enters a verdict. The defects the model found, and those a red team found, have their own tests below.

The examples are a fixed budget, derandomized, in CI (CI=true); locally hypothesis draws anew
(``VERDICT_MODEL_EXAMPLES=N`` for more).
"""

from __future__ import annotations

import ast
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from jaxcompat.commands import main
from jaxcompat.env import projects, testtarget
from jaxcompat.knowledge import flaky
from jaxcompat.knowledge.config import load
from jaxcompat.model import verdicts
from jaxcompat.model.crater import DependentResult, Plan
from jaxcompat.model.dependents import Dependent, DependentSource
from jaxcompat.model.matrix import Cell
from jaxcompat.model.outcomes import RawResult
from jaxcompat.model.stages import Resolved
from jaxcompat.model.target import Target
from jaxcompat.model.usertests import Confirm, Observed, UserTest
from jaxcompat.model.vocab import CellStatus, DependentVerdict, UserTestStatus
from jaxcompat.operations import crater, craterparts, usertests
from jaxcompat.operations.check import user_tests_item
from jaxcompat.run import userrun
from tests import verdict_model as model
from tests.helpers import make_tree
from tests.verdict_model import (
    ABSENT,
    ERROR,
    FAILED,
    MODULE_STATES,
    OK,
    PASSED,
    SKIPPED,
    SKIPS_IMPORT,
    STATUSES,
    TIMEOUT,
    UNCOLLECTABLE,
    Facts,
)

settings.register_profile("verdict-ci", max_examples=48, derandomize=True, database=None, deadline=None,
                          suppress_health_check=list(HealthCheck), print_blob=True)
# locally, VERDICT_MODEL_EXAMPLES=2000 searches longer (the default stays fast)
settings.register_profile("verdict-local", max_examples=int(os.environ.get("VERDICT_MODEL_EXAMPLES", "48")),
                          deadline=None, suppress_health_check=list(HealthCheck))
PROFILE = settings.get_profile("verdict-ci" if os.environ.get("CI") == "true" else "verdict-local")

REPO = Path(__file__).resolve().parent.parent
FILES = [f"tests/test_f{k}.py" for k in range(4)]  # 400, 300, 200, 100 bytes: dealt by size
NAMES = ["alpha", "beta", "gamma"]
CANDIDATE, BASELINE = ("jax==0.4.33",), ("jax==0.4.31",)
NUMPY = {"baseline": "1.26.4", "confounded": "2.0.0"}  # a package the candidate does not name, moved


# -------------------------------------------------------------------- the model stands alone


def test_the_model_imports_nothing_of_the_judge():
    tree = ast.parse((REPO / "tests" / "verdict_model.py").read_text(encoding="utf-8"))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert imported and not [m for m in imported if m.startswith(("jaxcompat", "tests"))], imported


# -------------------------------------------------------------------- the tests' runs, scripted


def _raw(name: str, status: str) -> RawResult | None:
    if status == ABSENT:
        return None
    said = {PASSED: ("passed", ""), FAILED: ("failed", "AssertionError: not close"), ERROR: ("crash", "segfault"),
            TIMEOUT: ("timeout", "stopped at the time limit"), SKIPPED: ("skipped", "needs a GPU")}[status]
    return RawResult(case=name, status=said[0], message=said[1])


def _module_raw(file: str, state: str) -> RawResult:
    """A module's own record: it could not be collected (an error at import), or it skipped itself whole."""
    if state == UNCOLLECTABLE:
        return RawResult(case=file, status="failed", message="ImportError: cannot import name 'x' from 'jax'",
                         error_types=["ImportError", "Exception"], phase="collect")
    reason = "could not import 'equinox': No module named 'equinox'" if state == SKIPS_IMPORT else "needs a GPU"
    return RawResult(case=file, status="skipped", message=reason, phase="collect")


def _side(cell: Cell) -> str:
    if "-held-" in cell.id:
        return "held"
    return "candidate" if cell.pins.get("jax") == CANDIDATE[0].split("==")[1] else "baseline"


class Script:
    """``observe`` as the facts say: a project's tests (by its folder's name), each side's whole runs
    (the first, then --aa's second of the baseline) and re-runs of named tests in turn."""

    def __init__(self, suites: dict[str, list[Facts]], confounded: set[str] = frozenset(), down: tuple = ()):
        self.suites, self.confounded = suites, confounded
        self.down = down  # (project, its unit's files or None for all, side): that side cannot be installed there
        self.seen: dict[tuple, int] = {}

    def _next(self, *key) -> int:
        self.seen[key] = self.seen.get(key, -1) + 1
        return self.seen[key]

    def observe(self, cell, matrix, state_dir, target, nodeids=None):
        project, side = target.root.name, _side(cell)
        if self.down and (project, side) == (self.down[0], self.down[2]) and self.down[1] in (None, set(target.only)):
            said = ("error: Failed to fetch: `https://pypi.org/simple/jax/`\n  Caused by: Request failed after 3 "
                    "retries\n  Caused by: operation timed out")
            return Observed(error=said, status=CellStatus.INSTALL_ERROR, cause=said.splitlines()[-1])
        facts = self.suites[project]
        # a re-run names tests, or a module (its own record: all its tests run)
        chosen = ([f for f in facts if f.name in nodeids or f.file in nodeids] if nodeids
                  else [f for f in facts if not target.only or f.file in target.only])
        results, runs_of = {}, {}
        for f in chosen:
            if side == "held":  # every module is collected there
                state, status = OK, f.held
            else:
                if f.file not in runs_of:  # this call is the file's k-th re-run, or its whole run (then --aa's)
                    runs_of[f.file] = self._next(project, side, f.file, "again" if nodeids else "whole")
                k, runs = runs_of[f.file], getattr(f, side)
                if nodeids:
                    state, status = f.module(side, 1 + k), runs[min(1 + k, len(runs) - 1)]
                else:
                    state, status = (f.module(side, 0), runs[0]) if k == 0 else (f.aa_module, f.aa)
            if state != OK:  # pytest reports the module once, none of its tests
                results[f.file] = _module_raw(f.file, state)
                continue
            raw = _raw(f.name, status)
            if raw is not None:
                results[f.name] = raw
        numpy = NUMPY["confounded" if side == "candidate" and project in self.confounded else "baseline"]
        return Observed(results=results, versions={"pytest": "8.0.0", "numpy": numpy},
                                  error="" if results else "pytest exited with code 5 before running any test:\n")


def _patch(mp: pytest.MonkeyPatch, script: Script, roots: dict[str, Path]) -> None:
    """The crater's and check's machinery with the tests' runs scripted: no environment, no index."""
    def source(dep, plan, state_dir, version, res):
        res.version = "1.0"
        return roots[dep.name], Target(roots[dep.name], project=True, timeout_s=300.0)

    mp.setattr(userrun, "observe", script.observe)
    mp.setattr(userrun, "build", lambda *a, **k: None)
    mp.setattr(userrun, "hold_to_baseline", lambda candidate, *a, **k: candidate)
    mp.setattr(crater, "resolve_cell", lambda cell, *a, **k: Resolved(cell, "python3", ""))
    mp.setattr(testtarget, "same_python", lambda c, b, *a, **k: (c, b, ""))
    mp.setattr(crater, "_source", source)
    mp.setattr(projects, "version_of", lambda dep, cache_dir, as_of=None: "1.0")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Each dependent's source (the same four test files), a small matrix, and each split's deal."""
    top = tmp_path_factory.mktemp("world")
    roots = {}
    for name in NAMES + ["proj"]:
        root = top / name
        for k, f in enumerate(FILES):
            (root / f).parent.mkdir(parents=True, exist_ok=True)
            (root / f).write_text("#" * (100 * (len(FILES) - k)))
        (root / "pyproject.toml").write_text(f'[project]\nname = "{name}"\nversion = "1.0"\n')
        roots[name] = root
    matrix_path = make_tree(top)
    deal = {n: [craterparts.part_tests(Dependent("d", DependentSource(version="1.0"), split=n, part=k),
                                       roots["alpha"])[0] for k in range(1, n + 1)] for n in range(1, len(FILES) + 1)}
    return {"roots": roots, "matrix": load(matrix_path), "matrix_path": matrix_path, "deal": deal, "top": top}


# -------------------------------------------------------------------- generated suites

# A file's tests share a mode now and then: all passing, every one skipped in the candidate, skipped
# on both sides (a GPU-only file, deselected), stopped at the time limit on both sides, failing before.
MODES = ["mixed", "mixed", "mixed", "passing", "passing", "skipped-after", "skipped-both", "stopped", "failing-before",
         "new"]
# now and then every file in one of a few modes: every test that ran before skipped in the candidate
# beside tests the candidate alone runs, or every test stopped at the time limit on both sides beside them
NARROW = [["skipped-after", "new"], ["stopped", "new"], ["stopped", "skipped-after", "new", "skipped-both"]]
status = st.sampled_from([PASSED, PASSED, PASSED, *STATUSES])


@st.composite
def side_runs(draw, first: str) -> tuple[str, ...]:
    """A side's first run, then two re-runs: as the first, failing another way, or anything."""
    return (first, *(draw(st.sampled_from([first, first, FAILED, ERROR, TIMEOUT, PASSED, SKIPPED, ABSENT]))
                     for _ in range(2)))


module_state = st.sampled_from([OK, UNCOLLECTABLE, UNCOLLECTABLE, *MODULE_STATES])


@st.composite
def module_runs(draw) -> tuple[str, ...]:
    """A module's state in a side's first run, then two re-runs: as the first, or anything."""
    first = draw(module_state)
    return (first, *(draw(st.sampled_from([first, first, first, *MODULE_STATES])) for _ in range(2)))


@st.composite
def suites(draw, with_baseline: bool = True) -> list[Facts]:
    out = []
    modes = draw(st.sampled_from([MODES] * 4 + NARROW))
    troubled = draw(st.sampled_from([0.0, 0.0, 0.3, 0.6]))  # how often a file's module is not simply collected
    for file in FILES:
        mode = draw(st.sampled_from(modes))
        modules = {}
        if draw(st.floats(0, 1)) < troubled:  # its module cannot be collected, or skips itself, now and then
            modules = dict(candidate_module=draw(module_runs()),
                           baseline_module=draw(module_runs()) if with_baseline else (),
                           aa_module=draw(module_state))
        for i in range(draw(st.integers(0, 3))):
            after = {"passing": PASSED, "skipped-after": SKIPPED, "skipped-both": SKIPPED,
                     "stopped": TIMEOUT}.get(mode) or draw(status)
            before = {"passing": PASSED, "skipped-both": SKIPPED, "stopped": TIMEOUT, "failing-before": FAILED,
                      "new": draw(st.sampled_from([SKIPPED, ABSENT]))}.get(mode) or draw(status)
            out.append(Facts(f"{file}::t{i}", draw(side_runs(after)),
                             draw(side_runs(before)) if with_baseline else None,
                             aa=draw(st.sampled_from([before, before, before, PASSED, FAILED, ERROR, TIMEOUT])),
                             known=draw(st.sampled_from([False] * 5 + [True])),
                             held=draw(st.sampled_from([PASSED, FAILED])), **modules))
    return out


# -------------------------------------------------------------------- check --tests


def _compare(world, suite: list[Facts], reruns: int, aa: bool, with_baseline: bool):
    with pytest.MonkeyPatch.context() as mp:
        _patch(mp, Script({"proj": suite}), world["roots"])
        known = tuple((f.name, "seen") for f in suite if f.known)
        target = Target(world["roots"]["proj"], project=True, timeout_s=300.0)
        base = Cell("b", "3.12", "cpu", {"jax": "0.4.31"}) if with_baseline else None
        return usertests.compare(Cell("c", "3.12", "cpu", {"jax": "0.4.33"}), base,
                                 target, world["matrix"], world["top"], confirm=Confirm(reruns, aa, known),
                                 decided=Resolved(base, "python3", "") if base else None)


@settings(PROFILE, max_examples=PROFILE.max_examples * 3)
@given(data=st.data(), reruns=st.integers(0, 2), aa=st.booleans(), with_baseline=st.booleans())
def test_check_tests_answers_as_the_model(world, data, reruns, aa, with_baseline):
    suite = data.draw(suites(with_baseline))
    aa = aa and with_baseline  # check refuses --aa without a baseline
    cmp = _compare(world, suite, reruns, aa, with_baseline)
    got = {t.test: str(t.cls) for t in cmp.tests}
    assert got == model.classes(suite, reruns, aa)
    code = verdicts.decide([user_tests_item(cmp, "yours")]).code
    assert code == model.check_exit(suite, reruns, aa), got
    event(f"exit {code}")
    event("a test flaky" if "flaky" in got.values() else "no test flaky")
    for _, cls in model.module_records(suite, reruns).values():
        event(f"a module's own record: {cls}")
    if {f.file for f in suite if f.module("candidate", 0) == UNCOLLECTABLE and f.collected("baseline")}:
        event("a module the baseline collected cannot be collected in the candidate")
    for f in suite:  # passed before (and never failed there), fails on every candidate run, not known to flip
        before = model.runs_of(f, "baseline", reruns) if f.baseline else ()
        after = model.runs_of(f, "candidate", reruns)
        steady = before and before[0] == PASSED and not set(before[1:]) & {*model.FAILING, model.MODULE_ERROR}
        if (steady and all(s in (*model.FAILING, model.MODULE_ERROR) for s in after) and not f.known
                and not (aa and model.aa_flipped(f))):
            assert got[f.name] == "broken", (f, got[f.name])


# -------------------------------------------------------------------- the crater, split and sharded

MISHAPS = ["none", "missing", "lost-shard", "stale-unplanned", "stale-other-run", "other-python-shard",
           "stale-same-plan", "not-installed", "other-release"]


@st.composite
def crater_runs(draw, mishap: str) -> dict:
    names = NAMES[:draw(st.integers(1, 2))]
    return {"deps": [(n, draw(suites()), draw(st.integers(1, len(FILES))), draw(st.booleans())) for n in names],
            "reruns": draw(st.integers(0, 2)), "aa": draw(st.booleans()), "shards": draw(st.integers(1, 3)),
            "mishap": mishap, "which": draw(st.integers(0, 20))}


def _crater(world, run: dict, folder: Path) -> tuple[int, dict | None, set[str]]:
    """The run's units on its shards, its mishap, then --report-only: (exit, crater.json, lost units)."""
    state, out = folder / "state", folder / "reports" / "crater"
    deps = [Dependent(n, DependentSource(version="1.0"), split=s) for n, _, s, _ in run["deps"]]
    units = craterparts.units(deps)
    plan = Plan(CANDIDATE, BASELINE, reruns=run["reruns"], aa=run["aa"])
    other = replace(plan, python="3.12")  # the same candidate and baseline, run with --python 3.12
    store = flaky.load(None, state, learning=True)
    for n, suite, _, _ in run["deps"]:
        store.learn(n, {f.name: "seen" for f in suite if f.known})
    store.save()
    n, odd = run["shards"], run["which"] % run["shards"] + 1
    by_shard = {i: crater.shard(units, f"{i}/{n}") for i in range(1, n + 1)}
    victim = units[run["which"] % len(units)]
    down = ((victim.name, set(world["deal"][victim.split][victim.part - 1]) if victim.part else None,
             ("candidate", "baseline")[run["which"] // len(units) % 2]) if run["mishap"] == "not-installed" else ())
    script = Script({name: suite for name, suite, _, _ in run["deps"]}, {name for name, *_, c in run["deps"] if c},
                    down)
    with pytest.MonkeyPatch.context() as mp:
        _patch(mp, script, world["roots"])
        for i, mine in by_shard.items():
            p = other if run["mishap"] == "other-python-shard" and i == odd else plan
            crater.store_plan(out, p, units, f"{i}/{n}")
            crater.run(mine, p, world["matrix"], state, out, isolate=False, use_cache=False)
    run["said"] = [(r.name, str(r.verdict)) for r in crater.stored(out)]  # each unit on its own (statistics)
    lost: set[str] = set()
    victim = victim.unit
    if run["mishap"] == "not-installed":  # that side of that unit was never installed: not judged
        lost = {victim}
    elif run["mishap"] == "other-release" and "." in victim:  # a part ran another release of its dependent
        moved = json.loads((out / crater.RESULTS / f"{victim}.json").read_text())
        moved["version"] = "1.1"
        (out / crater.RESULTS / f"{victim}.json").write_text(json.dumps(moved))
        lost = {victim}
    elif run["mishap"] == "stale-same-plan":  # an earlier run of the same plan wrote it; tonight's shard did not
        earlier = json.loads((out / crater.RESULTS / f"{victim}.json").read_text())
        earlier["run_id"] = "an-earlier-run"
        (out / crater.RESULTS / f"{victim}.json").write_text(json.dumps(earlier))
        lost = {victim}
    elif run["mishap"] == "missing":
        (out / crater.RESULTS / f"{victim}.json").unlink()
        lost = {victim}
    elif run["mishap"] == "lost-shard":
        (out / crater.RESULTS / crater.PLANS / f"shard-{odd}-of-{n}.json").unlink()
        lost = {u.unit for u in by_shard[odd]}
        for u in lost:
            (out / crater.RESULTS / f"{u}.json").unlink()
    elif run["mishap"] == "stale-unplanned":  # left from an earlier run of the same plan
        stale = DependentResult("optax", DependentVerdict.BROKEN, version="0.2.0", plan=plan.key,
                                ran={"candidate": 1, "baseline": 1},
                                tests=[UserTest("t.py::t", "failed", "passed", UserTestStatus.BROKEN)])
        (out / crater.RESULTS / "optax.json").write_text(json.dumps(stale.to_dict()))
    elif run["mishap"] == "stale-other-run":  # a planned unit's artifact from another run
        stale = DependentResult.from_dict(json.loads((out / crater.RESULTS / f"{victim}.json").read_text()))
        stale.plan, stale.verdict = other.key, DependentVerdict.BROKEN
        (out / crater.RESULTS / f"{victim}.json").write_text(json.dumps(stale.to_dict()))
        lost = {victim}
    (folder / "dependents.toml").write_text("".join(f'[[dependent]]\nname = "{d.name}"\nversion = "latest"\n'
                                                    f"split = {d.split}\n" for d in deps))
    code = main(["crater", "--report-only", "--matrix", str(world["matrix_path"]), "--reports",
                 str(folder / "reports"), "--state", str(state), "--dependents", str(folder / "dependents.toml")])
    report = out / "crater.json"
    return code, json.loads(report.read_text()) if report.is_file() else None, lost


def _expected(world, run: dict, lost: set[str]) -> tuple[int, dict[str, str]]:
    """The model's exit and verdict per dependent."""
    if run["mishap"] == "other-python-shard" and run["shards"] > 1:
        return 2, {}  # two runs' plans: refused
    if run["mishap"] == "lost-shard" and run["shards"] == 1:
        return 2, {}  # nothing stored at all
    said = {}
    for name, suite, split, _ in run["deps"]:
        parts = [k for k in range(1, split + 1) if (f"{name}.part{k}-of-{split}" if split > 1 else name) in lost]
        # a part of another release was compared all the same: its tests count, the gap keeps it from safe
        gone = {f for k in parts for f in world["deal"][split][k - 1]} if run["mishap"] != "other-release" else set()
        said[name] = model.split_verdict(suite, run["reruns"], run["aa"], gone, bool(parts))
        if run["mishap"] == "not-installed" and parts and said[name] == model.NOT_RUN:
            said[name] = "index-unreachable"  # the installer's words: the index did not answer (not judged)
    return model.run_exit(list(said.values())), said


@pytest.mark.parametrize("mishap", MISHAPS)
@settings(PROFILE, max_examples=max(1, PROFILE.max_examples // 4))
@given(data=st.data())
def test_the_crater_answers_as_the_model(world, tmp_path_factory, capsys, mishap, data):
    run = data.draw(crater_runs(mishap))
    code, report, lost = _crater(world, run, tmp_path_factory.mktemp("crater"))
    capsys.readouterr()
    want, verdicts_ = _expected(world, run, lost)
    event(f"exit {want}")
    for v in verdicts_.values():
        event(f"a dependent: {v}")
    for unit, v in run["said"]:
        event(f"a part of its own: {v}" if "." in unit else f"whole: {v}")
    assert code == want, (run["mishap"], verdicts_, report and {d["name"]: d["verdict"] for d in report["dependents"]})
    if not verdicts_:
        return
    by = {d["name"]: d for d in report["dependents"]}
    assert {n: d["verdict"] for n, d in by.items()} == verdicts_  # optax, no plan names it: not among them
    if run["mishap"] == "stale-unplanned":
        assert any(x.startswith("optax.json") for x in report["ignored"])
    if run["mishap"] == "stale-same-plan":
        assert [x for x in report["ignored"] if x.startswith(f"{next(iter(lost))}.json (written by no shard")]
    for name, suite, _, confounded in run["deps"]:
        if any(u == name or u.startswith(name + ".") for u in lost):
            continue
        reruns, aa = run["reruns"], run["aa"]
        assert {t["test"]: t["class"] for t in by[name]["tests"]} == model.classes(suite, reruns, aa)
        health = by[name]["health"]
        assert (health is not None and health["status"] == "unhealthy") == model.unhealthy(suite, reruns, aa)
        held = [c["held_run"] for c in by[name]["sides"].get("confounders", [])]
        assert held == ([model.held_run(suite, reruns, aa)] if confounded else [])


# -------------------------------------------------------------------- the defects it found


def _merged(world, tmp_path, deps: list[tuple[str, list[Facts], int]], capsys, confounded=frozenset()) -> tuple:
    run = {"deps": [(n, s, k, n in confounded) for n, s, k in deps], "reruns": 1, "aa": False, "shards": 2,
           "mishap": "none", "which": 0}
    code, report, _ = _crater(world, run, tmp_path)
    return code, {d["name"]: d for d in report["dependents"]}, capsys.readouterr().out


def _t(name: str, after: tuple[str, ...], before: tuple[str, ...], held: str = PASSED) -> Facts:
    return Facts(name, after, before, aa=before[0], held=held)


def test_a_split_dependent_gets_the_verdict_of_its_whole_suite(world, tmp_path, capsys):
    """758816f: a part whose tests all skip in the candidate made the split dependent `none-ran`
    (exit 1) beside "ran 2 before, 1 after"; a part skipped on both sides made it `not-run` (exit
    2). The whole suite is safe (exit 0), and so is the split one now."""
    f0, f1 = FILES[0], FILES[1]  # dealt into different parts of 2
    assert f0 in world["deal"][2][0] and f1 in world["deal"][2][1]
    ran = [_t(f"{f0}::a", (PASSED,), (PASSED,)), _t(f"{f0}::b", (SKIPPED,), (PASSED,))]
    for part2, before in (("skipped in the candidate", PASSED), ("skipped on both sides", SKIPPED)):
        skipped = [_t(f"{f1}::gpu{i}", (SKIPPED,), (before,)) for i in range(2)]
        code, by, out = _merged(world, tmp_path / part2.replace(" ", "-"),
                                [("alpha", ran + skipped, 2), ("beta", ran + skipped, 1)], capsys)
        assert by["alpha"]["verdict"] == by["beta"]["verdict"] == "safe", (part2, by["alpha"]["cause"])
        assert code == 0 and "breaks none" in out, part2


def test_a_split_dependent_keeps_the_health_and_confounders_of_every_part(world, tmp_path, capsys):
    """758816f kept part 1's health and sides: part 2's unhealthy baseline and its confounder re-run
    ("numpy is the cause") were dropped, and the candidate was blamed alone."""
    f0, f1 = FILES[0], FILES[1]
    fine = [_t(f"{f0}::ok", (PASSED,), (PASSED,))]
    failing = [_t(f"{f1}::old{i}", (FAILED, FAILED), (FAILED, FAILED)) for i in range(3)]
    broke = [_t(f"{f1}::numpy", (FAILED, FAILED), (PASSED, PASSED), held=PASSED)]  # passes with numpy held
    suite = fine + failing + broke
    code, by, _ = _merged(world, tmp_path, [("alpha", suite, 2), ("beta", suite, 1)], capsys, {"alpha", "beta"})
    assert code == 1
    for name in ("alpha", "beta"):  # split and whole alike
        assert by[name]["health"]["status"] == "unhealthy", name
        [numpy] = by[name]["sides"]["confounders"]
        assert (numpy["dist"], numpy["held_run"]) == ("numpy", "the cause"), name
        assert numpy["detail"] == "1 of 1 broken test(s) pass with numpy 1.26.4"


@pytest.mark.parametrize("runs", [(FAILED, TIMEOUT), (FAILED, ERROR), (TIMEOUT, FAILED), (ERROR, TIMEOUT, FAILED)])
def test_a_test_failing_on_every_candidate_run_is_broken_whatever_the_way(world, runs):
    """758816f compared the re-run's exact status: passed before, then `failed` and `timeout` (or
    `error`, a crash) in the candidate was `flaky`, never `broken`, and the suite read safe."""
    suite = [_t(f"{FILES[0]}::t", runs, (PASSED,) * len(runs)), _t(f"{FILES[0]}::ok", (PASSED,), (PASSED,))]
    cmp = _compare(world, suite, len(runs) - 1, False, True)
    assert {t.test: str(t.cls) for t in cmp.tests}[f"{FILES[0]}::t"] == "broken"
    assert verdicts.decide([user_tests_item(cmp, "yours")]).code == 1
    flipped = [_t(f"{FILES[0]}::t", (FAILED, PASSED), (PASSED, PASSED))]  # a pass on a re-run is flaky still
    assert [str(t.cls) for t in _compare(world, flipped, 1, False, True).tests] == ["flaky"]


def _stored(tmp_path: Path, plans: list[Plan], results: list[DependentResult]) -> Path:
    out = tmp_path / "reports" / "crater"
    deps = [Dependent("alpha", DependentSource(version="1.0")), Dependent("beta", DependentSource(version="1.0"))]
    for i, plan in enumerate(plans, 1):
        crater.store_plan(out, plan, deps, f"{i}/{len(plans)}")
    for r in results:
        (out / crater.RESULTS / f"{r.name}.json").write_text(json.dumps(r.to_dict()))
    (tmp_path / "dependents.toml").write_text('[[dependent]]\nname = "alpha"\nversion = "latest"\n'
                                              '[[dependent]]\nname = "beta"\nversion = "latest"\n')
    return out


def _report_only(tmp_path: Path, capsys) -> tuple[int, str]:
    code = main(["crater", "--report-only", "--reports", str(tmp_path / "reports"), "--state",
                 str(tmp_path / "state"), "--dependents", str(tmp_path / "dependents.toml")])
    said = capsys.readouterr()
    return code, said.out + said.err


def _safe(name: str, plan: Plan) -> DependentResult:
    return DependentResult(name, DependentVerdict.SAFE, version="1.0", plan=plan.key, run_id=plan.run_id,
                           ran={"candidate": 2, "baseline": 2})


def test_report_only_leaves_out_and_names_a_result_no_plan_names(tmp_path, capsys):
    """758816f merged a stale optax.json of the same plan key, which no plan lists: "breaks optax", exit 1."""
    plan = Plan(CANDIDATE, BASELINE)
    stale = DependentResult("optax", DependentVerdict.BROKEN, version="0.1.0", plan=plan.key,
                            ran={"candidate": 1, "baseline": 1},
                            tests=[UserTest("t.py::t", "failed", "passed", UserTestStatus.BROKEN)])
    out = _stored(tmp_path, [plan, plan], [_safe("alpha", plan), _safe("beta", plan), stale])
    code, said = _report_only(tmp_path, capsys)
    assert code == 0 and "breaks none of the 2 dependents" in said, said
    data = json.loads((out / "crater.json").read_text())
    assert [d["name"] for d in data["dependents"]] == ["alpha", "beta"]
    assert data["ignored"] == ["optax.json (its run planned no such dependent: left from an earlier run)"]
    assert "optax.json" in said and "optax.json" in (out / "crater.md").read_text()


@pytest.mark.parametrize("moved", [dict(python="3.12"), dict(index_url="https://example.org/simple"),
                                   dict(extra_index_urls=("https://example.org/simple",)),
                                   dict(find_links=("https://example.org/wheels/",)), dict(pre=True)])
def test_shards_run_with_another_python_or_index_are_never_merged(tmp_path, capsys, moved):
    """758816f's plan key held the candidate, the baseline and the day only: shards run with
    another --python, --index-url, --extra-index-url, --find-links or --pre merged silently."""
    from jaxcompat.model.index import IndexOptions

    plan = Plan(CANDIDATE, BASELINE)
    python = moved.pop("python", None)
    other = replace(plan, python=python) if python else replace(plan, index=IndexOptions(**moved))
    assert other.key != plan.key
    _stored(tmp_path, [plan, other], [_safe("alpha", plan), _safe("beta", other)])
    code, said = _report_only(tmp_path, capsys)
    assert code == 2 and "different crater runs" in said and "breaks none" not in said, said


@pytest.mark.integration
def test_rerun_failures_of_a_split_dependent_runs_what_broke_and_can_clear_it(tmp_path):
    """758816f dealt the one test to re-run into the dependent's 2 parts: part 2 had none,
    `no-source` ("no test file falls to part 2 of 2 … write split = 1"), so a break that did not
    come back could never read safe (exit 2)."""
    from tests.test_crater import _crater, _tree

    deps = '[[dependent]]\nname = "alpha"\nversion = "latest"\ntests = ["tests"]\nsplit = 2\n'
    tmp = _tree(tmp_path, deps, alpha="def test_grad():\n    pass\n\ndef test_ok():\n    pass\n")
    (tmp / "src" / "alpha" / "tests" / "test_other.py").write_text("def test_fine():\n    pass\n")
    earlier = tmp / "earlier.json"  # an earlier crater's report: test_grad broke (it does not now)
    earlier.write_text(json.dumps({"kind": "crater", "dependents": [
        {"name": "alpha", "tests": [{"test": "tests/test_mod.py::test_grad", "class": "broken"}]}]}))
    proc = _crater(tmp, "--rerun-failures", str(earlier), "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "no test file falls" not in out, out
    [alpha] = json.loads((tmp / "reports" / "crater" / "crater.json").read_text())["dependents"]
    assert alpha["verdict"] == "safe" and alpha["ran"] == {"candidate": 1, "baseline": 1}


# -------------------------------------------------------------------- the defects the red team found


@pytest.mark.parametrize("new", [PASSED, FAILED])
def test_tests_the_candidate_alone_ran_never_make_a_suite_skipped_there_safe(world, tmp_path, capsys, new):
    """636eb1d: every test that ran in the baseline skipped in the candidate, beside one test the
    baseline skipped that runs (passing, or even failing) in the candidate: `safe`, exit 0, split or
    not, and so said check --tests. None of the tests that ran in the baseline ran in the candidate:
    none-ran, exit 1."""
    f0, f1 = FILES[0], FILES[1]
    suite = [_t(f"{f0}::a{i}", (SKIPPED,), (PASSED,)) for i in range(5)] + [_t(f"{f1}::new", (new,), (SKIPPED,))]
    code, by, out = _merged(world, tmp_path, [("alpha", suite, 2), ("beta", suite, 1)], capsys)
    assert code == 1 and by["alpha"]["verdict"] == by["beta"]["verdict"] == "none-ran", out
    cmp = _compare(world, suite, 1, False, True)
    assert verdicts.decide([user_tests_item(cmp, "yours")]).code == 1
    assert model.suite_verdict(suite, 1, False) == model.NONE_RAN


def test_tests_the_candidate_alone_ran_never_make_a_suite_stopped_at_the_time_limit_judged(world, tmp_path, capsys):
    """636eb1d: every test stopped at the time limit on both sides beside one test only the
    candidate ran (passing): `safe`, exit 0. No test that ran on both sides ended: not-run, exit 2."""
    f0, f1 = FILES[0], FILES[1]
    suite = [_t(f"{f0}::slow{i}", (TIMEOUT,), (TIMEOUT,)) for i in range(5)] + [_t(f"{f1}::new", (PASSED,), (ABSENT,))]
    code, by, out = _merged(world, tmp_path, [("alpha", suite, 2), ("beta", suite, 1)], capsys)
    assert code == 2 and by["alpha"]["verdict"] == by["beta"]["verdict"] == "not-run", out
    assert "time limit" in by["alpha"]["cause"] and "breaks none" not in out
    assert verdicts.decide([user_tests_item(_compare(world, suite, 1, False, True), "yours")]).code == 2


@pytest.mark.parametrize("split", [1, 2])
def test_a_part_whose_side_was_not_installed_holds_no_broken_test(world, tmp_path, capsys, split):
    """636eb1d: the candidate could not be installed on part 2's shard (the index did not answer):
    the merge kept that part's records, every test that passed in the baseline reading broken beside
    a candidate never installed: `broken`, exit 1, where the whole dependent said index-unreachable,
    exit 2. A part not installed holds no test; a real break in a part that was compared stays one."""
    f0, f1 = FILES[0], FILES[1]
    suite = [_t(f"{f0}::a{i}", (PASSED,), (PASSED,)) for i in range(3)] + [
        _t(f"{f1}::b{i}", (PASSED,), (PASSED,)) for i in range(3)]
    run = {"deps": [("alpha", suite, split, False)], "reruns": 1, "aa": False, "shards": 2,
           "mishap": "not-installed", "which": split - 1}  # part 2 of 2 (or the whole), its candidate
    code, report, _ = _crater(world, run, tmp_path / "fine")
    [alpha] = report["dependents"]
    assert code == 2 and alpha["verdict"] == "index-unreachable", alpha["cause"]
    assert not [t for t in alpha["tests"] if t["class"] == "broken"] and "broken" not in alpha["classes"]
    broke = [_t(f"{f0}::a0", (FAILED, FAILED), (PASSED, PASSED))] + suite[1:]
    code, report, _ = _crater(world, dict(run, deps=[("alpha", broke, 2, False)], which=1), tmp_path / "broke")
    [alpha] = report["dependents"]
    assert code == 1 and alpha["verdict"] == "broken" and "index-unreachable" in alpha["cause"]
    assert [t["test"] for t in alpha["tests"] if t["class"] == "broken"] == [f"{f0}::a0"]


@pytest.mark.parametrize("baseline, want, code", [((TIMEOUT, FAILED), "fails-both", 0),
                                                  ((TIMEOUT, ERROR), "fails-both", 0),
                                                  ((PASSED, TIMEOUT), "broken", 1)])
def test_a_stop_at_the_time_limit_on_a_rerun_is_no_evidence(world, tmp_path, capsys, baseline, want, code):
    """636eb1d, --reruns 1, the candidate failing twice: a baseline stopped at the time limit, then
    failing outright on its re-run, read `broken` (it never passed there: fails-both); a baseline
    that passed, then was stopped on its re-run, read `flaky` and the suite safe (a stop is how it
    would have ended not known, no flip: broken)."""
    suite = [_t(f"{FILES[0]}::ok", (PASSED,), (PASSED,)), _t(f"{FILES[0]}::x", (FAILED, FAILED), baseline)]
    got, by, out = _merged(world, tmp_path, [("alpha", suite, 1)], capsys)
    assert got == code and {t["test"]: t["class"] for t in by["alpha"]["tests"]}[f"{FILES[0]}::x"] == want, out
    cmp = _compare(world, suite, 1, False, True)
    assert {t.test: str(t.cls) for t in cmp.tests}[f"{FILES[0]}::x"] == want
    assert model.classes(suite, 1, False)[f"{FILES[0]}::x"] == want


def test_a_break_beside_a_part_of_another_release_is_broken(world, tmp_path, capsys):
    """636eb1d: part 1 holds a test that passed in the baseline and fails on every candidate run;
    part 2 ran another release of the dependent: `not-run`, exit 2. A break is a break (exit 1),
    the gap named in its cause."""
    f0, f1 = FILES[0], FILES[1]
    suite = [_t(f"{f0}::a", (FAILED, FAILED), (PASSED, PASSED)), _t(f"{f1}::b", (PASSED,), (PASSED,))]
    run = {"deps": [("alpha", suite, 2, False)], "reruns": 1, "aa": False, "shards": 2,
           "mishap": "other-release", "which": 1}  # part 2 ran alpha 1.1
    code, report, _ = _crater(world, run, tmp_path)
    [alpha] = report["dependents"]
    assert code == 1 and alpha["verdict"] == "broken" and "different releases" in alpha["cause"], alpha["cause"]
    assert [t["test"] for t in alpha["tests"] if t["class"] == "broken"] == [f"{f0}::a"]


def test_report_only_leaves_out_an_earlier_runs_result_of_the_same_plan(world, tmp_path, capsys):
    """636eb1d: night 1's shards both finished (safe); night 2, into the same reports folder with the
    same plan, shard 2 stored its plan and was killed before its result: night 1's part 2 merged as
    night 2's, `safe`, exit 0. A result carries the run_id of the shard that wrote it, and a merge
    takes only results of a stored plan's run_id: part 2 has none tonight, exit 2."""
    state, out = tmp_path / "state", tmp_path / "reports" / "crater"
    units = craterparts.units([Dependent("alpha", DependentSource(version="1.0"), split=2)])
    (tmp_path / "dependents.toml").write_text('[[dependent]]\nname = "alpha"\nversion = "latest"\nsplit = 2\n')

    def night(suite: list[Facts], finished: set[int]) -> tuple[int, dict]:
        with pytest.MonkeyPatch.context() as mp:
            _patch(mp, Script({"alpha": suite}), world["roots"])
            for i in (1, 2):
                plan = Plan(CANDIDATE, BASELINE)  # each shard is an invocation of its own
                crater.store_plan(out, plan, units, f"{i}/2")
                if i in finished:
                    crater.run(crater.shard(units, f"{i}/2"), plan, world["matrix"], state, out, isolate=False,
                               use_cache=False)
        code = main(["crater", "--report-only", "--matrix", str(world["matrix_path"]), "--reports",
                     str(tmp_path / "reports"), "--state", str(state),
                     "--dependents", str(tmp_path / "dependents.toml")])
        capsys.readouterr()
        return code, json.loads((out / "crater.json").read_text())

    f0, f1 = FILES[0], FILES[1]
    code, _ = night([_t(f"{f0}::a", (PASSED,), (PASSED,)), _t(f"{f1}::b", (PASSED,), (PASSED,))], {1, 2})
    assert code == 0
    code, report = night([_t(f"{f0}::a", (PASSED,), (PASSED,)), _t(f"{f1}::b", (FAILED, FAILED), (PASSED, PASSED))],
                         {1})
    [alpha] = report["dependents"]
    assert code == 2 and alpha["verdict"] == "not-run" and "part2-of-2: no result stored" in alpha["cause"]
    assert [x for x in report["ignored"] if x.startswith("alpha.part2-of-2.json (written by no shard")]


# -------------------------------------------------------------------- what the model of modules found


def _m(name: str, after: tuple[str, ...], before: tuple[str, ...] | None, after_module: tuple[str, ...],
       before_module: tuple[str, ...] = ()) -> Facts:
    """A test and its module's state in each run (the first, then the re-runs) of each side."""
    return Facts(name, after, before, aa=before[0] if before else ABSENT, candidate_module=after_module,
                 baseline_module=before_module)


def _judged(world, suite: list[Facts], reruns: int, with_baseline: bool = True) -> tuple[dict[str, str], int]:
    cmp = _compare(world, suite, reruns, False, with_baseline)
    return {t.test: str(t.cls) for t in cmp.tests}, verdicts.decide([user_tests_item(cmp, "yours")]).code


@pytest.mark.parametrize("reruns", [0, 1])
@pytest.mark.parametrize("before", ["skipped itself", "no test collected"])
def test_a_module_the_baseline_collected_without_a_test_that_cannot_be_collected_after_is_broken(
        world, tmp_path, capsys, before, reruns):
    """A module that skipped itself whole in the baseline (``pytest.skip(..., allow_module_level=True)``,
    "needs a GPU"), or was collected there with none of its tests (deselected, parametrized over
    nothing), that cannot be imported in the candidate read `fails` (nothing passed before), exit 0
    beside a passing test: plain pytest went from exit 0 to a collection error. Its own record is the
    break (as e742ced made it for a module whose tests were skipped by markers)."""
    f0, f1 = FILES[0], FILES[1]
    n = 1 + reruns
    mod = (_m(f"{f0}::t", (PASSED,) * n, (PASSED,) * n, (UNCOLLECTABLE,) * n, (model.SKIPS,) * n)
           if before == "skipped itself" else _m(f"{f0}::t", (PASSED,) * n, (ABSENT,) * n, (UNCOLLECTABLE,) * n))
    suite = [mod, _t(f"{f1}::ok", (PASSED,) * n, (PASSED,) * n)]
    assert model.classes(suite, reruns, False) == {f0: "broken", f"{f1}::ok": "pass"}
    assert _judged(world, suite, reruns) == ({f0: "broken", f"{f1}::ok": "pass"}, 1)
    code, by, out = _merged(world, tmp_path, [("alpha", suite, 2), ("beta", suite, 1)], capsys)
    assert code == 1 and by["alpha"]["verdict"] == by["beta"]["verdict"] == "broken", out
    [record] = [t for t in by["beta"]["tests"] if t["test"] == f0]
    assert (record["baseline"], record["candidate"]) == ("skipped" if before == "skipped itself" else "passed",
                                                          "error")


def test_a_module_whose_whole_run_could_not_import_it_is_judged_by_that_run(world):
    """A module that cannot be imported in the candidate's whole first run and imports when it is run
    again alone (its tests pass). The helper that taught the model modules made that a flip (flaky),
    and red team 11 (A1) showed the cost: a sibling module that breaks the import for the whole run
    (a library version poisoning ``sys.modules``), while the module alone imports, read flaky, exit 0
    - a wrong safe. The whole run decides: its module's record (and its tests) keep the first run's
    class; a flaky import is a false alarm kept, not a break read safe."""
    f0, f1 = FILES[0], FILES[1]
    flips = (UNCOLLECTABLE, OK)
    alone = [_m(f"{f0}::t", (PASSED,) * 2, None, flips), Facts(f"{f1}::ok", (PASSED,) * 2, None)]
    assert model.classes(alone, 1, False) == {f0: "fails", f"{f1}::ok": "pass"}
    assert _judged(world, alone, 1, with_baseline=False) == ({f0: "fails", f"{f1}::ok": "pass"}, 1)
    # the baseline imported it (its test skipped by a marker): broken, its test fails (never ran before)
    skipped = [_m(f"{f0}::t", (PASSED,) * 2, (SKIPPED,) * 2, flips), _t(f"{f1}::ok", (PASSED,) * 2, (PASSED,) * 2)]
    want = {f0: "broken", f"{f0}::t": "fails", f"{f1}::ok": "pass"}
    assert model.classes(skipped, 1, False) == want
    assert _judged(world, skipped, 1) == (want, 1)
    # its test passed before: broken, whatever its re-run alone does
    passing = [_m(f"{f0}::t", (PASSED,) * 2, (PASSED,) * 2, flips), skipped[1]]
    assert model.classes(passing, 1, False) == {f"{f0}::t": "broken", f"{f1}::ok": "pass"}
    assert _judged(world, passing, 1) == ({f"{f0}::t": "broken", f"{f1}::ok": "pass"}, 1)
    # its import flips in the baseline instead: a module's record is never re-run there either
    baseline_flips = [replace(skipped[0], candidate_module=(UNCOLLECTABLE,) * 2, baseline_module=(OK, UNCOLLECTABLE)),
                      skipped[1]]
    assert model.classes(baseline_flips, 1, False) == want
    assert _judged(world, baseline_flips, 1) == (want, 1)


@pytest.mark.parametrize("reruns", [0, 1, 2])
def test_a_test_whose_module_the_baseline_could_not_collect_compares_with_nothing_after_its_reruns(world, reruns):
    """Its module could not be imported in the baseline (nor on its re-runs there); the test fails in
    the candidate: `fails` (it never ran before) with no re-run, but `fails-both` with one — the
    re-run read the baseline's first run as the module's error (failing before) where the first
    classification read it as not run."""
    f0, f1 = FILES[0], FILES[1]
    n = 1 + reruns
    suite = [_m(f"{f0}::t", (FAILED,) * n, (PASSED,) * n, (OK,) * n, (UNCOLLECTABLE,) * n),
             _t(f"{f1}::ok", (PASSED,) * n, (PASSED,) * n)]
    assert model.classes(suite, reruns, False) == {f"{f0}::t": "fails", f"{f1}::ok": "pass"}
    assert _judged(world, suite, reruns) == ({f"{f0}::t": "fails", f"{f1}::ok": "pass"}, 0)
