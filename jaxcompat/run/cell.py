"""One cell, end to end: find Python, resolve and install as of the cell's date, run the cases,
apply the known-failure rules, write the cell's reports. Every way a cell can fail is a result."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from packaging.utils import canonicalize_name

from jaxcompat._util.statedir import StateDir
from jaxcompat.env import envs, probe, releases, resolution, sources
from jaxcompat.env.pythons import PythonMissing, find_python
from jaxcompat.knowledge import learned, rules
from jaxcompat.knowledge.outcomes import check_import_rules, classify, classify_cell_error, flag_flaky
from jaxcompat.model.matrix import Cell, Matrix
from jaxcompat.model.outcomes import FAILING_OUTCOMES, CellResult, render_failed_imports
from jaxcompat.model.stages import Ended, Resolved
from jaxcompat.model.vocab import CellOutcome, CellStatus, EnvironmentKind, Outcome
from jaxcompat.plugin.backends import backend_of, describe_device
from jaxcompat.plugin.loaded import describe_shadowed
from jaxcompat.plugin.packages import ECOSYSTEM, IMPORTED, KEY_DISTS, SKIP_MISSING
from jaxcompat.report.matrixreport import write_cell
from jaxcompat.report.scrub import Scrubber
from jaxcompat.run import resultcache
from jaxcompat.run.resultcache import ResultCache
from jaxcompat.run.runner import CellRun, Interrupted, run_repeated

_LOCK_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;]+)")


def backend_missing(backend: str) -> str:
    """Why this machine cannot run ``backend`` ("" when it can). Checked before installing, so
    a CPU-only machine never downloads gigabytes of CUDA wheels for a cell it must skip."""
    if backend.startswith("cuda"):
        exe = shutil.which("nvidia-smi")
        if exe is None:
            return f"no NVIDIA GPU here (nvidia-smi not found): the {backend} cell is skipped"
        try:
            out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError) as e:
            return f"nvidia-smi failed ({e}): the {backend} cell is skipped"
        if out.returncode != 0 or "GPU" not in out.stdout:
            return (
                f"nvidia-smi lists no GPU ({out.stderr.strip() or out.stdout.strip()}): the {backend} cell is skipped"
            )
        return _driver_too_old(exe, backend)
    if backend == "rocm" and not Path("/dev/kfd").exists():
        return "no AMD GPU here (/dev/kfd not found): the rocm cell is skipped"
    if backend == "tpu" and not Path("/dev/accel0").exists() and not Path("/dev/vfio").exists():
        return "no TPU device here: the tpu cell is skipped"
    return ""


def _driver_too_old(nvidia_smi: str, backend: str) -> str:
    """A CUDA 13 cell on a driver that supports only CUDA 12 cannot run (and the reverse is fine:
    drivers are backward compatible). nvidia-smi's header says "CUDA Version: 12.4"."""
    try:
        out = subprocess.run([nvidia_smi], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    m = re.search(r"CUDA Version:\s*(\d+)\.(\d+)", out.stdout)
    if m and int(m.group(1)) < int(backend[len("cuda"):] or 0):
        return (f"the NVIDIA driver supports CUDA {m.group(1)}.{m.group(2)} only (nvidia-smi): the {backend} "
                "cell is skipped; it needs a driver for CUDA 13 (580 or newer)")
    return ""


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


@dataclass
class Options:
    """How to run a cell (the same for every cell of a run)."""

    case_args: list[str] | None = None
    extra_env: dict[str, str] | None = None
    repeat: int = 1
    compile_bytecode: bool = True
    use_cache: bool = True  # re-use raw results whose inputs did not change (--no-cache: False)
    scrub: Callable[[str], str] = str  # machine paths and credentials out, before results are clipped


def run_cell(cell: Cell, matrix: Matrix, *, state_dir: Path, reports_dir: Path | None,
             case_args: list[str] | None = None, extra_env: dict[str, str] | None = None,
             repeat: int = 1, compile_bytecode: bool = True, use_cache: bool = True) -> CellResult:
    """Run one cell and (unless reports_dir is None) write reports/cells/<id>.{json,xml}.

    ``compile_bytecode``: compile the environment at install (worth it for an environment that
    is run again; a one-shot survey combination imports only what it uses)."""
    t0 = time.perf_counter()
    scrub = Scrubber({str(StateDir(state_dir).env(cell.id).resolve()): "<env>",
                      str(StateDir(state_dir).env(cell.id)): "<env>",
                      str(matrix.root.resolve()): "<root>", str(Path.home()): "~"},
                     envs_dir=StateDir(state_dir).envs)
    if cell.added:  # companions the suite added and may leave out, and equinox with them: not judged, named
        extra_env = {**(extra_env or {}), SKIP_MISSING: "1"}
    opts = Options(case_args, extra_env, repeat, compile_bytecode, use_cache, scrub)
    result = CellResult(id=cell.id, python=cell.python, backend=cell.backend, status=CellStatus.OK,
                        requested=dict(cell.pins), date=cell.date)
    try:
        ended = _run(cell, matrix, result, state_dir, opts)
        if ended is not None:  # the result says how the cell ended (without an outcome: which rule explains it)
            result.status, result.message = ended.status, ended.message
            if ended.outcome:
                result.outcome = ended.outcome
            else:
                classify_cell_error(result, "resolve", matrix.failures, ended.pins)
    finally:
        result.timings["total_s"] = round(time.perf_counter() - t0, 3)
        scrub.cell(result)
        if reports_dir is not None:
            write_cell(result, reports_dir)
    return result


def _run(cell: Cell, matrix: Matrix, result: CellResult, state_dir: Path, opts: Options) -> Ended | None:
    """The stages of a cell in order, each returning what the next needs, or how the cell ended
    (``Ended``, which ``run_cell`` alone folds into the result)."""
    ended = unavailable_backend(cell)
    if ended is not None:
        return ended
    got = resolved(cell, matrix, result, state_dir, opts)
    if isinstance(got, Ended):
        return got
    cell, python_exe, lock_text = got.cell, got.python_exe, got.lock
    run = observe(cell, python_exe, lock_text, matrix, result, state_dir, opts)
    if isinstance(run, Ended):
        return run
    judge(result, run, matrix.failures, cell.backend, lock_versions(lock_text), opts.scrub)
    record_sources(cell, lock_text, run, result, state_dir)
    explain_skips(result)
    return None


def resolved(cell: Cell, matrix: Matrix, result: CellResult, state_dir: Path, opts: Options,
             settle: bool = True) -> Resolved | Ended:
    """The one way a cell's environment is decided, for the matrix, ``check --tests``, the crater
    and the cache key alike: (the cell completed, its interpreter, its lock) — complete what the
    cell leaves open, walk back what learned records say does not import, lock, settle what the
    suite added (``settle=False``: not, as for a cache key, which must not import packages in real
    environments). Any stage may end the cell: then how (``Ended``)."""
    got = complete(cell, result, state_dir)
    if isinstance(got, Ended):
        return got
    cell, python_exe = got
    cell, applied = avoid_learned(cell, matrix, result, state_dir)
    lock_text = locked(cell, python_exe, matrix, result, state_dir, opts)
    if isinstance(lock_text, Ended):
        return lock_text
    if not settle:
        return Resolved(cell, python_exe, lock_text)
    got = settle_added(cell, python_exe, lock_text, matrix, result, state_dir, opts, applied)
    if isinstance(got, Ended):
        return got
    cell, lock_text = got
    return Resolved(cell, python_exe, lock_text)


def resolve_cell(cell: Cell, matrix: Matrix, state_dir: Path) -> Resolved | Ended:
    """``resolved`` alone, for a caller that wants the environment decided and nothing else (the
    baseline a candidate is held to, a side's cache key): its notes and timings are not kept."""
    scratch = CellResult(id=cell.id, python=cell.python, backend=cell.backend, status=CellStatus.OK)
    return resolved(cell, matrix, scratch, state_dir, Options())


def prepare(cell: Cell, matrix: Matrix, result: CellResult, state_dir: Path,
            opts: Options | None = None) -> tuple[Cell, envs.BuiltEnv] | Ended:
    """A ready environment: ``resolved``, then installed (or found installed); or how it ended."""
    opts = opts or Options()
    got = resolved(cell, matrix, result, state_dir, opts)
    if isinstance(got, Ended):
        return got
    built = install(got.cell, got.python_exe, got.lock, result, state_dir, opts)
    return built if isinstance(built, Ended) else (got.cell, built)


def record_sources(cell: Cell, lock_text: str, run: CellRun, result: CellResult, state_dir: Path) -> None:
    """What was installed that is not a PyPI release (or is a pre-release), exactly: from the
    environment's direct_url.json files where it is the one built from this lock, else the lock."""
    installed = {canonicalize_name(k): v for k, v in run.versions.items()}
    env = envs.matching_env(cell, lock_text, StateDir(state_dir).envs)
    dists = list(dict.fromkeys([*ECOSYSTEM, *(canonicalize_name(d) for d in cell.pins)]))
    found = sources.sources(dists, installed, lock_text, sources.site_packages(env) if env else None,
                            find_links=cell.index.find_links)
    result.sources = found
    result.index = cell.index.to_dict() if cell.index else {}


def unavailable_backend(cell: Cell) -> Ended | None:
    """The cell's end where this machine cannot run its backend."""
    missing = backend_missing(cell.backend)
    return Ended(CellStatus.BACKEND_MISSING, missing, CellOutcome.UNAVAILABLE) if missing else None


def complete(cell: Cell, result: CellResult, state_dir: Path) -> tuple[Cell, str] | Ended:
    """Fill in what the cell leaves open (jaxlib, Python, date); find the interpreter."""
    t = time.perf_counter()
    try:
        done = resolution.complete(cell, StateDir(state_dir).cache)
        found = resolution.jaxlib_notes(cell, done, StateDir(state_dir).cache)
        python_exe = find_python(done.python)
        date, why = (done.date, []) if done.date else resolution.resolution_date(done, StateDir(state_dir).cache)
    except (resolution.ResolutionError, releases.IndexError_) as e:
        return Ended(CellStatus.UNRESOLVABLE, str(e), pins=cell.exact_pins())
    except PythonMissing as e:
        return Ended(CellStatus.PYTHON_MISSING, str(e), CellOutcome.UNAVAILABLE)
    except OSError as e:
        return Ended(CellStatus.INSTALL_ERROR, f"reading the index: {e}", CellOutcome.CELL_ERROR)
    result.python, result.date = done.python, date
    result.notes.extend(found + why)
    if "jaxlib" in done.pins and "jaxlib" not in cell.pins and not found:
        result.notes.append(f"jaxlib {done.pins['jaxlib']}: what jax {done.pins['jax']}'s metadata asks for")
    if cell.python != done.python:
        result.notes.append(f"Python {done.python}: the lowest this machine has that every pin supports")
    result.timings["find_python_s"] = round(time.perf_counter() - t, 3)
    return replace(done, date=date), python_exe


def avoid_learned(cell: Cell, matrix: Matrix, result: CellResult, state_dir: Path) -> tuple[Cell, list]:
    """The releases of added packages that learned records say do not import with these pins."""
    try:
        records = learned.known(state_dir, by_hand=matrix.requirements)
        return learned.prepare(cell, records, lambda d, v: releases.release_date(d, v, StateDir(state_dir).cache))
    except releases.IndexError_:
        return learned.prepare(cell, records)
    except learned.LearnedError as e:
        result.notes.append(f"learned requirements not applied: {e}")
        return cell, []


def settle_added(cell: Cell, python_exe: str, lock_text: str, matrix: Matrix, result: CellResult,
                 state_dir: Path, opts: Options, applied: list) -> tuple[Cell, str] | Ended:
    """Every package the suite added imports with the user's pins, or is walked back, or left
    out (jaxcompat/knowledge/learned.py): never a reason to call the candidate broken."""
    if not cell.added:
        return cell, lock_text
    world = probe.real_world(python_exe, matrix.settings.harness, state_dir, opts.compile_bytecode)
    t = time.perf_counter()
    try:
        s = learned.settle(cell, lock_text, world, lock_versions, ECOSYSTEM, applied)
    except envs.BuildError as e:
        return Ended(e.status, e.message, pins=cell.exact_pins())
    result.timings["settle_s"] = round(time.perf_counter() - t, 3)
    result.added = dict(s.added)
    result.notes.extend(s.notes)
    learned.record(state_dir, s.learned)
    if s.lock_text != lock_text:
        result.versions = key_versions(lock_versions(s.lock_text))
    return s.cell, s.lock_text


def explain_skips(result: CellResult) -> None:
    """A case skipped because an added package was left out says why it was left out."""
    for dist, a in result.added.items():
        if not a.left_out:
            continue
        for r in result.results:
            if r.outcome == Outcome.SKIPPED and f"'{dist}'" in r.message and "left out" not in r.message:
                r.message = f"{r.message} ({dist} left out: {a.left_out})"


def locked(cell: Cell, python_exe: str, matrix: Matrix, result: CellResult, state_dir: Path,
           opts: Options) -> str | Ended:
    """The cell's lock: what would be installed (resolved once, then read from the lock cache)."""
    try:
        text, notes, resolve_s = envs.lock(cell, python_exe, cell.date, matrix.settings.harness,
                                           StateDir(state_dir).envs, StateDir(state_dir).locks,
                                           reuse_failure=opts.use_cache)
    except envs.BuildError as e:
        return Ended(e.status, e.message, pins=cell.exact_pins())
    result.timings["resolve_s"] = resolve_s
    result.notes.extend(notes)
    result.versions = key_versions(lock_versions(text))
    return text


def observe(cell: Cell, python_exe: str, lock_text: str, matrix: Matrix, result: CellResult,
            state_dir: Path, opts: Options) -> CellRun | Ended:
    """What the cases did in this environment: re-used where the inputs are unchanged, run
    (after installing, if need be) where they are not."""
    cache = ResultCache(state_dir)
    root = matrix.root
    harness = resultcache.harness_digest(root, matrix.settings.cases_dir)
    env = resultcache.env_key(lock_text, python_exe, cell.backend, opts.extra_env, harness)
    args = opts.case_args or [matrix.settings.cases_dir]
    modules, narrow = resultcache.case_modules(root, args)
    keys = {m: resultcache.module_key(root, m, harness) for m in modules}
    reading = opts.use_cache and opts.repeat == 1
    env_entry = cache.load_env(env) if reading else None
    hits = _lookup(cache, env, env_entry, root, harness, modules, narrow, matrix, cell.backend, result)
    todo = [m for m in modules if m not in hits] + [a for a in narrow if a not in hits] if hits else args
    result.notes.extend(cache.problems)
    if env_entry is not None and (env_entry.import_failed or not todo):
        return _from_cache(env_entry, hits, result)

    built = install(cell, python_exe, lock_text, result, state_dir, opts)
    if isinstance(built, Ended):
        return built
    imports = [d for d in cell.pins if d in ECOSYSTEM and d in lock_versions(lock_text)]
    try:
        run, result.timings["pytest_s"] = run_repeated(
            built.python, root, todo, opts.repeat, backend=cell.backend, imports=imports,
            timeout_s=matrix.settings.case_timeout_s, workdir=StateDir(state_dir).run(cell.id),
            extra_env=opts.extra_env)
    except Interrupted:
        return Ended(CellStatus.NOT_RUN, "the run was interrupted before this cell finished", CellOutcome.INTERRUPTED)
    if opts.repeat == 1 and run.versions:
        _store(cache, env, keys, run, [a for a in narrow if a not in hits])
    return _merge(run, hits, result)


def input_key(cell: Cell, matrix: Matrix, state_dir: Path, case_args: list[str] | None = None) -> str:
    """One digest of everything the cell's results depend on (its lock, Python, backend, the
    case modules and the harness): CI restores a cell's cached results under this key. A cell
    that cannot be locked gets a key of its failure (it runs again, which is cheap)."""
    result = CellResult(id=cell.id, python=cell.python, backend=cell.backend, status=CellStatus.OK)
    got = unavailable_backend(cell) or resolved(cell, matrix, result, state_dir, Options(), settle=False)
    if isinstance(got, Ended):
        return f"{got.status}-{resultcache._sha(got.message)[:12]}"
    harness = resultcache.harness_digest(matrix.root, matrix.settings.cases_dir)
    env = resultcache.env_key(got.lock, got.python_exe, got.cell.backend, None, harness)
    modules, narrow = resultcache.case_modules(matrix.root, case_args or [matrix.settings.cases_dir])
    return resultcache._sha(env, *(resultcache.module_key(matrix.root, m, harness) for m in modules),
                            *narrow)[:24]


def install(cell: Cell, python_exe: str, lock_text: str, result: CellResult,
            state_dir: Path, opts: Options) -> envs.BuiltEnv | Ended:
    """The cell's environment, installed from its lock (or found installed)."""
    try:
        built = envs.install(cell, python_exe, lock_text, StateDir(state_dir).envs, opts.compile_bytecode)
    except envs.BuildError as e:
        return Ended(e.status, e.message, pins=cell.exact_pins())
    result.timings.update(built.timings)
    if built.reused:
        result.notes.append("environment reused (matches its lock)")
    return built


def _store(cache: ResultCache, env: str, keys: dict[str, str], run: CellRun, narrow: list[str]) -> None:
    """Keep what this run observed: the environment's import record and each whole module."""
    at = resultcache.now()
    cache.store_env(env, resultcache.EnvEntry(
        versions=run.versions, imports=run.imports, jax_backend=run.jax_backend,
        import_failed=run.import_failed, deprecations=[d for d in run.deprecations if not d.get("case")],
        observed_at=at, device=run.device, shadowed=run.shadowed))
    if run.import_failed or narrow:
        return  # a narrowed run (node ids) is not a whole module's results
    for module, key in keys.items():
        results = [r for r in run.results if resultcache.module_of(r.case) == module]
        deps = [d for d in run.deprecations if d.get("case") and resultcache.module_of(d["case"]) == module]
        cache.store_module(env, key, resultcache.ModuleEntry(module, results, deps, at))


def _lookup(cache: ResultCache, env: str, env_entry, root: Path, harness: str, modules: list[str],
            narrow: list[str], matrix: Matrix, backend: str, result: CellResult) -> dict:
    """The cached entries that answer what was asked: whole modules, and node ids (a bisect step's
    target cases) picked from a cached whole module. A result that fails the run by today's rules
    is observed again, never trusted from the cache."""
    if env_entry is None or env_entry.import_failed:
        return {}
    hits = {m: e for m in modules
            if (e := cache.load_module(env, m, resultcache.module_key(root, m, harness))) is not None}
    for arg in narrow:
        module = resultcache.module_of(arg)
        if "::" not in arg or not (root / module).is_file():
            continue
        entry = cache.load_module(env, module, resultcache.module_key(root, module, harness))
        picked = [r for r in entry.results if rules.names(arg, r.case)] if entry else []
        if picked:
            hits[arg] = replace(entry, results=picked)
    doubtful = sorted(k for k, e in hits.items() if _fails_today(e, env_entry, matrix, backend))
    if doubtful:
        result.notes.append(f"run again, not re-used: {', '.join(doubtful)} (a cached result there fails the "
                            "run by today's rules)")
    return {k: e for k, e in hits.items() if k not in doubtful}


def _fails_today(entry: resultcache.ModuleEntry, env_entry, matrix: Matrix, backend: str) -> bool:
    installed = {canonicalize_name(k): v for k, v in env_entry.versions.items()}
    return any(classify(r, matrix.failures, installed, backend).outcome in FAILING_OUTCOMES for r in entry.results)


def _from_cache(env_entry, hits: dict, result: CellResult) -> CellRun:
    result.notes.append(f"nothing ran: every result re-used from the result cache "
                        f"(environment observed {env_entry.observed_at})")
    run = CellRun(versions=env_entry.versions, imports=env_entry.imports, jax_backend=env_entry.jax_backend,
                  import_failed=env_entry.import_failed, deprecations=list(env_entry.deprecations),
                  device=dict(env_entry.device), shadowed=list(env_entry.shadowed))
    return _merge(run, hits, result, announce=False)


def _merge(run: CellRun, hits: dict, result: CellResult, announce: bool = True) -> CellRun:
    """This run's results with the cached modules', in module order."""
    if not hits:
        return run
    reused = [replace(r, reused_from=e.observed_at) for e in hits.values() for r in e.results]
    if announce:
        result.notes.append(f"{len(reused)} result(s) of {len(hits)} module(s) re-used from the result cache; "
                            f"{len(run.results)} run now")
    seen = {(d["where"], d["message"]) for d in run.deprecations}
    for e in hits.values():
        for d in e.deprecations:
            if (d["where"], d["message"]) not in seen:
                seen.add((d["where"], d["message"]))
                run.deprecations.append(d)
    run.results = sorted(run.results + reused, key=lambda r: resultcache.module_of(r.case))
    return run


def judge(result: CellResult, run: CellRun, failures, backend: str, fallback_versions: dict[str, str],
          scrub: Callable[[str], str] = str) -> None:
    """Apply today's rules to what was observed (fresh or re-used alike, in a built environment
    or an existing one). ``fallback_versions``: what was installed, if the run could not say.
    ``scrub``: applied to every raw text before it is judged and clipped (report.scrub)."""
    run = replace(
        run,
        results=[replace(r, message=scrub(r.message), traceback=scrub(r.traceback)) for r in run.results],
        imports={m: scrub(tb) for m, tb in run.imports.items()},
    )
    installed = {canonicalize_name(k): v for k, v in (run.versions or fallback_versions).items()}
    result.versions = key_versions(installed)
    result.deprecations = list(run.deprecations)
    if (
        result.environment == EnvironmentKind.BUILT
    ):  # check --env read both from its own probe (and pytest may come from a temp folder)
        result.device, result.shadowed = dict(run.device), list(run.shadowed)
        result.notes += [f"{describe_shadowed(s)}: the report has what `import` loads" for s in run.shadowed
                         if s.get("name") in KEY_DISTS]
        result.notes += [f"devices: {describe_device(run.device)}"] if run.device else []
    if run.jax_backend:
        result.notes.append(f"jax default backend: {run.jax_backend}")
        actual = backend_of(run.jax_backend, installed, str(run.device.get("platform_version", "")))
        if backend.startswith(("cuda", "rocm")) and actual == "gpu":
            actual = backend  # jax says "gpu" and no wheel names the line: the cell's own
        if not run.jax_backend.startswith("error:") and actual != backend:
            # a result's backend is the platform jax used (a GPU cell whose jax fell back to CPU)
            result.notes.append(f"asked for {backend}, the cases ran on {actual}: judged by the latter")
            backend = result.backend = actual
    if run.rc < 0 and run.results:
        result.notes.append(f"pytest's interpreter was killed by signal {-run.rc} after the last case "
                            "(every result had been recorded)")
    if run.import_failed:
        bad = {m: tb for m, tb in run.imports.items() if tb != IMPORTED}
        result.status = CellStatus.IMPORT_ERROR
        result.failed_imports = {m: tb.strip() for m, tb in bad.items()}
        result.message = render_failed_imports(result.failed_imports)
        classify_cell_error(result, "import", failures, installed)
        return
    check_import_rules(result, failures, installed)
    result.results = [classify(raw, failures, installed, backend) for raw in run.results]
    if run.repeats:
        flag_flaky(result, [[classify(raw, failures, installed, backend) for raw in rep]
                            for rep in run.repeats])
    if run.rc not in (0, 1) and not run.results:
        result.status, result.outcome = CellStatus.RUN_ERROR, CellOutcome.CELL_ERROR
        result.message = f"pytest exited with code {run.rc} before running any case:\n{run.log_tail}"
