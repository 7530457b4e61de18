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

from pathlib import Path

from jaxcompat._util.text import first_line, frames, last_line, quiet
from jaxcompat.env.sides import compare as compare_sides
from jaxcompat.env.sides import held_at_baseline
from jaxcompat.knowledge.outcomes import error_matches
from jaxcompat.knowledge.roots import key, known_names, package_of, rule_package
from jaxcompat.knowledge.rules import applies
from jaxcompat.knowledge.warnings import new as new_warnings
from jaxcompat.model.matrix import Cell, Matrix
from jaxcompat.model.outcomes import RawResult
from jaxcompat.model.sides import Sides
from jaxcompat.model.stages import Ended, Resolved
from jaxcompat.model.target import Target
from jaxcompat.model.usertests import (
    TEST_CLASSES,
    Comparison,
    Confirm,
    Observed,
    UserTest,
    before_of,
    changed,
    collect_error,
    enclosing,
    failing,
    fails,
    flips,
    import_skip,
    module_records,
    no_longer_imported,
    renamed,
    seen_in,
    settled,
    standing_in,
    status,
    suspects,
    test_class,
)
from jaxcompat.model.vocab import RAN, FlakyOrigin, UserTestSide, UserTestStatus
from jaxcompat.run import userrun

# ---------------------------------------------------------------- classifying


def explain(raw: RawResult, matrix: Matrix, versions: dict[str, str], backend: str):
    """The first known failure that applies to these versions and whose documented error this is:
    a case rule's, or an import rule's where the traceback passes through the package the rule is
    about (``_through``: equinox not importing fails the user's modules that import it, with the
    error the rule documents; the user's own code hitting the same removed name is not equinox's)."""
    for f in matrix.failures:
        documented = f.stage in ("case", "import") and error_matches(f, raw.error_types, raw.message)
        if documented and applies(f, versions, backend) and (f.stage == "case" or _through(f, raw, versions)):
            return f
    return None


def _through(failure, raw: RawResult, versions: dict[str, str]) -> bool:
    """Whether a frame of the failure's traceback lies in the one package ``failure`` names besides
    jax and jaxlib (``knowledge/roots.rule_package``)."""
    package = rule_package(failure)
    known = known_names(versions)
    return bool(package) and any(key(package_of(f.path, "", known)) == key(package) for f in frames(raw.traceback))


def classify(candidate: Observed, baseline: Observed | None, matrix: Matrix, backend: str,
             flaky: dict[str, str | tuple[FlakyOrigin, str]] | None = None,
             settle: dict[str, dict[str, UserTestSide]] | None = None) -> list[UserTest]:
    """One record per test seen in either environment; ``flaky``: tests whose re-run differed (a
    note), or (how it is known to flip, a note); a test so named that would be broken, failing or
    fixed is ``flaky`` instead. ``settle``: per re-run test, what its runs on each side settle on
    (``model/usertests.settled``), which its class is of (its record keeps the first runs)."""
    names = list(candidate.results) + [t for t in (baseline.results if baseline else {}) if t not in candidate.results]
    broken_modules, broken_before = module_records(candidate), module_records(baseline)
    lost = no_longer_imported(broken_modules, baseline) if baseline else set()
    stands_for = standing_in(candidate, baseline, broken_modules, broken_before) - lost
    # a parametrized test whose ids all changed (``model/usertests.renamed``): one test, by its candidate id
    renames = renamed(candidate, baseline) if baseline else {}
    gone = set(renames.values())
    out = []
    for name in (n for n in names if n not in stands_for and n not in gone):
        was = renames.get(name, name)  # its id in the baseline
        raw = candidate.results.get(name) or enclosing(name, broken_modules)
        before_raw, before, judged_before = before_of(name, was, baseline, broken_before, name in lost)
        after = status(raw)
        t = UserTest(test=name, candidate=after, baseline=before, cls=test_class(judged_before, after))
        if settle and name in settle and TEST_CLASSES[t.cls].rerun:
            said = {k: v for k, v in settle[name].items() if name not in lost or k != "baseline"}
            t.cls = test_class(said.get("baseline", judged_before) if baseline else None, said.get("candidate", after))
            t.note = "; ".join(f"{side}: {said[side]} on its re-runs" for side, first in
                               (("candidate", after), ("baseline", before)) if side in said and said[side] != first)
        t.new_warnings = new_warnings(raw.warnings if raw else [], before_raw.warnings if before_raw else None,
                                      before in RAN)
        if raw is not None and fails(after):
            _failure(t, raw, candidate, matrix, backend)
        elif t.cls == UserTestStatus.SKIPPED and before == UserTestSide.PASSED and import_skip(raw):
            t.cls, t.message = UserTestStatus.BROKEN, first_line(raw.message, 400)  # lost a module it needs
        elif t.cls == UserTestStatus.SKIPPED and raw is not None and name not in candidate.results:
            t.message = first_line(raw.message, 400)  # its module's skip: why none of its tests ran
        elif t.cls == UserTestStatus.FIXED and before_raw is not None and before_raw.message:
            t.message = "before: " + first_line(before_raw.message, 400)  # what the upgrade fixed
        # a pass stays a pass; a test paired by a changed id is excused by its own (candidate) runs only:
        # the pairing is by run order, and another test's flakiness must not hide a break (red team 9)
        if flaky and name in flaky and TEST_CLASSES[t.cls].rerun:
            said = flaky[name]
            t.flaky, t.note = said if isinstance(said, tuple) else (FlakyOrigin.RERUN, said)
            t.cls = UserTestStatus.FLAKY
        if was != name:
            t.was, t.note = was, "; ".join(filter(None, (f"id changed: {was} -> {name}", t.note)))
        out.append(t)
    return out


def _failure(t: UserTest, raw: RawResult, candidate: Observed, matrix: Matrix, backend: str) -> None:
    """A failing test's message, traceback and where it failed, with what explains it: a rule, else
    jax's API history."""
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


def compare(candidate: Cell, baseline: Cell | None, target: Target, matrix: Matrix, state_dir: Path,
            progress=quiet, jobs: int = 1, confirm: Confirm = Confirm(), reuse: bool = False,
            decided: Resolved | Ended | None = None) -> Comparison:
    """Run the user's tests after (and before; with --aa the baseline twice), run what changed
    ``confirm.reruns`` more times on both sides, classify. With ``jobs`` > 1 the baseline's
    environment is built while the candidate's tests run. ``reuse``: the baseline's whole-suite run
    is taken from the result cache where everything that decides it is the same (``side_key``; never
    with --aa); the re-runs of what changed stay live on both sides. ``decided``: the baseline as
    the caller resolved it (``run/cell.resolve_cell``), given with the baseline."""
    from concurrent.futures import ThreadPoolExecutor

    if (baseline is None) != (decided is None):
        raise TypeError("usertests.compare: a baseline is given with its resolution (decided), or neither")
    if decided is not None:  # the baseline is resolved first; the candidate is held at its versions
        candidate = userrun.hold_to_baseline(candidate, decided)
    reusable = reuse and isinstance(decided, Resolved) and not confirm.aa
    key = userrun.side_key(decided, target, matrix) if reusable else None
    kept_before = userrun.kept(key, state_dir) if key else None
    pool = ThreadPoolExecutor(1) if baseline is not None and kept_before is None and jobs > 1 else None
    ahead = pool.submit(userrun.build, baseline, matrix, state_dir) if pool is not None else None
    progress(f"your tests in the candidate ({candidate.id})…")
    try:
        after = userrun.observe(candidate, matrix, state_dir, target)
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
    tests = confirmed(after, before, candidate, baseline, flaky, target, matrix, state_dir, progress, confirm.reruns)
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


def confirmed(after: Observed, before: Observed | None, candidate: Cell, baseline: Cell | None,
              flaky: dict[str, str | tuple[FlakyOrigin, str]], target: Target, matrix: Matrix,
              state_dir: Path, progress, reruns: int) -> list[UserTest]:
    """Each test classified from the first runs (``after``, ``before``); what would be broken, failing
    or fixed re-run ``reruns`` more times on each side and classified again (``flaky`` learns what
    changed on a re-run)."""
    tests = classify(after, before, matrix, candidate.backend, flaky)
    again = [n for n in suspects(tests) if n not in flaky]
    if not (again and reruns):
        return tests
    progress(f"running {len(again)} test(s) " + ("once more" if reruns == 1 else f"up to {reruns} more times")
             + " on each side before blaming the upgrade…")
    sides = [("candidate", after, candidate)] + ([("baseline", before, baseline)] if before else [])
    changed_, settle = rerun(again, sides, matrix, state_dir, target, reruns)
    flaky.update(changed_)
    return classify(after, before, matrix, candidate.backend, flaky, settle)


def baseline_side(baseline: Cell, target: Target, matrix: Matrix, state_dir: Path, progress, confirm: Confirm,
                  key: str | None, kept_before: Observed | None) -> tuple[Observed, dict[str, str]]:
    """The baseline's whole-suite run (``kept_before``, re-used; or run now, and kept under ``key``),
    and with --aa the tests that flipped when it ran twice."""
    if kept_before is not None:
        progress(f"your tests in the baseline ({baseline.id}): re-used from the result cache, as they ran "
                 f"{kept_before.reused} (the same lock, Python, backend, plugin, source and options)")
        return kept_before, {}
    progress(f"your tests in the baseline ({baseline.id})…")
    before = userrun.observe(baseline, matrix, state_dir, target)
    if key:
        userrun.keep(key, before, state_dir)
    if not confirm.aa:
        return before, {}
    progress("your tests in the baseline once more (--aa): which flip by themselves…")
    again = userrun.observe(baseline, matrix, state_dir, target)
    return before, flips(before, again)


def rerun(names: list[str], sides, matrix: Matrix, state_dir: Path, target: Target,
          times: int) -> tuple[dict[str, str], dict[str, dict[str, UserTestSide]]]:
    """``names`` run up to ``times`` more times on each side (``sides``: (side, first run, cell)):
    (test -> what changed, for those whose outcome changed on a side: passed in one run, failed
    outright in another, ``model/usertests.changed``; test -> side -> what its runs there settle
    on, ``model/usertests.settled``, for the others: a time-limit stop is no evidence either way).
    A test whose id changed (``model/usertests.renamed``) is re-run on the candidate's side only (its
    pairing with a baseline id is by run order: another test's flip there is no evidence); one whose
    module skipped itself whole in a run is skipped in it."""
    runs: dict[str, dict[str, list[UserTestSide]]] = {}
    notes: dict[str, dict[str, str]] = {}
    first_runs = {side: first for side, first, _ in sides}
    in_candidate = seen_in(first_runs["candidate"], errors=True)
    uncollected_first = {n for n in names if (r := in_candidate(n)) is not None and collect_error(r)}
    uncollected = {n for n in uncollected_first if "::" not in n}  # a module's (or folder's) own record
    renames = renamed(first_runs["candidate"], first_runs["baseline"]) if "baseline" in first_runs else {}
    for side, first, cell in sides:
        there = {n: renames.get(n, n) if side == "baseline" else n for n in names}
        mine = [n for n in names if side == "candidate" or n not in renames]  # a paired id: the candidate's runs
        seen_first = in_candidate if side == "candidate" else seen_in(first)
        for name in mine:
            runs.setdefault(name, {})[side] = [status(seen_first(there[name]))]
        # what the candidate's whole run could not collect is not re-run there, nor a module's own
        # record anywhere: one test or module run alone can import what the whole run could not, or
        # the other way round (red team 11, A1: a break read flaky; red team 10, B1)
        mine = [n for n in mine if n not in uncollected and (side == "baseline" or n not in uncollected_first)]
        for _ in range(times):
            pending = [n for n in mine if side not in notes.get(n, {})]
            if not pending:
                break
            again = userrun.observe(cell, matrix, state_dir, target, nodeids=[there[n] for n in pending])
            if again.error:
                continue
            seen_again = seen_in(again)
            for name in pending:  # failed, then timeout or error: still failing, not flaky
                seen = runs[name][side]
                seen.append(status(seen_again(there[name])))
                if changed(seen):
                    notes.setdefault(name, {})[side] = f"{side}: {seen[0]}, then {seen[-1]}"
    settle = {name: {side: settled(seen) for side, seen in by.items()}
              for name, by in runs.items() if name not in notes}
    return {name: "; ".join(by.values()) for name, by in notes.items()}, settle


MAX_HELD_RUNS = 6  # confounders re-run one by one (each is an environment of its own)


def attribute(found: Sides, candidate: Cell, broken: list[str], target: Target, matrix: Matrix,
              state_dir: Path, progress=quiet) -> None:
    """Each confounder held at the baseline's version in turn, the broken tests re-run: whether
    they pass then (it is the cause), still fail (it is not), or it cannot be held."""
    for c in found.confounders[:MAX_HELD_RUNS]:
        if not c.baseline:
            c.held_run, c.detail = "cannot hold", "the baseline does not have it"
            continue
        progress(f"the {len(broken)} broken test(s) again with {c.dist} held at {c.baseline}…")
        seen = userrun.observe(held_at_baseline(candidate, c), matrix, state_dir, target, nodeids=broken)
        if seen.error:
            c.held_run, c.detail = "cannot hold", last_line(seen.error)
            continue
        still = [n for n in broken if fails(status(seen.results.get(n)))]
        c.held(len(broken), len(broken) - len(still))
