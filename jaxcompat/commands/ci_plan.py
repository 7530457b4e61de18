"""``jax-compat ci-plan``: gitHub Actions job matrix from nox -l --json"""

from __future__ import annotations

import sys
from pathlib import Path

from jaxcompat._util.exits import EXIT_OK
from jaxcompat.commands import options

NAME = "ci-plan"


def add_parser(sub) -> None:
    ci = sub.add_parser("ci-plan", parents=[options.common()], help="GitHub Actions job matrix from nox -l --json")
    ci.add_argument("--nox-json", default="-", help="output of `nox -l --json -t cell` (default: stdin)")
    ci.add_argument("--gpu-runner", default="", help="runner label for GPU cells, cuda12 and cuda13 (empty: skip them)")
    ci.set_defaults(func=run)


def run(args) -> int:
    """Print GITHUB_OUTPUT lines (cells=<job matrix>, skipped=<GPU cells without a runner>)."""
    from jaxcompat.operations.ci import github_output

    matrix = options.load_matrix(args)
    text = Path(args.nox_json).read_text() if args.nox_json != "-" else sys.stdin.read()
    print(github_output(text, matrix, args.gpu_runner or ""), end="")
    return EXIT_OK
