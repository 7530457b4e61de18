"""The crater: dependents.toml validated like matrix.toml, shards that deal every dependent once,
broken tests grouped by signature across dependents, a merge of the shards' results, a dependent
that crashes, hangs or has no source losing nothing of the others', caps never judged, and
``check --tests`` walking up from a path inside a project to its root. No jax: the real CLI over
fake dependents (tests/fake_crater.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from jaxcompat.env import testtarget
from jaxcompat.env.candidate import candidate_cell
from jaxcompat.env.projects import caps, runtime_requirements
from jaxcompat.knowledge.config import load as load_matrix
from jaxcompat.knowledge.dependents import load, parse
from jaxcompat.model.crater import DependentResult, Plan, exit_status
from jaxcompat.model.dependents import Dependent, DependentSource
from jaxcompat.model.matrix import ConfigError
from jaxcompat.model.usertests import Comparison, UserTest
from jaxcompat.model.vocab import CellStatus, DependentVerdict, UserTestStatus
from jaxcompat.operations import crater
from jaxcompat.report.crater import junit, verdict_text
from tests.helpers import MINIMAL, failure_toml, make_tree

REPO = Path(__file__).resolve().parent.parent
DRIVER = REPO / "tests" / "fake_crater.py"
CLOSURE = "Closure-converted function called with different dynamic arguments"
RULE = MINIMAL + failure_toml("closure-bug", "cases/test_demo.py::test_bug", '{ pytest = ">=1" }', "ValueError",
                              CLOSURE, "upgrade equinox to >=0.11.7")

# -------------------------------------------------------------------- the dependents file


@pytest.mark.parametrize("table, key, words", [
    ('name = "a"\nvesion = "1.0"', "dependent[a].vesion", "did you mean 'version'"),
    ('name = "a"\nversion = "1.0"\ngit = "https://x/y"', "dependent[a]", "exactly one source"),
    ('name = "a"', "dependent[a]", "exactly one source"),
    ('name = "a"\nversion = "one"', "dependent[a].version", "not a version"),
    ('name = "a"\nversion = "1.0"\nref = "v1"', "dependent[a].ref", "needs a git source"),
    ('name = "a"\ngit = "ftp://x/y"', "dependent[a].git", "not a git URL"),
    ('name = "a"\nversion = "1.0"\ndepends_on = ["equinx"]', "dependent[a].depends_on", "did you mean 'equinox'"),
    ('name = "a"\nversion = "1.0"\ntests = ["../elsewhere"]', "dependent[a].tests", "not a path inside"),
    ('name = "a"\nversion = "1.0"\ncpu_devices = 0', "dependent[a].cpu_devices", "whole number >= 1"),
    ('name = "a"\nversion = "1.0"\nbudget_s = -5', "dependent[a].budget_s", "seconds > 0"),
    ('name = "a"\nversion = "1.0"\nwith = ["not a req!"]', "dependent[a].with", "PEP 508"),
    ('name = "a"\nversion = "1.0"\nenv = { X = 1 }', "dependent[a].env", "table of strings"),
    ('name = "Flow_Jax"\nversion = "1.0"', "dependent[Flow_Jax].name", 'name = "flow-jax"'),
])
def test_a_bad_dependent_names_the_file_the_key_and_the_fix(tmp_path, table, key, words):
    path = tmp_path / "deps.toml"
    path.write_text(f"[[dependent]]\n{table}\n")
    with pytest.raises(ConfigError) as e:
        load(path)
    assert e.value.key == key and str(path) in str(e.value)
    assert words in str(e.value)


def test_a_dependent_given_twice_and_an_empty_file_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="given twice"):
        parse({"dependent": [{"name": "a", "version": "1"}, {"name": "a", "version": "2"}]}, tmp_path / "d.toml")
    with pytest.raises(ConfigError, match="no \\[\\[dependent\\]\\] table"):
        parse({}, tmp_path / "d.toml")
    with pytest.raises(ConfigError, match="did you mean 'settings'"):
        parse({"setings": {}, "dependent": [{"name": "a", "version": "1"}]}, tmp_path / "d.toml")


def test_the_dependents_file_of_the_checkout_is_broad():
    deps = load(REPO / "dependents.toml").dependents
    assert len(deps) >= 12
    on_equinox = [d.name for d in deps if "equinox" in d.depends_on]
    on_jax_only = [d.name for d in deps if d.depends_on == ("jax",)]
    assert len(on_equinox) >= 5 and len(on_jax_only) >= 3, (on_equinox, on_jax_only)
    assert all(d.budget_s > 0 for d in deps)
    jax_md = next(d for d in deps if d.name == "jax-md")
    assert "--xla_force_host_platform_device_count=8" in jax_md.environment()["XLA_FLAGS"]


def test_the_core_runs_from_git_with_its_test_folders():
    """equinox, diffrax, optimistix, lineax (and jaxtyping): no sdist of theirs carries tests, so
    each is a git dependent with its test folder, run for a jax candidate (issue 39 part 1)."""
    deps = load(REPO / "dependents.toml")
    folders = {"equinox": "tests", "diffrax": "test", "optimistix": "tests", "lineax": "tests", "jaxtyping": "test"}
    for name, folder in folders.items():
        d = deps.get(name)
        assert d is not None, name
        assert d.source.get("git") == f"https://github.com/patrick-kidger/{name}" and not d.source.get("ref"), d.source
        assert d.tests == (folder,) and "jax" in d.depends_on and "insteadOf" in d.note
    assert {"equinox", "lineax", "optimistix", "diffrax", "jaxtyping"} <= {d.name for d in crater.select(deps, {"jax"})}
    assert "equinox" not in deps.get("equinox").depends_on  # a candidate for equinox does not replace its own suite


def test_a_candidate_runs_the_dependents_of_what_it_names():
    deps = load(REPO / "dependents.toml")
    everyone = crater.select(deps, {"jax", "equinox"})
    assert len(everyone) == len(deps.dependents)  # the ecosystem runs on jax
    of_equinox = crater.select(deps, {"equinox"})
    assert of_equinox and all("equinox" in d.depends_on for d in of_equinox)
    assert len(of_equinox) < len(deps.dependents)
    assert [d.name for d in crater.select(deps, {"jax"}, ["quax", "optax"])] == ["quax", "optax"]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 40])
def test_every_dependent_is_in_exactly_one_shard(n):
    deps = list(load(REPO / "dependents.toml").dependents)
    dealt = [d.name for i in range(1, n + 1) for d in crater.shard(deps, f"{i}/{n}")]
    assert sorted(dealt) == sorted(d.name for d in deps)
    sizes = [len(crater.shard(deps, f"{i}/{n}")) for i in range(1, n + 1)]
    assert max(sizes) - min(sizes) <= 1


# -------------------------------------------------------------------- judging, unit


def test_a_cap_of_the_dependent_is_read_from_its_own_metadata(tmp_path):
    (tmp_path / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: dep\nVersion: 1.0\n"
                                       "Requires-Dist: jax<0.4.32,>=0.4.16\nRequires-Dist: equinox>=0.11\n"
                                       'Requires-Dist: pytest; extra == "test"\n')
    needs = runtime_requirements(tmp_path)
    assert [r.name for r in needs] == ["jax", "equinox"]
    assert caps(needs, {"jax": "0.4.33", "equinox": "0.11.6"}) == ["jax<0.4.32,>=0.4.16 (the side pins jax==0.4.33)"]
    assert caps(needs, {"jax": "0.4.31", "equinox": "*"}) == []
    assert caps([Requirement("equinox>=0.12")], {"equinox": "@ git+https://x/equinox@main"}) == []


def _result(name: str, verdict: str, *broken: tuple[str, str, str | None]) -> DependentResult:
    tests = [UserTest(t, "failed", "passed", UserTestStatus.BROKEN, explained_by=rule, message=m,
                                fix="upgrade equinox to >=0.11.7" if rule else "",
                                traceback=f"{name}/tests/test_x.py:3: in {t}") for t, m, rule in broken]
    tests.append(UserTest("tests/test_x.py::test_fine", "passed", "passed", UserTestStatus.PASS))
    return DependentResult(name, DependentVerdict(verdict), version="1.0", tests=tests,
                                  ran={"candidate": len(tests), "baseline": len(tests)},
                                  versions={"candidate": {"jax": "0.4.33", "equinox": "0.11.6"}})


def test_broken_tests_are_grouped_by_signature_across_dependents():
    shape = "TypeError: unsupported operand shapes (3, 4) and (5,)"
    results = [
        _result("alpha", "broken", ("tests/test_x.py::test_grad", f"ValueError: {CLOSURE}", "closure-bug"),
                ("tests/test_x.py::test_shape", shape, None)),
        _result("beta", "broken", ("tests/test_y.py::test_ode", f"ValueError: {CLOSURE} here", "closure-bug"),
                ("tests/test_y.py::test_other", "TypeError: unsupported operand shapes (7, 1) and (2,)", None)),
        _result("gamma", "safe"),
    ]
    groups = crater.group(results)
    assert len(groups) == 2
    rule = next(g for g in groups if g.explained_by)
    assert rule.explained_by == "closure-bug" and rule.tests == {"alpha": ["tests/test_x.py::test_grad"],
                                                                "beta": ["tests/test_y.py::test_ode"]}
    other = next(g for g in groups if not g.explained_by)
    assert other.signature.error == "TypeError" and sorted(other.tests) == ["alpha", "beta"]  # numbers normalised
    plan = Plan(("jax==0.4.33",), ("jax==0.4.31",))
    drafted = crater.draft_rules(groups, plan, results)
    assert [d["id"] for d in drafted] == [other.draft] and other.draft.startswith("draft-")
    assert drafted[0]["affects"] == [{"jax": "==0.4.33", "equinox": "==0.11.6"}]
    assert any("alpha: tests/test_x.py::test_shape" in c for c in drafted[0]["_comment"])
    assert exit_status(results) == 1


@pytest.mark.parametrize("verdicts, code", [
    (["safe", "safe"], 0), (["safe", "broken"], 1), (["broken", "over-budget"], 1), (["safe", "capped"], 2),
    (["capped"], 2), (["safe", "install-error"], 2), (["safe", "crashed"], 2), (["not-run"], 2), ([], 2),
    (["safe", "index-unreachable"], 2), (["safe", "none-ran"], 1), (["none-ran", "capped"], 1),
])
def test_the_exit_status_of_a_crater(verdicts, code):
    """A capped dependent was not judged: never "breaks none" (084bcdf said 0 for safe + capped)."""
    assert exit_status([DependentResult(f"d{i}", DependentVerdict(v), ran={"candidate": 3,
                                                                                          "baseline": 3})
                               for i, v in enumerate(verdicts)]) == code


def test_a_safe_dependent_with_no_test_run_in_the_candidate_is_not_safe():
    """Regression (084bcdf: exit 0): tests that ran in the baseline and none in the candidate are
    not safe — exit 1, as check --tests has always said of your own suite."""
    res = DependentResult("d", DependentVerdict.SAFE, ran={"candidate": 0, "baseline": 5})
    assert exit_status([res]) == 1
    assert exit_status([DependentResult("d", DependentVerdict.SAFE, ran={"candidate": 3})]) == 2


def test_all_skipped_in_the_candidate_is_none_ran_and_said(tmp_path):
    """084bcdf: `safe`, exit 0, "breaks none" for a dependent whose every test skipped in the candidate."""

    skipped = [UserTest(f"t.py::t{k}", "skipped", "passed", "skipped") for k in range(3)]
    cmp = Comparison(skipped, with_baseline=True, ran={"candidate": 0, "baseline": 3})
    res = DependentResult("d", DependentVerdict.NO_SOURCE, ran=dict(cmp.ran), tests=skipped)
    crater._judged(res, cmp)
    assert res.verdict == DependentVerdict.NONE_RAN and "none of its tests ran in the candidate" in res.cause
    text = verdict_text([res], [], {"candidate": ["jax==0.4.33"], "baseline": ["jax==0.4.31"]},
                               crater.cost([res], 1, 0.0))
    assert "breaks none" not in text and "d (none of its tests ran in the candidate)" in text
    assert exit_status([res]) == 1 and 'type="none-ran"' in junit([res])


def test_every_verdict_is_documented():
    page = (REPO / "docs" / "crater.md").read_text(encoding="utf-8")
    assert all(f"| `{v}` |" in page for v in DependentVerdict)


def test_a_result_reads_back_as_it_was_written():
    res = _result("alpha", "broken", ("tests/test_x.py::test_grad", f"ValueError: {CLOSURE}", "closure-bug"))
    again = DependentResult.from_dict(json.loads(json.dumps(res.to_dict())))
    assert again == res and isinstance(again.tests[0], UserTest)
    assert again.tests[0].cls is UserTestStatus.BROKEN and again.verdict is DependentVerdict.BROKEN


def test_a_capped_dependent_is_never_safe_nor_broken():
    v = DependentVerdict.CAPPED
    assert not v.judged and v != DependentVerdict.BROKEN and "cap" in v.meaning


# -------------------------------------------------------------------- the command over fakes


def _tree(tmp_path: Path, dependents: str, **suites: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    make_tree(tmp_path, RULE)
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (tmp_path / "dependents.toml").write_text(textwrap.dedent(dependents))
    for name, tests in suites.items():
        root = tmp_path / "src" / name
        (root / "tests").mkdir(parents=True)
        (root / "pyproject.toml").write_text(f'[project]\nname = "{name}"\nversion = "1.0"\n')
        (root / "tests" / "test_mod.py").write_text(textwrap.dedent(tests))
    return tmp_path


def _crater(tmp, *args: str, reports: str = "reports", timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(DRIVER), "crater", "--matrix", str(tmp / "matrix.toml"),
                           "--reports", str(tmp / reports), "--state", str(tmp / "state"),
                           "--dependents", str(tmp / "dependents.toml"), *args],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "FAKE_SOURCES": str(tmp / "src")})


def _breaks(message: str) -> str:
    """A test module whose test_grad fails in the candidate (jax==0.4.33) only."""
    candidate = candidate_cell(["jax==0.4.33"], python="auto", companions=False).id
    return f'''
        import os

        def test_ok():
            pass

        def test_grad():
            if "{candidate}" in os.environ["JAXCOMPAT_RESULTS"]:
                raise ValueError("{message}")

        def test_always_fails():
            assert False, "before and after"
        '''


DEPS = '''
    [[dependent]]
    name = "alpha"
    version = "latest"
    tests = ["tests"]
    depends_on = ["jax", "equinox"]

    [[dependent]]
    name = "beta"
    version = "latest"
    depends_on = ["jax"]

    [[dependent]]
    name = "gamma"
    version = "latest"
    depends_on = ["jax"]
'''


@pytest.mark.integration
def test_a_crater_groups_one_regression_across_dependents_and_explains_it(tmp_path):
    tmp = _tree(tmp_path, DEPS, alpha=_breaks(CLOSURE + " (alpha)"), beta=_breaks(CLOSURE + " (beta, 2 args)"),
                gamma="def test_fine():\n    pass\n")
    proc = _crater(tmp, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    data = json.loads((tmp / "reports" / "crater" / "crater.json").read_text())
    verdicts = {d["name"]: d["verdict"] for d in data["dependents"]}
    assert verdicts == {"alpha": "broken", "beta": "broken", "gamma": "safe"}
    alpha = next(d for d in data["dependents"] if d["name"] == "alpha")
    assert alpha["ran"] == {"candidate": 3, "baseline": 3}
    assert alpha["classes"] == {"broken": 1, "fails-both": 1, "pass": 1}
    [group] = data["groups"]
    assert group["explained_by"] == "closure-bug" and group["dependents"] == ["alpha", "beta"]
    assert group["count"] == 2
    assert "this is closure-bug — fix: upgrade equinox to >=0.11.7" in out
    assert data["cost"]["environments"] == 6 and "cost: 6 environments built" in out
    written = {p.name for p in (tmp / "reports" / "crater").iterdir()}
    assert {"crater.json", "crater.md", "crater.html", "crater.xml", "dependents"} <= written
    assert "draft-rules.toml" not in written  # the one group is explained
    for name in ("crater.json", "crater.md", "crater.html", "crater.xml"):
        text = (tmp / "reports" / "crater" / name).read_text()
        assert str(tmp_path) not in text and str(Path.home()) + "/" not in text, name
    assert 'name="test_grad"' in (tmp / "reports" / "crater" / "crater.xml").read_text()
    assert "| alpha | 1.0 | broken | 3 | 3 | 1 |" in (tmp / "reports" / "crater" / "crater.md").read_text()


@pytest.mark.integration
def test_a_dependent_that_crashes_hangs_or_has_no_source_loses_nothing_of_the_others(tmp_path):
    deps = DEPS + '''
    [[dependent]]
    name = "crashy"
    version = "latest"

    [[dependent]]
    name = "hangy"
    version = "latest"
    budget_s = 4

    [[dependent]]
    name = "ghost"
    version = "latest"
    '''
    tmp = _tree(tmp_path, deps, alpha=_breaks(CLOSURE), beta="def test_fine():\n    pass\n",
                gamma="def test_fine():\n    pass\n", crashy="def test_x():\n    pass\n",
                hangy="def test_x():\n    pass\n")
    (tmp / "src" / "crashy" / "CRASH").write_text("")
    (tmp / "src" / "hangy" / "HANG").write_text("")
    proc = _crater(tmp, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # alpha is broken: that is what the run says first
    data = json.loads((tmp / "reports" / "crater" / "crater.json").read_text())
    by = {d["name"]: d for d in data["dependents"]}
    assert {k: v["verdict"] for k, v in by.items()} == {
        "alpha": "broken", "beta": "safe", "gamma": "safe", "crashy": "crashed", "hangy": "over-budget",
        "ghost": "no-source"}
    assert "SIGSEGV" in by["crashy"]["cause"] and "budget is 4 s" in by["hangy"]["cause"]
    assert "not on the (fake) index" in by["ghost"]["cause"]
    stored = {p.stem for p in (tmp / "reports" / "crater" / "dependents").glob("*.json")}
    assert stored == set(by)  # each written as it finished
    # without the broken one, what could not be judged makes the answer "could not judge"
    shutil.rmtree(tmp / "reports")
    proc = _crater(tmp, "--baseline", "jax==0.4.31", "--dependent", "beta", "--dependent", "hangy", "jax==0.4.33")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "could not judge" in proc.stdout


@pytest.mark.integration
def test_a_crater_killed_hard_leaves_no_child_holding_the_reports_folder(tmp_path):
    """SIGKILL reaches the crater alone: its child for the dependent it was judging (own process
    group, budget an hour) used to run on unwatched, holding the reports folder's lock, and the next
    run waited on it ("another jax-compat run is writing …") for as long as the hang lasted (red team 9)."""
    deps = DEPS + '''
    [[dependent]]
    name = "hangy"
    version = "latest"
    budget_s = 3600
    '''
    tmp = _tree(tmp_path, deps, beta="def test_fine():\n    pass\n", hangy="def test_x():\n    pass\n")
    (tmp / "src" / "hangy" / "HANG").write_text("")
    reports = tmp / "reports"
    first = subprocess.Popen([sys.executable, str(DRIVER), "crater", "--matrix", str(tmp / "matrix.toml"),
                              "--reports", str(reports), "--state", str(tmp / "state"), "--dependents",
                              str(tmp / "dependents.toml"), "--dependent", "hangy", "--baseline", "jax==0.4.31",
                              "jax==0.4.33"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, "FAKE_SOURCES": str(tmp / "src")})
    for _ in range(1200):  # until its child for hangy is forked (not a probe of the Pythons there are)
        if subprocess.run(["pgrep", "-P", str(first.pid), "-f", DRIVER.name], capture_output=True).returncode == 0:
            break
        time.sleep(0.1)
    first.kill()
    first.wait()
    t0 = time.monotonic()
    proc = _crater(tmp, "--baseline", "jax==0.4.31", "--dependent", "beta", "jax==0.4.33", timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert time.monotonic() - t0 < 100


@pytest.mark.integration
def test_shards_merged_by_report_only_give_the_whole_run(tmp_path):
    tmp = _tree(tmp_path, DEPS, alpha=_breaks(CLOSURE), beta=_breaks("something else broke: 42"),
                gamma="def test_fine():\n    pass\n")
    args = ("--baseline", "jax==0.4.31", "jax==0.4.33")
    whole = _crater(tmp, *args, reports="whole")
    assert whole.returncode == 1, whole.stdout + whole.stderr
    merged = tmp / "merged" / "crater" / "dependents"
    merged.mkdir(parents=True)
    for i in (1, 2):  # one after another: one run by the id they share (without one, two runs: test_crater_runs.py)
        part = _crater(tmp, *args, "--shard", f"{i}/2", "--run", "one", reports=f"shard{i}")
        assert part.returncode in (0, 1), part.stdout + part.stderr
        shutil.copytree(tmp / f"shard{i}" / "crater" / "dependents", merged, dirs_exist_ok=True)  # the artifact
    assert sorted(p.stem for p in merged.glob("*.json")) == ["alpha", "beta", "gamma"]
    report = _crater(tmp, "--report-only", reports="merged")
    assert report.returncode == 1, report.stdout + report.stderr

    def essence(folder: str) -> tuple:
        data = json.loads((tmp / folder / "crater" / "crater.json").read_text())
        return ([(d["name"], d["verdict"], d["classes"]) for d in data["dependents"]],
                [(g["signature"], g["dependents"], g["draft"]) for g in data["groups"]])

    assert essence("merged") == essence("whole")
    assert (tmp / "merged" / "crater" / "draft-rules.toml").is_file()  # "something else" has no rule
    # a result of another candidate is not mixed in: left out and named, its dependent not judged
    other = json.loads((merged / "gamma.json").read_text())
    other["plan"] = json.dumps([["jax==0.5.0"], ["jax"], ""])
    (merged / "gamma.json").write_text(json.dumps(other))
    mixed = _crater(tmp, "--report-only", reports="merged")
    assert mixed.returncode == 1 and "gamma.json (of another run" in mixed.stdout, mixed.stdout + mixed.stderr
    gamma = next(d for d in json.loads((tmp / "merged" / "crater" / "crater.json").read_text())["dependents"]
                 if d["name"] == "gamma")
    assert gamma["verdict"] == "not-run" and "no result stored" in gamma["cause"]


@pytest.mark.integration
def test_bad_input_is_refused_before_anything_is_downloaded(tmp_path):
    tmp = _tree(tmp_path, DEPS.replace('version = "latest"\n    tests', 'versoin = "latest"\n    tests'))
    proc = _crater(tmp, "jax==0.4.33")
    assert proc.returncode == 2 and "dependent[alpha].versoin: unknown key" in proc.stderr
    assert "did you mean 'version'" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp / "state").exists()
    tmp = _tree(tmp_path / "2", DEPS)
    proc = _crater(tmp, "--dependent", "alhpa", "jax==0.4.33")
    assert proc.returncode == 2 and "did you mean 'alpha'" in proc.stderr
    proc = _crater(tmp, "--report-only")
    assert proc.returncode == 2 and "no dependent's result" in proc.stderr
    assert not (tmp / "state").exists()


def test_a_pin_the_index_has_no_release_of_is_refused_first(tmp_path, monkeypatch, capsys):
    """jax has never put a release candidate on PyPI: `crater jax==0.4.34rc1` is bad input (exit 2,
    named with the fix), not a dependent 'capped' by its own requirements."""
    from jaxcompat.commands import main
    from jaxcompat.env import releases

    files = [{"upload_time_iso_8601": "2024-09-16T00:00:00Z", "yanked": False}]
    monkeypatch.setattr(releases, "fetch_info", lambda dist: {"releases": {"0.4.31": files, "0.4.33": files}})
    tmp = _tree(tmp_path, DEPS)
    args = ["crater", "--matrix", str(tmp / "matrix.toml"), "--state", str(tmp / "state"),
            "--reports", str(tmp / "reports"), "--dependents", str(tmp / "dependents.toml")]
    assert main(args + ["jax==0.4.34rc1", "--baseline", "jax==0.4.33"]) == 2
    err = capsys.readouterr().err
    assert "the candidate jax 0.4.34rc1 is not a release on the package index" in err and "fix:" in err
    assert main(args + ["jax==0.4.33", "--baseline", "jax==0.4.32"]) == 2
    assert "--baseline jax 0.4.32 is not a release" in capsys.readouterr().err
    assert not (tmp / "reports" / "crater").exists()  # nothing run, nothing written


# -------------------------------------------------------------------- a path inside a project


def _project(root: Path) -> Path:
    (root / "tests" / "unit").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "1"\n'
                                         '[project.optional-dependencies]\ndev = ["pytest"]\n')
    (root / "tests" / "unit" / "test_a.py").write_text("def test_a():\n    pass\n")
    (root / "tests" / "test_b.py").write_text("def test_b():\n    pass\n")
    return root


def test_a_path_inside_a_project_is_run_as_that_project(tmp_path):
    root = _project(tmp_path / "proj")
    assert testtarget.project_root(root / "tests") == root
    assert testtarget.project_root(root / "tests" / "unit" / "test_a.py") == root
    target = testtarget.locate(str(root / "tests"))
    assert target.root == root and target.project and target.only == ("tests",)
    assert target.deps.extras == ("dev",)  # its test dependencies, as from the root
    module = testtarget.locate(str(root / "tests" / "unit" / "test_a.py"))
    assert module.root == root and module.only == ("tests/unit/test_a.py",)
    assert testtarget.locate(str(root)).only == ()
    # a folder of tests with an ini file but nothing to install stays a folder of tests
    bare = tmp_path / "bare"
    (bare / "t").mkdir(parents=True)
    (bare / "pytest.ini").write_text("[pytest]\n")
    (bare / "t" / "test_c.py").write_text("def test_c():\n    pass\n")
    assert testtarget.project_root(bare / "t") is None
    assert not testtarget.locate(str(bare / "t")).project


@pytest.mark.integration
def test_check_tests_on_the_tests_folder_judges_as_the_root_does(tmp_path):
    root = _project(tmp_path / "proj")
    make_tree(tmp_path, RULE.replace('pins = { jax = "0.4.33", equinox = "0.11.7" }', 'pins = { jax = "0.4.33" }'))
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    seen = {}
    for given in (root, root / "tests", root / "tests" / "unit"):
        reports = tmp_path / f"reports-{given.name}"
        proc = subprocess.run([sys.executable, str(REPO / "tests" / "fake_matrix.py"), "check", "--matrix",
                               str(tmp_path / "matrix.toml"), "--reports", str(reports), "--state",
                               str(tmp_path / "state"), "--tests", str(given), "--no-verify-escapes",
                               "--baseline", "jax==0.4.31", "jax==0.4.33"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        data = json.loads((reports / "check.json").read_text())
        assert data["user_tests_run"]["test_dependencies"] == ["extra `dev`"]
        seen[given.name] = {t["test"]: t["class"] for t in data["user_tests"]}
    assert seen["proj"] == seen["tests"] == {"tests/test_b.py::test_b": "pass", "tests/unit/test_a.py::test_a": "pass"}
    assert seen["unit"] == {"tests/unit/test_a.py::test_a": "pass"}  # only the tests named


@pytest.mark.integration
def test_a_judged_result_is_reused_only_when_nothing_moves(tmp_path):
    tmp = _tree(tmp_path, DEPS, alpha=_breaks(CLOSURE), beta="def test_fine():\n    pass\n",
                gamma="def test_fine():\n    pass\n")
    fixed = ("--baseline", "jax==0.4.31", "--as-of", "2024-09-20", "--dependent", "alpha", "jax==0.4.33")
    first = _crater(tmp, *fixed)
    again = _crater(tmp, *fixed)
    assert first.returncode == again.returncode == 1, again.stdout + again.stderr
    assert "from the result cache" not in first.stdout and "from the result cache" in again.stdout
    assert "(1 dependent(s) from the result cache)" in again.stdout
    data = json.loads((tmp / "reports" / "crater" / "crater.json").read_text())
    assert [(d["name"], d["verdict"], d["cached"]) for d in data["dependents"]] == [("alpha", "broken", True)]
    moving = _crater(tmp, "--baseline", "jax", "--as-of", "2024-09-20", "--dependent", "alpha", "jax==0.4.33")
    assert "from the result cache" not in moving.stdout  # the baseline is "the newest jax": it moves
    assert crater.cache_key(load(tmp / "dependents.toml").dependents[0],
                            Plan(("jax==0.4.33",), ("jax==0.4.31",)), load_matrix(tmp / "matrix.toml")) is None


def test_an_unpacked_dependent_without_pytest_configuration_is_run_as_on_its_own(tmp_path):
    """Seen: mctx 0.0.71 (a pyproject.toml without [tool.pytest.ini_options]) unpacked in the state
    folder of a checkout ran with the checkout's own pyproject.toml as its configfile
    (--strict-markers, xfail_strict): an empty [pytest] at its root stops pytest's search there."""
    from jaxcompat.env import projects

    outer = tmp_path / "checkout"
    (outer / "src" / "dep").mkdir(parents=True)
    (outer / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = '--strict-markers'\n")
    dep = outer / "src" / "dep"
    (dep / "pyproject.toml").write_text('[project]\nname = "dep"\nversion = "1"\n')
    (dep / "test_m.py").write_text("import pytest\n\n@pytest.mark.slow\ndef test_a():\n    pass\n")
    projects._standalone(dep)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(dep), str(dep)],
                          capture_output=True, text=True, cwd=dep)
    assert proc.returncode == 0 and "configfile: pytest.ini" in proc.stdout, proc.stdout
    configured = tmp_path / "own"
    configured.mkdir()
    (configured / "setup.cfg").write_text("[tool:pytest]\naddopts = -q\n")
    projects._standalone(configured)
    assert not (configured / "pytest.ini").exists()  # a project's own configuration is never touched


# -------------------------------------------------------------------- merging shards, unit


def _stored_run(tmp_path, names_run, planned_names, shards=("1/2", "2/2")):
    """A reports folder as shard artifacts leave it: results of ``names_run``, plans of every shard."""
    out = tmp_path / "reports" / "crater"
    plan = Plan(("jax==0.4.33",), ("jax==0.4.31",))
    deps = [Dependent(n, DependentSource(version="1.0")) for n in planned_names]
    for s in shards:
        crater.store_plan(out, plan, deps, s)
    for n in names_run:
        res = DependentResult(n, DependentVerdict.SAFE, version="1.0", plan=plan.key, run_id=plan.run_id,
                                     ran={"candidate": 4, "baseline": 4})
        (out / crater.RESULTS / f"{n}.json").write_text(json.dumps(res.to_dict()))
    (tmp_path / "dependents.toml").write_text("".join(f'[[dependent]]\nname = "{n}"\nversion = "latest"\n'
                                                      for n in planned_names))
    return out


def _merge(tmp_path, capsys):
    from jaxcompat.commands import main

    code = main(["crater", "--report-only", "--reports", str(tmp_path / "reports"), "--state",
                 str(tmp_path / "state"), "--dependents", str(tmp_path / "dependents.toml")])
    return code, capsys.readouterr()


def test_a_merge_with_planned_dependents_never_run_is_not_breaks_none(tmp_path, capsys):
    """Regression (084bcdf: "✓ … breaks none", exit 0 with two of three planned never run)."""
    _stored_run(tmp_path, ["alpha"], ["alpha", "beta", "gamma"])
    code, said = _merge(tmp_path, capsys)
    assert code == 2, said.out
    assert "breaks none" not in said.out and "no stored result" in said.out and "beta, gamma" in said.out
    data = json.loads((tmp_path / "reports" / "crater" / "crater.json").read_text())
    assert {d["name"]: d["verdict"] for d in data["dependents"]} == {"alpha": "safe", "beta": "not-run",
                                                                     "gamma": "not-run"}


def test_a_merge_names_an_unreadable_result(tmp_path, capsys):
    """Regression (084bcdf skipped a corrupt shard result silently)."""
    out = _stored_run(tmp_path, ["alpha", "beta"], ["alpha", "beta"])
    (out / crater.RESULTS / "beta.json").write_text('{"name": "beta", "verd')  # cut short
    code, said = _merge(tmp_path, capsys)
    assert code == 2 and "beta.json" in said.out and "could not be read" in said.out


def test_a_merge_of_every_planned_result_is_safe_and_without_a_plan_is_not(tmp_path, capsys):
    out = _stored_run(tmp_path, ["alpha", "beta"], ["alpha", "beta"])
    code, said = _merge(tmp_path, capsys)
    assert code == 0 and "breaks none" in said.out
    shutil.rmtree(out / crater.RESULTS / crater.PLANS)
    code, said = _merge(tmp_path, capsys)
    assert code == 2 and "no shard stored its plan" in said.out


def test_a_merge_takes_no_shard_of_an_earlier_run_of_the_same_plan(tmp_path, capsys):
    """Regression (red team 6, F4: night 1's shards 1/2 and 2/2 stored in one reports folder, night 2
    only shard 1/2 ran: the merge took night 1's shard-2 result as tonight's, "breaks none", exit 0)."""
    out = tmp_path / "reports" / "crater"
    deps = [Dependent(n, DependentSource(version="1.0")) for n in ("alpha", "beta")]
    for night, shards in (("day 2026-11-26", ("1/2", "2/2")), ("day 2026-11-27", ("1/2",))):
        plan = Plan(("jax==0.4.33",), ("jax==0.4.31",), run=night)  # the same key every night
        for s in shards:
            crater.store_plan(out, plan, deps, s)
            name = "alpha" if s == "1/2" else "beta"
            res = DependentResult(name, DependentVerdict.SAFE, version="1.0", plan=plan.key, run_id=plan.run_id,
                                  ran={"candidate": 2, "baseline": 2})
            (out / crater.RESULTS / f"{name}.json").write_text(json.dumps(res.to_dict()))
    (tmp_path / "dependents.toml").write_text("".join(f'[[dependent]]\nname = "{d.name}"\nversion = "latest"\n'
                                                      for d in deps))
    code, said = _merge(tmp_path, capsys)
    assert code == 2 and "breaks none" not in said.out, said.out
    assert "no stored result" in said.out and "beta" in said.out and "shard-2-of-2.json" in said.out
    data = json.loads((out / "crater.json").read_text())
    assert {d["name"]: d["verdict"] for d in data["dependents"]} == {"alpha": "safe", "beta": "not-run"}


@pytest.mark.parametrize("key, value", [("versions", []), ("sides", "x"), ("classes", {"broken": "one"}),
                                        ("scan", [{"x": 1}]), ("past_day", ["x"]), ("caps", "x")])
def test_a_merge_names_a_stored_part_of_a_wrong_type_and_never_crashes(tmp_path, capsys, key, value):
    """Regression (red team 6, F15: such a stored result crashed --report-only, "a bug of jax-compat",
    and the previous merge's crater.json/md/html stayed as if current)."""
    out = _stored_run(tmp_path, ["alpha", "beta"], ["alpha", "beta"])
    code, said = _merge(tmp_path, capsys)
    assert code == 0 and (out / "crater.json").is_file()
    data = json.loads((out / crater.RESULTS / "beta.json").read_text())
    (out / crater.RESULTS / "beta.json").write_text(json.dumps({**data, key: value}))
    code, said = _merge(tmp_path, capsys)
    assert code == 2 and "a bug of jax-compat" not in said.err, said
    assert f"beta.json (unreadable part: its key '{key}' holds another type)" in said.out
    assert json.loads((out / "crater.json").read_text())["exit"] == 2  # the report written is this merge's


def test_a_failed_merge_leaves_no_earlier_merge_s_report_looking_current(tmp_path, capsys):
    out = _stored_run(tmp_path, ["alpha"], ["alpha"])
    assert _merge(tmp_path, capsys)[0] == 0 and {p.name for p in out.glob("crater.*")} >= {"crater.json", "crater.md"}
    other = Plan(("jax==0.4.34",), ("jax==0.4.31",))  # a plan of another run beside it: refused, exit 2
    crater.store_plan(out, other, [Dependent("alpha", DependentSource(version="1.0"))], "2/2")
    code, said = _merge(tmp_path, capsys)
    assert code == 2 and "different crater runs" in said.err
    assert not list(out.glob("crater.*"))


def test_a_stored_safe_verdict_beside_a_broken_test_is_judged_from_its_tests(tmp_path, capsys):
    """Regression (red team 6, F15: merged as safe, exit 0)."""
    from jaxcompat.model.usertests import UserTest
    from jaxcompat.model.vocab import UserTestSide, UserTestStatus

    out = _stored_run(tmp_path, ["alpha"], ["alpha"])
    res = DependentResult.from_dict(json.loads((out / crater.RESULTS / "alpha.json").read_text()))
    res.tests = [UserTest("t.py::a", candidate=UserTestSide.FAILED, baseline=UserTestSide.PASSED,
                          cls=UserTestStatus.BROKEN)]
    (out / crater.RESULTS / "alpha.json").write_text(json.dumps(res.to_dict()))
    code, said = _merge(tmp_path, capsys)
    assert code == 1 and "breaks none" not in said.out
    assert [d["verdict"] for d in json.loads((out / "crater.json").read_text())["dependents"]] == ["broken"]


# -------------------------------------------------------------------- causes that are not caps


def test_a_cap_whose_marker_does_not_hold_for_the_side_is_no_cap():
    """Regression (084bcdf: `jax<0.4.31; python_version<"3.10"` was a cap for a side on 3.12)."""
    req = [Requirement('jax<0.4.31; python_version<"3.10"')]
    assert caps(req, {"jax": "0.4.33"}, python="3.12") == []
    assert caps(req, {"jax": "0.4.33"}, python="3.9") == ["jax<0.4.31 (the side pins jax==0.4.33)"]
    assert caps([Requirement('jax<0.4.31; sys_platform == "win32"')], {"jax": "0.4.33"}) == []
    assert caps([Requirement("jax<0.4.31")], {"jax": "0.4.33"}, python="3.12") != []


@pytest.mark.parametrize("error", [
    "unresolvable: Failed to fetch: `https://pypi.org/simple/jax/`\n  Caused by: error sending request for url "
    "(https://pypi.org/simple/jax/)\n  Caused by: client error (Connect)\n  Caused by: tcp connect error",
    "unresolvable: could not read https://pypi.org/pypi/jax/json after 3 attempts: <urlopen error timed out>",
    "unresolvable: Request failed after 3 retries\n  Caused by: ProxyError: tunnel connection failed",
])
def test_an_unreachable_index_is_its_own_verdict_never_a_cap(error):
    """Regression (084bcdf: a proxy to nowhere or a timeout reading the index became `capped`)."""
    res = DependentResult("d", DependentVerdict.NOT_RUN)
    crater._not_installed(res, "candidate", error, CellStatus.UNRESOLVABLE)
    assert res.verdict == DependentVerdict.UNREACHABLE and not res.caps
    assert exit_status([res]) == 2


def test_a_source_the_index_cannot_serve_is_unreachable_not_no_source(tmp_path, monkeypatch):
    """084bcdf: `no-source` for a dependent whose release list could not be read (a timeout)."""
    from jaxcompat.env import projects

    def timeout(dep, cache, as_of=None):
        raise projects.SourceMissing(f"{dep.name}: could not read https://pypi.org/pypi/{dep.name}/json after 3 "
                                     "attempts: <urlopen error timed out>")
    monkeypatch.setattr(projects, "version_of", timeout)
    plan = Plan(("jax==0.4.33",), ("jax==0.4.31",))
    res = crater.judge(Dependent("alpha", DependentSource(version="latest")), plan, None, tmp_path)
    assert res.verdict == DependentVerdict.UNREACHABLE and "timed out" in res.cause


def test_a_resolver_that_finds_no_set_is_still_a_cap():
    res = DependentResult("d", DependentVerdict.NOT_RUN)
    crater._not_installed(res, "candidate", "unresolvable: Because dep==1.0 depends on jax<0.4.32 and you "
                                            "require jax==0.4.33, we can conclude that your requirements are "
                                            "unsatisfiable.", CellStatus.UNRESOLVABLE)
    assert res.verdict == DependentVerdict.CAPPED and res.caps


@pytest.mark.integration
def test_a_dependent_whose_tests_all_skip_in_the_candidate_is_not_safe(tmp_path):
    """Regression (084bcdf: `safe`, exit 0): every test skips in the candidate, so nothing was judged."""
    candidate = candidate_cell(["jax==0.4.33"], python="auto", companions=False).id
    skips = f'''
        import os
        import pytest

        @pytest.fixture(autouse=True)
        def _gone():
            if "{candidate}" in os.environ["JAXCOMPAT_RESULTS"]:
                pytest.skip("needs a feature the candidate lacks")

        def test_a():
            pass

        def test_b():
            pass
        '''
    deps = '[[dependent]]\nname = "alpha"\nversion = "latest"\ntests = ["tests"]\n'
    tmp = _tree(tmp_path, deps, alpha=skips)
    proc = _crater(tmp, "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # not safe, as check --tests says of your own suite
    data = json.loads((tmp / "reports" / "crater" / "crater.json").read_text())
    [alpha] = data["dependents"]
    assert alpha["verdict"] == "none-ran" and "none of its tests ran in the candidate" in alpha["cause"]
    assert "breaks none" not in out


def test_a_merge_names_a_result_of_another_schema(tmp_path, capsys):
    """084bcdf: read as it came ("ran": {"candidate": "3"}), exit 0 "breaks none"; 1b71c70: a
    TypeError at the boundary. It is a file that does not read, named, exit 2."""
    out = _stored_run(tmp_path, ["alpha", "beta"], ["alpha", "beta"])
    beta = json.loads((out / crater.RESULTS / "beta.json").read_text())
    (out / crater.RESULTS / "beta.json").write_text(json.dumps({**beta, "ran": {"candidate": "3"}}))
    code, said = _merge(tmp_path, capsys)
    assert code == 2 and "could not be read" in said.out and "beta.json" in said.out
    assert "a bug of jax-compat" not in said.err
    md = (out / "crater.md").read_text()
    assert "breaks none" not in md and "beta.json" in md  # the report itself says what it could not see


def test_a_merge_without_a_plan_never_writes_breaks_none(tmp_path, capsys):
    """084bcdf and 1b71c70: crater.md (the merge job's summary) said "✓ … breaks none" while no
    shard had stored what it planned (1b71c70 exited 2 but wrote it all the same)."""
    (tmp_path / "reports" / "crater" / crater.RESULTS).mkdir(parents=True)
    out = _stored_run(tmp_path, ["alpha"], ["alpha"], shards=())
    code, said = _merge(tmp_path, capsys)
    assert code == 2 and "breaks none" not in said.out
    for name in ("crater.md", "crater.html"):
        text = (out / name).read_text()
        assert "breaks none" not in text and "no shard stored its plan" in text
    data = json.loads((out / "crater.json").read_text())
    assert data["exit"] == 2 and data["not_seen"]


def test_a_shards_own_report_never_says_breaks_none_for_the_whole(tmp_path):
    """084bcdf: a shard holding one safe dependent of two wrote "✓ the candidate breaks none", exit 0."""
    deps = '[[dependent]]\nname = "alpha"\nversion = "latest"\n\n[[dependent]]\nname = "beta"\nversion = "latest"\n'
    fine = "def test_fine():\n    pass\n"
    tmp = _tree(tmp_path, deps, alpha=fine, beta=fine)
    part = _crater(tmp, "--baseline", "jax==0.4.31", "jax==0.4.33", "--shard", "1/2")
    out = part.stdout + part.stderr
    assert part.returncode == 2, out
    assert "breaks none" not in out and "holds 1 of the 2 dependents planned" in out
    assert "breaks none" not in (tmp / "reports" / "crater" / "crater.md").read_text()


def test_a_replay_resolves_both_sides_as_of_its_day(tmp_path):
    """Regression (0f2af1a): a replay `--as-of 2024-09-11` resolved each side as of the day after its
    newest pin (jax 0.4.31: 2024-07-31), so lineax's `equinox>=0.11.5` was let past the cutoff to
    equinox 0.11.10 (2024-12) and optimistix got 0.11.4: neither was the core as of the day."""
    from dataclasses import replace

    from jaxcompat.env import envs

    cell = candidate_cell(["jax==0.4.31", "jaxlib==0.4.31"], python="auto", companions=False)
    plan = Plan(("jax==0.4.32", "jaxlib==0.4.32"), ("jax==0.4.31", "jaxlib==0.4.31"), as_of="2024-09-11")
    side = crater.replayed(cell, plan)
    assert side.date == "2024-09-11" and side.pins == cell.pins
    argv = envs.resolve_args(side, "3.11", side.date, tmp_path / "requirements.in")
    assert argv[argv.index("--exclude-newer") + 1] == "2024-09-11"
    assert {"jax=" + envs.FAR_FUTURE, "jaxlib=" + envs.FAR_FUTURE} <= set(argv)  # the pins stay exempt
    assert crater.replayed(cell, replace(plan, as_of=None)) is cell  # not a replay: the pins' date


def test_a_dependents_test_time_limit_is_read_validated_and_said():
    """diffrax's test_against met the matrix's 300 s case limit on both sides: fails-both, 'not the
    upgrade's doing', of a test no side saw end. test_timeout_s ([settings] or per dependent) sets
    one test's limit; a test stopped at it on both sides is said not judged."""
    deps = parse({"settings": {"test_timeout_s": 600}, "dependent": [
        {"name": "a", "version": "latest"}, {"name": "b", "version": "latest", "test_timeout_s": 1200}]})
    assert [d.test_timeout_s for d in deps.dependents] == [600.0, 1200.0]
    assert parse({"dependent": [{"name": "a", "version": "latest"}]}).dependents[0].test_timeout_s is None
    for bad in (float("nan"), 0, -1, "600", True):
        with pytest.raises(ConfigError, match=r"(?s)dependent\[a\]\.test_timeout_s.*expected a number of seconds > 0.*"
                                              r"test_timeout_s = 900"):
            parse({"dependent": [{"name": "a", "version": "latest", "test_timeout_s": bad}]})
    stopped = UserTest("t.py::test_against", "timeout", "timeout", "fails-both")
    res = DependentResult("diffrax", DependentVerdict.SAFE, ran={"candidate": 2, "baseline": 2},
                          tests=[stopped, UserTest("t.py::test_ok", "passed", "passed", "pass")])
    text = verdict_text([res], [], {"candidate": ["jax==0.4.33"], "baseline": ["jax==0.4.31"]},
                        crater.cost([res], 1, 0.0))
    assert "1 stopped at the time limit on both sides, not judged (test_timeout_s gives them longer)" in text


def test_the_dependents_time_limit_reaches_its_tests(tmp_path, monkeypatch):
    from jaxcompat.env import projects

    monkeypatch.setattr(projects, "version_of", lambda dep, cache, as_of=None: "1.0")
    monkeypatch.setattr(projects, "describe", lambda dep, version, cache: version)
    monkeypatch.setattr(projects, "fetch", lambda dep, version, cache, src: tmp_path)
    monkeypatch.setattr(projects, "absent_files", lambda dep, version, src: [])
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    dep = Dependent("a", DependentSource(version="1.0"), test_timeout_s=900.0)
    res = DependentResult("a", DependentVerdict.NOT_RUN)
    _, target = crater._source(dep, Plan(("jax==0.4.33",), ("jax==0.4.31",)), tmp_path, "1.0", res)
    assert target.timeout_s == 900.0


def test_a_replay_says_what_it_took_from_after_its_day(tmp_path, monkeypatch):
    """--as-of DAY: what a dependent's requirements needed newer than the day is taken past the
    cutoff (its tests would not run otherwise); the replay is then not the day's, and says so,
    per side. The plan's own pins and the dependent itself are not counted; a build the index does
    not hold, or cannot say of, is left out."""
    import json as json_

    from jaxcompat.env import releases

    for dist, dates in {"equinox": {"0.11.5": "2024-08-20", "0.11.10": "2024-12-03"},
                        "numpy": {"2.1.1": "2024-09-03"}, "jax": {"0.4.33": "2024-09-16"}}.items():
        (tmp_path / f"releases-{dist}.json").write_text(json_.dumps(
            {v: {"date": d, "yanked": False} for v, d in dates.items()}))

    asked = []

    def offline(dist, attempts=3):
        asked.append(dist)
        if dist == "dep":
            raise releases.IndexError_("could not read https://pypi.org/pypi/dep/json after 3 attempts: timed out")
        raise releases.IndexError_(f"{dist} is not on the package index (404)")
    monkeypatch.setattr(releases, "fetch_info", offline)
    installed = {"equinox": "0.11.10", "numpy": "2.1.1", "jax": "0.4.33", "lineax": "0.0.6.dev0",
                 "mylib": "1.0", "dep": "3.0", "jaxlib": "0.4.33"}
    (tmp_path / "releases-jaxlib.json").write_text(json_.dumps({"0.4.33": {"date": "2024-09-16", "yanked": False}}))
    assert releases.released_since(installed, "2024-09-11", tmp_path) == [
        ("dep", "3.0", ""), ("equinox", "0.11.10", "2024-12-03"), ("jax", "0.4.33", "2024-09-16"),
        ("jaxlib", "0.4.33", "2024-09-16"), ("mylib", "1.0", "")]  # dep: the index did not answer
    assert asked == ["dep"]  # after it, only what is cached is read: a dead index costs once, not once a package
    cmp = Comparison([], with_baseline=True, candidate_versions=installed,
                     baseline_versions={**installed, "equinox": "0.11.5", "jax": "0.4.31"})
    plan = Plan(("jax==0.4.33",), ("jax==0.4.31",), as_of="2024-09-11")
    past = crater.past_day(cmp, plan, "dep", tmp_path)
    assert past == {"candidate": ["equinox 0.11.10 (2024-12-03)"]}  # not jax, nor the jaxlib its pin brings
    unanswered = crater.past_day(cmp, plan, "other", tmp_path)  # an index that did not answer is not "of the day"
    assert unanswered["baseline"] == ["dep 3.0, mylib 1.0 (the index did not answer: not known to be of the day)"]
    res = DependentResult("dep", DependentVerdict.SAFE, ran={"candidate": 1, "baseline": 1}, past_day=past)
    text = verdict_text([res], [], {"candidate": ["jax==0.4.33"], "baseline": ["jax==0.4.31"]},
                        crater.cost([res], 1, 0.0))
    assert "! not as of the day in the candidate: its requirements took equinox 0.11.10 (2024-12-03)" in text


def test_every_test_stopped_at_the_limit_on_both_sides_is_not_safe():
    """Found checking the time limit's paths to exit 0: a suite whose every test was stopped on both
    sides ran (so it was not 'not run') and broke nothing (fails-both is no break): safe, exit 0,
    of a suite no side saw end a single test of. Now not judged: exit 2, in check and the crater."""
    from jaxcompat.model import verdicts
    from jaxcompat.operations.check import user_tests_item

    stopped = [UserTest(f"t.py::t{k}", "timeout", "timeout", "fails-both") for k in range(2)]
    cmp = Comparison(stopped, with_baseline=True, ran={"candidate": 2, "baseline": 2}, timeout_s=300.0)
    assert "every test that ran was stopped at the time limit (300 s) on both sides" in cmp.unjudged
    assert verdicts.decide([user_tests_item(cmp, "yours")]).code == 2
    res = DependentResult("d", DependentVerdict.NO_SOURCE, ran=dict(cmp.ran), tests=stopped)
    crater._judged(res, cmp)
    assert res.verdict == DependentVerdict.NOT_RUN and exit_status([res]) == 2
    one_ended = Comparison([*stopped, UserTest("t.py::ok", "passed", "passed", "pass")], with_baseline=True,
                           ran={"candidate": 3, "baseline": 3}, timeout_s=300.0)
    assert not one_ended.unjudged  # one test ended on both sides: judged, the others said
