"""The command line: one module per subcommand (``add_parser(sub)`` and ``run(args) -> exit code``),
registered here. Only this stage parses arguments and prints verdicts; the operations below it
return records. ``python -m jaxcompat …`` and the ``jax-compat`` console script both end here."""

from __future__ import annotations

import argparse
import os
import sys
import traceback

from jaxcompat._util.exits import EXIT_CONFIG, EXIT_INTERRUPTED
from jaxcompat._util.layout import layout
from jaxcompat._util.redact import redact_text
from jaxcompat._util.text import first_line
from jaxcompat._util.uvbin import ToolMissing
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
    return guarded(args.func, args)


def guarded(func, args) -> int:
    """The one place an exception becomes an exit status: bad input, or a tool this machine lacks
    (uv, git: the user's setup), is 2 with its message and the fix; Ctrl-C is 130; anything else is
    a bug of jax-compat — 2 ("could not judge") with one line naming the cause, never a traceback as
    the answer and never 1 ("not safe"). JAXCOMPAT_DEBUG=1 shows the traceback too."""
    try:
        return func(args)
    except (ConfigError, ToolMissing) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        print("interrupted: reports already written are kept", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # noqa: BLE001 - the one boundary
        where = _innermost(e)
        print(redact_text(f"error: a bug of jax-compat, not a verdict on your packages: {type(e).__name__}: "
                          f"{first_line(str(e), 300)}{where} (please report it; JAXCOMPAT_DEBUG=1 shows the "
                          "traceback)"), file=sys.stderr)
        if os.environ.get("JAXCOMPAT_DEBUG"):
            traceback.print_exc()
        return EXIT_CONFIG


def _innermost(e: BaseException) -> str:
    tb = e.__traceback__
    frame = None
    while tb is not None:
        frame, tb = tb.tb_frame, tb.tb_next
    if frame is None:
        return ""
    name = frame.f_code.co_filename
    mod = name.split("jaxcompat/", 1)[-1] if "jaxcompat/" in name else name.rsplit("/", 1)[-1]
    return f" at {mod}:{frame.f_lineno}"
