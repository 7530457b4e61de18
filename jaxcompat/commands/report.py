"""``jax-compat report``: rebuild matrix.json/md from reports/cells/; ``report site``: the ecosystem's pages"""

from __future__ import annotations

import sys
from pathlib import Path

from jaxcompat._util.exits import EXIT_CONFIG, EXIT_FAILING, EXIT_OK
from jaxcompat._util.lock import run_lock
from jaxcompat.commands import options
from jaxcompat.report import reports
from jaxcompat.run.matrix import write_consolidated

NAME = "report"


def add_parser(sub) -> None:
    r = sub.add_parser("report", parents=[options.common()],
                       help="rebuild matrix.json/md from reports/cells/; "
                            "'report site --out DIR': the ecosystem's pages")
    r.add_argument("what", nargs="?", choices=("site",),
                   help="site: build a static site (history, survey, matrix, forecast) from the stored reports")
    r.add_argument("--out", metavar="DIR", help="with site: the folder the site is written to (required)")
    r.add_argument("--history", metavar="NIGHTS",
                   help="with site: a folder of nights, one subfolder per night with its crater.json "
                        "(e.g. history/2026-11-20/crater.json); without it, no history page")
    r.add_argument("--compare", metavar="OLD.json", help="print what changed from OLD.json to this run")
    r.add_argument("--against", metavar="NEW.json", help="with --compare: the newer run (default: matrix.json)")
    r.add_argument("--update-baseline", action="store_true",
                   help="copy this run's cells into reports/baseline.json (explicit only)")
    r.add_argument("--check", action="store_true", help="exit 1 when a cell of the report is failing")
    r.set_defaults(func=run)


def run(args) -> int:
    """Rebuild matrix.json/md from the per-cell reports on disk; compare; refresh the baseline."""
    from dataclasses import replace

    from jaxcompat.report.compare import compare, render

    if args.what == "site":
        return _site(args)
    if args.out or args.history:
        print("error: --out and --history go with 'report site' (e.g. report site --out site "
              "--history reports/nightly-replay)", file=sys.stderr)
        return EXIT_CONFIG
    matrix = options.load_matrix(args)
    reports_dir = Path(args.reports)
    if args.compare:
        old_path = Path(args.compare)
        new_path = Path(args.against) if args.against else reports_dir / "matrix.json"
        try:
            old, new = reports.read_cells(old_path), reports.read_cells(new_path)
        except reports.ReportError as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_CONFIG
        if not old or not new:
            empty = old_path if not old else new_path
            print(f"error: {empty}: holds no cell, so there is nothing to compare; give a report of a run "
                  "that finished", file=sys.stderr)
            return EXIT_CONFIG
        for single, other, other_path in ((old, new, new_path), (new, old, old_path)):
            if len(single) == 1 and len(other) > 1 and single[0].id not in {c.id for c in other}:
                print(f"error: {old_path if single is old else new_path} holds one cell ({single[0].id}) and "
                      f"{other_path} has no cell of that id, so nothing would be compared; compare two "
                      "single-cell reports (check.json of the baseline and of the candidate: --compare "
                      "OLD --against NEW) or two runs of the matrix", file=sys.stderr)
                return EXIT_CONFIG
        if len(old) == 1 and len(new) == 1 and old[0].id != new[0].id:
            # two single-cell reports (check.json of two candidates): their one cell each is compared
            old = [replace(old[0], id=f"{old[0].id} -> {new[0].id}")]
            new = [replace(new[0], id=old[0].id)]
        diff = compare(old, new)
        print(render(diff, str(old_path), str(new_path)))
        return EXIT_FAILING if diff.regressed else EXIT_OK
    cells = {c.id: c for c in options.previous_cells(reports_dir)}
    ordered = [cells[c.id] for c in matrix.cells if c.id in cells]
    with run_lock(reports_dir):
        write_consolidated(matrix, ordered, reports_dir)
        if args.update_baseline:
            from jaxcompat.operations.latest import update_baseline

            update_baseline(reports_dir / "baseline.json", [c.to_dict() for c in ordered])
            print(f"baseline updated: {reports_dir / 'baseline.json'} ({len(ordered)} cells)")
    print(reports.terminal_overview(ordered, str(reports_dir / "matrix.md")))
    if reports.reuse_line(ordered):
        print("\n" + reports.reuse_line(ordered))
    if args.check and any(c.failing for c in ordered):
        return EXIT_FAILING
    return EXIT_OK


def _site(args) -> int:
    """report site: the pages from the stored reports (--reports) and the nights (--history)."""
    from jaxcompat.operations.site import SiteError, gather
    from jaxcompat.report.site import NotASite, write

    if not args.out:
        print("error: report site needs --out DIR, the folder to write the site to (e.g. --out site)",
              file=sys.stderr)
        return EXIT_CONFIG
    try:
        site = gather(Path(args.reports), Path(args.history) if args.history else None)
    except SiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    out = Path(args.out)
    try:
        written = write(site, out)
    except NotASite as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    pages = [p for p in written if p.endswith(".html") and "/" not in p]
    print(f"site: {out} ({len(pages)} pages: {', '.join(pages)}; {len(written)} files)")
    if site.history:
        from jaxcompat.report.history import headline

        print(headline(site.history)[1])
    return EXIT_OK
