"""Sources as they are, and nothing a user gives us leaks or runs (issue 38, parts 2 and 3): a git
dependent resolved to a commit every run (as of a day, through a mirror, with blobs absent), every
form of pytest configuration respected, the result cache keyed by the Python, refs that git could
read as options refused, credentials out of every crater report and the terminal, and Ctrl-C
stopping a crater within seconds. Git repositories are made here, in a temporary folder."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jaxcompat.env import gitsource, projects, testdeps
from jaxcompat.knowledge.config import load as load_matrix
from jaxcompat.knowledge.dependents import parse
from jaxcompat.model.crater import Plan
from jaxcompat.model.dependents import Dependent, DependentSource
from jaxcompat.model.matrix import ConfigError
from jaxcompat.operations import crater
from tests.test_crater import DRIVER, _crater, _tree

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str, day: str = "2024-01-01") -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": f"{day}T12:00:00Z", "GIT_COMMITTER_DATE": f"{day}T12:00:00Z",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout.strip()


def _commit(repo: Path, day: str, text: str) -> str:
    (repo / "VERSION").write_text(text)
    _git(repo, "add", "-A", day=day)
    _git(repo, "commit", "-q", "-m", text, day=day)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def upstream(tmp_path):
    repo = tmp_path / "upstream"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    first = _commit(repo, "2024-01-01", "one")
    _git(repo, "tag", "v1.0")
    second = _commit(repo, "2024-03-01", "two")
    return repo, first, second


def test_a_git_dependent_at_head_is_fetched_again_when_the_remote_moved(tmp_path, upstream):
    """Was: `name-HEAD` re-used for ever (a branch that moved was never fetched again)."""
    repo, first, second = upstream
    dep = Dependent("proj", DependentSource(git=repo.as_uri()))
    cache, src = tmp_path / "cache", tmp_path / "src"
    assert projects.version_of(dep, cache) == second
    root = projects.fetch(dep, second, cache, src)
    assert (root / "VERSION").read_text() == "two" and root.parent.parent.name == f"proj-{second}"
    third = _commit(repo, "2024-04-01", "three")
    assert projects.version_of(dep, cache) == third  # fetched again: the new commit, a new folder
    assert (projects.fetch(dep, third, cache, src) / "VERSION").read_text() == "three"
    assert projects.describe(dep, third, cache).startswith("v1.0-2-g")
    on_tag = Dependent("proj", DependentSource(git=repo.as_uri(), ref="v1.0"))
    assert projects.version_of(on_tag, cache) == first


def test_as_of_a_day_takes_the_last_commit_before_it_on_the_ref(tmp_path, upstream):
    """Was: --as-of ignored for git sources."""
    repo, first, second = upstream
    cache = tmp_path / "cache"
    head = Dependent("proj", DependentSource(git=repo.as_uri()))
    assert projects.version_of(head, cache, "2024-02-15") == first
    assert projects.version_of(head, cache, "2024-03-02") == second
    assert projects.describe(head, first, cache) == "v1.0"
    with pytest.raises(projects.SourceMissing, match="no commit before 2023-06-01"):
        projects.version_of(head, cache, "2023-06-01")


def test_any_url_through_a_mirror_named_by_insteadof(tmp_path, upstream, monkeypatch):
    repo, _, second = upstream
    url = "https://example.invalid/owner/proj"
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.{repo}.insteadOf")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", url)
    dep = Dependent("proj", DependentSource(git=url, ref="main"))
    assert projects.version_of(dep, tmp_path / "cache") == second


def test_a_checkout_whose_mirror_lacks_a_blob_runs_with_the_file_named(tmp_path, upstream):
    repo, _, second = upstream
    (repo / "big.bin").write_bytes(b"x" * 1000)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "big")
    blob = _git(repo, "rev-parse", "HEAD:big.bin")
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # a mirror without that blob
    dep = Dependent("proj", DependentSource(git=str(repo / ".git")))
    cache, src = tmp_path / "cache", tmp_path / "src"
    commit = projects.version_of(dep, cache)
    root = projects.fetch(dep, commit, cache, src)
    assert (root / "tests" / "test_a.py").is_file() and not (root / "big.bin").exists()
    assert projects.absent_files(dep, commit, src) == ["big.bin"]


@pytest.mark.parametrize("ref", ["--upload-pack=touch PWNED", "-c", "a b", "main..x"])
def test_a_ref_git_could_read_as_an_option_is_refused_with_the_key_and_the_fix(tmp_path, ref):
    """Was: `ref = "--upload-pack=touch FILE;…"` reached git as an option and ran a command."""
    with pytest.raises(ConfigError) as e:
        parse({"dependent": [{"name": "a", "git": "https://x/y", "ref": ref}]}, tmp_path / "d.toml")
    assert e.value.key == "dependent[a].ref" and "ref = " in str(e.value)
    with pytest.raises(gitsource.GitError):  # and the mechanism refuses it too, whoever built the record
        gitsource.resolve("https://example.invalid/x", ref, tmp_path / "cache")
    assert not (tmp_path / "PWNED").exists() and not Path("PWNED").exists()


def test_no_git_call_goes_through_a_shell():
    source = (Path(gitsource.__file__)).read_text() + Path(projects.__file__).read_text()
    assert "shell=True" not in source and "os.system" not in source


# ---------------------------------------------------------------- pytest's configuration


@pytest.mark.parametrize("name, text", [
    ("pytest.toml", "[pytest]\naddopts = ['-q']\n"),
    ("pytest.ini", ""),
    ("pyproject.toml", "[tool.pytest]\nfilterwarnings = ['error']\n"),
    ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-q'\n"),
    ("tox.ini", "[pytest]\naddopts = -q\n"),
    ("setup.cfg", "[tool:pytest]\naddopts = -q\n"),
])
def test_every_form_of_pytest_configuration_is_the_projects_own(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    assert testdeps.config_file(tmp_path) == name
    projects._standalone(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # nothing written over it


def test_only_a_project_without_configuration_gets_one(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    (tmp_path / "tox.ini").write_text("[tox]\n")
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = p\n")
    assert testdeps.config_file(tmp_path) == ""
    projects._standalone(tmp_path)
    assert (tmp_path / "pytest.ini").is_file()


WARNS = "import warnings\n\ndef test_warns():\n    warnings.warn('old', DeprecationWarning)\n"


@pytest.mark.skipif(int(pytest.__version__.split(".")[0]) < 9, reason="[tool.pytest] is pytest 9's")
def test_tool_pytest_filterwarnings_error_keeps_failing_as_plain_pytest_fails(tmp_path):
    """Was: a pytest.ini written over a pytest-9 `[tool.pytest]`: its filterwarnings = ["error"]
    lost (plain pytest: 1 failed; through the crater: 1 passed)."""
    outer = tmp_path / "checkout"
    dep = outer / "src" / "dep"
    dep.mkdir(parents=True)
    (outer / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (dep / "pyproject.toml").write_text('[project]\nname = "dep"\n\n[tool.pytest]\nfilterwarnings = ["error"]\n')
    (dep / "test_w.py").write_text(WARNS)
    projects._standalone(dep)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(dep), str(dep)],
                          capture_output=True, text=True, cwd=dep)
    assert proc.returncode == 1 and "1 failed" in proc.stdout, proc.stdout
    assert testdeps.warning_filter(dep) == 'filterwarnings "error" in pyproject.toml'


@pytest.mark.integration
@pytest.mark.skipif(int(pytest.__version__.split(".")[0]) < 9, reason="[tool.pytest] is pytest 9's")
def test_tool_pytest_filterwarnings_error_holds_through_the_crater(tmp_path):
    """The same project through the crater: its warning is an error on both sides (plain pytest's
    "1 failed"), not a pass."""
    deps = '[[dependent]]\nname = "alpha"\nversion = "latest"\n'
    tmp = _tree(tmp_path, deps, alpha=WARNS)
    (tmp / "src" / "alpha" / "pyproject.toml").write_text('[project]\nname = "alpha"\nversion = "1.0"\n\n'
                                                         '[tool.pytest]\nfilterwarnings = ["error"]\n')
    proc = _crater(tmp, "--baseline", "jax==0.4.31", "jax==0.4.33")
    alpha = json.loads((tmp / "reports" / "crater" / "dependents" / "alpha.json").read_text())
    assert [(t["candidate"], t["baseline"]) for t in alpha["tests"]] == [("failed", "failed")], proc.stdout
    assert not (tmp / "src" / "alpha" / "pytest.ini").exists()


# ---------------------------------------------------------------- the result cache


def test_the_result_cache_key_holds_the_python_and_what_the_source_resolved_to(tmp_path):
    matrix = load_matrix(REPO_MATRIX)
    dep = Dependent("proj", DependentSource(git="https://x/y"))
    plan = Plan(("jax==0.4.33",), ("jax==0.4.31",), python="3.12")
    key = crater.cache_key(dep, plan, matrix, "a" * 40)
    assert key and key != crater.cache_key(dep, Plan(plan.candidate, plan.baseline, python="3.11"),
                                           matrix, "a" * 40)
    assert key != crater.cache_key(dep, plan, matrix, "b" * 40)  # the branch moved: another result
    assert crater.cache_key(dep, plan, matrix, "") is None  # unresolved: nothing to key on


REPO_MATRIX = Path(__file__).resolve().parent.parent / "matrix.toml"


# ---------------------------------------------------------------- the crater, end to end


SECRETS = {"candidate": "CandSecret5x", "index": "IdxSecret2x", "git": "GitSecret3x", "env": "EnvSecret4x",
           "ghost": "GhostSecret6x"}


@pytest.mark.integration
def test_no_credential_reaches_any_crater_report_or_the_terminal(tmp_path):
    """Was: user:token@ of a dependent's git URL and of --extra-index-url in the terminal,
    crater.json and dependents/NAME.json (the crater had no redaction of its own)."""
    deps = f'''
    [[dependent]]
    name = "alpha"
    git = "https://gituser:{SECRETS["git"]}@example.invalid/alpha"
    ref = "main"
    env = {{ API_TOKEN = "{SECRETS["env"]}", JAX_ENABLE_X64 = "1" }}

    [[dependent]]
    name = "ghost"
    git = "https://{SECRETS["ghost"]}@example.invalid/ghost"
    '''
    test = f'''
        import os

        def test_token():
            assert os.environ["API_TOKEN"] == "{SECRETS["env"]}"
            if "candidate" in os.environ.get("JAXCOMPAT_RESULTS", "") or True:
                print("token", os.environ["API_TOKEN"], "from https://u:{SECRETS["index"]}@idx.invalid/simple")
                raise ValueError("saw " + os.environ["API_TOKEN"] + " and {SECRETS["candidate"]}")
        '''
    tmp = _tree(tmp_path, deps, alpha=test)
    proc = _crater(tmp, "--baseline", "jax==0.4.31", "--extra-index-url",
                   f"https://idxuser:{SECRETS['index']}@idx.invalid/simple", "jax==0.4.33",
                   f"equinox @ git+https://canduser:{SECRETS['candidate']}@example.invalid/equinox@main")
    said = proc.stdout + proc.stderr
    written = [p for p in (tmp / "reports").rglob("*") if p.is_file()]
    assert {"crater.json", "alpha.json", "ghost.json"} <= {p.name for p in written}, said
    for secret in SECRETS.values():
        assert secret not in said, (secret, said)
        for p in written:
            assert secret not in p.read_text(errors="replace"), (secret, p)
    alpha = json.loads((tmp / "reports" / "crater" / "dependents" / "alpha.json").read_text())
    assert alpha["env"] == {"API_TOKEN": "****", "JAX_ENABLE_X64": "1"}
    assert "example.invalid/alpha" in alpha["source"] and "****@" in alpha["source"]
    ghost = json.loads((tmp / "reports" / "crater" / "dependents" / "ghost.json").read_text())
    assert ghost["verdict"] == "no-source" and "****@example.invalid/ghost" in ghost["cause"]


# ---------------------------------------------------------------- Ctrl-C


@pytest.mark.integration
def test_ctrl_c_stops_a_crater_within_seconds_keeping_every_finished_dependent(tmp_path):
    """Was: Ctrl-C waited for the running dependent's whole budget (its child in its own process
    group, the parent joining it)."""
    deps = '''
    [[dependent]]
    name = "alpha"
    version = "latest"

    [[dependent]]
    name = "hangy"
    version = "latest"
    budget_s = 600
    '''
    tmp = _tree(tmp_path, deps, alpha="def test_a():\n    pass\n", hangy="def test_x():\n    pass\n")
    (tmp / "src" / "hangy" / "HANG").write_text("")
    argv = [sys.executable, str(DRIVER), "crater", "--matrix", str(tmp / "matrix.toml"), "--reports",
            str(tmp / "reports"), "--state", str(tmp / "state"), "--dependents", str(tmp / "dependents.toml"),
            "--baseline", "jax==0.4.31", "jax==0.4.33"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "FAKE_SOURCES": str(tmp / "src")})
    out = ""
    deadline = time.monotonic() + 240
    while "[2/2] hangy" not in out and time.monotonic() < deadline:
        out += proc.stdout.readline()
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    try:
        rest, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
        _kill_left(tmp)
    assert proc.returncode == 130 and time.monotonic() - t0 < 30, out + rest
    folder = tmp / "reports" / "crater" / "dependents"
    stored = {p.stem: json.loads(p.read_text())["verdict"] for p in folder.glob("*.json")}
    assert stored == {"alpha": "safe", "hangy": "not-run"}
    data = json.loads((tmp / "reports" / "crater" / "crater.json").read_text())
    assert data["exit"] == 2  # the report does not say "safe" for what was never judged
    assert not _kill_left(tmp), "the dependent's process was still running"


def _kill_left(tmp: Path) -> list[int]:
    """The processes of this test's crater still running (killed): its dependent's child, if the
    crater left it behind."""
    found = subprocess.run(["pgrep", "-f", str(tmp / "dependents.toml")], capture_output=True, text=True)
    pids = [int(x) for x in found.stdout.split()]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return pids
