"""One cell, end to end: find Python, resolve and install as of the cell's date, run the cases,
apply the known-failure rules, write the cell's reports. Every way a cell can fail is a result."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

from packaging.utils import canonicalize_name

from . import envs, releases, reports, resolution
from .config import Cell, Matrix
from .outcomes import CellResult, check_import_rules, classify, classify_cell_error
from .packages import ECOSYSTEM, KEY_DISTS
from .pythons import PythonMissing, find_python
from .runner import Interrupted, run_cases

_LOCK_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;]+)")


def backend_missing(backend: str) -> str:
    """Why this machine cannot run ``backend`` ("" when it can). Checked before installing, so
    a CPU-only machine never downloads gigabytes of CUDA wheels for a cell it must skip."""
    if backend == "cuda12":
        exe = shutil.which("nvidia-smi")
        if exe is None:
            return "no NVIDIA GPU here (nvidia-smi not found): the cuda12 cell is skipped"
        try:
            out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError) as e:
            return f"nvidia-smi failed ({e}): the cuda12 cell is skipped"
        if out.returncode != 0 or "GPU" not in out.stdout:
            return f"nvidia-smi lists no GPU ({out.stderr.strip() or out.stdout.strip()}): the cuda12 cell is skipped"
    if backend == "tpu" and not Path("/dev/accel0").exists() and not Path("/dev/vfio").exists():
        return "no TPU device here: the tpu cell is skipped"
    return ""


def scrub_paths(result: CellResult, replacements: dict[str, str]) -> None:
    """Reports carry no machine-specific paths: the cell's environment, the checkout and the home
    folder become <env>, <root> and ~ in every message (longest first)."""
    order = sorted(replacements.items(), key=lambda kv: -len(kv[0]))

    def clean(text: str) -> str:
        for old, new in order:
            text = text.replace(old, new)
        return text

    result.message = clean(result.message)
    result.notes = [clean(n) for n in result.notes]
    for r in result.results:
        r.message, r.traceback = clean(r.message), clean(r.traceback)
    for d in result.deprecations:
        d["where"] = clean(str(d.get("where", "")))


def lock_versions(lock: str) -> dict[str, str]:
    out = {}
    for line in lock.splitlines():
        m = _LOCK_LINE.match(line.strip())
        if m:
            out[canonicalize_name(m.group(1))] = m.group(3)
    return out


def key_versions(installed: dict[str, str]) -> dict[str, str]:
    norm = {canonicalize_name(k): v for k, v in installed.items()}
    return {d: norm[d] for d in KEY_DISTS if d in norm}


def run_cell(cell: Cell, matrix: Matrix, *, state_dir: Path, reports_dir: Path | None,
             case_args: list[str] | None = None, extra_env: dict[str, str] | None = None,
             repeat: int = 1, compile_bytecode: bool = True) -> CellResult:
    """Run one cell and (unless reports_dir is None) write reports/cells/<id>.{json,xml}.

    ``compile_bytecode``: compile the environment at install (worth it for an environment that
    is run again; a one-shot survey combination imports only what it uses)."""
    t0 = time.perf_counter()
    result = CellResult(id=cell.id, python=cell.python, backend=cell.backend, status="ok",
                        requested=dict(cell.pins), date=cell.date)
    try:
        _run(cell, matrix, result, state_dir, case_args, extra_env, repeat, compile_bytecode)
    finally:
        result.timings["total_s"] = round(time.perf_counter() - t0, 3)
        scrub_paths(result, {str((state_dir / "envs" / cell.id).resolve()): "<env>",
                             str(state_dir / "envs" / cell.id): "<env>",
                             str(matrix.root.resolve()): "<root>", str(Path.home()): "~"})
        if reports_dir is not None:
            reports.write_cell(result, reports_dir)
    return result


def _run(cell: Cell, matrix: Matrix, result: CellResult, state_dir: Path,
         case_args: list[str] | None, extra_env: dict[str, str] | None, repeat: int,
         compile_bytecode: bool = True) -> None:
    failures = matrix.failures
    pinned = cell.exact_pins()
    missing = backend_missing(cell.backend)
    if missing:
        result.status, result.outcome, result.message = "backend-missing", "unavailable", missing
        return
    t = time.perf_counter()
    try:
        asked = cell
        cell = resolution.complete(cell, state_dir / "cache")
    except (resolution.ResolutionError, releases.IndexError_) as e:
        result.status, result.message = "unresolvable", str(e)
        classify_cell_error(result, "resolve", failures, pinned)
        return
    except PythonMissing as e:
        result.status, result.outcome, result.message = "python-missing", "unavailable", str(e)
        return
    except OSError as e:
        result.status, result.outcome, result.message = "install-error", "cell-error", f"reading the index: {e}"
        return
    pinned = cell.exact_pins()
    result.python = cell.python
    if "jaxlib" in cell.pins and "jaxlib" not in asked.pins:
        result.notes.append(f"jaxlib {cell.pins['jaxlib']}: what jax {cell.pins['jax']}'s metadata asks for")
    if asked.python != cell.python:
        result.notes.append(f"Python {cell.python}: the lowest this machine has that every pin supports")
    try:
        python_exe = find_python(cell.python)
    except PythonMissing as e:
        result.status, result.outcome, result.message = "python-missing", "unavailable", str(e)
        return
    result.timings["find_python_s"] = round(time.perf_counter() - t, 3)

    try:
        date = cell.date or releases.resolution_date(pinned, state_dir / "cache")
    except releases.IndexError_ as e:
        result.status, result.message = "unresolvable", str(e)
        classify_cell_error(result, "resolve", failures, pinned)
        return
    result.date = date

    try:
        built = envs.build(cell, python_exe, date, matrix.settings.harness,
                           state_dir / "envs", state_dir / "locks", compile_bytecode=compile_bytecode)
    except envs.BuildError as e:
        result.status, result.message = e.status, e.message
        classify_cell_error(result, "resolve", failures, pinned)
        return
    result.timings.update(built.timings)
    result.notes.extend(built.notes)
    if built.reused:
        result.notes.append("environment reused (matches its lock)")
    locked = lock_versions(built.lock)
    result.versions = key_versions(locked)

    # imported up front: a cell whose package cannot be imported is a result
    imports = [d for d in cell.pins if d in ECOSYSTEM and d in locked]
    args = case_args or [matrix.settings.cases_dir]
    runs = []
    for _ in range(max(1, repeat)):
        try:
            run = run_cases(built.python, matrix.root, args, backend=cell.backend, imports=imports,
                            timeout_s=matrix.settings.case_timeout_s,
                            workdir=state_dir / "runs" / cell.id, extra_env=extra_env)
        except Interrupted:
            result.status, result.outcome = "not-run", "interrupted"
            result.message = "the run was interrupted before this cell finished"
            return
        runs.append(run)
        if run.import_failed:
            break
    run = runs[0]
    result.timings["pytest_s"] = round(sum(r.pytest_s for r in runs), 3)
    installed = {canonicalize_name(k): v for k, v in (run.versions or locked).items()}
    result.versions = key_versions(installed)
    result.deprecations = list(run.deprecations)
    if run.jax_backend:
        result.notes.append(f"jax default backend: {run.jax_backend}")
    if run.rc < 0 and run.results:
        result.notes.append(f"pytest's interpreter was killed by signal {-run.rc} after the last case "
                            "(every result had been recorded)")

    if run.import_failed:
        bad = {m: tb for m, tb in run.imports.items() if tb != "ok"}
        result.status = "import-error"
        result.message = "\n".join(f"import {m} failed:\n{tb.strip()}" for m, tb in bad.items())
        classify_cell_error(result, "import", failures, installed)
        return
    check_import_rules(result, failures, installed)

    result.results = [classify(raw, failures, installed, cell.backend) for raw in run.results]
    if len(runs) > 1:
        flag_flaky(result, [[classify(raw, failures, installed, cell.backend) for raw in r.results]
                            for r in runs[1:]])
    if run.rc not in (0, 1) and not run.results:
        result.status, result.outcome = "run-error", "cell-error"
        result.message = f"pytest exited with code {run.rc} before running any case:\n{run.log_tail}"


def flag_flaky(result: CellResult, repeats: list[list]) -> None:
    """A case whose outcome differs between repeats is ``flaky`` (and fails the run)."""
    for r in result.results:
        seen = [r.outcome] + [next((x.outcome for x in rep if x.case == r.case), "missing")
                              for rep in repeats]
        if len(set(seen)) > 1:
            r.message = f"outcomes over {len(seen)} runs: {', '.join(seen)}\n{r.message}"
            r.outcome = "flaky"
    result.notes.append(f"each case ran {len(repeats) + 1} times")
