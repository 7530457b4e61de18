"""The cell runner survives the breakages it exists to detect: a hanging case is killed and
reported ``timeout``, an interpreter crash is reported ``crash`` with its signal or exit code,
and in both cases the remaining cases still run."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from jaxcompat.run.runner import run_cases

REPO = Path(__file__).resolve().parent.parent

CASES = {
    "test_a.py": '''
        import os, signal, time, pytest

        def test_first_passes():
            pass

        def test_hangs():
            time.sleep(600)

        def test_segfaults():
            os.kill(os.getpid(), signal.SIGSEGV)

        def test_exits_hard():
            os._exit(7)

        def test_raises():
            raise ValueError("the documented error")

        @pytest.mark.gpu
        def test_gpu_only():
            pass

        def test_last_passes():
            pass
    ''',
}


def _tree(tmp_path: Path, cases=CASES) -> Path:
    (tmp_path / "cases").mkdir()
    for name, body in cases.items():
        (tmp_path / "cases" / name).write_text(textwrap.dedent(body))
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "--strict-markers"\n')
    return tmp_path


def _run(tmp_path, **kw):
    root = _tree(tmp_path)
    args = dict(backend="cpu", imports=[], timeout_s=3.0, workdir=tmp_path / "work",
                extra_env={"PYTHONPATH": str(REPO)})
    args.update(kw)
    return run_cases(sys.executable, root, ["cases"], **args)


@pytest.mark.integration
def test_hang_crash_and_exit_are_isolated(tmp_path):
    run = _run(tmp_path)
    by_case = {r.case.split("::")[1]: r for r in run.results}
    assert list(by_case) == ["test_first_passes", "test_hangs", "test_segfaults", "test_exits_hard",
                             "test_raises", "test_gpu_only", "test_last_passes"]
    assert by_case["test_first_passes"].status == "passed"
    assert by_case["test_hangs"].status == "timeout"
    assert "3 s" in by_case["test_hangs"].message
    assert by_case["test_segfaults"].status == "crash"
    assert "SIGSEGV" in by_case["test_segfaults"].message
    assert by_case["test_exits_hard"].status == "crash"
    assert "code 7" in by_case["test_exits_hard"].message
    raised = by_case["test_raises"]
    assert raised.status == "failed" and raised.error_types[:2] == ["ValueError", "Exception"]
    assert "the documented error" in raised.message
    assert by_case["test_gpu_only"].status == "skipped" and "gpu" in by_case["test_gpu_only"].message
    assert by_case["test_last_passes"].status == "passed"


def test_import_failure_stops_the_cell_with_the_interpreter_message(tmp_path):
    run = _run(tmp_path, imports=["json", "definitely_not_a_module_xyz"])
    assert run.import_failed
    assert run.imports["json"] == "ok"
    assert "ModuleNotFoundError" in run.imports["definitely_not_a_module_xyz"]
    assert run.results == []


@pytest.mark.integration
def test_versions_are_recorded(tmp_path):
    run = _run(tmp_path, timeout_s=1.0)
    assert run.versions.get("pytest") == pytest.__version__
