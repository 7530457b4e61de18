"""A learned requirement: one release that needs more than its metadata declares, with the
evidence (``Learned``). Observed and kept by knowledge/learned.py (``jaxcompat/data/learned.json``),
rendered by report/learned.py."""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from jaxcompat._util.text import Frame, frames, last_line
from jaxcompat.model.records import Record


@dataclass(frozen=True)
class ImportFailure:
    """A failed import as the probe reported it, read once: its traceback's frames (outermost
    first) and its last line (the error)."""

    frames: tuple[Frame, ...]
    error: str

    @classmethod
    def of(cls, tb: str) -> ImportFailure:
        return cls(tuple(frames(tb)), last_line(tb))


@dataclass(frozen=True)
class Learned:
    """One release that needs more than its metadata declares, and the evidence."""

    package: str  # the release that under-declares (canonical name)
    release: str  # its version
    requires: str  # what it really needs (PEP 508, e.g. "equinox>0.11.2")
    declares: str  # what its metadata says of the same package ("" = nothing)
    error: str  # the import error's last line
    frame: str  # where it raised: "optimistix/_misc.py:12"
    tried: tuple[dict, ...] = ()  # [{"with": {dist: version}, "imports": "ok" | "error"}]
    observed: str = ""  # YYYY-MM-DD

    @property
    def needs(self) -> Requirement:
        return Requirement(self.requires)

    def unmet(self, pins: dict[str, str]) -> bool:
        """Whether the exact pins given leave this release's real requirement unmet."""
        need = self.needs
        have = pins.get(canonicalize_name(need.name))
        if have is None:
            return False
        try:
            return not need.specifier.contains(Version(have), prereleases=True)
        except InvalidVersion:
            return False

    def reason(self) -> str:
        """``optimistix 0.0.7 needs equinox>0.11.2 (`module 'equinox' has no attribute 'X'`), declares
        equinox>=0.11.0``"""
        dep = canonicalize_name(self.needs.name)
        by_hand = self.frame == "matrix.toml [[requirement]]" and not self.declares  # not read from metadata
        return (f"{self.package} {self.release} needs {self.requires} (`{self.error}`)"
                + ("" if by_hand else f", declares {dep}{self.declares or ' (anything)'}"))


@dataclass
class Added(Record):
    """What became of one package the suite added (check.json's ``added``)."""

    version: str | None = None  # installed (None: left out)
    skipped: list[dict] = field(default_factory=list)  # [{version, reason, error, frame}]
    left_out: str = ""  # why no release is installed
