"""Pre-release upgrade check of one candidate combination (``nox -s check -- jax==X ...``).

Requirements are validated as PEP 508 strings before anything runs; they become the pins of a
single cell that is resolved, installed and run exactly as a matrix cell, and the verdict says
which known failures it hits (with the documented fix), what fails with no known explanation,
and what the rules predicted that did not happen.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from .backends import JAX_EXTRAS
from .config import ANY, Cell, Matrix
from .deprecations import forecast
from .layout import command
from .outcomes import FAILING_OUTCOMES, UNEXPLAINED_OUTCOMES, CellResult
from .packages import COMPANIONS, ECOSYSTEM
from .text import first_line


class CandidateError(ValueError):
    pass


def read_requirements(args: list[str]) -> list[str]:
    """Expand ``-r FILE`` / ``--requirement FILE``; drop comments and blank lines."""
    out: list[str] = []
    it = iter(args)
    for arg in it:
        if arg in ("-r", "--requirement"):
            path = next(it, None)
            if path is None:
                raise CandidateError("-r needs a file name")
            try:
                lines = Path(path).read_text(encoding="utf-8").splitlines()
            except OSError as e:
                raise CandidateError(f"cannot read requirements file {path}: {e.strerror}") from None
            for line in lines:
                line = line.split(" #")[0].strip()
                if line and not line.startswith("#"):
                    if line.startswith("-"):
                        raise CandidateError(f"{path}: option lines are not supported: {line!r}")
                    out.append(line)
        elif arg.startswith("-r") and len(arg) > 2:
            out.extend(read_requirements(["-r", arg[2:]]))
        else:
            out.append(arg)
    return out


def parse_requirement(text: str) -> Requirement:
    try:
        req = Requirement(text)
    except InvalidRequirement as e:
        raise CandidateError(f"invalid requirement {text!r}: {e}. "
                             "Write PEP 508 requirements, e.g. jax==0.4.35 equinox==0.11.6") from None
    if req.url:
        raise CandidateError(f"URL requirements are not allowed: {text!r}")
    if req.marker is not None:
        raise CandidateError(f"environment markers are not allowed in a candidate: {text!r}")
    return req


def candidate_cell(requirements: list[str], *, python: str, cell_id: str | None = None,
                   companions: bool = True) -> Cell:
    """Turn validated requirements into one cell. Exact pins stay exact; other specifiers are
    kept; diffrax/optimistix/lineax/chex not named resolve to what the candidate allows."""
    if not requirements:
        raise CandidateError(f"no requirements given: e.g. {command('check')} jax==0.4.35 equinox==0.11.6")
    pins: dict[str, str] = {}
    backend = "cpu"
    for text in requirements:
        req = parse_requirement(text)
        name = canonicalize_name(req.name)
        if name in pins:
            raise CandidateError(f"{name} is given twice")
        for line in ("cuda12", "cuda13"):  # jax[cuda13], jax[cuda12], jax[cuda12_pip], jax[cuda12_local]
            if any(e == line or e.startswith(line + "_") for e in req.extras):
                backend = line
        spec = str(req.specifier)
        exact = [s.version for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
        pins[name] = exact[0] if len(req.specifier) == 1 and exact else (spec or ANY)
    _check_extra(backend, pins.get("jax", ANY))
    if companions:
        for dist in COMPANIONS:
            pins.setdefault(dist, ANY)
    digest = hashlib.sha256(repr(sorted(pins.items())).encode()).hexdigest()[:8]
    return Cell(id=cell_id or f"check-{digest}", python=python, backend=backend, pins=pins)


def _check_extra(backend: str, jax: str) -> None:
    """jax[cuda13] on a jax that never declared it would install a CPU jax without a word."""
    from packaging.version import InvalidVersion, Version

    if backend not in JAX_EXTRAS or not jax[:1].isdigit():
        return
    extra, since = JAX_EXTRAS[backend]
    try:
        too_old = Version(jax) < Version(since)
    except InvalidVersion:
        return
    if too_old:
        raise CandidateError(f"jax {jax} does not declare the {extra} extra (jax[{extra}] exists from jax {since}): "
                             f"pin jax >= {since} for {backend}, or drop [{extra}] to check it on the CPU")


def verdict(result: CellResult, matrix: Matrix) -> tuple[str, bool]:
    """Human verdict and whether the candidate is safe (no failure of any kind)."""
    where = f" (existing environment, Python {result.python}, {result.backend})" if result.environment != "built" else ""
    lines = [f"Candidate {result.id}{where}: " + ", ".join(f"{d}=={v}" for d, v in result.versions.items()
                                                            if d in ECOSYSTEM + ("numpy",))]
    if result.status != "ok":
        return "\n".join(lines + _did_not_work(result, matrix)), False
    hits: dict[str, list[str]] = {}
    advisories: dict[str, list[str]] = {}
    for r in result.results:
        if r.outcome == "reproduced" and r.failure:
            f = matrix.failure(r.failure)
            (advisories if f is not None and f.advisory else hits).setdefault(r.failure, []).append(r.case)
    unexplained = [r for r in result.results if r.outcome in UNEXPLAINED_OUTCOMES]
    stale = [r for r in result.results if r.outcome == "stale"]
    safe = not (hits or unexplained or stale or result.outcome == "stale")
    lines += _hits(hits, matrix) + _advisories(advisories, matrix) + _unexplained(unexplained)
    lines += ["  ! known failures the rules predicted but that did not happen (rules out of date):"] if stale else []
    lines += [f"    - {r.case}: {r.failure}" for r in stale]
    lines += ["  ! " + "; ".join(result.notes)] if result.outcome == "stale" else []
    ahead = forecast(result.deprecations, result.versions)
    if ahead:
        lines.append("  ! warnings before the break (jax deprecations this combination's packages use):")
        lines += [f"    - {line}" for line in ahead]
    if safe:
        passed = sum(r.outcome == "pass" for r in result.results)
        skipped = sum(r.outcome == "skipped" for r in result.results)
        lines.append(f"  ✓ safe: {passed} case(s) pass, {skipped} skipped, no known failure applies")
    if any(r.outcome in FAILING_OUTCOMES for r in result.results) or hits:
        fixes = sorted({matrix.failure(f).fix for f in hits if matrix.failure(f)})
        if fixes:
            lines.append("  what to pin instead: " + "; ".join(fixes))
    return "\n".join(lines), safe


def _did_not_work(result: CellResult, matrix: Matrix) -> list[str]:
    """The candidate did not resolve, install or import: its status, the known failure, the error's end."""
    head = f"  ✗ the candidate does not work: {result.status}"
    if result.failure:
        f = matrix.failure(result.failure)
        head += f" — known failure {result.failure}"
        if f:
            head += f"\n      fix: {f.fix}\n      upstream: {', '.join(f.upstream)}"
    return [head, "      " + "\n      ".join(result.message.strip().splitlines()[-6:])]


def _hits(hits: dict[str, list[str]], matrix: Matrix) -> list[str]:
    """The known failures it hits, each with its fix, workaround and upstream links."""
    lines = ["  ✗ known failures this combination hits:"] if hits else []
    for fid, cases in hits.items():
        f = matrix.failure(fid)
        lines.append(f"    - {fid}: {f.title if f else ''} ({len(cases)} case(s))")
        if f:
            lines.append(f"        fix: {f.fix}")
            lines += [f"        workaround: {f.workaround}"] if f.workaround else []
            lines.append(f"        upstream: {', '.join(f.upstream)}")
    return lines


def _advisories(advisories: dict[str, list[str]], matrix: Matrix) -> list[str]:
    lines = ["  i advisories (usage pitfalls present on every release; not a reason to avoid this one):"] \
        if advisories else []
    for fid in advisories:
        f = matrix.failure(fid)
        lines.append(f"    - {fid}: {f.title if f else ''}" + (f"\n        advice: {f.fix}" if f else ""))
    return lines


def _unexplained(results: list) -> list[str]:
    """Failures no rule explains, each with its first line and the end of its traceback."""
    lines = ["  ✗ failures with no known explanation (new regressions?):"] if results else []
    for r in results:
        lines.append(f"    - {r.case}: {r.outcome}: {first_line(r.message, 200)}")
        if r.traceback:
            lines += ["        " + ln for ln in r.traceback.rstrip().splitlines()[-8:]]
    return lines


def escape_pins(result: CellResult, matrix: Matrix, requirements: list[str], cache: Path) -> list[str]:
    """Resolver traps: for each known failure hit through a package the user did not pin exactly,
    the nearest release of that package outside the failure's range (newer first), as an extra pin."""
    from packaging.version import Version

    from . import releases
    from .rules import clause_holds, ranges

    pinned = {canonicalize_name(parse_requirement(r).name) for r in requirements
              if any(s.operator == "==" for s in parse_requirement(r).specifier)}
    out: list[str] = []
    for r in result.results:
        f = matrix.failure(r.failure) if r.outcome == "reproduced" and r.failure else None
        if f is None or f.advisory:
            continue
        for clause in ranges(f, r.case):
            if not clause_holds(clause, result.versions):
                continue
            for dist, spec in clause.items():
                if dist in pinned or dist not in result.versions:
                    continue
                installed = Version(result.versions[dist])
                try:
                    rels = [Version(v) for v in releases.versions(dist, cache)]
                except releases.IndexError_:
                    continue
                newer = [v for v in rels if v > installed and not spec.contains(v, prereleases=True)]
                older = [v for v in rels if v < installed and not spec.contains(v, prereleases=True)]
                for pick in newer[:1] + older[-1:]:  # the nearest on each side, newer first
                    if f"{dist}=={pick}" not in out:
                        out.append(f"{dist}=={pick}")
    return out
