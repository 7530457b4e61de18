"""Confirmed regressions, learned flakiness: what broke re-run N times on both sides before blame,
--aa learning the tests that flip by themselves (a speed test under load) into a flaky file later
runs read (a test known to flip is flaky, never broken), --rerun-failures REPORT running only what
broke, and a suite whose baseline mostly fails flagged unhealthy with its commonest error. Runs of
the tests are scripted (``observe`` replaced); the command line's refusals run the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jaxcompat.knowledge import flaky
from jaxcompat.knowledge.config import load
from jaxcompat.model.crater import Plan
from jaxcompat.model.matrix import Cell
from jaxcompat.model.outcomes import RawResult
from jaxcompat.model.stages import Resolved
from jaxcompat.model.target import Target
from jaxcompat.model.usertests import Comparison, Confirm, Observed, UserTest
from jaxcompat.model.vocab import FlakyOrigin, SuiteHealth
from jaxcompat.operations import confirm, crater, usertests
from jaxcompat.run import userrun
from tests.helpers import make_tree

REPO = Path(__file__).resolve().parent.parent
DRIVER = REPO / "tests" / "fake_matrix.py"


def _obs(**statuses: str) -> Observed:
    return Observed(results={f"t.py::{n}": RawResult(case=f"t.py::{n}", status=st,
                                                               message="" if st == "passed" else "AssertionError: x")
                                       for n, st in statuses.items()}, versions={"pytest": "8.0.0"})


class Script:
    """observe() as scripted: each side's runs in turn (candidate "c", baseline "b")."""

    def __init__(self, monkeypatch, **runs: list[Observed]):
        self.runs = {k: list(v) for k, v in runs.items()}
        self.calls: list[tuple[str, tuple]] = []
        monkeypatch.setattr(userrun, "observe", self.observe)
        monkeypatch.setattr(userrun, "build", lambda *a, **k: None)

    def observe(self, cell, matrix, state_dir, target, nodeids=None):
        side = cell.id
        self.calls.append((side, tuple(nodeids or ())))
        return self.runs[side].pop(0)


def _compare(tmp_path, confirm_: Confirm) -> Comparison:
    matrix = load(make_tree(tmp_path))
    target = Target(tmp_path, project=False)
    base = Cell("b", "3.12", "cpu", {})
    return usertests.compare(Cell("c", "3.12", "cpu", {}), base, target, matrix, tmp_path,
                             confirm=confirm_, decided=Resolved(base, "python3", ""))


def test_a_break_is_rerun_n_times_on_both_sides_before_blame(tmp_path, monkeypatch):
    # fails in the candidate twice more, then passes on the third re-run: flaky with 3, broken with 1
    runs = dict(c=[_obs(a="failed", ok="passed"), _obs(a="failed"), _obs(a="failed"), _obs(a="passed")],
                b=[_obs(a="passed", ok="passed"), _obs(a="passed"), _obs(a="passed"), _obs(a="passed")])
    script = Script(monkeypatch, **{k: list(v) for k, v in runs.items()})
    by = {t.test: t for t in _compare(tmp_path, Confirm(reruns=3)).tests}
    assert by["t.py::a"].cls == "flaky" and by["t.py::a"].flaky == FlakyOrigin.RERUN
    assert "candidate: failed, then passed" in by["t.py::a"].note and by["t.py::ok"].cls == "pass"
    assert script.calls.count(("c", ("t.py::a",))) == 3 and script.calls.count(("b", ("t.py::a",))) == 3
    script = Script(monkeypatch, **{k: list(v) for k, v in runs.items()})
    assert {t.test: t.cls for t in _compare(tmp_path, Confirm(reruns=1)).tests}["t.py::a"] == "broken"
    script = Script(monkeypatch, **{k: list(v) for k, v in runs.items()})
    assert {t.test: t.cls for t in _compare(tmp_path, Confirm(reruns=0)).tests}["t.py::a"] == "broken"
    assert [c for c in script.calls if c[1]] == []  # --reruns 0: nothing re-run


def test_aa_learns_a_speed_test_that_flips_by_itself_and_never_blames_it(tmp_path, monkeypatch):
    Script(monkeypatch, c=[_obs(speed="failed", ok="passed")],
           b=[_obs(speed="passed", ok="passed"), _obs(speed="failed", ok="passed")])
    cmp = _compare(tmp_path, Confirm(aa=True))
    speed = next(t for t in cmp.tests if t.test == "t.py::speed")
    assert cmp.learned == {"t.py::speed": "passed, then failed"}
    assert speed.cls == "flaky" and speed.flaky == FlakyOrigin.AA
    assert not cmp.failed
    store = flaky.load(None, tmp_path, learning=True)
    store.learn("proj", cmp.learned, day="2025-01-31")
    store.save()
    # a later run, without --aa: the learned test fails in the candidate only, and is not blamed
    script = Script(monkeypatch, c=[_obs(speed="failed", ok="failed"), _obs(ok="failed")],
                    b=[_obs(speed="passed", ok="passed"), _obs(ok="passed")])
    known = flaky.load(None, tmp_path).known("proj")
    assert known == (("t.py::speed", "passed, then failed, learned 2025-01-31"),)
    by = {t.test: t for t in _compare(tmp_path, Confirm(known=known)).tests}
    assert by["t.py::speed"].cls == "flaky" and by["t.py::speed"].flaky == FlakyOrigin.KNOWN
    assert by["t.py::ok"].cls == "broken"  # what is not known to flip is still blamed
    assert ("c", ("t.py::ok",)) in script.calls and ("c", ("t.py::speed",)) not in script.calls


def test_a_known_flaky_test_that_passes_stays_a_pass(tmp_path, monkeypatch):
    Script(monkeypatch, c=[_obs(speed="passed")], b=[_obs(speed="passed")])
    [t] = _compare(tmp_path, Confirm(known=(("t.py::speed", "seen"),))).tests
    assert t.cls == "pass" and t.flaky is None


def test_the_flaky_file_is_checked_and_named(tmp_path):
    with pytest.raises(flaky.FlakyFileError, match="--flaky-file .*nope.json: no such file .*--aa"):
        flaky.load(str(tmp_path / "nope.json"), tmp_path)
    assert flaky.load(str(tmp_path / "nope.json"), tmp_path, learning=True).projects == {}
    assert flaky.load(None, tmp_path).projects == {}  # nothing learned yet
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(flaky.FlakyFileError, match="bad.json: not JSON"):
        flaky.load(str(bad), tmp_path)
    bad.write_text('{"projects": []}')
    with pytest.raises(flaky.FlakyFileError, match="not a flaky-tests file"):
        flaky.load(str(bad), tmp_path)


def _user(test: str, cls: str, baseline: str = "failed", message: str = "AssertionError: x") -> UserTest:
    cand = "passed" if cls in ("pass", "fixed") else "failed"
    return UserTest(test, cand, baseline, cls, message=message)


def test_a_suite_whose_baseline_mostly_fails_is_unhealthy_with_its_commonest_error():
    both = [_user(f"t::{i}", "fails-both", message=f"AssertionError: tolerance 1e-{i} exceeded") for i in range(4)]
    both.append(_user("t::z", "fails-both", message="ValueError: other"))
    rest = [_user("t::p", "pass", "passed"), _user("t::q", "broken", "passed")]
    h = confirm.health(both + rest)
    assert h.status == SuiteHealth.UNHEALTHY and (h.ran, h.failing, h.rest) == (7, 5, 2)
    assert h.signature_count == 4 and h.signature.startswith("AssertionError: tolerance")
    assert confirm.health(both[:3] + rest + [_user("t::r", "pass", "passed")]).status == SuiteHealth.HEALTHY
    from jaxcompat.report.warnings import health_line

    assert health_line(h).startswith("unhealthy: 5 of 7 tests fail on both sides (4 at AssertionError")
    assert health_line(h).endswith("judged on the other 2")


def test_rerun_failures_reads_what_broke_in_a_crater_or_check_report(tmp_path):
    c = tmp_path / "crater.json"
    c.write_text(json.dumps({"kind": "crater", "dependents": [
        {"name": "alpha", "tests": [{"test": "t::a", "class": "broken"}, {"test": "t::b", "class": "pass"},
                                    {"test": "t::c", "class": "flaky"}]},
        {"name": "beta", "tests": [{"test": "t::d", "class": "fails-both"}]}]}))
    assert confirm.failures_of(str(c)) == {"alpha": ["t::a"]}
    k = tmp_path / "check.json"
    k.write_text(json.dumps({"user_tests_target": "proj", "user_tests": [{"test": "t::x", "class": "fails"}]}))
    assert confirm.failures_of(str(k)) == {"proj": ["t::x"]}
    # a test whose id changed between the sides is re-run by its function: every id of it, on both sides
    k.write_text(json.dumps({"user_tests_target": "proj", "user_tests": [
        {"test": "t::x[TFRT_CPU_1]", "was": "t::x[cpu:1]", "class": "broken"},
        {"test": "t::y[1]", "class": "broken"}]}))
    assert confirm.failures_of(str(k)) == {"proj": ["t::x", "t::y[1]"]}
    k.write_text(json.dumps({"user_tests_target": "proj", "user_tests": [{"test": "t::x", "class": "pass"}]}))
    with pytest.raises(confirm.ReportError, match="no test broke in it"):
        confirm.failures_of(str(k))
    k.write_text(json.dumps({"cells": []}))
    with pytest.raises(confirm.ReportError, match="neither a crater report"):
        confirm.failures_of(str(k))
    with pytest.raises(confirm.ReportError, match="cannot read it"):
        confirm.failures_of(str(tmp_path / "missing.json"))


def test_the_crater_result_cache_holds_the_reruns_and_what_is_known_and_aa_always_runs(tmp_path):
    from jaxcompat.knowledge.dependents import load as load_dependents

    (tmp_path / "d.toml").write_text('[[dependent]]\nname = "alpha"\nversion = "latest"\ndepends_on = ["jax"]\n')
    dep = load_dependents(str(tmp_path / "d.toml")).dependents[0]
    matrix = load(make_tree(tmp_path))
    plan = Plan(("jax==0.4.26",), ("jax==0.4.25",))
    key = crater.cache_key(dep, plan, matrix, "1.0", tmp_path)
    assert key and key != crater.cache_key(dep, Plan(plan.candidate, plan.baseline, reruns=3), matrix, "1.0",
                                           tmp_path)
    assert crater.cache_key(dep, Plan(plan.candidate, plan.baseline, aa=True), matrix, "1.0", tmp_path) is None
    store = flaky.load(None, tmp_path)
    store.learn("alpha", {"t::speed": "passed, then failed"})
    store.save()
    assert crater.cache_key(dep, plan, matrix, "1.0", tmp_path) != key


def _check(tmp_path, *args: str) -> subprocess.CompletedProcess:
    make_tree(tmp_path)
    (tmp_path / "user").mkdir(exist_ok=True)
    (tmp_path / "user" / "test_u.py").write_text("def test_u():\n    pass\n")
    return subprocess.run([sys.executable, str(DRIVER), "check", "--matrix", str(tmp_path / "matrix.toml"),
                           "--reports", str(tmp_path / "reports"), "--state", str(tmp_path / "state"), *args,
                           "jax==0.4.33"], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, said", [
    (("--reruns", "3"), "give --tests PATH too"),
    (("--reruns", "-1", "--tests", "{user}"), "--reruns: '-1': write a whole number of at least 0"),
    (("--aa", "--tests", "{user}"), "--aa runs the baseline twice: give --baseline REQ too"),
    (("--flaky-file", "{tmp}/nope.json", "--tests", "{user}"), "nope.json: no such file"),
    (("--rerun-failures", "{tmp}/none.json", "--tests", "{user}"), "none.json: cannot read it"),
])
def test_check_refuses_bad_confirmation_options_before_anything_runs(tmp_path, args, said):
    args = tuple(a.format(user=tmp_path / "user", tmp=tmp_path) for a in args)
    proc = _check(tmp_path, *args)
    assert proc.returncode == 2 and said in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "state" / "envs").exists()  # nothing was built


SPEED = '''
    import os
    import warnings

    def _candidate():
        return "{candidate}" in os.environ["JAXCOMPAT_RESULTS"]

    def test_warns():
        if _candidate():
            warnings.warn("jax.tree_map is deprecated: use jax.tree.map (jax v0.4.25 or newer)", DeprecationWarning)

    def test_speed():
        # a wall-clock assertion under load: every second run of it is "too slow"
        path = os.path.join(os.environ["FLAKY_DIR"], "{name}-speed")
        n = int(open(path).read()) + 1 if os.path.exists(path) else 1
        open(path, "w").write(str(n))
        assert n % 2 == 1, "took 2.3 s, expected < 1 s"

    def test_grad():
        if _candidate():
            raise ValueError("the candidate broke me")
'''


@pytest.mark.integration
def test_crater_aa_learns_flippers_new_warnings_lead_and_rerun_failures_runs_only_what_broke(tmp_path, monkeypatch):
    from jaxcompat.env.candidate import candidate_cell
    from tests.test_crater import DEPS, _crater, _tree

    cand = candidate_cell(["jax==0.4.33"], python="auto", companions=False).id
    tmp = _tree(tmp_path, DEPS, alpha=SPEED.format(candidate=cand, name="alpha"),
                beta=SPEED.format(candidate=cand, name="beta").replace("raise ValueError", "pass  #"),
                gamma="def test_fine():\n    pass\n")
    (tmp / "flaky").mkdir()
    monkeypatch.setenv("FLAKY_DIR", str(tmp / "flaky"))  # the fake crater's environment is this one's
    proc = _crater(tmp, "--aa", "--baseline", "jax==0.4.31", "jax==0.4.33")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # alpha's test_grad is broken
    data = json.loads((tmp / "reports" / "crater" / "crater.json").read_text())
    alpha = {t["test"].split("::")[1]: t for d in data["dependents"] if d["name"] == "alpha" for t in d["tests"]}
    assert alpha["test_speed"]["class"] == "flaky" and alpha["test_speed"]["flaky"] == "flipped-in-aa"
    assert alpha["test_grad"]["class"] == "broken"
    [warned] = data["new_warnings"]
    assert warned["removed_in"] == "0.6.0" and warned["projects"] == ["alpha", "beta"]
    assert "jax.tree_map: deprecated in 0.4.26, removed in 0.6.0 — 2 tests of 2 dependents" in out
    learned = json.loads((tmp / "state" / "flaky.json").read_text())["projects"]
    assert set(learned) == {"alpha", "beta"} and "tests/test_mod.py::test_speed" in learned["alpha"]
    proc = _crater(tmp, "--rerun-failures", str(tmp / "reports" / "crater" / "crater.json"),
                   "--baseline", "jax==0.4.31", "jax==0.4.33", reports="again")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    again = json.loads((tmp / "again" / "crater" / "crater.json").read_text())
    [only] = again["dependents"]
    assert only["name"] == "alpha" and only["ran"] == {"candidate": 1, "baseline": 1}
