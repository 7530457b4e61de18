"""``jax-compat survey``: sample the release space off the matrix and score the verdicts"""

from __future__ import annotations

import sys
from pathlib import Path

from jaxcompat._util.exits import EXIT_CONFIG, EXIT_INTERRUPTED, EXIT_OK
from jaxcompat._util.lock import run_lock
from jaxcompat._util.statedir import StateDir
from jaxcompat.commands import options
from jaxcompat.model.vocab import CellStatus
from jaxcompat.operations import compat_report, edges, survey
from jaxcompat.report import edges as coverage
from jaxcompat.report.emit import emit
from jaxcompat.report.outputs import CompatReport, SurveyReport
from jaxcompat.run.matrix import default_jobs

NAME = "survey"


def add_parser(sub) -> None:
    sv = sub.add_parser(
        "survey", parents=[options.common()], help="sample the release space off the matrix and score the verdicts"
    )
    sv.add_argument("--limit", type=int, default=120, help="combinations to sample (default 120)")
    sv.add_argument("--seed", type=int, default=0, help="seed of the random fill (default 0)")
    sv.add_argument("--shard", type=options.shard, help="i/n: run every n-th combination from the i-th (CI jobs)")
    sv.add_argument("-j", "--jobs", type=options.positive, default=default_jobs(), help="combinations in parallel")
    sv.add_argument(
        "--fresh", action="store_true", help="run again what was already observed (and re-use no cached result)"
    )
    sv.add_argument("--case", action="append",
                    help="run only these cases (repeatable) and lay their results over the stored observations")
    sv.add_argument("--jax", metavar="SPEC", type=options.specifier,
                    help="only the sampled combinations whose jax matches SPEC (e.g. '>=0.6')")
    sv.add_argument("--report-only", action="store_true", help="score the stored observations (merge shards)")
    sv.add_argument("--edges", action="store_true",
                    help="search every equinox release's jax column for where outcomes change (no random sample)")
    sv.add_argument("--equinox", metavar="SPEC", type=options.specifier,
                    help="with --edges: only these equinox columns (e.g. '>=0.11,<0.12')")
    sv.add_argument(
        "--stride", type=options.positive, default=6, help="with --edges: seed every N-th jax of a column (default 6)"
    )
    sv.add_argument("--budget", type=int, default=10**6, help="with --edges: at most N new environments this run")
    options.report_formats(sv, SurveyReport, CompatReport)
    sv.set_defaults(func=run)


def run(args) -> int:
    """Sample the release space off the matrix, run what is not yet observed, score, render."""

    matrix = options.load_matrix(args)
    reports_dir, state_dir = Path(args.reports), Path(args.state)
    out_dir = reports_dir / "survey"
    cache = StateDir(state_dir).cache
    rel = compat_report.gather(cache)  # the one walk of the release space
    sp = survey.space(rel, cache)
    if args.edges:
        return _edges(args, matrix, rel, sp)
    combos = survey.sample(matrix, sp, limit=args.limit, seed=args.seed)
    if args.case:  # new cases over what was already observed, whatever sample it came from
        combos = [o.combo for o in survey.load_observations(matrix, out_dir) if o.cell.status == CellStatus.OK]
    if args.jax:
        from packaging.specifiers import SpecifierSet
        from packaging.version import Version

        combos = [c for c in combos if SpecifierSet(args.jax).contains(Version(c.jax), prereleases=True)]
    try:
        mine = survey.shard(combos, args.shard)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    print(
        f"space: {len(sp.jax)} jax x {len(sp.equinox)} equinox releases, {len(sp.pairs)} pairs that "
        f"equinox's metadata accepts; sample: {len(combos)}"
        + (f", shard {args.shard}: {len(mine)}" if args.shard else "")
    )
    interrupted = False
    with run_lock(out_dir):
        if not args.report_only:
            _, interrupted = survey.run(matrix, mine, jobs=args.jobs, state_dir=state_dir, out_dir=out_dir,
                                        fresh=args.fresh, cases=args.case,
                                        use_cache=not (args.no_cache or args.fresh), progress=print)
        # Every stored observation counts (an earlier sample's too), except combinations that
        # have since become cells of matrix.toml: the score is about truth off the matrix.
        taken = survey.matrix_pairs(matrix)
        obs = [o for o in survey.load_observations(matrix, out_dir)
               if (o.combo.jax, o.combo.equinox) not in taken]
        if not obs and args.report_only:
            print(f"error: {survey.nothing_stored(out_dir, 'survey')}", file=sys.stderr)
            return EXIT_CONFIG
        summary = survey.score(obs)
        rows = survey.compat_rows(matrix, rel, sp, obs)
        files = emit(survey.output(summary, obs, rows, sp, matrix,
                                   {"seed": args.seed, "limit": args.limit, "sampled": len(combos),
                                    "coverage_md": edges.stored_coverage(reports_dir)}), reports_dir, args.format)
        files += emit(compat_report.generate(matrix, reports_dir, cache, rel=rel)[1], reports_dir, args.format)
    print(f"\nsurvey: {summary['combinations']} combinations observed; case verdicts right "
          f"{summary['right']}/{summary['verdicts']} ({100 * summary['right_share']:.2f}%); combinations "
          f"with no wrong verdict {summary['clean_combinations']}/{summary['combinations']} "
          f"({100 * summary['clean_share']:.1f}%)")
    for w in summary["wrong"][:15]:
        print(f"  wrong: {w['case']} {w['outcome']} {w['error_type']} x{len(w['combinations'])}")
    print(options.files_line(files))
    return EXIT_INTERRUPTED if interrupted else EXIT_OK


def _edges(args, matrix, rel, sp) -> int:
    """``survey --edges``: the search, then the survey's own scoring and reports, and the drafts."""
    reports_dir, state_dir = Path(args.reports), Path(args.state)
    out_dir = reports_dir / "survey"
    try:
        plan = edges.Plan(edges.columns(sp, equinox=args.equinox, jax=args.jax, shard=args.shard), stride=args.stride)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    scope = " ".join(x for x in (args.equinox and f"equinox {args.equinox}", args.jax and f"jax {args.jax}",
                                 args.shard and f"shard {args.shard}") if x) or "all"
    print(f"edges: {len(plan.columns)} equinox columns, {sum(len(c.jax) for c in plan.columns)} pairs ({scope})")
    with run_lock(out_dir):
        cost = {"rounds": 0, "environments": 0, "seconds": 0.0, "interrupted": False}
        if not args.report_only:
            cost = edges.search(matrix, plan, jobs=args.jobs, state_dir=state_dir, out_dir=out_dir,
                          budget=args.budget, use_cache=not args.no_cache, progress=print)
        else:
            edges.observe_stored(plan, out_dir)
            cost.update(left=plan.steps_left(), **plan.coverage())
        taken = survey.matrix_pairs(matrix)
        obs = [o for o in survey.load_observations(matrix, out_dir) if (o.combo.jax, o.combo.equinox) not in taken]
        if not obs and args.report_only:
            print(f"error: {survey.nothing_stored(out_dir, 'survey --edges')}", file=sys.stderr)
            return EXIT_CONFIG
        summary = survey.score(obs)
        rows = survey.compat_rows(matrix, rel, sp, obs)
        money = edges.cost_line(cost, args.jobs, out_dir, len(sp.pairs))
        meta = {"mode": "edges", "scope": scope, "stride": args.stride, "search": cost,
                "coverage_md": coverage.render(cost, {"scope": scope, "cost": money})}
        files = emit(survey.output(summary, obs, rows, sp, matrix, meta, stem="survey-edges"), reports_dir,
                     args.format)
        coverage.splice_coverage(reports_dir / "survey.md", meta["coverage_md"])
        drafted = edges.draft_unexplained(matrix, obs, reports_dir)
    print(coverage.render(cost, {"scope": scope, "cost": money}))
    if drafted:
        print(drafted)
    print(options.files_line(files))
    return EXIT_INTERRUPTED if cost.get("interrupted") else EXIT_OK
