"""The edge search's coverage section (Markdown): the pairs observed, implied by edges on both sides
and unseen, the edges found and the intervals still open, and what the search cost. It goes into
``survey-edges.md`` and, spliced under ``COVERAGE_HEADING``, into ``survey.md``
(``splice_coverage``)."""

from __future__ import annotations

from pathlib import Path

from jaxcompat.report.emit import write_file

COVERAGE_HEADING = "## Coverage (edge search)"


def render(cost: dict, meta: dict) -> str:
    c = cost
    share = (lambda n: f"{100 * n / c['pairs']:.1f}%") if c["pairs"] else (lambda n: "-")
    lines = [COVERAGE_HEADING, "",
             f"Columns: {c['columns']} equinox releases ({meta.get('scope', 'all')}); "
             f"{c['columns_done']} searched to the end.", "",
             "| installable pairs (by metadata) | observed | implied by edges on both sides | unseen |",
             "|---|---|---|---|",
             f"| {c['pairs']} | {c['observed']} ({share(c['observed'])}) | {c['implied']} ({share(c['implied'])}) | "
             f"{c['unseen']} ({share(c['unseen'])}) |", "",
             f"{c['edges']} edges found (neighbouring releases whose outcome signatures differ); "
             f"{c['open']} intervals still open.", ""]
    if meta.get("cost"):
        lines += [meta["cost"], ""]
    return "\n".join(lines)


def splice_coverage(survey_md: Path, coverage_md: str) -> bool:
    """Put the edge search's coverage and cost into the survey's own report (``survey.md``): the
    section replaces an earlier one, or goes before the first section. False if there is no report."""
    try:
        text = survey_md.read_text(encoding="utf-8")
    except OSError:
        return False
    lines = text.splitlines()
    if COVERAGE_HEADING in lines:
        start = lines.index(COVERAGE_HEADING)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    else:
        start = end = next((i for i, ln in enumerate(lines) if ln.startswith("## ")), len(lines))
    block = coverage_md.rstrip("\n").splitlines() + [""]
    write_file(survey_md, "\n".join(lines[:start] + block + lines[end:]) + "\n")
    return True
