"""The user's own tests, before and after an upgrade, each failure explained where a rule can.

crater's question (what passed before and fails after?), asked of a jax/equinox bump: the
user's project is installed editable into the candidate environment (and the baseline's), its
tests run there with its own pytest configuration in the watched runner, and every test gets a
class. A failing test is then matched against the known failures that apply to the installed
versions (documented exception type and message, whatever the test): "this looks like
weak-type-closure: fix …". What no rule explains is listed with its short traceback.

The records (each test's class, ``TEST_CLASSES``, the ``Comparison``) are model/usertests.py's;
report/usertests.py renders them (the verdict, JUnit, Markdown, HTML).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.specifiers import SpecifierSet

from jaxcompat._util.statedir import StateDir
from jaxcompat._util.text import first_line, last_line, quiet
from jaxcompat.env.pythons import PythonMissing
from jaxcompat.env.sides import compare as compare_sides
from jaxcompat.env.sides import held_at_baseline, hold
from jaxcompat.env.testdeps import TestDeps, TestDepsError, choose, diagnose, normalise, warning_filter
from jaxcompat.knowledge.outcomes import error_matches
from jaxcompat.knowledge.rules import applies
from jaxcompat.knowledge.warnings import RAN
from jaxcompat.knowledge.warnings import new as new_warnings
from jaxcompat.model.matrix import ANY, Cell, Matrix
from jaxcompat.model.outcomes import CellResult, RawResult
from jaxcompat.model.sides import Sides
from jaxcompat.model.stages import Ended
from jaxcompat.model.usertests import TEST_CLASSES, Comparison, UserTest, changed, failing, settled, test_class
from jaxcompat.model.vocab import CellStatus, FlakyOrigin, Phase, TestStatus, UserTestSide, UserTestStatus
from jaxcompat.report.scrub import Scrubber
from jaxcompat.run.cell import lock_versions
from jaxcompat.run.runner import run_cases

# A user's suite may crash many times (each crash is one test); past this many restarts the tests
# not yet run are `absent` in that environment.
MAX_RESTARTS = 200


class TestsError(ValueError):
    """A --tests path that cannot be used (said in one line, no traceback)."""


@dataclass(frozen=True)
class Target:
    """What --tests names: a project (installed editable with its test dependencies, run with its
    own pytest configuration) or a folder of tests."""

    root: Path
    project: bool
    deps: TestDeps = field(default_factory=TestDeps)
    only: tuple[str, ...] = ()  # the tests named inside the project (paths relative to root); () = all
    env: tuple[tuple[str, str], ...] = ()  # environment variables for its tests
    timeout_s: float | None = None  # one test's time limit (None: the matrix's case_timeout_s)

    def describe(self) -> str:
        if not self.project:
            return f"the tests in {self.root.name}/"
        named = f", only {', '.join(self.only)}" if self.only else ""
        return f"{self.root.name}, installed editable, run with its own pytest configuration{named}"

    def editable(self) -> str:
        return str(self.root) + (f"[{','.join(self.deps.extras)}]" if self.deps.extras else "")

    def pinned(self, cell: Cell) -> set[str]:
        """The packages the candidate pins (their versions are what is judged)."""
        names = {normalise(d) for d, v in cell.pins.items() if v != ANY}
        return names | ({"jaxlib"} if "jax" in names else set())

    def cell(self, cell: Cell) -> Cell:
        """The candidate with the project and its test dependencies installed in it (its own
        environment, so a plain `check` of the same pins keeps its own)."""
        reqs, _ = self.deps.for_candidate(self.pinned(cell))
        if not self.project and not reqs:
            return cell
        tag = hashlib.sha256(f"{self.root}|{self.deps.extras}|{reqs}".encode()).hexdigest()[:6]
        return replace(cell, id=f"{cell.id}-tests-{tag}",
                       editable=(self.editable(),) if self.project else (),
                       constraints=tuple(cell.constraints) + reqs)

    def deps_line(self, cell: Cell) -> str:
        """What the run installs for the tests, said before it runs."""
        _, dropped = self.deps.for_candidate(self.pinned(cell))
        line = self.deps.describe() if self.project or self.deps.sources else ""
        if dropped:
            line += f" (left out, the candidate pins them: {', '.join(dropped)})"
        return line


def same_python(candidate: Cell, baseline: Cell, target: Target, cache_dir: Path) -> tuple[Cell, Cell, str]:
    """Both sides on one Python when they can share one (the upgrade, not the interpreter, is what
    is compared): the lowest this machine has that every pin of both sides and the project's
    ``requires-python`` accept. Cells whose Python is named stay as they are. Returns the cells
    and a line saying what was chosen ("" when nothing could be shared: each side keeps its own)."""
    from jaxcompat.env import resolution

    if candidate.python != resolution.AUTO or baseline.python != resolution.AUTO:
        return candidate, baseline, ""
    wants = target.deps.declared.requires_python
    pythons = tuple(v for v in resolution.PYTHONS if not wants or SpecifierSet(wants).contains(v + ".0"))
    try:
        sides = [resolution.complete(c, cache_dir) for c in (candidate, baseline)]
        python = resolution.choose_python(sides[0].pins, cache_dir, pythons or resolution.PYTHONS,
                                          also=(sides[1].pins,))
    except (resolution.ResolutionError, PythonMissing, OSError, ValueError):
        return candidate, baseline, ""
    why = f"; your project requires Python {wants}" if wants else ""
    return (replace(candidate, python=python), replace(baseline, python=python),
            f"both sides on Python {python} (the lowest that every pin of both accepts{why})")


# What makes a folder a project's root, as pytest finds its rootdir from the paths it is given
# (its ini files and the files that declare a project).
ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", "pytest.ini", ".pytest.ini", "tox.ini")


def installable(folder: Path) -> bool:
    """A project pip can install: a setup.py, or a pyproject.toml that declares a project or its
    build system (one that only configures tools, pytest's ini options, is not)."""
    if (folder / "setup.py").is_file():
        return True
    path = folder / "pyproject.toml"
    if not path.is_file():
        return False
    from jaxcompat._util.toml import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return False
    return "project" in data or "build-system" in data


def project_root(path: Path) -> Path | None:
    """The nearest folder at or above ``path`` that is a project's root (``ROOT_MARKERS``) and can
    be installed (``INSTALLABLE``); None when there is none (a bare folder of tests). A git
    repository's top is as far as the walk goes."""
    here = path if path.is_dir() else path.parent
    for folder in (here, *here.parents):
        if any((folder / m).is_file() for m in ROOT_MARKERS) and installable(folder):
            return folder
        if (folder / ".git").exists() or folder == Path.home():
            return None
    return None


def locate(path: str, extras: list[str] | None = None, groups: list[str] | None = None,
           with_: list[str] | None = None, env: dict[str, str] | None = None) -> Target:
    """What --tests names. A path inside a project (its tests/ folder, one test module) is run as
    that project: its root found as pytest finds its rootdir, the project and its test
    dependencies installed, only the tests named run."""
    given = Path(path).expanduser().resolve()
    if not given.exists():
        raise TestsError(f"--tests {path}: no such file or directory")
    found = project_root(given)
    if found is not None and found != given:
        target = locate(str(found), extras, groups, with_, env)
        return replace(target, only=(given.relative_to(found).as_posix(),))
    root = given
    if not root.is_dir():
        raise TestsError(f"--tests {path}: not a directory, and no project above it "
                         "(name a project root, a folder of tests, or a test module inside a project)")
    project = (root / "pyproject.toml").is_file() or (root / "setup.py").is_file()
    if not project and (extras or groups):
        raise TestsError(f"--tests {path}: --extra/--group need a project (pyproject.toml or setup.py); "
                         "give a folder of tests its dependencies with --with REQ")
    if not project and not any(root.rglob("test_*.py")) and not any(root.rglob("*_test.py")):
        raise TestsError(f"--tests {path}: no pyproject.toml or setup.py, and no test_*.py files under it")
    try:
        deps = choose(root, extras, groups, with_)
    except TestDepsError as e:
        raise TestsError(str(e)) from None
    return Target(root, project=project, deps=deps, env=tuple(sorted((env or {}).items())))


# ---------------------------------------------------------------- running


@dataclass
class Observed:
    """The user's tests in one environment."""

    results: dict[str, RawResult] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    error: str = ""  # why the tests could not start there (install, resolution, pytest itself)
    status: CellStatus = CellStatus.OK  # how far its environment got (not OK: ``error`` says why)
    cause: str = ""  # when no test ran: the one-line cause and how to provide what is missing
    warning_filter: str = ""  # the project's setting that turns a DeprecationWarning into an error, if any
    locked: dict[str, str] = field(default_factory=dict)  # every package of the environment's lock
    reused: str = ""  # re-used from the result cache: when it ran (``kept``); "" = it ran now

    @property
    def ran(self) -> int:
        """Tests that started (passed, failed, crashed or hung): skips and modules that could not
        be collected are not runs."""
        return sum(1 for r in self.results.values() if r.status != TestStatus.SKIPPED and not _collect_error(r))

    @property
    def uncollectable(self) -> list[str]:
        """Modules (or the session, ".") that could not be collected."""
        return [k for k, r in self.results.items() if _collect_error(r)]


def _collect_error(raw: RawResult) -> bool:
    return raw.phase == Phase.COLLECT


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


def _enclosing(name: str, broken: dict[str, RawResult]) -> RawResult | None:
    """The collection error that stands for a test that was not collected: its module's, else the
    nearest folder's (a conftest there failed), else the session's (".")."""
    path = name.split("::")[0]
    while True:
        if path in broken:
            return broken[path]
        if "/" not in path:
            return broken.get(".")
        path = path.rpartition("/")[0]


def _stands_for(key: str, name: str) -> bool:
    """Whether the collection error ``key`` (a module, a folder, or ".") covers the test ``name``."""
    return key == "." or name.startswith(key + "::") or name.startswith(key + "/")


def observe(cell: Cell, matrix: Matrix, state_dir: Path, target: Target,
            nodeids: list[str] | None = None) -> Observed:
    """Run the user's tests (or ``nodeids``) in ``cell``'s environment, building it if need be."""
    from jaxcompat.run import cell as cells

    scratch = CellResult(id=cell.id, python=cell.python, backend=cell.backend, status=CellStatus.OK)
    got = cells.prepare(cell, matrix, scratch, state_dir)  # as the matrix and check.json do
    if isinstance(got, Ended):
        message = Scrubber({str(Path.home()): "~"}, envs_dir=StateDir(state_dir).envs)(f"{got.status}: {got.message}")
        cause = message.strip().splitlines()[-1] if message.strip() else got.status
        return Observed(error=message, status=got.status, cause=cause)
    done, built = got
    workdir = StateDir(state_dir).run(f"{cell.id}-user")
    run = run_cases(built.python, target.root, list(nodeids or target.only), backend=done.backend, imports=[],
                    timeout_s=target.timeout_s or matrix.settings.case_timeout_s, workdir=workdir,
                    project=True, max_restarts=MAX_RESTARTS, extra_env=dict(target.env), label=cell.id)
    # the tests' own messages and tracebacks name the environment, the project and the home folder:
    # scrubbed here, before anything is clipped, judged or written (report.scrub)
    scrub = Scrubber({str(target.root) + "/": "", str(target.root): "<project>",
                      str(matrix.root.resolve()) + "/": "<root>/", str(Path.home()): "~"},
                     envs_dir=StateDir(state_dir).envs)
    out = Observed(results={r.case: scrub.raw(r) for r in run.results},
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
        out.error = scrub(f"pytest exited with code {run.rc} before running any test:\n{run.log_tail[-1500:]}")
    skipped = [r for r in out.results.values() if r.status == TestStatus.SKIPPED]
    if out.ran == 0 and nodeids is None and skipped and len(skipped) == len(out.results):
        out.cause = f"all {len(skipped)} collected tests were skipped (e.g. {first_line(skipped[0].message, 200)})"
    elif out.ran == 0 and nodeids is None:
        evidence = "\n".join(f"{r.traceback}\n{r.message}" for r in out.results.values() if _collect_error(r))
        out.cause = scrub(diagnose(f"{run.log_tail}\n{evidence}", target.root, target.deps))
    return out


# ---------------------------------------------------------------- classifying


def status(raw: RawResult | None) -> UserTestSide:
    if raw is None:
        return UserTestSide.ABSENT
    if raw.status == TestStatus.TIMEOUT:
        return UserTestSide.TIMEOUT
    if raw.status == TestStatus.CRASH or (raw.status == TestStatus.FAILED and raw.phase != Phase.CALL):
        return UserTestSide.ERROR
    return UserTestSide(raw.status.value)


def _fails(s: UserTestSide | None) -> bool:
    return s is not None and s.fails


def explain(raw: RawResult, matrix: Matrix, versions: dict[str, str], backend: str):
    """The first known failure that applies to these versions and whose documented error this is."""
    for f in matrix.failures:
        if f.stage == "case" and applies(f, versions, backend) and error_matches(f, raw.error_types, raw.message):
            return f
    return None


def classify(candidate: Observed, baseline: Observed | None, matrix: Matrix, backend: str,
             flaky: dict[str, str | tuple[FlakyOrigin, str]] | None = None,
             settle: dict[str, dict[str, UserTestSide]] | None = None) -> list[UserTest]:
    """One record per test seen in either environment; ``flaky``: tests whose re-run differed (a
    note), or (how it is known to flip, a note); a test so named that would be broken, failing or
    fixed is ``flaky`` instead. ``settle``: per re-run test, what its runs on each side settle on
    (``model/usertests.settled``), which its class is of (its record keeps the first runs)."""
    names = list(candidate.results) + [t for t in (baseline.results if baseline else {}) if t not in candidate.results]
    # A module that cannot even be imported in the candidate: its tests take its error, and the
    # module's own record is not counted again beside them.
    broken_modules = {k: r for k, r in candidate.results.items() if _collect_error(r)}
    stands_for = {m for m in broken_modules if baseline
                  and any(_stands_for(m, t) and t not in candidate.results for t in baseline.results)}
    # and the other way: a module that could not be collected in the baseline gives its tests that
    # ran in the candidate its error as their baseline (they did not pass before)
    broken_before = {k: r for k, r in (baseline.results if baseline else {}).items() if _collect_error(r)}
    stands_for |= {m for m in broken_before if m not in candidate.results
                   and any(_stands_for(m, t) and t not in baseline.results for t in candidate.results)}
    out = []
    for name in (n for n in names if n not in stands_for):
        raw = candidate.results.get(name) or _enclosing(name, broken_modules)
        before_raw = (baseline.results.get(name) or _enclosing(name, broken_before)) if baseline else None
        before = status(before_raw) if baseline else None
        if baseline and name not in baseline.results and before_raw is not None:  # its module did not import
            before = UserTestSide.ABSENT  # there: it did not run before (never a test that ran on both sides)
        after = status(raw)
        t = UserTest(test=name, candidate=after, baseline=before, cls=test_class(before, after))
        if settle and name in settle and TEST_CLASSES[t.cls].rerun:
            said = settle[name]
            t.cls = test_class(said.get("baseline", before) if baseline else None, said.get("candidate", after))
            t.note = "; ".join(f"{side}: {said[side]} on its re-runs" for side, first in
                               (("candidate", after), ("baseline", before)) if side in said and said[side] != first)
        t.new_warnings = new_warnings(raw.warnings if raw else [], before_raw.warnings if before_raw else None,
                                      before in RAN)
        if raw is not None and _fails(after):
            t.message, t.traceback, t.phase = first_line(raw.message, 400), raw.traceback, raw.phase
            known = explain(raw, matrix, candidate.versions, backend)
            if known is not None:
                t.explained_by, t.fix, t.upstream = known.id, known.fix, list(known.upstream)
            else:
                from jaxcompat.apihistory.apiexplain import explain_result, explain_warning_result
                made_error = explain_warning_result(raw, candidate.versions, candidate.warning_filter, matrix)
                if made_error is not None:
                    t.explained_by_api, t.fix = made_error.text(), made_error.fix()
                else:
                    t.explained_by_api = explain_result(raw, candidate.versions)
        elif t.cls == UserTestStatus.FIXED and before_raw is not None and before_raw.message:
            t.message = "before: " + first_line(before_raw.message, 400)  # what the upgrade fixed
        if flaky and name in flaky and TEST_CLASSES[t.cls].rerun:  # a pass stays a pass
            said = flaky[name]
            t.flaky, t.note = said if isinstance(said, tuple) else (FlakyOrigin.RERUN, said)
            t.cls = UserTestStatus.FLAKY
        out.append(t)
    return out


def suspects(tests: list[UserTest]) -> list[str]:
    """The tests to run once more before blaming (or crediting) the upgrade."""
    return [t.test for t in tests if TEST_CLASSES[t.cls].rerun]


def build(cell: Cell, matrix: Matrix, state_dir: Path) -> None:
    """Build ``cell``'s environment (or find it built), so that ``observe`` finds it ready; a
    failure is left for ``observe`` to meet and report."""
    from jaxcompat.run import cell as cells

    scratch = CellResult(id=cell.id, python=cell.python, backend=cell.backend, status=CellStatus.OK)
    cells.prepare(cell, matrix, scratch, state_dir)


@dataclass(frozen=True)
class Confirm:
    """How a break is confirmed before blame: re-runs of what changed, on both sides (``reruns``,
    0 = none), the baseline run twice to learn the tests that flip by themselves (``aa``), and the
    tests an earlier --aa learned flip (``known``: test -> what was seen)."""

    reruns: int = 1
    aa: bool = False
    known: tuple[tuple[str, str], ...] = ()


def compare(candidate: Cell, baseline: Cell | None, target: Target, matrix: Matrix, state_dir: Path,
            progress=quiet, jobs: int = 1, confirm: Confirm = Confirm(), reuse: bool = False) -> Comparison:
    """Run the user's tests after (and before; with --aa the baseline twice), run what changed
    ``confirm.reruns`` more times on both sides, classify. With ``jobs`` > 1 the baseline's
    environment is built while the candidate's tests run. ``reuse``: the baseline's whole-suite run
    is taken from the result cache where everything that decides it is the same (``side_key``; never
    with --aa); the re-runs of what changed stay live on both sides."""
    from concurrent.futures import ThreadPoolExecutor

    if baseline is not None:  # the baseline is resolved first; the candidate is held at its versions
        candidate = hold_to_baseline(candidate, baseline, matrix, state_dir)
    key = side_key(baseline, target, matrix, state_dir) if reuse and baseline is not None and not confirm.aa else None
    kept_before = kept(key, state_dir) if key else None
    pool = ThreadPoolExecutor(1) if baseline is not None and kept_before is None and jobs > 1 else None
    ahead = pool.submit(build, baseline, matrix, state_dir) if pool is not None else None
    progress(f"your tests in the candidate ({candidate.id})…")
    try:
        after = observe(candidate, matrix, state_dir, target)
    finally:
        if pool is not None:
            ahead.result()
            pool.shutdown()
    before, learned = None, {}
    if baseline is not None:
        before, learned = baseline_side(baseline, target, matrix, state_dir, progress, confirm, key, kept_before)
    flaky: dict[str, str | tuple[FlakyOrigin, str]] = {
        **{n: (FlakyOrigin.KNOWN, f"known to flip by itself ({note})") for n, note in confirm.known},
        **{n: (FlakyOrigin.AA, f"flipped by itself in the baseline run twice ({note})") for n, note in learned.items()}}
    tests = classify(after, before, matrix, candidate.backend, flaky)
    again = [n for n in suspects(tests) if n not in flaky]
    if again and confirm.reruns:
        sides = [("candidate", after, candidate)] + ([("baseline", before, baseline)] if before else [])
        progress(f"running {len(again)} test(s) " + ("once more" if confirm.reruns == 1 else
                                                      f"up to {confirm.reruns} more times")
                 + " on each side before blaming the upgrade…")
        changed_, settle = rerun(again, sides, matrix, state_dir, target, confirm.reruns)
        flaky.update(changed_)
        tests = classify(after, before, matrix, candidate.backend, flaky, settle)
    found = compare_sides(candidate, before.locked or before.versions,
                          after.locked or after.versions) if before else None
    if found and found.confounders and (broken := [t.test for t in failing(tests, True)]):
        attribute(found, candidate, broken, target, matrix, state_dir, progress)
    # (every text is already relative to the project and free of machine paths: observe scrubbed it)
    sides = {"candidate": after, **({"baseline": before} if before else {})}
    return Comparison(tests, with_baseline=baseline is not None, error=after.error,
                      candidate_versions=after.versions,
                      baseline_versions=before.versions if before else {},
                      baseline_error=before.error if before else "",
                      status={k: o.status for k, o in sides.items()},
                      ran={k: o.ran for k, o in sides.items()},
                      uncollectable={k: o.uncollectable for k, o in sides.items()},
                      candidate_cause=after.cause, baseline_cause=before.cause if before else "",
                      learned=learned, sides=found,
                      cells={"candidate": candidate.id, **({"baseline": baseline.id} if baseline else {})},
                      test_dependencies=list(target.deps.sources),
                      left_out=list(target.deps.for_candidate(target.pinned(candidate))[1]),
                      timeout_s=target.timeout_s or matrix.settings.case_timeout_s,
                      baseline_reused=before.reused if before else "")


def baseline_side(baseline: Cell, target: Target, matrix: Matrix, state_dir: Path, progress, confirm: Confirm,
                  key: str | None, kept_before: Observed | None) -> tuple[Observed, dict[str, str]]:
    """The baseline's whole-suite run (``kept_before``, re-used; or run now, and kept under ``key``),
    and with --aa the tests that flipped when it ran twice."""
    if kept_before is not None:
        progress(f"your tests in the baseline ({baseline.id}): re-used from the result cache, as they ran "
                 f"{kept_before.reused} (the same lock, Python, backend, plugin, source and options)")
        return kept_before, {}
    progress(f"your tests in the baseline ({baseline.id})…")
    before = observe(baseline, matrix, state_dir, target)
    if key:
        keep(key, before, state_dir)
    if not confirm.aa:
        return before, {}
    progress("your tests in the baseline once more (--aa): which flip by themselves…")
    return before, flips(before, observe(baseline, matrix, state_dir, target))


def side_key(cell: Cell, target: Target, matrix: Matrix, state_dir: Path) -> str | None:
    """The key of everything that decides ``cell``'s whole-suite run of ``target``: its lock as
    resolved (every line an exact release, or a direct reference pinned by hash or commit), its
    interpreter, its backend, the plugin and the runner, every file of the project, the tests named, their
    environment variables (given and inherited), their time limit and the run's restarts. None
    where any of it is uncertain (it does not resolve, a lock line may move, another index, the
    project's files cannot be read): then it runs."""
    import os

    from jaxcompat._util import tree
    from jaxcompat.env import pythons
    from jaxcompat.run import cell as cells
    from jaxcompat.run import resultcache

    scratch = CellResult(id=cell.id, python=cell.python, backend=cell.backend, status=CellStatus.OK)
    got = cells.resolved(cell, matrix, scratch, state_dir, cells.Options())
    if isinstance(got, Ended):
        return None
    done, python_exe, lock = got
    if done.index or not resultcache.fixed(lock, str(target.root) if target.project else ""):
        return None
    try:
        files = tree.checkout_digest(target.root)
    except OSError:
        return None
    python = [done.python, os.path.realpath(python_exe), pythons.full_version(python_exe)]
    return resultcache.side_key(cell=done.id, lock=lock, python=python,
                                backend=done.backend, project=files, runner=runner_digest(),
                                plugin=resultcache.plugin_digest(),
                                kind=target.project, only=list(target.only), env=list(target.env),
                                inherited=resultcache.inherited(dict(os.environ)), restarts=MAX_RESTARTS,
                                timeout_s=target.timeout_s or matrix.settings.case_timeout_s)


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


def rerun(names: list[str], sides, matrix: Matrix, state_dir: Path, target: Target,
          times: int) -> tuple[dict[str, str], dict[str, dict[str, UserTestSide]]]:
    """``names`` run up to ``times`` more times on each side (``sides``: (side, first run, cell)):
    (test -> what changed, for those whose outcome changed on a side: passed in one run, failed
    outright in another, ``model/usertests.changed``; test -> side -> what its runs there settle
    on, ``model/usertests.settled``, for the others: a time-limit stop is no evidence either way)."""
    runs: dict[str, dict[str, list[UserTestSide]]] = {}
    notes: dict[str, dict[str, str]] = {}
    for side, first, cell in sides:
        for name in names:
            runs.setdefault(name, {})[side] = [status(first.results.get(name))]
        for _ in range(times):
            pending = [n for n in names if side not in notes.get(n, {})]
            if not pending:
                break
            again = observe(cell, matrix, state_dir, target, nodeids=pending)
            if again.error:
                continue
            for name in pending:  # failed, then timeout or error: still failing, not flaky
                seen = runs[name][side]
                seen.append(status(again.results.get(name)))
                if changed(seen):
                    notes.setdefault(name, {})[side] = f"{side}: {seen[0]}, then {seen[-1]}"
    settle = {name: {side: settled(seen) for side, seen in by.items()}
              for name, by in runs.items() if name not in notes}
    return {name: "; ".join(by.values()) for name, by in notes.items()}, settle


def flips(first: Observed, second: Observed) -> dict[str, str]:
    """The tests that passed in one of two runs of the same environment and failed in the other."""
    if second.error:
        return {}
    out = {}
    for name in first.results.keys() & second.results.keys():
        s1, s2 = status(first.results[name]), status(second.results[name])
        if s1 in RAN and s2 in RAN and _fails(s1) != _fails(s2):
            out[name] = f"{s1}, then {s2}"
    return dict(sorted(out.items()))


MAX_HELD_RUNS = 6  # confounders re-run one by one (each is an environment of its own)


def hold_to_baseline(candidate: Cell, baseline: Cell, matrix: Matrix, state_dir: Path) -> Cell:
    """The candidate held at the baseline's resolved versions for every package it does not name
    (env/sides.py); as it is when the baseline cannot be resolved (``observe`` meets that)."""
    from jaxcompat.run import cell as cells

    scratch = CellResult(id=baseline.id, python=baseline.python, backend=baseline.backend, status=CellStatus.OK)
    got = cells.resolved(baseline, matrix, scratch, state_dir, cells.Options())
    if isinstance(got, Ended):
        return candidate
    _done, _python, lock = got
    return hold(candidate, lock_versions(lock))


def attribute(found: Sides, candidate: Cell, broken: list[str], target: Target, matrix: Matrix,
              state_dir: Path, progress=quiet) -> None:
    """Each confounder held at the baseline's version in turn, the broken tests re-run: whether
    they pass then (it is the cause), still fail (it is not), or it cannot be held."""
    for c in found.confounders[:MAX_HELD_RUNS]:
        if not c.baseline:
            c.held_run, c.detail = "cannot hold", "the baseline does not have it"
            continue
        progress(f"the {len(broken)} broken test(s) again with {c.dist} held at {c.baseline}…")
        seen = observe(held_at_baseline(candidate, c), matrix, state_dir, target, nodeids=broken)
        if seen.error:
            c.held_run, c.detail = "cannot hold", last_line(seen.error)
            continue
        still = [n for n in broken if _fails(status(seen.results.get(n)))]
        c.held(len(broken), len(broken) - len(still))
