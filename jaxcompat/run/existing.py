"""Check an environment that already exists (``check --env PATH``): a cluster module, a CUDA
container, a conda env, a shared virtualenv. Nothing is resolved or installed into it.

The versions are read from the interpreter itself, in a subprocess, as its import system loads them
(``jaxcompat.plugin.loaded.scan``: the first distribution of a name on its ``sys.path``; a copy behind it
is reported as shadowed); the backend is read from what is installed and what its jax reports
(``jaxcompat.plugin.backends``), with the device's kind and CUDA versions; and the cases run in the watched
runner exactly as in a built cell: the same plugin, the same rules, the same reports. Every folder
on its ``sys.path`` that holds distributions is scrubbed from the reports (``<site-N>`` when it is
outside the environment's own prefix), not only the prefix. pytest and the plugin reach that
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

from jaxcompat._util.statedir import StateDir
from jaxcompat._util.uvbin import uv_bin
from jaxcompat.env import envs
from jaxcompat.model.matrix import Matrix
from jaxcompat.model.outcomes import CellResult
from jaxcompat.model.vocab import CellOutcome, CellStatus, EnvironmentKind
from jaxcompat.plugin import backends, loaded
from jaxcompat.plugin.backends import backend_of, describe_device
from jaxcompat.plugin.packages import ECOSYSTEM, KEY_DISTS, SKIP_MISSING
from jaxcompat.report.scrub import Scrubber
from jaxcompat.run.cell import judge, key_versions
from jaxcompat.run.runner import CellRun, Interrupted, run_repeated

ENVIRONMENT = EnvironmentKind.EXISTING
PROBE_TIMEOUT_S = 120.0
# Nothing is written into the environment: no bytecode next to its modules.
_NO_WRITES = {"PYTHONDONTWRITEBYTECODE": "1"}
# What the interpreter says about itself: the one reader of versions (jaxcompat/plugin/loaded.py, whose
# source runs there as a script), then a summary. Runs on any Python 3.8+: stdlib only.
_PROBE = (Path(loaded.__file__).read_text(encoding="utf-8") + r"""
import importlib.util, json, sys
found = scan()
print(json.dumps({"version": "%d.%d.%d" % sys.version_info[:3], "prefix": sys.prefix,
                  "base_prefix": getattr(sys, "base_prefix", sys.prefix), "executable": sys.executable,
                  "distributions": found["distributions"], "shadowed": found["shadowed"],
                  "sites": found["sites"], "path": [p for p in sys.path if p],
                  "pytest": importlib.util.find_spec("pytest") is not None,
                  "jax": importlib.util.find_spec("jax") is not None}))
""")
# What its jax reports: the platform and the devices (jaxcompat/plugin/backends.py, run there as a script).
_BACKEND_PROBE = (Path(backends.__file__).read_text(encoding="utf-8") + r"""
import json
import jax
print("JAXCOMPAT-BACKEND=" + jax.default_backend())
try:
    print("JAXCOMPAT-DEVICE=" + json.dumps(device_info()))
except Exception as e:
    print("JAXCOMPAT-DEVICE=" + json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))
""")


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
    distributions: dict[str, str]  # what `import` loads: the first distribution of each name
    has_pytest: bool
    has_jax: bool
    shadowed: list[dict] = field(default_factory=list)  # the copies behind them (jaxcompat.plugin.loaded)
    sites: list[str] = field(default_factory=list)  # site dir N is sites[N-1]
    path: list[str] = field(default_factory=list)  # its sys.path
    platform: str | None = None  # what jax.default_backend() said, None if jax did not import
    platform_error: str = ""
    device: dict = field(default_factory=dict)  # backends.device_info() there
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
                  has_pytest=info["pytest"], has_jax=info["jax"], shadowed=info.get("shadowed", []),
                  sites=info.get("sites", []), path=info.get("path", []))
    found.timings["probe_s"] = round(time.perf_counter() - t, 3)
    if found.has_jax:
        t = time.perf_counter()
        try:
            out = subprocess.run([python, "-c", _BACKEND_PROBE], capture_output=True, text=True, cwd=cwd,
                                 timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL, env={**os.environ, **_NO_WRITES})
            said = [ln for ln in out.stdout.splitlines() if ln.startswith("JAXCOMPAT-BACKEND=")]
            device = [ln for ln in out.stdout.splitlines() if ln.startswith("JAXCOMPAT-DEVICE=")]
            if device:
                try:
                    found.device = json.loads(device[-1].split("=", 1)[1])
                except ValueError:
                    pass
            if said:
                found.platform = said[-1].split("=", 1)[1].strip()
            else:
                found.platform_error = (out.stderr.strip().splitlines() or [f"exit code {out.returncode}"])[-1]
        except subprocess.TimeoutExpired:
            found.platform_error = f"importing jax took over {PROBE_TIMEOUT_S:g} s"
        found.timings["backend_probe_s"] = round(time.perf_counter() - t, 3)
    return found


def _provide_pytest(found: Probe, harness: tuple[str, ...], dest: Path) -> str:
    """Install the harness (pytest) into ``dest`` for that interpreter. Returns uv's error, or ""."""
    argv = [uv_bin(), "pip", "install", "--quiet", "--target", str(dest), "--python", found.python,
            "--no-python-downloads", *harness]
    proc = envs.run_tool(argv)
    return "" if proc.returncode == 0 else envs.clean_error(proc.stderr)


def check_existing(path: str, matrix: Matrix, *, state_dir: Path, repeat: int = 1) -> CellResult:
    """Run every case in the environment of ``path`` and judge it like a cell.

    Raises BadEnvironment (with the report to write) when ``path`` is not a Python, has no jax, or
    pytest can be neither found in it nor supplied."""
    t0 = time.perf_counter()
    result = CellResult(id="existing", python="", backend="", status=CellStatus.OK, environment=ENVIRONMENT)
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
            Scrubber(replacements).cell(result)
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
        replacements[str(tmp)] = "<tmp>"
        judge(result, run, matrix.failures, result.backend, found.distributions, Scrubber(replacements))


def _identify(path: str, result: CellResult, tmp: Path, replacements: dict[str, str]) -> tuple[str, Probe]:
    """Its interpreter, Python and installed versions (read, never chosen), and the paths the
    reports show as <env>, <base-python> and <python>."""
    replacements[str(Path(path).expanduser().absolute())] = "<env>"
    try:
        python = interpreter(path)
        found = probe(python, tmp)
    except ValueError as e:
        raise _bad(result, CellStatus.PYTHON_MISSING, CellOutcome.UNAVAILABLE, str(e)) from None
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
    replacements.update(site_replacements(found))
    result.versions = key_versions(found.distributions)
    result.shadowed = list(found.shadowed)
    result.notes.append(f"existing environment <env> (Python {found.version}, run as <python>): "
                        "versions read from it as its import system loads them, nothing resolved or installed")
    if found.shadowed or len(found.sites) > 1:
        result.notes.append("site dirs on its sys.path, in order: " + "; ".join(
            f"{n} = {Scrubber(replacements)(site)}" for n, site in enumerate(found.sites, 1)))
    result.notes += [f"{loaded.describe_shadowed(s)}: reported and judged as {s['by_version']}, "
                     "the version `import` loads" for s in found.shadowed if s["name"] in KEY_DISTS]
    if not found.has_jax:
        raise _bad(result, CellStatus.IMPORT_ERROR, CellOutcome.CELL_ERROR,
                   f"--env {path}: jax is not installed in that environment (Python {found.version} at "
                   f"{found.prefix}); point --env at the environment that has jax, or install jax there")
    return python, found


def site_replacements(found: Probe) -> dict[str, str]:
    """Every folder on its sys.path, as reports show it: inside its prefix (or its base Python's)
    the prefix is scrubbed already; any other folder holding distributions is <site-N> (its site
    dir number), any other folder <path-N> (its place on sys.path)."""
    inside = [p for p in (found.prefix, found.base_prefix) if p]
    out: dict[str, str] = {}
    for i, entry in enumerate(found.path, 1):
        for p in {entry, os.path.realpath(entry)}:
            if p in (os.sep, "") or any(p == q or p.startswith(q.rstrip(os.sep) + os.sep)
                                        for q in inside + [os.path.realpath(q) for q in inside]):
                continue
            n = next((k for k, s in enumerate(found.sites, 1) if os.path.realpath(s) == os.path.realpath(entry)), 0)
            out[p] = f"<site-{n}>" if n else f"<path-{i}>"
    return out



def _backend(result: CellResult, found: Probe) -> None:
    """The backend from what is installed and what its jax reports (``backends.backend_of``); if jax
    cannot be imported, what its wheels are for. The devices jax reports go into the report."""
    if found.platform:
        result.backend = backend_of(found.platform, found.distributions,
                                    str(found.device.get("platform_version", "")))
    else:
        result.backend = backends.installed_backend(found.distributions)
    wheels = backends.installed_backend(found.distributions)
    result.device = {k: v for k, v in found.device.items() if k != "error"}
    if result.device:
        result.notes.append(f"devices: {describe_device(result.device)}")
    if found.platform is None:
        result.notes.append(f"jax did not import in a probe ({found.platform_error}); backend "
                            f"{result.backend} from the installed wheels")
    elif wheels != "cpu" and result.backend != wheels:
        result.notes.append(f"the installed wheels are for {wheels}, but jax runs on {found.platform} here "
                            f"(no device, or JAX_PLATFORMS): judged as {result.backend}")


def _run_env(path: str, found: Probe, harness: tuple[str, ...], result: CellResult, tmp: Path) -> dict[str, str]:
    """The variables pytest runs under: no writes into the environment, its own plugins off, and
    pytest from a temporary folder when the environment has none."""
    pythonpath: list[str] = []  # the plugin itself: runner.plugin_path, as for every cell
    if not found.has_pytest:
        t = time.perf_counter()
        error = _provide_pytest(found, harness, tmp / "pytest")
        result.timings["pytest_install_s"] = round(time.perf_counter() - t, 3)
        if error:
            raise _bad(result, CellStatus.INSTALL_ERROR, CellOutcome.CELL_ERROR,
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
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            # a case whose companion (equinox, diffrax, …) is not installed here is skipped, named
            SKIP_MISSING: "1"}


def _observe(python: str, matrix: Matrix, result: CellResult, run_env: dict[str, str], imports: list[str],
             state_dir: Path, repeat: int) -> CellRun | None:
    """Run the cases (``repeat`` times for flaky detection); None when the run was interrupted."""
    try:
        run, result.timings["pytest_s"] = run_repeated(
            python, matrix.root, [matrix.settings.cases_dir], repeat, backend=result.backend, imports=imports,
            timeout_s=matrix.settings.case_timeout_s, workdir=StateDir(state_dir).run(result.id), extra_env=run_env)
    except Interrupted:
        result.status, result.outcome = CellStatus.NOT_RUN, CellOutcome.INTERRUPTED
        result.message = "the run was interrupted before this environment's cases finished"
        return None
    return run
