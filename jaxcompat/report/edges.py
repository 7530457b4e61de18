"""The edge search's coverage section (Markdown): the pairs observed, implied by edges on both sides
and unseen, the edges found and the intervals still open, and what the search cost. It goes into
``survey-edges.md`` and, spliced under ``COVERAGE_HEADING``, into ``survey.md``
(operations/edges.py)."""

from __future__ import annotations

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
