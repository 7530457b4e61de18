"""JXC007 jax-private-removed: private jax API in use that the target's wheel no longer has, with
the release it went (``jax._src.core.get_aval``: gone in 0.10.0)."""

from __future__ import annotations

from jaxcompat.apihistory.scanrules.rule import Rule
from jaxcompat.model.vocab import FindingLevel

RULE = Rule("JXC007", "jax-private-removed", FindingLevel.ERROR,
            "Private jax API that the target release no longer has.")


def message(dotted: str, gone: str, pkg: str) -> str:
    """``gone``: the first release without it."""
    return f"{dotted} is private {pkg} API, gone in {pkg} {gone}: private names change without deprecation"
