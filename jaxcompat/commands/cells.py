"""``jax-compat cells``: list the cells of the matrix as JSON"""

from __future__ import annotations

import json

from jaxcompat._util.exits import EXIT_OK
from jaxcompat.commands import options

NAME = "cells"


def add_parser(sub) -> None:
    c = sub.add_parser("cells", parents=[options.common()], help="list the cells of the matrix as JSON")
    c.set_defaults(func=run)


def run(args) -> int:
    matrix = options.load_matrix(args)
    print(json.dumps([{"id": c.id, "python": c.python, "backend": c.backend, "pins": c.pins}
                      for c in matrix.cells], indent=2))
    return EXIT_OK
