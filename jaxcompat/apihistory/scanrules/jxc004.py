"""JXC004 jax-private-api: private jax API in use (``jax._src``, an underscore name reached through
a public module such as ``jax.lib.xla_bridge._backends``): it may change in any release, without
deprecation. Where the target's wheel no longer has it, JXC007 says so instead."""

from __future__ import annotations

from jaxcompat.apihistory.scanrules.rule import Rule
from jaxcompat.model.vocab import FindingLevel

RULE = Rule("JXC004", "jax-private-api", FindingLevel.WARNING,
            "Private jax API (jax._src, an underscore name): it may change in any release, without deprecation.")


def message(dotted: str, private: str, pkg: str) -> str:
    """``private``: the prefix of ``dotted`` up to its first private part."""
    return f"{dotted} is private {pkg} API ({private}): it may change in any release, without deprecation"
