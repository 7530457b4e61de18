"""Progress on long runs: a fake suite through the real runner (pytest in a subprocess, the plugin's
events read as the run goes; no jax) shows tests done of those collected, plainly where there is no
terminal and as one live line where there is; the display never reaches a report and a display
that fails never changes what the run records."""

from __future__ import annotations

import io
import re
import sys
import textwrap
from pathlib import Path

import pytest

from jaxcompat.report.progress import ProgressLine, progress_text
from jaxcompat.run import runner

REPO = Path(__file__).resolve().parent.parent

SUITE = textwrap.dedent('''
    import time, pytest

    @pytest.mark.parametrize("i", range(40))
    def test_slow_enough(i):
        time.sleep(0.05)

    def test_fails():
        assert False, "always"
''')


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True, exist_ok=True)
    (root / "tests" / "test_many.py").write_text(SUITE)
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    return root


def _run(tmp_path: Path, sink, name: str = "work"):
    runner.show_progress(sink)
    try:
        return runner.run_cases(sys.executable, _project(tmp_path), [], backend="cpu", imports=[], timeout_s=60,
                                workdir=tmp_path / name, project=True, label="py3.11-jax0.4.33-cpu",
                                extra_env={"PYTHONPATH": str(REPO)})
    finally:
        runner.show_progress(None)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_count_the_tests_done_of_those_collected(tmp_path, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    out = io.StringIO()  # not a terminal: plain lines, here each tenth (no wait between them)
    run = _run(tmp_path, ProgressLine(out, every_s=30.0, gap_s=0.0))
    text = out.getvalue()
    assert len(run.results) == 41
    assert "\r" not in text and "\033" not in text
    lines = text.splitlines()
    assert len(lines) >= 3, text
    assert all(re.fullmatch(r"  py3\.11-jax0\.4\.33-cpu: \d+/41 tests \(\d+%\)(, 1 failed)?, 0:\d\d elapsed"
                            r"(, about \d+ s left)?", line) for line in lines), text
    assert lines[-1].startswith("  py3.11-jax0.4.33-cpu: 41/41 tests (100%), 1 failed, ")
    done = [int(re.search(r": (\d+)/", line).group(1)) for line in lines]
    assert done == sorted(done) and "left" in text


def test_a_module_s_own_record_is_no_test_done(tmp_path, monkeypatch):
    """A module that skips itself whole and one that cannot be imported each leave a record of their
    own, which is no collected test: the count stays within the tests collected (was "2/1 tests")."""
    monkeypatch.delenv("CI", raising=False)
    root = _project(tmp_path)
    (root / "tests" / "test_many.py").write_text("def test_one():\n    pass\n")
    (root / "tests" / "test_skips.py").write_text("import pytest\npytest.skip('not here', allow_module_level=True)\n")
    (root / "tests" / "test_broken.py").write_text("import no_such_module_xyz\n")
    out = io.StringIO()
    runner.show_progress(ProgressLine(out, every_s=30.0, gap_s=0.0))
    try:
        runner.run_cases(sys.executable, root, [], backend="cpu", imports=[], timeout_s=60, workdir=tmp_path / "w",
                         project=True, label="x", extra_env={"PYTHONPATH": str(REPO)})
    finally:
        runner.show_progress(None)
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("  x: 1/1 tests (100%), 0:") and "failed" not in last, out.getvalue()


@pytest.mark.integration
def test_a_terminal_gets_one_live_line_cleared_at_the_end(tmp_path, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    out = _Tty()
    _run(tmp_path, ProgressLine(out))
    text = out.getvalue()
    assert "\n" not in text and text.startswith("\r  py3.11-jax0.4.33-cpu: ") and text.endswith("\r\033[K")
    assert re.search(r"\d+/41 tests", text)


def test_ci_is_plain_even_on_a_terminal(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert not ProgressLine(_Tty()).live
    monkeypatch.delenv("CI")
    assert ProgressLine(_Tty()).live and not ProgressLine(io.StringIO()).live


def test_plain_lines_come_every_30_s_or_each_tenth_at_most_every_5_s(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    out = io.StringIO()
    line = ProgressLine(out)
    clock = iter([100.0, 101.0, 102.0, 103.0, 200.0, 201.0, 300.0])
    monkeypatch.setattr("jaxcompat.report.progress.time.monotonic", lambda: next(clock))
    line.update("x", 5, 100, 0, 1.0)  # a short run: nothing yet
    line.update("x", 20, 100, 0, 6.0)  # two tenths done, 6 s in: said
    line.update("x", 21, 100, 0, 6.5)  # same tenth
    line.update("x", 35, 100, 0, 7.0)  # a tenth more, 1 s after the last line: not yet
    line.update("x", 36, 100, 0, 100.0)  # 94 s after the last line
    line.end("x", 100, 100, 1, 101.0)
    assert out.getvalue().splitlines() == [
        "  x: 20/100 tests (20%), 0:06 elapsed, about 24 s left",
        "  x: 36/100 tests (36%), 1:40 elapsed, about 3 min left",
        "  x: 100/100 tests (100%), 1 failed, 1:41 elapsed"]
    quiet = io.StringIO()
    short = ProgressLine(quiet)
    short.update("x", 50, 100, 0, 2.0)
    short.end("x", 100, 100, 0, 3.0)
    assert quiet.getvalue() == ""  # nothing said during the side: nothing at its end either


class _Broken:
    def update(self, *counts):
        raise RuntimeError("the display broke")

    end = update


def test_a_display_that_fails_changes_nothing_recorded(tmp_path):
    run = _run(tmp_path, _Broken())
    statuses = [r.status for r in run.results]
    assert run.rc == 1 and len(statuses) == 41  # every test recorded, as without a display
    assert statuses.count("passed") == 40 and statuses.count("failed") == 1
    assert next(r for r in run.results if r.status == "failed").message.startswith("AssertionError: always")


@pytest.mark.integration
def test_the_events_stay_in_the_state_folder(tmp_path):
    _run(tmp_path, ProgressLine(io.StringIO(), gap_s=0.0))
    assert sorted(p.name for p in (tmp_path / "proj").rglob("*") if p.is_file()) == [
        "pyproject.toml", "test_many.py"]  # nothing written beside the project (its reports' folder)
    assert list((tmp_path / "work").glob("events-*.jsonl"))


@pytest.mark.parametrize("done,total,failed,elapsed,text", [
    (0, None, 0, 3, "x: collecting tests… 0:03 elapsed"),
    (10, 100, 0, 60, "x: 10/100 tests (10%), 1:00 elapsed, about 9 min left"),
    (50, 100, 2, 20, "x: 50/100 tests (50%), 2 failed, 0:20 elapsed, about 20 s left"),
    (100, 100, 0, 3725, "x: 100/100 tests (100%), 1:02:05 elapsed"),
])
def test_the_line(done, total, failed, elapsed, text):
    assert progress_text("x", done, total, failed, elapsed) == text
