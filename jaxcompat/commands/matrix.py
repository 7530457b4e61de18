"""``jax-compat matrix``: run every cell (or --cell ID/GLOB ...) and write the reports"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from jaxcompat._util.exits import EXIT_FAILING, EXIT_INTERRUPTED, EXIT_OK
from jaxcompat._util.layout import command
from jaxcompat._util.lock import run_lock
from jaxcompat.commands import options
from jaxcompat.model.matrix import ConfigError
from jaxcompat.model.vocab import CellStatus
from jaxcompat.report import reports
from jaxcompat.run.matrix import default_jobs, run_cells, write_consolidated

NAME = "matrix"


def add_parser(sub) -> None:
    m = sub.add_parser("matrix", parents=[options.common()],
                       help="run every cell (or --cell ID/GLOB ...) and write the reports")
    m.add_argument("--cell", action="append", help="cell id or glob (repeatable)")
    m.add_argument("--case", action="append", help="case path or node id (repeatable; default: all)")
    m.add_argument("-j", "--jobs", type=options.positive, default=default_jobs(), help="cells in parallel")
    m.add_argument("--only-missing", action="store_true", help="run only cells without a finished report")
    m.add_argument(
        "--repeat", type=options.positive, default=1, help="run each case N times; differing outcomes are 'flaky'"
    )
    m.set_defaults(func=run)


def run(args) -> int:
    matrix = options.load_matrix(args)
    cells = _select(matrix, args.cell)
    reports_dir, state_dir = Path(args.reports), Path(args.state)
    with run_lock(reports_dir):
        previous: dict = {}
        if args.only_missing or args.cell:
            # A partial run keeps the other cells' latest reports in the consolidated view.
            previous = {c.id: c for c in options.previous_cells(reports_dir)}
        if args.only_missing:
            cells = [c for c in cells if c.id not in previous or previous[c.id].status == CellStatus.NOT_RUN]
            print(f"re-running {len(cells)} cell(s) that did not finish: {', '.join(c.id for c in cells) or 'none'}")
        results, interrupted = run_cells(matrix, cells, jobs=args.jobs, state_dir=state_dir,
                                         reports_dir=reports_dir, case_args=args.case or None,
                                         repeat=args.repeat, use_cache=not args.no_cache, progress=print)
        by_id = {**previous, **{r.id: r for r in results}}
        ordered = [by_id[c.id] for c in matrix.cells if c.id in by_id]
        summary = write_consolidated(matrix, ordered, reports_dir,
                                     extra_meta={"interrupted": interrupted,
                                                 "unfinished": [r.id for r in ordered
                                                                if r.status == CellStatus.NOT_RUN]})
    print()
    print(reports.terminal_overview(ordered, str(reports_dir / "matrix.md")))
    if reports.reuse_line(results):
        print("\n" + reports.reuse_line(results))
    print(f"\nreports: {reports_dir / 'matrix.md'}, {reports_dir / 'matrix.json'}, {reports_dir / 'cells'}/")
    if interrupted:
        print(f"run interrupted; re-run the unfinished cells with: {command('matrix')} --only-missing")
        return EXIT_INTERRUPTED
    return EXIT_OK if summary["ok"] else EXIT_FAILING


def _select(matrix, patterns: list[str] | None):
    if not patterns:
        return list(matrix.cells)
    chosen = [c for c in matrix.cells if any(fnmatch.fnmatchcase(c.id, p) for p in patterns)]
    if not chosen:
        raise ConfigError(matrix.path, "--cell", f"no cell matches {', '.join(patterns)}",
                          f"use ids or globs of: {', '.join(c.id for c in matrix.cells)}")
    return chosen
