"""A nightly suite must survive what it detects: interruption, concurrent runs, failed
installs, missing interpreters, and junk in matrix.toml."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxcompat.knowledge.config import load, parse
from jaxcompat.model.matrix import ConfigError
from jaxcompat.run.cell import run_cell
from tests.helpers import MINIMAL, make_tree

REPO = Path(__file__).resolve().parent.parent
DRIVER = REPO / "tests" / "fake_matrix.py"

SLOW_CASES = '''
import time

def test_one():
    time.sleep({sleep})

def test_two():
    time.sleep({sleep})
'''


def _fake_tree(tmp_path: Path, cells: int, sleep: float) -> Path:
    text = "[settings]\npython = \"3.11\"\ncase_timeout_s = 60\n"
    for i in range(cells):
        text += f'\n[[cell]]\nid = "c{i}"\npins = {{ jax = "0.4.33" }}\n'
    path = make_tree(tmp_path, text, {"test_slow.py": SLOW_CASES.format(sleep=sleep)})
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    return path


def _cli(tmp_path, *args):
    return [sys.executable, str(DRIVER), "matrix", "--matrix", str(tmp_path / "matrix.toml"),
            "--reports", str(tmp_path / "reports"), "--state", str(tmp_path / "state"), *args]


@pytest.mark.integration
def test_sigterm_keeps_finished_reports_and_names_unfinished_cells(tmp_path):
    _fake_tree(tmp_path, cells=4, sleep=1.0)
    # --no-cache: the fake cells share one environment, and would re-use c0's results
    proc = subprocess.Popen(_cli(tmp_path, "--jobs", "1", "--no-cache"), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    first = tmp_path / "reports" / "cells" / "c0.json"
    deadline = time.time() + 60
    while not first.exists() and time.time() < deadline:
        time.sleep(0.1)
    assert first.exists(), proc.communicate()[0] if proc.poll() is not None else "no report"
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    assert "--only-missing" in out
    c0 = json.loads(first.read_text())
    assert c0["status"] == "ok" and [r["outcome"] for r in c0["results"]] == ["pass", "pass"]
    consolidated = json.loads((tmp_path / "reports" / "matrix.json").read_text())
    assert consolidated["interrupted"] is True
    assert set(consolidated["unfinished"]) >= {"c2", "c3"}
    for path in (tmp_path / "reports" / "cells").glob("*.json"):
        json.loads(path.read_text())  # every cell report is valid JSON
    assert not list((tmp_path / "reports").rglob("*.tmp"))

    again = subprocess.run(_cli(tmp_path, "--only-missing"), capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "c0" not in again.stdout.split("re-running")[1].splitlines()[0]
    final = json.loads((tmp_path / "reports" / "matrix.json").read_text())
    assert [c["status"] for c in final["cells"]] == ["ok"] * 4 and final["summary"]["ok"]


@pytest.mark.integration
def test_two_runs_at_once_do_not_corrupt_reports(tmp_path):
    _fake_tree(tmp_path, cells=2, sleep=0.2)
    procs = [subprocess.Popen(_cli(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=180)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert any("waiting for it to finish" in o for o in outs)
    data = json.loads((tmp_path / "reports" / "matrix.json").read_text())
    assert [c["id"] for c in data["cells"]] == ["c0", "c1"]


@pytest.mark.integration
def test_repeat_flags_a_flaky_case(tmp_path):
    flaky = '''
import os, pathlib

def test_flips():
    marker = pathlib.Path(os.environ["FLIP_FILE"])
    first = not marker.exists()
    marker.write_text("x")
    assert first, "second run differs"

def test_steady():
    pass
'''
    path = make_tree(tmp_path, '[[cell]]\nid = "c0"\npins = { jax = "0.4.33" }\n', {"test_flaky.py": flaky})
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    env = {**os.environ, "FLIP_FILE": str(tmp_path / "flip")}
    out = subprocess.run(_cli(tmp_path, "--repeat", "3"), capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 1, out.stdout + out.stderr
    cell = json.loads((tmp_path / "reports" / "cells" / "c0.json").read_text())
    outcomes = {r["case"].split("::")[1]: r["outcome"] for r in cell["results"]}
    assert outcomes == {"test_flips": "flaky", "test_steady": "pass"}
    assert path.exists()


@pytest.mark.integration
def test_unreachable_index_is_an_install_error_with_uv_message(tmp_path, monkeypatch):
    matrix = load(make_tree(tmp_path, '[[cell]]\nid = "c"\npython = "%d.%d"\ndate = "2024-09-19"\n'
                                      'pins = { jax = "0.4.33", jaxlib = "0.4.33" }\n' % sys.version_info[:2]))
    monkeypatch.setenv("UV_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("UV_NO_CACHE", "1")
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    monkeypatch.setattr("jaxcompat.env.envs.time.sleep", lambda s: None)
    result = run_cell(matrix.cells[0], matrix, state_dir=tmp_path / "state", reports_dir=tmp_path / "reports")
    assert result.status == "install-error", result.message
    assert "127.0.0.1:9" in result.message
    assert "gave up after 3 attempts" in result.message
    assert result.failing  # an unexplained cell error fails the run
    assert json.loads((tmp_path / "reports" / "cells" / "c.json").read_text())["status"] == "install-error"


def test_missing_interpreter_is_reported_with_how_to_install_it(tmp_path):
    matrix = load(make_tree(tmp_path, '[[cell]]\nid = "c"\npython = "3.99"\npins = { jax = "0.4.33" }\n'))
    result = run_cell(matrix.cells[0], matrix, state_dir=tmp_path / "state", reports_dir=None)
    assert result.status == "python-missing"
    assert "Python 3.99 not found" in result.message and "pyenv install 3.99" in result.message
    assert not result.failing


# -- junk in, ConfigError out ------------------------------------------------------------------

toml_scalars = st.one_of(st.text(max_size=12), st.integers(), st.booleans(), st.floats(allow_nan=False))
toml_values = st.recursive(toml_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)), max_leaves=12)
keys = st.sampled_from(["settings", "cell", "grid", "failure", "id", "pins", "axes", "affects",
                        "cases", "match", "python", "backend", "error", "upstream", "fix", "jax"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(keys, toml_values, max_size=4))
def test_random_structures_only_raise_config_error(tmp_path, data):
    try:
        parse(data, tmp_path / "matrix.toml")
    except ConfigError:
        pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=200))
def test_random_text_only_raises_config_error(tmp_path, text):
    path = tmp_path / "junk.toml"
    path.write_text(text, encoding="utf-8")
    try:
        load(path)
    except ConfigError:
        pass


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=30), st.sampled_from(["pins", "affects", "constraints"]))
def test_random_values_in_a_valid_file(tmp_path, junk, where):
    make_tree(tmp_path)
    text = MINIMAL
    if where == "pins":
        text = text.replace('equinox = "0.11.7" }', f"equinox = {json.dumps(junk)} }}", 1)
    elif where == "affects":
        text = text.replace('">=0.4.32"', json.dumps(junk))
    else:
        text = text.replace("pins = {", f"constraints = [{json.dumps(junk)}]\npins = {{", 1)
    path = tmp_path / "matrix.toml"
    path.write_text(textwrap.dedent(text))
    try:
        load(path)
    except ConfigError:
        pass


def test_a_version_missing_from_the_index_is_unresolvable(tmp_path, monkeypatch):
    from jaxcompat.env import releases

    matrix = load(
        make_tree(tmp_path, '[[cell]]\nid = "c"\npins = { jax = "0.4.33", jaxlib = "0.4.33", equinox = "9.9.9" }\n')
    )
    monkeypatch.setattr(releases, "fetch_info", lambda dist, attempts=3: {"releases": {
        "0.4.33": [{"upload_time_iso_8601": "2024-09-16T00:00:00Z"}],
        "0.11.7": [{"upload_time_iso_8601": "2024-09-18T00:00:00Z"}]}})
    result = run_cell(matrix.cells[0], matrix, state_dir=tmp_path / "state", reports_dir=None)
    assert result.status == "unresolvable"
    assert "equinox 9.9.9 is not a release on the package index" in result.message


def test_resolver_conflict_is_unresolvable_with_uv_message(tmp_path, monkeypatch):
    from jaxcompat.env import envs

    uv_says = ("  x No solution found when resolving dependencies:\n"
               "  `-> Because jax==0.4.33 depends on Python>=3.10 and you require jax==0.4.33, we can conclude "
               "that your requirements are unsatisfiable.")
    calls = []

    def fake_run(argv, **kw):
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 1, "", uv_says)

    monkeypatch.setattr(envs, "run_tool", fake_run)
    matrix = load(
        make_tree(tmp_path, '[[cell]]\nid = "c"\ndate = "2024-09-19"\npins = { jax = "0.4.33", jaxlib = "0.4.33" }\n')
    )
    result = run_cell(matrix.cells[0], matrix, state_dir=tmp_path / "state", reports_dir=None)
    assert result.status == "unresolvable" and "No solution found" in result.message
    assert result.outcome == "cell-error"  # no resolve-stage rule explains it
    argv = calls[0]
    assert "--exclude-newer" in argv and argv[argv.index("--exclude-newer") + 1] == "2024-09-19"
    assert "jax=2100-01-01" in argv  # the exact pin is exempt from the cutoff
    assert all(isinstance(a, str) for a in argv)  # an argv list: nothing goes through a shell
