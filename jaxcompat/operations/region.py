"""Where a failure lives in the release space: bisect it along each package that matters.

From one combination where the failure was seen, ``bisect.py`` walks each axis (jax, equinox,
and the package whose frame raised it) with the other axes pinned where it was seen. A failure
region is often a rectangle (``equinox < a`` and ``jax >= b``): the product of the ranges found,
checked at its two far corners (both lowest, both highest), 2 environments more. Each bound is
reported with the releases on both sides and their dates. The result feeds a drafted rule
(``drafts.py``). The records: model/region.py; their text: report/region.py.
"""

from __future__ import annotations

from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

from jaxcompat._util.statedir import StateDir
from jaxcompat._util.text import quiet
from jaxcompat.env import releases
from jaxcompat.model.bisect import BisectResult
from jaxcompat.model.matrix import Matrix
from jaxcompat.model.region import Bound, Region
from jaxcompat.operations.bisect import ABSENT, PRESENT, UNKNOWN, Observe, Target, bisect, judge, record
from jaxcompat.plugin.packages import ECOSYSTEM
from jaxcompat.report.region import describe

AXES = ("jax", "equinox")


def axes_for(target: Target, seen: dict[str, str], wanted: list[str] | None = None) -> list[str]:
    """jax and equinox, and the package of the raising frame when it is another one we know."""
    out = [canonicalize_name(a) for a in (wanted or AXES)]
    pkg = target.signature.package if target.signature else ""
    if not wanted and pkg and canonicalize_name(pkg) in ECOSYSTEM and canonicalize_name(pkg) not in out:
        out.append(canonicalize_name(pkg))
    return [a for a in out if a in seen]


def bound(matrix: Matrix, target: Target, seen: dict[str, str], *, axes: list[str], python: str,
          state_dir: Path, observe: Observe, candidates: dict[str, list[str]] | None = None,
          dates: dict[str, dict[str, str]] | None = None, corners: bool = True,
          progress=quiet) -> Region:
    """Bisect ``target`` along every axis from ``seen``; ``candidates``/``dates`` per package
    replace the package index (a replay)."""
    region = Region(target.id, list(target.cases), {a: seen[a] for a in axes})
    for axis in axes:
        pins = [f"{a}=={seen[a]}" for a in axes if a != axis]
        progress(f"bisect {axis} ({', '.join(pins) or 'nothing else pinned'}):")
        r = bisect(matrix, target, axis, good=None, bad=None, pins=pins, python=python, state_dir=state_dir,
                   progress=progress, observe=observe, candidates=(candidates or {}).get(axis))
        when = (dates or {}).get(axis) or _dates(axis, state_dir)
        region.bounds.append(_bound_of(r, when))
        region.bisections.append(r.to_dict())
        progress(f"  -> {describe(region.bounds[-1])}")
    if corners and len(axes) >= 2 and all(b.first_bad for b in region.bounds):
        _corners(region, target, observe, progress)
    else:
        region.shape = "axes only"
    return region


def _dates(package: str, state_dir: Path) -> dict[str, str]:
    try:
        return {v: m["date"][:10] for v, m in releases.release_info(package, StateDir(state_dir).cache).items()}
    except Exception:  # noqa: BLE001 - dates are a courtesy; offline, a region still stands
        return {}


def _bound_of(r: BisectResult, dates: dict[str, str]) -> Bound:
    judged = sorted((s.version for s in r.steps if s.state != UNKNOWN), key=Version)
    used = {v for v in (r.first_bad, r.last_good, r.last_affected, r.fixed) if v}
    between = []
    for lo, hi in ((r.last_good, r.first_bad), (r.last_affected, r.fixed)):
        if lo and hi and lo in r.candidates and hi in r.candidates:
            between += r.candidates[r.candidates.index(lo) + 1:r.candidates.index(hi)]
    return Bound(r.package, r.first_bad, r.last_good, r.last_affected, r.fixed,
                 oldest_tried=judged[0] if judged else "", newest_tried=judged[-1] if judged else "",
                 dates={v: dates[v][:10] for v in used | set(judged[:1] + judged[-1:]) if v in dates},
                 environments=r.environments, unsure=between)


def _extent(b: Bound, lowest: bool) -> str:
    """The outermost release seen affected along one axis."""
    if lowest:
        return b.first_bad if b.last_good else (b.oldest_tried or b.first_bad)
    return b.last_affected if b.fixed else (b.newest_tried or b.last_affected or b.first_bad)


def _corners(region: Region, target: Target, observe: Observe, progress) -> None:
    """Both-lowest and both-highest corners: present there too, the region is a rectangle."""
    states = []
    for lowest in (True, False):
        versions = {b.package: _extent(b, lowest) for b in region.bounds}
        if versions == region.seen:  # the corner is where it was seen: nothing to learn
            continue
        reqs = [f"{a}=={v}" for a, v in versions.items()]
        res = observe(reqs, "corner-" + "-".join(f"{a}{v}" for a, v in versions.items()), list(target.cases))
        state, sig, _ = judge(res, target)
        region.corners.append({"versions": versions, "state": state, "signature": sig,
                               "observation": record(reqs, res)})
        states.append(state)
        progress(f"  corner {' '.join(reqs)}: {state} ({sig})")
    if any(s == ABSENT for s in states):
        region.shape = "not a rectangle"
    elif states and all(s == PRESENT for s in states):
        region.shape = "rectangle"
    else:
        region.shape = "rectangle (corners could not say)" if states else "rectangle"
