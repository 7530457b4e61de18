"""``jax-compat check``: upgrade check of one candidate combination"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from jaxcompat._util.exits import EXIT_CONFIG
from jaxcompat._util.lock import run_lock
from jaxcompat.commands import options
from jaxcompat.model import verdicts
from jaxcompat.report.draftrules import after_run
from jaxcompat.report.emit import emit
from jaxcompat.report.outputs import CellReport, UserTestsReport
from jaxcompat.report.progress import ProgressLine
from jaxcompat.run import runner

NAME = "check"
_SAY = functools.partial(print, flush=True)  # progress, as it happens


def add_parser(sub) -> None:
    k = sub.add_parser(
        "check", parents=[options.common(), options.indexes(), options.confirmation()],
        help="upgrade check of one candidate combination"
    )
    k.add_argument("requirements", nargs="*", help="PEP 508 requirements")
    k.add_argument("-r", "--requirement", dest="requirement_files", action="append", default=[],
                   metavar="FILE", help="read requirements from FILE (repeatable)")
    k.add_argument(
        "--python", help="Python version for the candidate (default: the lowest of 3.10-3.13 that every pin supports)"
    )
    k.add_argument("--env", metavar="PATH",
                   help="check an environment that already exists instead: its python (…/bin/python) or its "
                        "folder; nothing is resolved or installed into it")
    k.add_argument("--repeat", type=int, default=1)
    k.add_argument("--tests", metavar="PATH",
                   help="your project (installed editable; its own pytest configuration) or a folder of tests")
    k.add_argument(
        "--extra",
        action="append",
        default=[],
        metavar="NAME",
        help="with --tests: install your project with this extra (repeatable; default: test/tests/testing, else dev)",
    )
    k.add_argument(
        "--group",
        action="append",
        default=[],
        metavar="NAME",
        help="with --tests: install this PEP 735 dependency group (repeatable; default: test/tests/testing, else dev)",
    )
    k.add_argument("--with", dest="with_", action="append", default=[], metavar="REQ",
                   help="with --tests: also install this requirement for your tests (repeatable)")
    k.add_argument("--test-timeout", type=options.positive, metavar="SECONDS",
                   help="with --tests: one test's time limit (default: matrix.toml's case_timeout_s); a test "
                        "stopped at it on both sides is not judged")
    k.add_argument("--baseline", action="append", default=[], metavar="REQ",
                   help="with --tests: the combination you run today (repeatable); each test is then "
                        "pass / broken / fixed / fails-both / flaky")
    k.add_argument("--baseline-file", dest="baseline_files", action="append", default=[], metavar="FILE",
                   help="the baseline's requirements from FILE")
    k.add_argument("--no-verify-escapes", action="store_true",
                   help="do not run the nearest pins that avoid the known failures found")
    options.report_formats(k, CellReport, UserTestsReport)
    k.set_defaults(func=run)


def run(args) -> int:
    from jaxcompat.operations import check  # here, not at the top: `--help` reads no use case

    request = _request(args)
    setup = check.prepare(request, say=_SAY)
    if setup.refused:
        print(f"error: {setup.refused}", file=sys.stderr)
        return EXIT_CONFIG
    reports_dir = Path(args.reports)
    if setup.target is not None:
        runner.show_progress(ProgressLine(sys.stderr))  # each side's tests done, on stderr
    with run_lock(reports_dir):
        verdict = check.judge(setup, say=_SAY)
        files = emit(verdict.output, reports_dir, args.format)
    if verdict.refused:
        print(f"error: {verdict.refused}", file=sys.stderr)
        return EXIT_CONFIG
    print(verdict.text)
    report = reports_dir / "check.json"  # drafts go with check.json: its --from names them
    if verdict.drafts and report in files and (drafted := after_run([verdict.result], request.matrix, reports_dir,
                                                                     verdict.drafts, str(report))):
        print(drafted)
    for line in verdict.after:
        print(line)
    print("\n" + options.files_line(files))
    decision = verdicts.decide(verdict.items)
    for i in decision.unjudged:  # what keeps the exit from 0 when nothing is broken, on stderr
        print(f"✗ could not judge {i.name}: {i.why or 'nothing ran'}", file=sys.stderr)
    return decision.code


def _request(args):
    """What was asked, as the operation reads it (the matrix and its rules read and checked here, the
    rest there, before anything is downloaded): an ``operations.check.CheckRequest``."""
    from jaxcompat.operations import check

    matrix = options.load_matrix(args)
    given = tuple(x for x in ("requirements", "requirement_files", "tests", "baseline", "extra", "group", "with_")
                  if getattr(args, x))
    return check.CheckRequest(
        matrix=matrix, state=Path(args.state), python=args.python, env=args.env, given=given,
        requirements=tuple(args.requirements + [x for f in args.requirement_files for x in ("-r", f)]),
        baseline=tuple(args.baseline + [x for f in args.baseline_files for x in ("-r", f)]),
        index=(args.index_url, args.extra_index_url, args.find_links, args.pre),
        repeat=args.repeat, use_cache=not args.no_cache, verify_escapes=not args.no_verify_escapes,
        tests=args.tests, extra=tuple(args.extra), group=tuple(args.group), with_=tuple(args.with_),
        test_timeout=args.test_timeout, reruns=args.reruns, aa=args.aa, flaky_file=args.flaky_file,
        rerun_failures=args.rerun_failures)
