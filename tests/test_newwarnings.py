"""Tomorrow's breaks in today's warnings: each test's warnings recorded by the plugin inside the
test process, diffed against the same test in the baseline, grouped by normalised message across
dependents, dated by jax's API history, leading the crater's and check's reports; a candidate that
only adds warnings is safe (exit 0). No jax: a real pytest run of a small folder for the plugin,
records for the rest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxcompat.env import testtarget
from jaxcompat.knowledge import warnings as kw
from jaxcompat.knowledge.config import load
from jaxcompat.model.crater import DependentResult, Plan
from jaxcompat.model.deprecations import History
from jaxcompat.model.outcomes import RawResult
from jaxcompat.model.usertests import Observed, UserTest
from jaxcompat.model.vocab import DependentVerdict
from jaxcompat.model.warnings import TestWarning
from jaxcompat.operations import crater, newwarnings, usertests
from jaxcompat.run.runner import CellRun, record
from tests.helpers import make_tree, write_crater

REPO = Path(__file__).resolve().parent.parent
TREE_MAP = ("jax.tree_map is deprecated: use jax.tree.map (jax v0.4.25 or newer) or jax.tree_util.tree_map "
            "(any JAX version).")
DEP = TestWarning("DeprecationWarning", TREE_MAP)


def test_the_plugin_records_each_tests_announcing_warnings_bounded_and_once(tmp_path):
    (tmp_path / "test_w.py").write_text(
        "import warnings\n\n"
        "def test_many():\n"
        "    for i in range(40):\n"
        "        warnings.warn(f'old thing {i} is deprecated', DeprecationWarning)\n\n"
        "def test_same_twice():\n"
        "    for _ in range(3):\n"
        "        warnings.warn('x is going away', FutureWarning)\n"
        "    warnings.warn('y is pending', PendingDeprecationWarning)\n"
        "    warnings.warn('not an announcement', UserWarning)\n\n"
        "def test_quiet():\n"
        "    pass\n")
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    events = tmp_path / "events.jsonl"
    env = {**os.environ, "JAXCOMPAT_RESULTS": str(events), "JAXCOMPAT_OWN_FRAMES": str(tmp_path),
           "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)], cwd=tmp_path,
                   env=env, capture_output=True, text=True, timeout=120)
    lines = [json.loads(x) for x in events.read_text().splitlines()]
    run = CellRun()
    record(lines, run, set())
    by = {r.case.split("::")[1]: r for r in run.results}
    assert len(by["test_many"].warnings) == 20  # bounded per test
    assert sorted((w.category, w.message) for w in by["test_same_twice"].warnings) == [
        ("FutureWarning", "x is going away"), ("PendingDeprecationWarning", "y is pending")]
    assert by["test_quiet"].warnings == []


def test_a_warning_is_new_only_against_the_same_test_that_ran_before():
    moved = TestWarning("DeprecationWarning", "array at 0x7f00aa of shape (3, 4) in /home/u/p/x.py is deprecated")
    same = TestWarning("DeprecationWarning", "array at 0x7e11bb of shape (5, 6) in /opt/q/y.py is deprecated")
    assert kw.normalise(moved.message) == kw.normalise(same.message)
    assert kw.new([moved, DEP], [same], ran_before=True) == [DEP]
    assert kw.new([DEP], [], ran_before=False) == []  # not run before: nothing to compare with
    assert kw.new([DEP], None, ran_before=True) == []  # no baseline at all


def _obs(**tests) -> Observed:
    return Observed(results={f"tests/test_x.py::{n}": RawResult(case=f"tests/test_x.py::{n}", status=st,
                                                                          warnings=list(ws))
                                       for n, (st, ws) in tests.items()}, versions={"pytest": "8.0.0"})


def test_classify_carries_each_tests_new_warnings_into_its_record(tmp_path):
    matrix = load(make_tree(tmp_path))
    after = _obs(a=("passed", [DEP]), b=("passed", [DEP]), c=("passed", [DEP]))
    before = _obs(a=("passed", []), b=("passed", [DEP]), c=("skipped", []))
    tests = {t.test.split("::")[1]: t for t in usertests.classify(after, before, matrix, "cpu")}
    assert tests["a"].new_warnings == [DEP] and tests["a"].cls == "pass"
    assert tests["b"].new_warnings == [] and tests["c"].new_warnings == []
    again = UserTest.from_dict(json.loads(json.dumps(tests["a"].to_dict())))
    assert again.new_warnings == [DEP]
    assert "new_warnings" not in tests["b"].to_dict()


def test_new_warnings_are_grouped_across_dependents_and_dated_by_the_api_history():
    other = TestWarning("FutureWarning", "equinox.thing is deprecated and will be removed in 0.14.0")
    per = {"alpha": {"t::a": [DEP], "t::b": [DEP, other]}, "beta": {"t::c": [DEP]}}
    history = {"jax.tree_map": History(deprecated_in="0.4.26", removed_in="0.6.0", newest="0.12.0")}
    groups = kw.group(per, history)
    assert [g.api for g in groups] == ["jax.tree_map", ""]  # soonest removal first
    assert kw.sentence(groups[0]) == ("jax.tree_map: deprecated in 0.4.26, removed in 0.6.0 — 3 tests of 2 "
                                      "dependents (DeprecationWarning)")
    assert groups[1].removed_in == "0.14.0" and groups[1].removal_from == "message"
    assert groups[0].tests == {"alpha": ["t::a", "t::b"], "beta": ["t::c"]}


def test_the_real_history_dates_jax_tree_map():
    t = UserTest("t::a", "passed", "passed", "pass", new_warnings=[DEP])
    [g] = newwarnings.groups({"alpha": [t]})
    assert (g.api, g.deprecated_in, g.removed_in, g.removal_from) == ("jax.tree_map", "0.4.26", "0.6.0", "history")


def _dependent(name: str, *tests: UserTest) -> DependentResult:
    classes: dict[str, int] = {}
    for t in tests:
        classes[t.cls] = classes.get(t.cls, 0) + 1
    return DependentResult(name, DependentVerdict.SAFE, version="1.0", ran={"candidate": len(tests),
                                                                                 "baseline": len(tests)},
                                  classes=classes, tests=list(tests))


def test_a_candidate_that_only_adds_warnings_is_safe_and_the_report_leads_with_them(tmp_path):
    warned = [UserTest(f"tests/test_m.py::t{i}", "passed", "passed", "pass", new_warnings=[DEP])
              for i in range(3)]
    results = [_dependent("alpha", *warned[:2]), _dependent("beta", warned[2]),
               _dependent("gamma", UserTest("tests/test_m.py::q", "passed", "passed", "pass"))]
    plan = Plan(("jax==0.4.26",), ("jax==0.4.25",))
    text, code = write_crater(tmp_path, results, {"candidate": ["jax==0.4.26"], "baseline": ["jax==0.4.25"],
                                                  "as_of": None}, 1.0, 1, plan)
    assert code == 0
    lines = text.splitlines()
    assert lines[1].startswith("✓ the candidate breaks none of the 3 dependents' tests")
    assert lines[2].startswith("! the candidate announces 1 future break(s): 3 test(s)")
    assert "jax.tree_map: deprecated in 0.4.26, removed in 0.6.0 — 3 tests of 2 dependents" in lines[3]
    data = json.loads((tmp_path / "crater.json").read_text())
    assert data["exit"] == 0 and data["new_warnings"][0]["projects"] == ["alpha", "beta"]
    assert data["new_warnings"][0]["removed_in"] == "0.6.0"
    assert "| `jax.tree_map` | DeprecationWarning | 0.4.26 | 0.6.0 | 3 | alpha, beta |" in (
        tmp_path / "crater.md").read_text()
    assert "tomorrow&#x27;s breaks" in (tmp_path / "crater.html").read_text() or "tomorrow's breaks" in (
        tmp_path / "crater.html").read_text()


def _user_project(tmp_path) -> str:
    """A matrix, the plugin and an empty user/ folder for a user's tests; the candidate cell's id."""
    from jaxcompat.env.candidate import candidate_cell

    make_tree(tmp_path)
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (tmp_path / "user").mkdir()
    return candidate_cell(["jax==0.4.33"], python="auto").id


@pytest.mark.integration
def test_check_tests_with_only_new_warnings_is_safe_and_leads_with_them(tmp_path):
    cand = _user_project(tmp_path)
    (tmp_path / "user" / "test_u.py").write_text(
        "import os, warnings\n\n"
        "def test_tree():\n"
        f"    if '{cand}' in os.environ['JAXCOMPAT_RESULTS']:\n"
        f"        warnings.warn({TREE_MAP!r}, DeprecationWarning)\n\n"
        "def test_quiet():\n    pass\n")
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "fake_matrix.py"), "check", "--matrix",
                           str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"), "--state",
                           str(tmp_path / "state"), "--tests", str(tmp_path / "user"), "--no-verify-escapes",
                           "--baseline", "jax==0.4.31", "jax==0.4.33"], capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    verdict = out[out.index("! the candidate announces"):]
    assert verdict.index("jax.tree_map: deprecated in 0.4.26, removed in 0.6.0 — 1 test") < verdict.index("Your tests")
    data = json.loads((tmp_path / "reports" / "check.json").read_text())
    [g] = data["user_tests_run"]["new_warnings"]
    assert g["tests"] == {"user": ["test_u.py::test_tree"]} and g["removed_in"] == "0.6.0"
    by = {t["test"]: t for t in data["user_tests"]}
    assert by["test_u.py::test_tree"]["new_warnings"][0]["category"] == "DeprecationWarning"
    assert "new_warnings" not in by["test_u.py::test_quiet"]
    md = (tmp_path / "reports" / "check.md").read_text()
    assert "| `jax.tree_map` | DeprecationWarning | 0.4.26 | 0.6.0 | 1 |" in md


@pytest.mark.integration
def test_check_tests_reports_a_warning_its_package_raises_when_imported(tmp_path):
    """The shape a new user meets first: a module the tests import reads, at its top, a name the
    candidate deprecates. Plain pytest's summary lists the warning; check --tests now says it as a
    new warning of the tests of the module that imported it (fake cells: no jax, no network)."""
    cand = _user_project(tmp_path)
    (tmp_path / "user" / "usermod.py").write_text(
        "import os\nimport warnings\n\n"
        f"if '{cand}' in os.environ['JAXCOMPAT_RESULTS']:  # the candidate deprecates what it reads\n"
        f"    warnings.warn({TREE_MAP!r}, DeprecationWarning)\n")
    (tmp_path / "user" / "test_u.py").write_text("import usermod  # noqa: F401\n\n\ndef test_tree():\n    pass\n")
    (tmp_path / "user" / "test_v.py").write_text("def test_quiet():\n    pass\n")
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "fake_matrix.py"), "check", "--matrix",
                           str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"), "--state",
                           str(tmp_path / "state"), "--tests", str(tmp_path / "user"), "--no-verify-escapes",
                           "--baseline", "jax==0.4.31", "jax==0.4.33"], capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "jax.tree_map: deprecated in 0.4.26, removed in 0.6.0 — 1 test" in out, out
    data = json.loads((tmp_path / "reports" / "check.json").read_text())
    [g] = data["user_tests_run"]["new_warnings"]
    assert g["tests"] == {"user": ["test_u.py::test_tree"]}


TRACER_HASH = ("unhashable type: <class 'jax._src.interpreters.partial_eval.DynamicJaxprTracer'>. Attempting to "
               "hash a tracer will lead to an error in a future JAX release.")


def test_a_new_warning_a_rule_documents_is_that_rule_with_its_fix():
    """Seen replaying jax 0.4.32 on diffrax's own suite (as of 2024-09-11, equinox 0.11.5 there):
    the tracer-hashing FutureWarning was "no removal known yet", though matrix.toml's rule
    tracer-hashing documents it (an error from jax 0.4.36) and its fix. A rule explains a warning
    only where it applies: with equinox 0.11.5 (the fix) it is an unexplained warning."""
    failures = load(REPO / "matrix.toml").failures
    per = {"diffrax": {"test/test_adjoint.py::test_against": [TestWarning("FutureWarning", TRACER_HASH)]},
           "lineax": {"tests/test_jvp.py::test_jvp": [DEP]}}
    broken = {"diffrax": {"jax": "0.4.32", "jaxlib": "0.4.32", "equinox": "0.11.4"}, "lineax": {"jax": "0.4.32"}}
    groups = {g.category: g for g in kw.explain(kw.group(per), failures, broken)}
    hashed = groups["FutureWarning"]
    assert hashed.explained_by == "tracer-hashing" and "equinox" in hashed.fix
    assert "this is tracer-hashing — fix: " in kw.sentence(hashed)
    assert hashed.to_dict()["explained_by"] == "tracer-hashing"
    assert not groups["DeprecationWarning"].explained_by  # no rule's match: left to the API history
    fixed = {"diffrax": {"jax": "0.4.32", "jaxlib": "0.4.32", "equinox": "0.11.5"}}
    [again] = [g for g in kw.explain(kw.group(per), failures, fixed) if g.category == "FutureWarning"]
    assert not again.explained_by and "explained_by" not in again.to_dict()


FAKEJAX = ("import os\nimport warnings\n\n\n"
           "def __getattr__(name):\n"
           "    if name == 'bar':\n"
           "        if os.environ.get('FAKEJAX_DEPRECATE'):  # the candidate deprecates it\n"
           "            warnings.warn('fakejax.bar is deprecated; use fakejax.baz instead.', DeprecationWarning,\n"
           "                          stacklevel=2)\n"
           "        return 1\n"
           "    raise AttributeError(name)\n")


def test_a_warning_raised_when_a_package_is_imported_is_a_new_warning_of_the_tests_of_its_module(tmp_path):
    """A package that reads, at its top, a name the candidate deprecates (``from jax.foo import bar``)
    warns once, while pytest imports the test module that imports it: at collection, before any test
    runs. Those tests (and a folder's tests, for its conftest) carry it as a new warning; the real
    plugin and runner, a fake jax and package (no jax needed)."""
    from jaxcompat.run.runner import run_cases

    site, proj = tmp_path / "site", tmp_path / "proj"
    for path, text in {site / "fakejax" / "__init__.py": FAKEJAX,
                       site / "userpkg" / "__init__.py": "from fakejax import bar\n\nVALUE = bar\n",
                       proj / "tests" / "test_core.py": "import userpkg\n\n\ndef test_value():\n"
                                                         "    assert userpkg.VALUE == 1\n\n\ndef test_again():\n"
                                                         "    pass\n",
                       proj / "tests" / "test_other.py": "def test_plain():\n    pass\n",
                       proj / "sub" / "conftest.py": "import os\nimport warnings\n\n"
                                                     "if os.environ.get('FAKEJAX_DEPRECATE'):\n"
                                                     "    warnings.warn('fakejax.qux will be removed in fakejax 2.0',"
                                                     " FutureWarning)\n",
                       proj / "sub" / "test_sub.py": "def test_in_sub():\n    pass\n"}.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def observe(side: str, env: dict[str, str]) -> Observed:
        run = run_cases(sys.executable, proj, [], backend="cpu", imports=[], timeout_s=60, workdir=tmp_path / side,
                        project=True, extra_env={"PYTHONPATH": str(site), **env})
        assert run.results and "fakejax.bar is deprecated" in run.log_tail or side == "baseline", run.log_tail
        return Observed(results={r.case: r for r in run.results}, versions={"pytest": "8"})

    after = observe("candidate", {"FAKEJAX_DEPRECATE": "1"})
    before = observe("baseline", {})
    (tmp_path / "m").mkdir()
    tests = {t.test: t for t in usertests.classify(after, before, load(make_tree(tmp_path / "m")), "cpu")}
    bar = TestWarning("DeprecationWarning", "fakejax.bar is deprecated; use fakejax.baz instead.")
    qux = TestWarning("FutureWarning", "fakejax.qux will be removed in fakejax 2.0")
    assert {n: t.new_warnings for n, t in tests.items()} == {
        "tests/test_core.py::test_value": [bar], "tests/test_core.py::test_again": [bar],
        "tests/test_other.py::test_plain": [], "sub/test_sub.py::test_in_sub": [qux]}
    assert all(t.cls == "pass" for t in tests.values())
    groups = {g.message: g for g in newwarnings.groups({"proj": list(tests.values())})}
    assert sorted(groups[bar.message].tests["proj"]) == ["tests/test_core.py::test_again",
                                                         "tests/test_core.py::test_value"]
    assert groups[qux.message].tests == {"proj": ["sub/test_sub.py::test_in_sub"]}


def test_the_crater_scans_each_dependents_own_source_at_the_candidates_jax(tmp_path, monkeypatch):
    """The crater read no dependent's source: a dependent that uses a name the candidate's jax
    removed or deprecates, where no test of it runs that line, was said safe with nothing more.
    Its own source is now read against jax's API history at the candidate's jax, as check --tests
    reads the user's project, and said per dependent (the run itself faked: no jax, no network)."""
    from jaxcompat.env import projects
    from jaxcompat.model.dependents import Dependent, DependentSource
    from jaxcompat.model.stages import Resolved
    from jaxcompat.model.usertests import Comparison

    src = tmp_path / "src"
    uses = "import jax\n\n\ndef total(t):\n    return jax.tree_map(sum, t)\n"
    project = '[project]\nname = "alpha"\nversion = "1.0"\ndependencies = ["jax"]\n'
    for path, text in {src / "pyproject.toml": project, src / "alpha" / "__init__.py": uses,
                       src / "tests" / "test_a.py": "def test_a():\n    pass\n"}.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.setattr(projects, "version_of", lambda dep, cache, as_of=None: "1.0")
    monkeypatch.setattr(projects, "describe", lambda dep, version, cache: version)
    monkeypatch.setattr(projects, "fetch", lambda dep, version, cache, where: src)
    monkeypatch.setattr(projects, "absent_files", lambda dep, version, where: [])
    monkeypatch.setattr(testtarget, "same_python", lambda c, b, target, cache: (c, b, ""))
    ran = Comparison([UserTest("tests/test_a.py::test_a", "passed", "passed", "pass")], with_baseline=True,
                     candidate_versions={"jax": "0.6.0", "jaxlib": "0.6.0"},
                     baseline_versions={"jax": "0.5.3", "jaxlib": "0.5.3"}, ran={"candidate": 1, "baseline": 1})
    monkeypatch.setattr(usertests, "compare", lambda *a, **k: ran)
    monkeypatch.setattr(crater, "resolve_cell", lambda cell, *a, **k: Resolved(cell, "python3", ""))
    plan = Plan(("jax==0.6.0",), ("jax==0.5.3",))
    res = crater.judge(Dependent("alpha", DependentSource(version="1.0")), plan, None, tmp_path / "state")
    assert res.verdict == DependentVerdict.SAFE, res.cause
    assert [(f["path"], f["line"], f["code"], f["name"]) for f in res.scan] == [
        ("alpha/__init__.py", 5, "JXC001", "jax.tree_map")]
    stored = DependentResult.from_dict(json.loads(json.dumps(res.to_dict())))
    assert stored.scan == json.loads(json.dumps(res.scan))
    text, code = write_crater(tmp_path / "out", [stored], {"candidate": list(plan.candidate),
                                                           "baseline": list(plan.baseline)}, 1.0, 1, plan)
    assert code == 0
    assert "    i its own code at jax 0.6.0 (jax-compat scan): 1 use(s) of removed names, 0 of deprecated ones" in text
    assert "      alpha/__init__.py:5: JXC001 jax.tree_map" in text
    assert "| alpha | `alpha/__init__.py:5` | JXC001 | jax.tree_map" in (tmp_path / "out" / "crater.md").read_text()
    assert str(src) not in (tmp_path / "out" / "crater.json").read_text()
