"""The nightly's cost (issue 47, item 4): a night whose baseline has not moved re-uses each
dependent's baseline side from the result cache and runs only the candidate's, and what changed is
still re-run live on both sides. No jax: the real crater over fake dependents (tests/fake_crater.py);
each test of the fake suites writes a line per run, so what ran on which side is counted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxcompat.env.candidate import candidate_cell
from jaxcompat.model.usertests import Observed
from jaxcompat.run import resultcache, userrun

REPO = Path(__file__).resolve().parent.parent
DRIVER = REPO / "tests" / "fake_crater.py"
BASELINE = candidate_cell(["jax==0.4.31"], python="auto", companions=False).id

DEPS = '''
    [[dependent]]
    name = "alpha"
    version = "latest"
    depends_on = ["jax"]

    [[dependent]]
    name = "gamma"
    version = "latest"
    depends_on = ["jax"]
'''


def suite(n: int, breaks: bool, sleep: float = 0.0) -> str:
    """``n`` passing tests (and with ``breaks`` one that fails in every candidate), each writing
    the side it ran in to $RAN_LOG."""
    body = f'''
        import os, time

        def _ran(name):
            side = "baseline" if "{BASELINE}" in os.environ["JAXCOMPAT_RESULTS"] else "candidate"
            with open(os.environ["RAN_LOG"], "a") as f:
                f.write(f"{{side}} {{name}}\\n")
            time.sleep({sleep})
        '''
    body += "".join(f"\n        def test_ok{i}():\n            _ran('ok{i}')\n" for i in range(n))
    if breaks:
        body += f'''
        def test_new():
            _ran("new")
            assert "{BASELINE}" in os.environ["JAXCOMPAT_RESULTS"], "the candidate breaks it"
        '''
    return textwrap.dedent(body)


def tree(tmp: Path, n: int = 3, sleep: float = 0.0) -> Path:
    (tmp / "matrix.toml").write_text('[settings]\ncases_dir = "cases"\n')
    (tmp / "cases").mkdir(exist_ok=True)
    (tmp / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (tmp / "dependents.toml").write_text(textwrap.dedent(DEPS))
    for name, breaks in (("alpha", True), ("gamma", False)):
        root = tmp / "src" / name
        (root / "tests").mkdir(parents=True, exist_ok=True)
        (root / "pyproject.toml").write_text(f'[project]\nname = "{name}"\nversion = "1.0"\n')
        (root / "tests" / "test_mod.py").write_text(suite(n, breaks, sleep))
    return tmp


def night(tmp: Path, candidate: str, *args: str, reports: str = "reports", env: dict | None = None):
    """One night's crater (the baseline jax==0.4.31, one state folder); what ran on each side."""
    log = tmp / "ran.log"
    log.unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, str(DRIVER), "crater", "--matrix", str(tmp / "matrix.toml"),
                           "--reports", str(tmp / reports), "--state", str(tmp / "state"),
                           "--dependents", str(tmp / "dependents.toml"), "--baseline", "jax==0.4.31",
                           *args, candidate], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "FAKE_SOURCES": str(tmp / "src"), "RAN_LOG": str(log), **(env or {})})
    lines = log.read_text().splitlines() if log.is_file() else []
    ran = {side: sum(1 for ln in lines if ln.startswith(side + " ")) for side in ("candidate", "baseline")}
    data = json.loads((tmp / reports / "crater" / "crater.json").read_text())
    return proc, ran, data


def verdicts(data: dict) -> dict:
    return {d["name"]: (d["verdict"], d.get("classes")) for d in data["dependents"]}


@pytest.mark.integration  # a crater of fake dependents, three nights: as tests/test_crater.py's
def test_a_second_night_with_a_new_candidate_reuses_the_baseline_side_and_judges_the_same(tmp_path):
    tmp = tree(tmp_path)
    first, ran1, data1 = night(tmp, "jax==0.4.33")
    assert first.returncode == 1, first.stdout + first.stderr
    assert ran1 == {"candidate": 7 + 1, "baseline": 7 + 1}, ran1  # 4 + 3 tests a side, and test_new again
    assert not any("baseline_reused" in d for d in data1["dependents"])
    second, ran2, data2 = night(tmp, "jax==0.4.34")
    out = second.stdout + second.stderr
    assert second.returncode == 1, out
    # the whole suites ran in the candidate only; what broke was re-run live on both sides
    assert ran2 == {"candidate": 7 + 1, "baseline": 1}, ran2
    assert "re-used from the result cache" in out and "baseline side re-used from 20" in out
    reused = {d["name"]: d.get("baseline_reused", "") for d in data2["dependents"]}
    assert all(reused.values()), reused
    for name in ("crater.html", "crater.md"):
        assert "baseline side re-used from" in (tmp / "reports" / "crater" / name).read_text(), name
    # the verdict without re-use is the same, test for test
    fresh, ran3, data3 = night(tmp, "jax==0.4.34", "--no-cache", reports="fresh")
    assert ran3 == {"candidate": 7 + 1, "baseline": 7 + 1}, ran3  # --no-cache re-uses nothing
    assert fresh.returncode == second.returncode
    assert verdicts(data3) == verdicts(data2) and verdicts(data2)["alpha"][0] == "broken"
    assert [t for d in data3["dependents"] for t in d["tests"]] == [t for d in data2["dependents"] for t in d["tests"]]
    assert not any("baseline_reused" in d for d in data3["dependents"])


@pytest.mark.integration
@pytest.mark.parametrize("change", ["lock", "project", "timeout", "aa", "plugin", "env"])
def test_a_baseline_whose_inputs_moved_is_run_again(tmp_path, change, monkeypatch):
    tmp = tree(tmp_path)
    night(tmp, "jax==0.4.33")
    args, env = [], {}
    if change == "lock":
        env["FAKE_LOCK_EXTRA"] = "numpy==2.1.2\n"  # a dependency of the baseline had a new release
    elif change == "project":
        (tmp / "src" / "gamma" / "tests" / "conftest.py").write_text("# edited\n")
        (tmp / "src" / "alpha" / "tests" / "conftest.py").write_text("# edited\n")
    elif change == "timeout":
        text = (tmp / "dependents.toml").read_text().replace('depends_on = ["jax"]',
                                                               'depends_on = ["jax"]\ntest_timeout_s = 77')
        (tmp / "dependents.toml").write_text(text)
    elif change == "aa":
        args = ["--aa"]
    elif change == "env":  # a variable the tests inherit and read (red team 6, F2: re-used, "safe")
        env["EQX_ON_ERROR"] = "breakpoint"
    else:  # the plugin is keyed by its files' digest
        real = resultcache.plugin_digest()
        assert resultcache.plugin_digest(REPO / "jaxcompat" / "plugin") == real
        fake = tmp / "plugin"
        fake.mkdir()
        (fake / "x.py").write_text("")
        assert resultcache.plugin_digest(fake) != real
        return
    second, ran, data = night(tmp, "jax==0.4.34", *args, env=env)
    assert ran["baseline"] >= 7, (ran, second.stdout + second.stderr)
    assert "re-used from the result cache" not in second.stdout + second.stderr
    assert not any("baseline_reused" in d for d in data["dependents"])


@pytest.mark.parametrize("lock, project, fixed", [
    ("a==1.0\nb[x]==2 ; python_version >= '3.9'\n", "", True),
    ("a @ git+https://github.com/o/a@" + "0" * 40 + "\n", "", True),
    ("a @ https://x/a-1-py3-none-any.whl#sha256=" + "f" * 64 + "\n", "", True),
    ("a @ git+https://github.com/o/a@main\n", "", False),  # a branch moves
    ("a @ https://x/a-1-py3-none-any.whl\n", "", False),  # a URL without its hash
    ("a @ file:///home/u/a\n", "", False),  # a folder
    ("-e /src/proj\na==1\n", "/src/proj", True),  # the project itself: keyed by its files
    ("-e /src/other\na==1\n", "/src/proj", False),
    ("--index-url https://x\na==1\n", "", False),
    ("", "", False),  # no lock
])
def test_only_a_lock_whose_every_line_is_fixed_is_reused(lock, project, fixed):
    assert resultcache.fixed(lock, project) is fixed


def test_a_side_with_a_test_stopped_or_crashed_is_never_kept_and_a_damaged_one_never_read(tmp_path):
    from jaxcompat.model.outcomes import RawResult
    from jaxcompat.model.vocab import CellStatus, TestStatus

    cache = resultcache.ResultCache(tmp_path)
    ok = RawResult(case="t.py::a", status=TestStatus.PASSED).to_dict()
    for bad in (TestStatus.TIMEOUT, TestStatus.CRASH):
        stopped = RawResult(case="t.py::b", status=bad).to_dict()
        assert not cache.store_side("k1", {"results": {"t.py::a": ok, "t.py::b": stopped}})
        assert cache.load_side("k1") is None
    seen = Observed(results={"t.py::a": RawResult(case="t.py::a", status=TestStatus.PASSED)},
                              versions={"jax": "0.4.31"})
    userrun.keep("k2", seen, tmp_path)
    back = userrun.kept("k2", tmp_path)
    assert back.results == seen.results and back.versions == seen.versions and back.reused
    path = tmp_path / "sides" / "k2.json"
    path.write_text(path.read_text().replace("0.4.31", "0.4.30"))  # edited: its checksum no longer holds
    assert userrun.kept("k2", tmp_path) is None and not path.exists()
    userrun.keep("k3", Observed(error="pytest exited", status=CellStatus.OK), tmp_path)
    assert userrun.kept("k3", tmp_path) is None  # a side whose tests did not run is not kept
