"""The GitHub Actions workflow: valid against the published schema (offline), and its job matrix
is exactly the cells of matrix.toml (one job per cell; GPU cells only with a GPU runner)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jaxcompat.knowledge.config import load, parse
from jaxcompat.operations.ci import job_matrix
from tests.helpers import check_jsonschema

REPO = Path(__file__).resolve().parent.parent
WORKFLOW = REPO / ".github" / "workflows" / "matrix.yml"


NIGHTLY = WORKFLOW.with_name("nightly.yml")


@pytest.mark.parametrize("workflow", [WORKFLOW, WORKFLOW.with_name("survey.yml"), NIGHTLY,
                                      WORKFLOW.with_name("crater.yml")], ids=lambda p: p.name)
def test_workflow_passes_the_github_workflow_schema(workflow):
    check_jsonschema("vendor.github-workflows", workflow)


def _nox_cells() -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "nox", "-l", "--json", "-t", "cell"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_job_matrix_equals_the_cells_of_matrix_toml():
    matrix = load(REPO / "matrix.toml")
    jobs, skipped = job_matrix(_nox_cells(), matrix, gpu_runner="")
    ids = [j["cell"] for j in jobs["include"]] + skipped
    assert sorted(ids) == sorted(c.id for c in matrix.cells)
    assert len(ids) == len(set(ids))
    for job in jobs["include"]:
        cell = matrix.cell(job["cell"])
        assert job["session"] == f"cell-{cell.id}" and job["python"] == cell.python
        assert job["runner"] == "ubuntu-latest" and cell.backend == "cpu"
    assert skipped == [c.id for c in matrix.cells if c.backend != "cpu"]


def test_gpu_cells_go_to_the_gpu_runner_label():
    matrix = parse({"cell": [{"id": "cpu1", "pins": {"jax": "0.4.33"}},
                             {"id": "gpu1", "backend": "cuda12", "pins": {"jax": "0.4.33"}}]}, REPO / "m.toml")
    sessions = [{"session": f"cell-{i}", "tags": ["cell"]} for i in ("cpu1", "gpu1")] + [
        {"session": "tests", "tags": []}]
    jobs, skipped = job_matrix(sessions, matrix, gpu_runner="linux-gpu-t4")
    assert {j["cell"]: j["runner"] for j in jobs["include"]} == {"cpu1": "ubuntu-latest", "gpu1": "linux-gpu-t4"}
    assert skipped == []
    jobs, skipped = job_matrix(sessions, matrix, gpu_runner="")
    assert [j["cell"] for j in jobs["include"]] == ["cpu1"] and skipped == ["gpu1"]


def test_a_cell_job_restores_its_results_under_the_digest_of_its_inputs():
    """Unchanged inputs: the results come back from the Actions cache, and the uv cache (the
    install) is not even restored. The key is what `jaxcompat cache-key` prints."""
    text = WORKFLOW.read_text()
    cell_job = text[text.index("\n  cell:"):text.index("\n  merge:")]
    key = cell_job.index("python -m jaxcompat cache-key --cell")
    results = cell_job.index("key: results-${{ matrix.cell }}-${{ steps.key.outputs.key }}")
    install = cell_job.index("if: steps.results.outputs.cache-hit != 'true'")
    run = cell_job.index("nox -s \"${{ matrix.session }}\"")
    assert key < results < install < run
    assert "path: .jaxcompat/results" in cell_job


def test_the_nightly_regenerates_runs_latest_and_proposes_only_what_changed():
    """Scheduled and on demand; the timeline before latest (which refreshes the baseline only when
    tonight differs); the Pythons the newest releases need; the proposal only when a file changed,
    limited to the two files it refreshes; the verdicts uploaded whatever happened."""
    from ruamel.yaml import YAML  # check-jsonschema's YAML reader (nox -s tests installs it)

    wf = YAML(typ="safe").load(NIGHTLY.read_text())
    on = wf["on"]
    assert on["schedule"][0]["cron"] and "workflow_dispatch" in on
    (job,) = wf["jobs"].values()
    steps = job["steps"]
    runs = [s.get("run", "") for s in steps]
    order = [next(i for i, r in enumerate(runs) if needle in r)
             for needle in ("nox -s timeline", "nox -s tests", "nox -s latest -- --refresh-baseline", "git diff --")]
    assert order == sorted(order)
    pythons = str(next(s["with"]["python-version"] for s in steps if "setup-python" in s.get("uses", ""))).split()
    assert {"3.12", "3.13"} <= set(pythons)
    propose = next(s for s in steps if "create-pull-request" in s.get("uses", ""))
    assert propose["if"] == "steps.changes.outputs.changed == 'true'"
    assert propose["with"]["add-paths"].split() == ["jaxcompat/data/jax_api_timeline.json",
                                                    "jaxcompat/data/equinox_api_timeline.json", "reports/baseline.json"]
    upload = next(s for s in steps if "upload-artifact" in s.get("uses", ""))
    assert upload["if"] == "always()" and "reports/nightly.diff" in upload["with"]["path"]
    assert any("GITHUB_STEP_SUMMARY" in r for r in runs)
