"""``jax-compat pins``: the newest releases known to work with one jax, as requirements"""

from __future__ import annotations

import sys
from pathlib import Path

from jaxcompat._util.exits import EXIT_CONFIG
from jaxcompat._util.layout import layout
from jaxcompat.commands import options

NAME = "pins"


def add_parser(sub) -> None:
    pn = sub.add_parser("pins", parents=[options.common()], help="the newest releases known to work with one jax, as requirements")
    pn.add_argument("--jax", required=True, help="the jax release, e.g. 0.6.2")
    pn.add_argument("-o", "--output", metavar="FILE", help="write the requirements to FILE (default: stdout)")
    pn.add_argument("--compat", metavar="FILE", help="compat.json to read (default: the one jax-compat ships)")
    pn.set_defaults(func=run)


def run(args) -> int:
    """Print the newest releases known to work with one jax, as a requirements file."""
    from jaxcompat.operations import pins

    source = Path(args.compat) if args.compat else layout().root / "reports" / "compat.json"
    try:
        return pins.run(source, args.jax, Path(args.output) if args.output else None,
                        warn=lambda m: print(m, file=sys.stderr))
    except pins.PinsError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
