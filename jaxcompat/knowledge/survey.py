"""One surveyed combination judged by today's rules (``Observation``): its stored cell
(``model/outcomes.CellResult``, with the deprecations and learned requirements it holds), the
wrong verdicts and the known failures it showed. Built by operations/survey.py, rendered by
report/survey.py and report/survey_html.py."""

from __future__ import annotations

from dataclasses import dataclass

from jaxcompat.model.outcomes import FAILING_CELL_OUTCOMES, FAILING_OUTCOMES, CellResult
from jaxcompat.model.survey import Combo
from jaxcompat.model.vocab import CellOutcome, Outcome


@dataclass
class Observation:
    """One surveyed combination, judged by today's rules."""

    combo: Combo
    cell: CellResult

    @property
    def wrong(self) -> list[tuple[str, str, str]]:
        """(case or stage, outcome, error type) for every wrong verdict."""
        out = [(r.case, r.outcome, r.error_type) for r in self.cell.results if r.outcome in FAILING_OUTCOMES]
        if self.cell.outcome in FAILING_CELL_OUTCOMES:
            out.append((f"<{self.cell.status}>", self.cell.outcome, _first_error(self.cell.message)))
        return out

    @property
    def installable(self) -> bool:
        return self.cell.installable

    @property
    def failures(self) -> list[str]:
        seen = [r.failure for r in self.cell.results if r.outcome == Outcome.REPRODUCED and r.failure]
        if self.cell.outcome == CellOutcome.EXPECTED and self.cell.failure:
            seen.insert(0, self.cell.failure)
        return list(dict.fromkeys(seen))


def _first_error(message: str) -> str:
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()]
    return lines[-1][:160] if lines else ""
