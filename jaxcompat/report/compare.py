"""What changed between two runs (two lists of cell records): cells added or removed, outcomes
that moved, versions that moved. Used by ``report --compare`` and the nightly ``latest`` session."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from jaxcompat._util.text import first_line
from jaxcompat.model.outcomes import FAILING_OUTCOMES, CellResult
from jaxcompat.model.vocab import CellStatus, Outcome

CAUGHT = FAILING_OUTCOMES | {Outcome.REPRODUCED}  # a known failure or a failure of the run
ABSENT = "absent"  # a case one of the two runs does not have


class Moved(NamedTuple):
    """One case whose outcome changed between two runs."""

    cell: str
    case: str
    before: str
    after: str
    message: str  # the new result's


class VersionMove(NamedTuple):
    """One installed distribution whose version changed in a cell."""

    cell: str
    dist: str
    before: str | None  # None: not installed
    after: str | None


class StatusMove(NamedTuple):
    """A cell whose status changed (e.g. ok -> import-error)."""

    cell: str
    before: str
    after: str


@dataclass
class Diff:
    added_cells: list[str] = field(default_factory=list)
    removed_cells: list[str] = field(default_factory=list)
    moved: list[Moved] = field(default_factory=list)
    versions: list[VersionMove] = field(default_factory=list)
    status: list[StatusMove] = field(default_factory=list)
    # cases the earlier run did not have (added to the suite since), that do not fail the run:
    # new knowledge, said in one line, not one "absent -> pass" each
    new_cases: list[Moved] = field(default_factory=list)
    gone_cases: list[Moved] = field(default_factory=list)  # cases the earlier run had, not run now

    @property
    def new_failures(self) -> list[Moved]:
        return [m for m in self.moved if m.after in CAUGHT and m.before not in CAUGHT]

    @property
    def fixed(self) -> list[Moved]:
        return [m for m in self.moved if m.before in CAUGHT and m.after in (Outcome.PASS, Outcome.STALE)]

    @property
    def regressed(self) -> bool:
        return any(m.after in FAILING_OUTCOMES for m in self.moved) or any(
            s.after != CellStatus.OK and s.before == CellStatus.OK for s in self.status)

    @property
    def empty(self) -> bool:
        return not (self.added_cells or self.removed_cells or self.moved or self.versions or self.status
                    or self.new_cases or self.gone_cases)


def compare(old: list[CellResult], new: list[CellResult], *, match_single: bool = False) -> Diff:
    """Compare runs cell by cell (by id). With ``match_single``, two one-cell runs are compared
    whatever their ids (tonight's newest releases against the baseline's)."""
    old_cells, new_cells = {c.id: c for c in old}, {c.id: c for c in new}
    if match_single and len(old_cells) == 1 and len(new_cells) == 1:
        (_, ocell), (nid, ncell) = next(iter(old_cells.items())), next(iter(new_cells.items()))
        old_cells, new_cells = {nid: ocell}, {nid: ncell}
    d = Diff(added_cells=sorted(set(new_cells) - set(old_cells)),
             removed_cells=sorted(set(old_cells) - set(new_cells)))
    for cid in [c for c in new_cells if c in old_cells]:
        o, n = old_cells[cid], new_cells[cid]
        if o.status != n.status:
            d.status.append(StatusMove(cid, o.status, n.status))
        for dist in sorted(set(o.versions) | set(n.versions)):
            if o.versions.get(dist) != n.versions.get(dist):
                d.versions.append(VersionMove(cid, dist, o.versions.get(dist), n.versions.get(dist)))
        oo, no = {r.case: r for r in o.results}, {r.case: r for r in n.results}
        for case in sorted(set(oo) | set(no)):
            before = oo[case].outcome if case in oo else ABSENT
            after = no[case].outcome if case in no else ABSENT
            if before == after:
                continue
            move = Moved(cid, case, before, after, no[case].message if case in no else "")
            if before == ABSENT and after not in FAILING_OUTCOMES:
                d.new_cases.append(move)
            elif after == ABSENT and o.status == n.status:
                d.gone_cases.append(move)
            else:
                d.moved.append(move)
    return d


def render(diff: Diff, old_label: str = "baseline", new_label: str = "this run") -> str:
    if diff.empty:
        return f"No change between {old_label} and {new_label}."
    out = [f"Changes from {old_label} to {new_label}:"]
    for c in diff.added_cells:
        out.append(f"  + cell {c} (new)")
    for c in diff.removed_cells:
        out.append(f"  - cell {c} (gone)")
    for s in diff.status:
        out.append(f"  cell {s.cell}: status {s.before} -> {s.after}")
    if diff.new_cases:
        out.append(f"  + {len(diff.new_cases)} case(s) not in the {old_label} (added to the suite since), "
                   f"none failing the run: {_tally(diff.new_cases)}")
    if diff.gone_cases:
        names = ", ".join(m.case for m in diff.gone_cases[:5]) + (" …" if len(diff.gone_cases) > 5 else "")
        out.append(f"  - {len(diff.gone_cases)} case(s) of the {old_label} not run in {new_label}: {names}")
    if diff.versions:
        out.append("  versions that moved:")
        for v in diff.versions:
            out.append(f"    {v.cell}: {v.dist} {v.before or '(absent)'} -> {v.after or '(absent)'}")
    if diff.moved:
        out.append("  outcomes that moved:")
        for m in diff.moved:
            flag = "  <-- REGRESSION" if m.after in FAILING_OUTCOMES else ""
            first = first_line(m.message, 160)
            out.append(f"    {m.cell}: {m.case}: {m.before} -> {m.after}{flag}"
                       + (f"\n        {first}" if first and flag else ""))
    return "\n".join(out)


def _tally(moves: list[Moved]) -> str:
    counts: dict[str, int] = {}
    for m in moves:
        counts[m.after] = counts.get(m.after, 0) + 1
    return ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items(), key=lambda kv: -kv[1]))
