"""A suite's health as its baseline shows it: one that mostly fails before the upgrade says little
about the upgrade, so it is flagged ``unhealthy`` with its most common error, and judged on the rest."""

from __future__ import annotations

from dataclasses import dataclass

from jaxcompat.model.records import Record
from jaxcompat.model.vocab import SuiteHealth

UNHEALTHY_SHARE = 0.5  # more than this share of the baseline's tests failing on both sides


@dataclass(frozen=True)
class Health(Record):
    status: SuiteHealth = SuiteHealth.HEALTHY
    ran: int = 0  # tests that ran in the baseline
    failing: int = 0  # of them, failing on both sides
    signature: str = ""  # the most common error among those (normalised)
    signature_count: int = 0

    @property
    def rest(self) -> int:
        """The tests it is judged on."""
        return self.ran - self.failing
