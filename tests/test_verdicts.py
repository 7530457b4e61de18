"""The one invariant, tried as a property: over fake crater results — missing, corrupt, skipped,
crashed, unreachable, capped, over budget, mixed across shards, with or without the shards' plans —
no combination gives exit 0 unless every planned dependent was judged on both sides with tests run
in the candidate; and a broken one always gives 1."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxcompat.commands import main
from jaxcompat.model import verdicts
from jaxcompat.model.dependents import Dependent, DependentSource
from jaxcompat.model.vocab import DependentVerdict
from jaxcompat.operations import crater

NAMES = ["alpha", "beta", "gamma", "delta"]
PLAN = crater.Plan(("jax==0.4.33",), ("jax==0.4.31",))

stored = st.one_of(
    st.just("missing"), st.just("corrupt"),
    st.tuples(st.sampled_from(list(DependentVerdict)), st.integers(0, 3), st.integers(0, 3)),
)


@st.composite
def runs(draw):
    n = draw(st.integers(1, len(NAMES)))
    names = NAMES[:n]
    shards = draw(st.integers(1, 3))
    return {
        "names": names,
        "what": {name: draw(stored) for name in names},
        "plans": draw(st.lists(st.booleans(), min_size=shards, max_size=shards)),  # which shards' plans arrived
    }


def _write(root, run) -> None:
    out = root / "reports" / "crater"
    deps = [Dependent(n, DependentSource(version="1.0")) for n in run["names"]]
    n = len(run["plans"])
    for i, arrived in enumerate(run["plans"], 1):
        if arrived:
            crater.store_plan(out, PLAN, deps, f"{i}/{n}")
    folder = out / crater.RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    for name, what in run["what"].items():
        if what == "missing":
            continue
        if what == "corrupt":
            (folder / f"{name}.json").write_text('{"name": "' + name + '", "verdict": "sa')
            continue
        verdict, ran_c, ran_b = what
        res = crater.DependentResult(name, verdict, version="1.0", plan=PLAN.key,
                                     ran={"candidate": ran_c, "baseline": ran_b})
        (folder / f"{name}.json").write_text(json.dumps(res.to_dict()))
    (root / "dependents.toml").write_text("".join(f'[[dependent]]\nname = "{x}"\nversion = "latest"\n'
                                                  for x in run["names"]))


def _all_judged(run) -> bool:
    return any(run["plans"]) and all(
        isinstance(w, tuple) and w[0] in (DependentVerdict.SAFE, DependentVerdict.BROKEN) and w[1] > 0
        for w in run["what"].values())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run=runs())
def test_report_only_never_says_breaks_none_unless_everything_was_judged(tmp_path_factory, run):
    root = tmp_path_factory.mktemp("crater")
    _write(root, run)
    code = main(["crater", "--report-only", "--reports", str(root / "reports"), "--state", str(root / "state"),
                 "--dependents", str(root / "dependents.toml")])
    broken = any(isinstance(w, tuple) and w[0] == DependentVerdict.BROKEN for w in run["what"].values())
    if code == 0:
        assert _all_judged(run) and not broken, run
    if _all_judged(run):
        assert code == (1 if broken else 0), run
    if broken:  # a broken result that was stored is said, whatever else is missing
        assert code == 1, run
    else:
        assert code in (0, 2), run


@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 3)), max_size=6))
def test_decide_is_zero_only_when_every_item_ran_and_none_broke(items):
    made = [verdicts.Item(f"i{k}", broken=b, judged=j, ran_candidate=r) for k, (b, j, r) in enumerate(items)]
    code = verdicts.decide(made).code
    assert (code == 0) == (bool(made) and all(i.judged and i.ran_candidate > 0 and not i.broken for i in made))
    assert (code == 1) == any(i.broken for i in made)
