"""What every subcommand shares: the common options, the index options, the matrix as loaded
with --rules and --without-rule, the cell reports already on disk."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxcompat._util.layout import STATE_ENV, layout
from jaxcompat.knowledge.config import load
from jaxcompat.model.matrix import ConfigError
from jaxcompat.report import reports


def load_matrix(args):
    """The matrix file with every ``--rules`` file merged in (all validated before anything runs),
    less the rules ``--without-rule`` takes out (to see what the tool finds without them)."""
    from dataclasses import replace

    matrix = load(args.matrix, rules=args.rules)
    for rid in args.without_rule:
        if matrix.failure(rid) is None:
            raise ConfigError(matrix.path, "failure", f"--without-rule {rid}: no such rule",
                              f"use one of: {', '.join(f.id for f in matrix.failures)}")
    return replace(matrix, failures=tuple(f for f in matrix.failures if f.id not in args.without_rule))


def index_options(args):
    """--index-url/--extra-index-url/--find-links/--pre, validated (SourceError if not)."""
    from jaxcompat.model.index import index_options

    return index_options(args.index_url, args.extra_index_url, args.find_links, args.pre)


def previous_cells(reports_dir: Path):
    out = []
    for path in sorted((reports_dir / "cells").glob("*.json")):
        try:
            out.append(reports.load_cell(path))
        except (ValueError, TypeError, KeyError):
            continue
    return out


def _absolute(text: str) -> str:
    """A folder given relative to where the command was started: absolute, since environments are
    run from other folders (a relative --state was a missing ``bin/python`` inside a test run)."""
    return str(Path(text).expanduser().absolute())


def common() -> argparse.ArgumentParser:
    where = layout()
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--matrix",
        default=str(where.root / "matrix.toml"),
        help=f"matrix file (default: {'the bundled' if where.bundled else 'the checkout'}'s matrix.toml)",
    )
    common.add_argument("--rules", action="append", default=[], metavar="FILE",
                        help="a TOML file of [[failure]] tables to add to the matrix's (repeatable)")
    common.add_argument("--without-rule", action="append", default=[], metavar="ID",
                        help="leave this [[failure]] rule out (repeatable): what would the tool find without it?")
    common.add_argument("--reports", default=str(where.reports), help=f"reports folder (default: {where.reports})")
    common.add_argument("--state", default=str(where.state), type=_absolute,
                        help=f"environments, locks and caches (default: {where.state}; ${STATE_ENV} overrides)")
    common.add_argument("--no-cache", action="store_true",
                        help="run every case, re-using no earlier result (results are still stored)")
    return common


def indexes() -> argparse.ArgumentParser:
    indexes = argparse.ArgumentParser(add_help=False)
    ix = indexes.add_argument_group("where releases come from (nightlies, release candidates)")
    ix.add_argument("--index-url", metavar="URL", help="a package index (PEP 503) used instead of PyPI")
    ix.add_argument("--extra-index-url", action="append", default=[], metavar="URL",
                    help="a package index searched besides PyPI (repeatable), e.g. a nightly-wheel index")
    ix.add_argument("--find-links", action="append", default=[], metavar="DIR|URL",
                    help="a folder (or page) of wheels to install from (repeatable)")
    ix.add_argument("--pre", action="store_true",
                    help="any package may resolve to a pre-release (.dev, rc); a pin naming one needs no --pre")
    return indexes


def confirmation() -> argparse.ArgumentParser:
    """How a break is confirmed before blame (check --tests, crater)."""
    parent = argparse.ArgumentParser(add_help=False)
    g = parent.add_argument_group("confirmed regressions, learned flakiness")
    g.add_argument("--reruns", type=count, default=1, metavar="N",
                   help="run what broke N more times on both sides before blaming the candidate; a test whose "
                        "outcome changes is flaky (default: 1; 0: no re-run)")
    g.add_argument("--aa", action="store_true",
                   help="run the baseline twice and learn the tests that flip by themselves (kept in the flaky "
                        "file; a test known to flip is reported flaky, never broken)")
    g.add_argument("--flaky-file", metavar="PATH",
                   help="where learned flakiness is kept and read (default: flaky.json in the state folder)")
    g.add_argument("--rerun-failures", metavar="REPORT",
                   help="run only what broke in an earlier report (its crater.json or check.json)")
    return parent


# -- argument types: bad input is refused by argparse, naming the option, before anything runs --

def specifier(text: str) -> str:
    """A PEP 440 version specifier (``>=0.6``, ``>=0.6,<0.8``), kept as written."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        SpecifierSet(text)
    except InvalidSpecifier:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a version specifier; write e.g. '>=0.6' or '>=0.6,<0.8'") from None
    return text


def shard(text: str) -> str:
    """``i/n`` with 1 <= i <= n, kept as written."""
    i, sep, n = text.partition("/")
    if not (sep and i.strip().isdigit() and n.strip().isdigit() and 1 <= int(i) <= int(n)):
        raise argparse.ArgumentTypeError(f"{text!r}: write i/n with 1 <= i <= n (e.g. 2/8: the second of 8 shards)")
    return text


def count(text: str) -> int:
    """A whole number >= 0."""
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: write a whole number of at least 0")
    return int(text)


def positive(text: str) -> int:
    """A whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: write a whole number of at least 1")
    return value


def report_formats(parser, *kinds) -> None:
    """``--format FMT[,FMT…]``: which formats of its reports (``kinds``: report/outputs.py's records)
    a command writes; left out, the ones it has always written. A name that is not one of them is
    refused (exit 2) naming the option and the choices."""
    from jaxcompat.report.emit import formats_of

    choices = formats_of(kinds)
    usual = list(dict.fromkeys(f for k in kinds for f in k.DEFAULT))

    def formats(text: str) -> tuple[str, ...]:
        asked = tuple(dict.fromkeys(f.strip() for f in text.split(",")))
        bad = [f for f in asked if f not in choices]
        if bad:
            raise argparse.ArgumentTypeError(f"{', '.join(map(repr, bad))}: not a report format of this command; "
                                             f"choose from {', '.join(choices)} (comma-separated)")
        return asked

    parser.add_argument("--format", type=formats, default=None, metavar="FMT[,FMT…]",
                        help=f"the report formats to write, comma-separated: {', '.join(choices)} "
                             f"(default: {', '.join(usual)})")


def files_line(files: list[Path]) -> str:
    """The files a command wrote, for its last line: the first with its folder, the others by name."""
    if not files:
        return "reports: none written (no format asked for has this report)"
    return f"reports: {files[0]}" + "".join(f", {f.name}" for f in files[1:])
