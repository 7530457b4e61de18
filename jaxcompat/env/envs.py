"""Build one isolated environment per cell with uv, resolved as of the cell's date.

Steps: resolve (``uv pip compile`` → a lock file, cached by the cell's spec), then install
(``uv pip sync`` of the lock into a fresh venv). A warm re-run whose environment already matches
the spec does neither. No value ever passes through a shell: every command is an argv list.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from jaxcompat._util.atomic import write_text
from jaxcompat._util.uvbin import uv_bin
from jaxcompat.env import sides, sources
from jaxcompat.model.matrix import ANY, LATEST, Cell
from jaxcompat.model.vocab import CellStatus
from jaxcompat.plugin.backends import JAX_EXTRAS

FAR_FUTURE = "2100-01-01"
TRANSIENT = re.compile(r"(?i)(timed out|timeout|connection (reset|refused|closed)|"
                       r"error sending request|dns|temporarily unavailable|network|"
                       r"failed to fetch|5\d\d )")
UNRESOLVABLE = re.compile(r"(?i)(no solution found|not found in the package registry|"
                          r"there is no version of|requirements are unsatisfiable|"
                          r"no matching distribution|only .* available)")
SPEC_FILE = "jaxcompat-spec.json"
MAX_LOOSEN = 12  # re-resolutions of a held cell, each letting go of the constraints the resolver names


class BuildError(Exception):
    def __init__(self, status: CellStatus, message: str):
        super().__init__(message)
        self.status, self.message = status, message  # CellStatus.UNRESOLVABLE or INSTALL_ERROR


@dataclass
class BuiltEnv:
    path: Path
    python: str  # the env's interpreter
    lock: str
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    reused: bool = False


def run_tool(argv: list[str], *, retries: int = 2, timeout: float = 900) -> subprocess.CompletedProcess:
    """Run uv; retry a bounded number of times on transient network errors."""
    for attempt in range(retries + 1):
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            proc = subprocess.CompletedProcess(argv, 124, "", f"timed out after {timeout:.0f} s")
        if proc.returncode == 0 or not TRANSIENT.search(proc.stderr) or UNRESOLVABLE.search(proc.stderr):
            return proc
        if attempt < retries:
            time.sleep(2 * (attempt + 1))
    proc.stderr += f"\n(transient error: gave up after {retries + 1} attempts)"
    return proc


def clean_error(stderr: str) -> str:
    """uv's own message, without progress noise."""
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith(("Resolved", "Prepared",
             "Installed", "Uninstalled", "Audited", "Downloading", " Downloaded", "Using "))]
    return "\n".join(lines).strip() or stderr.strip()


def resolve_args(cell: Cell, python: str, date: str | None, requirements_file: Path,
                 exempt: tuple[str, ...] = ()) -> list[str]:
    argv = [uv_bin(), "pip", "compile", str(requirements_file), "--python", python, "--quiet",
            "--no-header", "--no-annotate", "--no-python-downloads", *cell.index.uv_args(resolving=True)]
    if date is not None:
        argv += ["--exclude-newer", date]
        # Exact pins are exempt from the cutoff: a re-uploaded wheel (jaxlib 0.4.13) must not
        # hide the release the cell asks for; so are what a user's project needs newer than the date.
        # (`--exclude-newer-package NAME=DATE`: a per-package cutoff; relied on as uv 0.13.9 behaves here)
        for dist in sorted(set(cell.exact_pins()) | set(exempt)):
            argv += ["--exclude-newer-package", f"{dist}={FAR_FUTURE}"]
    return argv


# uv's hint when the date cutoff hides the only releases that satisfy a requirement (the wording of
# uv 0.13.9's resolver message: if uv rewords it, the hint is lost, not the resolution).
PAST_CUTOFF = re.compile(r"`([A-Za-z0-9][\w.-]*)` was filtered by `exclude-newer`")


def _compile(cell: Cell, python: str, date: str | None, requirements: list[str],
             workdir: Path, notes: list[str] | None = None) -> subprocess.CompletedProcess:
    """``uv pip compile``. A user's project (an editable) is what the user runs today: a package
    it needs in a release newer than the cell's date is exempted from the cutoff (said in ``notes``)
    rather than making its tests unrunnable."""
    req_file = workdir / "requirements.in"
    write_text(req_file, "\n".join(requirements) + "\n")
    exempt: tuple[str, ...] = ()
    while True:
        proc = run_tool(resolve_args(cell, python, date, req_file, exempt) + sides.constraint_args(cell, workdir))
        newer = [n for n in PAST_CUTOFF.findall(proc.stderr) if n not in exempt]
        if proc.returncode == 0 or not cell.editable or not newer or len(exempt) >= 20:
            break
        exempt += tuple(newer)
    if exempt and proc.returncode == 0 and notes is not None:
        notes.append(f"resolved past the date cutoff ({date}) because your project needs newer releases: "
                     + ", ".join(exempt))
    return proc


def _compile_held(cell: Cell, python: str, date: str | None, requirements: list[str], workdir: Path,
                  notes: list[str]) -> tuple[Cell, subprocess.CompletedProcess]:
    """``_compile`` a cell held at the baseline's versions (env/sides.py); while the resolver finds no
    solution, let go of the constraints it names (those the candidate's own requirements conflict
    with) and resolve again: (the cell as resolved, the last process)."""
    let_go: list[str] = []
    proc = _compile(cell, python, date, requirements, workdir, notes)
    for _ in range(MAX_LOOSEN):
        if proc.returncode == 0 or not cell.held or not UNRESOLVABLE.search(proc.stderr):
            break
        drop = sides.conflicting(cell, proc.stderr)
        let_go += sorted(drop)
        cell = sides.let_go(cell, drop)
        proc = _compile(cell, python, date, requirements, workdir, notes)
    if let_go:
        notes.append("not held at the baseline's versions (the candidate's own requirements conflict): "
                     + ", ".join(let_go))
    return cell, proc


def spec_hash(cell: Cell, python_exe: str, date: str | None, harness: tuple[str, ...],
              extra: str = "") -> str:
    payload = json.dumps({"python": python_exe, "pins": cell.pins, "constraints": cell.constraints,
                          "date": date, "backend": cell.backend, "harness": list(harness),
                          "extra": extra, "editable": [_project_digest(e) for e in cell.editable],
                          **({"avoid": sorted(cell.avoid)} if cell.avoid else {}),
                          **({"held": list(cell.held)} if cell.held else {}),
                          **({"past_cutoff": 1} if cell.editable else {}),
                          # direct references' content and index options; absent (so the key
                          # stays what it was) for a cell of PyPI releases
                          **({"sources": ident} if (ident := sources.identity(cell.pins, cell.index)) else {})},
                         sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _project_digest(editable: str) -> str:
    """A local project by its path and the files that declare its dependencies (an edit to its
    code needs no new lock: it is installed editable)."""
    root = Path(editable.split("[")[0])
    h = hashlib.sha256(editable.encode())
    for name in ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"):
        if (root / name).is_file():
            h.update(name.encode() + (root / name).read_bytes())
    return h.hexdigest()[:16]


def backend_requirements(cell: Cell) -> list[str]:
    """jax extras for accelerator cells (the wheels that bring CUDA 12 or 13)."""
    if cell.backend in JAX_EXTRAS and "jax" in cell.pins:
        extra, _since = JAX_EXTRAS[cell.backend]
        value = cell.pins["jax"]
        if sources.is_direct(value):
            return [f"jax[{extra}] {value}"]
        spec = "" if value in (ANY, LATEST) else (f"=={value}" if value[0].isdigit() else value)
        return [f"jax[{extra}]{spec}"]
    return []


def solve(cell: Cell, python_exe: str, date: str | None, harness: tuple[str, ...],
          workdir: Path, lock_cache: Path, reuse_failure: bool = True) -> tuple[str, list[str]]:
    """Return (lock text, notes). Optional ("*") pins that cannot co-install are dropped, noted.

    Both answers are cached by the spec: the lock, and "no solution" (exact pins as of a date
    do not become installable later; ``reuse_failure=False`` asks the resolver again)."""
    key = spec_hash(cell, python_exe, date, harness)
    cached = lock_cache / f"{cell.id}-{key}.txt"
    notes_file = cached.with_suffix(".notes.json")
    failed_file = cached.with_suffix(".unresolvable.txt")
    floating = any(v == LATEST for v in cell.pins.values()) or sources.moving(cell.pins, cell.index)
    if cached.is_file() and not floating:
        notes = json.loads(notes_file.read_text()) if notes_file.is_file() else []
        return cached.read_text(), notes
    if failed_file.is_file() and reuse_failure and not floating:
        raise BuildError(CellStatus.UNRESOLVABLE, failed_file.read_text())
    base = (cell.requirements() + backend_requirements(cell) + list(cell.constraints) + list(harness)
            + [f"-e {e}" for e in cell.editable])
    optional = cell.optional()
    notes: list[str] = []
    cell, proc = _compile_held(cell, python_exe, date, base + optional, workdir, notes)
    if proc.returncode != 0 and optional and UNRESOLVABLE.search(proc.stderr):
        # Keep the required pins; add each optional package only if it co-installs.
        proc = _compile(cell, python_exe, date, base, workdir)
        if proc.returncode == 0:
            accepted: list[str] = []
            for dist in optional:
                trial = _compile(cell, python_exe, date, base + accepted + [dist], workdir)
                if trial.returncode == 0:
                    accepted.append(dist)
                    proc = trial
                else:
                    first = clean_error(trial.stderr).splitlines()
                    notes.append(f"{dist} left out: it does not co-install "
                                 f"({first[-1].strip() if first else 'resolver failed'})")
            if not accepted:
                proc = _compile(cell, python_exe, date, base, workdir)
    proc.stderr, proc.stdout = cell.index.hide(proc.stderr), cell.index.hide(proc.stdout)  # a token in a URL
    if proc.returncode != 0:
        if UNRESOLVABLE.search(proc.stderr):
            write_text(failed_file, clean_error(proc.stderr))
            raise BuildError(CellStatus.UNRESOLVABLE, clean_error(proc.stderr))
        message = clean_error(proc.stderr)
        if cell.index.other_index and TRANSIENT.search(proc.stderr):
            where = ", ".join(
                u for u in (cell.index.index_url, *cell.index.extra_index_urls, *cell.index.find_links) if u
            )
            message = f"a package index given could not be read ({where}); the resolver says:\n{message}"
        raise BuildError(CellStatus.INSTALL_ERROR, message)
    failed_file.unlink(missing_ok=True)
    proc.stdout = sources.lock_header(cell.pins, cell.index) + proc.stdout
    write_text(cached, proc.stdout)
    write_text(notes_file, json.dumps(notes))
    return proc.stdout, notes


def lock(cell: Cell, python_exe: str, date: str | None, harness: tuple[str, ...],
         env_root: Path, lock_cache: Path, reuse_failure: bool = True) -> tuple[str, list[str], float]:
    """Resolve ``cell`` to a lock (cached by its spec): (lock text, notes, seconds)."""
    t0 = time.perf_counter()
    workdir = env_root / f".{cell.id}.work"
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        text, notes = solve(cell, python_exe, date, harness, workdir, lock_cache, reuse_failure)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return text, notes, round(time.perf_counter() - t0, 3)


def _spec(lock_text: str, python_exe: str | None) -> dict:
    """What an environment was built from: its lock and its interpreter. ``uv pip compile`` writes
    the same lock for two Pythons when the resolution agrees, so the lock alone would re-use a
    Python 3.11 environment for a cell that asks for 3.12."""
    return {"lock": hashlib.sha256(lock_text.encode()).hexdigest()[:16], "python": python_exe}


def matching_env(cell: Cell, lock_text: str, env_root: Path, python_exe: str | None = None) -> Path | None:
    """The cell's environment folder when it holds exactly this lock (and, when given, was built
    with this interpreter), else None."""
    env = env_root / cell.id
    try:
        spec = json.loads((env / SPEC_FILE).read_text())
    except (OSError, ValueError):
        return None
    want = _spec(lock_text, python_exe)
    if python_exe is None:
        want.pop("python")
    return env if all(spec.get(k) == v for k, v in want.items()) else None


def install(cell: Cell, python_exe: str, lock_text: str, env_root: Path,
            compile_bytecode: bool = True) -> BuiltEnv:
    """Create the environment of ``cell`` from its lock, or reuse it when it already matches."""
    env = env_root / cell.id
    env_python = env / "bin" / "python"
    timings: dict[str, float] = {}
    spec_path = env / SPEC_FILE
    if env_python.exists() and matching_env(cell, lock_text, env_root, python_exe) is not None:
        return BuiltEnv(env, str(env_python), lock_text, timings, reused=True)
    t1 = time.perf_counter()
    spec_path.unlink(missing_ok=True)
    proc = run_tool([uv_bin(), "venv", "--quiet", "--clear", "--python", python_exe,
                 "--no-python-downloads", str(env)])
    if proc.returncode != 0:
        raise BuildError(CellStatus.INSTALL_ERROR, clean_error(proc.stderr))
    timings["venv_s"] = round(time.perf_counter() - t1, 3)
    t2 = time.perf_counter()
    lock_file = env / "jaxcompat-lock.txt"
    write_text(lock_file, lock_text)
    proc = run_tool([uv_bin(), "pip", "sync", "--quiet", "--python", str(env_python),
                 *(["--compile-bytecode"] if compile_bytecode else []), *cell.index.uv_args(resolving=False),
                 str(lock_file)])
    if proc.returncode != 0:
        status = CellStatus.UNRESOLVABLE if UNRESOLVABLE.search(proc.stderr) else CellStatus.INSTALL_ERROR
        raise BuildError(status, clean_error(proc.stderr))
    timings["install_s"] = round(time.perf_counter() - t2, 3)
    write_text(spec_path, json.dumps({**_spec(lock_text, python_exe), "cell": cell.id}))
    return BuiltEnv(env, str(env_python), lock_text, timings)
