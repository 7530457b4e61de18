"""``jax-compat scan``: your code against jax's (and equinox's) API history (static, ruff-style)."""

from __future__ import annotations

import sys
from pathlib import Path

from jaxcompat._util.exits import EXIT_CONFIG, EXIT_FAILING, EXIT_OK
from jaxcompat.apihistory.apitimeline import PACKAGES, Timeline
from jaxcompat.apihistory.scan import ScanError, scan
from jaxcompat.model.scan import Target
from jaxcompat.report.scan import render_scans

NAME = "scan"


def run(args) -> int:
    try:
        scans = []
        jax_wanted = args.jax or args.to or args.from_ or args.timeline or not args.equinox
        if jax_wanted:
            timeline = Timeline.load(Path(args.timeline)) if args.timeline else Timeline.load()
            to = args.to or args.jax
            scans.append((timeline, Target(timeline.release(to) if to else timeline.newest,
                                           timeline.release(args.from_) if args.from_ else "")))
        if args.equinox or args.equinox_from:
            timeline = Timeline.load(PACKAGES["equinox"][1])
            scans.append((timeline, Target(timeline.release(args.equinox) if args.equinox else timeline.newest,
                                           timeline.release(args.equinox_from) if args.equinox_from else "")))
        reports = [(scan(args.paths, target, tl, fix=args.fix, diff=args.diff), target, tl) for tl, target in scans]
    except (ScanError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    sys.stdout.write(render_scans(reports, args.format))
    if any(r.parse_errors for r, _, _ in reports):  # a file not read is not judged: never an answer of 0 or 1
        if args.format != "text":
            print("error: " + "; ".join(e for r, _, _ in reports for e in r.parse_errors[:3]), file=sys.stderr)
        return EXIT_CONFIG
    return EXIT_FAILING if any(r.errors for r, _, _ in reports) else EXIT_OK


def add_parser(sub) -> None:
    s = sub.add_parser("scan", parents=[], help="your code against jax's API history (static, ruff-style)")
    s.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to scan")
    s.add_argument(
        "--jax", help="the jax release to check against (0.10.0, jax==0.10.0, '>=0.9', latest; default: newest)"
    )
    s.add_argument("--to", help="with --from: the release you upgrade to (same as --jax)")
    s.add_argument("--from", dest="from_", help="the jax release you run today (notes what is already so there)")
    s.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    s.add_argument("--fix", action="store_true", help="rewrite plain renames in place")
    s.add_argument("--diff", action="store_true", help="print the rewrites --fix would make, write nothing")
    s.add_argument("--equinox", help="also (or only) against equinox's API history: the equinox release "
                   "(0.13.0, latest; given alone, jax is scanned only when --jax is given too)")
    s.add_argument("--equinox-from", help="the equinox release you run today")
    s.add_argument("--timeline", metavar="FILE", help="a jax API timeline other than the bundled one")
    s.set_defaults(func=run)
