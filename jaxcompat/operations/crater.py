"""The crater: the ecosystem's dependents' own test suites, in a baseline and in a candidate.

Upstream's question before a release — *if I release this, whose tests break, and why?* — asked of
every project in ``dependents.toml`` through the machinery of ``check --tests`` (usertests: the
project installed with its test dependencies, its own pytest configuration, re-runs before blame,
every failure matched against the rules). Each dependent gets a ``DependentVerdict``; broken tests
are grouped by error signature *across* dependents (one upstream regression is one signature in
many projects), each group explained by a rule or by jax's API history, or drafted as a rule.

Each dependent runs in a forked child with its own time budget: one that crashes, hangs or fails to
install loses nothing of the others' results, since each result is written the moment it is known
(``dependents/<name>.json`` under the crater's reports folder). ``--shard i/n`` takes every n-th
unit of work by name (a dependent, or a part of one with ``split = N``: ``craterparts``);
``--report-only`` merges what the shards wrote, a split dependent's parts into one.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import signal
import threading
import time
import traceback
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from jaxcompat._util import runenv
from jaxcompat._util.atomic import write_text
from jaxcompat._util.redact import env_secrets, redact_env, url_secrets
from jaxcompat._util.statedir import StateDir
from jaxcompat._util.text import last_line, quiet
from jaxcompat.apihistory import apiexplain
from jaxcompat.env import testtarget
from jaxcompat.knowledge import dependentsources, drafts, flaky, roots
from jaxcompat.knowledge.cratergroups import Group
from jaxcompat.knowledge.dependentsources import describe as source_name
from jaxcompat.knowledge.signature import Signature, frame, normalise
from jaxcompat.model.crater import DependentResult, Plan, exit_status, verdict_of
from jaxcompat.model.dependents import Dependent, Dependents
from jaxcompat.model.matrix import AUTO, Matrix
from jaxcompat.model.roots import Attribution, RootCause
from jaxcompat.model.usertests import Comparison, Confirm, UserTest, counts
from jaxcompat.model.vocab import CellStatus, DependentVerdict, UserTestSide
from jaxcompat.operations import confirm, newwarnings, usertests
from jaxcompat.report.crater import summary, verdict_text
from jaxcompat.report.outputs import CraterReport
from jaxcompat.run.cell import resolve_cell

RESULTS = "dependents"  # the folder (under the crater's reports) of one JSON per dependent


RUN_ENV = "JAXCOMPAT_RUN_ID"  # the run's id where --run is not given (empty: not given)


def run_of(environ: dict[str, str], given: str = "") -> str:
    """The run one shard belongs to, the same in every shard of it: the id the user gave (``--run``,
    else ``$JAXCOMPAT_RUN_ID``), else the CI run that started them (``GITHUB_RUN_ID``: a re-run of a
    failed shard keeps it), else "" (no id: a merge tells its shards apart by when they ran,
    ``this_run``; never by the day, which splits a run started either side of midnight and joins
    two runs of one day)."""
    own = given or environ.get(RUN_ENV, "")
    if own:
        return f"run {own}"
    ci = environ.get("GITHUB_RUN_ID", "")
    return f"ci-run {ci}" if ci else ""


# ---------------------------------------------------------------- choosing


def select(dependents: Dependents, candidate_names: set[str], names: list[str] | None = None) -> list[Dependent]:
    """The dependents a candidate runs: those built on a package it names (every one, for a
    candidate of jax or jaxlib: the ecosystem runs on jax), or those named with --dependent."""
    if names:
        return [d for d in dependents.dependents if d.name in names]
    if candidate_names & {"jax", "jaxlib"}:
        return list(dependents.dependents)
    return [d for d in dependents.dependents if candidate_names & set(d.depends_on)]


def shard(deps: list[Dependent], spec: str | None) -> list[Dependent]:
    """``i/n``: every n-th unit of work by name from the i-th (a dependent, or a part of a split one:
    ``craterparts.units``); every unit is in exactly one shard, a split one's parts in different
    shards while it has no more parts than there are shards."""
    if not spec:
        return deps
    i, n = (int(x) for x in spec.split("/"))
    return sorted(deps, key=lambda d: d.unit)[i - 1::n]


# ---------------------------------------------------------------- one dependent


def judge(dep: Dependent, plan: Plan, matrix: Matrix, state_dir: Path, progress=quiet,
          version: str | None = None) -> DependentResult:
    """One dependent: its source (at ``version``, resolved here when not given), its caps against
    both sides, then its tests before and after."""
    from jaxcompat.env import projects
    from jaxcompat.env.candidate import CandidateError, candidate_cell
    from jaxcompat.env.releases import unreachable

    t0 = time.perf_counter()
    cache = StateDir(state_dir).cache
    res = DependentResult(dep.unit, DependentVerdict.NO_SOURCE, source=source_name(dep.source), plan=plan.key)
    try:
        root, target = _source(dep, plan, state_dir, version, res)
    except (projects.SourceMissing, testtarget.TestsError) as e:
        res.cause = _scrub(str(e), state_dir)
        if unreachable(res.cause):  # the index or the network did not answer: its own verdict
            res.verdict = DependentVerdict.UNREACHABLE
        return _done(res, t0)
    res.cause = _no_tests(dep, root, target, res.version)
    if dep.part and not res.cause:
        dep, res.cause = _part(dep, root, res)
    if res.cause:
        return _done(res, t0)
    target = replace(target, only=dep.tests)
    res.test_deps = target.deps.describe()
    try:
        candidate = candidate_cell(list(plan.candidate), python=plan.python, companions=False, index=plan.index)
        # the index options are the candidate's (a nightly index, --pre): the baseline is releases
        baseline = candidate_cell(list(plan.baseline), python=plan.python, companions=False)
    except CandidateError as e:  # validated by the command already; kept for a caller that did not
        res.verdict, res.cause = DependentVerdict.CRASHED, str(e)
        return _done(res, t0)
    cell_c, cell_b = target.cell(candidate), target.cell(baseline)
    cell_c, cell_b, _ = testtarget.same_python(cell_c, cell_b, target, cache)
    cell_c, cell_b = replayed(cell_c, plan), replayed(cell_b, plan)
    res.python = cell_c.python
    needs = projects.runtime_requirements(root)
    for side, cell in (("candidate", cell_c), ("baseline", cell_b)):  # markers read for the side's Python
        res.caps += [f"{side}: {dep.name} {res.version} requires {c}"
                     for c in projects.caps(needs, cell.pins, python=cell.python)]
    if res.caps:
        res.verdict, res.cause = DependentVerdict.CAPPED, "; ".join(res.caps)
        return _done(res, t0)
    res.cells, res.only = {"candidate": cell_c.id, "baseline": cell_b.id}, list(dep.tests)
    res.env = redact_env(dict(target.env))
    cmp = usertests.compare(cell_c, cell_b, target, matrix, state_dir, progress, min(2, os.cpu_count() or 1),
                            confirm=_confirm(dep, plan, state_dir), reuse=plan.reuse_baseline,
                            decided=resolve_cell(cell_b, matrix, state_dir))
    res.environments, res.tests, res.learned = 2, list(cmp.tests), dict(cmp.learned)
    res.health, res.ran, res.classes = confirm.health(cmp.tests), dict(cmp.ran), counts(cmp.tests)
    res.versions = {"candidate": _eco(cmp.candidate_versions), "baseline": _eco(cmp.baseline_versions)}
    res.past_day = past_day(cmp, plan, dep.name, cache) if plan.as_of else {}
    res.sides = cmp.sides.to_dict() if cmp.sides else {}
    res.scan = apiexplain.source_findings(root, cmp.candidate_versions.get("jax", ""))
    for side, error in (("candidate", cmp.error), ("baseline", cmp.baseline_error)):
        if error and cmp.status.get(side, CellStatus.OK) != CellStatus.OK:  # it could not be installed there
            _not_installed(res, side, error, cmp.status[side])
            return _done(res, t0)
    _judged(res, cmp)
    return _done(res, t0)


def past_day(cmp: Comparison, plan: Plan, name: str, cache: Path) -> dict[str, list[str]]:
    """A replay (``--as-of DAY``), per side: what it installed from after the day, besides the plan's
    own pins (with the jaxlib and plugins a jax pin brings) and the dependent itself. What its
    requirements needed newer than the day is taken past the cutoff: the replay is then not the
    day's as it was, and the report says so."""
    from packaging.utils import canonicalize_name as canon

    from jaxcompat.env.candidate import package_of
    from jaxcompat.env.releases import released_since
    from jaxcompat.env.sides import FORCED

    out = {}
    for side, reqs, installed in (("candidate", plan.candidate, cmp.candidate_versions),
                                  ("baseline", plan.baseline, cmp.baseline_versions)):
        pinned = {package_of(r) for r in reqs} - {""}  # a wheel, a folder, a git URL: its package too
        pinned |= {f for d in pinned for f in FORCED.get(d, ())} | {canon(name)}  # and what a pin brings
        later = released_since({d: v for d, v in installed.items() if canon(d) not in pinned}, plan.as_of, cache)
        undated = [f"{d} {v}" for d, v, date in later if not date]
        said = [f"{d} {v} ({date})" for d, v, date in later if date]
        said += [f"{', '.join(undated)} (the index did not answer: not known to be of the day)"] if undated else []
        if said:
            out[side] = said
    return out


def replayed(cell, plan: Plan):
    """A side of a replay (``--as-of DAY``): what the dependent's own requirements bring (equinox
    for lineax) is resolved as of that day too, not as of the pins' date (the newest pin's day
    after: a week or months earlier, so a dependent needing a newer release was let past the
    cutoff to today's); the pins themselves stay exempt from the cutoff."""
    return replace(cell, date=plan.as_of) if plan.as_of else cell


def _judged(res: DependentResult, cmp: Comparison) -> None:
    """The verdict on tests that ran (``model/crater.verdict_of``: the one decision, which a split
    dependent's merged parts get too)."""
    res.verdict, res.cause = verdict_of(cmp)
    res.compared, res.timeout_s, res.baseline_reused = True, cmp.timeout_s, cmp.baseline_reused


def _part(dep: Dependent, root: Path, res: DependentResult) -> tuple[Dependent, str]:
    """A part of a split dependent: the dependent with this part's test files only (its deal said in
    ``res``), or why the part has none."""
    from jaxcompat.operations import craterparts

    mine, files = craterparts.part_tests(dep, root)
    res.part, res.split_files = [dep.part, dep.split], files
    if not mine:
        return dep, (f"no test file falls to part {dep.part} of {dep.split} (its suite has {len(files)}): write "
                     f"split = {max(1, len(files))} or fewer")
    return replace(dep, tests=tuple(mine)), ""


def _confirm(dep: Dependent, plan: Plan, state_dir: Path) -> Confirm:
    """How its breaks are confirmed: the plan's re-runs and --aa, and what is known of its flaky tests."""
    known = flaky.load(plan.flaky_file or None, state_dir, learning=plan.aa).known(dep.name)
    return Confirm(reruns=plan.reruns, aa=plan.aa, known=known)


def learn(results: list[DependentResult], plan: Plan, state_dir: Path) -> int:
    """--aa: every dependent's tests that flipped by themselves, kept in the flaky file; how many."""
    store = flaky.load(plan.flaky_file or None, state_dir, learning=True)
    for r in results:
        store.learn(r.name, r.learned)
    store.save()
    return sum(len(r.learned) for r in results)


def _source(dep: Dependent, plan: Plan, state_dir: Path, version: str | None, res: DependentResult):
    """The dependent's root folder and test target, its release or commit said in ``res``."""
    from jaxcompat.env import projects

    cache, src = StateDir(state_dir).cache, StateDir(state_dir).crater_sources
    version = version or projects.version_of(dep, cache, plan.as_of)
    res.version = projects.describe(dep, version, cache)
    res.commit = dependentsources.of(dep.source).commit(version)
    root = projects.fetch(dep, version, cache, src)
    res.absent = projects.absent_files(dep, version, src)
    target = testtarget.locate(str(root), list(dep.extras), list(dep.groups), list(dep.with_), env=dep.environment())
    return root, replace(target, timeout_s=dep.test_timeout_s)


def _not_installed(res: DependentResult, side: str, error: str, status: CellStatus) -> None:
    """A side that could not be installed: the index or the network did not answer (never a cap),
    the resolver found the dependent's own requirements exclude the side (a cap), or the install
    failed."""
    from jaxcompat.env.releases import unreachable

    res.cause = f"{side}: {last_line(error)}"
    # nothing was installed there: its tests were compared with nothing (every test that passed in
    # the baseline would read broken beside a candidate never installed); none is a record of the upgrade
    res.tests, res.classes, res.health, res.learned = [], {}, None, {}
    if unreachable(error):
        res.verdict = DependentVerdict.UNREACHABLE
    elif status == CellStatus.UNRESOLVABLE:
        res.verdict, res.caps = DependentVerdict.CAPPED, [f"{side}: the resolver: {last_line(error)}"]
    else:
        res.verdict = DependentVerdict.INSTALL_ERROR


def source_of(dep: Dependent, plan: Plan, state_dir: Path, version: str | None):
    """(root folder, test target) of a dependent's source as the crater takes it (``craterbisect``)."""
    return _source(dep, plan, state_dir, version, DependentResult(dep.name, DependentVerdict.NO_SOURCE))


def _no_tests(dep: Dependent, root: Path, target, version: str) -> str:
    """Why the source cannot be tested (nothing to install, a test path it lacks, no test module
    at all), or ""."""
    if not target.project:
        return f"{dep.name} {version}: its source has no pyproject.toml or setup.py to install"
    missing = [p for p in dep.tests if not (root / p.split("::", 1)[0]).exists()]  # a path, or a test's node id
    if missing or not any(root.rglob("test_*.py")) and not any(root.rglob("*_test.py")):
        return (f"{dep.name} {version}: " + (f"no {', '.join(missing)} in its source" if missing
                                             else "its source holds no test_*.py"))
    return ""


def _eco(versions: dict[str, str]) -> dict[str, str]:
    from jaxcompat.plugin.packages import KEY_DISTS

    return {k: v for k, v in versions.items() if k in KEY_DISTS}


def _scrub(text: str, state_dir: Path) -> str:
    from jaxcompat.report.scrub import Scrubber

    return Scrubber({str(state_dir.resolve()): "<state>", str(Path.home()): "~"})(text)


def _done(res: DependentResult, t0: float) -> DependentResult:
    res.seconds = round(time.perf_counter() - t0, 1)
    return res


# ---------------------------------------------------------------- isolation


def _child(dep: Dependent, plan: Plan, matrix: Matrix, state_dir: Path, out: Path, progress, version,
           parent: int) -> None:
    """In the forked child: its own process group; SIGTERM (the budget) kills its test processes."""
    from jaxcompat.run import runner

    os.setpgid(0, 0)

    def stop(signum, frame_):  # noqa: ARG001 - signal handler signature
        runner.stop_all()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    # as the budget's stop does: the test processes (their own sessions), then this whole process
    # group, an installer still writing an environment with it (red team 10, F1)
    die_with(parent, lambda: (runner.stop_all(), os.killpg(0, signal.SIGKILL)))
    try:
        res = judge(dep, plan, matrix, state_dir, progress, version)
    except BaseException as e:  # noqa: BLE001 - whatever it was, it is this dependent's result
        res = DependentResult(dep.unit, DependentVerdict.CRASHED, source=source_name(dep.source), plan=plan.key,
                              cause=_scrub(f"{type(e).__name__}: {e}", state_dir)
                              + " (at " + _scrub(traceback.format_exc().strip().splitlines()[-3].strip(), state_dir)
                              + ")")
    write_text(out, json.dumps(boundary(plan, [dep], state_dir).tree(res.to_dict())))
    os._exit(0)


def die_with(parent: int, stop, every: float = 1.0) -> threading.Thread:
    """Call ``stop`` once ``parent`` is gone (the child is then another process's): a crater killed
    hard (SIGKILL, the machine's OOM killer) leaves no child running on unwatched, past its budget and
    holding the reports folder's lock, which the next run would wait on for ever."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        stop()

    thread = threading.Thread(target=watch, name="die-with-parent", daemon=True)
    thread.start()
    return thread


def isolated(dep: Dependent, plan: Plan, matrix: Matrix, state_dir: Path, progress=quiet,
             version: str | None = None) -> DependentResult:
    """``judge`` in a forked child, stopped past ``dep.budget_s``; a child that dies is that
    dependent's result (``crashed``), never the crater's end."""
    out = StateDir(state_dir).crater_result(dep.unit)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    t0 = time.perf_counter()
    proc = multiprocessing.get_context("fork").Process(target=_child,
                                                       args=(dep, plan, matrix, state_dir, out, progress, version,
                                                             os.getpid()))
    proc.start()
    try:
        proc.join(dep.budget_s)
    except BaseException:  # Ctrl-C, SIGTERM, a bug of ours: the child is in its own process group, stop it too
        _stop(proc)
        raise
    over = proc.is_alive()
    if over:
        os.kill(proc.pid, signal.SIGTERM)  # its handler kills its test processes (their own sessions)
        proc.join(20)
    if over or proc.exitcode != 0:
        # and whatever else of its process group is left (an installer still writing an environment,
        # which the next run of that environment would collide with)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.join(5)
    seconds = round(time.perf_counter() - t0, 1)
    base = DependentResult(dep.unit, DependentVerdict.CRASHED, source=source_name(dep.source), plan=plan.key,
                           seconds=seconds)
    if over:
        base.verdict = DependentVerdict.OVER_BUDGET
        base.cause = (f"stopped after {seconds:.0f} s: its budget is {dep.budget_s:.0f} s "
                      "(budget_s in the dependents file, or --budget)")
        return base
    try:
        return DependentResult.from_dict(json.loads(out.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        code = proc.exitcode
        how = (f"killed by signal {signal.Signals(-code).name}" if code is not None and code < 0
               else f"exited with code {code}")
        base.cause = f"the crater's process for {dep.unit} {how} before it wrote a result"
        return base


def _stop(proc) -> None:
    """The child and whatever is left of its process group, within seconds."""
    try:
        os.kill(proc.pid, signal.SIGTERM)  # its handler kills its test processes (their own sessions)
    except ProcessLookupError:
        pass
    proc.join(5)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.join(5)


@contextlib.contextmanager
def interruptible():
    """Ctrl-C and SIGTERM raise KeyboardInterrupt here, whatever the parent process left them as (a
    shell's background job inherits SIGINT ignored); a second one while stopping is ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopping = threading.Event()

    def interrupt(signum, frame_):  # noqa: ARG001 - signal handler signature
        if not stopping.is_set():
            stopping.set()
            raise KeyboardInterrupt

    previous = {s: signal.signal(s, interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def result_path(out_dir: Path, name: str) -> Path:
    return out_dir / RESULTS / f"{name}.json"


def cache_key(dep: Dependent, plan: Plan, matrix: Matrix, version: str = "",
              state_dir: Path | None = None) -> str | None:
    """Where a judged result may be re-used from: only when nothing in it moves (every requirement
    of both sides an exact release, no other index, the dependent resolved to ``version``: a
    release, or a git source's commit); the key holds the plan, the Python asked for, the
    dependent's record and what it resolved to, the matrix file and the rules as loaded (every
    ``--rules`` file merged, less each ``--without-rule``: they explain the failures), the full
    version of each interpreter it may run on, and the environment variables that configure a test
    run (_util/runenv: the caller's, which every test run inherits)."""
    import hashlib

    from jaxcompat.env.candidate import CandidateError, parse_requirement

    if plan.index or not version or plan.aa:  # --aa learns: it runs
        return None
    for text in plan.candidate + plan.baseline:
        try:
            req = parse_requirement(text)  # a wheel, a folder or a URL: a direct reference (it moves)
        except CandidateError:
            return None
        if req.url or len(req.specifier) != 1 or next(iter(req.specifier)).operator != "==":
            return None
    rules = matrix.path.read_bytes() if matrix.path.is_file() else b""
    known = _confirm(dep, plan, Path(state_dir)).known if state_dir is not None else ()
    said = f"{plan.key}|{plan.python}|{dep!r}|{version}|{plan.reruns}|{known!r}|held|{_rules_digest(matrix)}"
    said += "|" + json.dumps([_interpreters(plan.python), runenv.configuring(dict(os.environ))])
    return hashlib.sha256(said.encode() + rules).hexdigest()[:20]


def _interpreters(python: str) -> dict[str, str]:
    """Every interpreter ``python`` may stand for on this machine (``auto``: each supported minor),
    by its full ``sys.version``: a patch upgrade in place is another key."""
    from jaxcompat.env import pythons
    from jaxcompat.env.resolution import PYTHONS

    out = {}
    for version in PYTHONS if python == AUTO else (python,):
        try:
            out[version] = pythons.full_version(pythons.find_python(version))
        except pythons.PythonMissing:
            out[version] = ""
    return out


def _rules_digest(matrix: Matrix) -> str:
    """The rules a run judges with, as loaded: a rule added by ``--rules``, left out by
    ``--without-rule`` or edited in its file gives another digest (every field, a pattern whole:
    its repr is cut at 200 characters)."""
    import dataclasses
    import hashlib
    import re

    def plain(value) -> object:
        return [value.pattern, value.flags] if isinstance(value, re.Pattern) else str(value)

    said = json.dumps([dataclasses.asdict(f) for f in matrix.failures], default=plain, sort_keys=True)
    return hashlib.sha256(said.encode()).hexdigest()


def boundary(plan: Plan, deps, state_dir: Path | None = None):
    """The one boundary every text of a crater report crosses before it is written or shown: machine
    paths out (the state folder, the home folder), and every credential the user gave us — in the
    candidate's and the baseline's URLs, the index options, a dependent's git URL, its environment."""
    from jaxcompat.report.scrub import Scrubber

    index = (plan.index.index_url, *plan.index.extra_index_urls, *plan.index.find_links)
    urls = [*plan.candidate, *plan.baseline, *(u.reveal() for u in index),
            *(url for d in deps for url in dependentsources.of(d.source).secrets(d.source))]
    secrets = [x for u in urls for x in url_secrets(u)] + [x for d in deps for x in env_secrets(dict(d.env))]
    paths = {str(Path.home()): "~"}
    if state_dir is not None:
        paths[str(state_dir.resolve())] = "<state>"
    return Scrubber(paths, secrets=secrets)


def shown(res: DependentResult, scrub, plan: Plan) -> DependentResult:
    """A result as reports hold it: every text through the boundary."""
    out = DependentResult.from_dict(scrub.tree(res.to_dict()))
    out.env, out.plan, out.cached = redact_env(out.env), plan.key, res.cached
    return out


def _resolved(dep: Dependent, plan: Plan, state_dir: Path) -> tuple[str, DependentResult | None]:
    """What the dependent resolves to now (a release, a commit), or its no-source result."""
    from jaxcompat.env import projects

    try:
        return projects.version_of(dep, StateDir(state_dir).cache, plan.as_of), None
    except projects.SourceMissing as e:
        return "", DependentResult(dep.unit, DependentVerdict.NO_SOURCE, source=source_name(dep.source),
                                   plan=plan.key, cause=str(e))


def _one(dep: Dependent, plan: Plan, matrix: Matrix, state_dir: Path, progress, isolate: bool,
         use_cache: bool) -> DependentResult:
    version, missing = _resolved(dep, plan, state_dir)
    if missing is not None:
        return missing
    key = cache_key(dep, plan, matrix, version, state_dir)
    cached = StateDir(state_dir).crater_cached(dep.unit, key) if key else None
    if use_cache and cached is not None and cached.is_file():
        try:
            res = DependentResult.from_dict(json.loads(cached.read_text()))
            res.cached = True
            progress("    (from the result cache: the same candidate, baseline, Python, dependent at the same "
                     "release or commit, and rules)")
            return res
        except (OSError, ValueError, KeyError, TypeError):
            pass
    res = (isolated if isolate else judge)(dep, plan, matrix, state_dir, progress, version)
    res.cached = False
    if cached is not None and res.verdict.judged:
        write_text(cached, json.dumps(shown(res, boundary(plan, [dep], state_dir), plan).to_dict()) + "\n")
    return res


def run(deps: list[Dependent], plan: Plan, matrix: Matrix, state_dir: Path, out_dir: Path,
        progress=quiet, isolate: bool = True, use_cache: bool = True) -> list[DependentResult]:
    """Every dependent in turn; each result written the moment it is known (and, judged with
    nothing moving, kept in the result cache for the next run). Everything written or said
    crosses ``boundary``. Interrupted (KeyboardInterrupt), the dependents not finished are
    written as not run, and the interruption goes on up."""
    scrub = boundary(plan, deps, state_dir)

    def say(text: str) -> None:
        progress(scrub(text))

    out: list[DependentResult] = []
    for i, dep in enumerate(deps, 1):
        say(f"[{i}/{len(deps)}] {dep.unit} ({source_name(dep.source)})…")
        try:
            res = shown(_one(dep, plan, matrix, state_dir, say, isolate, use_cache), scrub, plan)
        except KeyboardInterrupt:
            for d in deps[i - 1:]:
                gone = DependentResult(d.unit, DependentVerdict.NOT_RUN, source=source_name(d.source), plan=plan.key,
                                       cause="the crater was interrupted before it finished this dependent",
                                       run_id=plan.run_id)
                write_text(result_path(out_dir, d.unit), json.dumps(shown(gone, scrub, plan).to_dict(), indent=1))
            raise
        res.run_id = plan.run_id
        write_text(result_path(out_dir, dep.unit), json.dumps(res.to_dict(), indent=1) + "\n")
        say(f"    {dep.unit} {res.version}: {res.verdict}" + (f" ({res.cause})" if res.cause else "")
            + (f"; {len(res.absent)} file(s) absent from its repository: {', '.join(res.absent[:5])}"
               if res.absent else "") + f" — {res.seconds:.0f} s")
        out.append(res)
    return out


def stored(out_dir: Path) -> list[DependentResult]:
    """Every dependent's result under ``out_dir`` (what shards wrote), by name."""
    return read_stored(out_dir)[0]


def current(results: list[DependentResult], chosen: list[Dependent], mine: list[Dependent], plan: Plan,
            state_dir: Path) -> list[DependentResult]:
    """Of the stored results (of this plan, a unit chosen), those that hold now: the ones run here,
    and another shard's while its source is still what it ran at, where that is known here without
    network or git (a local checkout edited since is not held: the shard's report lacks it, and
    says to merge the shards)."""
    from jaxcompat.env import projects

    here, by_unit = {d.unit for d in mine}, {d.unit: d for d in chosen}
    kept = []
    for r in results:
        dep = by_unit.get(r.name)
        if r.plan != plan.key or dep is None:
            continue
        if r.name not in here and not dependentsources.of(dep.source).NEEDS:
            version, missing = _resolved(dep, plan, state_dir)
            if missing is not None or projects.describe(dep, version, StateDir(state_dir).cache) != r.version:
                continue
        kept.append(r)
    return kept


def read_stored(out_dir: Path) -> tuple[list[DependentResult], list[str]]:
    """(the results that read, the files under ``dependents/`` that do not: corrupt, cut short,
    another schema)."""
    found, unreadable = [], []
    for path in sorted((out_dir / RESULTS).glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not _well_formed(data, path.stem):
                raise ValueError("another schema")
            bad = _mistyped(data)
            if bad:
                unreadable.append(f"{path.name} (unreadable part: its key {bad!r} holds another type)")
                continue
            found.append(_as_its_tests_say(DependentResult.from_dict(data)))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            unreadable.append(path.name)
    return found, unreadable


def _strs(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _table(value: object, member) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and member(v) for k, v in value.items())


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# what each key of a stored result holds, where a report reads into it (a wrong type: an unreadable part)
_SHAPES = {
    "versions": lambda v: _table(v, lambda x: _table(x, lambda y: isinstance(y, str))),
    "classes": lambda v: _table(v, _count), "ran": lambda v: _table(v, _count),
    **{k: lambda v: _table(v, lambda x: isinstance(x, str)) for k in ("cells", "env", "learned")},
    "past_day": lambda v: _table(v, _strs),
    "sides": lambda v: isinstance(v, dict), "health": lambda v: v is None or isinstance(v, dict),
    "caps": _strs, "absent": _strs, "only": _strs, "split_files": _strs,
    "part": lambda v: isinstance(v, list) and all(_count(x) for x in v) and len(v) in (0, 2),
    "part_seconds": lambda v: isinstance(v, list) and all(_number(x) for x in v),
    "scan": lambda v: isinstance(v, list) and all(isinstance(f, dict) and all(k in f for k in ("path", "line", "code"))
                                                  for f in v),
    "seconds": _number, "timeout_s": _number, "environments": lambda v: _count(v),
    "cached": lambda v: isinstance(v, bool), "compared": lambda v: isinstance(v, bool),
    **{k: lambda v: isinstance(v, str) for k in ("version", "commit", "source", "cause", "test_deps", "python",
                                                 "plan", "run_id", "verdict")},
}


def _mistyped(data: dict) -> str:
    """The first key of a stored result whose value is not of the type its record holds ("" when none)."""
    return next((k for k, ok in _SHAPES.items() if k in data and data[k] is not None and not ok(data[k])), "")


def _as_its_tests_say(r: DependentResult) -> DependentResult:
    """A stored result whose verdict says safe while its tests say otherwise (a broken one among them):
    the tests are the truth, its verdict is recomputed from them."""
    if r.verdict != DependentVerdict.SAFE or not r.tests:
        return r
    verdict, cause = verdict_of(Comparison(r.tests, with_baseline=True, ran=r.ran, timeout_s=r.timeout_s))
    if verdict == DependentVerdict.SAFE:
        return r
    return replace(r, verdict=verdict, cause=cause or "its stored verdict (safe) contradicted its tests: "
                   "recomputed from them")


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _well_formed(data: object, stem: str) -> bool:
    """A stored result as ``DependentResult.to_dict`` writes it: its own name (the file's), its
    run's key, counts that are counts, tests that are records."""
    if not isinstance(data, dict) or data.get("name") != stem or not isinstance(data.get("plan", ""), str):
        return False
    ran, tests = data.get("ran", {}), data.get("tests", [])
    return (isinstance(ran, dict) and all(isinstance(k, str) and _count(v) for k, v in ran.items())
            and isinstance(tests, list) and all(isinstance(t, dict) for t in tests)
            and isinstance(data.get("cause", ""), str) and isinstance(data.get("seconds", 0), (int, float)))


PLANS = "plans"  # under dependents/: what each shard was asked to judge (travels with its results)
EARLIEST = datetime.min.replace(tzinfo=timezone.utc)  # a plan that says not when it ran (an earlier version's)


def _plan_file(out_dir: Path, shard: str | None) -> Path:
    return out_dir / RESULTS / PLANS / (f"shard-{shard.replace('/', '-of-')}.json" if shard else "all.json")


def _now() -> datetime:
    return datetime.now(timezone.utc)


def store_plan(out_dir: Path, plan: Plan, chosen: list[Dependent], shard: str | None) -> None:
    """What this run (or shard) plans: the run's key and every dependent selected across shards, so
    a merge knows what is missing; its run (``run_of``) and when it started (``written``)."""
    write_text(_plan_file(out_dir, shard),
               json.dumps({"plan": plan.key, "dependents": sorted(d.unit for d in chosen), "run": plan.run_id,
                           "of": plan.run or run_of(dict(os.environ)),
                           "written": _now().isoformat()},
                          indent=1) + "\n")


def finish_plan(out_dir: Path, shard: str | None) -> None:
    """The shard's stored plan, with when it stopped running (``finished``, interrupted or not): the
    shards of a run without an id are those that ran at the same time (``this_run``)."""
    path = _plan_file(out_dir, shard)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # gone or damaged since: a merge names it, or takes the shard as running on
        return
    write_text(path, json.dumps({**data, "finished": _now().isoformat()}, indent=1) + "\n")


def _when(data: dict, key: str) -> datetime:
    """A stored plan's time (``written``, ``finished``) as it says it, UTC; EARLIEST where it has none."""
    text = data.get(key, "")
    if not text:
        return EARLIEST
    when = datetime.fromisoformat(text)  # a ValueError: not a time, the plan does not read
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _span(data: dict) -> tuple[datetime, datetime]:
    """When a stored plan's shard ran: from ``written`` to ``finished``; one that has not recorded its
    end (still running, or stopped hard) runs on as far as a merge can tell; one that says neither
    (an earlier version's) at EARLIEST."""
    start = _when(data, "written")
    if "finished" in data:
        return start, max(start, _when(data, "finished"))
    return start, (start if start == EARLIEST else datetime.max.replace(tzinfo=timezone.utc))


def _clock(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M UTC") if when != EARLIEST else "an unknown time"


# how long a shard that never recorded its end may have run on, as a merge reads it: a CI job's limit
# (GitHub's is 6 h), shorter than the day between two nightly runs
UNFINISHED_SPAN = timedelta(hours=6)


def this_run(read: list[tuple[str, dict]], given: str = "") -> tuple[set[str], str]:
    """(the stored plan files of the run a merge takes, which run that is and why): the run ``given``
    (--run ID); else the run of the shard that started last: every plan of its id (``run_of``), or,
    without one, every plan without an id whose shard ran at the same time as it or as another such
    (running times overlapping): never a shard of an earlier run, which ended before these started."""
    if given:
        return ({name for name, data in read if data.get("of", "") in (f"run {given}", f"ci-run {given}")},
                f"run {given} (as --run asked)")
    newest = max(read, key=lambda nd: _when(nd[1], "written"))[1]
    if newest.get("of", ""):
        return ({name for name, data in read if data.get("of", "") == newest["of"]},
                f"{newest['of']} (the run id of the shard that started last; a shard of another id is another run)")
    group: list[str] = []
    reach = None
    # a shard that never recorded its end (stopped hard, or still running) is taken as running for at most
    # UNFINISHED_SPAN: else one killed last week would bridge every later run into tonight's (red team 9)
    spans = []
    for name, data in read:
        if not data.get("of", ""):
            start, end = _span(data)
            spans.append((start, end if "finished" in data or data is newest else
                           min(end, start + UNFINISHED_SPAN), name))
    for start, end, name in sorted(spans):
        if reach is None or start > reach:
            group, reach = [], end
        group.append(name)
        reach = max(reach, end)
    if _when(newest, "written") == EARLIEST:  # an earlier version's plans, which say neither: one run, as then
        return set(group), ""
    return set(group), ("the shards without a run id that ran at the same time as the one started last ("
                        f"{_clock(_when(newest, 'written'))})")


def _left_out(name: str, data: dict, this: str) -> str:
    """Why a stored plan is not of the run merged (``this``: its id; "": it has none)."""
    if data.get("of", ""):
        return f"{PLANS}/{name} (of another run: {data['of']}, not " + (f"{this})" if this else "the shards merged, "
                                                                         "which have no run id)")
    if this:
        return f"{PLANS}/{name} (of another run: it has no run id, not {this})"
    start, end = _span(data)
    return (f"{PLANS}/{name} (of another run: it has no run id and ran from {_clock(start)} to {_clock(end)}, "
            "ended before the shards merged started; shards of one run run one after another share an id: "
            "--run ID or $JAXCOMPAT_RUN_ID)")


def _read_plans(out_dir: Path) -> tuple[list[tuple[str, dict]], list[str]]:
    """(each stored plan that reads: its file's name and its data; the files that do not)."""
    read: list[tuple[str, dict]] = []
    unreadable = []
    for path in sorted((out_dir / RESULTS / PLANS).glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            names = data["dependents"]
            if not isinstance(data["plan"], str) or not isinstance(names, list) or not all(
                    isinstance(n, str) for n in names) or not all(
                    isinstance(data.get(k, ""), str) for k in ("run", "of", "written", "finished")):
                raise ValueError("another schema")
            _span(data)
            read.append((path.name, data))
        except (OSError, ValueError, KeyError, TypeError):
            unreadable.append(f"{PLANS}/{path.name}")
    return read, unreadable


def planned(out_dir: Path, runs: set[str] | None = None, stale: list[str] | None = None, given: str = "",
            said: list[str] | None = None) -> tuple[dict[str, set[str]], list[str]]:
    """({run key: the dependents planned}, unreadable plan files) as the shards of the run being
    merged stored them (``this_run``: the run ``given``, else the run of the shard that started
    last); into ``runs``, each such plan's ``run_id`` (the shard that wrote it); into ``stale``,
    the plan files of another run (an earlier night's shard: its results are not this run's), each
    with why; into ``said``, which run it is and why."""
    read, unreadable = _read_plans(out_dir)
    this, why = this_run(read, given) if read else (set(), "")
    if said is not None and why:
        said.append(why)
    of = next((data.get("of", "") for name, data in read if name in this), f"run {given}" if given else "")
    plans: dict[str, set[str]] = {}
    for name, data in read:
        if name not in this:
            if stale is not None:
                stale.append(_left_out(name, data, of))
            continue
        plans.setdefault(data["plan"], set()).update(data["dependents"])
        if runs is not None:
            runs.add(data.get("run", ""))
    return plans, unreadable


def named_by(results: list[DependentResult], plans: dict[str, set[str]],
             runs: set[str] | None = None) -> tuple[list[DependentResult], list[str]]:
    """(the stored results a stored plan names: of its run, a unit it planned, written by the shard
    that stored one of the plans (``runs``: their ``run_id``s; None: not asked); the others, each its
    file and why it is left out). A result no plan names never enters a verdict."""
    kept, ignored = [], []
    for r in results:
        if r.name in plans.get(r.plan, ()) and (runs is None or r.run_id in runs):
            kept.append(r)
        elif r.name in plans.get(r.plan, ()):
            ignored.append(f"{r.name}.json (written by no shard whose plan is stored: left from an earlier run of the "
                           "same plan, or by an earlier version of jax-compat)")
        elif r.plan in plans:
            ignored.append(f"{r.name}.json (its run planned no such dependent: left from an earlier run)")
        else:
            ignored.append(f"{r.name}.json (" + ("of another run: another candidate, baseline, day, Python or index"
                                                  if plans else "no shard stored its plan") + ")")
    return kept, ignored


def missing_result(name: str, key: str) -> DependentResult:
    """A dependent planned and never reported: not judged."""
    return DependentResult(name, DependentVerdict.NOT_RUN, plan=key,
                           cause="no result stored: its shard did not finish, or its artifact is missing")


# ---------------------------------------------------------------- across dependents


def signature_of(test: UserTest) -> Signature:
    """A broken test's signature, read from its record (the first line of its message and its
    traceback's last frame)."""
    message = test.message or ""
    head = message.split(": ", 1)
    error = head[0].rsplit(".", 1)[-1] if len(head) == 2 and head[0].replace(".", "").isidentifier() else ""
    if test.candidate in (UserTestSide.ERROR, UserTestSide.TIMEOUT) and not error:
        error = test.candidate.value
    return Signature(error or "failed", normalise(message, error), frame(test.traceback or ""))


def group(results: list[DependentResult], failures=(), candidate: set[str] = frozenset()) -> list[Group]:
    """Broken tests of every dependent, one group per signature family (error, message, package),
    the largest first; a rule's explanation is the group's whatever the message's details, and the
    package its ranges name is where the failure lies (``failures``: the rules; ``candidate``:
    the packages the candidate moves, never that package)."""
    by_id = {f.id: f for f in failures}
    groups: dict[tuple, Group] = {}
    for res in results:
        known = roots.known_names(res.versions.get("candidate", {}), res.versions.get("baseline", {}), [res.name])
        for t in res.broken():
            sig = signature_of(t)
            key = ("rule", t.explained_by) if t.explained_by else sig.family
            g = groups.setdefault(key, Group(sig, t.explained_by, t.fix, list(t.upstream), t.explained_by_api))
            g.tests.setdefault(res.name, []).append(t.test)
            where = roots.attribute(t.traceback or "", res.name, known)
            package = roots.rule_package(by_id.get(t.explained_by or ""), candidate)
            g.attributions.append((res.name, roots.with_rule(where, res.name, known.get(roots.key(package), package))))
    for g in groups.values():  # the group's root: where most of its tests' failures lie
        counts: dict[Attribution, int] = {}
        for _, where in g.attributions:
            counts[where] = counts.get(where, 0) + 1
        top = min(counts, key=lambda a: (-counts[a], a))
        g.root, g.through = top.root, list(top.through)
        if g.explained_by:  # one rule, one root; unexplained, each test keeps its own frames' root (two
            # dependents' own failing asserts share a signature: neither fails through the other)
            g.attributions = [(dep, roots.with_rule(where, dep, g.root)) for dep, where in g.attributions]
    return sorted(groups.values(), key=lambda g: (-len(g.tests), -sum(len(v) for v in g.tests.values())))


def moved(plan: Plan, results: list[DependentResult]) -> set[str]:
    """The packages the candidate moves: those it names otherwise than the baseline does (a pin both
    sides share is not moved), and those a dependent's candidate side installed at another version
    than its baseline."""
    from jaxcompat.env.candidate import package_of

    out = set()
    for text in set(plan.candidate) - set(plan.baseline):
        out.add(package_of(text))  # a wheel or a folder moves its package too
    out.discard("")
    for r in results:
        before, after = r.versions.get("baseline", {}), r.versions.get("candidate", {})
        out |= {d for d, v in after.items() if before and before.get(d) != v}
    return out


def root_causes(groups: list[Group], candidate: set[str] = frozenset()) -> list[RootCause]:
    """The packages the groups' broken tests fail in, each with the dependents failing through it."""
    return roots.tree(((dep, g.signature.key, where) for g in groups for dep, where in g.attributions), candidate)


def draft_rules(groups: list[Group], plan: Plan, results: list[DependentResult]) -> list[dict]:
    """A rule drafted for each group no rule and no API history explains: its error and message,
    affecting the candidate's versions as installed, the dependents and tests that show it."""
    out = []
    for g in groups:
        if g.explained_by or g.api:
            continue
        seen = [r.versions.get("candidate", {}) for r in results if r.name in g.tests]
        d = drafts.Group(g.signature, "case", set(), seen=[v for v in seen if v][:8])
        pins = seen[0] if seen else {}
        affects = [{k: f"=={v}" for k, v in pins.items() if k in ("jax", "jaxlib", "equinox", "diffrax", "optimistix",
                                                                     "lineax", "chex")}]
        rule = drafts.draft(d, affects, "jax-compat crater " + " ".join(plan.candidate))
        rule["_comment"].append("shown by: " + "; ".join(f"{dep}: {', '.join(ts[:3])}" + (" …" if len(ts) > 3 else "")
                                                        for dep, ts in sorted(g.tests.items())))
        g.draft = rule["id"]
        out.append(rule)
    return out


# ---------------------------------------------------------------- the verdict


def cost(results: list[DependentResult], shards: int, wall_s: float) -> dict:
    """Environments, minutes per dependent, the total here, and on ``shards`` CI jobs (the longest
    shard: the units of work — dependents, parts of split ones — dealt by name as ``--shard``
    deals them); per split dependent: its wall here (its parts in turn) and on its parts' shards
    (its longest part)."""
    from jaxcompat.operations import craterparts

    by = sorted(results, key=lambda r: r.name)
    fresh = [r for r in results if not r.cached]
    work = sorted(craterparts.units_seconds(results))
    per_shard = [sum(s for _, s in work[i::shards]) for i in range(shards)] if shards else [0.0]
    split = {r.name: {"parts": len(r.part_seconds), "serial_minutes": round(sum(r.part_seconds) / 60, 1),
                      "on_shards_minutes": round(max(r.part_seconds) / 60, 1),
                      "part_minutes": [round(s / 60, 1) for s in r.part_seconds]} for r in by if r.part_seconds}
    return {"environments": sum(r.environments for r in fresh), "from_cache": len(results) - len(fresh),
            "minutes": {r.name: round(r.seconds / 60, 1) for r in by},
            "total_minutes": round(sum(r.seconds for r in results) / 60, 1),
            "wall_minutes": round(wall_s / 60, 1), "shards": shards,
            "on_shards_minutes": round(max(per_shard) / 60, 1), **({"split": split} if split else {})}


# ---------------------------------------------------------------- reports


BISECT_FILE = "bisect.json"  # crater --bisect's answers, by group signature (craterbisect)


def _bisections(out_dir: Path) -> dict[str, dict]:
    path = out_dir / BISECT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def report(out_dir: Path, results: list[DependentResult], plan_text: dict, wall_s: float, shards: int,
           plan: Plan, deps=(), gaps: tuple[str, ...] = (), failures=(),
           ignored: tuple[str, ...] = ()) -> tuple[CraterReport, int]:
    """The crater's verdict as a record (``report.emit`` writes crater.json, .md, .html, .xml and
    draft-rules.toml from it) and its exit status; every record and every text in it crosses
    ``boundary`` (``deps``: the dependents whose credentials it knows; ``ignored``: stored results
    left out, said), and so does every file written from it (its ``scrub``)."""
    scrub = boundary(plan, deps)
    results = [shown(r, scrub, plan) for r in results]
    plan_text = scrub.tree(plan_text)
    groups = group(results, failures, moved(plan, results))
    bisected = _bisections(out_dir)
    for g in groups:
        g.bisect = bisected.get(g.signature.key, {})
    rules = draft_rules(groups, plan, results)
    c = cost(results, shards, wall_s)
    warned = newwarnings.groups({r.name: r.tests for r in results if r.verdict.judged}, failures,
                                {r.name: r.versions.get("candidate", {}) for r in results})
    causes = root_causes(groups, moved(plan, results))
    text = scrub(verdict_text(results, groups, plan_text, c, warned, gaps, causes, ignored))
    said = summary(results, plan_text, groups, c, warned, gaps, causes, ignored)
    record = CraterReport("crater", scrub=scrub, said=said, text=text, results=results, warned=warned, rules=rules,
                          groups=groups, causes=causes, plan_text=plan_text, cost=c, gaps=gaps, ignored=ignored)
    return record, exit_status(results, gaps)
