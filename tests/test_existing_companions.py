"""check --env on an environment without a companion (jax, no equinox): the cases that need the
missing library are skipped and named, the rest are judged (084bcdf: "the candidate does not work:
run-error", exit 1 — pytest stopped at the first case module importing equinox)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from jaxcompat.env import candidate
from jaxcompat.knowledge.outcomes import classify
from jaxcompat.model import verdicts
from jaxcompat.model.outcomes import CellResult, RawResult
from jaxcompat.report.existing import not_installed, not_installed_lines

REPO = Path(__file__).resolve().parent.parent

TOP = "import lineax\n\ndef test_top():\n    assert lineax\n"
INNER = textwrap.dedent('''
    def _helper():
        import optimistix
        return optimistix

    def test_needs_it():
        _helper()

    def test_child_script(tmp_path):
        script = """
    import diffrax
    """
        assert script

    def test_plain():
        assert 1 + 1 == 2

    _SCRIPT = "import jax\\nimport chex\\n"

    def _run_child():
        return _SCRIPT

    def test_script_in_a_constant():
        _run_child()
    ''')


def _run(tmp_path: Path, skip_missing: bool) -> tuple[int, list[dict]]:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "test_top.py").write_text(TOP)
    (cases / "test_inner.py").write_text(INNER)
    events = tmp_path / "events.jsonl"
    env = {**os.environ, "JAXCOMPAT_RESULTS": str(events), "PYTHONPATH": str(REPO)}
    env.pop("JAXCOMPAT_OWN_FRAMES", None)
    if skip_missing:
        env["JAXCOMPAT_SKIP_MISSING"] = "1"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                           "jaxcompat.plugin.pytest_plugin", "--rootdir", str(tmp_path), "-c", os.devnull, str(cases)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    got = [json.loads(line) for line in events.read_text().splitlines()] if events.is_file() else []
    return proc.returncode, [e for e in got if e.get("event") == "result"]


def test_cases_needing_a_library_the_environment_lacks_are_skipped_and_named(tmp_path):
    code, results = _run(tmp_path, skip_missing=True)
    by = {r["case"].split("/")[-1]: r for r in results}
    assert code == 0
    assert by["test_top.py"]["status"] == "skipped" and "needs lineax" in by["test_top.py"]["message"]
    assert by["test_inner.py::test_needs_it"]["status"] == "skipped"
    assert "needs optimistix" in by["test_inner.py::test_needs_it"]["message"]  # through its helper
    assert "needs diffrax" in by["test_inner.py::test_child_script"]["message"]  # in the child script
    assert "needs chex" in by["test_inner.py::test_script_in_a_constant"]["message"]  # a module-level script
    assert by["test_inner.py::test_plain"]["status"] == "passed"  # the rest is judged


def test_the_matrix_keeps_pytests_behaviour(tmp_path):
    code, results = _run(tmp_path, skip_missing=False)
    assert code != 0 and not any("needs" in r.get("message", "") for r in results)


def _cell(*raws: RawResult) -> CellResult:
    cell = CellResult(id="existing-x", python="3.12", backend="cpu", status="ok")
    cell.results = [classify(r, (), {}, "cpu") for r in raws]
    return cell


def test_what_was_not_judged_is_said_by_library():
    cell = _cell(RawResult("cases/test_a.py", "skipped", message="needs equinox, which this environment does "
                                                                 "not have installed (not judged here)"),
                 RawResult("cases/test_b.py::test_x", "skipped",
                           message="Skipped: could not import 'equinox.internal': No module named 'equinox'"),
                 RawResult("cases/test_c.py::test_y", "skipped",
                           message="Skipped: could not import 'equinox.internal': No module named 'equinox.x'"),
                 RawResult("cases/test_d.py::test_z", "passed"))
    assert not_installed(cell) == {"equinox": ["cases/test_a.py", "cases/test_b.py::test_x"]}
    assert "2 case(s) in 2 module(s) need equinox" in not_installed_lines(cell)[0]
    assert verdicts.decide([candidate.item(cell, True)]).code == 0  # the rest was judged: safe
    nothing = _cell(RawResult("cases/test_a.py", "skipped", message="x"))
    assert verdicts.decide([candidate.item(nothing, True)]).code == 2  # every case skipped: not judged
