"""The records of two sides that should differ only in the candidate (``env/sides.py`` decides
them): the baseline's versions the candidate's environment is held at, the constraints dropped
because the candidate's own requirements conflict with them, and every other difference that
remains between the sides' resolved versions (a confounder), with what re-running a broken group
with it held at the baseline's version said."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


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


@dataclass
class Sides:
    """What one comparison's two sides share and where they differ beyond the candidate."""

    named: list[str] = field(default_factory=list)
    held: int = 0  # packages the candidate was held at (constraints given)
    dropped: list[str] = field(default_factory=list)  # held at first, let go: the candidate's requirements conflict
    confounders: list[Confounder] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Sides:
        return cls(named=list(d.get("named", [])), held=int(d.get("held", 0)),
                   dropped=list(d.get("dropped", [])),
                   confounders=[Confounder(**x) for x in d.get("confounders", [])])
