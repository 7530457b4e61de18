"""bisect --commits over a fake repository: N commits, one bad commit (at either end too), commits
that cannot be built (skipped, a range when they surround the change), --fixed, and the answer's
commit record (title, date, pull request, files, changelog). No jax: the steps are fakes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from jaxcompat.env import commits as history
from jaxcompat.model.crater import DependentResult, Plan
from jaxcompat.model.vocab import BisectState
from jaxcompat.operations import commitbisect
from jaxcompat.operations.bisect import Target, observed_cell
from jaxcompat.report import commitbisect as commitbisect_report
from tests.helpers import write_crater

URL = "https://example.invalid/fake/pkg"


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x", "GIT_AUTHOR_DATE": "2024-09-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2024-09-01T00:00:00Z", "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def make_repo(tmp: Path, states: list[str], pr_at: int | None = None) -> Path:
    """Commits 0..len-1, each writing ``state.txt`` (ok, bad or broken); v1.0 tags commit 0 and
    v2.0 the last; CHANGELOG.md names v2.0's pull request."""
    repo = tmp / "origin"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for i, state in enumerate(states):
        (repo / "state.txt").write_text(state + "\n")
        (repo / f"f{i}.py").write_text(f"# {i}\n")
        if i == len(states) - 1:
            (repo / "CHANGELOG.md").write_text("# Changelog\n\n## pkg 2.0\n\n* Changed f (#4242).\n* Other.\n\n"
                                               "## pkg 1.0\n\n* First.\n")
        _git(repo, "add", "-A")
        title = f"change {i}" + (" (#4242)" if i == pr_at else "")
        _git(repo, "commit", "-q", "-m", title)
        if i == 0:
            _git(repo, "tag", "v1.0")
    _git(repo, "tag", "v2.0")
    return repo


@pytest.fixture
def mirror_env(monkeypatch):
    def point(repo: Path) -> None:
        monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
        monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.{repo}.insteadOf")
        monkeypatch.setenv("GIT_CONFIG_VALUE_0", URL)
    return point


def _fakes(repo_cache: Path):
    """install: a commit whose state.txt says broken cannot be built; observe: the case fails with
    the target's error where state.txt says bad."""
    calls: list[str] = []

    def install(sha: str):
        state = history.show(URL, sha, "state.txt", repo_cache).strip()
        calls.append(sha)
        if state == "broken":
            raise history.HistoryError("setup.py: build failed")
        return [f"pkg @ file:///src/{sha}#{state}"], ""

    def observe(reqs, step_id):
        state = reqs[0].rsplit("#", 1)[1]
        status, errors = ("failed", ["TypeError"]) if state == "bad" else ("passed", [])
        return observed_cell({"id": step_id, "python": "3.11", "backend": "cpu", "status": "ok", "versions": {},
                              "results": [{"case": "cases/test_x.py::test_y", "status": status,
                                           "error_types": errors, "message": "boom" if errors else ""}]})
    return install, observe, calls


TARGET = Target("fake-rule", ("cases/test_x.py::test_y",), lambda r: r.status == "failed" and "boom" in r.message)


def _run(tmp_path, mirror_env, states, fixed=False, pr_at=None):
    repo = make_repo(tmp_path, states, pr_at)
    mirror_env(repo)
    state_dir = tmp_path / "state"
    install, observe, calls = _fakes(state_dir / "cache")
    result = commitbisect.bisect_commits(
        None, TARGET, "pkg", good="1.0", bad="2.0", pins=[], python="3.11", state_dir=state_dir, repo=URL,
        fixed=fixed, install=install, observe=observe, date="2024-09-02")
    shas = _git(repo, "rev-list", "--reverse", "HEAD").split()
    return result, shas, calls


@pytest.mark.parametrize("first_bad", [1, 7, 19, 30])
def test_the_first_bad_commit_anywhere_ends_included(tmp_path, mirror_env, first_bad):
    n = 31
    states = ["ok"] * first_bad + ["bad"] * (n - first_bad)
    result, shas, calls = _run(tmp_path, mirror_env, states, pr_at=first_bad)
    assert result.first is not None and result.first.sha == shas[first_bad], result.message
    assert result.last_before == shas[first_bad - 1]
    assert result.range == []
    assert result.first.title == f"change {first_bad} (#4242)" and result.first.pull_request == "#4242"
    assert f"f{first_bad}.py" in result.first.files
    assert result.shipped_in == "2.0"
    assert result.changelog == ["* Changed f (#4242)."]
    assert len(calls) <= 2 + (n - 1).bit_length() + 1  # the two ends, then log2(n)
    assert result.commits == n - 1


def test_skipped_commits_are_stepped_over(tmp_path, mirror_env):
    states = ["ok"] * 10 + ["broken", "broken"] + ["ok"] * 3 + ["bad"] * 16
    result, shas, _ = _run(tmp_path, mirror_env, states)
    assert result.first.sha == shas[15] and result.range == []
    assert all(s.state == BisectState.UNKNOWN and "build failed" in s.detail
               for s in result.steps if s.commit in shas[10:12])


def test_skipped_commits_around_the_change_give_a_range(tmp_path, mirror_env):
    states = ["ok"] * 8 + ["broken"] * 4 + ["bad"] * 8  # the change is somewhere in 8..12
    result, shas, _ = _run(tmp_path, mirror_env, states)
    assert result.range == shas[8:13]
    assert result.first.sha == shas[12]
    assert "one of 5 commits" in result.message


def test_fixed_finds_where_the_failure_stops(tmp_path, mirror_env):
    states = ["bad"] * 12 + ["ok"] * 9
    result, shas, _ = _run(tmp_path, mirror_env, states, fixed=True)
    assert result.first.sha == shas[12] and "stops" in result.message


def test_ends_that_do_not_disagree_are_said(tmp_path, mirror_env):
    result, _, _ = _run(tmp_path, mirror_env, ["ok"] * 6)
    assert result.first is None and "do not disagree" in result.message


def test_a_release_without_a_tag_says_the_fix(tmp_path, mirror_env):
    repo = make_repo(tmp_path, ["ok", "bad"])
    mirror_env(repo)
    cache = tmp_path / "state" / "cache"
    history.fetch(URL, cache)
    with pytest.raises(history.HistoryError, match="no tag for pkg 3.0.*--repo"):
        history.tag_of("pkg", "3.0", URL, cache)


JAXLIBS = {"0.4.30": ("2024-06-18", False), "0.4.31": ("2024-07-29", False), "0.4.32": ("2024-09-11", True),
           "0.4.33": ("2024-09-16", False), "0.4.34": ("2024-10-04", False)}  # (upload day, yanked), as PyPI says


@pytest.fixture
def jaxlib_index(monkeypatch):
    """The index's answer for jaxlib, faked."""
    info = {v: {"date": d, "yanked": y} for v, (d, y) in JAXLIBS.items()}
    monkeypatch.setattr(history.releases, "release_info", lambda dist, cache, need=None: info)
    monkeypatch.setattr(history.releases, "versions", lambda dist, cache: [v for v, (_, y) in JAXLIBS.items() if not y])


def test_jaxlib_for_a_commit(monkeypatch):
    monkeypatch.setattr(history.releases, "versions", lambda dist, cache: ["0.4.30", "0.4.31", "0.4.33", "0.4.34"])
    assert history.jaxlib_for("0.4.32", "0.4.31", Path("/nowhere")) == "0.4.31"  # 0.4.32 yanked: not listed
    assert history.jaxlib_for("0.4.33", "0.4.31", Path("/nowhere")) == "0.4.33"
    assert history.jaxlib_for("0.4.29", "0.4.28", Path("/nowhere")) == ""


def test_jaxlib_fallbacks_for_a_commit(jaxlib_index):
    """Was: only the newest jaxlib a commit accepts was tried (``jaxlib_for``); jax 0.4.34's commits
    of September 2024 all "cannot say: AttributeError: module 'jaxlib.lapack' has no attribute
    'getrf_hlo'" over jaxlib 0.4.34. Now, after it: the accepted one before it, then the newest it
    accepts released by the commit's day, then a yanked one it accepts."""
    nowhere = Path("/nowhere")
    assert history.jaxlib_for("0.4.34", "0.4.33", nowhere) == "0.4.34"
    assert history.jaxlib_fallbacks("0.4.34", "0.4.33", "2024-09-23T11:09:16-07:00", nowhere) == ["0.4.33"]
    assert history.jaxlib_fallbacks("0.4.34", "0.4.30", "2024-09-12", nowhere) == ["0.4.33", "0.4.31", "0.4.32"]
    assert history.jaxlib_fallbacks("0.4.34", "0.4.30", "2024-07-01", nowhere) == ["0.4.33", "0.4.30", "0.4.32"]
    assert history.jaxlib_fallbacks("0.4.32", "0.4.31", "2024-08-29", nowhere) == ["0.4.32"]  # yanked, last
    assert history.jaxlib_for("0.4.32", "0.4.32", nowhere) == ""  # jax 0.4.32's own release commit
    assert history.jaxlib_fallbacks("0.4.32", "0.4.32", "2024-09-11", nowhere) == ["0.4.32"]
    assert history.jaxlib_fallbacks("0.4.29", "0.4.28", "2024-06-01", nowhere) == []


def _jax_repo(tmp: Path, states: list[str], needs_034_from: int | None = None) -> Path:
    """A fake jax: commits 0..len-1 each writing ``state.txt`` and a jax/version.py that says 0.4.34,
    accepting jaxlib >= 0.4.33 (>= 0.4.34 from commit ``needs_034_from`` on); v1.0 tags commit 0 and
    v2.0 the last."""
    repo = tmp / "origin"
    (repo / "jax").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for i, state in enumerate(states):
        minimum = "0.4.34" if needs_034_from is not None and i >= needs_034_from else "0.4.33"
        (repo / "jax" / "version.py").write_text(f'_version: str = "0.4.34"\n'
                                                 f'_minimum_jaxlib_version: str = "{minimum}"\n')
        (repo / "state.txt").write_text(state + "\n")
        (repo / f"f{i}.py").write_text(f"# {i}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"change {i}")
        if i == 0:
            _git(repo, "tag", "v1.0")
    _git(repo, "tag", "v2.0")
    return repo


def test_a_jax_commit_that_cannot_say_over_its_newest_jaxlib_is_tried_over_the_older(tmp_path, mirror_env,
                                                                                    jaxlib_index):
    """Was: every middle commit "cannot say" over jaxlib 0.4.34 and was skipped: the window between
    the ends was skipped whole (a range, never a commit). Now a step that cannot say over the newest
    jaxlib is tried over the older accepted one, which can, and the first bad commit is named."""
    repo = _jax_repo(tmp_path, ["ok"] * 6 + ["bad"] * 5)
    shas = _git(repo, "rev-list", "--reverse", "HEAD").split()
    mirror_env(repo)
    state_dir = tmp_path / "state"
    seen = []

    def observe(reqs, step_id):  # the commit's tree, over the jaxlib it was given
        tree = Path(reqs[0].split(" @ file://", 1)[1])
        jaxlib = next(r.split("==")[1] for r in reqs if r.startswith("jaxlib=="))
        state = (tree / "state.txt").read_text().strip()
        seen.append((tree.name, jaxlib))
        middle = tree.name not in (shas[0], shas[-1])
        status, errors, message = (
            ("failed", ["AttributeError"], "module 'jaxlib.lapack' has no attribute 'getrf_hlo'")
            if middle and jaxlib == "0.4.34" else ("failed", ["TypeError"], "boom") if state == "bad"
            else ("passed", [], ""))
        return observed_cell({"id": step_id, "python": "3.11", "backend": "cpu", "status": "ok", "versions": {},
                              "results": [{"case": "cases/test_x.py::test_y", "status": status,
                                           "error_types": errors, "message": message}]})
    result = commitbisect.bisect_commits(None, TARGET, "jax", good="1.0", bad="2.0", pins=[], python="3.11",
                                         state_dir=state_dir, repo=URL, observe=observe, date="2024-10-05")
    assert result.first is not None and result.first.sha == shas[6] and result.range == [], result.message
    middle = [s for s in result.steps if s.commit not in (shas[0], shas[-1])]
    assert middle and all(s.jaxlib == "0.4.33" and s.tried and "getrf_hlo" in s.tried[0] for s in middle)
    assert ("0.4.33" in commitbisect_report.render(result) and "cannot say over jaxlib 0.4.34: "
            in commitbisect_report.render(result))


def test_transition_with_every_middle_commit_unknown():
    states = [BisectState.ABSENT] + [BisectState.UNKNOWN] * 5 + [BisectState.PRESENT]
    lo, hi, skipped = commitbisect.transition(len(states), lambda k: states[k], BisectState.PRESENT)
    assert (lo, hi) == (0, 6) and skipped == [1, 2, 3, 4, 5]


def test_the_pull_request_from_the_remote_pull_refs(tmp_path, mirror_env):
    """A commit whose message names no pull request (jax's Copybara flow: "PiperOrigin-RevId") is
    the head of its pull request's ``refs/pull/N/head`` at the remote (jax dd6f0e2: #23307)."""
    states = ["ok"] * 5 + ["bad"] * 4
    repo = make_repo(tmp_path, states)
    shas = _git(repo, "rev-list", "--reverse", "HEAD").split()
    _git(repo, "update-ref", "refs/pull/23307/head", shas[5])
    _git(repo, "update-ref", "refs/pull/23300/head", shas[3])
    mirror_env(repo)
    state_dir = tmp_path / "state"
    install, observe, _ = _fakes(state_dir / "cache")
    result = commitbisect.bisect_commits(None, TARGET, "pkg", good="1.0", bad="2.0", pins=[], python="3.11",
                                         state_dir=state_dir, repo=URL, install=install, observe=observe,
                                         date="2024-09-02")
    assert result.first.sha == shas[5] and result.first.pull_request == "#23307"
    assert "(#23307)" in result.message and "pull request #23307" in commitbisect_report.render(result)


def test_no_pull_refs_no_pull_request(tmp_path, mirror_env):
    result, shas, _ = _run(tmp_path, mirror_env, ["ok"] * 3 + ["bad"] * 3)
    assert result.first.sha == shas[3] and result.first.pull_request == ""
    assert "(none: the message names none" in commitbisect_report.render(result)


def test_a_blob_the_mirror_lacks_is_asked_for_once(tmp_path, monkeypatch):
    """Was: every checkout of a commit whose blob the mirror lacks ran ``git checkout`` over the
    whole tree, which asked the mirror for that blob again (jax's mirror: 24 s a step, walking its
    history); now the absent blob is remembered in the cached repository and later checkouts take
    the present files at once."""
    from jaxcompat.env import gitsource

    repo = make_repo(tmp_path, ["ok", "ok"])
    (repo / "big.bin").write_bytes(b"y" * 1000)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "big")
    blob = _git(repo, "rev-parse", "HEAD:big.bin").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    head = _git(repo, "rev-parse", "HEAD").strip()
    url, cache = str(repo / ".git"), tmp_path / "cache"
    history.fetch(url, cache)
    _, absent = history.checkout(url, head, cache, tmp_path / "one")
    assert absent == ["big.bin"]
    calls = []
    real = gitsource._git
    monkeypatch.setattr(gitsource, "_git", lambda *a, **k: calls.append(a) or real(*a, **k))
    into, absent = history.checkout(url, head, cache, tmp_path / "two")
    assert absent == ["big.bin"] and (into / "state.txt").read_text() == "ok\n"
    assert not [a for a in calls if a[0] == "checkout"], calls


# ------------------------------------------------------------------- crater --bisect


def test_a_crater_report_carries_the_first_bad_commit_of_its_broken_group(tmp_path, mirror_env):
    """A broken group no rule explains, bisected along the moved package's commits (a fake
    repository, fake steps), and the commit in crater.json and beside the group on screen."""
    from jaxcompat.model.dependents import Dependents
    from jaxcompat.model.usertests import UserTest
    from jaxcompat.model.vocab import DependentVerdict, UserTestStatus
    from jaxcompat.operations import craterbisect

    states = ["ok"] * 9 + ["bad"] * 12
    repo = make_repo(tmp_path, states, pr_at=9)
    mirror_env(repo)
    state_dir = tmp_path / "state"
    install, observe, _ = _fakes(state_dir / "cache")
    broken = UserTest("tests/test_x.py::test_y", "failed", "passed", UserTestStatus.BROKEN,
                                message="TypeError: boom", traceback="dep/tests/test_x.py:3: in test_y")
    results = [DependentResult("dep", DependentVerdict.BROKEN, version="1.0", tests=[broken],
                                      ran={"candidate": 1, "baseline": 1})]
    plan = Plan(("pkg==2.0",), ("pkg==1.0",))
    assert craterbisect.moved(plan) is None  # pkg is not of the ecosystem: nothing to walk
    plan = Plan(("jax==2.0", "equinox==0.11.6"), ("jax==1.0", "equinox==0.11.6"))
    assert craterbisect.moved(plan) == ("jax", "1.0", "2.0")

    def bisector(matrix, target, package, **kw):  # the real walk, over the fake repository as "jax"
        assert package == "jax" and kw["pins"] == ["equinox==0.11.6"]
        return commitbisect.bisect_commits(None, TARGET, "pkg", good="1.0", bad="2.0", pins=[], python="3.11",
                                           state_dir=state_dir, repo=URL, install=install, observe=observe,
                                           date="2024-09-02")

    out = tmp_path / "out"
    found = craterbisect.run(out, results, plan, None, Dependents(()), state_dir, bisector=bisector,
                             targeter=lambda g, *a: (TARGET, None, ["equinox==0.11.6"]))
    shas = _git(repo, "rev-list", "--reverse", "HEAD").split()
    [(key, rec)] = found.items()
    assert rec["commit"] == shas[9] and rec["pull_request"] == "#4242"
    text, code = write_crater(out, results, {"candidate": list(plan.candidate), "baseline": list(plan.baseline)},
                              1.0, 1, plan)
    data = __import__("json").loads((out / "crater.json").read_text())
    assert data["groups"][0]["first_bad_commit"]["commit"] == shas[9]
    assert f"first bad commit: pkg {shas[9][:12]}" in text and "#4242" in text and code == 1


# ------------------------------------------------- the good release's place, git failures, exits

CLOSURE = "ValueError: Closure-converted function called with different dynamic arguments"


def _commit(repo: Path, files: dict[str, str], title: str, tag: str = "") -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", title)
    if tag:
        _git(repo, "tag", tag)
    return _git(repo, "rev-parse", "HEAD").strip()


def _cli(tmp_path, monkeypatch, argv: list[str]) -> int:
    """``bisect … --commits`` through the command line, its steps faked: a commit whose state.txt
    says broken cannot be built, "bad" fails with weak-type-closure's error, "ok" passes."""
    from jaxcompat.commands import main

    def installer(package, url, state_dir):
        def install(sha):
            state = history.show(url, sha, "state.txt", state_dir / "cache").strip()
            if state == "broken":
                raise history.HistoryError("setup.py: build failed")
            tree = state_dir / "src" / state  # the package's tree, as the state says
            tree.mkdir(parents=True, exist_ok=True)
            return [f"{package} @ {tree.resolve().as_uri()}"], ""
        return install

    def observer(*args, **kwargs):
        def observe(reqs, step_id):
            bad = reqs[0].rsplit("/", 1)[1] == "bad"
            return observed_cell({"id": step_id, "python": "3.11", "backend": "cpu", "status": "ok", "versions": {},
                                  "results": [{"case": "cases/test_weak_type_closure.py::test_filter_closure_"
                                                       "convert_weak_example", "status": "failed" if bad else "passed",
                                               "error_types": ["ValueError"] if bad else [],
                                               "message": CLOSURE if bad else ""}]})
        return observe
    monkeypatch.setattr(commitbisect, "source_installer", installer)
    monkeypatch.setattr(commitbisect, "step_observer", observer)
    monkeypatch.setattr(commitbisect.releases, "release_date", lambda *a: "2024-09-01")
    return main(["bisect", "weak-type-closure", *argv, "--repo", URL, "--reports", str(tmp_path / "r"),
                 "--state", str(tmp_path / "state"), "jax==0.4.33"])


def test_a_good_release_off_the_bad_ones_first_parent_history_is_refused(tmp_path, mirror_env, monkeypatch, capsys):
    """Was: the good release tagged on a release branch (its cherry-picked fix R) and the bad one on
    main: the walk went from R to main's commits after the fork, found the failure absent at R and
    present at B, and named B (a commit touching NOTES.md only) "shipped in equinox 0.11.7", exit 0;
    the bug was in A, before the fork. Now: exit 2, naming both releases, where the branch leaves
    the bad one's history, and the release to give instead (which then names A)."""
    repo = tmp_path / "origin"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _commit(repo, {"state.txt": "ok\n", "eqx.py": "# 0\n"}, "O: older release", tag="v0.11.5")
    a = _commit(repo, {"state.txt": "bad\n", "eqx.py": "# the bug\n"}, "A: closure conversion")
    _git(repo, "checkout", "-q", "-b", "release", a)
    r = _commit(repo, {"state.txt": "ok\n", "eqx.py": "# the fix\n"}, "R: the fix, cherry-picked", tag="v0.11.6")
    _git(repo, "checkout", "-q", "main")
    _commit(repo, {"NOTES.md": "b\n"}, "B: docs")
    c = _commit(repo, {"NOTES.md": "c\n"}, "C: docs", tag="v0.11.7")
    mirror_env(repo)

    code = _cli(tmp_path, monkeypatch, ["--commits", "--package", "equinox", "--good", "0.11.6", "--bad", "0.11.7"])
    out, err = capsys.readouterr()
    assert code == 2, out + err
    assert "starts at" not in out
    assert f"equinox 0.11.6 ({r[:12]})" in err and f"equinox 0.11.7 ({c[:12]})" in err
    assert f"at {a[:12]}" in err and "--good 0.11.5" in err

    code = _cli(tmp_path, monkeypatch, ["--commits", "--package", "equinox", "--good", "0.11.5", "--bad", "0.11.7"])
    out = capsys.readouterr().out
    assert code == 0 and f"starts at {a[:12]}: A: closure conversion" in out, out


def test_a_good_release_newer_than_the_bad_one_is_refused(tmp_path, mirror_env):
    """The releases given the wrong way round: no first-parent walk from good to bad, said."""
    repo = make_repo(tmp_path, ["ok", "ok", "bad"])
    mirror_env(repo)
    state_dir = tmp_path / "state"
    install, observe, _ = _fakes(state_dir / "cache")
    with pytest.raises(history.HistoryError, match=r"pkg 2\.0 .* not on the first-parent history of the bad one "
                                                   r"pkg 1\.0 .*older than --bad"):
        commitbisect.bisect_commits(None, TARGET, "pkg", good="2.0", bad="1.0", pins=[], python="3.11",
                                    state_dir=state_dir, repo=URL, install=install, observe=observe,
                                    date="2024-09-02")


def test_a_git_failure_in_a_step_skips_that_commit(tmp_path, mirror_env, monkeypatch):
    """Was: a jax commit whose jax/version.py git cannot give (here: absent), or a checkout that
    fails, raised GitError out of the walk ("a bug of jax-compat" on the command line). Now that
    commit is skipped, named with git's words, and the walk goes on: here the change lies beside
    the skipped commits, so the answer is the range."""
    from jaxcompat.env import gitsource

    version = '_version = "0.4.33"\n_minimum_jaxlib_version = "0.4.31"\n'
    repo = tmp_path / "origin"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    shas = [_commit(repo, {"state.txt": "ok\n", "jax/version.py": version}, "c0", tag="jax-v0.4.31")]
    shas += [_commit(repo, {"state.txt": "ok\n", "f1.py": "1\n"}, "c1")]
    (repo / "jax" / "version.py").unlink()
    shas += [_commit(repo, {"state.txt": "ok\n"}, "c2: version.py gone")]
    shas += [_commit(repo, {"state.txt": "bad\n", "jax/version.py": version}, "c3: the change")]
    shas += [_commit(repo, {"state.txt": "bad\n", "f4.py": "4\n"}, "c4")]
    shas += [_commit(repo, {"state.txt": "bad\n", "f5.py": "5\n"}, "c5", tag="jax-v0.4.33")]
    mirror_env(repo)
    monkeypatch.setattr(history.releases, "versions", lambda dist, cache: ["0.4.31", "0.4.33"])
    real_checkout = gitsource.checkout

    def checkout(url, commit, cache_dir, into):  # a lazy blob fetch failing for c3
        if commit == shas[3]:
            raise gitsource.GitError(f"{url}@{commit[:12]}: fatal: could not fetch {commit[:7]} from promisor remote")
        return real_checkout(url, commit, cache_dir, into)
    monkeypatch.setattr(history.gitsource, "checkout", checkout)

    def observe(reqs, step_id):
        tree = Path(reqs[0].split(" @ file://", 1)[1])
        bad = (tree / "state.txt").read_text().strip() == "bad"
        return observed_cell({"id": step_id, "python": "3.11", "backend": "cpu", "status": "ok", "versions": {},
                              "results": [{"case": "cases/test_x.py::test_y", "status": "failed" if bad else "passed",
                                           "error_types": ["TypeError"] if bad else [],
                                           "message": "boom" if bad else ""}]})
    result = commitbisect.bisect_commits(None, TARGET, "jax", good="0.4.31", bad="0.4.33", pins=[], python="3.11",
                                         state_dir=tmp_path / "state", repo=URL, observe=observe, date="2024-09-02")
    steps = {s.commit: s for s in result.steps}
    assert steps[shas[2]].state == BisectState.UNKNOWN and "jax/version.py" in steps[shas[2]].detail
    assert steps[shas[3]].state == BisectState.UNKNOWN and "promisor" in steps[shas[3]].detail
    assert result.judged and result.range == shas[2:5] and result.first.sha == shas[4], result.message
    text = commitbisect_report.render(result)
    for k, why in ((2, "jax/version.py"), (3, "promisor")):
        line = next(ln for ln in text.splitlines() if ln.strip().startswith(shas[k][:12]))
        assert "cannot say" in line and "git failed" in line and "skipped: " in line and why in line, line


def test_every_commit_skipped_is_not_judged(tmp_path, mirror_env, monkeypatch, capsys):
    """Was: every commit could not be built, so nothing was judged, and the command said "the ends
    do not disagree … judged unknown and unknown" with exit 1 (not safe). Now exit 2 (could not
    judge), saying which end could not say and why; ends judged alike stay exit 1."""
    repo = make_repo(tmp_path, ["broken"] * 5)
    mirror_env(repo)
    argv = ["--commits", "--package", "pkg", "--good", "1.0", "--bad", "2.0"]
    code = _cli(tmp_path, monkeypatch, argv)
    out = capsys.readouterr().out
    assert code == 2, out
    assert "nothing judged" in out and "build failed" in out

    judged_alike = tmp_path / "alike"
    judged_alike.mkdir()
    mirror_env(make_repo(judged_alike, ["ok"] * 5))
    assert _cli(judged_alike, monkeypatch, argv) == 1
    assert "do not disagree" in capsys.readouterr().out


def _jaxlib_observer(shas: list[str], jaxlib_bug: bool, case: str = "cases/test_x.py::test_y", message: str = "boom"):
    """A step of a fake jax: commits 0..5 cannot import over jaxlib 0.4.34 (they call ``getrf_hlo``);
    over 0.4.34 the others fail with the target's error where ``jaxlib_bug`` (jaxlib's own failure);
    a commit whose state.txt says bad fails with it over any jaxlib."""
    old, seen = set(shas[:6]), []

    def observe(reqs, step_id):
        tree = Path(reqs[0].split(" @ file://", 1)[1])
        jaxlib = next(r.split("==")[1] for r in reqs if r.startswith("jaxlib=="))
        seen.append((shas.index(tree.name), jaxlib))
        bad = (tree / "state.txt").read_text().strip() == "bad"
        status, errors, msg = (
            ("failed", ["AttributeError"], "module 'jaxlib.lapack' has no attribute 'getrf_hlo'")
            if jaxlib == "0.4.34" and tree.name in old
            else ("failed", ["ValueError"], message) if bad or (jaxlib == "0.4.34" and jaxlib_bug)
            else ("passed", [], ""))
        return observed_cell({"id": step_id, "python": "3.11", "backend": "cpu", "status": "ok", "versions": {},
                              "results": [{"case": case, "status": status, "error_types": errors, "message": msg}]})
    return observe, seen


def _jaxlib_walk(tmp_path, mirror_env, states, jaxlib_bug, needs_034_from=None):
    repo = _jax_repo(tmp_path, states, needs_034_from)
    shas = _git(repo, "rev-list", "--reverse", "HEAD").split()
    mirror_env(repo)
    observe, seen = _jaxlib_observer(shas, jaxlib_bug)
    result = commitbisect.bisect_commits(None, TARGET, "jax", good="1.0", bad="2.0", pins=[], python="3.11",
                                         state_dir=tmp_path / "state", repo=URL, observe=observe, date="2024-10-05")
    return result, shas, seen


def test_a_failure_that_comes_with_jaxlib_is_not_blamed_on_a_commit(tmp_path, mirror_env, jaxlib_index):
    """Was (red team): no jax commit changes anything; commits 0..5 cannot import over jaxlib 0.4.34
    and fell back to 0.4.33 (absent), 6..10 ran over 0.4.34 and showed jaxlib 0.4.34's own failure:
    "fake-rule starts at <commit 6>: change 6", with confidence, from a boundary judged over two
    jaxlibs. Now the ends ran over different jaxlibs, so the bad end is run again over the good
    end's: absent there; no commit is named, the failure follows jaxlib (judged alike: exit 1)."""
    result, shas, seen = _jaxlib_walk(tmp_path, mirror_env, ["ok"] * 11, jaxlib_bug=True)
    assert result.first is None and not result.range, result.message
    assert "follows jaxlib" in result.message and "0.4.33" in result.message and "0.4.34" in result.message
    assert result.judged
    bad_end = next(s for s in result.steps if s.commit == shas[-1])
    assert bad_end.jaxlib == "0.4.33" and bad_end.state == BisectState.ABSENT
    assert bad_end.also == ["0.4.34: present (fail: ValueError)"]
    assert "over jaxlib 0.4.34: present" in commitbisect_report.render(result)


def test_a_boundary_at_a_change_of_jaxlib_is_not_a_commit(tmp_path, mirror_env, jaxlib_index, monkeypatch, capsys):
    """As above, but commits 6..10 accept jaxlib 0.4.34 alone: neither side of the boundary can run
    over the other's jaxlib. No commit is named; the answer says the boundary coincides with the
    change of jaxlib 0.4.33 -> 0.4.34 between commits 5 and 6, and the command exits 2 (not judged),
    not 0."""
    result, shas, _ = _jaxlib_walk(tmp_path, mirror_env, ["ok"] * 11, jaxlib_bug=True, needs_034_from=6)
    assert result.first is None and not result.judged, result.message
    assert "coincides with a change of jaxlib, 0.4.33 -> 0.4.34" in result.message
    assert shas[5][:12] in result.message and shas[6][:12] in result.message  # the boundary's two sides

    from jaxcompat.commands import main
    cli = tmp_path / "cli"
    cli.mkdir()
    mirror_env(_jax_repo(cli, ["ok"] * 11, needs_034_from=6))
    cli_shas = _git(cli / "origin", "rev-list", "--reverse", "HEAD").split()
    observe, _ = _jaxlib_observer(cli_shas, True, "cases/test_weak_type_closure.py::test_filter_closure_"
                                                  "convert_weak_example", CLOSURE)
    monkeypatch.setattr(commitbisect, "step_observer", lambda *a, **k: observe)
    monkeypatch.setattr(commitbisect.releases, "release_date", lambda *a: "2024-10-04")
    code = main(["bisect", "weak-type-closure", "--commits", "--package", "jax", "--good", "1.0", "--bad", "2.0",
                 "--repo", URL, "--reports", str(cli / "r"), "--state", str(cli / "state"), "jaxlib==0.4.33"])
    out = capsys.readouterr().out
    assert code == 2, out
    assert "coincides with a change of jaxlib" in out and " starts at " not in out


def test_a_commit_is_named_over_one_jaxlib_when_the_ends_ran_over_two(tmp_path, mirror_env, jaxlib_index):
    """A real change at commit 6, the ends over different jaxlibs (commit 0 over 0.4.33 after
    ``getrf_hlo``, commit 10 over 0.4.34): the bad end is run again over 0.4.33, still present, and
    the walk goes on over 0.4.33: commit 6 is named, both sides of it judged over jaxlib 0.4.33."""
    result, shas, seen = _jaxlib_walk(tmp_path, mirror_env, ["ok"] * 6 + ["bad"] * 5, jaxlib_bug=False)
    assert result.first is not None and result.first.sha == shas[6] and not result.range, result.message
    by_sha = {s.commit: s for s in result.steps}
    assert by_sha[shas[5]].jaxlib == by_sha[shas[6]].jaxlib == "0.4.33"
    assert all(j == "0.4.33" for k, j in seen if 0 < k < 10)  # the middle over the good end's jaxlib alone
