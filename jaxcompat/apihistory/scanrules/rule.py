"""One scan rule as the output shows it: its code, name, level and documentation."""

from __future__ import annotations

from dataclasses import dataclass

from jaxcompat.model.vocab import FindingLevel


@dataclass(frozen=True)
class Rule:
    code: str  # JXC00N
    name: str  # as SARIF names it
    level: FindingLevel  # ERROR: the exit status is 1; WARNING: said, exit 0
    doc: str  # one sentence: SARIF's shortDescription and docs/scan.md's rule table
    fix: str = ""  # what --fix rewrites; "" when it rewrites nothing

    @property
    def is_error(self) -> bool:
        return self.level is FindingLevel.ERROR
