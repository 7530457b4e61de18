"""JXC005 jax-behaviour-changed: a call of a jax function whose behaviour changed between the
releases with nothing in its name or signature to show it, when the scan crosses that release
(with ``--from``: only if the upgrade crosses it). The changes are kept by hand with their
evidence (:mod:`jaxcompat.apihistory.behaviour`)."""

from __future__ import annotations

from jaxcompat.apihistory import behaviour
from jaxcompat.apihistory.apitimeline import ver
from jaxcompat.apihistory.scanrules.rule import Rule
from jaxcompat.model.scan import Target
from jaxcompat.model.vocab import FindingLevel

RULE = Rule("JXC005", "jax-behaviour-changed", FindingLevel.WARNING,
            "A jax function whose behaviour changed between the releases, with nothing in its name or "
            "signature to show it.")
BEHAVIOUR = behaviour.by_name()  # dotted name -> its changes


def messages(dotted: str, target: Target, pkg: str) -> list[str]:
    """One text for each change of ``dotted``'s behaviour that the scan crosses."""
    if pkg != "jax":
        return []
    out = []
    for change in BEHAVIOUR.get(dotted, ()):
        if not change.crossed(target.before, target.release):
            continue
        if ver(target.release) < ver(change.release):
            head = f"{dotted} warns since jax {change.warned} (DeprecationWarning); from jax {change.release}"
        else:
            head = f"{dotted} changed in jax {change.release}" + (
                f" (it warned from {change.warned})" if change.warned else "")
        out.append(f"{head}: {change.meaning}; instead: {change.instead}")
    return out
