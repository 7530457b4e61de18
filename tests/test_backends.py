"""Backends as installed: cpu, cuda12, cuda13, rocm, tpu, read from the wheels and from what jax
reports; which marker runs where; and the GPU configurations that cannot be installed, refused with
the file, the key and the fix. No jax: distributions are names, platforms are strings."""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxcompat.env import envs
from jaxcompat.env.candidate import CandidateError, candidate_cell
from jaxcompat.knowledge.config import load, parse
from jaxcompat.model.matrix import ConfigError
from jaxcompat.operations.ci import job_matrix
from jaxcompat.plugin.backends import BACKENDS, backend_of, describe_device, installed_backend, marker
from jaxcompat.run import cell
from tests.helpers import MINIMAL, make_tree

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("dists, expected", [
    ({"jax": "0.11.2", "jaxlib": "0.11.2"}, "cpu"),
    ({"jax": "0.11.2", "jax-cuda13-plugin": "0.11.2", "jax-cuda13-pjrt": "0.11.2"}, "cuda13"),
    ({"jax": "0.4.33", "jax-cuda12-plugin": "0.4.33", "jax-cuda12-pjrt": "0.4.33"}, "cuda12"),
    ({"jax-cuda12-plugin": "0.7.2", "jax-cuda13-plugin": "0.7.2"}, "cuda13"),  # jax tries cuda13 first
    ({"jax": "0.6.0", "jax-rocm60-plugin": "0.6.0", "jax-rocm60-pjrt": "0.6.0"}, "rocm"),
    ({"jax": "0.4.13", "jaxlib": "0.4.13+cuda12.cudnn89"}, "cuda12"),  # old jax: a jaxlib CUDA build
    ({"jax": "0.4.13", "jaxlib": "0.4.13+cuda11.cudnn86"}, "cuda11"),
    ({"jax": "0.4.35", "libtpu": "0.0.2"}, "tpu"),
])
def test_the_installed_wheels_name_the_backend(dists, expected):
    assert installed_backend(dists) == expected


@pytest.mark.parametrize("platform, dists, version, expected", [
    ("gpu", {"jax-cuda13-plugin": "0.11.2"}, "", "cuda13"),  # the H100 run: was reported cuda12
    ("gpu", {"jax-cuda12-plugin": "0.4.33"}, "", "cuda12"),
    ("gpu", {"jax-rocm7-plugin": "0.8.0"}, "", "rocm"),
    ("gpu", {}, "cuda 13000", "cuda13"),  # no wheel says it (a CUDA jaxlib built locally): the client does
    ("gpu", {}, "rocm 60342", "rocm"),
    ("gpu", {}, "", "gpu"),  # nothing names the line: not guessed
    ("cpu", {"jax-cuda13-plugin": "0.11.2"}, "", "cpu"),  # CUDA wheels, jax on the CPU (no device, JAX_PLATFORMS)
    ("tpu", {"libtpu": "0.0.2"}, "", "tpu"),
])
def test_the_backend_is_what_jax_reports_and_the_wheels_say(platform, dists, version, expected):
    assert backend_of(platform, dists, version) == expected


def test_the_gpu_marker_runs_on_every_cuda_and_rocm_backend():
    assert {b: marker(b) for b in BACKENDS} == {"cpu": "cpu", "cuda12": "gpu", "cuda13": "gpu", "rocm": "gpu",
                                                "tpu": "tpu"}
    assert marker("gpu") == "gpu" and marker("cuda11") == "gpu"


def test_a_report_names_the_device_and_its_cuda_versions():
    h100 = {"platform": "gpu", "kind": "NVIDIA H100 80GB HBM3", "count": 1, "compute_capability": "9.0",
            "cuda_runtime": "13.0", "cuda_driver": "13.0", "cudnn": "9.12.0", "platform_version": "cuda 13000"}
    assert describe_device(h100) == ("1 x NVIDIA H100 80GB HBM3 (gpu; compute capability 9.0; CUDA runtime 13.0; "
                                     "driver supports CUDA 13.0; cuDNN 9.12.0; cuda 13000)")
    assert describe_device({"platform": "cpu", "kind": "cpu", "count": 1, "platform_version": "cpu"}) == "1 x cpu"
    assert describe_device({}) == ""


def _cells(tmp_path, cell: str):
    return load(make_tree(tmp_path, MINIMAL + cell))


def test_a_cuda13_cell_installs_jax_cuda13(tmp_path):
    m = _cells(tmp_path, '\n[[cell]]\nid = "g"\nbackend = "cuda13"\npins = { jax = "0.11.2", equinox = "0.13.8" }\n')
    g = m.cell("g")
    assert g.backend == "cuda13" and envs.backend_requirements(g) == ["jax[cuda13]==0.11.2"]
    m = _cells(tmp_path, '\n[[cell]]\nid = "g"\nbackend = "cuda12"\npins = { jax = "0.4.33" }\n')
    assert envs.backend_requirements(m.cell("g")) == ["jax[cuda12]==0.4.33"]


@pytest.mark.parametrize("backend, jax, since", [("cuda13", "0.6.2", "0.7.0"), ("cuda12", "0.4.20", "0.4.22")])
def test_a_gpu_backend_older_than_its_jax_extra_is_a_config_error(tmp_path, backend, jax, since):
    with pytest.raises(ConfigError) as info:
        _cells(tmp_path, f'\n[[cell]]\nid = "g"\nbackend = "{backend}"\npins = {{ jax = "{jax}" }}\n')
    e = info.value
    assert e.path.endswith("matrix.toml") and e.key == "cell[1].backend"
    assert f"jax {jax} does not declare the {backend} extra" in e.problem and f"jax >= {since}" in e.fix


def test_a_grid_of_cuda13_cells_names_the_grid_cell(tmp_path):
    with pytest.raises(ConfigError) as info:
        _cells(tmp_path, '\n[[grid]]\nid = "j{jax}"\nbackend = "cuda13"\naxes = { jax = ["0.11.2", "0.4.33"] }\n')
    assert info.value.key == "grid[0][j0.4.33].backend"


def test_rocm_is_a_backend_of_existing_environments_only(tmp_path):
    with pytest.raises(ConfigError) as info:
        _cells(tmp_path, '\n[[cell]]\nid = "r"\nbackend = "rocm"\npins = { jax = "0.11.2" }\n')
    assert "no rocm extra" in info.value.problem and "check --env" in info.value.fix
    # a rule may still say it holds on rocm only (an existing ROCm environment is judged by it)
    m = load(make_tree(tmp_path, MINIMAL.replace('fix = "upgrade', 'backend = ["rocm"]\nfix = "upgrade')))
    assert m.failures[0].backends == ("rocm",)


def test_an_unknown_backend_lists_every_known_one(tmp_path):
    with pytest.raises(ConfigError) as info:
        _cells(tmp_path, '\n[[cell]]\nid = "g"\nbackend = "cuda"\npins = { jax = "0.11.2" }\n')
    assert info.value.fix == "use one of: cpu, cuda12, cuda13, rocm, tpu"


@pytest.mark.parametrize("req, backend", [("jax[cuda13]==0.11.2", "cuda13"), ("jax[cuda12]==0.4.33", "cuda12"),
                                          ("jax[cuda12_pip]==0.4.33", "cuda12"), ("jax==0.11.2", "cpu")])
def test_check_reads_the_backend_from_the_jax_extra(req, backend):
    assert candidate_cell([req], python="3.12").backend == backend


def test_check_refuses_a_cuda13_jax_that_never_declared_it():
    with pytest.raises(CandidateError, match=r"jax 0\.6\.2 does not declare the cuda13 extra .*jax >= 0\.7\.0"):
        candidate_cell(["jax[cuda13]==0.6.2"], python="3.11")


@pytest.mark.parametrize("backend", ["cuda12", "cuda13"])
def test_a_cuda_cell_without_a_gpu_is_backend_missing(monkeypatch, backend):
    monkeypatch.setattr(cell.shutil, "which", lambda name: None)
    assert cell.backend_missing(backend) == f"no NVIDIA GPU here (nvidia-smi not found): the {backend} cell is skipped"
    assert cell.backend_missing("cpu") == ""


def test_both_cuda_lines_go_to_the_gpu_runner():
    m = parse({"cell": [{"id": "c", "pins": {"jax": "0.11.2"}},
                        {"id": "g12", "backend": "cuda12", "pins": {"jax": "0.4.33"}},
                        {"id": "g13", "backend": "cuda13", "pins": {"jax": "0.11.2"}}]}, REPO_ROOT / "m.toml")
    sessions = [{"session": f"cell-{i}", "tags": ["cell"]} for i in ("c", "g12", "g13")]
    jobs, skipped = job_matrix(sessions, m, gpu_runner="gpu-h100")
    assert {j["cell"]: j["runner"] for j in jobs["include"]} == {"c": "ubuntu-latest", "g12": "gpu-h100",
                                                                 "g13": "gpu-h100"}
    assert job_matrix(sessions, m, gpu_runner="")[1] == ["g12", "g13"]


class _Smi:
    def __init__(self, header: str):
        self.header = header

    def __call__(self, argv, **kw):
        import subprocess

        text = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)\n" if argv[1:] == ["-L"] else self.header
        return subprocess.CompletedProcess(argv, 0, text, "")


@pytest.mark.parametrize("header, backend, missing", [
    ("| NVIDIA-SMI 550.54.15  Driver Version: 550.54.15  CUDA Version: 12.4 |", "cuda13", True),
    ("| NVIDIA-SMI 550.54.15  Driver Version: 550.54.15  CUDA Version: 12.4 |", "cuda12", False),
    ("| NVIDIA-SMI 580.65.06  Driver Version: 580.65.06  CUDA Version: 13.0 |", "cuda13", False),
    ("| NVIDIA-SMI 580.65.06  Driver Version: 580.65.06  CUDA Version: 13.0 |", "cuda12", False),
])
def test_a_cuda13_cell_needs_a_driver_for_cuda13(monkeypatch, header, backend, missing):
    monkeypatch.setattr(cell.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(cell.subprocess, "run", _Smi(header))
    said = cell.backend_missing(backend)
    assert bool(said) == missing
    if missing:
        assert "supports CUDA 12.4 only" in said and "580 or newer" in said


def test_the_reports_name_the_device(tmp_path):
    from jaxcompat.model.outcomes import CellResult
    from jaxcompat.report.matrixreport import write_matrix
    from jaxcompat.report.reports import markdown

    gpu = CellResult(id="g", python="3.12", backend="cuda13", status="ok",
                     device={"platform": "gpu", "kind": "NVIDIA H100 80GB HBM3", "count": 1, "cuda_runtime": "13.0"})
    cpu = CellResult(
        id="c", python="3.12", backend="cpu", status="ok", device={"platform": "cpu", "kind": "cpu", "count": 1}
    )
    rows = {line.split("|")[2].strip(): line.split("|")[4].strip() for line in markdown([gpu, cpu], {}).splitlines()
            if line.startswith("| ") and "`" in line.split("|")[2]}
    assert rows == {"`g`": "cuda13 (NVIDIA H100 80GB HBM3)", "`c`": "cpu"}
    write_matrix([gpu, cpu], tmp_path, {})
    page = (tmp_path / "matrix.html").read_text()
    assert "<dd>1 x NVIDIA H100 80GB HBM3 (gpu; CUDA runtime 13.0)</dd>" in page and "<dd>1 x cpu</dd>" in page
