"""A failure's region as people read it: one line per package's bound, the shape and the clause a
drafted rule would carry (the records: model/region.py)."""

from __future__ import annotations

from jaxcompat.model.region import Bound, Region


def describe(b: Bound) -> str:
    """One package's affected range, each side with its release, its date and the release beside it."""
    d = b.dates
    if b.first_bad is None:
        return f"{b.package}: never seen along it"
    lo = (
        f"from {b.first_bad} ({d.get(b.first_bad, '?')}; "
        f"clean {b.last_good}, {d.get(b.last_good, '?')})"
        if b.last_good
        else f"from {b.oldest_tried} or older (the oldest release that can say)"
    )
    hi = (
        f"to {b.last_affected} ({d.get(b.last_affected, '?')}; fixed {b.fixed}, {d.get(b.fixed, '?')})"
        if b.fixed
        else f"to {b.newest_tried} or newer (the newest release that can say)"
    )
    gap = f"; {', '.join(b.unsure)} could not say" if b.unsure else ""
    return f"{b.package} {b.spec or '(any)'}: {lo} {hi}{gap}"


def render(region: Region) -> str:
    lines = [f"region of {region.target}", f"  seen: {' '.join(f'{a}=={v}' for a, v in region.seen.items())}",
             f"  cases: {', '.join(region.cases)}"]
    lines += [f"  {describe(b)}  [{b.environments} environments]" for b in region.bounds]
    clause = region.clause
    lines.append(f"  shape: {region.shape}; affects = {{ "
                 + ", ".join(f'{k} = "{v}"' for k, v in clause.items()) + " }"
                 + f"  ({region.environments} environments)")
    return "\n".join(lines)
