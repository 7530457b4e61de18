"""crater --bisect: a crater report whose broken group carries its first bad commit (the walk over
a fake repository with a fake step: no jax), which groups are walked, and which package."""

from __future__ import annotations

import json

import pytest

from jaxcompat.model.vocab import BisectState, DependentVerdict, UserTestStatus
from jaxcompat.operations import commitbisect, crater, craterbisect, usertests
from tests.test_commitbisect import URL, _fakes, _git, make_repo, mirror_env  # noqa: F401 (a fixture)

CLOSURE = "ValueError: Closure-converted function called with different dynamic arguments"
PLAN = crater.Plan(("pkg==2.0", "equinox==0.11.6"), ("pkg==1.0", "equinox==0.11.6"))


def _result(name: str, tests: list[str], message: str = CLOSURE, rule: str | None = None):
    broken = [usertests.UserTest(t, "failed", "passed", UserTestStatus.BROKEN, message=message, explained_by=rule,
                                 traceback=f"{name}/tests/test_x.py:3: in {t}") for t in tests]
    return crater.DependentResult(name, DependentVerdict.BROKEN, version="1.0", tests=broken,
                                  ran={"candidate": len(tests), "baseline": len(tests)})


@pytest.fixture
def walk(tmp_path, mirror_env):  # noqa: F811 (the fixture imported above)
    """The real walk over a fake repository of 24 commits whose 9th is the first bad one; the step
    is a fake dependent run (present where the commit's state.txt says bad)."""
    repo = make_repo(tmp_path, ["ok"] * 9 + ["bad"] * 15)
    shas = _git(repo, "rev-list", "--reverse", "HEAD").split()
    _git(repo, "update-ref", "refs/pull/23307/head", shas[9])
    mirror_env(repo)
    state_dir = tmp_path / "state"
    install, _, _ = _fakes(state_dir / "cache")
    asked = []

    def run(dep, tests, package, good, bad):
        asked.append((dep, tests, package, good, bad))

        def probe(reqs, step_id):
            hit = reqs[0].endswith("#bad")
            return (BisectState.PRESENT, "broken", "") if hit else (BisectState.ABSENT, "pass", "")
        target = craterbisect.Target("g", tuple(tests), lambda r: True)
        return commitbisect.bisect_commits(None, target, package, good=good, bad=bad, pins=[], python="3.11",
                                           state_dir=state_dir, repo=URL, install=install, probe=probe,
                                           date="2024-09-02")
    return run, shas, asked


def test_a_crater_report_whose_broken_group_carries_its_first_bad_commit(tmp_path, walk):
    run, shas, asked = walk
    results = [_result("alpha", ["tests/test_a.py::test_1", "tests/test_a.py::test_2"]),
               _result("beta", ["tests/test_b.py::test_1"]),
               _result("gamma", ["tests/test_c.py::test_1"], "TypeError: other", rule="known-rule")]
    out = tmp_path / "crater"
    annotate = craterbisect.annotator(craterbisect.UNEXPLAINED, PLAN, run)
    text, _ = crater.write(out, results, {"candidate": list(PLAN.candidate), "baseline": list(PLAN.baseline),
                                          "as_of": None}, 1.0, 1, PLAN, annotate=annotate)
    groups = json.loads((out / "crater.json").read_text())["groups"]
    closure = next(g for g in groups if "Closure-converted" in g["signature"])
    b = closure["bisect"]
    assert b["first"] == shas[9] and b["pull_request"] == "#23307" and b["title"] == "change 9"
    assert (b["package"], b["good"], b["bad"]) == ("pkg", "1.0", "2.0")
    assert b["dependent"] == "alpha" and b["tests"] == ["tests/test_a.py::test_1", "tests/test_a.py::test_2"]
    assert b["steps"] <= 2 + (23).bit_length() + 1 and b["commits"] == 23
    # the explained group is not walked unless asked
    assert next(g for g in groups if g["explained_by"] == "known-rule")["bisect"] is None
    assert asked == [("alpha", b["tests"], "pkg", "1.0", "2.0")]
    assert f"first bad commit in pkg 1.0 -> 2.0: {shas[9][:12]} change 9 (#23307)" in text
    assert shas[9][:12] in (out / "crater.md").read_text()


def test_all_walks_the_explained_groups_too(tmp_path, walk):
    run, shas, asked = walk
    results = [_result("gamma", ["tests/test_c.py::test_1"], "TypeError: other", rule="known-rule")]
    crater.write(tmp_path / "c", results, {"candidate": [], "baseline": [], "as_of": None}, 1.0, 1, PLAN,
                 annotate=craterbisect.annotator(craterbisect.ALL, PLAN, run))
    groups = json.loads((tmp_path / "c" / "crater.json").read_text())["groups"]
    assert groups[0]["bisect"]["first"] == shas[9] and len(asked) == 1


@pytest.mark.parametrize("candidate, baseline, moved", [
    (("jax==0.4.33", "equinox==0.11.6"), ("jax==0.4.31", "equinox==0.11.6"), ("jax", "0.4.31", "0.4.33")),
    (("equinox==0.11.7", "jax==0.4.33"), ("equinox==0.11.6", "jax==0.4.33"), ("equinox", "0.11.6", "0.11.7")),
    (("jax>=0.4.33",), ("jax==0.4.31",), None),
])
def test_the_package_the_candidate_moves(candidate, baseline, moved):
    assert craterbisect.moved_package(crater.Plan(candidate, baseline)) == moved


def test_no_release_moved_says_why():
    g = crater.Group(crater.signature_of(_result("a", ["t"]).tests[0]), tests={"a": ["t"]})
    rec = craterbisect.bisect_group(g, crater.Plan(("jax>=0.4.33",), ("jax==0.4.31",)), lambda *a: None)
    assert rec.first == "" and "moves no package" in rec.message
    assert "first bad commit: none named" in craterbisect.line(rec)


def test_bisect_from_a_crater_report_with_commits(tmp_path, walk, monkeypatch, capsys):
    """``bisect --from crater.json --commits``: the report's unexplained group walked over its
    dependent's broken tests, the package the candidate moved; the answer in a report."""
    from jaxcompat.commands import main

    run, shas, asked = walk
    results = [_result("alpha", ["tests/test_a.py::test_1"]),
               _result("gamma", ["tests/test_c.py::test_1"], "TypeError: other", rule="known-rule")]
    plan_text = {"candidate": list(PLAN.candidate), "baseline": list(PLAN.baseline), "as_of": None}
    crater.write(tmp_path / "crater", results, plan_text, 1.0, 1, PLAN)
    given = []
    monkeypatch.setattr(craterbisect, "runner", lambda deps, res, plan, *a, **k: given.append((res, plan)) or run)
    dependents = tmp_path / "dependents.toml"
    dependents.write_text('[[dependent]]\nname = "alpha"\nversion = "1.0"\n')
    code = main(["bisect", "--from", str(tmp_path / "crater" / "crater.json"), "--commits", "--dependents",
                 str(dependents), "--reports", str(tmp_path / "r"), "--state", str(tmp_path / "state")])
    assert code == 0, capsys.readouterr()
    assert asked == [("alpha", ["tests/test_a.py::test_1"], "pkg", "1.0", "2.0")]
    assert given[0][1].candidate == PLAN.candidate and [r.name for r in given[0][0]] == ["alpha", "gamma"]
    [rec] = json.loads((tmp_path / "r" / "bisect" / "bisect-commits-crater.json").read_text())
    assert rec["first"] == shas[9] and rec["pull_request"] == "#23307"
    assert shas[9][:12] in capsys.readouterr().out


def test_bisect_from_a_cell_report_with_commits_is_a_clear_error(tmp_path, capsys):
    from jaxcompat.commands import main

    bad = tmp_path / "check.json"
    bad.write_text('{"id": "c", "results": []}')
    assert main(["bisect", "--from", str(bad), "--commits", "--reports", str(tmp_path)]) == 2
    assert "takes a crater.json" in capsys.readouterr().err
