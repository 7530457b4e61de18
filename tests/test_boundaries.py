"""Regression tests for the wrong answers a flat house bred: each failed on the code before the
house was built by stage. Stale cached results, credentials and machine paths in reports,
invalid JUnit, a comparison that compared nothing, bad input found after network work began."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from jaxcompat._util.redact import redact_url
from jaxcompat.commands import main
from jaxcompat.knowledge.config import load
from jaxcompat.model.index import index_options
from jaxcompat.model.outcomes import CaseResult, CellResult, RawResult
from jaxcompat.model.usertests import UserTest
from jaxcompat.report import reports
from jaxcompat.report import usertests as user_report
from jaxcompat.report.scrub import Scrubber
from jaxcompat.run import resultcache
from jaxcompat.run.cell import judge
from jaxcompat.run.runner import CellRun
from tests.helpers import MINIMAL, make_tree

REPO = Path(__file__).resolve().parent.parent
DRIVER = REPO / "tests" / "fake_matrix.py"
SECRET = "s3cr3t-t0ken"


# -- the result cache: the whole plugin folder is the harness ------------------------------------

@pytest.mark.parametrize("module", ["backends.py", "loaded.py", "pytest_plugin.py", "packages.py"])
def test_editing_any_module_of_the_plugin_changes_the_cache_key(tmp_path, module):
    plugin = tmp_path / "plugin"
    shutil.copytree(REPO / "jaxcompat" / "plugin", plugin, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tree").mkdir()
    root = make_tree(tmp_path / "tree").parent
    before = resultcache.harness_digest(root, "cases", plugin)
    assert resultcache.harness_digest(root, "cases", plugin) == before  # stable
    with open(plugin / module, "a") as f:
        f.write("\n# an edit\n")
    assert resultcache.harness_digest(root, "cases", plugin) != before


def test_a_module_added_to_the_plugin_changes_the_cache_key(tmp_path):
    plugin = tmp_path / "plugin"
    shutil.copytree(REPO / "jaxcompat" / "plugin", plugin, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tree").mkdir()
    root = make_tree(tmp_path / "tree").parent
    before = resultcache.harness_digest(root, "cases", plugin)
    (plugin / "devices.py").write_text("X = 1\n")
    assert resultcache.harness_digest(root, "cases", plugin) != before


# -- credentials -------------------------------------------------------------------------------

def _everything_written(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_an_index_url_with_credentials_appears_in_no_report_no_terminal_line(tmp_path):
    make_tree(tmp_path, MINIMAL)
    url = f"https://jaxuser:{SECRET}@nightly.example.invalid/simple"
    proc = subprocess.run([sys.executable, str(DRIVER), "check", "--matrix", str(tmp_path / "matrix.toml"),
                           "--reports", str(tmp_path / "reports"), "--state", str(tmp_path / "state"),
                           "--extra-index-url", url, "--no-verify-escapes", "jax==0.4.33"],
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    # a verdict (2 where the fake cells skip every case: nothing judged), never a crash
    assert proc.returncode in (0, 1, 2) and "Traceback" not in out and "bug of jax-compat" not in out, out
    assert "nightly.example.invalid" in out and SECRET not in out and "jaxuser" not in out
    data = json.loads((tmp_path / "reports" / "check.json").read_text())
    assert data["index"]["extra_index_urls"] == ["https://****@nightly.example.invalid/simple"]
    assert SECRET not in _everything_written(tmp_path / "reports")


PATH_TOKEN, QUERY_TOKEN = "AbCdEf123456Tok", "QwErTy987654"
TOKEN_URLS = [f"https://dl.cloudsmith.io/{PATH_TOKEN}/acme/private/python/simple",
              f"https://files.example.invalid/wheels/?token={QUERY_TOKEN}"]


def test_an_index_token_in_the_path_or_query_appears_in_no_report_no_terminal_line(tmp_path):
    """Cloudsmith's and Gemfury's entitlement tokens ride in the URL's path, others in its query."""
    make_tree(tmp_path, MINIMAL)
    proc = subprocess.run([sys.executable, str(DRIVER), "check", "--matrix", str(tmp_path / "matrix.toml"),
                           "--reports", str(tmp_path / "reports"), "--state", str(tmp_path / "state"),
                           "--extra-index-url", TOKEN_URLS[0], "--find-links", TOKEN_URLS[1],
                           "--no-verify-escapes", "jax==0.4.33"], capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1, 2) and "Traceback" not in out, out
    data = json.loads((tmp_path / "reports" / "check.json").read_text())
    assert data["index"]["extra_index_urls"] == ["https://dl.cloudsmith.io/****/acme/private/python/simple"]
    assert data["index"]["find_links"] == ["https://files.example.invalid/wheels/?token=****"]
    for text in (out, _everything_written(tmp_path / "reports")):
        assert PATH_TOKEN not in text and QUERY_TOKEN not in text


@pytest.mark.parametrize("url", ["https://download.pytorch.org/whl/cpu", "https://pypi.org/simple/",
                                 "https://storage.googleapis.com/jax-releases/jax_nightly_releases.html",
                                 "https://storage.googleapis.com/jax-releases/libtpu_releases.html",
                                 "https://us-python.pkg.dev/my-project/my-repo/simple/",
                                 "https://example.jfrog.io/artifactory/api/pypi/pypi-remote/simple",
                                 "https://example.org/wheels/manylinux2014/python311/cu121/"])
def test_an_ordinary_index_url_stays_readable(url):
    assert redact_url(url) == url and str(index_options(None, [url]).extra_index_urls[0]) == url.rstrip("/")


def test_a_token_in_an_index_url_stays_out_of_the_lock_header_and_the_resolvers_message():
    from jaxcompat.env.sources import lock_header

    opts = index_options(None, [TOKEN_URLS[0], "https://pypi.fury.io/1aBcDeFgH2iJkLmN3oP/acme/"], [TOKEN_URLS[1]])
    assert PATH_TOKEN in " ".join(opts.uv_args(resolving=True))  # uv gets the real URLs
    header = lock_header({}, opts)
    assert "cloudsmith.io/****/acme" in header and "pypi.fury.io/****/acme" in header
    assert PATH_TOKEN not in header and QUERY_TOKEN not in header and "1aBcDeFgH2iJkLmN3oP" not in header
    assert header != lock_header({}, index_options(None, [TOKEN_URLS[0].replace("Tok", "Tak")], [TOKEN_URLS[1]]))
    said = opts.hide(f"error: GET {TOKEN_URLS[0]}/jax/: 403 (token {QUERY_TOKEN})")
    assert said == "error: GET https://dl.cloudsmith.io/****/acme/private/python/simple/jax/: 403 (token ****)"


def test_a_bad_index_url_is_refused_without_its_credentials(tmp_path, capsys):
    make_tree(tmp_path, MINIMAL)
    rc = main(["check", "--matrix", str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"),
               "--state", str(tmp_path / "state"), "--index-url", f"ftp://me:{SECRET}@example.invalid/simple",
               "jax==0.4.33"])
    err = capsys.readouterr().err
    assert rc == 2 and "--index-url" in err and "example.invalid" in err and SECRET not in err


def test_the_index_options_as_shown_and_stored_hold_no_credentials():
    opts = index_options(f"https://__token__:{SECRET}@example.invalid/simple", [f"https://{SECRET}@b.invalid/x"])
    assert opts.uv_args(resolving=True)[1].endswith("example.invalid/simple")  # uv gets the real URL
    assert SECRET in " ".join(opts.uv_args(resolving=True))
    assert SECRET not in json.dumps(opts.to_dict()) and SECRET not in opts.describe()
    assert "git+ssh://git@github.com/o/r" in Scrubber({})("from git+ssh://git@github.com/o/r")  # no secret there


def test_a_resolver_message_naming_the_index_is_redacted_in_the_cell():
    cell = CellResult(id="c", python="3.11", backend="cpu", status="unresolvable",
                      message=f"error: Failed to fetch: `https://u:{SECRET}@example.invalid/simple/jax/`",
                      index={"index_url": f"https://u:{SECRET}@example.invalid/simple", "extra_index_urls": [],
                             "find_links": [], "pre": False})
    Scrubber({}).cell(cell)
    assert SECRET not in reports.cell_json(cell)


# -- JUnit -------------------------------------------------------------------------------------

def test_control_characters_give_a_junit_file_that_parses():
    msg = "ValueError: \x1b[31mred\x1b[0m and a NUL \x00 and a form feed \x0c"
    cell = CellResult(id="c\x1b", python="3.11", backend="cpu", status="ok", results=[
        CaseResult(case="cases/test_x.py::test_a", failure=None, expected="pass", outcome="regression",
                   duration_s=0.1, message=msg, error_type="ValueError")])
    root = ET.fromstring(reports.junit_xml(cell))
    failure = root.find("./testsuite/testcase/failure")
    assert failure is not None and "#x1B[31mred" in failure.text and "#x00" in failure.text
    tests = [UserTest(test="tests/test_u.py::test_b", cls="fails", baseline=None, candidate="failed",
                                message=msg, traceback="\x1b[1m  File x\x1b[0m")]
    root = ET.fromstring(user_report.junit(tests, "project\x07"))
    assert root.find("./testsuite/testcase/failure") is not None


# -- report --compare --------------------------------------------------------------------------

def _check_json(path: Path, cid: str, outcome: str) -> Path:
    cell = CellResult(id=cid, python="3.11", backend="cpu", status="ok", versions={"jax": "0.4.33"}, results=[
        CaseResult(case="cases/test_x.py::test_a", failure=None, expected="pass", outcome=outcome, duration_s=0.1,
                   message="" if outcome == "pass" else "ValueError: boom", error_type="")])
    path.write_text(reports.cell_json(cell) + "\n")
    return path


def test_compare_two_single_cell_reports_compares_their_cells(tmp_path, capsys):
    make_tree(tmp_path, MINIMAL)
    old = _check_json(tmp_path / "old.json", "check-aaaa", "pass")
    new = _check_json(tmp_path / "new.json", "check-bbbb", "regression")
    rc = main(["report", "--matrix", str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"),
               "--compare", str(old), "--against", str(new)])
    out = capsys.readouterr().out
    assert rc == 1, out  # the case regressed
    assert "test_a" in out and "(new)" not in out
    rc = main(["report", "--matrix", str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"),
               "--compare", str(old), "--against", str(old)])
    assert rc == 0


@pytest.mark.parametrize("content, says", [(None, "cannot read it"), ("{not json", "not JSON"),
                                           ('{"what": 1}', "neither a report of cells")])
def test_compare_with_a_file_it_cannot_read_is_an_error_naming_it(tmp_path, capsys, content, says):
    make_tree(tmp_path, MINIMAL)
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    good = _check_json(tmp_path / "good.json", "check-aaaa", "pass")
    rc = main(["report", "--matrix", str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"),
               "--compare", str(bad), "--against", str(good)])
    err = capsys.readouterr().err
    assert rc == 2 and str(bad) in err and says in err


def test_a_single_cell_against_a_run_without_it_is_refused(tmp_path, capsys):
    make_tree(tmp_path, MINIMAL)
    one = _check_json(tmp_path / "check.json", "check-aaaa", "pass")
    run = tmp_path / "matrix.json"
    run.write_text(json.dumps({"cells": [json.loads(_check_json(tmp_path / f"{i}.json", f"cell{i}", "pass").read_text())
                                         for i in range(2)]}))
    rc = main(["report", "--matrix", str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"),
               "--compare", str(one), "--against", str(run)])
    assert rc == 2 and "nothing would be compared" in capsys.readouterr().err


# -- machine paths -----------------------------------------------------------------------------

def test_a_path_clipped_in_a_long_message_is_scrubbed_first(tmp_path):
    env = "/opt/machine/home/someone/.jaxcompat/envs/base"
    message = "E" * 990 + f" {env}/lib/python3.11/site-packages/jax/_src/x.py " + "F" * 1500
    matrix = load(make_tree(tmp_path, MINIMAL))
    result = CellResult(id="c", python="3.11", backend="cpu", status="ok")
    run = CellRun(results=[RawResult(case="cases/test_demo.py::test_control_ok", status="failed",
                                     error_types=["ValueError"], message=message, traceback=f'  File "{env}/a.py"')],
                  versions={"pytest": "8.0.0"})
    judge(result, run, matrix.failures, "cpu", {}, Scrubber({env: "<env>"}))
    stored = result.results[0]
    assert "[…]" in stored.message  # it was clipped
    assert "/opt/mach" not in stored.message + stored.traceback and "<env>" in stored.traceback


def test_a_path_cut_by_the_plugins_clip_mark_is_scrubbed():
    env = "/opt/machine/home/someone/.jaxcompat/envs/base"
    text = "head /opt/machine/home/som\n[…]\none/.jaxcompat/envs/base/lib/x.py tail"
    assert "/opt/machine" not in Scrubber({env: "<env>"})(text)


USER_TESTS = '''
import os


def test_import_fails_naming_the_environment():
    raise ImportError("cannot import name 'xla_bridge' from 'jax.lib' ("
                      + os.environ["FAKE_ENV"] + "/lib/python3.11/site-packages/jax/lib/__init__.py)")


def test_home():
    assert os.path.expanduser("~") + "/secret-project/data.npy" == "nothing"


def test_tmp(tmp_path):
    open(tmp_path / "model.eqx").read()
'''


def test_the_users_own_test_messages_and_tracebacks_hold_no_machine_path(tmp_path):
    make_tree(tmp_path, MINIMAL)
    user = tmp_path / "user"
    user.mkdir()
    (user / "test_user.py").write_text(USER_TESTS)
    state = tmp_path / "state"
    fake_env = str(state / "envs" / "check-0123abcd")
    proc = subprocess.run([sys.executable, str(DRIVER), "check", "--matrix", str(tmp_path / "matrix.toml"),
                           "--reports", str(tmp_path / "reports"), "--state", str(state),
                           "--tests", str(user), "--no-verify-escapes", "jax==0.4.33"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "FAKE_ENV": fake_env})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    written = _everything_written(tmp_path / "reports")
    assert "xla_bridge" in written and "secret-project" in written
    assert str(state) not in written and str(tmp_path) not in written and str(Path.home()) + "/" not in written
    assert str(state) not in proc.stdout
    assert "pytest-of-" not in written and "No such file or directory: '<pytest-tmp>/test_tmp0/model.eqx'" in written


def test_pytests_temporary_folders_become_a_placeholder():
    """tmp_path under any temporary folder (the user's name, the run's number), under home too."""
    scrub = Scrubber({str(Path.home()): "~"})
    assert scrub("No such file: '/tmp/pytest-of-jane/pytest-335/test_save0/model.eqx'") == (
        "No such file: '<pytest-tmp>/test_save0/model.eqx'")
    assert scrub("/private/var/folders/x_/q1/T/pytest-of-jane.doe/pytest-current/t0 and "
                 + str(Path.home()) + "/tmp/pytest-of-jane/pytest-3/t1") == "<pytest-tmp>/t0 and <pytest-tmp>/t1"
    assert scrub("test_x[/tmp/pytest-of-bob/pytest-12/d]") == "test_x[<pytest-tmp>/d]"
    assert scrub("/tmp/data/pytest-of-it.txt") == "/tmp/data/pytest-of-it.txt"  # not a pytest folder



PATH_IDS = '''
import glob, os, pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(HERE, "data", "*.json"))))
def test_example(path):  # fails once, then passes: flaky only if its re-run finds it by its own id
    marker = path + ".seen"
    if not os.path.exists(marker):
        open(marker, "w").close()
        raise RuntimeError("first run fails")
'''


def test_a_test_parametrized_over_absolute_paths_is_named_without_them_and_still_re_run(tmp_path):
    """pytest's id of a test parametrized over its data files by absolute path names the checkout: the
    project is <project> in every report and on the terminal, on both sides alike (compared as before),
    and pytest gets its own id back on a re-run (the test is flaky, not absent)."""
    make_tree(tmp_path, MINIMAL)
    user = tmp_path / "user"
    (user / "data").mkdir(parents=True)
    (user / "data" / "example1.json").write_text("{}\n")
    (user / "test_user.py").write_text(PATH_IDS)
    proc = subprocess.run([sys.executable, str(DRIVER), "check", "--matrix", str(tmp_path / "matrix.toml"),
                           "--reports", str(tmp_path / "reports"), "--state", str(tmp_path / "state"),
                           "--tests", str(user), "--no-verify-escapes", "jax==0.4.33"],
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, out
    written = _everything_written(tmp_path / "reports")
    assert str(tmp_path) not in written and str(user) not in out  # (the reports folder given is named)
    data = json.loads((tmp_path / "reports" / "check.json").read_text())
    [test] = data["user_tests"]
    assert test["test"] == "test_user.py::test_example[<project>/data/example1.json]"
    assert test["class"] == "flaky", test


# -- bad input, before any network work --------------------------------------------------------

@pytest.mark.parametrize("argv, option", [(["--jax", "=>0.6"], "--jax"), (["--shard", "a/b"], "--shard"),
                                          (["--shard", "3/2"], "--shard"), (["--equinox", "0.11"], "--equinox"),
                                          (["--jobs", "0"], "--jobs")])
def test_survey_refuses_bad_options_before_any_network_work(tmp_path, monkeypatch, capsys, argv, option):
    from jaxcompat.operations import compat_report, survey

    early = "read the index before checking the options"
    monkeypatch.setattr(compat_report, "gather", lambda cache: pytest.fail(early))
    monkeypatch.setattr(survey, "space", lambda rel, cache: pytest.fail(early))
    make_tree(tmp_path, MINIMAL)
    with pytest.raises(SystemExit) as e:
        main(["survey", "--matrix", str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"),
              "--state", str(tmp_path / "state"), *argv])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "argument " in err and option in err.split("argument ")[1] and "Traceback" not in err


def test_a_damaged_baseline_is_said_before_the_nightly_runs(tmp_path, monkeypatch, capsys):
    from jaxcompat.operations import latest

    monkeypatch.setattr(latest, "run_latest", lambda *a, **k: pytest.fail("ran before reading the baseline"))
    make_tree(tmp_path, MINIMAL)
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"cells": [')
    rc = main(["latest", "--matrix", str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"),
               "--state", str(tmp_path / "state"), "--baseline", str(baseline)])
    err = capsys.readouterr().err
    assert rc == 2 and str(baseline) in err and "not JSON" in err


# -- records, not strings ----------------------------------------------------------------------

def test_the_phase_is_a_field_and_a_report_of_before_reads_the_same():
    """The plugin says where a test failed in a field; a record written when the phase was a
    message prefix ("[collect] …") is read into the same record."""
    from jaxcompat.model.vocab import Phase

    new = RawResult.from_dict({"case": "t.py", "status": "failed", "message": "ImportError: x", "phase": "collect"})
    old = RawResult.from_dict({"case": "t.py", "status": "failed", "message": "[collect] ImportError: x"})
    assert new == old and old.phase is Phase.COLLECT and old.message == "ImportError: x"
    case = CaseResult.from_dict({"case": "t.py::a", "outcome": "regression", "message": "[setup] KeyError: k"})
    assert case.phase is Phase.SETUP and case.message == "KeyError: k"
    cell = CellResult(id="c", python="3.11", backend="cpu", status="ok", results=[case, CaseResult.from_dict(
        {"case": "t.py::b", "outcome": "pass"})])
    stored = json.loads(reports.cell_json(cell))["results"]
    assert stored[0]["phase"] == "setup" and "phase" not in stored[1]  # a test's own result reads as before


def test_a_word_outside_its_vocabulary_is_refused_where_it_is_set():
    with pytest.raises(ValueError, match="is not a CellStatus; use one of: ok, python-missing"):
        CellResult(id="c", python="3.11", backend="cpu", status="resolution-error")
    cell = CellResult(id="c", python="3.11", backend="cpu", status="ok")
    with pytest.raises(ValueError, match="is not a CellOutcome"):
        cell.outcome = "fine"
