"""``jax-compat cache-key``: digest of a cell's inputs (CI result cache key)"""

from __future__ import annotations

from pathlib import Path

from jaxcompat._util.exits import EXIT_OK
from jaxcompat.commands import options
from jaxcompat.knowledge.config import load
from jaxcompat.model.matrix import ConfigError

NAME = "cache-key"


def add_parser(sub) -> None:
    ck = sub.add_parser("cache-key", parents=[options.common()], help="digest of a cell's inputs (CI result cache key)")
    ck.add_argument("--cell", required=True, help="cell id")
    ck.set_defaults(func=run)


def run(args) -> int:
    """Print ``key=<digest>`` of a cell's inputs (for the CI result cache: $GITHUB_OUTPUT)."""
    from jaxcompat.run.cell import input_key

    matrix = load(args.matrix)
    cell = next((c for c in matrix.cells if c.id == args.cell), None)
    if cell is None:
        raise ConfigError(matrix.path, "--cell", f"no cell {args.cell!r}", "use an id from `nox -l -t cell`")
    print(f"key={input_key(cell, matrix, Path(args.state))}")
    return EXIT_OK
