"""``bisect --from crater.json --commits``: a stored crater report's broken group walked to its
first bad commit (``crater --bisect``'s walk over a fake repository, fake steps: no jax), the
answer beside the report and, from the next ``crater --report-only``, beside the group."""

from __future__ import annotations

import json

from jaxcompat.model.crater import DependentResult
from jaxcompat.model.usertests import UserTest
from jaxcompat.model.vocab import DependentVerdict, UserTestStatus
from jaxcompat.operations import commitbisect, crater, craterbisect
from tests.test_commitbisect import TARGET, URL, _fakes, _git, make_repo, mirror_env  # noqa: F401 (a fixture)

PLAN = crater.Plan(("jax==2.0", "equinox==0.11.6"), ("jax==1.0", "equinox==0.11.6"))


def _result(name: str, test: str, message: str, rule: str | None = None) -> DependentResult:
    broken = UserTest(test, "failed", "passed", UserTestStatus.BROKEN, message=message, explained_by=rule,
                                traceback=f"{name}/tests/test_x.py:3: in {test}")
    return DependentResult(name, DependentVerdict.BROKEN, version="1.0", tests=[broken],
                                  ran={"candidate": 1, "baseline": 1})


def test_bisect_from_a_crater_report_with_commits(tmp_path, mirror_env, monkeypatch, capsys):  # noqa: F811
    from jaxcompat.commands import main

    repo = make_repo(tmp_path, ["ok"] * 9 + ["bad"] * 12)
    shas = _git(repo, "rev-list", "--reverse", "HEAD").split()
    _git(repo, "update-ref", "refs/pull/23307/head", shas[9])  # its pull request, as the remote keeps it
    mirror_env(repo)
    state_dir = tmp_path / "state"
    install, observe, _ = _fakes(state_dir / "cache")
    results = [_result("alpha", "tests/test_a.py::test_1", "TypeError: boom"),
               _result("gamma", "tests/test_c.py::test_1", "TypeError: other", rule="known-rule")]
    out = tmp_path / "crater"
    crater.write(out, results, {"candidate": list(PLAN.candidate), "baseline": list(PLAN.baseline), "as_of": None},
                 1.0, 1, PLAN)
    seen = []

    def bisector(matrix, target, package, **kw):  # the real walk, over the fake repository as "jax"
        seen.append((package, kw["good"], kw["bad"], kw["pins"]))
        return commitbisect.bisect_commits(None, TARGET, "pkg", good="1.0", bad="2.0", pins=[], python="3.11",
                                           state_dir=state_dir, repo=URL, install=install, observe=observe,
                                           date="2024-09-02")
    real = craterbisect.run
    monkeypatch.setattr(craterbisect, "run", lambda *a, **k: real(
        *a, **k, bisector=bisector, targeter=lambda g, *x: (TARGET, None, ["equinox==0.11.6"])))
    dependents = tmp_path / "dependents.toml"
    dependents.write_text('[[dependent]]\nname = "alpha"\nversion = "1.0"\n')
    code = main(["bisect", "--from", str(out / "crater.json"), "--commits", "--dependents", str(dependents),
                 "--reports", str(tmp_path / "r"), "--state", str(state_dir)])
    said = capsys.readouterr().out
    assert code == 0, said
    assert seen == [("jax", "1.0", "2.0", ["equinox==0.11.6"])]  # the unexplained group only
    assert f"first bad commit: pkg {shas[9][:12]}" in said and "#23307" in said
    [(key, rec)] = json.loads((out / crater.BISECT_FILE).read_text()).items()
    assert "boom" in key and rec["commit"] == shas[9] and rec["pull_request"] == "#23307"
    text, _ = crater.write(out, results, {"candidate": list(PLAN.candidate), "baseline": list(PLAN.baseline)},
                           1.0, 1, PLAN)  # the next report carries it beside the group
    assert f"first bad commit: pkg {shas[9][:12]}" in text


def test_bisect_from_a_cell_report_with_commits_is_a_clear_error(tmp_path, capsys):
    from jaxcompat.commands import main

    bad = tmp_path / "check.json"
    bad.write_text('{"id": "c", "results": []}')
    assert main(["bisect", "--from", str(bad), "--commits", "--reports", str(tmp_path)]) == 2
    assert "takes a crater.json" in capsys.readouterr().err


def test_another_failure_of_the_groups_error_type_is_not_the_group(tmp_path, mirror_env, monkeypatch):  # noqa: F811
    """Was: a step counted as "present" on the error type alone, so an unrelated ValueError at the
    commits before the change (another bug, since fixed) steered the walk to the first of them,
    named with confidence. Now a step shows the group's failure only with its error type *and* its
    message's signature (numbers and paths aside): the other ValueError cannot say, those commits
    are skipped, and the answer is the range up to the real change."""
    from jaxcompat.env import commits as history
    from jaxcompat.knowledge.dependents import load as load_dependents
    from jaxcompat.operations.bisect import observed_cell

    states = ["ok"] * 4 + ["other"] * 6 + ["bad"] * 6
    repo = make_repo(tmp_path, states)
    shas = _git(repo, "rev-list", "--reverse", "HEAD").split()
    mirror_env(repo)
    state_dir = tmp_path / "state"
    test = "tests/test_a.py::test_1"
    results = [_result("alpha", test, "ValueError: cannot reshape array of size 6 into shape (4,)")]
    messages = {"bad": "ValueError: cannot reshape array of size 8 into shape (3,)",  # the group's, other sizes
                "other": "ValueError: unknown backend 'cpu' in the config file"}

    def install(sha):
        return [f"pkg @ file:///src/{sha}#{history.show(URL, sha, 'state.txt', state_dir / 'cache').strip()}"], ""

    def observe(reqs, step_id):
        state = reqs[0].rsplit("#", 1)[1]
        failed = state in messages
        return observed_cell({"id": step_id, "python": "3.11", "backend": "cpu", "status": "ok", "versions": {},
                              "results": [{"case": test, "status": "failed" if failed else "passed",
                                           "error_types": ["ValueError", "Exception"] if failed else [],
                                           "message": messages.get(state, "")}]})
    monkeypatch.setattr(craterbisect.crater, "source_of", lambda *a: (tmp_path, None))
    monkeypatch.setattr(craterbisect, "dependent_observer", lambda *a: observe)

    def bisector(matrix, target, package, **kw):  # the real walk and the group's real target
        return commitbisect.bisect_commits(None, target, "pkg", good="1.0", bad="2.0", pins=[], python="3.11",
                                           state_dir=state_dir, repo=URL, install=install, observe=kw["observe"],
                                           date="2024-09-02")
    dependents = tmp_path / "dependents.toml"
    dependents.write_text('[[dependent]]\nname = "alpha"\nversion = "1.0"\n')
    found = craterbisect.run(tmp_path / "out", results, PLAN, None, load_dependents(str(dependents)), state_dir,
                             bisector=bisector)
    [rec] = found.values()
    assert rec["commit"] == shas[10], rec["message"]  # not shas[4], the first unrelated ValueError
    assert rec["range"] == shas[4:11] and rec["judged"]
