"""The text beside a verdict (``check --tests``, the crater) of its two sides (``model/sides.py``):
they differ only in the candidate, or each confounder with what holding it at the baseline's
version said."""

from __future__ import annotations

from jaxcompat.model.sides import Confounder, Sides


def sides_lines(sides: Sides) -> list[str]:
    """Beside the verdict: the sides differ only in the candidate, or each confounder."""
    if not sides.held and not sides.confounders:
        return []
    if not sides.confounders:
        return [f"  sides: they differ only in the candidate's packages ({', '.join(sides.named)}); "
                f"{sides.held} others held at the baseline's versions"]
    out = [f"  ! confounders: {len(sides.confounders)} package(s) the candidate does not name differ "
           "between the sides (a break may be theirs):"]
    out += [f"    - {_confounder_line(c)}" for c in sides.confounders]
    if sides.dropped:
        out.append(f"    (not held at the baseline's version: {', '.join(sides.dropped)}: the candidate's own "
                   "requirements conflict with it)")
    return out


def _confounder_line(c: Confounder) -> str:
    change = f"{c.dist} {c.baseline or '(absent)'} → {c.candidate or '(absent)'}"
    return change + (f": {c.held_run}" + (f" ({c.detail})" if c.detail else "") if c.held_run else "")
