"""Drafted rules: every failure no rule explains, written as a ``[[failure]]`` table.

After ``check``, ``survey`` or ``bisect``, the unexplained results are grouped by their error
signature (``signature.py``). Each group becomes a draft (report/draftrules.py writes them to
``reports/draft-rules.toml``): its cases, ``error``, ``match`` (the normalised message, widened
where it varies), ``affects`` (from
a bisected region when there is one, else the smallest box around where it was seen that no clean
observation contradicts, else the combinations themselves), a title from the error and the frame
that raised it, and ``upstream`` left empty with the words to search for. A draft file is
validated like any rules file (``--rules reports/draft-rules.toml`` works at once) and verified:
judging the stored observations with it turns exactly its regressions into ``reproduced`` and
changes nothing else. Promoting a draft into ``matrix.toml``, with its upstream links, is a
reviewed edit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from jaxcompat.knowledge import config, signature
from jaxcompat.knowledge.outcomes import reclassify
from jaxcompat.knowledge.signature import Signature
from jaxcompat.model.matrix import Matrix
from jaxcompat.model.outcomes import UNEXPLAINED_OUTCOMES, CellResult
from jaxcompat.model.vocab import CellOutcome, CellStatus, Outcome
from jaxcompat.plugin.packages import ECOSYSTEM

BOX = ("jax", "equinox")  # the packages a drafted box bounds


@dataclass
class Group:
    """Every unexplained result with one signature."""

    signature: Signature
    stage: str  # case | import
    cases: set[str] = field(default_factory=set)
    seen: list[dict[str, str]] = field(default_factory=list)  # installed versions where it showed
    frames: set[str] = field(default_factory=set)  # every function of the package that raised it

    @property
    def id(self) -> str:
        s = self.signature
        where = re.sub(r"\.py$", "", s.frame.split(":")[0]).replace("/_", "/").replace("/", "-") if s.frame else "case"
        func = s.frame.split(":")[1].strip("_<>") if ":" in s.frame else ""
        words = [where, func, s.error]
        return "draft-" + re.sub(r"[^a-z0-9]+", "-", "-".join(w for w in words if w).lower()).strip("-")


def unexplained(cells: list[CellResult]) -> dict[Signature, Group]:
    """Group the results no rule explains (regression, mismatch, crash, timeout) by signature;
    cell errors no rule explains (an import error) too."""
    groups: dict[tuple, Group] = {}
    for cell in cells:
        if cell.status == CellStatus.IMPORT_ERROR and cell.outcome == CellOutcome.CELL_ERROR:
            sig = signature.of_cell(cell.status, cell.message)
            g = groups.setdefault(("import", *sig.family), Group(sig, "import"))
            g.seen.append(dict(cell.versions))
        if cell.status != CellStatus.OK:
            continue
        for r in cell.results:
            if r.outcome not in UNEXPLAINED_OUTCOMES or r.outcome == Outcome.FLAKY:
                continue
            sig = signature.of(r.raw())
            g = groups.setdefault(("case", *sig.family), Group(sig, "case"))
            g.cases.add(r.case)
            g.frames.add(sig.frame)
            if dict(cell.versions) not in g.seen:
                g.seen.append(dict(cell.versions))
    return {g.signature: g for g in groups.values()}


def box(group: Group, cells: list[CellResult]) -> list[dict[str, str]]:
    """``affects`` from observations alone: the jax x equinox box around where it was seen, if no
    observation inside the box ran one of its cases cleanly; else each combination exactly."""
    pts = [{d: v[d] for d in BOX if d in v} for v in group.seen]
    if not pts or any(len(p) < len(BOX) for p in pts):
        return [{d: f"=={v}" for d, v in p.items()} for p in pts]
    lo = {d: min((p[d] for p in pts), key=Version) for d in BOX}
    hi = {d: max((p[d] for p in pts), key=Version) for d in BOX}
    clause = {d: (f"=={lo[d]}" if lo[d] == hi[d] else f">={lo[d]},<={hi[d]}") for d in BOX}
    for cell in cells:
        if cell.status != CellStatus.OK or not all(d in cell.versions for d in BOX):
            continue
        inside = all(SpecifierSet(clause[d]).contains(Version(cell.versions[d]), prereleases=True) for d in BOX)
        if inside and any(r.case in group.cases and r.outcome in (Outcome.PASS, Outcome.STALE) for r in cell.results):
            return [{d: f"=={p[d]}" for d in BOX} for p in pts]
    return [clause]


def draft(group: Group, affects: list[dict[str, str]], how: str) -> dict:
    s = group.signature
    title = f"{s.error} in {s.frame.split(':')[0] or 'the case'}: {s.message}"[:140]
    frames = sorted(group.frames - {s.frame})
    return {"id": group.id, "title": title, "stage": group.stage,
            "cases": sorted(group.cases), "error": [s.error], "match": s.pattern(),
            "affects": affects, "upstream": [],
            "fix": "not known yet: avoid the affected range; find the upstream fix",
            "_comment": [f"drafted by jax-compat from {how}; raised at {s.frame or 'the case itself'}"
                         + (f" (also {', '.join(frames)})" if frames else ""),
                         f"seen on: {'; '.join(_short(v) for v in group.seen[:8])}"
                         + (" …" if len(group.seen) > 8 else ""),
                         f"search upstream for: {search_words(group)}"]}


def search_words(group: Group) -> str:
    s = group.signature
    msg = re.sub(r"<\w+>", "", s.message)
    words = [w for w in re.split(r"[^\w.']+", msg) if len(w) > 2][:8]
    pkg = s.package or "jax"
    return f"{pkg} \"{s.error}\" " + " ".join(words) + (f" {s.frame.split(':')[0]}" if s.frame else "")


def _short(versions: dict[str, str]) -> str:
    return " ".join(f"{d} {versions[d]}" for d in ECOSYSTEM
                    if d in versions)


# -- verification -----------------------------------------------------------------------------

def verify(cells: list[CellResult], matrix: Matrix, path: Path) -> dict:
    """Judge the stored observations with and without the drafts: what changed?"""
    with_drafts = config.merge_rules(matrix, path)
    ids = {f.id for f in with_drafts.failures} - {f.id for f in matrix.failures}
    turned, other, relabelled = 0, [], []
    for cell in cells:
        before, after = reclassify(cell, matrix.failures), reclassify(cell, with_drafts.failures)
        if before.outcome != after.outcome and not (before.outcome == CellOutcome.CELL_ERROR and after.failure in ids):
            other.append(f"{cell.id}: cell {before.outcome} -> {after.outcome}")
        elif before.outcome != after.outcome:
            turned += 1
        for b, a in zip(before.results, after.results, strict=True):
            if b.outcome == a.outcome:
                continue
            if b.outcome in UNEXPLAINED_OUTCOMES and a.outcome == Outcome.REPRODUCED and a.failure in ids:
                turned += 1
            elif b.outcome in UNEXPLAINED_OUTCOMES and a.outcome == Outcome.MISMATCH and a.failure in ids:
                # the draft's range covers a release where the case fails with another error (a
                # step that could not say): still failing, now "predicted, other error"
                relabelled.append(f"{cell.id} {b.case}: {b.outcome} -> {a.outcome}")
            else:
                other.append(f"{cell.id} {b.case}: {b.outcome} -> {a.outcome}")
    return {"drafts": sorted(ids), "turned_reproduced": turned, "other_changes": other,
            "relabelled": relabelled}
