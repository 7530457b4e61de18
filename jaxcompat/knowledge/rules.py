"""Which known failures apply to a combination of installed versions, and to which cases.

Expectations are computed, never listed per cell: any combination (a matrix cell, a user's
candidate upgrade, a bisect step, tonight's newest releases) gets a prediction.  ``config``
loads and validates the rules; this module is the only one that matches them.
"""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from jaxcompat.model.matrix import CaseEntry, Failure


def names(entry: str, nodeid: str) -> bool:
    """Whether a ``cases``/``collateral`` entry names a pytest node id: the id itself, its test
    function (every parametrization), its file, or a folder above it."""
    entry = entry.rstrip("/")
    return (nodeid == entry or nodeid.split("[")[0] == entry
            or nodeid.startswith((entry + "::", entry + "/")))


def case_entry(failure: Failure, nodeid: str) -> CaseEntry | None:
    """The ``cases`` entry of ``failure`` that names this node id (itself, or its file), if any."""
    return next((e for e in failure.cases if names(e.case, nodeid)), None)


def covers(failure: Failure, nodeid: str) -> bool:
    return case_entry(failure, nodeid) is not None


def may_break(failure: Failure, nodeid: str) -> bool:
    """Whether ``nodeid`` goes through the failure's broken code path (its ``collateral``)."""
    return any(names(c, nodeid) for c in failure.collateral)


def ranges(failure: Failure, nodeid: str | None = None) -> tuple[dict[str, SpecifierSet], ...]:
    """The failure's version ranges, or those its ``cases`` entry for ``nodeid`` narrows them to."""
    entry = case_entry(failure, nodeid) if nodeid else None
    return entry.affects if entry is not None and entry.affects is not None else failure.affects


def clause_holds(clause: dict, versions: dict[str, str]) -> bool:
    """All dists of the clause are installed at a version its specifier admits."""
    for dist, spec in clause.items():
        installed = versions.get(canonicalize_name(dist))
        if installed is None:
            return False
        try:
            if not spec.contains(Version(installed), prereleases=True):
                return False
        except InvalidVersion:
            return False
    return True


def applies(failure: Failure, versions: dict[str, str], backend: str, nodeid: str | None = None) -> bool:
    if failure.backends and backend not in failure.backends:
        return False
    return any(clause_holds(c, versions) for c in ranges(failure, nodeid))


def case_failures(failures: tuple[Failure, ...] | list[Failure], nodeid: str,
                  versions: dict[str, str], backend: str) -> list[Failure]:
    """The case-stage failures that predict ``nodeid`` fails on these versions."""
    return [f for f in failures
            if f.stage == "case" and covers(f, nodeid) and applies(f, versions, backend, nodeid)]


def collateral_failures(failures, nodeid: str, versions: dict[str, str], backend: str) -> list[Failure]:
    """Failures whose broken code path this case may also go through (``collateral``)."""
    return [f for f in failures
            if f.stage == "case" and may_break(f, nodeid) and applies(f, versions, backend)]


def cell_failures(failures, stage: str, versions: dict[str, str], backend: str) -> list[Failure]:
    """The resolve- or import-stage failures predicted for a whole cell."""
    return [f for f in failures if f.stage == stage and applies(f, versions, backend)]


def normalise(versions: dict[str, str]) -> dict[str, str]:
    return {canonicalize_name(k): v for k, v in versions.items()}
