"""``jax-compat pins``: the newest releases known to work with one jax, as requirements"""

from __future__ import annotations

import sys
from pathlib import Path

from jaxcompat._util.exits import EXIT_CONFIG, EXIT_FAILING, EXIT_OK
from jaxcompat._util.layout import layout
from jaxcompat.commands import options
from jaxcompat.report.emit import write_file

NAME = "pins"


def add_parser(sub) -> None:
    pn = sub.add_parser(
        "pins", parents=[options.common()], help="the newest releases known to work with one jax, as requirements"
    )
    pn.add_argument("--jax", required=True, help="the jax release, e.g. 0.6.2")
    pn.add_argument("-o", "--output", metavar="FILE", help="write the requirements to FILE (default: stdout)")
    pn.add_argument("--compat", metavar="FILE", help="compat.json to read (default: the one jax-compat ships)")
    pn.set_defaults(func=run)


def run(args) -> int:
    """Print the newest releases known to work with one jax, as a requirements file."""
    from jaxcompat.operations import pins
    from jaxcompat.report import pins as pins_report

    source = Path(args.compat) if args.compat else layout().root / "reports" / "compat.json"
    try:
        found = pins.load(source, args.jax)
    except pins.PinsError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    if found.cause:
        print(f"no pins for jax {found.jax}: {found.cause}", file=sys.stderr)
        return EXIT_FAILING
    text = pins_report.render(found)
    if args.output:
        write_file(Path(args.output), text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(text, end="")
    if not found.verified:
        print(f"jax {found.jax}: no run saw a full set without a known failure; these pins are inferred "
              "from the rules only (exit 1)", file=sys.stderr)
        return EXIT_FAILING
    return EXIT_OK
