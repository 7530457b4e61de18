"""The survey: sample the jax × equinox release space off the matrix and score our verdicts.

Stages, one function each: ``space`` (every jax release from 0.4.13 with every equinox whose own
metadata accepts it), ``sample`` (both sides of every rule bound, the first and last equinox of
each jax minor, then seeded random fill; combinations already in matrix.toml left out), ``run``
(each combination an ordinary cell: same resolution, cache, runner, rules; parallel, resumable,
shardable), and ``score`` (stored observations judged by today's rules). The records are
model/survey.py (``Combo``, ``Space``) and knowledge/survey.py (``Observation``); the reports are
rendered by report/survey.py (Markdown) and report/survey_html.py (the map).
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from jaxcompat._util.text import quiet
from jaxcompat.env import releases
from jaxcompat.knowledge import compat
from jaxcompat.knowledge.outcomes import reclassify
from jaxcompat.knowledge.survey import Observation
from jaxcompat.model.compat import Releases, Row
from jaxcompat.model.matrix import ANY, AUTO, Cell, Matrix
from jaxcompat.model.outcomes import CellResult
from jaxcompat.model.survey import Combo, Space
from jaxcompat.model.vocab import CellOutcome, CellStatus, Outcome
from jaxcompat.plugin.packages import COMPANIONS, ON_EQUINOX
from jaxcompat.report import reports
from jaxcompat.report.outputs import SurveyReport
from jaxcompat.run.matrix import run_cells

RIGHT = (Outcome.PASS, Outcome.REPRODUCED)


def combo_cell(combo: Combo) -> Cell:
    """A combination as an ordinary cell: same resolution, cache, runner and rules as matrix.toml's."""
    pins = {"jax": combo.jax, "equinox": combo.equinox, **{d: ANY for d in COMPANIONS}}
    return Cell(id=combo.id, python=AUTO, backend="cpu", pins=pins,
                note="survey combination", added=COMPANIONS)


def space(rel: Releases, cache: Path) -> Space:
    """Every jax release of the release space paired with every equinox release whose metadata
    accepts it. ``rel`` is the one walk of the release space (``operations.compat_report.gather``),
    the same the compatibility table is built on."""
    eqx = rel.packages.get("equinox", ())
    pairs = {(j, e.version) for e in eqx for j in rel.jax if e.jax.contains(Version(j), prereleases=True)}
    dates = {d: {v: m["date"] for v, m in releases.release_info(d, cache).items()} for d in ("jax", "equinox")}
    return Space(list(rel.jax), [e.version for e in eqx], pairs, dates)


def _bounds(spec: SpecifierSet, ordered: list[str]) -> list[tuple[str, str]]:
    """(just inside, just outside) release pairs for each bound of ``spec``."""
    out = []
    for s in spec:
        if s.operator == "!=":
            continue
        inside = [v for v in ordered if s.contains(Version(v), prereleases=True)]
        outside = [v for v in ordered if not s.contains(Version(v), prereleases=True)]
        b = Version(s.version)
        lo_in = [v for v in inside if Version(v) >= b][:1] + [v for v in inside if Version(v) <= b][-1:]
        for i in dict.fromkeys(lo_in):
            # the outside release adjacent to this inside one
            near = [o for o in outside if abs(ordered.index(o) - ordered.index(i)) == 1]
            out += [(i, o) for o in near]
    return out


def boundary_combos(matrix: Matrix, sp: Space) -> list[Combo]:
    """Both sides of every bound of every rule, on the jax side and on the equinox side."""
    out: list[Combo] = []
    for f in matrix.failures:
        for clause in f.affects:
            jspec, espec = clause.get("jax", SpecifierSet()), clause.get("equinox", SpecifierSet())
            for inside, outside in _bounds(jspec, sp.jax):
                for j in (inside, outside):
                    eqs = [e for e in sp.equinox_for(j) if espec.contains(Version(e), prereleases=True)]
                    if eqs:
                        out.append(Combo(j, eqs[-1]))
            for inside, outside in _bounds(espec, sp.equinox):
                for e in (inside, outside):
                    js = [j for j in sp.jax_for(e) if jspec.contains(Version(j), prereleases=True)]
                    if js:
                        out.append(Combo(js[-1], e))
    return out


def minor_combos(sp: Space) -> list[Combo]:
    """The first and the last equinox that co-install with the last release of each jax minor."""
    last: dict[tuple[int, int], str] = {}
    for j in sp.jax:
        last[Version(j).release[:2]] = j
    out = []
    for j in last.values():
        eqs = sp.equinox_for(j)
        out += [Combo(j, eqs[0]), Combo(j, eqs[-1])] if eqs else []
    return out


def matrix_pairs(matrix: Matrix) -> set[tuple[str, str]]:
    return {(c.pins["jax"], c.pins["equinox"]) for c in matrix.cells
            if "jax" in c.pins and "equinox" in c.pins and c.backend == "cpu"}


def sample(matrix: Matrix, sp: Space, *, limit: int, seed: int) -> list[Combo]:
    """Deterministic: boundaries, then minors, then seeded random fill; matrix cells left out."""
    taken = matrix_pairs(matrix)
    chosen: dict[Combo, None] = {}
    for c in boundary_combos(matrix, sp) + minor_combos(sp):
        if (c.jax, c.equinox) not in taken and (c.jax, c.equinox) in sp.pairs:
            chosen.setdefault(c, None)
    rest = sorted(p for p in sp.pairs if p not in taken and Combo(*p) not in chosen)
    random.Random(seed).shuffle(rest)
    for p in rest:
        if len(chosen) >= limit:
            break
        chosen.setdefault(Combo(*p), None)
    return list(chosen)[:limit]


def shard(combos: list[Combo], spec: str | None) -> list[Combo]:
    """``i/n``: every n-th combination from the i-th (1-based)."""
    if not spec:
        return combos
    i, n = (int(x) for x in spec.split("/"))
    if not 1 <= i <= n:
        raise ValueError(f"--shard {spec}: write i/n with 1 <= i <= n")
    return combos[i - 1::n]


def run(matrix: Matrix, combos: list[Combo], *, jobs: int, state_dir: Path, out_dir: Path,
        fresh: bool = False, cases: list[str] | None = None, use_cache: bool = True,
        progress=quiet) -> tuple[list[CellResult], bool]:
    """Run the combinations not yet observed (all with ``fresh``); show progress and time left.
    With ``cases``, only those cases run, into ``out_dir/extra``: their results are laid over the
    stored observations (a case module added since the survey ran costs only its own time)."""
    target = out_dir / "extra" if cases else out_dir
    done = {p.stem for p in (target / "cells").glob("*.json")} if not fresh else set()
    todo = [c for c in combos if c.id not in done or _unfinished(target / "cells" / f"{c.id}.json")]
    if cases:  # lay over what was observed: only combinations whose packages imported
        todo = [c for c in todo
                if (b := read_observed(out_dir / "cells" / f"{c.id}.json")) is not None and b.status == CellStatus.OK]
    progress(f"survey: {len(combos)} combinations, {len(combos) - len(todo)} already observed, "
             f"{len(todo)} to run" + (f" (cases: {' '.join(cases)})" if cases else ""))
    t0, count = time.monotonic(), [0]

    def tick(line: str) -> None:
        count[0] += 1
        left = (time.monotonic() - t0) / count[0] * (len(todo) - count[0])
        progress(f"{line}  (~{left / 60:.0f} min left)")

    return run_cells(matrix, [combo_cell(c) for c in todo], jobs=jobs, state_dir=state_dir,
                     reports_dir=target, case_args=cases, compile_bytecode=False, use_cache=use_cache,
                     progress=tick)


def _unfinished(path: Path) -> bool:
    """Not an observation yet: unreadable, interrupted, or stopped by the harness itself."""
    return read_observed(path) is None


# -- scoring ----------------------------------------------------------------------------------

def read_observed(path: Path) -> CellResult | None:
    try:
        cell = reports.load_cell(path)
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return cell if cell.observed else None


def nothing_stored(out_dir: Path, command: str) -> str:
    """Why ``--report-only`` with nothing stored refuses (a fresh clone keeps no observation), said
    so that nothing is written over the committed reports."""
    return (f"{command} --report-only: no stored observation in {out_dir / 'cells'} (a fresh clone keeps "
            "none); run it first, or copy the shards' reports/survey/ there. The committed reports are left as "
            "they are.")


def overlay(base: CellResult, extra: CellResult) -> CellResult:
    """``base`` with the results of a later partial run (same environment) laid over it."""
    if base.status != CellStatus.OK or extra.status != CellStatus.OK:
        return base if base.status != CellStatus.OK else extra
    newer = {r.case for r in extra.results}
    base.results = [r for r in base.results if r.case not in newer] + list(extra.results)
    base.deprecations += [d for d in extra.deprecations if d not in base.deprecations]
    return base


def load_observations(matrix: Matrix, out_dir: Path, combos: list[Combo] | None = None) -> list[Observation]:
    wanted = {c.id for c in combos} if combos is not None else None
    obs = []
    for path in sorted((out_dir / "cells").glob("survey-*.json")):
        if wanted is not None and path.stem not in wanted:
            continue
        cell = read_observed(path)
        if cell is None:
            continue
        extra = read_observed(out_dir / "extra" / "cells" / path.name)
        if extra is not None:
            cell = overlay(cell, extra)
        j, e = cell.requested["jax"], cell.requested["equinox"]
        obs.append(Observation(Combo(j, e), reclassify(cell, matrix.failures)))
    return obs


def score(obs: list[Observation]) -> dict:
    verdicts = [r for o in obs for r in o.cell.results if r.outcome != Outcome.SKIPPED]
    no_cell_verdict = (CellStatus.OK, CellStatus.PYTHON_MISSING, CellStatus.BACKEND_MISSING)
    cell_verdicts = [o for o in obs if o.cell.status not in no_cell_verdict]
    right = (sum(r.outcome in RIGHT for r in verdicts)
             + sum(o.cell.outcome == CellOutcome.EXPECTED for o in cell_verdicts))
    total = len(verdicts) + len(cell_verdicts)
    clean = sum(not o.wrong for o in obs)
    causes: dict[tuple[str, str, str], list[str]] = {}
    for o in obs:
        for key in o.wrong:
            causes.setdefault(key, []).append(f"jax {o.combo.jax} + equinox {o.combo.equinox}")
    return {"combinations": len(obs), "installable": sum(o.installable for o in obs),
            "verdicts": total, "right": right, "right_share": round(right / total, 5) if total else 1.0,
            "clean_combinations": clean, "clean_share": round(clean / len(obs), 5) if obs else 1.0,
            "wrong": [{"case": k[0], "outcome": k[1], "error_type": k[2], "combinations": v}
                      for k, v in sorted(causes.items(), key=lambda kv: -len(kv[1]))]}


# -- the table users ask for most -------------------------------------------------------------

def compat_rows(matrix: Matrix, rel: Releases, sp: Space, obs: list[Observation]) -> list[dict]:
    """Per surveyed jax release: the oldest and newest equinox, diffrax, optimistix and lineax that
    the rules and the metadata allow — the rows of the one compatibility table
    (``knowledge.compat.table``) — each equinox end marked by what the survey saw there (clean /
    failed / not surveyed)."""
    seen = {(o.combo.jax, o.combo.equinox): o for o in obs}
    advisory = {f.id for f in matrix.failures if f.advisory}
    surveyed = set(sp.jax)
    rows = []
    for row in compat.table(rel, matrix.failures, []):
        if row.jax not in surveyed:
            continue
        if not row.installable:
            rows.append({"jax": row.jax, "installable": False})
            continue
        out = {"jax": row.jax, "jaxlib": row.jaxlib, "installable": True, "equinox": _ends(row, "equinox")}
        out["observed"] = {e: _mark(seen.get((row.jax, e)), advisory) for e in (out["equinox"] or [])}
        out.update({dist: _ends(row, dist) for dist in ON_EQUINOX})
        rows.append(out)
    return rows


def _ends(row: Row, dist: str) -> list[str] | None:
    """The oldest and newest release of ``dist`` the rules and the metadata allow on the row's jax."""
    rng = row.ranges.get(dist)
    return list(rng.inferred_ends) if rng is not None and rng.inferred_ends else None


def _mark(o: Observation | None, advisory: set[str] = frozenset()) -> str:
    """What the survey saw at a range end; an advisory rule (a usage pitfall on every release)
    is no failure of the combination."""
    if o is None:
        return "not surveyed"
    return "failed" if ([f for f in o.failures if f not in advisory] or o.wrong) else "clean"


# -- output -----------------------------------------------------------------------------------

def output(summary: dict, obs: list[Observation], rows: list[dict], sp: Space, matrix: Matrix, meta: dict,
           stem: str = "survey") -> SurveyReport:
    """The survey's report (``report.emit`` writes ``stem``.json/.md/.html; ``survey-edges`` for the
    edge search, beside the sampled survey)."""
    data = {"schema": 1, **meta, "summary": summary, "compat": rows,
            "combinations": [{"jax": o.combo.jax, "equinox": o.combo.equinox, "python": o.cell.python,
                              "status": o.cell.status, "outcome": o.cell.outcome, "failures": o.failures,
                              "wrong": [list(w) for w in o.wrong], "versions": o.cell.versions} for o in obs]}
    return SurveyReport(stem, data=data, summary=summary, observations=obs, rows=rows, meta=meta, space=sp,
                        matrix_pairs=matrix_pairs(matrix))
