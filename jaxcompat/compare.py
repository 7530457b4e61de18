"""What changed between two runs (two matrix.json dicts): cells added or removed, outcomes that
moved, versions that moved. Used by ``report --compare`` and the nightly ``latest`` session."""

from __future__ import annotations

from dataclasses import dataclass, field

from .outcomes import FAILING_OUTCOMES
from .text import first_line


@dataclass
class Diff:
    added_cells: list[str] = field(default_factory=list)
    removed_cells: list[str] = field(default_factory=list)
    # (cell, case, old outcome, new outcome, new message)
    moved: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    # (cell, dist, old version, new version)
    versions: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)
    # (cell, old status, new status)
    status: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def new_failures(self):
        return [m for m in self.moved if m[3] in FAILING_OUTCOMES | {"reproduced"}
                and m[2] not in FAILING_OUTCOMES | {"reproduced"}]

    @property
    def fixed(self):
        return [m for m in self.moved if m[2] in FAILING_OUTCOMES | {"reproduced"}
                and m[3] in ("pass", "stale")]

    @property
    def regressed(self) -> bool:
        return any(m[3] in FAILING_OUTCOMES for m in self.moved) or any(
            s[2] != "ok" and s[1] == "ok" for s in self.status)

    @property
    def empty(self) -> bool:
        return not (self.added_cells or self.removed_cells or self.moved or self.versions or self.status)


def _cells(data: dict) -> dict[str, dict]:
    return {c["id"]: c for c in data.get("cells", [])}


def _outcomes(cell: dict) -> dict[str, dict]:
    return {r["case"]: r for r in cell.get("results", [])}


def compare(old: dict, new: dict, *, match_single: bool = False) -> Diff:
    """Compare runs cell by cell (by id). With ``match_single``, two one-cell runs are compared
    whatever their ids (tonight's newest releases against the baseline's)."""
    old_cells, new_cells = _cells(old), _cells(new)
    if match_single and len(old_cells) == 1 and len(new_cells) == 1:
        (_, ocell), (nid, ncell) = next(iter(old_cells.items())), next(iter(new_cells.items()))
        old_cells, new_cells = {nid: ocell}, {nid: ncell}
    d = Diff(added_cells=sorted(set(new_cells) - set(old_cells)),
             removed_cells=sorted(set(old_cells) - set(new_cells)))
    for cid in [c for c in new_cells if c in old_cells]:
        o, n = old_cells[cid], new_cells[cid]
        if o.get("status") != n.get("status"):
            d.status.append((cid, o.get("status", "?"), n.get("status", "?")))
        ov, nv = o.get("versions", {}), n.get("versions", {})
        for dist in sorted(set(ov) | set(nv)):
            if ov.get(dist) != nv.get(dist):
                d.versions.append((cid, dist, ov.get(dist), nv.get(dist)))
        oo, no = _outcomes(o), _outcomes(n)
        for case in sorted(set(oo) | set(no)):
            before = oo.get(case, {}).get("outcome", "absent")
            after = no.get(case, {}).get("outcome", "absent")
            if before != after:
                d.moved.append((cid, case, before, after, no.get(case, {}).get("message", "")))
    return d


def render(diff: Diff, old_label: str = "baseline", new_label: str = "this run") -> str:
    if diff.empty:
        return f"No change between {old_label} and {new_label}."
    out = [f"Changes from {old_label} to {new_label}:"]
    for c in diff.added_cells:
        out.append(f"  + cell {c} (new)")
    for c in diff.removed_cells:
        out.append(f"  - cell {c} (gone)")
    for cid, before, after in diff.status:
        out.append(f"  cell {cid}: status {before} -> {after}")
    if diff.versions:
        out.append("  versions that moved:")
        for cid, dist, a, b in diff.versions:
            out.append(f"    {cid}: {dist} {a or '(absent)'} -> {b or '(absent)'}")
    if diff.moved:
        out.append("  outcomes that moved:")
        for cid, case, a, b, msg in diff.moved:
            flag = "  <-- REGRESSION" if b in FAILING_OUTCOMES else ""
            first = first_line(msg, 160)
            out.append(f"    {cid}: {case}: {a} -> {b}{flag}" + (f"\n        {first}" if first and flag else ""))
    return "\n".join(out)
