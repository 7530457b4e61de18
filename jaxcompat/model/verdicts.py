"""The one invariant every verdict a user acts on obeys, decided in one place.

Exit 0 ("safe", "breaks none") only when every selected item — a dependent, a test suite, a case
— was judged on both sides with at least one of its tests run in the candidate; 1 when one is
broken, or when its tests ran in the baseline and none of them ran in the candidate (all skipped
or not collected there: the candidate stopped them, as ``check --tests`` has always said); 2 for
everything else (not judged, capped, unreachable, crashed, missing, unreadable, nothing selected
at all). The commands turn their records into ``Item``s and ask ``decide`` (the crater, ``check``,
``check --tests``, ``check --env``); a property test tries every mix against it
(``tests/test_verdicts.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxcompat._util.exits import EXIT_CONFIG, EXIT_FAILING, EXIT_OK


@dataclass(frozen=True)
class Item:
    """One selected thing, as far as the invariant cares."""

    name: str
    broken: bool = False  # the candidate breaks it (a test passed before and fails now)
    judged: bool = False  # both sides were installed and its tests were reached on both
    ran_candidate: int = 0  # its tests that ran (not skipped, not uncollectable) in the candidate
    ran_baseline: int | None = None  # the same in the baseline (None: no baseline side, as in `check`)
    why: str = ""  # why it was not judged, for the one line that says so

    @property
    def stopped(self) -> bool:
        """Its tests ran in the baseline and none ran in the candidate: not safe."""
        return self.judged and bool(self.ran_baseline) and self.ran_candidate <= 0

    @property
    def safe(self) -> bool:
        return (self.judged and not self.broken and self.ran_candidate > 0
                and (self.ran_baseline is None or self.ran_baseline > 0))


@dataclass(frozen=True)
class Decision:
    code: int
    unjudged: tuple[Item, ...] = ()  # what keeps it from 0 (when nothing is broken)
    failing: tuple[Item, ...] = ()  # what makes it 1

    @property
    def safe(self) -> bool:
        return self.code == EXIT_OK


def decide(items: list[Item] | tuple[Item, ...]) -> Decision:
    failing = tuple(i for i in items if i.broken or i.stopped)
    if failing:
        return Decision(EXIT_FAILING, failing=failing)
    unjudged = tuple(i for i in items if not i.safe)
    if unjudged or not items:
        return Decision(EXIT_CONFIG, unjudged)
    return Decision(EXIT_OK)
