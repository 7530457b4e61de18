"""The records of a failure's region in the release space: one package's affected range
(``Bound``, from its bisection with the others pinned where it was seen) and the region
(``Region``: the bounds, its shape, the corners checked, each axis's bisection as stored).
Built by operations/region.py, rendered by report/region.py, stored as bisect/region-NAME.json;
its ``clause`` feeds a drafted rule (knowledge/drafts.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxcompat.model.records import Record


@dataclass
class Bound:
    """One package's affected range, from its bisection (the others pinned where it was seen)."""

    package: str
    first_bad: str | None  # None: the failure never showed along this package
    last_good: str | None  # the release before first_bad that was judged clean (None: no lower bound)
    last_affected: str | None
    fixed: str | None  # None: no upper bound (affected up to the newest release that can say)
    oldest_tried: str = ""
    newest_tried: str = ""
    dates: dict[str, str] = field(default_factory=dict)
    environments: int = 0
    # releases between a bound's two sides that could not say (another failure, not importable):
    # the bound is as tight as the observations allow, no tighter
    unsure: list[str] = field(default_factory=list)

    @property
    def spec(self) -> str:
        """The affected range as a specifier ("" when it is every release that can say)."""
        parts = ([f">={self.first_bad}"] if self.last_good and self.first_bad else []) + (
            [f"<{self.fixed}"] if self.fixed else [])
        return ",".join(parts)


@dataclass
class Region(Record):
    target: str
    cases: list[str]
    seen: dict[str, str]  # the combination where it was seen (the axes' versions)
    bounds: list[Bound] = field(default_factory=list)
    shape: str = ""  # rectangle | not a rectangle | axes only
    corners: list[dict] = field(default_factory=list)  # {versions, state, signature}
    bisections: list[dict] = field(default_factory=list)  # each axis's BisectResult, as a dict
    _extra = ("clause", "environments")

    @property
    def clause(self) -> dict[str, str]:
        return {b.package: b.spec for b in self.bounds if b.spec}

    @property
    def environments(self) -> int:
        """Distinct combinations observed (the seen one is asked along every axis, built once)."""
        return len({tuple(sorted(o["requirements"])) for o in self.observations})

    @property
    def observations(self) -> list[dict]:
        return [o for b in self.bisections for o in b.get("observations", [])] + [
            c["observation"] for c in self.corners if "observation" in c]
