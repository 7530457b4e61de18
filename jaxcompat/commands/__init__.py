"""The command line: one module per subcommand (``add_parser(sub)`` and ``run(args) -> exit code``),
registered here. Only this stage parses arguments and prints verdicts; the operations below it
return records. ``python -m jaxcompat …`` and the ``jax-compat`` console script both end here."""

from __future__ import annotations

import argparse
import sys

from jaxcompat._util.exits import EXIT_CONFIG
from jaxcompat._util.layout import layout
from jaxcompat.commands import (
    bisect,
    cache_key,
    cells,
    check,
    ci_plan,
    compat,
    crater,
    latest,
    learned,
    matrix,
    pins,
    report,
    scan,
    survey,
)
from jaxcompat.model.matrix import ConfigError

DESCRIPTION = ("Does this combination of jax, jaxlib, equinox, diffrax, optimistix, lineax and chex break my "
               "work: how, why, and what to pin instead? Each subcommand has --help.")
COMMANDS = (matrix, report, check, crater, latest, bisect, survey, compat, pins, ci_plan, cache_key, learned, cells,
            scan)
# requirements may follow options
POSITIONAL_TAIL = {"bisect": "pins", "check": "requirements", "crater": "requirements"}


def build_parser() -> argparse.ArgumentParser:
    where = layout()
    p = argparse.ArgumentParser(prog="jax-compat" if where.bundled else "jaxcompat", description=DESCRIPTION)
    sub = p.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # Positional requirements may follow options (bisect CASE --package P jax==0.4.33).
    positional = POSITIONAL_TAIL.get(args.command)
    unknown = [x for x in extra if x.startswith("-")]
    if unknown or (extra and positional is None):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if positional:
        setattr(args, positional, list(getattr(args, positional)) + extra)
    try:
        return args.func(args)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
