"""``jax-compat crater``: the ecosystem's dependents' own tests, in a baseline and in a candidate"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import replace
from pathlib import Path

from jaxcompat._util.exits import EXIT_CONFIG, EXIT_INTERRUPTED
from jaxcompat._util.layout import layout
from jaxcompat._util.lock import run_lock
from jaxcompat._util.redact import redact_text
from jaxcompat._util.statedir import StateDir
from jaxcompat.commands import options
from jaxcompat.env import resolution
from jaxcompat.env.releases import IndexError_
from jaxcompat.model.crater import Plan
from jaxcompat.model.index import NO_INDEX
from jaxcompat.model.matrix import AUTO
from jaxcompat.report.emit import emit
from jaxcompat.report.outputs import CraterReport
from jaxcompat.report.progress import ProgressLine
from jaxcompat.run import runner

NAME = "crater"
SHARDS = 8  # the workflow's job matrix (.github/workflows/crater.yml); the cost line's default


def add_parser(sub) -> None:
    c = sub.add_parser("crater", parents=[options.common(), options.indexes(), options.confirmation()],
                       help="before a release: the dependents' own test suites in a baseline and the candidate")
    c.add_argument("requirements", nargs="*", help="the candidate: PEP 508 requirements (jax==0.4.33, "
                                                   "'equinox @ git+https://…@main', a wheel)")
    c.add_argument("-r", "--requirement", dest="requirement_files", action="append", default=[], metavar="FILE",
                   help="read the candidate's requirements from FILE (repeatable)")
    c.add_argument("--baseline", action="append", default=[], metavar="REQ",
                   help="the baseline (repeatable; default: the newest release of each package the candidate names)")
    c.add_argument("--baseline-file", dest="baseline_files", action="append", default=[], metavar="FILE")
    c.add_argument("--dependents", metavar="FILE", default=str(layout().root / "dependents.toml"),
                   help="the projects whose tests to run (default: the checkout's dependents.toml)")
    c.add_argument("--dependent", action="append", default=[], metavar="NAME",
                   help="only this dependent (repeatable)")
    c.add_argument("--as-of", dest="as_of", metavar="YYYY-MM-DD", type=_date,
                   help='dependents at version "latest" are taken at their newest release before this day, '
                        "git ones at its last commit, and what they need is resolved as of it (replaying history)")
    c.add_argument("--name", type=_name, help="keep this run's reports apart, in reports/crater/NAME/ "
                                             "(a replay of history, a second candidate)")
    c.add_argument("--python", help="the Python of both sides (default: the lowest every pin accepts)")
    c.add_argument("--budget", type=options.positive, metavar="SECONDS",
                   help="every dependent's time budget (default: its budget_s in the dependents file)")
    c.add_argument("--shard", type=options.shard, help="i/n: every n-th dependent by name from the i-th (CI jobs)")
    c.add_argument("--report-only", action="store_true",
                   help="merge the stored results of every shard into one report (runs nothing)")
    c.add_argument("--run", type=_run_id, metavar="ID",
                   help="the run this shard belongs to, the same ID in every shard of it (default: $JAXCOMPAT_RUN_ID, "
                        "else the CI run's GITHUB_RUN_ID, else none: a merge takes the shards that ran at the same "
                        "time as the last one started); with --report-only, the run to merge")
    c.add_argument("--bisect", nargs="?", const="unexplained", choices=("unexplained", "all"),
                   help="trace each broken group no rule explains (all: every group) to the commit of the moved "
                        "package that broke it (bisect --commits; the repository from a mirror through git's "
                        "url.<mirror>.insteadOf where GitHub is out of reach)")
    options.report_formats(c, CraterReport)
    c.set_defaults(func=run)


def _name(text: str) -> str:
    import argparse

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", text):
        raise argparse.ArgumentTypeError(f"{text!r}: a name of letters, digits, '.', '_' and '-'")
    return text


RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,99}")


def _run_problem(text: str) -> str:
    """What is wrong with a run id (--run, $JAXCOMPAT_RUN_ID), or ""."""
    if RUN_ID.fullmatch(text):
        return ""
    return (("an empty run id" if not text.strip() else f"{text!r} is not a run id") + ": write the id every "
            "shard of one run shares, of letters, digits, '.', '_', '-' and ':' (at most 100), e.g. nightly-2026-11-27")


def _run_id(text: str) -> str:
    import argparse

    if _run_problem(text):
        raise argparse.ArgumentTypeError(_run_problem(text))
    return text


def _date(text: str) -> str:
    """A day of the calendar as YYYY-MM-DD (2024-02-30 is none: git would take any commit for it,
    and uv refuse it in every environment, after the downloads)."""
    import argparse
    import datetime

    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            return datetime.date.fromisoformat(text).isoformat()
        problem = "write a day as YYYY-MM-DD"
    except ValueError as e:
        problem = f"not a day of the calendar ({e}); write a day as YYYY-MM-DD, e.g. 2024-09-20"
    raise argparse.ArgumentTypeError(f"{text!r}: {problem}")


def run(args) -> int:
    from jaxcompat.env.candidate import CandidateError, read_requirements
    from jaxcompat.knowledge.dependents import load as load_dependents
    from jaxcompat.knowledge.dependents import unknown
    from jaxcompat.knowledge.flaky import FlakyFileError
    from jaxcompat.model.index import SourceError
    from jaxcompat.operations import crater, craterparts
    from jaxcompat.operations.confirm import ReportError

    matrix = options.load_matrix(args)
    dependents = load_dependents(args.dependents)  # a ConfigError: exit 2, before anything is downloaded
    out_dir = Path(args.reports) / "crater" / (args.name or "")
    given = os.environ.get(crater.RUN_ENV, "") if args.run is None else args.run  # --run's is checked already
    problem = unknown(dependents, args.dependent, args.dependents) or (given and _run_problem(given) and
                                                       f"${crater.RUN_ENV}: {_run_problem(given)} (or give --run ID)")
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_CONFIG
    if args.report_only:
        return _report_only(out_dir, dependents, matrix.failures, args.format, given)
    try:
        index = options.index_options(args)
        reqs = read_requirements(args.requirements + [x for f in args.requirement_files for x in ("-r", f)])
        _ready(args, reqs, dependents)
        names, base = _sides(args, reqs, index)
        chosen = _confirmed(args, crater.select(dependents, set(names), args.dependent))
    except (CandidateError, SourceError, IndexError_, FlakyFileError, ReportError) as e:
        print(f"error: {redact_text(str(e))}", file=sys.stderr)
        return EXIT_CONFIG
    plan = Plan(tuple(reqs), tuple(base), index=index, python=args.python or AUTO, as_of=args.as_of,
                       reruns=args.reruns, aa=args.aa, flaky_file=args.flaky_file or "",
                       reuse_baseline=not args.no_cache, run=crater.run_of(dict(os.environ), given))
    chosen = _units(chosen, args, out_dir)
    mine = crater.shard(chosen, args.shard)
    t0 = time.perf_counter()
    with run_lock(out_dir):
        crater.store_plan(out_dir, plan, chosen, args.shard)
        interrupted = _run(crater, chosen, mine, plan, matrix, args, out_dir)
        crater.finish_plan(out_dir, args.shard)
        results = crater.current(crater.stored(out_dir), chosen, mine, plan, Path(args.state))
        held = len(results)
        results = craterparts.merge(results)
        if not args.shard:  # every part ran here: the weights of the next deal
            craterparts.store_weights(out_dir, results)
        _afterwards(results, plan, matrix, dependents, args, out_dir, interrupted)
        part = (f"this shard's report holds {held} of the {len(chosen)} dependents planned (a split one's parts "
                "counted apart): merge the shards with --report-only",) if args.shard and held < len(chosen) else ()
        said, code = crater.report(out_dir, results, _plan_text(plan.key), time.perf_counter() - t0,
                                   int(args.shard.split("/")[1]) if args.shard else SHARDS, plan, chosen, gaps=part,
                                   failures=matrix.failures)
        files = emit(said, out_dir, args.format)
    print("\n" + said.text)
    _learn(results, plan, args)  # after the reports: what cannot be kept loses none of them
    print("\n" + options.files_line(files))
    if interrupted:
        print("run interrupted: re-run the same command for the dependents not judged (finished ones come from "
              "the result cache where nothing moves)")
        return EXIT_INTERRUPTED
    return code


def _units(chosen: list, args, out_dir: Path) -> list:
    """The units of work: each dependent (with --budget's budget), a split one as its parts, dealt
    by what its last complete run ran (``craterparts``)."""
    from jaxcompat.operations import craterparts

    if args.budget:
        chosen = [replace(d, budget_s=float(args.budget)) for d in chosen]
    return craterparts.units(craterparts.weighed(chosen, out_dir))


def _sides(args, reqs: list[str], index) -> tuple[list[str], list[str]]:
    """The names the candidate moves and the baseline (default: those names at their newest
    release); a pin the index has no release of is said now, before any download."""
    from jaxcompat.env.candidate import CandidateError, parse_requirement, read_requirements

    names = [parse_requirement(r).name.lower() for r in reqs]
    base = read_requirements(args.baseline + [x for f in args.baseline_files for x in ("-r", f)]) or names
    for text in base:
        parse_requirement(text)
    sides = [("--baseline", base)] + ([("the candidate", reqs)] if index == NO_INDEX else [])
    for side, texts in sides:
        missing = resolution.not_released(texts, StateDir(Path(args.state)).cache)
        if missing:
            raise CandidateError(f"{side} {missing} (fix: name a release, or give the index that holds "
                                 "it: --pre --extra-index-url URL)")
    return names, base


def _afterwards(results, plan, matrix, dependents, args, out_dir: Path, interrupted: bool) -> None:
    """--bisect: each broken group to its commit (before the reports, which show it)."""
    if args.bisect and not interrupted:
        _bisect(results, plan, matrix, dependents, args, out_dir)


def _learn(results, plan, args) -> None:
    """--aa: what flipped by itself, kept in the flaky file, and said; or the note that it could not
    be kept (the reports are written already, and stand)."""
    from jaxcompat.knowledge.flaky import FlakyFileError
    from jaxcompat.operations import crater

    if not args.aa:
        return
    where = "--flaky-file" if args.flaky_file else "flaky.json in the state folder"
    try:
        n = crater.learn(results, plan, Path(args.state))
    except FlakyFileError as e:
        print(f"note: --aa: what flipped by itself was not kept: {e} (the reports are written)",
              file=sys.stderr)
        return
    print(f"learned (--aa): {n} test(s) flip by themselves in the baselines, kept in {where} for later runs")


def _ready(args, reqs: list[str], dependents) -> None:
    """What the run needs, said before any index is asked (a CandidateError, a FlakyFileError or a
    ToolMissing: exit 2 with the fix): a candidate; the flaky file readable, and writable where this
    run learns (--aa); uv, which builds every side; and git where a dependent the candidate runs
    comes from git, a requirement is a git URL, or --bisect walks commits."""
    from jaxcompat._util.uvbin import git_bin, uv_bin
    from jaxcompat.env import candidate
    from jaxcompat.env.candidate import CandidateError, package_of
    from jaxcompat.knowledge import dependentsources, flaky
    from jaxcompat.knowledge.dependentsources import folder
    from jaxcompat.operations import crater

    if not reqs:
        raise CandidateError("no candidate given: e.g. crater jax==0.4.33 equinox==0.11.6 "
                             "--baseline jax==0.4.31 --baseline equinox==0.11.6")
    flaky.load(args.flaky_file, Path(args.state), learning=args.aa)
    uv_bin()
    chosen = crater.select(dependents, {package_of(r) for r in reqs}, args.dependent)
    needs = {need for d in chosen for need in dependentsources.of(d.source).NEEDS}
    if args.bisect or "git" in needs | candidate.needs(reqs + args.baseline):
        git_bin()
    for dep in chosen:  # a ConfigError: exit 2, before anything is copied
        folder.refuse_holding(Path(args.dependents), dep, state=Path(args.state), reports=Path(args.reports))


def _confirmed(args, chosen: list) -> list:
    """The dependents to run: with --rerun-failures REPORT, only those that broke in it, each with
    only its tests that broke (a split one in no more parts than those), checked before anything is
    downloaded."""
    from jaxcompat.operations import confirm

    if not args.rerun_failures:
        return chosen
    broke = confirm.failures_of(args.rerun_failures)
    # a split one in no more parts than it has tests to re-run: no part is left without a test
    out = [replace(d, tests=tuple(broke[d.name]), split=min(d.split, len(broke[d.name]))) for d in chosen
           if d.name in broke]
    if not out:
        raise confirm.ReportError(f"--rerun-failures {args.rerun_failures}: none of the chosen dependents broke in "
                                  f"it (it names: {', '.join(sorted(broke))})")
    return out


def _run(crater, chosen, deps, plan, matrix, args, out_dir: Path) -> bool:
    """The dependents in turn (this shard's: ``deps``); whether Ctrl-C (or SIGTERM) stopped them:
    the running one is stopped, every finished one is kept. What it says crosses the boundary."""
    shown = crater.boundary(plan, chosen, Path(args.state))
    print(shown(f"crater: {' '.join(plan.candidate)} against {' '.join(plan.baseline)}; {len(chosen)} dependents"
                + (f", shard {args.shard}: {', '.join(d.unit for d in deps)}" if args.shard else "")
                + (f"; dependents as of {args.as_of}" if args.as_of else "")), flush=True)
    runner.show_progress(ProgressLine(sys.stderr))  # each side's tests done, on stderr
    try:
        with crater.interruptible():
            crater.run(deps, plan, matrix, Path(args.state), out_dir, progress=lambda s: print(s, flush=True),
                       use_cache=not args.no_cache)
    except KeyboardInterrupt:
        print("interrupted: the running dependent was stopped; the finished ones are kept", flush=True)
        return True
    return False


def _bisect(results, plan, matrix, dependents, args, out_dir: Path) -> None:
    """crater --bisect: each chosen broken group to its first bad commit (bisect.json)."""
    from jaxcompat.operations import crater, craterbisect

    shown = crater.boundary(plan, dependents.dependents, Path(args.state))
    runner.show_progress(ProgressLine(sys.stderr))
    craterbisect.run(out_dir, results, plan, matrix, dependents, Path(args.state), mode=args.bisect,
                     progress=lambda s: print(shown(s), flush=True))


def _plan_text(key: str) -> dict:
    import json

    candidate, baseline, as_of = json.loads(key)[:3]
    return {"candidate": candidate, "baseline": baseline, "as_of": as_of}


def _report_only(out_dir: Path, dependents, failures=(), formats=None, given: str = "") -> int:
    """Merge the shards' stored results against what they planned: a dependent planned and not
    reported, or a result that does not read, is named and the merge exits 2 (never "breaks none");
    a stored result no stored plan names (left from another or an earlier run) is named and left out."""
    from jaxcompat.operations import crater, craterparts

    with run_lock(out_dir):
        _withdraw(out_dir)  # a merge that fails leaves no earlier merge's report looking current
    stored, unreadable = crater.read_stored(out_dir)
    runs: set[str] = set()
    stale: list[str] = []  # an earlier run's shard plans: their results are not this run's
    merged: list[str] = []  # which run is merged, and why those shards
    plans, bad_plans = crater.planned(out_dir, runs, stale, given, merged)
    unreadable += bad_plans
    if given and not plans:
        print(f"error: --run {given}: no shard plan under {out_dir / crater.RESULTS} has that run id"
              + (": " + "; ".join(stale) if stale else ""), file=sys.stderr)
        return EXIT_CONFIG
    if not stored and not plans:
        print(f"error: no dependent's result and no plan under {out_dir / crater.RESULTS}: run the shards first "
              "(crater CANDIDATE --shard i/n), or download their artifacts there", file=sys.stderr)
        return EXIT_CONFIG
    if len(plans) > 1:
        print(f"error: the stored plans come from {len(plans)} different crater runs (candidates, baselines, days, "
              f"Pythons or indexes); remove the others from {out_dir / crater.RESULTS}: " + " | ".join(sorted(plans)),
              file=sys.stderr)
        return EXIT_CONFIG
    key = next(iter(plans)) if plans else min(r.plan for r in stored)  # without a plan, only its words are shown
    results, ignored = crater.named_by(stored, plans, runs)
    ignored = stale + ignored
    missing = sorted(plans.get(key, set()) - {r.name for r in results})
    results = craterparts.merge(results + [crater.missing_result(n, key) for n in missing])
    craterparts.store_weights(out_dir, results)  # the parts' tests: what the next run deals them by
    gaps = _gaps(unreadable, bool(plans))
    with run_lock(out_dir):
        said, code = crater.report(out_dir, results, _plan_text(key), sum(r.seconds for r in results), SHARDS,
                                   Plan.from_key(key), dependents.dependents, gaps=gaps, failures=failures,
                                   ignored=tuple(ignored))
        files = emit(said, out_dir, formats)
    print(said.text)
    for run in merged:
        print(f"merged: {run}")
    if missing:
        print(f"✗ {len(missing)} planned dependent(s) have no stored result (a shard did not finish or its "
              f"artifact is missing): {', '.join(missing)}")
    for plan_file in stale:
        print(f"✗ left out, a shard of another run: {plan_file}")
    print("\n" + options.files_line(files))
    return code


def _withdraw(out_dir: Path) -> None:
    """The crater reports an earlier run wrote under ``out_dir``, removed (every format's file)."""
    from jaxcompat.report.emit import formats_of
    from jaxcompat.report.formats import FORMATS

    for name in formats_of([CraterReport]):
        (out_dir / CraterReport("crater").filename(name, FORMATS[name].suffix)).unlink(missing_ok=True)


def _gaps(unreadable: list[str], had_plan: bool) -> tuple[str, ...]:
    """What the merge could not see, each kept from "breaks none" by the one invariant and said in
    every report it writes."""
    gaps = [f"stored file could not be read (corrupt, cut short or another schema): {name}" for name in unreadable]
    if not had_plan:
        gaps.append("no shard stored its plan: what was planned cannot be told (run the shards with this "
                    "version of jax-compat)")
    return tuple(gaps)
