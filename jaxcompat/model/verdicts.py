"""The one invariant every verdict a user acts on obeys, decided in one place.

Exit 0 ("safe", "breaks none") only when every selected item — a dependent, a test suite, a case
— was judged on both sides with at least one of its tests run in the candidate; 1 when one is
broken; 2 for everything else (not judged, capped, unreachable, crashed, all skipped, missing,
unreadable, nothing selected at all). The commands turn their records into ``Item``s and ask
``decide``; a property test tries every mix against it (``tests/test_verdicts.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxcompat._util.exits import EXIT_CONFIG, EXIT_FAILING, EXIT_OK


@dataclass(frozen=True)
class Item:
    """One selected thing, as far as the invariant cares."""

    name: str
    broken: bool = False  # the candidate breaks it (a test passed before and fails now)
    judged: bool = False  # it was judged on both sides (its verdict is broken or safe)
    ran_candidate: int = 0  # its tests that ran (not skipped, not uncollectable) in the candidate
    why: str = ""  # why it was not judged, for the one line that says so


@dataclass(frozen=True)
class Decision:
    code: int
    unjudged: tuple[Item, ...] = ()  # what keeps it from 0 (when nothing is broken)

    @property
    def safe(self) -> bool:
        return self.code == EXIT_OK


def decide(items: list[Item] | tuple[Item, ...]) -> Decision:
    if any(i.broken for i in items):
        return Decision(EXIT_FAILING)
    unjudged = tuple(i for i in items if not (i.judged and i.ran_candidate > 0))
    if unjudged or not items:
        return Decision(EXIT_CONFIG, unjudged)
    return Decision(EXIT_OK)
