"""Sides that differ only in the candidate: the baseline resolved first, the candidate held to it.

The baseline is resolved first; the candidate's environment is then resolved with the baseline's
lock as constraints (uv ``--constraint``: a version held, nothing added) for every package the
candidate does not name or force. Where a constraint conflicts with the candidate's own
requirements (jax 0.4.33 needs a newer ml-dtypes than jax 0.4.31's), just that constraint is
dropped and the candidate re-resolved (``env/envs.py``, beside the compile step). Whatever still
differs between the two sides' resolved versions, other than the candidate's packages, is a
confounder (``model/sides.py``), listed
beside the verdict and re-run held at the baseline's version to say whether it breaks the tests.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from packaging.utils import canonicalize_name

from jaxcompat._util.atomic import write_text
from jaxcompat.model.matrix import ANY, Cell
from jaxcompat.model.sides import Confounder, Sides, constraint_name

# forced by a named package: jax's jaxlib (and its plugins) move with it
FORCED = {"jax": ("jaxlib", "jax-cuda12-plugin", "jax-cuda12-pjrt", "jax-cuda13-plugin", "jax-cuda13-pjrt")}


def named(cell: Cell) -> tuple[str, ...]:
    """The packages the candidate names or forces: its pins other than the suite's "*" additions,
    and what a named package brings with its own version (jax: jaxlib)."""
    out = [canonicalize_name(d) for d, v in cell.pins.items() if v != ANY and d not in cell.added]
    for d in list(out):
        out += [f for f in FORCED.get(d, ()) if f not in out]
    return tuple(dict.fromkeys(out))


def hold(cell: Cell, baseline_versions: dict[str, str]) -> Cell:
    """``cell`` with every package of the baseline's lock it does not name held at the baseline's
    version (``Cell.held``: uv constraints). A cell already held is returned as it is."""
    if cell.held:
        return cell
    mine = set(named(cell))
    held = tuple(f"{d}=={v}" for d, v in sorted(baseline_versions.items())
                 if canonicalize_name(d) not in mine and v)
    return replace(cell, held=held)


def constraint_args(cell: Cell, workdir: Path) -> list[str]:
    """uv's arguments for the cell's held versions (a constraints file in ``workdir``)."""
    if not cell.held:
        return []
    path = workdir / "held-constraints.txt"
    write_text(path, "\n".join(cell.held) + "\n")
    return ["--constraint", str(path)]


def conflicting(cell: Cell, stderr: str) -> set[str]:
    """The held packages the resolver's message names (those to let go); all of them when it names
    none (so the candidate still resolves: what then differs is listed as a confounder)."""
    held = {constraint_name(c) for c in cell.held}
    words = {canonicalize_name(w) for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9._-]*", stderr)}
    return (held & words) or held


def let_go(cell: Cell, dists: set[str]) -> Cell:
    """``cell`` no longer held at the baseline's version of ``dists``."""
    return replace(cell, held=tuple(c for c in cell.held if constraint_name(c) not in dists))


def compare(cell: Cell, baseline_versions: dict[str, str], candidate_versions: dict[str, str]) -> Sides:
    """Where the sides' resolved versions differ beyond what the candidate names: the confounders."""
    mine = set(named(cell))
    base = {canonicalize_name(k): v for k, v in baseline_versions.items()}
    cand = {canonicalize_name(k): v for k, v in candidate_versions.items()}
    held = {constraint_name(c) for c in cell.held}
    found = [Confounder(d, base.get(d, ""), cand.get(d, "")) for d in sorted(set(base) | set(cand))
             if d not in mine and base.get(d, "") != cand.get(d, "")]
    return Sides(named=sorted(d for d in mine if d in base or d in cand), held=len(held),
                 dropped=[c.dist for c in found if c.dist in held and c.baseline and c.candidate],
                 confounders=found)


def held_at_baseline(cell: Cell, confounder: Confounder) -> Cell:
    """The candidate with one confounder pinned at the baseline's version (a separate environment)."""
    dist = confounder.dist
    return replace(cell, id=f"{cell.id}-held-{dist}", pins={**cell.pins, dist: confounder.baseline},
                   held=tuple(c for c in cell.held if constraint_name(c) != dist),
                   added=tuple(a for a in cell.added if a != dist))
