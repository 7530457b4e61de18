"""The records of a bisection along one package's releases: one step (``Step``: a release, what
its cell did, whether the failure is there) and the answer (``BisectResult``: where the failure
starts and stops, every cell observed). Built by operations/bisect.py, rendered by
report/bisect.py, stored as bisect-PACKAGE-TARGET.json."""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxcompat.model.records import Record
from jaxcompat.model.vocab import BisectState


@dataclass
class Step:
    version: str
    signature: str  # what the case(s) did: "pass", or the failing error types, or a cell status
    versions: dict[str, str] = field(default_factory=dict)
    installable: bool = True
    detail: str = ""
    state: BisectState = BisectState.UNKNOWN


@dataclass
class BisectResult(Record):
    package: str
    target: str
    cases: list[str]
    good: Step | None = None
    bad: Step | None = None
    steps: list[Step] = field(default_factory=list)
    first_bad: str | None = None  # the documented failure's first affected release
    last_good: str | None = None  # the release before it that was judged clean
    fixed: str | None = None  # the first release after the affected range judged clean
    last_affected: str | None = None
    skipped: list[str] = field(default_factory=list)
    message: str = ""
    candidates: list[str] = field(default_factory=list)  # the releases walked, oldest first
    # every cell observed, as recorded (replayed by the tests without installing anything)
    observations: list[dict] = field(default_factory=list)
    _extra = ("environments",)

    @property
    def environments(self) -> int:
        return len(self.steps)
