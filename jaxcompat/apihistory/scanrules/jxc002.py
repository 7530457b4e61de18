"""JXC002 jax-api-deprecated: a jax name in use is deprecated at the target release.

Said with the release that removes it (from the timeline, or jax's own "will be removed in" when
its message says); a function that warns of its own deprecation when called counts too
(``equinox.static_field``). Its fix is JXC001's plain rename.
"""

from __future__ import annotations

import re

from jaxcompat.apihistory.apitimeline import Timeline
from jaxcompat.apihistory.scanlookup import Hit
from jaxcompat.apihistory.scanrules.jxc001 import use_instead
from jaxcompat.apihistory.scanrules.rule import Rule
from jaxcompat.model.scan import Target
from jaxcompat.model.vocab import FindingLevel

RULE = Rule("JXC002", "jax-api-deprecated", FindingLevel.WARNING,
            "A jax name in use is deprecated at the target jax release.",
            fix="a plain rename to a name present at the target")
_REMOVAL = re.compile(r"(?i)(?:will be removed|removed)\s+(?:in|with|from)\s+(?:JAX\s+)?v?(\d+\.\d+(?:\.\d+)*)")


def message(hit: Hit, target: Target, timeline: Timeline) -> str:
    """The finding's text: since when it is deprecated, when it goes, what to use instead."""
    st, pkg = hit.state, timeline.package
    kind = "module " if hit.is_module else ""
    use = use_instead(hit, target, timeline)
    removal = st.removed_in
    said = _REMOVAL.search(st.message)
    when = (f"; removed in {pkg} {removal}" if removal else
            f"; {pkg} says it will be removed in {said.group(1)}" if said else "; no removal scheduled yet")
    return f"{kind}{hit.name} is deprecated since {pkg} {st.deprecated_in or st.since}{when}{use}"
