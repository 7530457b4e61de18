"""The records of two sides that should differ only in the candidate (``env/sides.py`` decides
them): the baseline's versions the candidate's environment is held at, the constraints dropped
because the candidate's own requirements conflict with them, and every other difference that
remains between the sides' resolved versions (a confounder), with what re-running a broken group
with it held at the baseline's version said."""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxcompat.model.records import Record


def constraint_name(constraint: str) -> str:
    """``numpy==2.0.1`` -> ``numpy``."""
    return constraint.split("==", 1)[0].strip()


@dataclass
class Confounder:
    """A package whose version differs between the sides although the candidate does not name it."""

    dist: str
    baseline: str  # "" when the baseline does not have it
    candidate: str  # "" when the candidate does not have it
    # re-running the broken tests with it held at the baseline's version: "" (not tried),
    # "cause" (they pass then), "not the cause" (still broken), "cannot hold" (does not resolve)
    held_run: str = ""
    detail: str = ""  # counts, or why it could not be held
    tried: int = 0  # broken tests re-run with it held
    passed: int = 0  # of them, passing then

    def held(self, tried: int, passed: int) -> None:
        """What re-running ``tried`` broken tests with it held said: ``passed`` of them passed."""
        self.tried, self.passed = tried, passed
        self.held_run = "the cause" if passed == tried else "not the cause" if not passed else "a cause"
        self.detail = f"{passed} of {tried} broken test(s) pass with {self.dist} {self.baseline}"


@dataclass
class Sides(Record):
    """What one comparison's two sides share and where they differ beyond the candidate."""

    named: list[str] = field(default_factory=list)
    held: int = 0  # packages the candidate was held at (constraints given)
    dropped: list[str] = field(default_factory=list)  # held at first, let go: the candidate's requirements conflict
    confounders: list[Confounder] = field(default_factory=list)

    @classmethod
    def merged(cls, parts: list[Sides]) -> Sides:
        """The sides of a suite run in parts (a split dependent): every part's confounders, each with
        what holding it said over every part's broken tests (the whole suite's answer)."""
        out = cls(named=sorted({n for p in parts for n in p.named}), held=max((p.held for p in parts), default=0),
                  dropped=sorted({d for p in parts for d in p.dropped}))
        by: dict[tuple[str, str, str], list[Confounder]] = {}
        for p in parts:
            for c in p.confounders:
                by.setdefault((c.dist, c.baseline, c.candidate), []).append(c)
        for (dist, baseline, candidate), seen in sorted(by.items()):
            c = Confounder(dist, baseline, candidate)
            tried, passed = sum(x.tried for x in seen), sum(x.passed for x in seen)
            if tried:
                c.held(tried, passed)
            else:  # tried in no part (none had a broken test), or it could not be held
                said = next((x for x in seen if x.held_run), c)
                c.held_run, c.detail = said.held_run, said.detail
            out.confounders.append(c)
        return out

