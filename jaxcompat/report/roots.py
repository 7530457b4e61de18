"""Root causes as people read them: the package that broke, then the dependents failing through it
(``model/roots.py``'s records; the texts go through the caller's scrubbing)."""

from __future__ import annotations

from jaxcompat.model.roots import RootCause

HEADER = "root causes (the package each broken test's failure lies in, and who fails through it):"


def _tests(n: int) -> str:
    return f"{n} test" + ("" if n == 1 else "s")


def sentence(rc: RootCause) -> str:
    """``equinox broke: 12 tests of 2 dependents fail through it (diffrax 8, dynamiqs 4); its own
    suite broke too (5 tests) — group …``."""
    name = rc.package + (" (the candidate)" if rc.candidate else "")
    n = sum(rc.dependents.values())
    parts = []
    if rc.dependents:
        many = "dependent" if len(rc.dependents) == 1 else "dependents"
        parts.append(f"{_tests(n)} of {len(rc.dependents)} {many} fail through it ("
                     + ", ".join(f"{d} {k}" for d, k in rc.dependents.items()) + ")")
    if rc.own_tests:
        parts.append(f"its own suite broke too ({_tests(rc.own_tests)})" if rc.dependents
                     else f"{_tests(rc.own_tests)} of its own suite fail in its own code")
    which = "group" if len(rc.groups) == 1 else f"{len(rc.groups)} groups"
    return f"{name} broke: " + "; ".join(parts) + f" — {which}: " + "; ".join(rc.groups)


def lines(causes: list[RootCause]) -> list[str]:
    """The tree, ahead of the groups: one line per package that broke, then how each dependent
    reaches it when it goes through another package ("" without broken tests)."""
    if not causes:
        return []
    out = [f"  {HEADER}"]
    for rc in causes:
        out.append(f"    {sentence(rc)}")
        chains = [c for cs in rc.through.values() for c in cs if c.count(" → ") > 1]
        if chains:
            out.append("        through: " + "; ".join(chains))
    return out
