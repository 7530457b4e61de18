"""``jax-compat bisect``: bound a failure, known or not, and draft the rule for what no rule knows.

The ways in:
- ``bisect RULE_OR_CASE --package P PINS``: one package's range for a documented failure (as before);
- ``bisect RULE_OR_CASE PINS`` (no ``--package``): its region along jax, equinox and the raising
  frame's package, from the combination the pins name;
- ``bisect --from REPORT`` (a ``check.json``, a cell of a matrix or survey run): every signature no
  rule explains there, each bounded as a region (``--signature KEY`` picks one), then drafted
  into ``reports/draft-rules.toml`` and verified against the observations;
- ``bisect CASE --signature KEY PINS``: one signature, on the cases named, from the pins' combination.
- ``bisect RULE_OR_CASE --commits --package P --good A --bad B PINS`` (``--fixed``): the first commit
  between two releases where it starts (stops); ``bisect --from crater.json --commits``: a stored
  crater report's broken groups to their first bad commits, as ``crater --bisect`` does.
"""

from __future__ import annotations

import sys
from pathlib import Path

from jaxcompat._util.exits import EXIT_CONFIG, EXIT_FAILING, EXIT_OK
from jaxcompat._util.layout import layout
from jaxcompat.commands import options
from jaxcompat.env.candidate import CandidateError, parse_requirement
from jaxcompat.env.commits import HistoryError
from jaxcompat.env.gitsource import GitError
from jaxcompat.knowledge import drafts, signature
from jaxcompat.knowledge.outcomes import reclassify
from jaxcompat.model.crater import DependentResult, Plan
from jaxcompat.model.matrix import AUTO, Matrix
from jaxcompat.model.outcomes import CellResult
from jaxcompat.model.region import Region
from jaxcompat.operations import commitbisect, region
from jaxcompat.operations.bisect import BisectError, Target, bisect, observed_cell, observer, rule_target
from jaxcompat.report import bisect as bisect_report
from jaxcompat.report import commitbisect as commitbisect_report
from jaxcompat.report import draftrules, reports
from jaxcompat.report import region as region_report
from jaxcompat.report.emit import emit
from jaxcompat.report.outputs import BisectReport, CommitBisectReport
from jaxcompat.report.progress import ProgressLine
from jaxcompat.run import runner

NAME = "bisect"


def add_parser(sub) -> None:
    b = sub.add_parser("bisect", parents=[options.common()],
                       help="where a failure starts and stops: along one package, or its region; unknown ones too")
    b.add_argument("target", nargs="?", help="a failure id or a case (path or node id)")
    b.add_argument("--package", help="bisect along this distribution only (default: the region along jax, "
                                     "equinox and the package that raised)")
    b.add_argument("--axis", action="append", default=[], help="with no --package: the packages to bound (repeatable)")
    b.add_argument("--from", dest="from_report", metavar="REPORT",
                   help="a check.json or cell report: bound every failure no rule explains there and draft its rule")
    b.add_argument("--signature", metavar="KEY",
                   help="an error signature instead of a rule: 'Type: message [@ path.py:function]'")
    b.add_argument("--good", help="oldest release to consider (its outcome is 'good')")
    b.add_argument("--bad", help="newest release to consider")
    b.add_argument("--python", help="Python version (default: per step, the lowest that every pin supports)")
    b.add_argument("--commits", action="store_true",
                   help="with --package, --good and --bad: walk the package's commits between the two releases' "
                        "tags (first-parent) and name the first commit at which the target fails")
    b.add_argument("--fixed", action="store_true",
                   help="with --commits: the first commit at which the failure stops (good = a release it affects)")
    b.add_argument("--repo", metavar="URL",
                   help="with --commits: the package's git repository (default: the ecosystem's own; a local "
                        "mirror through git's url.<mirror>.insteadOf)")
    b.add_argument("--dependents", metavar="FILE", default=str(layout().root / "dependents.toml"),
                   help="with --from crater.json --commits: the dependents file the crater ran")
    b.add_argument("--all-groups", action="store_true",
                   help="with --from crater.json --commits: every broken group, those a rule explains too (on "
                        "the rule's cases), as crater --bisect all")
    b.add_argument("pins", nargs="*", help="other pins, e.g. jax==0.4.33")
    options.report_formats(b, BisectReport, CommitBisectReport)
    b.set_defaults(func=run)


def run(args) -> int:
    return bisect_with(args, options.load_matrix(args))


def bisect_with(args, matrix: Matrix) -> int:
    runner.show_progress(ProgressLine(sys.stderr))  # each step's tests done, on stderr
    try:
        for p in args.pins:
            parse_requirement(p)
        if args.from_report and args.commits:
            return _commits_from_crater(args, matrix)
        if args.from_report:
            return _from_report(args, matrix)
        if not args.target:
            raise BisectError("name a rule id or a case, or --from REPORT")
        if args.commits:
            return _commits(args, matrix)
        if args.package:
            return _one_axis(args, matrix)
        return _region(args, matrix)
    except (BisectError, CandidateError, HistoryError, GitError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG


def _one_axis(args, matrix: Matrix) -> int:
    target = rule_target(args.target, matrix) if not args.signature else _signature_target(args)
    result = bisect(matrix, target, args.package, good=args.good, bad=args.bad, pins=args.pins,
                    python=args.python or AUTO, state_dir=Path(args.state), use_cache=not args.no_cache,
                    progress=print)
    print(bisect_report.render(result))
    name = f"bisect-{result.package}-{_slug(args.target)}"
    print(options.files_line(emit(BisectReport(name, data=result.to_dict()), Path(args.reports), args.format)))
    return EXIT_OK if result.first_bad else EXIT_FAILING


def _commits(args, matrix: Matrix) -> int:
    """``--commits``: the first commit of the package between two releases where the target
    starts (or, ``--fixed``, stops) failing."""
    if not (args.package and args.good and args.bad):
        raise BisectError("--commits needs --package P, --good RELEASE and --bad RELEASE "
                          "(e.g. --package jax --good 0.4.31 --bad 0.4.33)")
    target = rule_target(args.target, matrix) if not args.signature else _signature_target(args)
    package = args.package.lower()
    result = commitbisect.bisect_commits(
        matrix, target, package, good=args.good, bad=args.bad, pins=args.pins, python=args.python or AUTO,
        state_dir=Path(args.state), repo=args.repo, fixed=args.fixed, use_cache=not args.no_cache, progress=print)
    print(commitbisect_report.render(result))
    name = f"bisect-commits-{package}-{_slug(args.target)}" + ("-fixed" if args.fixed else "")
    files = emit(CommitBisectReport(name, result=result), Path(args.reports) / "bisect", args.format)
    print(options.files_line(files))
    return EXIT_OK if result.first else EXIT_FAILING if result.judged else EXIT_CONFIG


def _commits_from_crater(args, matrix: Matrix) -> int:
    """``--from crater.json --commits``: a stored crater report's broken groups, as ``crater
    --bisect`` walks them (those no rule explains; ``--all-groups``: every one), answered in
    ``bisect.json`` beside it, which the report shows from its next ``crater --report-only`` on."""
    from jaxcompat._util.jsonfile import read_json
    from jaxcompat.knowledge.dependents import load as load_dependents
    from jaxcompat.operations import crater, craterbisect

    path = Path(args.from_report)
    data = read_json(path, BisectError, unreadable="give the path of a crater.json",
                     damaged="regenerate it with crater --report-only")
    if not (isinstance(data, dict) and data.get("kind") == "crater" and isinstance(data.get("dependents"), list)):
        raise BisectError(f"{path}: not a crater report (no \"kind\": \"crater\" with its \"dependents\"); "
                          "--commits with --from takes a crater.json")
    plan = Plan(tuple(data.get("candidate", ())), tuple(data.get("baseline", ())), python=args.python or AUTO,
                       as_of=data.get("as_of") or None)
    results = [DependentResult.from_dict(d) for d in data["dependents"]]
    dependents = load_dependents(args.dependents)
    shown = crater.boundary(plan, dependents.dependents, Path(args.state))
    found = craterbisect.run(path.parent, results, plan, matrix, dependents, Path(args.state),
                             mode="all" if args.all_groups else "unexplained",
                             progress=lambda s: print(shown(s), flush=True))
    if not found:
        print(f"nothing to bisect: every broken group in {path} is explained by a rule (or none is broken)"
              + ("" if args.all_groups else "; --all-groups walks those too"))
        return EXIT_OK
    for g in crater.group(results):
        if g.signature.key in found:
            g.bisect = found[g.signature.key]
            print(f"{g.signature.key}\n  {g.bisect_line()}")
    print(f"report: {path.parent / crater.BISECT_FILE} (crater --report-only puts it beside the groups)")
    unanswered = [r for r in found.values() if not r.get("commit")]
    return EXIT_OK if not unanswered else EXIT_FAILING if all(r.get("judged") for r in unanswered) else EXIT_CONFIG


def _signature_target(args) -> Target:
    sig = signature.parse(args.signature)
    sig = signature.Signature(sig.error, signature.normalise(sig.message), sig.frame)
    return Target.of_signature(sig, [args.target], _pinned(args.pins))


def _pinned(pins: list[str]) -> dict[str, str]:
    out = {}
    for p in pins:
        req = parse_requirement(p)
        exact = [s.version for s in req.specifier if s.operator == "=="]
        if exact:
            out[req.name.lower()] = exact[0]
    return out


def _region(args, matrix: Matrix) -> int:
    """A rule's (or a signature's) region from the combination the pins name."""
    seen = _pinned(args.pins)
    target = _signature_target(args) if args.signature else rule_target(args.target, matrix)
    axes = region.axes_for(target, seen, args.axis or None)
    if len(axes) < 1:
        raise BisectError("pin the combination where it shows, e.g. jax==0.4.33 equinox==0.11.6")
    reg = _bound(args, matrix, target, seen, axes)
    if target.signature is None:
        return EXIT_OK if reg.bounds and reg.bounds[0].first_bad else EXIT_FAILING
    group = drafts.Group(target.signature, "case", set(target.cases), [seen])
    return _draft_and_verify(args, matrix, [(group, reg)], [])


def _bound(args, matrix: Matrix, target: Target, seen: dict[str, str], axes: list[str]) -> Region:
    observe = observer(matrix, python=args.python or AUTO, state_dir=Path(args.state), use_cache=not args.no_cache)
    reg = region.bound(matrix, target, seen, axes=axes, python=args.python or AUTO, state_dir=Path(args.state),
                       observe=observe, progress=print)
    print(region_report.render(reg))
    name = drafts.Group(target.signature, "case").id if target.signature else target.id
    files = emit(BisectReport(f"region-{_slug(name)}", data=reg.to_dict(), indent=1), Path(args.reports) / "bisect",
                 args.format)
    print(options.files_line(files))
    return reg


def _from_report(args, matrix: Matrix) -> int:
    """Every unexplained signature of a stored result, bounded and drafted."""
    cell = _load_cell(Path(args.from_report))
    judged = reclassify(cell, matrix.failures)
    groups = drafts.unexplained([judged])
    if args.signature:
        want = signature.parse(args.signature)
        groups = {s: g for s, g in groups.items() if s.key == want.key or s == want}
    groups = {s: g for s, g in groups.items() if g.stage == "case"}
    if not groups:
        print(f"nothing to bound: every failure in {args.from_report} is explained by a rule")
        return EXIT_OK
    print(f"{len(groups)} signature(s) no rule explains in {args.from_report}:")
    for s, g in groups.items():
        print(f"  {s.key}  ({len(g.cases)} case(s))")
    pairs = []
    for s, g in groups.items():
        target = Target.of_signature(
            s, sorted(g.cases), {a: cell.versions[a] for a in region.AXES if a in cell.versions}
        )
        axes = region.axes_for(target, cell.versions, args.axis or None)
        pairs.append((g, _bound(args, matrix, target, cell.versions, axes)))
    return _draft_and_verify(args, matrix, pairs, [cell])


def _draft_and_verify(args, matrix: Matrix, pairs, cells: list[CellResult]) -> int:
    path = Path(args.reports) / draftrules.FILE
    made = [drafts.draft(g, [reg.clause] if reg.clause else drafts.box(g, []),
                         f"bisect ({reg.shape}, {reg.environments} environments)") for g, reg in pairs]
    draftrules.write(path, made, matrix)
    observed = cells + [observed_cell(o) for _, reg in pairs for o in reg.observations]
    report = drafts.verify(observed, matrix, path)
    print(f"\ndrafted {len(made)} rule(s): {path} (use now with --rules {path})")
    print(f"verified on {len(observed)} observation(s): {report['turned_reproduced']} unexplained result(s) "
          f"become reproduced; other changes: {len(report['other_changes'])}")
    for line in report["other_changes"][:10]:
        print(f"  ! {line}")
    if report["relabelled"]:
        print(f"  {len(report['relabelled'])} failing result(s) where the region could not say (another error) "
              "are now `mismatch` instead of `regression`: the draft's range covers them; narrow it if that is wrong")
    return EXIT_OK if not report["other_changes"] else EXIT_FAILING


def _load_cell(path: Path) -> CellResult:
    """The one cell of a single-cell report (read by the one reader of cell reports)."""
    try:
        cells = reports.read_cells(path)
    except reports.ReportError as e:
        raise BisectError(str(e)) from None
    if len(cells) != 1:
        raise BisectError(f"{path} is not a cell report (it holds {len(cells)} cells): give a check.json "
                          "or reports/cells/<id>.json")
    return cells[0]


def _slug(text: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9.]+", "_", text)[:80].strip("_")
