"""The record of ``pins --jax X``: one jax release's newest known-good requirements, each with its
evidence (``Pins``). Read from compat.json by operations/pins.py, rendered as a requirements file
by report/pins.py."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pins:
    jax: str
    cause: str  # non-empty: nothing to pin (the jax release itself is broken, not installable)
    requirements: tuple[tuple[str, str], ...]  # (requirement, evidence)
    verified: bool  # the set comes from one run with no known failure
    answer: str
    sources: tuple[str, ...]
    cautions: tuple[str, ...] = ()  # rules that apply depending on packages left unpinned
