"""``jax-compat scan``: your code against jax's API history (static, ruff-style)."""

from __future__ import annotations

import sys
from pathlib import Path

from jaxcompat._util.exits import EXIT_CONFIG, EXIT_FAILING, EXIT_OK
from jaxcompat.apihistory.apitimeline import Timeline
from jaxcompat.apihistory.scan import ScanError, Target, render, scan

NAME = "scan"


def run(args) -> int:
    try:
        timeline = Timeline.load(Path(args.timeline)) if args.timeline else Timeline.load()
        to = args.to or args.jax
        target = Target(timeline.release(to) if to else timeline.newest,
                        timeline.release(args.from_) if args.from_ else "")
        report = scan(args.paths, target, timeline, fix=args.fix, diff=args.diff)
    except (ScanError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    sys.stdout.write(render(report, args.format, target, timeline))
    return EXIT_FAILING if report.errors else EXIT_OK


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
    s.add_argument("--timeline", metavar="FILE", help="a jax API timeline other than the bundled one")
    s.set_defaults(func=run)
