"""Check an environment that already exists (``check --env PATH``): a cluster module, a CUDA
container, a conda env, a shared virtualenv. Nothing is resolved or installed into it.

The versions are read from the interpreter itself (``importlib.metadata``, in a subprocess), the
backend is the platform its jax reports, and the cases run in the watched runner exactly as in a
built cell: the same plugin, the same rules, the same reports. pytest and the plugin reach that
interpreter through ``PYTHONPATH`` only — a copy of the plugin's two modules and, if the
environment has no pytest, a pytest installed into a temporary folder — so the environment is
left as it was found.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name

from . import envs
from .cell import judge, key_versions, scrub_paths
from .config import Matrix
from .outcomes import CellResult
from .packages import ECOSYSTEM, JAX_PLATFORM_BACKENDS
from .runner import CellRun, Interrupted, run_repeated
from .uvbin import uv_bin

ENVIRONMENT = "existing"
PROBE_TIMEOUT_S = 120.0
# Nothing is written into the environment: no bytecode next to its modules.
_NO_WRITES = {"PYTHONDONTWRITEBYTECODE": "1"}
# What the interpreter says about itself. Runs on any Python 3.8+: stdlib only.
_PROBE = r"""
import importlib.util, json, sys
from importlib import metadata
dists = {}
for d in metadata.distributions():
    name = (d.metadata["Name"] or "").lower().replace("_", "-").replace(".", "-")
    if name and name not in dists:
        dists[name] = d.version
print(json.dumps({"version": "%d.%d.%d" % sys.version_info[:3], "prefix": sys.prefix,
                  "base_prefix": getattr(sys, "base_prefix", sys.prefix), "executable": sys.executable,
                  "distributions": dists, "pytest": importlib.util.find_spec("pytest") is not None,
                  "jax": importlib.util.find_spec("jax") is not None}))
"""
_BACKEND_PROBE = "import jax; print('JAXCOMPAT-BACKEND=' + jax.default_backend())"


class BadEnvironment(Exception):
    """``--env`` does not name a usable environment. ``result`` is the report to write."""

    def __init__(self, message: str, result: CellResult):
        super().__init__(message)
        self.message, self.result = message, result


@dataclass
class Probe:
    python: str  # the interpreter as given (a venv's bin/python must not be resolved: that leaves the venv)
    version: str
    prefix: str
    base_prefix: str
    executable: str
    distributions: dict[str, str]
    has_pytest: bool
    has_jax: bool
    platform: str | None = None  # what jax.default_backend() said, None if jax did not import
    platform_error: str = ""
    timings: dict[str, float] = field(default_factory=dict)


def interpreter(path: str) -> str:
    """The interpreter ``path`` names: itself, or a virtualenv/conda folder's bin/python."""
    p = Path(path).expanduser().absolute()
    if not p.exists():
        raise ValueError(f"--env {path}: no such file or directory; give an environment's python "
                         "(e.g. ~/venvs/jax/bin/python) or its folder")
    if p.is_dir():
        for rel in ("bin/python", "bin/python3", "Scripts/python.exe"):
            if (p / rel).is_file():
                p = p / rel
                break
        else:
            raise ValueError(f"--env {path}: a folder without bin/python, so not a Python environment; "
                             "give the environment's folder or its interpreter (…/bin/python)")
    if not os.access(p, os.X_OK):
        raise ValueError(f"--env {path}: {p.name} is not executable, so not a Python interpreter; "
                         "give the environment's python (…/bin/python)")
    return str(p)


def probe(python: str, cwd: Path) -> Probe:
    """Versions, prefix and backend of ``python``. ValueError: it is not a working Python."""
    t = time.perf_counter()
    try:
        out = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, cwd=cwd,
                             timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL, env={**os.environ, **_NO_WRITES})
    except OSError as e:
        raise ValueError(f"--env {python}: cannot run it ({e.strerror or e}), so not a Python interpreter; "
                         "give the environment's python (…/bin/python)") from None
    except subprocess.TimeoutExpired:
        raise ValueError(f"--env {python}: running it as Python printed nothing in {PROBE_TIMEOUT_S:g} s; "
                         "give the environment's python (…/bin/python)") from None
    try:
        info = json.loads(out.stdout.strip().splitlines()[-1])
        assert isinstance(info, dict)
    except (IndexError, ValueError, AssertionError):
        said = next((ln.strip() for ln in (out.stderr + out.stdout).splitlines()[::-1] if ln.strip()), "nothing")
        raise ValueError(f"--env {python}: not a Python 3.8+ interpreter (asked for its packages, it "
                         f"said: {said[:200]}); give the environment's python (…/bin/python)") from None
    found = Probe(python=python, version=info["version"], prefix=info["prefix"], base_prefix=info["base_prefix"],
                  executable=info["executable"],
                  distributions={canonicalize_name(k): v for k, v in info["distributions"].items()},
                  has_pytest=info["pytest"], has_jax=info["jax"])
    found.timings["probe_s"] = round(time.perf_counter() - t, 3)
    if found.has_jax:
        t = time.perf_counter()
        try:
            out = subprocess.run([python, "-c", _BACKEND_PROBE], capture_output=True, text=True, cwd=cwd,
                                 timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL, env={**os.environ, **_NO_WRITES})
            said = [ln for ln in out.stdout.splitlines() if ln.startswith("JAXCOMPAT-BACKEND=")]
            if said:
                found.platform = said[-1].split("=", 1)[1].strip()
            else:
                found.platform_error = (out.stderr.strip().splitlines() or [f"exit code {out.returncode}"])[-1]
        except subprocess.TimeoutExpired:
            found.platform_error = f"importing jax took over {PROBE_TIMEOUT_S:g} s"
        found.timings["backend_probe_s"] = round(time.perf_counter() - t, 3)
    return found


def installed_backend(distributions: dict[str, str]) -> str:
    """The backend the installed wheels are for (when jax itself cannot say)."""
    if any(d.startswith(("jax-cuda12", "jax-cuda13")) for d in distributions) or "+cuda" in distributions.get(
            "jaxlib", ""):
        return "cuda12"
    if any(d.startswith("libtpu") for d in distributions):
        return "tpu"
    return "cpu"


def cell_backend(platform: str) -> str:
    return JAX_PLATFORM_BACKENDS.get(platform, platform)


def _provide_pytest(found: Probe, harness: tuple[str, ...], dest: Path) -> str:
    """Install the harness (pytest) into ``dest`` for that interpreter. Returns uv's error, or ""."""
    argv = [uv_bin(), "pip", "install", "--quiet", "--target", str(dest), "--python", found.python,
            "--no-python-downloads", *harness]
    proc = envs._run(argv)
    return "" if proc.returncode == 0 else envs._clean(proc.stderr)


def check_existing(path: str, matrix: Matrix, *, state_dir: Path, repeat: int = 1) -> CellResult:
    """Run every case in the environment of ``path`` and judge it like a cell.

    Raises BadEnvironment (with the report to write) when ``path`` is not a Python, has no jax, or
    pytest can be neither found in it nor supplied."""
    t0 = time.perf_counter()
    result = CellResult(id="existing", python="", backend="", status="ok", environment=ENVIRONMENT)
    replacements = {str(matrix.root.resolve()): "<root>", str(Path.home()): "~"}
    with tempfile.TemporaryDirectory(prefix="jaxcompat-env-") as tmp:
        try:
            _check(path, matrix, result, state_dir, Path(tmp), replacements, repeat)
        except BadEnvironment as e:
            e.message = e.message.replace("\n", " ")  # one line on the terminal
            raise
        finally:
            result.timings["total_s"] = round(time.perf_counter() - t0, 3)
            replacements[tmp] = "<tmp>"
            scrub_paths(result, {k: v for k, v in replacements.items() if k and k != os.sep})
    return result


def _bad(result: CellResult, status: str, outcome: str, message: str) -> BadEnvironment:
    result.status, result.outcome, result.message = status, outcome, message
    return BadEnvironment(message, result)


def _check(path: str, matrix: Matrix, result: CellResult, state_dir: Path, tmp: Path,
           replacements: dict[str, str], repeat: int) -> None:
    """One existing environment in stages: identify it, find its backend, provide pytest,
    observe the cases, judge them (as every cell is judged: ``cell.judge``)."""
    python, found = _identify(path, result, tmp, replacements)
    _backend(result, found)
    run_env = _run_env(path, found, matrix.settings.harness, result, tmp)
    imports = [d for d in ECOSYSTEM if d in found.distributions]
    run = _observe(python, matrix, result, run_env, imports, state_dir, repeat)
    if run is not None:
        judge(result, run, matrix.failures, result.backend, found.distributions)


def _identify(path: str, result: CellResult, tmp: Path, replacements: dict[str, str]) -> tuple[str, Probe]:
    """Its interpreter, Python and installed versions (read, never chosen), and the paths the
    reports show as <env>, <base-python> and <python>."""
    replacements[str(Path(path).expanduser().absolute())] = "<env>"
    try:
        python = interpreter(path)
        found = probe(python, tmp)
    except ValueError as e:
        raise _bad(result, "python-missing", "unavailable", str(e)) from None
    result.id = "existing-" + hashlib.sha256(found.prefix.encode()).hexdigest()[:8]
    result.python = ".".join(found.version.split(".")[:2])
    result.timings.update(found.timings)
    for p in (found.prefix, os.path.realpath(found.prefix)):
        replacements[p] = "<env>"
    if found.base_prefix != found.prefix:
        for p in (found.base_prefix, os.path.realpath(found.base_prefix)):
            replacements[p] = "<base-python>"
    for p in (python, found.executable):
        replacements[p] = "<python>"
    result.versions = key_versions(found.distributions)
    result.notes.append(f"existing environment <env> (Python {found.version}, run as <python>): "
                        "versions read from it, nothing resolved or installed")
    if not found.has_jax:
        raise _bad(result, "import-error", "cell-error",
                   f"--env {path}: jax is not installed in that environment (Python {found.version} at "
                   f"{found.prefix}); point --env at the environment that has jax, or install jax there")
    return python, found


def _backend(result: CellResult, found: Probe) -> None:
    """The platform its jax reports; if jax cannot be imported, what its wheels are for."""
    result.backend = cell_backend(found.platform) if found.platform else installed_backend(found.distributions)
    if found.platform is None:
        result.notes.append(f"jax did not import in a probe ({found.platform_error}); backend "
                            f"{result.backend} from the installed wheels")


def _run_env(path: str, found: Probe, harness: tuple[str, ...], result: CellResult, tmp: Path) -> dict[str, str]:
    """The variables pytest runs under: no writes into the environment, its own plugins off, and
    pytest from a temporary folder when the environment has none."""
    pythonpath: list[str] = []  # the plugin itself: runner.plugin_path, as for every cell
    if not found.has_pytest:
        t = time.perf_counter()
        error = _provide_pytest(found, harness, tmp / "pytest")
        result.timings["pytest_install_s"] = round(time.perf_counter() - t, 3)
        if error:
            raise _bad(result, "install-error", "cell-error",
                       f"--env {path}: the environment has no pytest, and installing "
                       f"{' '.join(harness)} into a temporary folder failed ({error.splitlines()[-1]}); "
                       "make the package index (or uv's cache) reachable, or install pytest in that environment")
        pythonpath.append(str(tmp / "pytest"))
        result.notes.append(f"pytest is not in the environment: {' '.join(harness)} ran from a temporary "
                            "folder on PYTHONPATH (the environment is unchanged)")
    if os.environ.get("PYTHONPATH"):
        pythonpath.append(os.environ["PYTHONPATH"])
    return {**_NO_WRITES, "PYTHONPATH": os.pathsep.join(pythonpath),
            # plugins the environment happens to have (xdist, randomly, …) would change the run
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _observe(python: str, matrix: Matrix, result: CellResult, run_env: dict[str, str], imports: list[str],
             state_dir: Path, repeat: int) -> CellRun | None:
    """Run the cases (``repeat`` times for flaky detection); None when the run was interrupted."""
    try:
        run, result.timings["pytest_s"] = run_repeated(
            python, matrix.root, [matrix.settings.cases_dir], repeat, backend=result.backend, imports=imports,
            timeout_s=matrix.settings.case_timeout_s, workdir=state_dir / "runs" / result.id, extra_env=run_env)
    except Interrupted:
        result.status, result.outcome = "not-run", "interrupted"
        result.message = "the run was interrupted before this environment's cases finished"
        return None
    return run
