"""Command line: ``python -m jaxcompat matrix|report|check|...`` (the nox sessions call these),
installed as the ``jax-compat`` console script."""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import os
import sys
from pathlib import Path

from . import reports
from .atomic import write_text
from .cell import run_cell
from .config import ConfigError, load
from .exits import EXIT_CONFIG, EXIT_FAILING, EXIT_INTERRUPTED, EXIT_OK
from .layout import STATE_ENV, command, layout
from .matrix import default_jobs, run_cells, write_consolidated
from .resolution import AUTO
from .sources import SourceError


def _load(args):
    """The matrix file with every ``--rules`` file merged in (all validated before anything runs),
    less the rules ``--without-rule`` takes out (to see what the tool finds without them)."""
    from dataclasses import replace

    matrix = load(args.matrix, rules=args.rules)
    for rid in args.without_rule:
        if matrix.failure(rid) is None:
            raise ConfigError(matrix.path, "failure", f"--without-rule {rid}: no such rule",
                              f"use one of: {', '.join(f.id for f in matrix.failures)}")
    return replace(matrix, failures=tuple(f for f in matrix.failures if f.id not in args.without_rule))


@contextlib.contextmanager
def run_lock(reports_dir: Path):
    """One run at a time writes a reports folder; a second waits (and says so)."""
    import fcntl

    reports_dir.mkdir(parents=True, exist_ok=True)
    with open(reports_dir / ".lock", "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            print(f"another jax-compat run is writing {reports_dir} ({f.read().strip() or 'unknown'}); "
                  "waiting for it to finish…", file=sys.stderr, flush=True)
            fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}\n")
        f.flush()
        try:
            yield
        finally:
            f.truncate(0)


def _select(matrix, patterns: list[str] | None):
    if not patterns:
        return list(matrix.cells)
    chosen = [c for c in matrix.cells if any(fnmatch.fnmatchcase(c.id, p) for p in patterns)]
    if not chosen:
        raise ConfigError(matrix.path, "--cell", f"no cell matches {', '.join(patterns)}",
                          f"use ids or globs of: {', '.join(c.id for c in matrix.cells)}")
    return chosen


def cmd_matrix(args) -> int:
    matrix = _load(args)
    cells = _select(matrix, args.cell)
    reports_dir, state_dir = Path(args.reports), Path(args.state)
    with run_lock(reports_dir):
        previous: dict = {}
        if args.only_missing or args.cell:
            # A partial run keeps the other cells' latest reports in the consolidated view.
            previous = {c.id: c for c in _previous_cells(reports_dir)}
        if args.only_missing:
            cells = [c for c in cells if c.id not in previous or previous[c.id].status == "not-run"]
            print(f"re-running {len(cells)} cell(s) that did not finish: {', '.join(c.id for c in cells) or 'none'}")
        results, interrupted = run_cells(matrix, cells, jobs=args.jobs, state_dir=state_dir,
                                         reports_dir=reports_dir, case_args=args.case or None,
                                         repeat=args.repeat, use_cache=not args.no_cache)
        by_id = {**previous, **{r.id: r for r in results}}
        ordered = [by_id[c.id] for c in matrix.cells if c.id in by_id]
        summary = write_consolidated(matrix, ordered, reports_dir,
                                     extra_meta={"interrupted": interrupted,
                                                 "unfinished": [r.id for r in ordered if r.status == "not-run"]})
    print()
    print(reports.terminal_overview(ordered, str(reports_dir / "matrix.md")))
    if reports.reuse_line(results):
        print("\n" + reports.reuse_line(results))
    print(f"\nreports: {reports_dir / 'matrix.md'}, {reports_dir / 'matrix.json'}, {reports_dir / 'cells'}/")
    if interrupted:
        print(f"run interrupted; re-run the unfinished cells with: {command('matrix')} --only-missing")
        return EXIT_INTERRUPTED
    return EXIT_OK if summary["ok"] else EXIT_FAILING


def _previous_cells(reports_dir: Path):
    out = []
    for path in sorted((reports_dir / "cells").glob("*.json")):
        try:
            out.append(reports.load_cell(path))
        except (ValueError, TypeError, KeyError):
            continue
    return out


def cmd_report(args) -> int:
    """Rebuild matrix.json/md from the per-cell reports on disk; compare; refresh the baseline."""
    from .compare import compare, render
    from .outcomes import parse_cells

    matrix = _load(args)
    reports_dir = Path(args.reports)
    if args.compare:
        old_path = Path(args.compare)
        new_path = Path(args.against) if args.against else reports_dir / "matrix.json"
        try:
            old = parse_cells(json.loads(old_path.read_text(encoding="utf-8")))
            new = parse_cells(json.loads(new_path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as e:
            print(f"error: cannot read a report to compare: {e}", file=sys.stderr)
            return EXIT_CONFIG
        diff = compare(old, new)
        print(render(diff, str(old_path), str(new_path)))
        return EXIT_FAILING if diff.regressed else EXIT_OK
    cells = {c.id: c for c in _previous_cells(reports_dir)}
    ordered = [cells[c.id] for c in matrix.cells if c.id in cells]
    with run_lock(reports_dir):
        write_consolidated(matrix, ordered, reports_dir)
        if args.update_baseline:
            from .latest import update_baseline

            update_baseline(reports_dir / "baseline.json", [c.to_dict() for c in ordered])
            print(f"baseline updated: {reports_dir / 'baseline.json'} ({len(ordered)} cells)")
    print(reports.terminal_overview(ordered, str(reports_dir / "matrix.md")))
    if reports.reuse_line(ordered):
        print("\n" + reports.reuse_line(ordered))
    if args.check and any(c.failing for c in ordered):
        return EXIT_FAILING
    return EXIT_OK


def cmd_check(args) -> int:
    from . import drafts, usertests
    from .candidate import CandidateError, candidate_cell, read_requirements, verdict

    matrix = _load(args)
    if args.env is not None:
        return _check_existing(args, matrix)
    target = baseline = None
    try:
        index = _index_options(args)
        reqs = read_requirements(args.requirements + [x for f in args.requirement_files for x in ("-r", f)])
        cell = candidate_cell(reqs, python=args.python or AUTO, index=index)
        base_reqs = read_requirements(args.baseline + [x for f in args.baseline_files for x in ("-r", f)])
        if base_reqs and not args.tests:
            raise CandidateError("--baseline compares your own tests: give --tests PATH too")
        if (args.extra or args.group or args.with_) and not args.tests:
            raise CandidateError("--extra, --group and --with choose your tests' dependencies: give --tests PATH too")
        if args.tests:
            target = usertests.locate(args.tests, args.extra, args.group, args.with_)
            cell = target.cell(cell)
            if base_reqs:
                baseline = target.cell(candidate_cell(base_reqs, python=args.python or AUTO, index=index))
                cell, baseline, shared = usertests.same_python(cell, baseline, target, Path(args.state) / "cache")
                if shared:
                    print(shared, flush=True)
    except (CandidateError, usertests.TestsError, SourceError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    reports_dir = Path(args.reports)
    where = "the lowest Python that every pin supports" if cell.python == AUTO else f"Python {cell.python}"
    rules = f"; rules from {matrix.path.name} and {', '.join(str(r) for r in matrix.rules)}" if matrix.rules else ""
    origin = f"; from {', '.join(index.index_url and [index.index_url] or ['PyPI'])}" + "".join(
        f", {u}" for u in (*index.extra_index_urls, *index.find_links)) + ("; --pre" if index.pre else "") \
        if index else ""
    print(f"checking {' '.join(reqs)} on {where} ({cell.id}{rules}{origin})", flush=True)
    if target is not None and target.deps_line(cell):
        print(target.deps_line(cell), flush=True)
    with run_lock(reports_dir):
        result = run_cell(cell, matrix, state_dir=Path(args.state), reports_dir=None, repeat=args.repeat,
                          use_cache=not args.no_cache)
        write_text(reports_dir / "check.json", reports.cell_json(result) + "\n")
        if target is not None:
            return _check_user_tests(result, cell, baseline, target, matrix, reports_dir, args)
    text, safe = verdict(result, matrix)
    from .apiexplain import ecosystem_lines
    text += "\n" * bool(eco := ecosystem_lines(Path(args.state) / "envs" / cell.id, result.versions.get("jax", ""),
                                                   result.results)) + eco
    print(text)
    if reports.reuse_line([result]):
        print(reports.reuse_line([result]))
    if drafted := drafts.after_run([result], matrix, reports_dir, f"check {' '.join(reqs)}",
                                   str(reports_dir / "check.json")):
        print(drafted)
    if not safe and result.status == "ok" and not args.no_verify_escapes:
        _verify_escapes(result, matrix, reqs, args)
    print(f"\nreport: {reports_dir / 'check.json'}")
    return EXIT_OK if safe else EXIT_FAILING


def _index_options(args):
    """--index-url/--extra-index-url/--find-links/--pre, validated (sources.SourceError if not)."""
    from .sources import index_options

    return index_options(args.index_url, args.extra_index_url, args.find_links, args.pre)


def _check_user_tests(result, cell, baseline, target, matrix, reports_dir: Path, args) -> int:
    """check --tests: the user's tests after (and before), explained; exit 1 exactly when one is
    broken by the upgrade (with --baseline) or fails (without)."""
    from . import usertests
    from .candidate import verdict

    cmp = usertests.compare(cell, baseline, target, matrix, Path(args.state))
    ours, _ = verdict(result, matrix)
    mine = usertests.verdict(cmp, target)
    extra = usertests.not_exercised(result, cmp.tests)
    from .apiexplain import verdict_lines
    mine += "\n" * bool(api := verdict_lines(cmp.tests, target.root, cmp.candidate_versions.get("jax", ""))) + api
    if extra:
        mine += ("\n  i known failures this candidate hits that your tests did not run into (see below): "
                 + ", ".join(extra))
    data = {**result.to_dict(), "user_tests": cmp.to_dict(), "user_tests_target": target.root.name,
            "user_tests_run": {**cmp.summary(), "cells": {"candidate": cell.id, **({"baseline": baseline.id} if baseline else {})},
                               "test_dependencies": list(target.deps.sources),
                               "test_dependencies_left_out": list(target.deps.for_candidate(target.pinned(cell))[1])},
            "user_tests_versions": {"candidate": cmp.candidate_versions, "baseline": cmp.baseline_versions}}
    write_text(reports_dir / "check.json", json.dumps(data, indent=2) + "\n")
    write_text(reports_dir / "check-tests.xml", usertests.junit(cmp.tests, f"{target.root.name} on {result.id}"))
    text = f"{mine}\n\nOur cases in the candidate:\n{ours}"
    write_text(reports_dir / "check.md", usertests.markdown(cmp.tests, text, cmp.with_baseline))
    from .html import esc
    write_text(reports_dir / "check.html", usertests.HTML_PAGE.format(
        title=esc(result.id), verdict=esc(text), section=usertests.html_section(cmp.tests, cmp.with_baseline)))
    print(text)
    print(f"\nreports: {reports_dir / 'check.json'} (user_tests), check-tests.xml, check.md, check.html")
    if cmp.unjudged:
        return EXIT_CONFIG
    return EXIT_FAILING if cmp.failed else EXIT_OK


def _check_existing(args, matrix) -> int:
    """``check --env PATH``: the verdict for an environment that already exists (nothing installed)."""
    from .candidate import verdict
    from .existing import BadEnvironment, check_existing, environment_lines

    given = [x for x in ("requirements", "requirement_files", "tests", "baseline", "extra", "group", "with_") if getattr(args, x)]
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
    text, safe = verdict(result, matrix)
    print("\n".join(environment_lines(result) + [text]))
    print(f"\nreport: {reports_dir / 'check.json'}")
    return EXIT_OK if safe else EXIT_FAILING


def _verify_escapes(result, matrix, reqs: list[str], args, limit: int = 3) -> None:
    """The nearest pins that avoid the known failures the resolver led to, each verified by a run."""
    from .candidate import candidate_cell, escape_pins, parse_requirement, verdict

    extra = escape_pins(result, matrix, reqs, Path(args.state) / "cache")[:limit]
    if not extra:
        return
    print("\nresolver trap: these known failures come from versions you did not pin; the nearest pins "
          "that avoid them, each verified by running it:")
    safe_pins = []
    for pin in extra:
        name = pin.split("==")[0]
        trial = [r for r in reqs if parse_requirement(r).name.lower() not in (name, "jaxlib" if name == "jax" else name)]
        trial.append(pin)
        cell = candidate_cell(trial, python=args.python or AUTO, index=_index_options(args))
        res = run_cell(cell, matrix, state_dir=Path(args.state), reports_dir=None, use_cache=not args.no_cache)
        text, ok = verdict(res, matrix)
        summary = "safe" if ok else text.splitlines()[1].strip() if len(text.splitlines()) > 1 else "not safe"
        print(f"  + {pin}: {summary}  [{', '.join(f'{d} {v}' for d, v in res.versions.items() if d in ('jax', 'jaxlib', 'equinox', 'diffrax', 'optimistix', 'lineax'))}]")
        if ok:
            safe_pins.append(pin)
    print("  verified safe: add " + " or ".join(safe_pins) if safe_pins else
          "  none of the nearest pins is safe on its own: see each one's verdict above")


def cmd_latest(args) -> int:
    from .latest import load_baseline, report_latest, run_latest, update_baseline

    matrix = _load(args)
    reports_dir = Path(args.reports)
    baseline_path = Path(args.baseline) if args.baseline else reports_dir / "baseline.json"
    try:
        index = _index_options(args)
    except SourceError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    with run_lock(reports_dir):
        result = run_latest(matrix, state_dir=Path(args.state), reports_dir=reports_dir, use_cache=not args.no_cache,
                            index=index)
        text, regressed = report_latest(result, load_baseline(baseline_path), reports_dir)
        if args.update_baseline:
            update_baseline(baseline_path, [result.to_dict()])
    print(reports.terminal_grid([result]))
    print()
    print(text)
    print(f"\nreports: {reports_dir / 'latest.md'}, {reports_dir / 'latest.json'}"
          + (f", {reports_dir / 'latest-issue.md'} (issue body)" if regressed else ""))
    if args.update_baseline:
        print(f"baseline updated: {baseline_path}")
    return EXIT_FAILING if regressed else EXIT_OK


def cmd_bisect(args) -> int:
    from . import bisect_command

    return bisect_command.run(args, _load(args))


def cmd_survey(args) -> int:
    """Sample the release space off the matrix, run what is not yet observed, score, render."""
    from . import compat, edges, survey

    matrix = _load(args)
    reports_dir, state_dir = Path(args.reports), Path(args.state)
    out_dir = reports_dir / "survey"
    cache = state_dir / "cache"
    sp = survey.space(cache)
    if args.edges:
        from .edges import command as edges_command

        return edges_command(args, matrix, sp, run_lock)
    combos = survey.sample(matrix, sp, limit=args.limit, seed=args.seed)
    if args.case:  # new cases over what was already observed, whatever sample it came from
        combos = [o.combo for o in survey.load_observations(matrix, out_dir) if o.cell.status == "ok"]
    if args.jax:
        from packaging.specifiers import SpecifierSet
        from packaging.version import Version

        combos = [c for c in combos if SpecifierSet(args.jax).contains(Version(c.jax), prereleases=True)]
    try:
        mine = survey.shard(combos, args.shard)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    print(f"space: {len(sp.jax)} jax x {len(sp.equinox)} equinox releases, {len(sp.pairs)} pairs that "
          f"equinox's metadata accepts; sample: {len(combos)}" + (f", shard {args.shard}: {len(mine)}" if args.shard else ""))
    interrupted = False
    with run_lock(out_dir):
        if not args.report_only:
            _, interrupted = survey.run(matrix, mine, jobs=args.jobs, state_dir=state_dir, out_dir=out_dir,
                                        fresh=args.fresh, cases=args.case,
                                        use_cache=not (args.no_cache or args.fresh))
        # Every stored observation counts (an earlier sample's too), except combinations that
        # have since become cells of matrix.toml: the score is about truth off the matrix.
        taken = survey.matrix_pairs(matrix)
        obs = [o for o in survey.load_observations(matrix, out_dir)
               if (o.combo.jax, o.combo.equinox) not in taken]
        if not obs and args.report_only:
            return survey.refuse_empty_report(out_dir, "survey")
        summary = survey.score(obs)
        rows = survey.compat_rows(matrix, sp, obs, cache)
        survey.write(out_dir, reports_dir, summary, obs, rows, sp, matrix,
                     {"seed": args.seed, "limit": args.limit, "sampled": len(combos),
                      "coverage_md": edges.stored_coverage(reports_dir)})
        compat.generate(matrix, reports_dir, cache)
    print(f"\nsurvey: {summary['combinations']} combinations observed; case verdicts right "
          f"{summary['right']}/{summary['verdicts']} ({100 * summary['right_share']:.2f}%); combinations "
          f"with no wrong verdict {summary['clean_combinations']}/{summary['combinations']} "
          f"({100 * summary['clean_share']:.1f}%)")
    for w in summary["wrong"][:15]:
        print(f"  wrong: {w['case']} {w['outcome']} {w['error_type']} x{len(w['combinations'])}")
    print(f"reports: {reports_dir / 'survey.md'}, survey.json, survey.html, compat.md")
    return EXIT_INTERRUPTED if interrupted else EXIT_OK


def cmd_compat(args) -> int:
    """Rebuild reports/compat.md and compat.json from the stored evidence and the rules."""
    from . import compat

    try:
        for report in args.add:
            print(f"recorded {', '.join(compat.record(Path(report), Path(args.reports)))} in "
                  f"{Path(args.reports) / compat.CHECKS}")
        rows = compat.generate(_load(args), Path(args.reports), Path(args.state) / "cache",
                               [Path(p) for p in args.evidence] or None)
    except compat.EvidenceError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    print(f"compat: {len(rows)} jax releases, {sum(bool(r.newest) for r in rows)} with a verified set; "
          f"{Path(args.reports) / 'compat.md'}, compat.json")
    return EXIT_OK


def cmd_pins(args) -> int:
    """Print the newest releases known to work with one jax, as a requirements file."""
    from . import pins

    source = Path(args.compat) if args.compat else layout().root / "reports" / "compat.json"
    try:
        return pins.run(source, args.jax, Path(args.output) if args.output else None,
                        warn=lambda m: print(m, file=sys.stderr))
    except pins.PinsError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG


def cmd_cache_key(args) -> int:
    """Print ``key=<digest>`` of a cell's inputs (for the CI result cache: $GITHUB_OUTPUT)."""
    from .cell import input_key

    matrix = load(args.matrix)
    cell = next((c for c in matrix.cells if c.id == args.cell), None)
    if cell is None:
        raise ConfigError(matrix.path, "--cell", f"no cell {args.cell!r}", "use an id from `nox -l -t cell`")
    print(f"key={input_key(cell, matrix, Path(args.state))}")
    return EXIT_OK


def cmd_ci_plan(args) -> int:
    """Print GITHUB_OUTPUT lines (cells=<job matrix>, skipped=<GPU cells without a runner>)."""
    from .ci import github_output

    matrix = _load(args)
    text = Path(args.nox_json).read_text() if args.nox_json != "-" else sys.stdin.read()
    print(github_output(text, matrix, args.gpu_runner or ""), end="")
    return EXIT_OK


def cmd_learned(args) -> int:
    from . import learned

    try:
        records = learned.save(Path(args.state)) if args.save else learned.known(Path(args.state))
    except learned.LearnedError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    print(learned.table(records))
    if args.save:
        print(f"\nsaved {len(records)} record(s) to {learned.DATA.relative_to(learned.DATA.parents[2])}")
    return EXIT_OK


def cmd_cells(args) -> int:
    matrix = _load(args)
    print(json.dumps([{"id": c.id, "python": c.python, "backend": c.backend, "pins": c.pins}
                      for c in matrix.cells], indent=2))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    where = layout()
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--matrix", default=str(where.root / "matrix.toml"),
                        help=f"matrix file (default: {'the bundled' if where.bundled else 'the checkout'}'s matrix.toml)")
    common.add_argument("--rules", action="append", default=[], metavar="FILE",
                        help="a TOML file of [[failure]] tables to add to the matrix's (repeatable)")
    common.add_argument("--without-rule", action="append", default=[], metavar="ID",
                        help="leave this [[failure]] rule out (repeatable): what would the tool find without it?")
    common.add_argument("--reports", default=str(where.reports), help=f"reports folder (default: {where.reports})")
    common.add_argument("--state", default=str(where.state),
                        help=f"environments, locks and caches (default: {where.state}; ${STATE_ENV} overrides)")
    common.add_argument("--no-cache", action="store_true",
                        help="run every case, re-using no earlier result (results are still stored)")
    indexes = argparse.ArgumentParser(add_help=False)
    ix = indexes.add_argument_group("where releases come from (nightlies, release candidates)")
    ix.add_argument("--index-url", metavar="URL", help="a package index (PEP 503) used instead of PyPI")
    ix.add_argument("--extra-index-url", action="append", default=[], metavar="URL",
                    help="a package index searched besides PyPI (repeatable), e.g. a nightly-wheel index")
    ix.add_argument("--find-links", action="append", default=[], metavar="DIR|URL",
                    help="a folder (or page) of wheels to install from (repeatable)")
    ix.add_argument("--pre", action="store_true",
                    help="any package may resolve to a pre-release (.dev, rc); a pin naming one needs no --pre")
    p = argparse.ArgumentParser(prog="jax-compat" if where.bundled else "jaxcompat", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("matrix", parents=[common],
                       help="run every cell (or --cell ID/GLOB ...) and write the reports")
    m.add_argument("--cell", action="append", help="cell id or glob (repeatable)")
    m.add_argument("--case", action="append", help="case path or node id (repeatable; default: all)")
    m.add_argument("-j", "--jobs", type=int, default=default_jobs(), help="cells in parallel")
    m.add_argument("--only-missing", action="store_true", help="run only cells without a finished report")
    m.add_argument("--repeat", type=int, default=1, help="run each case N times; differing outcomes are 'flaky'")
    m.set_defaults(func=cmd_matrix)
    r = sub.add_parser("report", parents=[common], help="rebuild matrix.json/md from reports/cells/")
    r.add_argument("--compare", metavar="OLD.json", help="print what changed from OLD.json to this run")
    r.add_argument("--against", metavar="NEW.json", help="with --compare: the newer run (default: matrix.json)")
    r.add_argument("--update-baseline", action="store_true",
                   help="copy this run's cells into reports/baseline.json (explicit only)")
    r.add_argument("--check", action="store_true", help="exit 1 when a cell of the report is failing")
    r.set_defaults(func=cmd_report)
    k = sub.add_parser("check", parents=[common, indexes], help="upgrade check of one candidate combination")
    k.add_argument("requirements", nargs="*", help="PEP 508 requirements")
    k.add_argument("-r", "--requirement", dest="requirement_files", action="append", default=[],
                   metavar="FILE", help="read requirements from FILE (repeatable)")
    k.add_argument("--python", help="Python version for the candidate (default: the lowest of 3.10-3.13 that every pin supports)")
    k.add_argument("--env", metavar="PATH",
                   help="check an environment that already exists instead: its python (…/bin/python) or its "
                        "folder; nothing is resolved or installed into it")
    k.add_argument("--repeat", type=int, default=1)
    k.add_argument("--tests", metavar="PATH",
                   help="your project (installed editable; its own pytest configuration) or a folder of tests")
    k.add_argument("--extra", action="append", default=[], metavar="NAME",
                   help="with --tests: install your project with this extra (repeatable; default: test/tests/testing, else dev)")
    k.add_argument("--group", action="append", default=[], metavar="NAME",
                   help="with --tests: install this PEP 735 dependency group (repeatable; default: test/tests/testing, else dev)")
    k.add_argument("--with", dest="with_", action="append", default=[], metavar="REQ",
                   help="with --tests: also install this requirement for your tests (repeatable)")
    k.add_argument("--baseline", action="append", default=[], metavar="REQ",
                   help="with --tests: the combination you run today (repeatable); each test is then "
                        "pass / broken / fixed / fails-both / flaky")
    k.add_argument("--baseline-file", dest="baseline_files", action="append", default=[], metavar="FILE",
                   help="the baseline's requirements from FILE")
    k.add_argument("--no-verify-escapes", action="store_true",
                   help="do not run the nearest pins that avoid the known failures found")
    k.set_defaults(func=cmd_check)
    lt = sub.add_parser("latest", parents=[common, indexes], help="the newest releases, compared with the baseline")
    lt.add_argument("--baseline", help="baseline file (default: reports/baseline.json)")
    lt.add_argument("--update-baseline", action="store_true", help="store tonight's result as the baseline")
    lt.set_defaults(func=cmd_latest)
    b = sub.add_parser("bisect", parents=[common],
                       help="where a failure starts and stops: along one package, or its region; unknown ones too")
    b.add_argument("target", nargs="?", help="a failure id or a case (path or node id)")
    b.add_argument("--package", help="bisect along this distribution only (default: the region along jax, "
                                     "equinox and the package that raised)")
    b.add_argument("--axis", action="append", default=[], help="with no --package: the packages to bound (repeatable)")
    b.add_argument("--from", dest="from_report", metavar="REPORT",
                   help="a check.json or cell report: bound every failure no rule explains there and draft its rule")
    b.add_argument("--signature", metavar="KEY",
                   help="an error signature instead of a rule: 'Type: message [@ path.py:function]'")
    b.add_argument("--good", help="oldest release to consider (its outcome is 'good')")
    b.add_argument("--bad", help="newest release to consider")
    b.add_argument("--python", help="Python version (default: per step, the lowest that every pin supports)")
    b.add_argument("pins", nargs="*", help="other pins, e.g. jax==0.4.33")
    b.set_defaults(func=cmd_bisect)
    sv = sub.add_parser("survey", parents=[common], help="sample the release space off the matrix and score the verdicts")
    sv.add_argument("--limit", type=int, default=120, help="combinations to sample (default 120)")
    sv.add_argument("--seed", type=int, default=0, help="seed of the random fill (default 0)")
    sv.add_argument("--shard", help="i/n: run every n-th combination from the i-th (CI jobs)")
    sv.add_argument("-j", "--jobs", type=int, default=default_jobs(), help="combinations in parallel")
    sv.add_argument("--fresh", action="store_true", help="run again what was already observed (and re-use no cached result)")
    sv.add_argument("--case", action="append",
                    help="run only these cases (repeatable) and lay their results over the stored observations")
    sv.add_argument("--jax", metavar="SPEC", help="only the sampled combinations whose jax matches SPEC (e.g. '>=0.6')")
    sv.add_argument("--report-only", action="store_true", help="score the stored observations (merge shards)")
    sv.add_argument("--edges", action="store_true",
                    help="search every equinox release's jax column for where outcomes change (no random sample)")
    sv.add_argument("--equinox", metavar="SPEC", help="with --edges: only these equinox columns (e.g. '>=0.11,<0.12')")
    sv.add_argument("--stride", type=int, default=6, help="with --edges: seed every N-th jax of a column (default 6)")
    sv.add_argument("--budget", type=int, default=10**6, help="with --edges: at most N new environments this run")
    sv.set_defaults(func=cmd_survey)
    cp = sub.add_parser("compat", parents=[common], help="rebuild compat.md/json: which releases work with which jax")
    cp.add_argument("--evidence", action="append", default=[], metavar="FILE",
                    help="survey.json or a report of cells (repeatable; default: reports/survey.json, baseline.json, checks.json)")
    cp.add_argument("--add", action="append", default=[], metavar="CHECK.json",
                    help="record a check report in reports/checks.json as evidence first (repeatable)")
    cp.set_defaults(func=cmd_compat)
    pn = sub.add_parser("pins", parents=[common], help="the newest releases known to work with one jax, as requirements")
    pn.add_argument("--jax", required=True, help="the jax release, e.g. 0.6.2")
    pn.add_argument("-o", "--output", metavar="FILE", help="write the requirements to FILE (default: stdout)")
    pn.add_argument("--compat", metavar="FILE", help="compat.json to read (default: the one jax-compat ships)")
    pn.set_defaults(func=cmd_pins)
    ci = sub.add_parser("ci-plan", parents=[common], help="GitHub Actions job matrix from nox -l --json")
    ci.add_argument("--nox-json", default="-", help="output of `nox -l --json -t cell` (default: stdin)")
    ci.add_argument("--gpu-runner", default="", help="runner label for GPU cells, cuda12 and cuda13 (empty: skip them)")
    ci.set_defaults(func=cmd_ci_plan)
    ck = sub.add_parser("cache-key", parents=[common], help="digest of a cell's inputs (CI result cache key)")
    ck.add_argument("--cell", required=True, help="cell id")
    ck.set_defaults(func=cmd_cache_key)
    le = sub.add_parser("learned", parents=[common],
                        help="requirements releases really have (observed by importing them), with their evidence")
    le.add_argument("--save", action="store_true",
                    help="merge what --state observed into the committed jaxcompat/data/learned.json")
    le.set_defaults(func=cmd_learned)
    c = sub.add_parser("cells", parents=[common], help="list the cells of the matrix as JSON")
    c.set_defaults(func=cmd_cells)
    from .scan import add_parser as add_scan
    add_scan(sub, [])
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # Positional requirements may follow options (bisect CASE --package P jax==0.4.33).
    positional = {"bisect": "pins", "check": "requirements"}.get(args.command)
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
