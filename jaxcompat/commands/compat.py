"""``jax-compat compat``: rebuild compat.md/json: which releases work with which jax"""

from __future__ import annotations

import sys
from pathlib import Path

from jaxcompat._util.exits import EXIT_CONFIG, EXIT_OK
from jaxcompat._util.statedir import StateDir
from jaxcompat.commands import options
from jaxcompat.knowledge import compat
from jaxcompat.operations import compat_report
from jaxcompat.report.emit import emit
from jaxcompat.report.outputs import CompatReport

NAME = "compat"


def add_parser(sub) -> None:
    cp = sub.add_parser(
        "compat", parents=[options.common()], help="rebuild compat.md/json: which releases work with which jax"
    )
    cp.add_argument(
        "--evidence",
        action="append",
        default=[],
        metavar="FILE",
        help="survey.json or a report of cells (repeatable; default: reports/survey.json, baseline.json, checks.json)",
    )
    cp.add_argument("--add", action="append", default=[], metavar="CHECK.json",
                    help="record a check report in reports/checks.json as evidence first (repeatable)")
    options.report_formats(cp, CompatReport)
    cp.set_defaults(func=run)


def run(args) -> int:
    """Rebuild reports/compat.md and compat.json from the stored evidence and the rules."""

    try:
        for report in args.add:
            print(f"recorded {', '.join(compat.record(Path(report), Path(args.reports)))} in "
                  f"{Path(args.reports) / compat.CHECKS}")
        rows, said = compat_report.generate(options.load_matrix(args), Path(args.reports),
                                            StateDir(Path(args.state)).cache, [Path(p) for p in args.evidence] or None)
        files = emit(said, Path(args.reports), args.format)
    except compat.EvidenceError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    print(f"compat: {len(rows)} jax releases, {sum(bool(r.newest) for r in rows)} with a verified set; "
          + options.files_line(files).removeprefix("reports: "))
    return EXIT_OK
