"""Which known failures apply to a combination of installed versions.

Expectations are computed, never listed per cell: any combination (a matrix cell, a user's
candidate upgrade, a bisect step, tonight's newest releases) gets a prediction.
"""

from __future__ import annotations

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from .config import Failure


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
    return any(clause_holds(c, versions) for c in failure.affects_for(nodeid))


def case_failures(failures: tuple[Failure, ...] | list[Failure], nodeid: str,
                  versions: dict[str, str], backend: str) -> list[Failure]:
    """The case-stage failures that predict ``nodeid`` fails on these versions."""
    return [f for f in failures
            if f.stage == "case" and f.covers(nodeid) and applies(f, versions, backend, nodeid)]


def collateral_failures(failures, nodeid: str, versions: dict[str, str], backend: str) -> list[Failure]:
    """Failures whose broken code path this case may also go through (see Failure.collateral)."""
    return [f for f in failures
            if f.stage == "case" and f.may_break(nodeid) and applies(f, versions, backend)]


def cell_failures(failures, stage: str, versions: dict[str, str], backend: str) -> list[Failure]:
    """The resolve- or import-stage failures predicted for a whole cell."""
    return [f for f in failures if f.stage == stage and applies(f, versions, backend)]


def normalise(versions: dict[str, str]) -> dict[str, str]:
    return {canonicalize_name(k): v for k, v in versions.items()}
