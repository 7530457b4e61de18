"""The answer of ``pins --jax X`` as people and pip read it: a requirements file, each line
commented with its evidence (the record: model/pins.py)."""

from __future__ import annotations

from jaxcompat.model.pins import Pins


def render(pins: Pins) -> str:
    """The requirements file: a header saying where it comes from, one commented line per pin."""
    how = ("one run with no known failure" if pins.verified
           else "NOT VERIFIED: inferred from the rules only; check it with `jax-compat check -r FILE`")
    lines = [f"# Newest releases known to work with jax {pins.jax} (CPU): {how}.",
             f"# From {', '.join(pins.sources)} via `jax-compat pins --jax {pins.jax}`."]
    width = max(len(q) for q, _ in pins.requirements)
    lines += [f"# caution: {c}" for c in pins.cautions]
    lines += [f"{q.ljust(width)}  # {e}" for q, e in pins.requirements]
    return "\n".join(lines) + "\n"
