"""``check``'s use case: one candidate combination (and, with ``--tests``, the user's own tests)
judged, as one record. ``prepare`` checks every option and says what will run (or why nothing can,
before anything is downloaded); ``judge`` builds, runs and explains it. The command prints the
record and writes its files; nothing here writes a report."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from jaxcompat._util.statedir import StateDir
from jaxcompat._util.uvbin import uv_bin
from jaxcompat.apihistory import apiexplain
from jaxcompat.env import testtarget
from jaxcompat.env.candidate import (
    CandidateError,
    candidate_cell,
    escape_pins,
    parse_requirement,
    read_requirements,
)
from jaxcompat.env.candidate import item as candidate_item
from jaxcompat.env.releases import unreachable
from jaxcompat.knowledge import flaky
from jaxcompat.model import verdicts
from jaxcompat.model.index import IndexOptions, SourceError, index_options
from jaxcompat.model.matrix import AUTO, Cell, Matrix
from jaxcompat.model.outcomes import UNEXPLAINED_OUTCOMES, CellResult
from jaxcompat.model.stages import Ended, Resolved
from jaxcompat.model.target import Target
from jaxcompat.model.usertests import Confirm
from jaxcompat.model.vocab import CellOutcome, CellStatus
from jaxcompat.operations import confirm, newwarnings, usertests
from jaxcompat.plugin.packages import ECOSYSTEM
from jaxcompat.report import apiexplain as apiexplain_report
from jaxcompat.report import check as check_report
from jaxcompat.report.candidate import candidate_verdict, check_verdict, summary, verdict
from jaxcompat.report.existing import existing_verdict
from jaxcompat.report.outputs import CellReport, Output, UserTestsReport
from jaxcompat.run import userrun
from jaxcompat.run.cell import resolve_cell, run_cell
from jaxcompat.run.existing import BadEnvironment, check_existing

ESCAPES = 3  # the nearest pins that avoid the known failures, each verified by a run


@dataclass(frozen=True)
class CheckRequest:
    """What ``check`` was asked, as given on the command line (nothing checked yet)."""

    matrix: Matrix
    state: Path
    requirements: tuple[str, ...] = ()  # PEP 508 requirements, and ("-r", FILE) pairs
    baseline: tuple[str, ...] = ()  # --baseline and --baseline-file, the same way
    python: str | None = None
    index: tuple = ((), (), (), False)  # --index-url, --extra-index-url, --find-links, --pre
    env: str | None = None  # check --env PATH
    repeat: int = 1
    use_cache: bool = True
    verify_escapes: bool = True
    tests: str | None = None
    extra: tuple[str, ...] = ()
    group: tuple[str, ...] = ()
    with_: tuple[str, ...] = ()
    test_timeout: float | None = None
    reruns: int = 1
    aa: bool = False
    flaky_file: str | None = None
    rerun_failures: str | None = None
    given: tuple[str, ...] = ()  # the options --env leaves no room for, when given beside it


@dataclass
class CheckSetup:
    """What ``judge`` will run: every option checked, the cells decided (or ``refused``, why not)."""

    request: CheckRequest
    refused: str = ""
    reqs: list[str] = field(default_factory=list)
    cell: Cell | None = None
    index: IndexOptions | None = None
    target: Target | None = None
    baseline: Cell | None = None
    confirm: Confirm | None = None


@dataclass
class CheckVerdict:
    """``check``'s answer: what the terminal shows, the report (a record ``report.emit`` writes), and
    the items that decide the exit status (``model/verdicts.decide``)."""

    result: CellResult
    text: str
    output: Output
    items: list[verdicts.Item]
    refused: str = ""  # check --env: the environment could not be checked (exit 2; check.json says why)
    after: list[str] = field(default_factory=list)  # lines after the verdict (the resolver trap's pins)
    drafts: str = ""  # the run that drafts rules for what no rule explains ("" with --tests or --env)


def prepare(request: CheckRequest, say: Callable[[str], None]) -> CheckSetup:
    """Every option checked before anything is downloaded; what will run, said."""
    if request.env is not None:
        return _existing_setup(request, say)
    try:
        setup = _cells(request, say)
    except (CandidateError, testtarget.TestsError, SourceError, flaky.FlakyFileError, confirm.ReportError) as e:
        return CheckSetup(request, refused=str(e))
    uv_bin()  # it builds every environment: none on this machine is said now, with the fix (exit 2)
    cell, matrix = setup.cell, request.matrix
    where = "the lowest Python that every pin supports" if cell.python == AUTO else f"Python {cell.python}"
    rules = f"; rules from {matrix.path.name} and {', '.join(str(r) for r in matrix.rules)}" if matrix.rules else ""
    say(f"checking {' '.join(setup.reqs)} on {where} ({cell.id}{rules}{setup.index.describe()})")  # redacted
    if setup.target is not None and setup.target.deps_line(cell):
        say(setup.target.deps_line(cell))
    return setup


def _cells(request: CheckRequest, say: Callable[[str], None]) -> CheckSetup:
    """The candidate's cell (and, with --tests, the target, the baseline's cell and how breaks are
    confirmed); a bad option raises, naming it."""
    index = index_options(*request.index)
    reqs = read_requirements(list(request.requirements))
    cell = candidate_cell(reqs, python=request.python or AUTO, index=index)
    base_reqs = read_requirements(list(request.baseline))
    setup = CheckSetup(request, reqs=reqs, cell=cell, index=index)
    if not request.tests:  # the options that are about the user's tests are refused without them
        if base_reqs:
            raise CandidateError("--baseline compares your own tests: give --tests PATH too")
        if request.extra or request.group or request.with_ or request.test_timeout:
            raise CandidateError("--extra, --group, --with and --test-timeout are about your tests: "
                                 "give --tests PATH too")
        if request.aa or request.flaky_file or request.rerun_failures or request.reruns != 1:
            raise CandidateError("--reruns, --aa, --flaky-file and --rerun-failures confirm breaks of your tests: "
                                 "give --tests PATH too")
        return setup
    target = testtarget.locate(request.tests, list(request.extra), list(request.group), list(request.with_))
    setup.target, setup.confirm = _confirmation(request, target, bool(base_reqs))
    setup.cell = setup.target.cell(cell)
    if base_reqs:
        baseline = setup.target.cell(candidate_cell(base_reqs, python=request.python or AUTO, index=index))
        setup.cell, setup.baseline, shared = testtarget.same_python(setup.cell, baseline, setup.target,
                                                                   StateDir(request.state).cache)
        if shared:
            say(shared)
    return setup


def _confirmation(request: CheckRequest, target: Target, with_baseline: bool):
    """The target (only what broke in --rerun-failures REPORT, its --test-timeout) and how breaks are confirmed, every
    option checked before anything is downloaded (a ValueError naming the option and the fix)."""
    if request.aa and not with_baseline:
        raise testtarget.TestsError("--aa runs the baseline twice: give --baseline REQ too")
    name = target.root.name
    if request.rerun_failures:
        broke = confirm.failures_of(request.rerun_failures)
        if name not in broke:
            raise testtarget.TestsError(f"--rerun-failures {request.rerun_failures}: nothing of {name} broke in it "
                                       f"(it names: {', '.join(sorted(broke))}); give the report of this project")
        target = replace(target, only=tuple(broke[name]))
    target = replace(target, timeout_s=request.test_timeout)
    known = flaky.load(request.flaky_file, request.state, learning=request.aa).known(name)
    return target, Confirm(reruns=request.reruns, aa=request.aa, known=known)


def _existing_setup(request: CheckRequest, say: Callable[[str], None]) -> CheckSetup:
    """``check --env PATH``: nothing to resolve; what it leaves no room for is refused."""
    if request.given or request.python:
        return CheckSetup(request, refused="--env checks what is installed in that environment; leave out the "
                          "requirements, -r, --python, --tests and --baseline (or drop --env to build a new "
                          "environment for them)")
    # <env>, as in the report: no folder of the machine on the terminal either
    say("checking the existing environment <env> given by --env (nothing is installed into it)")
    return CheckSetup(request)


def judge(setup: CheckSetup, say: Callable[[str], None]) -> CheckVerdict:
    """Build and run what ``prepare`` decided, and explain it."""
    if setup.request.env is not None:
        return _judge_existing(setup.request)
    if setup.target is not None:
        return _judge_tests(setup, say)
    return _judge_candidate(setup)


def _candidate_result(setup: CheckSetup) -> tuple[Cell, CellResult, Resolved | Ended | None]:
    """The candidate's cell as it ran (held at the baseline's versions where there is one: the
    baseline is resolved first, ``decided``), its result, and ``decided``."""
    request, cell = setup.request, setup.cell
    decided = resolve_cell(setup.baseline, request.matrix, request.state) if setup.baseline is not None else None
    if decided is not None:  # the candidate keeps what it does not name at the baseline's versions
        cell = userrun.hold_to_baseline(cell, decided)
    return cell, run_cell(cell, request.matrix, state_dir=request.state, reports_dir=None, repeat=request.repeat,
                          use_cache=request.use_cache), decided


def _judge_candidate(setup: CheckSetup) -> CheckVerdict:
    """check without --tests: the candidate by the suite's cases (and, where the resolver led to a
    known failure, the nearest pins that avoid it)."""
    request, matrix = setup.request, setup.request.matrix
    cell, result, _ = _candidate_result(setup)
    scanned = apiexplain.ecosystem_scan(StateDir(request.state).env(cell.id), result.versions.get("jax", ""))
    text, safe = check_verdict(result, matrix, scanned)
    escapes = _escapes(result, setup) if not safe and result.status == CellStatus.OK else []
    return CheckVerdict(result, text, CellReport("check", cell=result),
                        [candidate_item(result, safe)], after=escapes, drafts=f"check {' '.join(setup.reqs)}")


def _judge_existing(request: CheckRequest) -> CheckVerdict:
    """``check --env PATH``: the verdict for an environment that already exists (nothing installed)."""
    try:
        result = check_existing(request.env, request.matrix, state_dir=request.state, repeat=request.repeat)
    except BadEnvironment as e:
        return CheckVerdict(e.result, "", CellReport("check", cell=e.result), [], refused=e.message)
    text, safe = existing_verdict(result, request.matrix)
    return CheckVerdict(result, text, CellReport("check", cell=result),
                        [candidate_item(result, safe)])


def _judge_tests(setup: CheckSetup, say: Callable[[str], None]) -> CheckVerdict:
    """check --tests: the user's tests after (and before), explained; exit 1 when one is broken by
    the upgrade (with --baseline) or fails (without), or when our cases did not behave as the rules
    predict (``_cases_item``). What the candidate announces (the tests' new warnings) leads the
    verdict; it never fails the check."""
    request, matrix, target = setup.request, setup.request.matrix, setup.target
    cell, result, decided = _candidate_result(setup)
    cmp = usertests.compare(cell, setup.baseline, target, matrix, request.state, progress=say, confirm=setup.confirm,
                            decided=decided)
    warned, health, learned = _announced(cmp, target, request, matrix.failures)
    items = [user_tests_item(cmp, f"your tests ({target.root.name})"), *_cases_item(result)]
    ours, _ = candidate_verdict(result, matrix)
    jax = cmp.candidate_versions.get("jax", "")
    api = apiexplain_report.verdict_lines(cmp.tests, target.root, jax, apiexplain.project_scan(target.root, jax))
    text = check_report.tests_text(result, cmp, target.describe(), warned=warned, health=health, learned=learned,
                                   api=api, ours=ours)
    output = UserTestsReport("check", cell=result, comparison=cmp, text=text, project=target.root.name,
                             warned=warned, health=health, code=verdicts.decide(items).code)
    return CheckVerdict(result, text, output, items)


def _cases_item(result: CellResult) -> list[verdicts.Item]:
    """Our cases in the candidate beside your tests: they fail ``check --tests`` where they failed as
    no rule predicts (a regression, a mismatch, a time-out, a crash, a cell error no rule explains:
    the candidate does not resolve, install or import). A known failure they reproduced is
    said in the verdict, and fails the check only through your tests; where our harness, the machine or
    the index kept them from running, your tests alone decide."""
    if not (result.outcome == CellOutcome.CELL_ERROR or any(r.outcome in UNEXPLAINED_OUTCOMES for r in result.results)):
        return []  # a stale rule is ours to mend: said in the verdict, never the user's check failed
    found = candidate_item(result, safe=False)
    return [replace(found, name=f"our cases ({result.id})")] if found.broken else []


def user_tests_item(cmp, name: str) -> verdicts.Item:
    """Your tests (``check --tests``) as the one invariant reads them: not judged when they did not
    run in the baseline (or, without one, in the candidate) or the index did not answer; broken
    when one is, or when none ran in the candidate (``usertests.Comparison.failed``)."""
    lost = bool(cmp.error) and unreachable(cmp.error)
    judged = not cmp.unjudged and not lost
    why = cmp.unjudged or (f"the index did not answer: {cmp.error.strip().splitlines()[-1]}" if lost else "")
    return verdicts.Item(name, broken=judged and cmp.failed, judged=judged, ran_candidate=cmp.ran.get("candidate", 0),
                         ran_baseline=cmp.ran.get("baseline", 0) if cmp.with_baseline else None, why=why)


def _announced(cmp, target, request: CheckRequest, failures=()):
    """The new warnings (grouped), the suite's health, and (--aa) the line saying what was learned,
    kept in the flaky file."""
    learned = ""
    if request.aa:
        where = "--flaky-file" if request.flaky_file else f"{flaky.FILE} in the state folder"
        try:  # what cannot be kept is said, and loses none of the reports
            store = flaky.load(request.flaky_file, request.state, learning=True)
            store.learn(target.root.name, cmp.learned)
            store.save()
            learned = (f"  learned (--aa): {len(cmp.learned)} test(s) flip by themselves in the baseline, kept in "
                       f"{where} for later runs" + (": " + ", ".join(cmp.learned) if cmp.learned else ""))
        except flaky.FlakyFileError as e:
            learned = f"  note: --aa: the {len(cmp.learned)} test(s) that flipped by themselves were not kept: {e}"
    warned = newwarnings.groups({target.root.name: cmp.tests}, failures,
                                {target.root.name: cmp.candidate_versions})
    return warned, confirm.health(cmp.tests), learned


def _escapes(result: CellResult, setup: CheckSetup) -> list[str]:
    """The nearest pins that avoid the known failures the resolver led to, each verified by a run."""
    request, matrix = setup.request, setup.request.matrix
    if not request.verify_escapes:
        return []
    extra = escape_pins(result, matrix, setup.reqs, StateDir(request.state).cache)[:ESCAPES]
    if not extra:
        return []
    lines = ["\nresolver trap: these known failures come from versions you did not pin; the nearest pins "
             "that avoid them, each verified by running it:"]
    safe_pins = []
    for pin in extra:
        name = pin.split("==")[0]
        trial = [r for r in setup.reqs
                 if parse_requirement(r).name.lower() not in (name, "jaxlib" if name == "jax" else name)]
        trial.append(pin)
        cell = candidate_cell(trial, python=request.python or AUTO, index=setup.index)
        res = run_cell(cell, matrix, state_dir=request.state, reports_dir=None, use_cache=request.use_cache)
        _, ok = verdict(res, matrix)
        said = summary(res, matrix)
        lines.append(f"  + {pin}: {said}  [{', '.join(f'{d} {v}' for d, v in res.versions.items() if d in ECOSYSTEM)}]")
        if ok:
            safe_pins.append(pin)
    lines.append("  verified safe: add " + " or ".join(safe_pins) if safe_pins else
                 "  none of the nearest pins is safe on its own: see each one's verdict above")
    return lines
