"""Find the first release of one package where a case changes outcome.

Like cargo-bisect-rustc: list the package's releases from the index (yanked ones skipped unless
named), check both ends, then bisect in O(log n) environments. Each step is an ordinary cell —
the other packages pinned or co-resolved as of that step's date — so every step is cached and
reported like any other. A step that cannot install is skipped (like ``git bisect skip``) and a
neighbour is tried instead.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

from . import releases
from .candidate import candidate_cell, parse_requirement
from .cell import run_cell
from .config import Matrix
from .outcomes import CellResult
from .text import first_line, last_line


class BisectError(ValueError):
    pass


@dataclass
class Step:
    version: str
    signature: str  # what the case(s) did: "pass", or the failing error types, or a cell status
    versions: dict[str, str] = field(default_factory=dict)
    installable: bool = True
    detail: str = ""


@dataclass
class BisectResult:
    package: str
    target: str
    cases: list[str]
    good: Step | None = None
    bad: Step | None = None
    steps: list[Step] = field(default_factory=list)
    first_bad: str | None = None
    last_good: str | None = None
    skipped: list[str] = field(default_factory=list)
    message: str = ""

    @property
    def environments(self) -> int:
        return len(self.steps)

    def to_dict(self) -> dict:
        return {**asdict(self), "environments": self.environments}


def target_cases(target: str, matrix: Matrix) -> list[str]:
    """A failure id stands for its cases; otherwise a case path or node id."""
    f = matrix.failure(target)
    if f is not None:
        return list(f.cases) if f.cases else [matrix.settings.cases_dir]
    path = target.split("::")[0]
    if not (matrix.root / path).is_file():
        ids = ", ".join(x.id for x in matrix.failures)
        raise BisectError(f"{target!r} is neither a failure id ({ids}) nor a case file")
    return [target]


def signature(result: CellResult) -> tuple[str, bool, str]:
    """(signature, installable, detail) of one step."""
    if result.status in ("unresolvable", "install-error", "python-missing"):
        return f"cell:{result.status}", False, last_line(result.message)
    if result.status != "ok":
        return f"cell:{result.status}", True, last_line(result.message)
    failing = sorted({r.error_type or r.outcome for r in result.results
                      if r.outcome not in ("pass", "stale", "skipped")})
    if failing:
        sig = "fail: " + ", ".join(failing)
    else:
        sig = "pass" if any(r.outcome in ("pass", "stale") for r in result.results) else "all skipped"
    first_fail = next((r.message for r in result.results if r.outcome not in ("pass", "stale", "skipped")), "")
    return sig, True, first_line(first_fail, 200)


def bisect(matrix: Matrix, target: str, package: str, *, good: str | None, bad: str | None,
           pins: list[str], python: str, state_dir: Path, progress=print) -> BisectResult:
    package = canonicalize_name(package)
    cases = target_cases(target, matrix)
    cache = state_dir / "cache"
    named = {v for v in (good, bad) if v}
    all_versions = releases.versions(package, cache, include_yanked=True)
    info = releases.release_info(package, cache)
    for v in named:
        if v not in info:
            raise BisectError(f"{package} {v} is not a release on the package index")
    candidates = [v for v in all_versions if not info[v]["yanked"] or v in named]
    lo = Version(good) if good else None
    hi = Version(bad) if bad else None
    candidates = [v for v in candidates if (lo is None or Version(v) >= lo) and (hi is None or Version(v) <= hi)]
    if len(candidates) < 2:
        raise BisectError(f"fewer than two releases of {package} between {good} and {bad}")
    result = BisectResult(package=package, target=target, cases=cases)
    memo: dict[str, Step] = {}

    def run(version: str) -> Step:
        if version in memo:
            return memo[version]
        reqs = [p for p in pins if canonicalize_name(parse_requirement(p).name) != package]
        reqs.append(f"{package}=={version}")
        cell = candidate_cell(reqs, python=python, cell_id=f"bisect-{package}-{version}")
        res = run_cell(cell, matrix, state_dir=state_dir, reports_dir=None, case_args=cases)
        sig, ok, detail = signature(res)
        step = Step(version=version, signature=sig, versions=res.versions, installable=ok, detail=detail)
        memo[version] = step
        result.steps.append(step)
        progress(f"  {package} {version}: {sig}" + ("" if ok else f" (skipped: {detail})"))
        if not ok:
            result.skipped.append(version)
        return step

    def end(indexes) -> tuple[int, Step] | None:
        for i in indexes:
            step = run(candidates[i])
            if step.installable:
                return i, step
        return None

    lo_end = end(range(len(candidates)))
    if lo_end is None:
        result.message = f"no release of {package} in range could be installed"
        return result
    hi_end = end(range(len(candidates) - 1, lo_end[0], -1))
    if hi_end is None:
        result.message = f"only {candidates[lo_end[0]]} could be installed"
        return result
    (i, result.good), (j, result.bad) = lo_end, hi_end
    if result.good.signature == result.bad.signature:
        result.message = (f"no change: {package} {result.good.version} and {result.bad.version} both give "
                          f"{result.good.signature!r}")
        return result
    good_sig = result.good.signature
    # Invariant: candidates[i] behaves like the good end, candidates[j] does not.
    while j - i > 1:
        mid = (i + j) // 2
        probe = _installable_near(mid, i, j, run, candidates)
        if probe is None:
            break  # everything strictly between i and j failed to install
        k, step = probe
        if step.signature == good_sig:
            i = k
        else:
            j = k
    result.last_good, result.first_bad = candidates[i], candidates[j]
    between = [v for v in candidates[i + 1:j]]
    result.message = (f"first bad: {candidates[j]} (last good: {candidates[i]}); the outcome changes from "
                      f"{good_sig!r} to {memo[candidates[j]].signature!r}"
                      + (f"; {len(between)} release(s) between could not be installed: {', '.join(between)}"
                         if between else ""))
    return result


def _installable_near(mid: int, i: int, j: int, run, candidates):
    """Run ``mid``; if it cannot install, try its neighbours outward (git bisect skip)."""
    order = [mid]
    for d in range(1, j - i):
        for k in (mid + d, mid - d):
            if i < k < j and k not in order:
                order.append(k)
    for k in order:
        step = run(candidates[k])
        if step.installable:
            return k, step
    return None


def render(result: BisectResult) -> str:
    lines = [f"bisect {result.target} over {result.package} ({len(result.cases)} case(s)):"]
    for s in sorted(result.steps, key=lambda s: Version(s.version)):
        others = ", ".join(f"{d} {v}" for d, v in s.versions.items()
                           if d in ("jax", "jaxlib", "equinox", "diffrax", "optimistix", "numpy") and d != result.package)
        lines.append(f"  {result.package} {s.version:<10} {s.signature:<40} [{others}]"
                     + ("" if s.installable else f"  skipped: {s.detail}"))
    lines.append(result.message)
    lines.append(f"environments built: {result.environments}")
    return "\n".join(lines)
