"""The records of the compatibility table: the release space (``Release``, ``Releases``), the
runs that are its evidence (``Run``), and one ``Row`` per jax with a ``Range`` per package and
its ``Hole``s. Built by knowledge/compat.py, rendered by report/compat.py (``compat.md``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from jaxcompat.model.vocab import CellStatus


@dataclass(frozen=True)
class Release:
    """One release of a package and what its metadata accepts of jax and of equinox."""

    version: str
    jax: SpecifierSet = field(default_factory=SpecifierSet)
    equinox: SpecifierSet = field(default_factory=SpecifierSet)


@dataclass(frozen=True)
class Releases:
    """The release space: every jax (with the jaxlib its metadata asks for, or why none) and
    every release of the packages whose ranges the table shows."""

    jax: tuple[str, ...]
    jaxlib: dict[str, str | None]  # jax -> jaxlib; None: cannot be installed from the index
    packages: dict[str, tuple[Release, ...]]  # dist -> releases, oldest first

    def accepting(self, dist: str, jax: str, equinox: list[str] | None = None) -> list[str]:
        """The releases of ``dist`` whose metadata accepts this jax (and one of ``equinox``)."""
        out = []
        for r in self.packages.get(dist, ()):
            if not _contains(r.jax, jax):
                continue
            if equinox is not None and not any(_contains(r.equinox, e) for e in equinox):
                continue
            out.append(r.version)
        return out


@dataclass(frozen=True)
class Run:
    """One run we have the outcome of: a survey observation or a matrix cell."""

    source: str  # "survey" | "matrix" | the evidence file's name
    label: str  # how a person finds it: "survey jax 0.6.2 + equinox 0.12.2", "matrix cell jax0.4.31-eqx0.11.6"
    python: str
    status: str  # the cell status: ok | import-error | unresolvable | ...
    versions: dict[str, str]  # installed, canonical names
    failures: tuple[str, ...] = ()  # known failures it observed (advisory ones left out)
    wrong: int = 0  # verdicts our rules got wrong there (regression, stale, mismatch, ...)
    # known failures today's rules predict on its versions that it did not observe (a case added
    # since it ran, or one that skipped there): a run is not evidence against a rule it never tried
    predicted: tuple[str, ...] = ()

    @property
    def jax(self) -> str:
        return self.versions.get("jax", "")

    @property
    def clean(self) -> bool:
        """Every package imported, every case ran as the rules predict, and no known failure."""
        return self.status == CellStatus.OK and not self.wrong and not self.failures and not self.predicted


@dataclass(frozen=True)
class Hole:
    """A release inside a range that is not good: rules predict a failure, or a run saw one."""

    version: str
    rules: tuple[str, ...] = ()
    seen: tuple[str, ...] = ()  # "<run label>: <failure ids>"


@dataclass
class Range:
    dist: str
    inferred: list[str]  # releases the rules and the metadata allow, oldest first
    verified: dict[str, list[str]]  # release -> labels of the runs that verified it
    holes: list[Hole]

    @property
    def verified_ends(self) -> tuple[str, str] | None:
        vs = sorted(self.verified, key=Version)
        return (vs[0], vs[-1]) if vs else None

    @property
    def inferred_ends(self) -> tuple[str, str] | None:
        return (self.inferred[0], self.inferred[-1]) if self.inferred else None

    @property
    def inferred_span(self) -> str:
        """What the rules allow, as shown: ``0.11.8–0.12.1``, one release, or ``none``."""
        ends = self.inferred_ends
        return "none" if ends is None else "–".join(dict.fromkeys(ends))


@dataclass
class Row:
    jax: str
    jaxlib: str | None
    broken: list[tuple[str, str]]  # (rule id, title): the jax release itself is the cause
    instead: list[str]  # the nearest jax releases, below and above, that are not broken
    ranges: dict[str, Range]
    newest: list[Run]  # the clean runs with the newest full set (several when they agree)

    @property
    def installable(self) -> bool:
        return self.jaxlib is not None


def _contains(spec: SpecifierSet, version: str) -> bool:
    try:
        return spec.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False
