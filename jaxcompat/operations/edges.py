"""The survey as a search for edges: leave no region of the jax x equinox space unseen.

Instead of sampling ~100 pairs at random, walk every equinox release's column of jax releases
(those its metadata accepts) and find where anything changes. A combination's *outcome
signature* is what the cases did, with no rule applied: each failing case and its error
signature (``signature.py``), or the cell's status and error when it stopped early. A column is
observed at its two ends and at seeds (every ``stride``-th jax, and both sides of every edge
found in a neighbouring column, so a failure region seen in one column is followed into the
next equinox releases, as far as it goes); between two
neighbouring observations with different signatures, bisection finds the edge: O(log n)
environments per edge. Between two neighbours with one signature nothing is run: the pairs there
are *implied* by the edges on both sides. Rounds of steps run in parallel; every observation is
a stored survey cell, so the search is resumable, shardable by column, and a cached observation
costs nothing. The coverage section it reports is rendered by report/edges.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from jaxcompat._util.text import quiet
from jaxcompat.knowledge import signature
from jaxcompat.model.matrix import Matrix
from jaxcompat.model.outcomes import CellResult
from jaxcompat.model.survey import Combo, Space
from jaxcompat.model.vocab import CellStatus, TestStatus
from jaxcompat.operations.survey import read_observed, run

STRIDE = 6


def outcome_signature(cell: CellResult) -> str:
    """What a combination showed, rule-free: ``clean``, the failing cases with their error
    signatures, or the cell's status (and its error, for an import error)."""
    if cell.status == CellStatus.IMPORT_ERROR:
        return f"<import-error> {signature.of_cell(cell.status, cell.message).key}"
    if cell.status != CellStatus.OK:
        return f"<{cell.status}>"
    parts = sorted(f"{r.case} {signature.of(r.raw()).key}" for r in cell.results
                   if r.raw().status not in (TestStatus.PASSED, TestStatus.SKIPPED))
    return "\n".join(parts) or "clean"


@dataclass
class Column:
    equinox: str
    jax: list[str]  # the jax releases equinox's metadata accepts, oldest first
    seen: dict[str, str] = field(default_factory=dict)  # jax -> outcome signature

    def edges(self) -> list[tuple[str, str]]:
        """Neighbouring jax releases (in this column) with different signatures."""
        pos = [j for j in self.jax if j in self.seen]
        return [(a, b) for a, b in zip(pos, pos[1:], strict=False)
                if self.seen[a] != self.seen[b] and self.jax.index(b) - self.jax.index(a) == 1]

    def open(self) -> list[tuple[str, str]]:
        """Observed neighbours with different signatures and releases between them: not yet bisected."""
        pos = [j for j in self.jax if j in self.seen]
        return [(a, b) for a, b in zip(pos, pos[1:], strict=False)
                if self.seen[a] != self.seen[b] and self.jax.index(b) - self.jax.index(a) > 1]

    def implied(self) -> list[str]:
        """Unobserved releases between two observations with one signature."""
        pos = [j for j in self.jax if j in self.seen]
        out = []
        for a, b in zip(pos, pos[1:], strict=False):
            if self.seen[a] == self.seen[b]:
                out += self.jax[self.jax.index(a) + 1:self.jax.index(b)]
        return out


@dataclass
class Plan:
    columns: list[Column]
    stride: int = STRIDE

    def next_steps(self) -> list[Combo]:
        """The combinations the search needs next: ends and seeds not yet observed, then the middle
        of every open interval."""
        need: list[Combo] = []
        for i, c in enumerate(self.columns):
            if not c.jax:
                continue
            # both sides of every edge found in the neighbouring columns (regions span neighbours)
            near = {j for n in self.columns[max(i - 1, 0):i + 2] if n is not c for a, b in n.edges() for j in (a, b)}
            seeds = [c.jax[0], c.jax[-1], *c.jax[::self.stride], *[j for j in c.jax if j in near]]
            fresh = [j for j in dict.fromkeys(seeds) if j not in c.seen]
            if fresh:
                need += [Combo(j, c.equinox) for j in fresh]
                continue
            for a, b in c.open():
                i, k = c.jax.index(a), c.jax.index(b)
                need.append(Combo(c.jax[(i + k) // 2], c.equinox))
        return need

    def steps_left(self) -> int:
        """Environments still needed: seeds not observed, and ~log2(gap) per open interval."""
        import math

        seeds = len(self.next_steps()) if any(not c.jax or c.jax[0] not in c.seen or c.jax[-1] not in c.seen
                                              for c in self.columns) else 0
        return seeds + sum(math.ceil(math.log2(c.jax.index(b) - c.jax.index(a)))
                           for c in self.columns for a, b in c.open())

    def coverage(self) -> dict:
        pairs = sum(len(c.jax) for c in self.columns)
        observed = sum(len([j for j in c.jax if j in c.seen]) for c in self.columns)
        implied = sum(len(c.implied()) for c in self.columns)
        unseen = pairs - observed - implied
        return {"pairs": pairs, "observed": observed, "implied": implied, "unseen": unseen,
                "edges": sum(len(c.edges()) for c in self.columns),
                "open": sum(len(c.open()) for c in self.columns),
                "columns": len(self.columns),
                "columns_done": sum(1 for c in self.columns if c.jax and not c.open()
                                    and c.jax[0] in c.seen and c.jax[-1] in c.seen)}


def columns(sp: Space, *, equinox: str | None = None, jax: str | None = None,
            shard: str | None = None) -> list[Column]:
    eq = [e for e in sp.equinox if not equinox or SpecifierSet(equinox).contains(Version(e), prereleases=True)]
    if shard:
        i, n = (int(x) for x in shard.split("/"))
        if not 1 <= i <= n:
            raise ValueError(f"--shard {shard}: write i/n with 1 <= i <= n")
        eq = eq[i - 1::n]
    jspec = SpecifierSet(jax) if jax else None
    return [Column(e, [j for j in sp.jax_for(e) if jspec is None or jspec.contains(Version(j), prereleases=True)])
            for e in eq]


def observe_stored(plan: Plan, out_dir: Path) -> None:
    """Fill every column with what is stored (any earlier survey's observations count)."""
    for c in plan.columns:
        for j in c.jax:
            if j in c.seen:
                continue
            cell = read_observed(out_dir / "cells" / f"{Combo(j, c.equinox).id}.json")
            if cell is not None:
                c.seen[j] = outcome_signature(cell)


def search(matrix: Matrix, plan: Plan, *, jobs: int, state_dir: Path, out_dir: Path, budget: int,
           use_cache: bool = True, progress=quiet) -> dict:
    """Rounds until no column has an open interval, or ``budget`` new environments are spent."""
    spent, rounds, t0, interrupted = 0, 0, time.monotonic(), False
    observe_stored(plan, out_dir)
    while True:
        todo = plan.next_steps()
        if not todo or spent >= budget:
            break
        todo = todo[:budget - spent]
        rounds += 1
        progress(f"edges: round {rounds}: {len(todo)} combination(s) ({spent} run so far, budget {budget})")
        _, interrupted = run(matrix, todo, jobs=jobs, state_dir=state_dir, out_dir=out_dir, use_cache=use_cache,
                             progress=progress)
        spent += len(todo)
        before = sum(len(c.seen) for c in plan.columns)
        observe_stored(plan, out_dir)
        if interrupted or sum(len(c.seen) for c in plan.columns) == before:
            break  # nothing new could be stored: do not spin
    cost = {"rounds": rounds, "environments": spent, "seconds": round(time.monotonic() - t0, 1),
            "interrupted": interrupted, "left": plan.steps_left(), **plan.coverage()}
    if spent:
        _ledger(out_dir, {"date": time.strftime("%Y-%m-%d"), "jobs": jobs, "environments": spent,
                          "seconds": cost["seconds"]})
    return cost


LEDGER = "edges-cost.json"


def _ledger(out_dir: Path, run: dict | None = None) -> list[dict]:
    """Every search run's cost, kept beside the observations (a resumed search adds to it)."""
    import json

    from jaxcompat._util.atomic import write_text

    path = out_dir / LEDGER
    try:
        runs = json.loads(path.read_text())
    except (OSError, ValueError):
        runs = []
    if run is not None:
        runs.append(run)
        write_text(path, json.dumps(runs, indent=1) + "\n")
    return runs


def stored_coverage(reports_dir: Path) -> str:
    """The coverage section of the last edge search (``survey-edges.json``), for ``survey.md``."""
    import json

    try:
        return json.loads((reports_dir / "survey-edges.json").read_text(encoding="utf-8")).get("coverage_md", "")
    except (OSError, ValueError, AttributeError):
        return ""


def cost_line(cost: dict, jobs: int, out_dir: Path | None = None, space_pairs: int = 0) -> str:
    """What the search cost so far (every run in the ledger), and what the rest would cost at the
    same pace: this scope, the whole space, here and on the 8 CI shards."""
    runs = _ledger(out_dir) if out_dir is not None else [cost]
    n, secs = sum(r.get("environments", 0) for r in runs), sum(r.get("seconds", 0.0) for r in runs)
    if not n:
        return f"No environment built yet ({cost.get('left', 0)} steps known to be needed)."
    per = secs / n
    jobs = max((r.get("jobs", jobs) for r in runs), default=jobs)
    left = cost.get("left", 0)
    lines = [f"Cost so far: {n} environments in {secs / 60:.0f} min over {len(runs)} run(s), {jobs} job(s) on "
             f"2 cores ({per:.0f} s of wall time each). To close this scope: ~{left} more "
             f"(~{left * per / 60:.0f} min here)."]
    if space_pairs and cost.get("pairs"):
        rate = (cost["observed"] + left) / cost["pairs"]
        total = round(rate * space_pairs)
        lines.append(f"The whole space ({space_pairs} jax x equinox pairs) at this scope's rate of "
                     f"{rate:.2f} environments per pair: ~{total} environments, ~{total * per / 3600:.1f} h here, "
                     f"~{total * per / 8 / 3600:.1f} h on the 8 CI shards (`.github/workflows/survey.yml`, "
                     "one job each); cached observations cost nothing on a re-run.")
    return " ".join(lines)


def draft_unexplained(matrix: Matrix, obs, reports_dir: Path) -> str:
    """Draft a rule for every signature no rule explains among the survey's observations."""
    from jaxcompat.knowledge import drafts
    from jaxcompat.report import draftrules

    cells = [o.cell for o in obs]
    groups = drafts.unexplained(cells)
    if not groups:
        return ""
    made = [drafts.draft(g, drafts.box(g, cells), "the survey's observations") for g in groups.values()]
    path = draftrules.write(reports_dir / draftrules.FILE, made, matrix)
    report = drafts.verify(cells, matrix, path)
    return (f"drafted {len(made)} rule(s) for signatures no rule explains: {path}; verified: "
            f"{report['turned_reproduced']} results become reproduced, {len(report['other_changes'])} other changes")
