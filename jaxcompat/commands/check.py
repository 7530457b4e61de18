"""``jax-compat check``: upgrade check of one candidate combination"""

from __future__ import annotations

import sys
from pathlib import Path

from jaxcompat._util.atomic import write_text
from jaxcompat._util.exits import EXIT_CONFIG
from jaxcompat._util.lock import run_lock
from jaxcompat._util.uvbin import uv_bin
from jaxcompat.apihistory import apiexplain
from jaxcompat.commands import options
from jaxcompat.env.candidate import item as candidate_item
from jaxcompat.env.resolution import AUTO
from jaxcompat.model import verdicts
from jaxcompat.model.index import SourceError
from jaxcompat.model.vocab import CellStatus
from jaxcompat.plugin.packages import ECOSYSTEM
from jaxcompat.report import apiexplain as apiexplain_report
from jaxcompat.report import check as check_report
from jaxcompat.report import reports
from jaxcompat.report.candidate import candidate_verdict
from jaxcompat.report.progress import ProgressLine
from jaxcompat.run import runner
from jaxcompat.run.cell import run_cell

NAME = "check"


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
    k.set_defaults(func=run)


def run(args) -> int:
    from jaxcompat.env.candidate import CandidateError, candidate_cell, read_requirements
    from jaxcompat.knowledge.flaky import FlakyFileError
    from jaxcompat.operations import usertests
    from jaxcompat.operations.confirm import ReportError
    from jaxcompat.report.draftrules import after_run

    matrix = options.load_matrix(args)
    if args.env is not None:
        return _check_existing(args, matrix)
    target = baseline = confirm = None
    try:
        index = options.index_options(args)
        reqs = read_requirements(args.requirements + [x for f in args.requirement_files for x in ("-r", f)])
        cell = candidate_cell(reqs, python=args.python or AUTO, index=index)
        base_reqs = read_requirements(args.baseline + [x for f in args.baseline_files for x in ("-r", f)])
        _needs_tests(args, base_reqs)
        if args.tests:
            target = usertests.locate(args.tests, args.extra, args.group, args.with_)
            target, confirm = _confirmation(args, target, bool(base_reqs))
            cell = target.cell(cell)
            if base_reqs:
                baseline = target.cell(candidate_cell(base_reqs, python=args.python or AUTO, index=index))
                cell, baseline, shared = usertests.same_python(cell, baseline, target, Path(args.state) / "cache")
                if shared:
                    print(shared, flush=True)
    except (CandidateError, usertests.TestsError, SourceError, FlakyFileError, ReportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    uv_bin()  # it builds every environment: none on this machine is said now, with the fix (exit 2)
    reports_dir = Path(args.reports)
    where = "the lowest Python that every pin supports" if cell.python == AUTO else f"Python {cell.python}"
    rules = f"; rules from {matrix.path.name} and {', '.join(str(r) for r in matrix.rules)}" if matrix.rules else ""
    print(f"checking {' '.join(reqs)} on {where} ({cell.id}{rules}{index.describe()})", flush=True)  # redacted
    if target is not None and target.deps_line(cell):
        print(target.deps_line(cell), flush=True)
    if baseline is not None:  # resolved first: the candidate keeps what it does not name at the baseline's versions
        from jaxcompat.operations.usertests import hold_to_baseline

        cell = hold_to_baseline(cell, baseline, matrix, Path(args.state))
    with run_lock(reports_dir):
        result = run_cell(cell, matrix, state_dir=Path(args.state), reports_dir=None, repeat=args.repeat,
                          use_cache=not args.no_cache)
        write_text(reports_dir / "check.json", reports.cell_json(result) + "\n")
        if target is not None:
            return _check_user_tests(result, cell, baseline, target, matrix, reports_dir, args, confirm)
    text, safe = candidate_verdict(result, matrix)
    scanned = apiexplain.ecosystem_scan(Path(args.state) / "envs" / cell.id, result.versions.get("jax", ""))
    eco = apiexplain_report.ecosystem_lines(scanned, result.versions.get("jax", ""), result.results)
    text += "\n" * bool(eco) + eco
    print(text)
    if reports.reuse_line([result]):
        print(reports.reuse_line([result]))
    if drafted := after_run([result], matrix, reports_dir, f"check {' '.join(reqs)}",
                            str(reports_dir / "check.json")):
        print(drafted)
    if not safe and result.status == CellStatus.OK and not args.no_verify_escapes:
        _verify_escapes(result, matrix, reqs, args)
    print(f"\nreport: {reports_dir / 'check.json'}")
    return _decided(candidate_item(result, safe))


def _decided(*items) -> int:
    """The exit status, from the one invariant (``model/verdicts.decide``); what keeps it from 0
    when nothing is broken is said on stderr."""
    decision = verdicts.decide(items)
    for i in decision.unjudged:
        print(f"✗ could not judge {i.name}: {i.why or 'nothing ran'}", file=sys.stderr)
    return decision.code


def user_tests_item(cmp, name: str) -> verdicts.Item:
    """Your tests (``check --tests``) as the one invariant reads them: not judged when they did not
    run in the baseline (or, without one, in the candidate) or the index did not answer; broken
    when one is, or when none ran in the candidate (``usertests.Comparison.failed``)."""
    from jaxcompat.env.releases import unreachable

    lost = bool(cmp.error) and unreachable(cmp.error)
    judged = not cmp.unjudged and not lost
    why = cmp.unjudged or (f"the index did not answer: {cmp.error.strip().splitlines()[-1]}" if lost else "")
    return verdicts.Item(name, broken=judged and cmp.failed, judged=judged, ran_candidate=cmp.ran.get("candidate", 0),
                         ran_baseline=cmp.ran.get("baseline", 0) if cmp.with_baseline else None, why=why)


def _needs_tests(args, base_reqs: list[str]) -> None:
    """The options that are about the user's tests, refused without --tests (CandidateError)."""
    from jaxcompat.env.candidate import CandidateError

    if args.tests:
        return
    if base_reqs:
        raise CandidateError("--baseline compares your own tests: give --tests PATH too")
    if args.extra or args.group or args.with_ or args.test_timeout:
        raise CandidateError("--extra, --group, --with and --test-timeout are about your tests: give --tests PATH too")
    if args.aa or args.flaky_file or args.rerun_failures or args.reruns != 1:
        raise CandidateError("--reruns, --aa, --flaky-file and --rerun-failures confirm breaks of your tests: "
                             "give --tests PATH too")


def _confirmation(args, target, with_baseline: bool):
    """The target (only what broke in --rerun-failures REPORT, its --test-timeout) and how breaks are confirmed, every
    option checked before anything is downloaded (a ValueError naming the option and the fix)."""
    from dataclasses import replace

    from jaxcompat.knowledge import flaky
    from jaxcompat.operations import confirm, usertests

    if args.aa and not with_baseline:
        raise usertests.TestsError("--aa runs the baseline twice: give --baseline REQ too")
    name = target.root.name
    if args.rerun_failures:
        broke = confirm.failures_of(args.rerun_failures)
        if name not in broke:
            raise usertests.TestsError(f"--rerun-failures {args.rerun_failures}: nothing of {name} broke in it "
                                       f"(it names: {', '.join(sorted(broke))}); give the report of this project")
        target = replace(target, only=tuple(broke[name]))
    target = replace(target, timeout_s=args.test_timeout)
    known = flaky.load(args.flaky_file, Path(args.state), learning=args.aa).known(name)
    return target, usertests.Confirm(reruns=args.reruns, aa=args.aa, known=known)


def _check_user_tests(result, cell, baseline, target, matrix, reports_dir: Path, args, confirm) -> int:
    """check --tests: the user's tests after (and before), explained; exit 1 exactly when one is
    broken by the upgrade (with --baseline) or fails (without). What the candidate announces (the
    tests' new warnings) leads the verdict; it never fails the check."""
    from jaxcompat.operations import usertests

    runner.show_progress(ProgressLine(sys.stderr))  # each side's tests done, on stderr
    cmp = usertests.compare(cell, baseline, target, matrix, Path(args.state), progress=print, confirm=confirm)
    ours, _ = candidate_verdict(result, matrix)
    warned, health, learned = _announced(cmp, target, args, matrix.failures)
    jax = cmp.candidate_versions.get("jax", "")
    api = apiexplain_report.verdict_lines(cmp.tests, target.root, jax, apiexplain.project_scan(target.root, jax))
    text = check_report.tests_text(result, cmp, target.describe(), warned=warned, health=health, learned=learned,
                                   api=api, ours=ours)
    files = check_report.tests_files(result, cmp, text, project=target.root.name, warned=warned, health=health)
    for name, body in files.items():
        write_text(reports_dir / name, body)
    print(text)
    print(f"\nreports: {reports_dir / 'check.json'} (user_tests), check-tests.xml, check.md, check.html")
    return _decided(user_tests_item(cmp, f"your tests ({target.root.name})"))


def _announced(cmp, target, args, failures=()):
    """The new warnings (grouped), the suite's health, and (--aa) the line saying what was learned,
    kept in the flaky file."""
    from jaxcompat.knowledge import flaky
    from jaxcompat.operations import confirm, newwarnings

    learned = ""
    if args.aa:
        where = "--flaky-file" if args.flaky_file else f"{flaky.FILE} in the state folder"
        try:  # what cannot be kept is said, and loses none of the reports
            store = flaky.load(args.flaky_file, Path(args.state), learning=True)
            store.learn(target.root.name, cmp.learned)
            store.save()
            learned = (f"  learned (--aa): {len(cmp.learned)} test(s) flip by themselves in the baseline, kept in "
                       f"{where} for later runs" + (": " + ", ".join(cmp.learned) if cmp.learned else ""))
        except flaky.FlakyFileError as e:
            learned = f"  note: --aa: the {len(cmp.learned)} test(s) that flipped by themselves were not kept: {e}"
    warned = newwarnings.groups({target.root.name: cmp.tests}, failures,
                                {target.root.name: cmp.candidate_versions})
    return warned, confirm.health(cmp.tests), learned


def _check_existing(args, matrix) -> int:
    """``check --env PATH``: the verdict for an environment that already exists (nothing installed)."""
    from jaxcompat.report.existing import environment_lines, not_installed_lines
    from jaxcompat.run.existing import BadEnvironment, check_existing

    given = [
        x
        for x in ("requirements", "requirement_files", "tests", "baseline", "extra", "group", "with_")
        if getattr(args, x)
    ]
    if given or args.python:
        print("error: --env checks what is installed in that environment; leave out the requirements, "
              "-r, --python, --tests and --baseline (or drop --env to build a new environment for them)",
              file=sys.stderr)
        return EXIT_CONFIG
    reports_dir = Path(args.reports)
    # <env>, as in the report: no folder of the machine on the terminal either
    print("checking the existing environment <env> given by --env (nothing is installed into it)", flush=True)
    with run_lock(reports_dir):
        try:
            result = check_existing(args.env, matrix, state_dir=Path(args.state), repeat=args.repeat)
        except BadEnvironment as e:
            write_text(reports_dir / "check.json", reports.cell_json(e.result) + "\n")
            print(f"error: {e.message}", file=sys.stderr)
            return EXIT_CONFIG
        write_text(reports_dir / "check.json", reports.cell_json(result) + "\n")
    text, safe = candidate_verdict(result, matrix)
    print("\n".join(environment_lines(result) + [text] + not_installed_lines(result)))
    print(f"\nreport: {reports_dir / 'check.json'}")
    return _decided(candidate_item(result, safe))


def _verify_escapes(result, matrix, reqs: list[str], args, limit: int = 3) -> None:
    """The nearest pins that avoid the known failures the resolver led to, each verified by a run."""
    from jaxcompat.env.candidate import candidate_cell, escape_pins, parse_requirement
    from jaxcompat.report.candidate import summary, verdict

    extra = escape_pins(result, matrix, reqs, Path(args.state) / "cache")[:limit]
    if not extra:
        return
    print("\nresolver trap: these known failures come from versions you did not pin; the nearest pins "
          "that avoid them, each verified by running it:")
    safe_pins = []
    for pin in extra:
        name = pin.split("==")[0]
        trial = [
            r for r in reqs if parse_requirement(r).name.lower() not in (name, "jaxlib" if name == "jax" else name)
        ]
        trial.append(pin)
        cell = candidate_cell(trial, python=args.python or AUTO, index=options.index_options(args))
        res = run_cell(cell, matrix, state_dir=Path(args.state), reports_dir=None, use_cache=not args.no_cache)
        _, ok = verdict(res, matrix)
        said = summary(res, matrix)
        print(f"  + {pin}: {said}  [{', '.join(f'{d} {v}' for d, v in res.versions.items() if d in ECOSYSTEM)}]")
        if ok:
            safe_pins.append(pin)
    print("  verified safe: add " + " or ".join(safe_pins) if safe_pins else
          "  none of the nearest pins is safe on its own: see each one's verdict above")
