"""``jax-compat learned``: requirements releases really have (observed by importing them), with their evidence"""

from __future__ import annotations

import sys
from pathlib import Path

from jaxcompat._util.exits import EXIT_CONFIG, EXIT_OK
from jaxcompat.commands import options

NAME = "learned"


def add_parser(sub) -> None:
    le = sub.add_parser("learned", parents=[options.common()],
                        help="requirements releases really have (observed by importing them), with their evidence")
    le.add_argument("--save", action="store_true",
                    help="merge what --state observed into the committed jaxcompat/data/learned.json")
    le.set_defaults(func=run)


def run(args) -> int:
    from jaxcompat.knowledge import learned
    from jaxcompat.report.learned import table

    try:
        records = learned.save(Path(args.state)) if args.save else learned.known(Path(args.state))
    except learned.LearnedError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    print(table(records))
    if args.save:
        print(f"\nsaved {len(records)} record(s) to {learned.DATA.relative_to(learned.DATA.parents[2])}")
    return EXIT_OK
