"""Turn ``nox -l --json -t cell`` into a GitHub Actions job matrix: one job per cell.

GPU cells (backend cuda12 or cuda13) run on the runner label named by the GPU_RUNNER_LABEL
repository variable; where it is unset they are left out of the job matrix and listed as skipped.
A cuda13 cell needs a runner whose NVIDIA driver supports CUDA 13 (580 or newer); elsewhere the
cell reports ``backend-missing`` from its own check.
"""

from __future__ import annotations

import json

from jaxcompat.model.matrix import Matrix

CPU_RUNNER = "ubuntu-latest"
PREFIX = "cell-"


def job_matrix(nox_sessions: list[dict], matrix: Matrix, gpu_runner: str = "") -> tuple[dict, list[str]]:
    """Return ({"include": [job, ...]}, [skipped GPU cell ids])."""
    cells = {c.id: c for c in matrix.cells}
    include, skipped = [], []
    for s in nox_sessions:
        name = s.get("session", "")
        if "cell" not in s.get("tags", []) or not name.startswith(PREFIX):
            continue
        cell = cells.get(name[len(PREFIX):])
        if cell is None:
            raise ValueError(f"nox session {name} names no cell of {matrix.path.name}")
        if cell.backend != "cpu" and not gpu_runner:
            skipped.append(cell.id)
            continue
        include.append({"cell": cell.id, "session": name, "python": cell.python, "backend": cell.backend,
                        "runner": gpu_runner if cell.backend != "cpu" else CPU_RUNNER})
    return {"include": include}, skipped


def github_output(nox_json: str, matrix: Matrix, gpu_runner: str = "") -> str:
    jobs, skipped = job_matrix(json.loads(nox_json), matrix, gpu_runner)
    return f"cells={json.dumps(jobs, separators=(',', ':'))}\nskipped={json.dumps(skipped)}\n"
