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


def test_a_candidate_whose_companions_were_left_out_skips_the_cases_needing_them(tmp_path):
    """check of a candidate that names jax alone: the suite adds diffrax, optimistix, lineax and chex,
    and where none of them imports with the candidate (jax 0.6.0 as of its release day: every
    diffrax then used jax.core.Primitive) they are left out, and equinox with them. A case module that
    imports equinox at its top then stopped pytest: "the candidate does not work: run-error", exit 1,
    for a candidate nothing was seen to break (seen on jax_dataclasses 1.6.3, jax 0.4.30 -> 0.6.0).
    Such a case is skipped and named, as check --env does; the others are judged."""
    from tests.helpers import make_tree
    from tests.test_usertests import RULE  # the fake world's matrix

    make_tree(tmp_path, RULE.replace('pins = { jax = "0.4.33", equinox = "0.11.7" }', 'pins = { jax = "0.4.33" }'))
    (tmp_path / "cases" / "test_needs_equinox.py").write_text(
        "import equinox\n\ndef test_it():\n    pass\n")
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("jaxcompat.plugin.pytest_plugin",)\n')
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "fake_matrix.py"), "check", "--matrix",
                           str(tmp_path / "matrix.toml"), "--reports", str(tmp_path / "reports"), "--state",
                           str(tmp_path / "state"), "--no-verify-escapes", "jax==0.4.33"],
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    data = json.loads((tmp_path / "reports" / "check.json").read_text())
    assert data["status"] == "ok", out
    by = {r["case"]: r for r in data["results"]}
    assert by["cases/test_needs_equinox.py"]["outcome"] == "skipped", by
    assert "needs equinox, which this environment does not have installed" in (
        by["cases/test_needs_equinox.py"]["message"])
    assert "run-error" not in out
