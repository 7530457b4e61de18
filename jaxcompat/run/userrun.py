"""The user's own tests run in one environment (``observe``: the cell's environment built or found,
the project's tests run there in the watched runner, every text scrubbed of machine paths), the
baseline's whole-suite run kept in the result cache and found there again (``side_key``, ``keep``,
``kept``), and the candidate held at the baseline's resolved versions (``hold_to_baseline``).
operations/usertests.py compares and classifies what they saw (``Observed``, model/usertests.py)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from jaxcompat._util.statedir import StateDir
from jaxcompat._util.text import first_line
from jaxcompat.env.sides import hold
from jaxcompat.env.testdeps import diagnose, warning_filter
from jaxcompat.model.matrix import Cell, Matrix
from jaxcompat.model.outcomes import CellResult, RawResult
from jaxcompat.model.stages import Ended, Resolved
from jaxcompat.model.target import Target
from jaxcompat.model.usertests import Observed, collect_error, no_test
from jaxcompat.model.vocab import CellStatus, Phase, TestStatus
from jaxcompat.report.scrub import PROJECT, Scrubber
from jaxcompat.run.cell import lock_versions
from jaxcompat.run.runner import run_cases

# A user's suite may crash many times (each crash is one test); past this many restarts the tests
# not yet run are `absent` in that environment.
MAX_RESTARTS = 200



_CONFTEST = re.compile(r"^ImportError while loading conftest '(?P<path>[^']+)'\.?[ \t]*$", re.M)
_E_LINE = re.compile(r"^E\s+(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt))(?::|$)", re.M)


def conftest_failure(log: str) -> RawResult | None:
    """The conftest that pytest could not import before it collected anything, as a collection
    error of the folder it configures ("tests", or "." for the project's own), with pytest's
    traceback and error: pytest stops in its configuration, before any hook of the plugin runs,
    so this text in its output is the only record of it (without it, every test of the project
    would read "(no message) … no traceback was recorded"). ``log``: pytest's output, scrubbed (the
    project's paths relative to it)."""
    found = list(_CONFTEST.finditer(log or ""))
    if not found:
        return None
    m = found[-1]
    block = []
    for line in log[m.end():].lstrip("\n").splitlines():
        if not line.strip():
            break
        block.append(line)
    errors = [ln[1:].strip() for ln in block if ln.startswith("E ")]
    kinds = _E_LINE.findall("\n".join(block))
    rel = m.group("path").replace("\\", "/")
    folder = rel.rpartition("/")[0] if "/" in rel else ""
    return RawResult(case=folder or ".", status=TestStatus.FAILED, phase=Phase.COLLECT,
                     error_types=_classes(kinds[-1].rsplit(".", 1)[-1]) if kinds else [],
                     message="\n".join(errors) or f"ImportError while loading conftest '{rel}'",
                     traceback=f"ImportError while loading conftest '{rel}'.\n" + "\n".join(block).strip())


def _classes(name: str) -> list[str]:
    """``DeprecationWarning`` -> its classes up to BaseException (a rule naming Warning matches)."""
    import builtins

    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, BaseException):
        return [c.__name__ for c in cls.__mro__ if c is not object]
    return [name]


def observe(cell: Cell, matrix: Matrix, state_dir: Path, target: Target,
            nodeids: list[str] | None = None) -> Observed:
    """Run the user's tests (or ``nodeids``) in ``cell``'s environment, building it if need be."""
    from jaxcompat.run import cell as cells

    scrubbers = _Scrubbers.of(target, matrix, state_dir)
    scratch = CellResult(id=cell.id, python=cell.python, backend=cell.backend, status=CellStatus.OK)
    got = cells.prepare(cell, matrix, scratch, state_dir)  # as the matrix and check.json do
    if isinstance(got, Ended):
        message = scrubbers.home(f"{got.status}: {got.message}")
        cause = message.strip().splitlines()[-1] if message.strip() else got.status
        return Observed(error=message, status=got.status, cause=cause)
    done, built = got
    workdir = StateDir(state_dir).run(f"{cell.id}-user")
    asked = [n.replace(PROJECT, str(target.root)) for n in nodeids] if nodeids else list(target.only)
    run = run_cases(built.python, target.root, asked, backend=done.backend, imports=[],
                    timeout_s=target.timeout_s or matrix.settings.case_timeout_s, workdir=workdir,
                    project=True, max_restarts=MAX_RESTARTS, extra_env=dict(target.env), label=cell.id)
    scrub = scrubbers.text
    ids = _ids([r.case for r in run.results], scrubbers.ids)
    out = Observed(results={ids[r.case]: scrub.raw(replace(r, case=ids[r.case])) for r in run.results},
                   versions={k.lower(): v for k, v in run.versions.items()},
                   warning_filter=warning_filter(target.root), locked=lock_versions(built.lock))
    # pytest's whole output, not only its tail: a deep import chain can push the conftest's name out of it
    log = workdir / "pytest.log"
    stopped = conftest_failure(scrub(log.read_text(encoding="utf-8", errors="replace") if log.is_file()
                                     else run.log_tail)) if not run.results else None
    if stopped is not None:
        out.results[stopped.case] = stopped
        # the plugin never reported the environment: what is installed is what the lock (and the
        # cell's exact pins) say
        out.versions = out.versions or {**done.exact_pins(), **lock_versions(built.lock)}
    if not run.results and stopped is None:
        out.error = scrub(no_test(run.rc, run.log_tail[-1500:]))
    skipped = [r for r in out.results.values() if r.status == TestStatus.SKIPPED]
    if out.ran == 0 and nodeids is None and skipped and len(skipped) == len(out.results):
        out.cause = f"all {len(skipped)} collected tests were skipped (e.g. {first_line(skipped[0].message, 200)})"
    elif out.ran == 0 and nodeids is None:
        evidence = "\n".join(f"{r.traceback}\n{r.message}" for r in out.results.values() if collect_error(r))
        out.cause = scrub(diagnose(f"{run.log_tail}\n{evidence}", target.root, target.deps))
    return out


class _Scrubbers(NamedTuple):
    """What ``observe`` scrubs with, before anything is clipped, judged or written (report.scrub)."""

    text: Scrubber  # the tests' messages, tracebacks and output: the environment, the project, the home folder
    ids: Scrubber  # a test's id names a path where it is parametrized over files: the project as <project>
    # (given back to pytest on a re-run), on both sides alike before they are compared
    home: Scrubber  # why an environment could not be made: the home folder and the environments

    @classmethod
    def of(cls, target: Target, matrix: Matrix, state_dir: Path) -> _Scrubbers:
        envs, home, root = StateDir(state_dir).envs, str(Path.home()), str(target.root)
        return cls(Scrubber({root + "/": "", root: PROJECT, str(matrix.root.resolve()) + "/": "<root>/", home: "~"},
                            envs_dir=envs),
                   Scrubber({root: PROJECT, home: "~"}, envs_dir=envs), Scrubber({home: "~"}, envs_dir=envs))


def build(cell: Cell, matrix: Matrix, state_dir: Path) -> None:
    """Build ``cell``'s environment (or find it built), so that ``observe`` finds it ready; a
    failure is left for ``observe`` to meet and report."""
    from jaxcompat.run import cell as cells

    scratch = CellResult(id=cell.id, python=cell.python, backend=cell.backend, status=CellStatus.OK)
    cells.prepare(cell, matrix, scratch, state_dir)


def _ids(cases: list[str], scrub: Scrubber) -> dict[str, str]:
    """Each test's id as the reports name it (the project as <project>), unless two ids would become
    one (a test parametrized over both a path and its <project> spelling): those keep their own, as a
    result lost to a collision would be a test that did not run read as one that passed."""
    named = {c: scrub(c) for c in cases}
    seen: dict[str, int] = {}
    for n in named.values():
        seen[n] = seen.get(n, 0) + 1
    return {c: n if seen[n] == 1 else c for c, n in named.items()}


def side_key(side: Resolved, target: Target, matrix: Matrix) -> str | None:
    """The key of everything that decides a side's whole-suite run of ``target`` (``side``: its cell
    as resolved): its lock (every line an exact release, or a direct reference pinned by hash or
    commit), its interpreter, its backend, the plugin and the runner, every file of the project, the
    tests named, their environment variables (given and inherited), their time limit and the run's
    restarts. None where any of it is uncertain (a lock line may move, another index, the project's
    files cannot be read): then it runs."""
    import os

    from jaxcompat._util import tree
    from jaxcompat.env import pythons
    from jaxcompat.run import resultcache

    done, lock = side.cell, side.lock
    if done.index or not resultcache.fixed(lock, str(target.root) if target.project else ""):
        return None
    try:
        files = tree.checkout_digest(target.root)
    except OSError:
        return None
    python = [done.python, os.path.realpath(side.python_exe), pythons.full_version(side.python_exe)]
    return resultcache.side_key(cell=done.id, lock=lock, python=python,
                                backend=done.backend, project=files, runner=runner_digest(),
                                plugin=resultcache.plugin_digest(),
                                kind=target.project, only=list(target.only), env=list(target.env),
                                inherited=resultcache.inherited(dict(os.environ)), restarts=MAX_RESTARTS,
                                timeout_s=target.timeout_s or matrix.settings.case_timeout_s,
                                ids=PROJECT)  # the tests' ids as observe names them (no side kept with paths)


def runner_digest() -> str:
    """The code that runs pytest and watches it (its argv, environment, restarts, time limits)."""
    from jaxcompat.run import runner

    return hashlib.sha256(Path(runner.__file__).read_bytes()).hexdigest()


def keep(key: str, seen: Observed, state_dir: Path) -> None:
    """Keep a side's whole-suite run under ``key``: only one whose tests ran, none stopped or crashed."""
    from jaxcompat.run.resultcache import ResultCache, now

    if seen.error or seen.status != CellStatus.OK or not seen.ran:
        return
    ResultCache(state_dir).store_side(key, {
        "results": {k: r.to_dict() for k, r in seen.results.items()}, "versions": seen.versions,
        "cause": seen.cause, "warning_filter": seen.warning_filter, "locked": seen.locked, "observed_at": now()})


def kept(key: str, state_dir: Path) -> Observed | None:
    """The side's run kept under ``key`` (``keep``), or None."""
    from jaxcompat.run.resultcache import ResultCache

    p = ResultCache(state_dir).load_side(key)
    try:
        return Observed(results={k: RawResult.from_dict(r) for k, r in p["results"].items()},
                        versions=dict(p["versions"]), cause=p["cause"], warning_filter=p["warning_filter"],
                        locked=dict(p["locked"]), reused=p["observed_at"]) if p else None
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def hold_to_baseline(candidate: Cell, baseline: Resolved | Ended) -> Cell:
    """The candidate held at the baseline's resolved versions for every package it does not name
    (env/sides.py); as it is when the baseline could not be resolved (``observe`` meets that)."""
    return candidate if isinstance(baseline, Ended) else hold(candidate, lock_versions(baseline.lock))
