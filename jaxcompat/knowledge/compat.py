"""Which releases work with which jax: for every jax release, the equinox, diffrax, optimistix
and lineax releases a run *verified*, those the rules only *infer*, the holes inside each range,
the jax releases that are broken themselves, and the newest full set known to work.

Stages, one function each: ``gather`` (release lists and what each release's metadata accepts:
the one stage that reads the package index), ``load_runs`` (the committed evidence, survey
observations and matrix cells, parsed into ``Run`` records), ``table`` (pure: one ``Row`` per
jax; the records live in model/compat.py), then ``answer`` and ``to_json`` (``compat.json`` for
``pins``; ``report.compat.render_md`` writes ``reports/compat.md`` for people from the same rows).
Regenerate both with ``python -m jaxcompat compat`` (``nox -s compat``).
"""

from __future__ import annotations

import json
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from jaxcompat._util.atomic import write_text
from jaxcompat._util.jsonfile import read_json
from jaxcompat.knowledge.outcomes import reclassify
from jaxcompat.knowledge.rules import clause_holds
from jaxcompat.model.compat import Hole, Range, Releases, Row, Run
from jaxcompat.model.matrix import Failure, Matrix
from jaxcompat.model.outcomes import FAILING_CELL_OUTCOMES, FAILING_OUTCOMES, parse_cells
from jaxcompat.model.vocab import CellOutcome, CellStatus, Outcome, TestStatus
from jaxcompat.plugin.packages import DEPENDENTS, ECOSYSTEM, ON_EQUINOX

COMMAND = "python -m jaxcompat compat"
CHECKS = "checks.json"  # the check runs recorded as evidence (`compat --add reports/check.json`)
SCHEMA = 1
FIRST_JAX, FIRST_EQX = "0.4.13", "0.10.0"
COMPANIONS = ON_EQUINOX
RANGED = ("equinox",) + COMPANIONS
# What a requirements set pins: the ecosystem, then every other distribution a rule names.
PINNED = ECOSYSTEM
JAX_ITSELF = frozenset({"jax", "jaxlib"})
BACKEND = "cpu"


def _key(v: str) -> Version:
    try:
        return Version(v)
    except InvalidVersion:
        return Version("0")


# -- the rules --------------------------------------------------------------------------------

def _active(failures) -> list[Failure]:
    return [f for f in failures if not f.advisory and (not f.backends or BACKEND in f.backends)]


def predicted(failures, versions: dict[str, str]) -> list[str]:
    """The non-advisory rules that predict a failure on these versions (CPU)."""
    return [f.id for f in _active(failures) if any(clause_holds(c, versions) for c in f.affects)]


def blamed(failure: Failure | None, versions: dict[str, str]) -> frozenset[str]:
    """The distributions a failure observed on ``versions`` is about: those its holding clauses
    name. A failure no rule describes any more is about everything (``"*"``)."""
    if failure is None:
        return frozenset({"*"})
    names = {canonicalize_name(d) for c in failure.affects if clause_holds(c, versions) for d in c}
    return frozenset(names or {"*"})


def verifies(run: Run, dist: str, failures) -> bool:
    """Whether ``run`` verifies the release of ``dist`` it installed with its jax.

    equinox: every package imported, no wrong verdict, and every known failure it saw (or that
    today's rules predict on its versions) is about another package (optimistix 0.0.11, diffrax
    0.6.0 on jax 0.4.36, NumPy 2 with an old jaxlib), never about equinox or the jax release alone.
    The other packages sit on equinox (and on
    each other): only a run with no known failure at all verifies them."""
    if dist not in run.versions or run.status != CellStatus.OK or run.wrong:
        return False
    if dist != "equinox":
        return run.clean
    by_id = {f.id: f for f in failures}
    for fid in run.failures + run.predicted:
        about = blamed(by_id.get(fid), run.versions)
        if "*" in about or "equinox" in about or about <= JAX_ITSELF:
            return False
    return True


def _seen_failing(run: Run, dist: str, failures) -> list[str]:
    """The known failures ``run`` saw that are about ``dist``."""
    by_id = {f.id: f for f in failures}
    return [fid for fid in run.failures
            if dist in (about := blamed(by_id.get(fid), run.versions)) or "*" in about]


def itself_broken(failures, jax: str, jaxlib: str | None, equinox: list[str]) -> list[Failure]:
    """The rules that make this jax release unusable whatever equinox goes with it: a rule on
    jax/jaxlib alone, or (when none) rules covering every equinox whose metadata accepts it."""
    base = {"jax": jax, **({"jaxlib": jaxlib} if jaxlib else {})}
    alone = [f for f in _active(failures)
             if any(set(c) <= JAX_ITSELF and clause_holds(c, base) for c in f.affects)]
    if alone or not equinox:
        return alone
    every = [f for f in _active(failures)
             if all(any(clause_holds(c, {**base, "equinox": e}) for c in f.affects) for e in equinox)]
    return every


# -- the table --------------------------------------------------------------------------------

def _range(dist: str, jax: str, base: dict[str, str], candidates: list[str], runs: list[Run],
           failures) -> Range:
    bad = {v: predicted(failures, {**base, dist: v}) for v in candidates}
    inferred = [v for v in candidates if not bad[v]]
    verified: dict[str, list[str]] = {}
    seen: dict[str, list[str]] = {}
    for run in runs:
        v = run.versions.get(dist)
        if run.jax != jax or v is None:
            continue
        if verifies(run, dist, failures):
            verified.setdefault(v, []).append(run.label)
        elif hit := _seen_failing(run, dist, failures):
            seen.setdefault(v, []).append(f"{run.label}: {', '.join(hit)}")
    span = sorted(set(inferred) | set(verified), key=_key)
    holes = []
    if span:
        lo, hi = _key(span[0]), _key(span[-1])
        inside = sorted(set(candidates) | set(seen), key=_key)
        for v in inside:
            if lo < _key(v) < hi and v not in verified and (bad.get(v) or v in seen):
                holes.append(Hole(v, tuple(bad.get(v) or ()), tuple(seen.get(v, ()))))
    return Range(dist, inferred, verified, holes)


def table(rel: Releases, failures, runs: list[Run]) -> list[Row]:
    """One row per jax release: what the rules allow, what the runs verified, the holes."""
    rows = []
    for jax in rel.jax:
        jaxlib = rel.jaxlib.get(jax)
        base = {"jax": jax, **({"jaxlib": jaxlib} if jaxlib else {})}
        eqx = rel.accepting("equinox", jax)
        broken = itself_broken(failures, jax, jaxlib, eqx)
        ranges: dict[str, Range] = {}
        if jaxlib and not broken:
            ranges["equinox"] = _range("equinox", jax, base, eqx, runs, failures)
            good_eqx = ranges["equinox"].inferred + list(ranges["equinox"].verified)
            for dist in COMPANIONS:
                ranges[dist] = _range(dist, jax, base, rel.accepting(dist, jax, good_eqx), runs, failures)
        clean = [r for r in runs if r.jax == jax and r.clean]
        best = max((_set_key(r) for r in clean), default=None)
        rows.append(Row(jax, jaxlib, [(f.id, f.title) for f in broken], [], ranges,
                        [r for r in clean if _set_key(r) == best]))
    usable = [r.jax for r in rows if r.installable and not r.broken]
    for row in rows:
        if row.broken or not row.installable:
            below = [j for j in usable if _key(j) < _key(row.jax)][-1:]
            above = [j for j in usable if _key(j) > _key(row.jax)][:1]
            row.instead = below + above
    return rows


def _set_key(run: Run) -> tuple:
    return tuple(_key(run.versions.get(d, "0")) for d in DEPENDENTS)


# -- the evidence -----------------------------------------------------------------------------

class EvidenceError(ValueError):
    pass


def _read(path: Path) -> dict:
    data = read_json(path, EvidenceError, unreadable="give a survey.json or a report of cells",
                     damaged="regenerate it with the command that wrote it")
    if not isinstance(data, dict):
        raise EvidenceError(f"{path}: expected a JSON object (a survey.json or a report of cells)")
    return data


def survey_runs(data: dict, matrix: Matrix) -> list[Run]:
    """The combinations of a ``survey.json`` (as judged when it was written; advisory failures
    dropped)."""
    advisory = {f.id for f in matrix.failures if f.advisory}
    out = []
    for c in data.get("combinations") or []:
        versions = {canonicalize_name(k): v for k, v in (c.get("versions") or {}).items()}
        versions.setdefault("jax", c["jax"])
        seen = tuple(f for f in c.get("failures") or [] if f not in advisory)
        out.append(Run("survey", f"survey jax {c['jax']} + equinox {c['equinox']}", c.get("python", ""),
                       c.get("status", ""), versions, seen, len(c.get("wrong") or []),
                       _unobserved(matrix.failures, versions, seen)))
    return out


def cell_runs(data: dict, matrix: Matrix, source: str) -> list[Run]:
    """The CPU cells of a report in the matrix schema (baseline.json, matrix.json, check.json,
    cells/<id>.json), judged again by today's rules."""
    cells = parse_cells(data) if "cells" in data else parse_cells({"cells": [data]})
    advisory = {f.id for f in matrix.failures if f.advisory}
    out = []
    for cell in cells:
        if cell.backend not in ("", BACKEND) or not cell.observed:
            continue
        cell = reclassify(cell, matrix.failures)
        seen = [r.failure for r in cell.results if r.outcome == Outcome.REPRODUCED and r.failure]
        if cell.outcome == CellOutcome.EXPECTED and cell.failure:
            seen.insert(0, cell.failure)
        wrong = sum(r.outcome in FAILING_OUTCOMES for r in cell.results) + (cell.outcome in FAILING_CELL_OUTCOMES)
        versions = {canonicalize_name(k): v for k, v in (cell.versions or cell.requested).items()}
        label = (f"matrix cell {cell.id}" if source == "matrix" else
                 f"check run {cell.id} of jax {versions.get('jax')} + equinox {versions.get('equinox')}"
                 if source == "check" else f"{source} {cell.id}")
        seen = tuple(f for f in dict.fromkeys(seen) if f not in advisory)
        out.append(Run(source, label, cell.python, cell.status, versions, seen, wrong,
                       _unobserved(matrix.failures, versions, seen)))
    return out


def _unobserved(failures, versions: dict[str, str], seen: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f for f in predicted(failures, versions) if f not in seen)


def load_runs(paths: list[Path], matrix: Matrix) -> list[Run]:
    """Every run in the evidence files: a ``survey.json`` or any report of cells."""
    runs: list[Run] = []
    for path in paths:
        data = _read(path)
        if "combinations" in data:
            runs += survey_runs(data, matrix)
        elif "cells" in data or "results" in data:
            source = ("matrix" if path.name in ("baseline.json", "matrix.json")
                      else "check" if path.name in (CHECKS, "check.json") else path.stem)
            runs += cell_runs(data, matrix, source)
        else:
            raise EvidenceError(f"{path}: neither a survey.json (\"combinations\") nor a report of cells "
                                "(\"cells\"); pass reports/survey.json, reports/baseline.json or a matrix report")
    return runs


# -- the answers ----------------------------------------------------------------------------

def cause(row: Row) -> str:
    """Why there is nothing to pin for this jax, in one line (empty when there is something)."""
    instead = f"; use {' or '.join(row.instead)}" if row.instead else ""
    if row.broken:
        rules = "; ".join(f"{fid}, {title}" for fid, title in row.broken)
        return f"jax {row.jax} itself: {rules}{instead}"
    if not row.installable:
        return f"jax {row.jax} cannot be installed from the package index on CPU{instead}"
    if not row.ranges["equinox"].inferred and not row.ranges["equinox"].verified:
        return f"jax {row.jax}: no equinox release without a known failure{instead}"
    return ""


def pinned(failures) -> list[str]:
    """What a requirements set pins: the ecosystem, then every other distribution a rule names
    (NumPy, SciPy, jaxtyping: a verified set is only verified with the versions it ran)."""
    named = sorted({canonicalize_name(d) for f in failures for c in f.affects for d in c} - set(PINNED))
    return list(PINNED) + named


def requirement_lines(row: Row, failures=()) -> list[tuple[str, str]]:
    """(requirement, evidence) for the newest set known to work with this jax: a clean run's
    versions when one exists, else jax/jaxlib/equinox inferred from the rules only."""
    if cause(row):
        return []
    if row.newest:
        run = row.newest[0]
        who = " and ".join(f"{r.label} (Python {r.python})" for r in row.newest)
        out = [(f"jax=={run.versions['jax']}", f"verified: {who}; cpu, no known failure")]
        for d in pinned(failures)[1:]:
            if d in run.versions:
                why = "the same run" if d in PINNED else "the same run (as installed there; a rule names it)"
                out.append((f"{d}=={run.versions[d]}", f"verified: {why}"))
        return out
    eqx = row.ranges["equinox"]
    newest_eqx = max(eqx.inferred + list(eqx.verified), key=_key)
    out = [(f"jax=={row.jax}", "inferred from rules only: no run saw a full set with this jax"),
           (f"jaxlib=={row.jaxlib}", "the jaxlib jax's own metadata asks for")]
    ev = (f"verified for equinox by {eqx.verified[newest_eqx][0]}" if newest_eqx in eqx.verified
          else "inferred from rules only")
    out.append((f"equinox=={newest_eqx}", ev))
    return out + constraints(row, failures)


NEGATED = {">=": "<", "<": ">=", ">": "<=", "<=": ">", "==": "!="}
JAX_DEPENDS = ("numpy", "scipy")  # installed with jax anyway: a constraint on them adds no package


def _unpinned(row: Row, failures) -> list[tuple[Failure, dict[str, SpecifierSet]]]:
    """For pins inferred from the rules: each rule that still applies with jax, jaxlib and the
    pinned equinox depending on a package left unpinned, with the ranges of those packages."""
    if cause(row) or row.newest:
        return []
    core = {"jax": row.jax, "jaxlib": row.jaxlib or "",
            "equinox": max(row.ranges["equinox"].inferred + list(row.ranges["equinox"].verified), key=_key)}
    out = []
    for f in _active(failures):
        for c in f.affects:
            rest = {canonicalize_name(d): spec for d, spec in c.items() if d not in core}
            if rest and clause_holds({d: spec for d, spec in c.items() if d in core}, core):
                out.append((f, rest))
    return out


def _constraint(rest: dict[str, SpecifierSet]) -> str | None:
    """``numpy<2`` for a rule on ``numpy>=2``: one bound on a package jax installs anyway."""
    if len(rest) != 1:
        return None
    (dist, spec), = rest.items()
    specs = list(spec)
    if dist not in JAX_DEPENDS or len(specs) != 1 or specs[0].operator not in NEGATED:
        return None
    return f"{dist}{NEGATED[specs[0].operator]}{specs[0].version}"


def constraints(row: Row, failures) -> list[tuple[str, str]]:
    return [(c, f"inferred from rules only: avoids {f.id}") for f, rest in _unpinned(row, failures)
            if (c := _constraint(rest))]


def cautions(row: Row, failures) -> list[str]:
    """What to avoid among the packages left unpinned that no constraint line covers."""
    return [f"avoid {' with '.join(f'{d}{spec}' for d, spec in rest.items())} ({f.id})"
            for f, rest in _unpinned(row, failures) if not _constraint(rest)]


def answer(row: Row, failures=()) -> str:
    """The one-line answer to "which newest releases are known to work with my jax?"."""
    if c := cause(row):
        return c
    reqs = requirement_lines(row, failures)
    pins = " ".join(r for r, _ in reqs if r.split("==")[0] in RANGED + ("chex",))
    if row.newest:
        return f"{pins} — verified: {' and '.join(r.label for r in row.newest)}"
    eqx = row.ranges["equinox"]
    ev = reqs[2][1] if reqs[2][1].startswith("verified") else "inferred from rules only"
    return (f"{pins} — {ev} (no run saw a full set with this jax without a known failure); rules allow "
            f"equinox {eqx.inferred_span}")


def to_json(rows: list[Row], sources: list[str], failures=()) -> dict:
    def rng(x: Range) -> dict:
        return {"inferred": x.inferred_ends, "verified": {v: x.verified[v] for v in sorted(x.verified, key=Version)},
                "holes": [{"version": h.version, "rules": list(h.rules), "seen": list(h.seen)} for h in x.holes]}

    return {"schema": SCHEMA, "generated_by": COMMAND, "sources": sources, "rows": [
        {"jax": r.jax, "jaxlib": r.jaxlib, "cause": cause(r), "broken": [list(b) for b in r.broken],
         "instead": r.instead, "answer": answer(r, failures),
         "requirements": [{"requirement": q, "evidence": e} for q, e in requirement_lines(r, failures)],
         "verified_set": bool(r.newest), "cautions": cautions(r, failures),
         "ranges": {d: rng(x) for d, x in r.ranges.items()}} for r in rows]}


def record(report: Path, reports_dir: Path) -> list[str]:
    """Keep the cells of a check report (``check.json``) in ``reports/checks.json``, compacted
    (what pytest saw, the error of each case that did not pass; no tracebacks), so that a check
    run is evidence the table is regenerated from. A cell with the same id is replaced."""
    data = _read(report)
    cells = parse_cells(data) if "cells" in data else parse_cells({"cells": [data]}) if "results" in data else []
    if not cells:
        raise EvidenceError(f"{report}: not a report of cells (a check.json, matrix.json or cells/<id>.json)")
    path = reports_dir / CHECKS
    kept = {c.id: c for c in (parse_cells(_read(path)) if path.is_file() else [])}
    for cell in cells:
        for r in cell.results:
            r.traceback = ""
            if r.status == TestStatus.PASSED:
                r.message = ""
        cell.deprecations = []
        kept[cell.id] = cell
    write_text(path, json.dumps({"schema": 1, "generated_by": f"{COMMAND} --add reports/check.json",
                                 "cells": [_compact(c) for c in kept.values()]}, indent=1) + "\n")
    return [c.id for c in cells]


RAW = ("case", "status", "outcome", "failure", "error_types", "message", "duration_s")  # what judging again needs


def _compact(cell) -> dict:
    d = cell.to_dict()
    d["results"] = [{k: r[k] for k in RAW if r.get(k)} for r in d["results"]]
    return {k: v for k, v in d.items() if v not in ("", [], {}, None) or k in ("results", "versions")}


def default_evidence(reports_dir: Path) -> list[Path]:
    return [p for p in (reports_dir / "survey.json", reports_dir / "baseline.json", reports_dir / CHECKS)
            if p.is_file()]
