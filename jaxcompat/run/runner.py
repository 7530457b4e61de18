"""Run the cases of one cell: pytest in the cell's environment, watched from outside.

One pytest process imports jax once and runs every case.  The plugin streams a JSON line per
event, so the watchdog here knows which case is running: a case past its time limit has its
process group killed (``timeout``), a case during which the interpreter dies is a ``crash``
with its exit code or signal — and in both cases pytest is started again on the cases that
have not run yet, like pytest-xdist restarting a crashed worker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from jaxcompat._util import runenv
from jaxcompat._util.layout import PACKAGE
from jaxcompat.model.outcomes import RawResult
from jaxcompat.model.vocab import Phase, TestStatus
from jaxcompat.plugin.packages import IMPORTED

IMPORT_FAILED_RC = 3
STOP = threading.Event()  # set on interruption: no case starts again, running ones are killed
_ACTIVE: set[subprocess.Popen] = set()
_ACTIVE_LOCK = threading.Lock()
_PROGRESS: list = []  # at most one sink (report/progress.py's ProgressLine) told a project's run as it goes


class Interrupted(Exception):
    pass


def stop_all() -> None:
    """Kill every running cell process (Ctrl-C / SIGTERM on the whole run)."""
    STOP.set()
    with _ACTIVE_LOCK:
        procs = list(_ACTIVE)
    for proc in procs:
        _kill_group(proc)


def show_progress(sink) -> None:
    """Tell ``sink`` (``update``/``end``: label, tests done, collected, failed, seconds) how each
    run of a project's tests (``project=True``: check --tests, the crater, bisect) goes; None: nobody."""
    _PROGRESS[:] = [sink] if sink is not None else []


class _Progress:
    """The counts of one ``run_cases`` across its attempts, passed on to the sink. A sink that
    fails is dropped: what it shows never changes what the run records."""

    def __init__(self, label: str, done: set[str]):
        self.sink = _PROGRESS[0] if _PROGRESS else None
        self.label, self.done, self.t0 = label, done, time.perf_counter()
        self.total: int | None = None
        self.cases: set[str] | None = None  # the tests collected (a module's own record is none of them)
        self.failed = 0

    def tell(self, events: list[dict], final: bool = False) -> None:
        if self.sink is None:
            return
        try:
            found = [ev for ev in events if ev.get("event") == "result" and ev.get("case") not in self.done]
            collected = next((ev for ev in events if ev.get("event") == "collected"), None)
            if self.total is None and collected is not None:
                self.cases = set(collected.get("cases") or [])
                self.total = len(self.cases)
            seen = self.done | {ev.get("case") for ev in found}  # not "2/1 tests" beside a module's record
            failed = self.failed + sum(ev.get("status") == TestStatus.FAILED and self._case(ev.get("case"))
                                       for ev in found)
            counts = (self.label, len(seen & self.cases if self.cases is not None else seen), self.total, failed,
                      time.perf_counter() - self.t0)
            (self.sink.end if final else self.sink.update)(*counts)
        except Exception:  # noqa: BLE001 - the display's failure is never the run's
            self.sink = None

    def _case(self, name) -> bool:
        return self.cases is None or name in self.cases

    def attempt_done(self, run: CellRun) -> None:
        self.failed = sum(r.status in (TestStatus.FAILED, TestStatus.CRASH, TestStatus.TIMEOUT) and self._case(r.case)
                          for r in run.results)


@dataclass
class CellRun:
    results: list[RawResult] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)
    deprecations: list[dict] = field(default_factory=list)
    jax_backend: str | None = None
    device: dict = field(default_factory=dict)  # what jax reports about its devices (kind, CUDA versions)
    shadowed: list[dict] = field(default_factory=list)  # later copies of a distribution (jaxcompat.plugin.loaded)
    import_failed: bool = False
    log_tail: str = ""
    pytest_s: float = 0.0
    rc: int = 0
    repeats: list[list[RawResult]] = field(default_factory=list)  # --repeat N: the other runs' results


def _read_events(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue  # a line cut short by a crash
    return events


def _describe_exit(rc: int) -> str:
    if rc < 0:
        try:
            return f"killed by signal {signal.Signals(-rc).name} ({-rc})"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"interpreter exited with code {rc}"


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass


def pytest_command(env_python: str, root: Path, args: list[str], project: bool) -> list[str]:
    """Our cases run with our configuration; a user's project with its own (rootdir, ini,
    conftest), the plugin loaded by name, and every test run: a module that cannot be collected
    never stops the others, and an ``-x``/``--maxfail`` in the project's ``addopts`` does not
    stop the run at the first failure (options given here come after ``addopts``)."""
    base = [env_python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rN"]
    if project:
        return [*base, "-p", "jaxcompat.plugin.pytest_plugin", "--rootdir", str(root),
                "--continue-on-collection-errors", f"--maxfail={2**31 - 1}", *args]
    return [*base, "--rootdir", str(root), "-c", str(root / "pyproject.toml"), *args]


def plugin_path(root: Path, workdir: Path) -> Path | None:
    """A folder to put on the cell's PYTHONPATH so that its pytest imports jaxcompat.plugin.pytest_plugin
    (named by conftest.py), or None when pytest's working directory ``root`` already holds this
    package (the repository checkout). For the data bundled in an installed wheel it does not: the
    folder holds one link, to this package, and nothing else (never the tool's site-packages,
    whose packages would shadow the cell's own)."""
    package = PACKAGE
    if package.parent == root.resolve():
        return None
    folder = workdir / "pythonpath"
    link = folder / package.name
    folder.mkdir(parents=True, exist_ok=True)
    if not (link.is_symlink() and link.resolve() == package):
        link.unlink(missing_ok=True)
        link.symlink_to(package, target_is_directory=True)
    return folder


@dataclass
class Attempt:
    """One pytest process: how it ended, and the case it was in when killed or dead."""

    rc: int
    timed_out: str | None  # the case killed for running past its limit
    events: list[dict]


def run_cases(env_python: str, root: Path, case_args: list[str], *, backend: str,
              imports: list[str], timeout_s: float, workdir: Path,
              extra_env: dict[str, str] | None = None, max_restarts: int = 50,
              project: bool = False, label: str = "") -> CellRun:
    """Run ``case_args`` (paths or node ids) under pytest in the cell's interpreter, restarting
    it on the cases not yet run after a timeout or a crash (like pytest-xdist's workers).

    ``project``: ``root`` is a user's project (or tests folder), run with its own pytest
    configuration; tracebacks keep its frames, and its progress (``label``: the side) is shown
    to the sink of ``show_progress``."""
    workdir.mkdir(parents=True, exist_ok=True)
    run = CellRun()
    done: set[str] = set()
    pending = list(case_args)
    collected: list[str] | None = None
    log_path = workdir / "pytest.log"
    log_path.write_text("")
    env = pytest_env(root, workdir, backend, imports, extra_env, project)
    t0 = time.perf_counter()
    shown = _Progress(label or workdir.name, done) if project else None
    for attempt in range(max_restarts + 1):
        events_path = workdir / f"events-{attempt}.jsonl"
        events_path.unlink(missing_ok=True)
        step = watch(pytest_command(env_python, root, pending, project), root,
                     {**env, "JAXCOMPAT_RESULTS": str(events_path)}, events_path, log_path, timeout_s,
                     shown.tell if shown else None)
        run.rc = step.rc
        collected = collected or next((list(ev["cases"]) for ev in step.events if ev.get("event") == "collected"), None)
        running = record(step.events, run, done)
        if step.rc == IMPORT_FAILED_RC and any(v != IMPORTED for v in run.imports.values()):
            run.import_failed = True
            break
        killed = step.timed_out or (running if step.rc not in (0, 1) else None)
        if killed is None:
            break
        record_killed(run, done, killed, step, timeout_s)
        pending = [c for c in collected or [] if c not in done]
        if not pending:
            break
        if shown:
            shown.attempt_done(run)
    if shown:
        shown.attempt_done(run)
        shown.tell([], final=True)
    run.pytest_s = round(time.perf_counter() - t0, 3)
    run.log_tail = log_path.read_text(encoding="utf-8", errors="replace")[-4000:]
    return run


def run_repeated(env_python: str, root: Path, case_args: list[str], repeat: int, **kw) -> tuple[CellRun, float]:
    """``run_cases`` ``repeat`` times (flaky detection): the first run, carrying the others'
    results in ``repeats``, and the seconds all of them took. Stops early when imports fail."""
    runs: list[CellRun] = []
    for _ in range(max(1, repeat)):
        runs.append(run_cases(env_python, root, case_args, **kw))
        if runs[-1].import_failed:
            break
    runs[0].repeats = [r.results for r in runs[1:]]
    return runs[0], round(sum(r.pytest_s for r in runs), 3)


def pytest_env(root: Path, workdir: Path, backend: str, imports: list[str],
               extra_env: dict[str, str] | None, project: bool) -> dict[str, str]:
    """The environment of the pytest process: what the plugin reads, and nothing from the caller's
    pytest options."""
    env = {**os.environ, **(extra_env or {}), "JAXCOMPAT_BACKEND": backend,
           "JAXCOMPAT_IMPORTS": ",".join(imports), "PYTHONUNBUFFERED": "1"}
    for name in [k for k in env if not runenv.passed(k)]:
        del env[name]  # a caller that is itself an xdist worker (or a test) must not leak into the run
    shim = plugin_path(root, workdir)
    if shim is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(shim), env.get("PYTHONPATH")]))
    if backend == "cpu":
        env.setdefault("JAX_PLATFORMS", "cpu")
    if project:
        env["JAXCOMPAT_OWN_FRAMES"] = str(root)
    return env


def watch(argv: list[str], cwd: Path, env: dict[str, str], events_path: Path, log_path: Path,
          timeout_s: float, tell=None) -> Attempt:
    """Start pytest and watch its event stream: kill its process group when a case runs past
    ``timeout_s`` or the whole run is stopped (``Interrupted``); ``tell`` is given the events so far."""
    with open(log_path, "a", encoding="utf-8") as log:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        with _ACTIVE_LOCK:
            _ACTIVE.add(proc)
        timed_out: str | None = None
        while proc.poll() is None:
            time.sleep(0.1)
            if STOP.is_set():
                _kill_group(proc)
                break
            events = _read_events(events_path)
            if tell is not None:
                tell(events)
            timed_out = _overdue(events, timeout_s)
            if timed_out:
                _kill_group(proc)
                break
        rc = proc.wait()
        with _ACTIVE_LOCK:
            _ACTIVE.discard(proc)
    if STOP.is_set():
        raise Interrupted("run interrupted")
    return Attempt(rc, timed_out, _read_events(events_path))


def _overdue(events: list[dict], timeout_s: float) -> str | None:
    """The case that started and has not finished within ``timeout_s``, if any."""
    started: dict[str, float] = {}
    for ev in events:
        if ev.get("event") == "start":
            started[ev["case"]] = ev["t"]
        elif ev.get("event") == "result":
            started.pop(ev["case"], None)
    return next((case for case, t in started.items() if time.time() - t > timeout_s), None)


def record(events: list[dict], run: CellRun, done: set[str]) -> str | None:
    """Fold one attempt's events into ``run``; return the case that was running when it ended."""
    running: str | None = None
    for ev in events:
        kind = ev.get("event")
        if kind == "env":
            run.versions = ev.get("versions", {})
            run.imports = ev.get("imports", {})
            run.jax_backend = ev.get("jax_backend")
            run.device = ev.get("device") or {}
            run.shadowed = ev.get("shadowed") or []
        elif kind == "deprecation":
            dep = {k: ev.get(k) for k in ("package", "where", "message", "category", "case")}
            if not any(d["where"] == dep["where"] and d["message"] == dep["message"] for d in run.deprecations):
                run.deprecations.append(dep)
        elif kind == "warning":
            _attach_warning(run, ev)
        elif kind == "start":
            running = ev["case"]
        elif kind == "result":
            running = None if running == ev["case"] else running
            if ev["case"] not in done:
                done.add(ev["case"])
                run.results.append(RawResult.from_dict(ev))
            elif ev.get("phase") == "collect" and ev.get("status") == "failed":
                _error_over_skip(run, RawResult.from_dict(ev))
    return running


def _error_over_skip(run: CellRun, error: RawResult) -> None:
    """Two collectors of one file under one id (a module, and its doctests under --doctest-modules
    --doctest-ignore-import-errors): the module's collection error, not the doctests' skip, is the
    file's record (red team 12, A5: the skip hid a module that no longer imports)."""
    for i, r in enumerate(run.results):
        if r.case == error.case and r.phase == Phase.COLLECT and r.status == TestStatus.SKIPPED:
            run.results[i] = error


def _attach_warning(run: CellRun, ev: dict) -> None:
    """A test's warning (the plugin reports it after the test's result) onto that result."""
    from jaxcompat.model.warnings import TestWarning

    found = next((r for r in reversed(run.results) if r.case == ev.get("case")), None)
    w = TestWarning.from_dict(ev)
    if found is not None and w not in found.warnings:
        found.warnings.append(w)


def record_killed(run: CellRun, done: set[str], case: str, step: Attempt, timeout_s: float) -> None:
    """The case during which pytest was killed (``timeout``) or died (``crash``)."""
    if case in done:
        return
    done.add(case)
    status = TestStatus.TIMEOUT if step.timed_out else TestStatus.CRASH
    msg = f"killed after {timeout_s:g} s (case time limit)" if step.timed_out else _describe_exit(step.rc)
    started = next((ev["t"] for ev in step.events if ev.get("event") == "start" and ev["case"] == case), time.time())
    run.results.append(RawResult(case=case, status=status, message=msg, duration_s=round(time.time() - started, 3)))
