"""``bisect --from crater.json --commits``: a stored crater report's broken group walked to its
first bad commit (``crater --bisect``'s walk over a fake repository, fake steps: no jax), the
answer beside the report and, from the next ``crater --report-only``, beside the group."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlparse

from jaxcompat.model.crater import DependentResult, Plan
from jaxcompat.model.usertests import UserTest
from jaxcompat.model.vocab import DependentVerdict, UserTestStatus
from jaxcompat.operations import commitbisect, crater, craterbisect
from jaxcompat.operations.bisect import observed_cell
from tests.helpers import write_crater
from tests.test_commitbisect import TARGET, URL, _fakes, _git, make_repo, mirror_env  # noqa: F401 (a fixture)

PLAN = Plan(("jax==2.0", "equinox==0.11.6"), ("jax==1.0", "equinox==0.11.6"))


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
    write_crater(out, results, {"candidate": list(PLAN.candidate), "baseline": list(PLAN.baseline), "as_of": None},
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
    text, _ = write_crater(out, results, {"candidate": list(PLAN.candidate), "baseline": list(PLAN.baseline)},
                           1.0, 1, PLAN)  # the next report carries it beside the group
    assert f"first bad commit: pkg {shas[9][:12]}" in text


# ------------------------------------------------------------------- a git dependent's steps

DEP_URL = "https://example.invalid/fake/depx"
RULE = "weak-type-closure"
RULE_CASE = "cases/test_weak_type_closure.py::test_filter_closure_convert_weak_example"


def _dependent_repo(tmp_path):
    """A git dependent (``depx``): a project with one test module, one commit."""
    repo = tmp_path / "depx-origin"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[project]\nname = "depx"\nversion = "1.0"\ndependencies = []\n')
    (repo / "tests" / "test_a.py").write_text("def test_1():\n    pass\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "depx 1.0")
    return repo, _git(repo, "rev-parse", "HEAD").strip()


def _point(monkeypatch, **mirrors):
    """git's insteadOf for each (url -> local repository)."""
    monkeypatch.setenv("GIT_CONFIG_COUNT", str(len(mirrors)))
    for i, (url, repo) in enumerate(mirrors.items()):
        monkeypatch.setenv(f"GIT_CONFIG_KEY_{i}", f"url.{repo}.insteadOf")
        monkeypatch.setenv(f"GIT_CONFIG_VALUE_{i}", url)


def _git_dependent_report(tmp_path, sha, plan, rule=None):
    res = _result("depx", "tests/test_a.py::test_1", "ValueError: Closure-converted function called with "
                  "different dynamic arguments to the example arguments provided.", rule=rule)
    res.version, res.commit, res.python = "v1.0", sha, "3.11"
    res.versions = {"baseline": {"jax": "1.0", "numpy": "2.1.1"}, "candidate": {"jax": "2.0", "numpy": "2.1.1"}}
    out = tmp_path / "crater"
    write_crater(out, [res], {"candidate": list(plan.candidate), "baseline": list(plan.baseline),
                              "as_of": plan.as_of}, 1.0, 1, plan)
    deps = tmp_path / "dependents.toml"
    deps.write_text(f'[[dependent]]\nname = "depx"\ngit = "{DEP_URL}"\n')
    return out, deps, [res]


def test_bisect_from_a_crater_report_fetches_a_git_dependent_the_state_folder_lacks(tmp_path, monkeypatch, capsys):
    """Was: ``bisect --from crater.json --commits`` in a state folder that never fetched the git
    dependent (another machine, the merge job) checked the commit out of a cache never cloned:
    "a bug of jax-compat … SourceMissing: …: worktree prune: fatal: not a git repository". The
    dependent is fetched now, and its broken tests are walked."""
    from jaxcompat.commands import main
    from jaxcompat.model.commits import CommitBisect

    repo, sha = _dependent_repo(tmp_path)
    _point(monkeypatch, **{DEP_URL: repo})
    plan = Plan(("jax==2.0", "jaxlib==2.0"), ("jax==1.0", "jaxlib==1.0"), as_of="2024-09-11")
    out, deps, _ = _git_dependent_report(tmp_path, sha, plan)
    fresh = tmp_path / "fresh-state"
    seen = []

    def bisector(matrix, target, package, **kw):
        seen.append((package, target.cases, "observe" in kw))
        return CommitBisect(package, target.id, "https://github.com/jax-ml/jax", kw["good"], kw["bad"], False,
                            message="walked")
    real = craterbisect.run
    monkeypatch.setattr(craterbisect, "run", lambda *a, **k: real(*a, **k, bisector=bisector))
    main(["bisect", "--from", str(out / "crater.json"), "--commits", "--dependents", str(deps),
          "--reports", str(tmp_path / "r"), "--state", str(fresh)])
    said = capsys.readouterr()
    assert "a bug of jax-compat" not in said.err and "SourceMissing" not in said.err, said
    assert seen == [("jax", ("tests/test_a.py::test_1",), True)]
    assert list((fresh / "crater" / "src").glob(f"depx-{sha}/src/depx/tests/test_a.py"))


def test_crater_bisect_runs_a_rule_s_cases_in_the_git_dependent_s_own_environment(tmp_path, monkeypatch):
    """Was: a group a rule explains, in a git dependent (equinox's own suite), was bisected in
    step environments of jax, jaxlib and pytest only (a git dependent brings no pins): the rule's
    cases could not import equinox, both ends "cannot say". Each step now runs in the dependent's
    own environment: its source and test requirements, held at its baseline's lock, with only the
    moved package (and the jaxlib it brings) changed."""
    from jaxcompat.env import commits as history
    from jaxcompat.knowledge.config import load as load_matrix
    from jaxcompat.knowledge.dependents import load as load_dependents
    from jaxcompat.model.stages import Resolved
    from jaxcompat.run import cell as cells

    dep_repo, dep_sha = _dependent_repo(tmp_path)
    jax_repo = make_repo(tmp_path, ["ok"] * 5 + ["bad"] * 6)
    jax_shas = _git(jax_repo, "rev-list", "--reverse", "HEAD").split()
    _point(monkeypatch, **{DEP_URL: dep_repo, URL: jax_repo})
    plan = Plan(("jax==2.0", "jaxlib==2.0"), ("jax==1.0", "jaxlib==1.0"), python="3.11", as_of="2024-09-11")
    out, deps, results = _git_dependent_report(tmp_path, dep_sha, plan, rule=RULE)
    state_dir = tmp_path / "state"

    def install(sha):  # the commit's tree, as the real installer gives it (a folder)
        tree = tmp_path / "trees" / sha
        tree.mkdir(parents=True, exist_ok=True)
        (tree / "state.txt").write_text(history.show(URL, sha, "state.txt", state_dir / "cache"))
        return [f"jax @ {tree.as_uri()}"], ""
    baseline_lock = "jax==1.0\njaxlib==1.0\nnumpy==2.1.1\nscipy==1.14.1\n-e file:///somewhere/depx\n"
    monkeypatch.setattr(cells, "resolved", lambda cell, *a, **k: Resolved(cell, "python3.11", baseline_lock))
    ran = []

    def run_cell(cell, matrix, **kw):
        ran.append(cell)
        here = any("depx" in e for e in cell.editable)  # the rule's case imports the dependent
        state = Path(urlparse(cell.pins["jax"].split("@", 1)[1].strip()).path, "state.txt").read_text().strip()
        status, errors, message = (("failed", ["ModuleNotFoundError"], "No module named 'depx'") if not here else
                                   ("failed", ["ValueError"], "Closure-converted function called with different "
                                    "dynamic arguments to the example arguments provided.") if state == "bad" else
                                   ("passed", [], ""))
        return observed_cell({"id": cell.id, "python": "3.11", "backend": "cpu", "status": "ok", "versions": {},
                              "results": [{"case": RULE_CASE, "status": status, "error_types": errors,
                                           "message": message}]})
    monkeypatch.setattr(cells, "run_cell", run_cell)
    monkeypatch.setattr(commitbisect, "run_cell", run_cell, raising=False)
    monkeypatch.setattr(craterbisect, "run_cell", run_cell, raising=False)

    def bisector(matrix, target, package, **kw):  # the real walk, over the fake repository as "jax"
        return commitbisect.bisect_commits(matrix, target, "jax", good="1.0", bad="2.0", pins=kw["pins"],
                                           python="3.11", state_dir=state_dir, repo=URL, install=install,
                                           date="2024-09-02", **({"observe": kw["observe"]} if "observe" in kw
                                                                 else {}))
    matrix = load_matrix(Path(__file__).resolve().parents[1] / "matrix.toml")
    found = craterbisect.run(out, results, plan, matrix, load_dependents(deps), state_dir, mode="all",
                             bisector=bisector)
    [(key, rec)] = found.items()
    assert rec["commit"] == jax_shas[5], rec
    assert ran and all(any(e.startswith(str(state_dir / "crater" / "src")) for e in c.editable) for c in ran)
    assert all(set(c.held) == {"numpy==2.1.1", "scipy==1.14.1"} and c.date == "2024-09-11" for c in ran)
    assert all(set(c.pins) == {"jax"} for c in ran)  # the moved package only (the fake install gives no jaxlib)


def test_bisect_from_a_crater_report_walks_explained_groups_with_all_groups(tmp_path, monkeypatch, capsys):
    """``bisect --from crater.json --commits`` walks the groups no rule explains, as ``crater
    --bisect`` does; ``--all-groups`` walks those a rule explains too (``crater --bisect all``)."""
    from jaxcompat.commands import main
    from jaxcompat.model.commits import CommitBisect

    out = tmp_path / "crater"
    results = [_result("gamma", "tests/test_c.py::test_1", "TypeError: other", rule="known-rule")]
    write_crater(out, results, {"candidate": list(PLAN.candidate), "baseline": list(PLAN.baseline)}, 1.0, 1, PLAN)
    walked = []

    def bisector(matrix, target, package, **kw):
        walked.append(target.id)
        return CommitBisect(package, target.id, URL, kw["good"], kw["bad"], False, message="walked")
    real = craterbisect.run
    monkeypatch.setattr(craterbisect, "run", lambda *a, **k: real(
        *a, **k, bisector=bisector, targeter=lambda g, *x: (TARGET, None, [])))
    dependents = tmp_path / "dependents.toml"
    dependents.write_text('[[dependent]]\nname = "gamma"\nversion = "1.0"\n')
    argv = ["bisect", "--from", str(out / "crater.json"), "--commits", "--dependents", str(dependents),
            "--reports", str(tmp_path / "r"), "--state", str(tmp_path / "state")]
    assert main(argv) == 0 and walked == []
    assert "--all-groups walks those too" in capsys.readouterr().out
    main([*argv, "--all-groups"])
    assert walked == [TARGET.id]


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
