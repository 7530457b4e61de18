"""The one invariant, tried as a property: over fake crater results — missing, corrupt, of another
schema or another run, skipped, crashed, unreachable, capped, over budget, mixed across shards, with
or without (or with corrupt) plans — no combination gives exit 0 unless every planned dependent was
judged on both sides with tests run in the candidate; a broken one (or one whose tests ran before
and none after) always gives 1 when a plan names it (a result no plan names enters no verdict);
the rest is 2. The same ``decide`` serves ``check``, ``check
--tests`` and ``check --env`` (their items are tried here too)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxcompat.commands import main
from jaxcompat.env import candidate
from jaxcompat.knowledge.outcomes import classify
from jaxcompat.model import verdicts
from jaxcompat.model.crater import DependentResult, Plan
from jaxcompat.model.dependents import Dependent, DependentSource
from jaxcompat.model.outcomes import CellResult, RawResult
from jaxcompat.model.usertests import Comparison, UserTest
from jaxcompat.model.vocab import CellStatus, DependentVerdict
from jaxcompat.operations import crater
from jaxcompat.operations.check import user_tests_item

NAMES = ["alpha", "beta", "gamma", "delta"]
PLAN = Plan(("jax==0.4.33",), ("jax==0.4.31",))
OTHER = Plan(("jax==0.4.34",), ("jax==0.4.31",))
BAD = ("missing", "corrupt", "wrong-schema", "wrong-name", "other-run")

stored = st.one_of(
    st.sampled_from(BAD),
    st.tuples(st.sampled_from(list(DependentVerdict)), st.integers(0, 3), st.integers(0, 3)),
)


@st.composite
def runs(draw):
    names = NAMES[:draw(st.integers(1, len(NAMES)))]
    shards = draw(st.integers(1, 3))
    return {
        "names": names,
        "what": {name: draw(stored) for name in names},
        # each shard's plan: arrived, lost, or corrupt
        "plans": draw(st.lists(st.sampled_from(["ok", "lost", "corrupt"]), min_size=shards, max_size=shards)),
    }


def _result_text(name: str, what) -> str:
    if what == "corrupt":
        return '{"name": "' + name + '", "verdict": "sa'
    if what == "wrong-schema":  # JSON that reads, but not a result as the crater writes one
        return json.dumps({"name": name, "verdict": "safe", "plan": PLAN.key, "ran": {"candidate": "3"}})
    if what == "wrong-name":  # another dependent's result under this one's name
        return json.dumps(DependentResult("zeta", DependentVerdict.SAFE, plan=PLAN.key, run_id=PLAN.run_id,
                                                 ran={"candidate": 3, "baseline": 3}).to_dict())
    if what == "other-run":
        return json.dumps(DependentResult(name, DependentVerdict.SAFE, plan=OTHER.key,
                                                 ran={"candidate": 3, "baseline": 3}).to_dict())
    verdict, ran_c, ran_b = what
    return json.dumps(DependentResult(name, verdict, version="1.0", plan=PLAN.key, run_id=PLAN.run_id,
                                             ran={"candidate": ran_c, "baseline": ran_b}).to_dict())


def _write(root, run) -> None:
    out = root / "reports" / "crater"
    deps = [Dependent(n, DependentSource(version="1.0")) for n in run["names"]]
    n = len(run["plans"])
    for i, how in enumerate(run["plans"], 1):
        if how != "lost":
            crater.store_plan(out, PLAN, deps, f"{i}/{n}")
        if how == "corrupt":
            (out / crater.RESULTS / crater.PLANS / f"shard-{i}-of-{n}.json").write_text('{"plan": [1], "dep')
    folder = out / crater.RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    for name, what in run["what"].items():
        if what != "missing":
            (folder / f"{name}.json").write_text(_result_text(name, what))
    (root / "dependents.toml").write_text("".join(f'[[dependent]]\nname = "{x}"\nversion = "latest"\n'
                                                  for x in run["names"]))


def _fails(w) -> bool:
    """Stored, of this run, and not safe: broken, or its tests ran before and none after."""
    return isinstance(w, tuple) and (w[0] in (DependentVerdict.BROKEN, DependentVerdict.NONE_RAN)
                                     or (w[0] == DependentVerdict.SAFE and w[2] > 0 and w[1] == 0))


def _safe(w) -> bool:
    return isinstance(w, tuple) and w[0] == DependentVerdict.SAFE and w[1] > 0 and w[2] > 0


def _expected(run) -> int:
    """The invariant, written out independently of ``decide``."""
    what = list(run["what"].values())
    if "ok" not in run["plans"]:  # no plan reads: no result enters a verdict (a stale one would)
        return 2
    if any(_fails(w) for w in what):  # (another run's result is left out: that dependent is missing)
        return 1
    return 0 if "corrupt" not in run["plans"] and all(_safe(w) for w in what) else 2


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run=runs())
def test_report_only_never_says_breaks_none_unless_everything_was_judged(tmp_path_factory, capsys, run):
    root = tmp_path_factory.mktemp("crater")
    _write(root, run)
    code = main(["crater", "--report-only", "--reports", str(root / "reports"), "--state", str(root / "state"),
                 "--dependents", str(root / "dependents.toml")])
    out = capsys.readouterr().out
    assert code == _expected(run), run
    assert ("breaks none" in out) == (code == 0), (run, out)


@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 3), st.none() | st.integers(0, 3)),
                max_size=6))
def test_decide_is_zero_only_when_every_item_ran_and_none_broke(items):
    made = [verdicts.Item(f"i{k}", broken=b, judged=j, ran_candidate=r, ran_baseline=rb)
            for k, (b, j, r, rb) in enumerate(items)]
    code = verdicts.decide(made).code
    ok = bool(made) and all(i.judged and i.ran_candidate > 0 and not i.broken and i.ran_baseline != 0 for i in made)
    assert (code == 0) == ok
    assert (code == 1) == any(i.broken or (i.judged and i.ran_baseline and not i.ran_candidate) for i in made)


OUTCOMES = st.sampled_from(["passed", "failed", "skipped"])


@given(st.sampled_from(list(CellStatus)), st.lists(OUTCOMES, max_size=4), st.booleans(),
       st.sampled_from(["", "error sending request for url (https://pypi.org/simple/jax/): dns error",
                        "No solution found when resolving dependencies"]))
def test_a_cell_is_safe_only_when_its_cases_ran(status, outcomes, safe, message):
    """``check`` and ``check --env``: exit 0 only for a cell whose cases ran (at least one not
    skipped) and whose verdict was safe; the machine, our harness or the index is never 1."""
    cell = CellResult(id="c", python="3.12", backend="cpu", status=status, message=message)
    cell.results = [classify(RawResult(f"cases/test_{k}.py::t", o), (), {}, "cpu") for k, o in enumerate(outcomes)]
    code = verdicts.decide([candidate.item(cell, safe)]).code
    ran = any(o != "skipped" for o in outcomes)
    assert (code == 0) == (status == CellStatus.OK and safe and ran)
    if status in (CellStatus.PYTHON_MISSING, CellStatus.BACKEND_MISSING, CellStatus.HARNESS_ERROR,
                  CellStatus.NOT_RUN) or (status != CellStatus.OK and "dns error" in message):
        assert code == 2


@given(st.integers(0, 3), st.none() | st.integers(0, 3), st.booleans(),
       st.sampled_from(["", "pytest exited 2", "unresolvable: jax==9 has no release",
                        "could not read https://pypi.org/pypi/jax/json after 3 attempts: timed out"]))
def test_your_tests_are_safe_only_when_they_ran_on_both_sides(ran_c, ran_b, broken, error):
    """``check --tests``: 0 only when your tests ran in the candidate (and in the baseline, given
    one) and none broke; ran before and none after is 1, as it always was; the index is never 1."""
    cls = "broken" if ran_b is not None else "fails"  # a test that passed before (or, alone, fails)
    tests = [UserTest("t.py::a", "failed", "passed" if ran_b is not None else None, cls)] if broken else []
    both = ran_c if ran_b is None else min(ran_c, ran_b)  # the records of the tests that ran (on both sides)
    tests += [UserTest(f"t.py::ok{i}", "passed", "passed" if ran_b is not None else None, "pass") for i in range(both)]
    cmp = Comparison(tests, with_baseline=ran_b is not None, error=error,
                               ran={"candidate": ran_c, **({"baseline": ran_b} if ran_b is not None else {})})
    code = verdicts.decide([user_tests_item(cmp, "yours")]).code
    assert (code == 0) == (ran_c > 0 and ran_b != 0 and not broken and not error)
    if "attempts" in error:
        assert code == 2
    if ran_b and not ran_c and not error:
        assert code == 1
