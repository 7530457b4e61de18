"""The result cache is correct: it re-uses a raw result exactly while its inputs are unchanged,
never re-runs for a rule change, and never trusts a damaged entry, a timeout or a crash.

Cells run in-process on this interpreter (no uv, no jax); installs are counted."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from jaxcompat.env import envs
from jaxcompat.knowledge.config import load
from jaxcompat.run import cell, resultcache, runner
from tests.helpers import MINIMAL, failure_toml, make_tree

REPO = Path(__file__).resolve().parent.parent
OTHER = '''
def test_other():
    pass
'''
RULE_FOR_OTHER = failure_toml("other-bug", "cases/test_other.py::test_other", '{ pytest = ">=1" }', "ValueError", "x",
                              "none", "https://github.com/jax-ml/jax/issues/1")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A two-module case tree and fakes for everything that would touch the network."""
    make_tree(tmp_path, MINIMAL, {"test_demo.py": "def test_bug():\n    pass\n\ndef test_control_ok():\n    pass\n",
                                  "test_other.py": OTHER})
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    lock = {"text": "pytest==8.0.0\n"}
    installs: list[str] = []
    runs: list[list[str]] = []
    real_run_cases = runner.run_cases

    def fake_install(c, python_exe, lock_text, env_root, compile_bytecode=True):
        installs.append(c.id)
        return envs.BuiltEnv(path=env_root / c.id, python=sys.executable, lock=lock_text)

    def counting_run_cases(python, root, args, **kw):
        runs.append(list(args))
        return real_run_cases(python, root, args, **kw)

    monkeypatch.setattr(cell.envs, "lock", lambda c, *a, **k: (lock["text"], [], 0.0))
    monkeypatch.setattr(cell.envs, "install", fake_install)
    monkeypatch.setattr(runner, "run_cases", counting_run_cases)
    monkeypatch.setattr(cell, "find_python", lambda version: sys.executable)
    monkeypatch.setattr(cell.resolution, "complete", lambda c, cache_dir: c)
    monkeypatch.setattr(cell.releases, "resolution_date", lambda pins, cache_dir: "2024-01-01")

    class Tree:
        root = tmp_path
        state = tmp_path / "state"

        def run(self, **kw):
            matrix = load(tmp_path / "matrix.toml")
            return cell.run_cell(matrix.cells[0], matrix, state_dir=self.state, reports_dir=None, **kw)

    t = Tree()
    t.lock, t.installs, t.runs = lock, installs, runs
    return t


def outcomes(res) -> dict[str, str]:
    return {r.case: r.outcome for r in res.results}


def reused(res) -> set[str]:
    return {r.case for r in res.results if r.reused_from}


def test_no_change_runs_nothing_and_says_what_it_reused(tree):
    first = tree.run()
    assert not reused(first) and tree.runs == [["cases"]] and tree.installs == ["a"]
    second = tree.run()
    assert tree.runs == [["cases"]] and tree.installs == ["a"]  # nothing installed, imported or run
    assert outcomes(second) == outcomes(first) and reused(second) == set(outcomes(first))
    assert all(r.reused_from.endswith("Z") for r in second.results)
    assert any("re-used from the result cache" in n for n in second.notes)
    assert second.versions == first.versions


def test_a_rule_edit_reclassifies_without_running(tree):
    path = tree.root / "cases" / "test_other.py"
    path.write_text("def test_other():\n    raise ValueError('x marks it')\n")
    first = tree.run()
    assert outcomes(first)["cases/test_other.py::test_other"] == "regression"
    (tree.root / "matrix.toml").write_text((tree.root / "matrix.toml").read_text() + RULE_FOR_OTHER)
    res = tree.run()
    assert tree.runs == [["cases"]]  # no second run
    assert outcomes(res)["cases/test_other.py::test_other"] == "reproduced"  # judged by the new rule
    assert reused(res) == set(outcomes(res))


@pytest.mark.integration
def test_a_result_that_fails_the_run_is_observed_again(tree):
    tree.run()
    (tree.root / "matrix.toml").write_text((tree.root / "matrix.toml").read_text() + RULE_FOR_OTHER)
    res = tree.run()  # the rule now says test_other fails, but its cached result passed: stale?
    assert tree.runs == [["cases"], ["cases/test_other.py"]]  # ... confirmed by running it again
    assert outcomes(res)["cases/test_other.py::test_other"] == "stale"
    assert "cases/test_other.py::test_other" not in reused(res)
    assert any("run again, not re-used" in n for n in res.notes)


@pytest.mark.integration
def test_an_edited_module_alone_runs_again(tree):
    tree.run()
    path = tree.root / "cases" / "test_other.py"
    path.write_text(path.read_text() + "\n# edited\n")
    res = tree.run()
    assert tree.runs[1] == ["cases/test_other.py"]
    assert reused(res) == {"cases/test_demo.py::test_bug", "cases/test_demo.py::test_control_ok"}
    assert set(outcomes(res)) == {"cases/test_demo.py::test_bug", "cases/test_demo.py::test_control_ok",
                                  "cases/test_other.py::test_other"}


@pytest.mark.integration
@pytest.mark.parametrize("change", ["lock", "conftest", "harness", "pytest-config"])
def test_what_a_result_depends_on_invalidates_it(tree, monkeypatch, change):
    tree.run()
    if change == "lock":
        tree.lock["text"] = "pytest==8.0.1\n"
    elif change == "conftest":
        (tree.root / "conftest.py").write_text((tree.root / "conftest.py").read_text() + "# changed\n")
    elif change == "harness":
        monkeypatch.setattr(resultcache, "CACHE_FORMAT", resultcache.CACHE_FORMAT + 1)
    else:
        (tree.root / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-q"\n')
    res = tree.run()
    assert tree.runs == [["cases"], ["cases"]] and not reused(res)


@pytest.mark.integration
def test_no_cache_and_repeat_run_everything(tree):
    tree.run()
    tree.run(use_cache=False)
    tree.run(repeat=2)
    assert tree.runs == [["cases"]] * 4  # one, one, then two repeats


@pytest.mark.integration
@pytest.mark.parametrize("damage", ["truncate", "edit", "wrong-module"])
def test_a_damaged_entry_is_detected_and_run_again(tree, damage):
    tree.run()
    entries = sorted((tree.state / "results").rglob("*.json"))
    victim = next(p for p in entries if p.name != "env.json"
                  and "test_other" in json.loads(p.read_text())["payload"]["module"])
    text = victim.read_text()
    if damage == "truncate":
        victim.write_text(text[: len(text) // 2])
    elif damage == "edit":  # a poisoned verdict: the checksum no longer matches
        victim.write_text(text.replace('"passed"', '"failed"'))
    else:  # a valid entry holding another module's results
        entry = json.loads(text)
        entry["payload"]["module"] = "cases/test_demo.py"
        entry["sha256"] = resultcache._sha(json.dumps(entry["payload"], sort_keys=True))
        victim.write_text(json.dumps(entry))
    res = tree.run()
    assert tree.runs[1] == ["cases/test_other.py"]
    assert outcomes(res)["cases/test_other.py::test_other"] == "pass"
    assert any("damaged" in n or "does not hold" in n for n in res.notes)


def test_a_timeout_or_crash_is_never_reused(tree):
    (tree.root / "cases" / "test_other.py").write_text("import os\n\ndef test_other():\n    os._exit(3)\n")
    first = tree.run()
    assert outcomes(first)["cases/test_other.py::test_other"] == "crash"
    res = tree.run()
    assert tree.runs[1] == ["cases/test_other.py"]  # the crash runs again; the rest is re-used
    assert outcomes(res)["cases/test_other.py::test_other"] == "crash" and not res.results[-1].reused_from


def test_a_cached_import_error_is_reused(tree, monkeypatch):
    monkeypatch.setattr(cell, "ECOSYSTEM", ("nopkgfortest",))
    matrix_text = (tree.root / "matrix.toml").read_text().replace(
        'pins = { jax = "0.4.33", equinox = "0.11.7" }',
        'pins = { jax = "0.4.33", equinox = "0.11.7", nopkgfortest = "1.0" }')
    (tree.root / "matrix.toml").write_text(matrix_text)
    tree.lock["text"] = "pytest==8.0.0\nnopkgfortest==1.0\n"
    first = tree.run()
    assert first.status == "import-error"
    second = tree.run()
    assert second.status == "import-error" and len(tree.runs) == 1 and second.message == first.message


def test_case_modules_splits_whole_modules_from_narrower_selections(tmp_path):
    make_tree(tmp_path, MINIMAL, {"test_a.py": "", "test_b.py": "", "helper.py": ""})
    modules, other = resultcache.case_modules(tmp_path, ["cases", "cases/test_a.py::test_x", "-k", "x"])
    assert modules == ["cases/test_a.py", "cases/test_b.py"] and other == ["cases/test_a.py::test_x", "-k", "x"]


def test_the_ci_key_changes_exactly_with_the_inputs(tree):
    matrix = load(tree.root / "matrix.toml")
    key = cell.input_key(matrix.cells[0], matrix, tree.state)
    assert key == cell.input_key(matrix.cells[0], matrix, tree.state)
    (tree.root / "matrix.toml").write_text((tree.root / "matrix.toml").read_text() + RULE_FOR_OTHER)
    matrix = load(tree.root / "matrix.toml")
    assert cell.input_key(matrix.cells[0], matrix, tree.state) == key  # rules are not an input
    tree.lock["text"] = "pytest==8.0.1\n"
    assert cell.input_key(matrix.cells[0], matrix, tree.state) != key
    tree.lock["text"] = "pytest==8.0.0\n"
    (tree.root / "cases" / "test_other.py").write_text(OTHER + "# edited\n")
    assert cell.input_key(matrix.cells[0], matrix, tree.state) != key


@pytest.mark.integration
def test_node_ids_are_answered_from_a_cached_module(tree):
    """A bisect step asks for its target cases by node id: a cached whole module answers them."""
    tree.run()
    res = tree.run(case_args=["cases/test_demo.py::test_bug"])
    assert tree.runs == [["cases"]]
    assert outcomes(res) == {"cases/test_demo.py::test_bug": "pass"}
    assert reused(res) == {"cases/test_demo.py::test_bug"}
    tree.run(case_args=["cases/test_demo.py::test_nope"])  # nothing cached answers it: it runs
    assert tree.runs[1] == ["cases/test_demo.py::test_nope"]
