"""Render results: per-cell JSON and JUnit XML, consolidated matrix.json and matrix.md, and the
terminal grid (matrixreport.py writes them through ``report.emit``)."""

from __future__ import annotations

import datetime as dt
import json
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from jaxcompat._util.jsonfile import read_json
from jaxcompat._util.text import first_line, short_case
from jaxcompat.knowledge.outcomes import cell_label
from jaxcompat.model.outcomes import FAILING_CELL_OUTCOMES, FAILING_OUTCOMES, CellResult
from jaxcompat.model.vocab import CellOutcome, CellStatus, EnvironmentKind, Kind, Outcome
from jaxcompat.plugin.packages import DEPENDENTS
from jaxcompat.report import junit

SCHEMA_VERSION = 1
SYMBOLS = {o: o.label for o in Outcome}
CELL_SYMBOLS = {s: s.symbol for s in CellStatus if s is not CellStatus.OK}


def cell_json(cell: CellResult) -> str:
    return json.dumps(cell.to_dict(), indent=2, sort_keys=False)


def load_cell(path: Path) -> CellResult:
    """A ``cells/<id>.json`` (ReportError when it is not one cell)."""
    cells = read_cells(path)
    if len(cells) != 1:
        raise ReportError(f"{path}: holds {len(cells)} cells where one was expected; give a cells/<id>.json")
    return cells[0]


class ReportError(ValueError):
    """A report that cannot be read as cells: the message names the file, the problem and the fix."""


def read_cells(path: Path, missing_ok: bool = False) -> list[CellResult]:
    """The one reader of cell reports: a run of many cells (``matrix.json``, ``latest.json``,
    ``baseline.json``: ``{"cells": [...]}``) or a single cell (``check.json``, ``cells/<id>.json``).
    ``missing_ok``: a file that does not exist is no cells (a baseline not yet made)."""
    if missing_ok and not path.exists():
        return []
    data = read_json(path, ReportError,
                     unreadable="give the path of a matrix.json, latest.json, baseline.json or check.json",
                     damaged="regenerate it (`report` rebuilds matrix.json from reports/cells/) or restore it from git")
    if isinstance(data, dict) and isinstance(data.get("cells"), list):
        bad = [i for i, c in enumerate(data["cells"]) if not (isinstance(c, dict) and "id" in c)]
        if bad:
            raise ReportError(f"{path}: cells[{bad[0]}] is not a cell (no \"id\"); regenerate the report")
        return [CellResult.from_dict(c) for c in data["cells"]]
    if isinstance(data, dict) and "id" in data and ("results" in data or "status" in data):
        return [CellResult.from_dict(data)]
    raise ReportError(f"{path}: neither a report of cells (\"cells\": [...]) nor a single cell (\"id\", "
                      "\"results\"); give a matrix.json, latest.json, baseline.json, check.json or cells/<id>.json")


def junit_xml(cell: CellResult) -> str:
    cases = []
    if cell.status != CellStatus.OK:
        case = junit.Case(cell.id, "cell", time=str(cell.timings.get("total_s", 0)))
        if cell.outcome in FAILING_CELL_OUTCOMES:
            case.kind, case.type, case.message, case.text = Kind.ERROR, cell.status, cell.status, cell.message
        elif cell.outcome == CellOutcome.EXPECTED:
            case.system_out = f"known failure {cell.failure}: {cell.message}"
        else:
            case.kind, case.message = Kind.SKIPPED, cell.message[:500]
        cases.append(case)
    for r in cell.results:
        case = junit.Case(*junit.case_of(r.case), time=f"{r.duration_s:.3f}")
        if r.outcome in FAILING_OUTCOMES:
            case.kind, case.type, case.text = Kind.FAILURE, r.outcome, r.message
            case.message = f"{r.outcome}: expected {r.expected}" + (f" ({r.failure})" if r.failure else "")
        elif r.outcome == Outcome.SKIPPED:
            case.kind, case.message = Kind.SKIPPED, r.message[:500]
        elif r.outcome == Outcome.REPRODUCED:
            case.system_out = f"known failure {r.failure} reproduced as documented: {r.message[:1000]}\nfix: {r.fix}"
        cases.append(case)
    return junit.render(junit.Suite(cell.id, cases, dict(cell.versions), str(cell.timings.get("total_s", 0))))


def summary(cells: list[CellResult]) -> dict:
    counts: dict[str, int] = {}
    for c in cells:
        for r in c.results:
            counts[r.outcome] = counts.get(r.outcome, 0) + 1
        if c.status != CellStatus.OK:
            key = f"cell:{c.status}" + ("" if c.outcome != CellOutcome.EXPECTED else " (expected)")
            counts[key] = counts.get(key, 0) + 1
    return {"cells": len(cells), "failing_cells": [c.id for c in cells if c.failing],
            "outcomes": dict(sorted(counts.items())), "ok": not any(c.failing for c in cells),
            "reused_results": sum(1 for c in cells for r in c.results if r.reused_from)}


def reuse_line(cells: list[CellResult]) -> str:
    """One line on what the result cache supplied ("" when every result was run now)."""
    seen = [r.reused_from for c in cells for r in c.results if r.reused_from]
    if not seen:
        return ""
    ran = sum(1 for c in cells for r in c.results if not r.reused_from)
    return (f"case results: {ran} run now, {len(seen)} re-used from the result cache (observed "
            f"{min(seen)} to {max(seen)}; their inputs are unchanged, today's rules judged them); "
            "--no-cache runs everything")


def matrix_dict(cells: list[CellResult], meta: dict) -> dict:
    return {"schema": SCHEMA_VERSION,
            "generated": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            **meta, "summary": summary(cells), "cells": [c.to_dict() for c in cells]}


def case_ids(cells: list[CellResult]) -> list[str]:
    """Every case seen in any cell, in the order first seen."""
    seen: dict[str, None] = {}
    for c in cells:
        for r in c.results:
            seen.setdefault(r.case, None)
    return list(seen)


def square(cell: CellResult, case: str) -> str:
    if cell.status != CellStatus.OK:
        return CELL_SYMBOLS.get(cell.status, cell.status)
    for r in cell.results:
        if r.case == case:
            return SYMBOLS.get(r.outcome, r.outcome)
    return "-"


def markdown(cells: list[CellResult], meta: dict) -> str:
    cases = case_ids(cells)
    s = summary(cells)
    lines = [f"# jax-compat matrix — {'OK' if s['ok'] else 'FAILING'}", ""]
    if meta.get("matrix_file"):
        lines.append(f"Matrix: `{meta['matrix_file']}`; {len(cells)} cells, {len(cases)} cases.")
    lines += ["", "Outcomes: " + ", ".join(f"{k}: {v}" for k, v in s["outcomes"].items()), ""]
    lines += markdown_overview(cells)
    lines += ["## Cells", "", "| # | cell | python | backend | date | status | versions |",
              "|---|---|---|---|---|---|---|"]
    for i, c in enumerate(cells, 1):
        vers = ", ".join(f"{d} {v}" for d, v in c.versions.items() if d in
                         ("jax", *DEPENDENTS, "numpy"))
        if c.environment != EnvironmentKind.BUILT:
            vers = f"({c.environment} environment) {vers}"
        backend = c.backend + (f" ({c.device['kind']})" if c.device.get("kind") and c.device.get("platform") != "cpu"
                               else "")
        lines.append(f"| {i} | `{c.id}` | {c.python} | {backend} | {c.date or ''} | "
                     f"{cell_label(c)} | {vers} |")
    lines += ["", "## Grid (cases × cells)", "",
              "| case | " + " | ".join(str(i) for i in range(1, len(cells) + 1)) + " |",
              "|---|" + "---|" * len(cells)]
    for case in cases:
        lines.append(f"| `{short_case(case)}` | " + " | ".join(square(c, case) for c in cells) + " |")
    lines += ["", "Legend: " + ", ".join(f"`{v}` {k}" for k, v in {**SYMBOLS, **CELL_SYMBOLS}.items()), ""]
    details = []
    for c in cells:
        if c.status != CellStatus.OK:
            details.append(f"- **{c.id}** {c.status}" + (f" — known failure `{c.failure}`" if c.failure else "")
                           + f": {first_line(c.message)}")
        for r in c.results:
            if r.outcome in FAILING_OUTCOMES or r.outcome == Outcome.REPRODUCED:
                details.append(f"- **{c.id}** `{short_case(r.case)}` {r.outcome}"
                               + (f" (`{r.failure}`)" if r.failure else "") + f": {first_line(r.message)}")
    if details:
        lines += ["## Details", "", *details, ""]
    return "\n".join(lines)


@dataclass
class Overview:
    """What a person asks first of a run: which known failure hit where, and what fails the run."""

    cells: list[str]
    hits: dict[str, list[str]]  # known failure id -> the cells where it was observed
    failing: list[tuple[str, str, str]]  # (cell, case or "cell", outcome): what fails the run
    cases: int = 0
    whole_cell: set[tuple[str, str]] = field(default_factory=set)  # (failure, cell): the cell as a whole


def overview(cells: list[CellResult]) -> Overview:
    hits: dict[str, list[str]] = {}
    failing: list[tuple[str, str, str]] = []
    whole_cell: set[tuple[str, str]] = set()
    for c in cells:
        seen = [c.failure] if c.failure and c.outcome == CellOutcome.EXPECTED else []
        whole_cell.update((f, c.id) for f in seen)
        seen += [r.failure for r in c.results if r.outcome == Outcome.REPRODUCED and r.failure]
        for f in dict.fromkeys(seen):
            hits.setdefault(f, []).append(c.id)
        if c.outcome in FAILING_CELL_OUTCOMES:
            failing.append((c.id, "cell", cell_label(c)))
        failing += [(c.id, short_case(r.case), r.outcome) for r in c.results if r.outcome in FAILING_OUTCOMES]
    return Overview([c.id for c in cells], dict(sorted(hits.items(), key=lambda kv: (-len(kv[1]), kv[0]))),
                    failing, len(case_ids(cells)), whole_cell)


def _fit(items: list[str], room: int) -> str:
    """The most items that fit in ``room`` characters (at least one), then how many more there are."""
    for n in range(len(items), 1, -1):
        text = ", ".join(items[:n]) + (f", … +{len(items) - n} more" if n < len(items) else "")
        if len(text) <= room:
            return text
    return ", ".join(items[:1]) + (f", … +{len(items) - 1} more" if len(items) > 1 else "")


def terminal_overview(cells: list[CellResult], files: str = "reports/matrix.md") -> str:
    """The end of a matrix run in one screen: known failures × cells, then what fails the run
    (the full case grid stays in the files)."""
    ov = overview(cells)
    width = max([len(f) for f in ov.hits] + [10])
    out = [f"known failures observed ({len(ov.cells)} cells, {ov.cases} cases; full grid: {files}):"]
    for fid, where in ov.hits.items():
        head = f"  {fid:<{width}} {len(where):>3} of {len(ov.cells)}: "
        out.append(head + _fit(where, max(30, 118 - len(head))))
    if not ov.hits:
        out.append("  none")
    s = summary(cells)
    out.append("")
    out += textwrap.wrap("outcomes: " + ", ".join(f"{k}={v}" for k, v in s["outcomes"].items()), 118,
                         subsequent_indent="  ", break_on_hyphens=False)
    if ov.failing:
        out.append(f"FAILING the run ({len(ov.failing)}):")
        out += [f"  {cell}  {case}: {outcome}" for cell, case, outcome in ov.failing[:40]]
        if len(ov.failing) > 40:
            out.append(f"  … and {len(ov.failing) - 40} more (see {files})")
    else:
        out.append("nothing fails the run: every cell behaved as the rules predict")
    return "\n".join(out)


def markdown_overview(cells: list[CellResult]) -> list[str]:
    ov = overview(cells)
    lines = ["## Overview: known failures × cells", ""]
    if ov.hits:
        lines += ["| known failure | cells | where |", "|---|---|---|"]
        lines += [f"| `{f}` | {len(w)} | {', '.join(f'`{c}`' for c in w)} |" for f, w in ov.hits.items()]
    else:
        lines.append("No known failure was observed.")
    lines += ["", f"**Failing the run:** {len(ov.failing)}" + ("" if ov.failing else " — every cell behaved as "
                                                                      "the rules predict"), ""]
    lines += [f"- `{cell}` {case}: **{outcome}**" for cell, case, outcome in ov.failing]
    return lines + [""] if ov.failing else lines


def terminal_grid(cells: list[CellResult]) -> str:
    """Rows are cells (they fit a terminal), columns are numbered cases with a legend."""
    cases = case_ids(cells)
    width = max([len(c.id) for c in cells] + [4])
    out = ["cases:"] + [f"  {i:>2}  {short_case(case)}" for i, case in enumerate(cases, 1)]
    out.append("")
    out.append(" " * (width + 2) + " ".join(f"{i:>6}" for i in range(1, len(cases) + 1)))
    for c in cells:
        if c.status != CellStatus.OK:
            out.append(f"{c.id:<{width}}  {cell_label(c)}: {first_line(c.message, 100)}")
        else:
            out.append(f"{c.id:<{width}}  " + " ".join(f"{square(c, k):>6}" for k in cases)
                       + ("  [import rule stale]" if c.outcome == CellOutcome.STALE else ""))
    s = summary(cells)
    out.append("")
    out += textwrap.wrap("outcomes: " + ", ".join(f"{k}={v}" for k, v in s["outcomes"].items()), 118,
                         subsequent_indent="  ", break_on_hyphens=False)
    if s["failing_cells"]:
        out.append("FAILING cells: " + ", ".join(s["failing_cells"]))
    return "\n".join(out)
