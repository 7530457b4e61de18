"""``jax-compat latest``: the newest releases, compared with the baseline"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from jaxcompat._util.exits import EXIT_CONFIG
from jaxcompat._util.lock import run_lock
from jaxcompat.commands import options
from jaxcompat.model import verdicts
from jaxcompat.model.index import SourceError
from jaxcompat.model.vocab import CellOutcome, CellStatus
from jaxcompat.report import reports
from jaxcompat.report.emit import emit
from jaxcompat.report.outputs import LatestReport

NAME = "latest"


def add_parser(sub) -> None:
    lt = sub.add_parser(
        "latest", parents=[options.common(), options.indexes()], help="the newest releases, compared with the baseline"
    )
    lt.add_argument("--baseline", help="baseline file (default: reports/baseline.json)")
    keep = lt.add_mutually_exclusive_group()
    keep.add_argument("--update-baseline", action="store_true", help="store tonight's result as the baseline")
    keep.add_argument("--refresh-baseline", action="store_true",
                      help="store tonight's result as the baseline only when it differs from it (outcomes, "
                           "versions, status, new cases): what the nightly workflow proposes")
    options.report_formats(lt, LatestReport)
    lt.set_defaults(func=run)


def run(args) -> int:
    from jaxcompat.operations.latest import (
        load_baseline,
        refresh_baseline,
        report_latest,
        run_latest,
        update_baseline,
    )
    from jaxcompat.report.latest import held_section

    matrix = options.load_matrix(args)
    reports_dir = Path(args.reports)
    baseline_path = Path(args.baseline) if args.baseline else reports_dir / "baseline.json"
    try:
        index = options.index_options(args)
        baseline = load_baseline(baseline_path)  # a damaged baseline is said now, before the run
    except (SourceError, reports.ReportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    with run_lock(reports_dir):
        result = run_latest(matrix, state_dir=Path(args.state), reports_dir=reports_dir, use_cache=not args.no_cache,
                            index=index, progress=print)
        if args.update_baseline:
            update_baseline(baseline_path, [result.to_dict()])
        refreshed = refresh_baseline(baseline_path, result, baseline) if args.refresh_baseline else None
        said, text, regressed = report_latest(result, baseline,
                                              held_section(refreshed) if refreshed is not None and refreshed.held
                                              else [])
        files = emit(said, reports_dir, args.format)
    print(reports.terminal_grid([result]))
    print()
    print(text)
    print("\n" + options.files_line(files))
    if args.update_baseline or refreshed:
        print(f"baseline updated: {baseline_path}")
    elif args.refresh_baseline and not (refreshed is not None and refreshed.held):
        print(f"baseline unchanged (tonight matches it): {baseline_path}")
    if refreshed is not None and refreshed.held:
        print(f"kept out of the baseline (tonight's findings, not blessed): {'; '.join(refreshed.held)}")
    return verdicts.decide([tonight(result, regressed)]).code


def tonight(result, regressed: bool) -> verdicts.Item:
    """Tonight's cell as the one invariant reads it: 1 on a regression; judged when its cases ran
    (not all skipped) or a rule explains its cell error; the machine, our harness, the index or an
    interruption judged nothing (2, never "no regression")."""
    from jaxcompat.env.candidate import item

    if result.status != CellStatus.OK and result.outcome == CellOutcome.EXPECTED:
        return verdicts.Item(result.id, broken=regressed, judged=True, ran_candidate=1)
    return replace(item(result, not regressed), broken=regressed)
