"""The crater's (and check's) input and setup, before and around a run: a wheel candidate where a
requirement string was assumed, the rules a cached result was judged with, a flaky file that
cannot be written, a day that is no day, git's cause of a failure, and a tool this machine lacks
(the user's setup: exit 2 with the fix, never "a bug of jax-compat"). No network, no jax."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxcompat._util import uvbin
from jaxcompat.commands import main, options
from jaxcompat.env import gitsource, releases
from jaxcompat.knowledge import flaky
from jaxcompat.knowledge.dependents import load as load_dependents
from jaxcompat.model.crater import Plan
from jaxcompat.model.usertests import Comparison
from jaxcompat.operations import crater
from tests.helpers import MINIMAL, failure_toml, make_tree
from tests.test_crater import DEPS, RULE, _tree

REPO = Path(__file__).resolve().parent.parent
DRIVER = REPO / "tests" / "fake_crater.py"
WHEEL = "equinox-0.13.2-py3-none-any.whl"
FINE = "def test_fine():\n    pass\n"


def _released(cache: Path, **dists: dict[str, str]) -> None:
    """Release dates in the index cache (as ``releases.release_info`` keeps them): no index asked."""
    cache.mkdir(parents=True, exist_ok=True)
    for dist, dates in dists.items():
        (cache / f"releases-{dist}.json").write_text(json.dumps({v: {"date": d, "yanked": False}
                                                                 for v, d in dates.items()}))


@pytest.fixture
def offline(monkeypatch):
    def no_index(dist, attempts=3):
        raise releases.IndexError_(f"{dist} is not on the package index (404)")
    monkeypatch.setattr(releases, "fetch_info", no_index)


def _dep(tmp_path: Path):
    (tmp_path / "d.toml").write_text('[[dependent]]\nname = "alpha"\nversion = "latest"\ndepends_on = ["equinox"]\n')
    return load_dependents(str(tmp_path / "d.toml")).dependents[0]


# -------------------------------------------------------------------- 5: a wheel candidate


def test_a_wheel_candidate_is_named_wherever_a_requirement_was_assumed(tmp_path, monkeypatch, offline):
    """Regression: `crater ./dist/equinox-….whl --baseline equinox==0.13.1` (the documented wheel
    candidate) died in cache_key ("a bug of jax-compat… InvalidRequirement": Requirement() of a
    path), and past_day the same under --as-of; moved() silently dropped the package it moves."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / WHEEL).write_bytes(b"")
    plan = Plan((f"./dist/{WHEEL}",), ("equinox==0.13.1",), as_of="2025-10-01")
    matrix = options.load_matrix(argparse.Namespace(matrix=str(make_tree(tmp_path)), rules=[], without_rule=[]))
    assert crater.cache_key(_dep(tmp_path), plan, matrix, "1.0", tmp_path) is None  # a file: never re-used
    _released(tmp_path, numpy={"2.1.1": "2025-10-03"})
    cmp = Comparison([], with_baseline=True, candidate_versions={"equinox": "0.13.2", "numpy": "2.1.1"},
                     baseline_versions={"equinox": "0.13.1", "numpy": "2.1.1"})
    past = crater.past_day(cmp, plan, "alpha", tmp_path)
    assert past == {side: ["numpy 2.1.1 (2025-10-03)"] for side in ("candidate", "baseline")}  # not the wheel
    assert crater.moved(plan, []) == {"equinox"}
    monkeypatch.chdir(REPO)  # a merge elsewhere (--report-only): the wheel is gone, its name is not
    assert crater.moved(plan, []) == {"equinox"}


@pytest.mark.integration
def test_a_wheel_candidate_runs_the_crater_to_its_reports(tmp_path):
    """The same through the CLI (fake dependents, no index): the run reaches its reports, replayed
    as of a day."""
    tmp = _tree(tmp_path, DEPS, alpha=FINE)
    (tmp / "dist").mkdir()
    (tmp / "dist" / WHEEL).write_bytes(b"")
    _released(tmp / "state" / "cache", equinox={"0.13.1": "2025-09-01"})
    proc = subprocess.run([sys.executable, str(DRIVER), "crater", "--matrix", str(tmp / "matrix.toml"),
                           "--reports", str(tmp / "reports"), "--state", str(tmp / "state"),
                           "--dependents", str(tmp / "dependents.toml"), "--dependent", "alpha",
                           f"./dist/{WHEEL}", "--baseline", "equinox==0.13.1", "--as-of", "2025-10-01"],
                          capture_output=True, text=True, timeout=300, cwd=tmp,
                          env={**os.environ, "FAKE_SOURCES": str(tmp / "src"),
                               "JAXCOMPAT_PYPI_JSON": "http://127.0.0.1:9"})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "a bug of jax-compat" not in out, out
    data = json.loads((tmp / "reports" / "crater" / "crater.json").read_text())
    assert data["candidate"] == [f"./dist/{WHEEL}"]
    assert [(d["name"], d["verdict"]) for d in data["dependents"]] == [("alpha", "safe")]


# -------------------------------------------------------------------- 8: the rules in the cache key


def test_the_result_cache_key_holds_the_rules_as_loaded(tmp_path):
    """Regression: the key hashed the matrix file only: 41 rules (--rules FILE) and 40 (or
    --without-rule ID) gave the same key, and a re-used result kept explanations drawn with other
    rules. Now the rules as loaded are in it, so an edit of a rules file changes it too."""
    path = make_tree(tmp_path, RULE)
    extra = tmp_path / "extra.toml"
    extra.write_text(failure_toml("extra-bug", "cases/test_demo.py::test_bug", '{ jax = ">=0.4.30" }'))
    dep, plan = _dep(tmp_path), Plan(("jax==0.4.33",), ("jax==0.4.31",))

    def key(rules=(), without=()):
        ns = argparse.Namespace(matrix=str(path), rules=list(rules), without_rule=list(without))
        return crater.cache_key(dep, plan, options.load_matrix(ns), "1.0", tmp_path)

    keys = [key(), key([extra]), key(without=["closure-bug"]), key([extra], ["extra-bug"])]
    assert None not in keys and len(set(keys[:3])) == 3
    assert keys[3] == keys[0]  # the same rules, however they came: the same key
    extra.write_text(failure_toml("extra-bug", "cases/test_demo.py::test_bug", '{ jax = ">=0.4.31" }'))
    assert key([extra]) not in keys  # the rules file edited


def test_the_result_cache_key_holds_the_environment_that_configures_a_run_and_the_full_python(
        tmp_path, monkeypatch):
    """Regression (red team 6, F5: a run with JAX_ENABLE_X64=1 re-used the judged result of a run
    without it, "safe" where its tests break; F2: the baseline side's key ignored EQX_ON_ERROR and
    the index variables, and keyed the Python by its minor only). One list (_util/runenv) in both keys."""
    from jaxcompat.env import pythons
    from jaxcompat.run import resultcache

    path = make_tree(tmp_path, RULE)
    dep, plan = _dep(tmp_path), Plan(("jax==0.4.33",), ("jax==0.4.31",), python="3.11")
    matrix = options.load_matrix(argparse.Namespace(matrix=str(path), rules=[], without_rule=[]))
    for name in [k for k in os.environ if resultcache.inherited({k: "x"})]:
        monkeypatch.delenv(name)
    monkeypatch.setattr(pythons, "full_version", lambda exe: "3.11.9 (main)")
    monkeypatch.setattr(pythons, "find_python", lambda version: "/py")
    base = crater.cache_key(dep, plan, matrix, "1.0", tmp_path)
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "t.py::x (call)")  # never passed on to a run
    monkeypatch.setenv("HOME", "/elsewhere")
    assert base and crater.cache_key(dep, plan, matrix, "1.0", tmp_path) == base
    seen = {base}
    for name, value in [("JAX_ENABLE_X64", "1"), ("EQX_ON_ERROR", "breakpoint"), ("XLA_FLAGS", "--x"),
                        ("HYPOTHESIS_PROFILE", "ci"), ("OMP_NUM_THREADS", "1"), ("PYTHONHASHSEED", "0"),
                        ("UV_INDEX_URL", "https://u:tok123456@idx/simple"), ("PIP_EXTRA_INDEX_URL", "https://x")]:
        monkeypatch.setenv(name, value)
        key = crater.cache_key(dep, plan, matrix, "1.0", tmp_path)
        assert key not in seen, name
        seen.add(key)
    side = resultcache.inherited(dict(os.environ))
    assert side["EQX_ON_ERROR"] == "breakpoint" and "PYTEST_CURRENT_TEST" not in side and "HOME" not in side
    assert side["UV_INDEX_URL"].startswith("sha256:") and "tok123456" not in json.dumps(side)  # hashed, never in clear
    monkeypatch.setattr(pythons, "full_version", lambda exe: "3.11.10 (main)")  # a patch upgrade in place
    assert crater.cache_key(dep, plan, matrix, "1.0", tmp_path) not in seen
    cell = resultcache.env_key("a==1\n", "/py", "cpu", None, "h")  # a matrix cell's cases, keyed alike
    monkeypatch.setenv("EQX_ON_ERROR", "nan")
    assert resultcache.env_key("a==1\n", "/py", "cpu", None, "h") != cell


# -------------------------------------------------------------------- 9: the flaky file


def _args(tmp: Path) -> list[str]:
    return ["crater", "--matrix", str(tmp / "matrix.toml"), "--reports", str(tmp / "reports"),
            "--state", str(tmp / "state"), "--dependents", str(tmp / "dependents.toml")]


@pytest.mark.parametrize("where, said", [
    ("folder", "a folder, not a file"),
    ("file/flaky.json", "is a file, not a folder"),
])
def test_a_flaky_file_that_cannot_be_written_is_refused_before_anything_runs(tmp_path, capsys, offline, where,
                                                                             said):
    """Regression: `crater --aa --flaky-file DIR` was accepted, ran every dependent, then crashed
    in learn -> save ("a bug of jax-compat"), before any report was written."""
    tmp = _tree(tmp_path, DEPS)
    (tmp / "folder").mkdir()
    (tmp / "file").write_text("")
    _released(tmp / "state" / "cache", jax={"0.4.31": "2024-07-30", "0.4.33": "2024-09-16"})
    rc = main(_args(tmp) + ["--aa", "--flaky-file", str(tmp / where), "jax==0.4.33", "--baseline", "jax==0.4.31"])
    err = capsys.readouterr().err
    assert rc == 2 and f"--flaky-file {tmp / where}: " in err and said in err, err
    assert "a bug of jax-compat" not in err
    assert not (tmp / "reports").exists() and not (tmp / "state" / "crater").exists()  # nothing run


def test_a_flaky_file_in_a_folder_one_cannot_write_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != tmp_path)
    with pytest.raises(flaky.FlakyFileError, match=r"--flaky-file .*: cannot write in .* a folder you can write"):
        flaky.load(str(tmp_path / "flaky.json"), tmp_path / "state", learning=True)


LEARN_FAILS = """
import sys
sys.path.insert(0, {repo!r})
import tests.fake_crater  # noqa: F401 - the fake dependents
from jaxcompat.knowledge import flaky


def cannot(path, text):
    raise PermissionError(13, "Permission denied", str(path))


flaky.write_text = cannot  # the file became unwritable while the crater ran
from jaxcompat.commands import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.integration
def test_learning_that_cannot_be_kept_loses_none_of_the_reports(tmp_path):
    """Whatever happens to the flaky file during the run, the reports are written first and the
    verdict stands; what could not be kept is a named note."""
    tmp = _tree(tmp_path, DEPS, gamma=FINE)
    driver = tmp / "driver.py"
    driver.write_text(LEARN_FAILS.format(repo=str(REPO)))
    _released(tmp / "state" / "cache", jax={"0.4.31": "2024-07-30", "0.4.33": "2024-09-16"})
    proc = subprocess.run([sys.executable, str(driver), *_args(tmp), "--dependent", "gamma", "--aa",
                           "jax==0.4.33", "--baseline", "jax==0.4.31"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "FAKE_SOURCES": str(tmp / "src"),
                               "JAXCOMPAT_PYPI_JSON": "http://127.0.0.1:9"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "note: --aa: what flipped by itself was not kept" in proc.stderr and "Permission denied" in proc.stderr
    assert "a bug of jax-compat" not in proc.stderr
    data = json.loads((tmp / "reports" / "crater" / "crater.json").read_text())
    assert [(d["name"], d["verdict"]) for d in data["dependents"]] == [("gamma", "safe")]


# -------------------------------------------------------------------- 12: a day that is no day


@pytest.mark.parametrize("day", ["2024-02-30", "2024-13-45", "2023-02-29"])
def test_a_day_that_is_not_in_the_calendar_is_refused(tmp_path, day):
    """Regression: `--as-of 2024-02-30` and `2024-13-45` passed the pattern; git's date parser took
    an arbitrary commit for them (2024-13-45: today's HEAD), then uv refused the date in every
    environment, after the downloads."""
    proc = subprocess.run([sys.executable, "-m", "jaxcompat", "crater", "--reports", str(tmp_path / "reports"),
                           "--state", str(tmp_path / "state"), "--as-of", day, "jax==0.4.33"],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 2 and f"--as-of: {day!r}: not a day of the calendar" in proc.stderr, proc.stderr
    assert not (tmp_path / "state").exists() and not (tmp_path / "reports").exists()


def test_a_dependent_the_file_lacks_is_refused_with_the_nearest_name(tmp_path):
    """--dependent names one dependents.toml has: a typo is refused before anything runs, naming the
    file, the nearest name and every name it has (exit 2)."""
    (tmp_path / "dependents.toml").write_text(textwrap.dedent(DEPS))
    proc = subprocess.run([sys.executable, "-m", "jaxcompat", "crater", "--reports", str(tmp_path / "reports"),
                           "--state", str(tmp_path / "state"), "--dependents", str(tmp_path / "dependents.toml"),
                           "--dependent", "alpah", "jax==0.4.33"],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 2, proc.stderr
    assert "--dependent alpah: not in dependents.toml; did you mean 'alpha'? (it has: alpha, beta" in proc.stderr
    assert not (tmp_path / "state").exists()


# -------------------------------------------------------------------- 14: git's cause, a missing tool


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_git_failure_is_said_by_its_fatal_line_not_its_advice(tmp_path, monkeypatch):
    """Regression: the cause was git's last line, "and the repository exists." (the advice after
    "fatal: Could not read from remote repository."). Real git, an ssh that never connects."""
    monkeypatch.setenv("GIT_SSH_COMMAND", "false")
    with pytest.raises(gitsource.GitError) as e:
        gitsource.resolve("ssh://git.invalid/owner/repo.git", "", tmp_path)
    assert str(e.value).endswith("clone: fatal: Could not read from remote repository."), str(e.value)


@pytest.fixture
def without(monkeypatch, tmp_path):
    """A PATH with only the tools named (links to the real ones), no `uv` package to import."""
    def only(*tools: str) -> None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir(exist_ok=True)
        for tool in tools:
            (bin_dir / tool).symlink_to(shutil.which(tool))
        monkeypatch.setenv("PATH", str(bin_dir))
        monkeypatch.setitem(sys.modules, "uv", None)
        uvbin.uv_bin.cache_clear()
    yield only
    uvbin.uv_bin.cache_clear()


def test_check_env_without_uv_is_the_users_setup_not_our_bug(tmp_path, capsys, without):
    """Regression: `check --env ENV` with no uv said "a bug of jax-compat, not a verdict on your
    packages: RuntimeError: uv not found…": a missing tool is exit 2 with the fix."""
    from tests.test_existing import CASES, make_venv

    tree = tmp_path / "tree"
    tree.mkdir()
    make_tree(tree, MINIMAL, CASES)
    venv = make_venv(tmp_path / "venv", pytest_too=False)  # pytest is to be provided: by uv
    without()
    rc = main(["check", "--matrix", str(tree / "matrix.toml"), "--reports", str(tmp_path / "reports"),
               "--state", str(tmp_path / "state"), "--env", str(venv)])
    err = capsys.readouterr().err
    assert rc == 2 and "error: uv not found: install it with `python3 -m pip install uv`" in err, err
    assert "a bug of jax-compat" not in err


@pytest.mark.parametrize("tools, deps, said", [
    ((), DEPS, "error: uv not found: install it with"),
    (("uv",), DEPS + '\n[[dependent]]\nname = "delta"\ngit = "https://github.com/o/delta"\ndepends_on = ["jax"]\n',
     "error: git not found: install git"),
])
def test_the_crater_without_a_tool_it_needs_says_so_before_anything_runs(tmp_path, capsys, without, offline, tools,
                                                                          deps, said):
    tmp = _tree(tmp_path, textwrap.dedent(deps))
    _released(tmp / "state" / "cache", jax={"0.4.31": "2024-07-30", "0.4.33": "2024-09-16"})
    without(*tools)
    rc = main(_args(tmp) + ["jax==0.4.33", "--baseline", "jax==0.4.31"])
    err = capsys.readouterr().err
    assert rc == 2 and said in err and "a bug of jax-compat" not in err, err
    assert not (tmp / "reports").exists()  # nothing run, nothing written


def test_check_without_uv_says_so_before_anything_runs(tmp_path, capsys, without, offline):
    make_tree(tmp_path)
    without()
    rc = main(["check", "--matrix", str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"),
               "--state", str(tmp_path / "state"), "jax==0.4.33"])
    err = capsys.readouterr().err
    assert rc == 2 and "error: uv not found: install it with" in err and "a bug of jax-compat" not in err, err
    assert not (tmp_path / "reports").exists()


def test_check_refuses_a_flaky_file_it_could_not_write_before_anything_runs(tmp_path):
    """The same for `check --tests --aa`: a folder as the flaky file is refused first (exit 2)."""
    make_tree(tmp_path)
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "test_u.py").write_text(FINE)
    (tmp_path / "folder").mkdir()
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "fake_matrix.py"), "check", "--matrix",
                           str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"), "--state",
                           str(tmp_path / "state"), "--tests", str(tmp_path / "user"), "--aa", "--flaky-file",
                           str(tmp_path / "folder"), "--baseline", "jax==0.4.31", "jax==0.4.33"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "folder: a folder, not a file" in proc.stderr, proc.stdout + proc.stderr
    assert not (tmp_path / "state" / "envs").exists() and not (tmp_path / "reports").exists()


def test_the_matrix_without_uv_says_so_once_not_as_a_harness_error_per_cell(tmp_path, capsys, without, monkeypatch):
    """Every cell's first environment asks for uv: a missing one is the user's setup (exit 2, the
    fix), not each cell's "harness error"."""
    from jaxcompat.run import matrix as run_matrix

    monkeypatch.setattr(run_matrix, "run_cell", lambda cell, matrix, **kw: uvbin.uv_bin())
    make_tree(tmp_path)
    without()
    rc = main(["matrix", "--matrix", str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"),
               "--state", str(tmp_path / "state")])
    err = capsys.readouterr().err
    assert rc == 2 and "error: uv not found: install it with" in err and "a bug of jax-compat" not in err, err


def test_the_rules_digest_sees_a_long_pattern_whole(tmp_path):
    """A rules file's `match` edited past its 200th character is another key too (a pattern's repr
    is cut there)."""
    dep, plan = _dep(tmp_path), Plan(("jax==0.4.33",), ("jax==0.4.31",))
    path, extra = make_tree(tmp_path, RULE), tmp_path / "extra.toml"
    keys = []
    for tail in ("one", "two"):
        extra.write_text(failure_toml("long", "cases/test_demo.py::test_bug", '{ jax = ">=0.4.30" }',
                                      match="x" * 250 + tail))
        ns = argparse.Namespace(matrix=str(path), rules=[extra], without_rule=[])
        keys.append(crater.cache_key(dep, plan, options.load_matrix(ns), "1.0", tmp_path))
    assert keys[0] != keys[1]
