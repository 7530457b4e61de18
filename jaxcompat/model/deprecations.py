"""jax deprecations the ecosystem's code ran into, as records: one warning (``Deprecation``: the
package and line that hit it, jax's message, what it names and the removal it announces) and what
jax's API history says of a name (``History``). Recorded by the pytest plugin, stored in a cell's
``deprecations``; knowledge/deprecations.py forecasts from them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from jaxcompat.model.records import Record, attr

_REMOVAL = re.compile(r"(?i)(?:removed|will be removed|removal)\s+(?:in|with|from)\s+(?:JAX\s+)?v?(\d+\.\d+(?:\.\d+)*)")
# the name a message says is deprecated, its subject ("jax.tree_map is deprecated: use jax.tree.map",
# "Accessing jax.config via ... is deprecated", "jax.random.rbg_key(seed) is deprecated"), never a
# name its advice mentions ("In a future release of JAX, flatten-up-to will no longer consider None
# ... you can usually write: jax.tree.map(...)": a behaviour is deprecated there, not jax.tree.map)
_SUBJECT = re.compile(r"^\W*(?:[A-Za-z_][\w.]*(?:Warning|Error):\s*)?"
                      r"(?:(?:Accessing|Importing|Using|Calling)\s+)?(?:the\s+)?[`'\"]?"
                      r"(jax(?:lib)?(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\([^)]*\))?[`'\"]?"
                      r"(?:(?!\.\s|[;:]).)*?\b(?:deprecat|removed|moved|renamed)", re.I)


@dataclass(frozen=True)
class History:
    """What jax's API history says of one deprecated name (given by ``apihistory.apiexplain``)."""

    deprecated_in: str = ""  # the first release that deprecates it ("" when the history does not say)
    removed_in: str = ""  # the first release without it ("" while the newest release still has it)
    newest: str = ""  # the newest release the history knows
    replacement: str = ""  # what jax's message says to use instead ("" when it names nothing)


@dataclass(frozen=True)
class Deprecation(Record):
    package: str = ""  # the package whose code hit it
    where: str = ""  # file:line inside that package
    message: str = ""
    category: str = attr("DeprecationWarning", load=lambda c: c or "DeprecationWarning")
    case: str | None = None

    @property
    def api(self) -> str:
        """The jax name the message says is deprecated ("" when it names none: a behaviour is)."""
        m = _SUBJECT.search(self.message)
        return m.group(1).rstrip(".") if m else ""

    @property
    def what(self) -> str:
        """What is deprecated: the name, else the message's own words (its first line)."""
        return self.api or (self.message.strip().splitlines() or [""])[0][:200]

    @property
    def removal(self) -> str | None:
        """The jax version that jax announces will remove it, if it says."""
        m = _REMOVAL.search(self.message)
        return m.group(1) if m else None

    def removed_in(self, history: History | None = None) -> str | None:
        """The release that removes it: the history's when it knows one, else jax's announcement."""
        return (history.removed_in if history is not None and history.removed_in else None) or self.removal

    def sentence(self, versions: dict[str, str], history: History | None = None) -> str:
        who = f"{self.package} {versions.get(self.package, '')}".strip()
        removal = self.removed_in(history)
        if not self.api:  # a behaviour jax deprecates, said in the warning's own words
            when = f"jax announces the change for {removal}" if removal else "no version announced for the change"
            return f'{who} runs into a behaviour jax deprecates ({self.where}): "{self.what}" ({when})'
        since = history.deprecated_in if history is not None else ""
        if removal:
            dated = f" (deprecated in {since})" if since and since != removal else ""
            when = f"which jax removes in {removal}{dated}"
        elif history is not None and history.newest:
            when = (f"which jax has deprecated{f' since {since}' if since else ''} "
                    f"(still there in jax {history.newest}, the newest release; no removal announced)")
        else:
            when = "which jax has deprecated (no removal version announced)"
        return f"{who} uses {self.api} ({self.where}), {when}"
