"""Pre-release upgrade check of one candidate combination (``nox -s check -- jax==X ...``).

Requirements are validated as PEP 508 strings before anything runs; they become the pins of a
single cell that is resolved, installed and run exactly as a matrix cell, and the verdict says
which known failures it hits (with the documented fix), what fails with no known explanation,
and what the rules predicted that did not happen.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from jaxcompat._util.layout import command
from jaxcompat._util.text import first_line
from jaxcompat.env import sources
from jaxcompat.knowledge.deprecations import History, forecast
from jaxcompat.knowledge.outcomes import FAILING_OUTCOMES, UNEXPLAINED_OUTCOMES, CellResult
from jaxcompat.model import verdicts
from jaxcompat.model.index import NO_INDEX, IndexOptions, SourceError
from jaxcompat.model.matrix import ANY, Cell, Matrix
from jaxcompat.model.vocab import CellOutcome, CellStatus, EnvironmentKind, Outcome
from jaxcompat.plugin.backends import JAX_EXTRAS
from jaxcompat.plugin.packages import COMPANIONS, ECOSYSTEM


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
                        raise CandidateError(f"{path}: option lines are not supported: {line!r} (give "
                                             "--index-url/--extra-index-url/--find-links/--pre on the command line)")
                    out.append(line)
        elif arg.startswith("-r") and len(arg) > 2:
            out.extend(read_requirements(["-r", arg[2:]]))
        elif arg == "@" and out:  # `equinox @ file:///…` unquoted: three words, one requirement
            url = next(it, None)
            if url is None:
                raise CandidateError(f"{out[-1]} @ needs a URL after the @")
            out[-1] = f"{out[-1]} @ {url}"
        else:
            out.append(arg)
    return out


def as_requirement(text: str) -> str:
    """A plain path to a wheel, an sdist or a project folder becomes ``name @ file:///abs``."""
    try:
        return sources.path_requirement(text) if sources.looks_like_path(text) else text
    except SourceError as e:
        raise CandidateError(str(e)) from None


def parse_requirement(text: str) -> Requirement:
    """A validated PEP 508 requirement: a release specifier, or a direct reference uv can install
    (``name @ file:///abs/x.whl``, a project folder, ``name @ git+https://host/repo@ref``)."""
    try:
        req = Requirement(as_requirement(text))
    except InvalidRequirement as e:
        raise CandidateError(f"invalid requirement {text!r}: {e}. "
                             "Write PEP 508 requirements, e.g. jax==0.4.35 equinox==0.11.6, "
                             "or equinox @ file:///ABSOLUTE/PATH/equinox-0.13.1-py3-none-any.whl") from None
    if req.url:
        if req.specifier:
            raise CandidateError(f"{text!r}: a direct reference takes no version specifier")
        try:
            sources.direct_ref(req)
        except SourceError as e:
            raise CandidateError(str(e)) from None
    if req.marker is not None:
        raise CandidateError(f"environment markers are not allowed in a candidate: {text!r}")
    return req


def candidate_cell(requirements: list[str], *, python: str, cell_id: str | None = None,
                   companions: bool = True, index: IndexOptions = NO_INDEX) -> Cell:
    """Turn validated requirements into one cell. Exact pins stay exact; other specifiers are
    kept; a direct reference is the pin ``"@ URL"``; diffrax/optimistix/lineax/chex not named
    resolve to what the candidate allows (from ``index`` too)."""
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
        if req.url:
            pins[name] = sources.DIRECT + req.url
        else:
            pins[name] = exact[0] if len(req.specifier) == 1 and exact else (spec or ANY)
    _check_extra(backend, pins.get("jax", ANY))
    added = tuple(d for d in COMPANIONS if d not in pins) if companions else ()
    for dist in added:
        pins[dist] = ANY
    # The id names the environment (its folder, its lock): index options make another one.
    key = repr(sorted(pins.items())) + (repr(index.to_dict()) if index else "")
    digest = hashlib.sha256(key.encode()).hexdigest()[:8]
    return Cell(id=cell_id or f"check-{digest}", python=python, backend=backend, pins=pins, index=index,
                added=added)


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


def verdict(result: CellResult, matrix: Matrix, history: Mapping[str, History] | None = None) -> tuple[str, bool]:
    """Human verdict and whether the candidate is safe (no failure of any kind). ``history``: what
    jax's API history says of each deprecation's API (``apihistory.apiexplain.histories``), so the
    warnings before the break name the release that removes it."""
    where = (f" (existing environment, Python {result.python}, {result.backend})"
             if result.environment != EnvironmentKind.BUILT else "")
    shown = [d for d in result.versions if d in ECOSYSTEM + ("numpy",)]
    lines = [f"Candidate {result.id}{where}: " + ", ".join(f"{d}=={result.versions[d]}" for d in shown
                                                            if d not in result.added)]
    lines += source_lines(result)
    lines += added_lines(result)
    if result.status != CellStatus.OK:
        return "\n".join(lines + _did_not_work(result, matrix)), False
    hits: dict[str, list[str]] = {}
    advisories: dict[str, list[str]] = {}
    for r in result.results:
        if r.outcome == Outcome.REPRODUCED and r.failure:
            f = matrix.failure(r.failure)
            (advisories if f is not None and f.advisory else hits).setdefault(r.failure, []).append(r.case)
    unexplained = [r for r in result.results if r.outcome in UNEXPLAINED_OUTCOMES]
    stale = [r for r in result.results if r.outcome == Outcome.STALE]
    safe = not (hits or unexplained or stale or result.outcome == CellOutcome.STALE)
    lines += _hits(hits, matrix) + _advisories(advisories, matrix) + _unexplained(unexplained)
    lines += ["  ! known failures the rules predicted but that did not happen (rules out of date):"] if stale else []
    lines += [f"    - {r.case}: {r.failure}" for r in stale]
    lines += ["  ! " + "; ".join(result.notes)] if result.outcome == CellOutcome.STALE else []
    ahead = forecast(result.deprecations, result.versions, history)
    if ahead:
        lines.append("  ! warnings before the break (jax deprecations this combination's packages use):")
        lines += [f"    - {line}" for line in ahead]
    skipped = sum(r.outcome == Outcome.SKIPPED for r in result.results)
    if safe and skipped == len(result.results):  # nothing ran: nothing judged (``item``), never "safe"
        lines.append(f"  ? not judged: every case was skipped here ({skipped})")
    elif safe:
        passed = sum(r.outcome == Outcome.PASS for r in result.results)
        lines.append(f"  ✓ safe: {passed} case(s) pass, {skipped} skipped, no known failure applies")
    if any(r.outcome in FAILING_OUTCOMES for r in result.results) or hits:
        fixes = sorted({matrix.failure(f).fix for f in hits if matrix.failure(f)})
        if fixes:
            lines.append("  what to pin instead: " + "; ".join(fixes))
    return "\n".join(lines), safe


# A cell that ended so says nothing about the candidate: this machine lacks the interpreter or the
# device, our own harness failed, or it never finished.
_NOT_JUDGED = (CellStatus.PYTHON_MISSING, CellStatus.BACKEND_MISSING, CellStatus.HARNESS_ERROR, CellStatus.NOT_RUN)


def item(result: CellResult, safe: bool) -> verdicts.Item:
    """A candidate's cell (``check``, ``check --env``) as the one invariant reads it (``safe``: what
    ``verdict`` said): judged when its cases ran, or when the candidate itself did not resolve,
    install or import; not judged when the machine, our harness or the index (the network) is the
    cause, or only a package the suite added failed to import. Its cases run: those not skipped."""
    from jaxcompat.env.releases import unreachable

    if result.status == CellStatus.OK:
        ran = sum(r.outcome != Outcome.SKIPPED for r in result.results)
        return verdicts.Item(result.id, broken=not safe, judged=True, ran_candidate=ran,
                             why="every case was skipped" if not ran else "")
    why = f"{result.status}: {first_line(result.message, 200)}"
    failed = list(result.failed_imports) if result.status == CellStatus.IMPORT_ERROR else []
    added_only = bool(failed) and result.environment == EnvironmentKind.BUILT and all(m in result.added for m in failed)
    if result.status in _NOT_JUDGED or unreachable(result.message) or added_only:
        return verdicts.Item(result.id, why=why)
    return verdicts.Item(result.id, broken=True, judged=True, why=why)


def summary(result: CellResult, matrix: Matrix) -> str:
    """The verdict in one line, from the record (for a list of candidates tried one after another)."""
    if result.status != CellStatus.OK:
        return f"does not work: {result.status}" + (f" (known failure {result.failure})" if result.failure else "")
    hits = [r.failure for r in result.results if r.outcome == Outcome.REPRODUCED and r.failure
            and not getattr(matrix.failure(r.failure), "advisory", False)]
    unexplained = [r for r in result.results if r.outcome in UNEXPLAINED_OUTCOMES]
    stale = [r for r in result.results if r.outcome == Outcome.STALE]
    said = ([f"hits {', '.join(dict.fromkeys(hits))}"] if hits else []) + \
        ([f"{len(unexplained)} unexplained failure(s)"] if unexplained else []) + \
        ([f"{len(stale)} rule(s) out of date"] if stale or result.outcome == CellOutcome.STALE else [])
    return "; ".join(said) or "safe"


def source_lines(result: CellResult) -> list[str]:
    """What was installed that is not a PyPI release, exactly (version, source, commit), and the
    indexes it was resolved from."""
    lines = []
    idx = result.index or {}
    where = ([f"index {idx['index_url']}"] if idx.get("index_url") else []) + \
        [f"extra index {u}" for u in idx.get("extra_index_urls", [])] + \
        [f"find-links {f}" for f in idx.get("find_links", [])]
    if where or idx.get("pre"):
        lines.append("  resolved from: " + ", ".join(where or ["PyPI"]) + ("; pre-releases allowed (--pre)"
                                                                          if idx.get("pre") else ""))
    lines += [f"  installed: {sources.describe(d, rec)}" for d, rec in result.sources.items()]
    if not result.sources and any(sources.is_direct(v) for v in result.requested.values()):
        lines += [f"  requested: {d} {v}" for d, v in result.requested.items() if sources.is_direct(v)]
    return lines


def added_lines(result: CellResult) -> list[str]:
    """What the suite added to run every case (not the user's pins), and the releases it skipped."""
    if not result.added:
        return []
    have = [f"{d}=={a.version}" for d, a in result.added.items() if a.version]
    lines = ["  added by the suite so every case can run (not your pins): " + (", ".join(have) or "none")]
    for d, a in result.added.items():
        lines += [f"    - {d} {s['version']} skipped: {s['reason']}" for s in a.skipped]
        if a.left_out and a.skipped:
            lines.append(f"    - {d} left out: no release imports with your pins; the cases that need it are skipped")
    return lines


def _did_not_work(result: CellResult, matrix: Matrix) -> list[str]:
    """The candidate did not resolve, install or import: its status, the known failure, the error's end.
    An import error names the user's pins that failed first; one only in a package the suite added
    is said to be that, never that the candidate does not work."""
    failed = list(result.failed_imports) if result.status == CellStatus.IMPORT_ERROR else []
    mine = [m for m in failed if m not in result.added] if result.environment == EnvironmentKind.BUILT else []
    head = f"  ✗ the candidate does not work: {result.status}"
    if mine:
        pins = ", ".join(f"{d}=={v}" for d, v in result.versions.items() if d in ECOSYSTEM and d not in result.added)
        head = f"  ✗ your pins do not work together: import {', '.join(mine)} failed ({pins})"
    elif failed and result.added:
        head = (f"  ? not judged: {', '.join(failed)}, added by the suite (not your pins), failed to import; "
                "this says nothing against your candidate")
    if result.failure:
        f = matrix.failure(result.failure)
        head += f" — known failure {result.failure}"
        if f:
            head += f"\n      fix: {f.fix}\n      upstream: {', '.join(f.upstream)}"
    if mine or result.status == CellStatus.IMPORT_ERROR:
        block = result.failed_imports.get(mine[0], "") if mine else ""
        return [head, "      " + "\n      ".join((block or result.message.strip()).splitlines()[-6:])]
    said = result.message.strip().splitlines()
    said = said if len(said) <= 7 else said[:1] + ["…"] + said[-5:]  # the resolver's first line, and its end
    return [head, "      " + "\n      ".join(said)]


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

    from jaxcompat.env import releases
    from jaxcompat.knowledge.rules import clause_holds, ranges

    pinned = {canonicalize_name(parse_requirement(r).name) for r in requirements
              if parse_requirement(r).url or any(s.operator == "==" for s in parse_requirement(r).specifier)}
    out: list[str] = []
    for r in result.results:
        f = matrix.failure(r.failure) if r.outcome == Outcome.REPRODUCED and r.failure else None
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
