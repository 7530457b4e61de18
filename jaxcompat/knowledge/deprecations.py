"""Warning before the break: the jax deprecations that the ecosystem's code runs into.

The pytest plugin records every Deprecation/FutureWarning that jax raises into equinox, diffrax,
optimistix, lineax, chex or jaxtyping code (at import or while a case runs). jax's messages
usually name the API and when it goes ("... is deprecated ... will be removed in JAX v0.10.0",
"... was deprecated in JAX v0.8.2 and removed in JAX v0.10.0"): that is the forecast.

The release that removes a name is taken from jax's API history (the timeline ``scan`` reads,
built from the released wheels) wherever it knows the name: it is what jax did, not what a message
announced, and many messages announce nothing ("jax.core.get_aval is deprecated; use jax.typeof
instead." — gone in 0.10.0). That history lives in a higher stage (``apihistory``); it reaches
this one as data, a ``History`` per API, given by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

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


def parse(records: list) -> list[Deprecation]:
    """Records (from a report's JSON, or the plugin's events) as ``Deprecation``s."""
    return [d if isinstance(d, Deprecation) else Deprecation.from_dict(d) for d in records]


def apis(records: list) -> list[str]:
    """The distinct jax APIs the records are about (what to ask jax's API history)."""
    return list(dict.fromkeys(d.api for d in parse(records) if d.api))


def forecast(records: list, versions: dict[str, str], history: Mapping[str, History] | None = None) -> list[str]:
    """One line per distinct (package, API or behaviour): what breaks on a later jax, soonest first.
    ``history``: API -> what jax's API history says of it (``apihistory.apiexplain.histories``)."""
    history = history or {}
    seen: dict[tuple[str, str], Deprecation] = {}
    for d in parse(records):
        seen.setdefault((d.package, d.what), d)

    def key(d: Deprecation):
        removal = d.removed_in(history.get(d.api))
        try:
            return (0, Version(removal)) if removal else (1, Version("0"))
        except InvalidVersion:
            return (1, Version("0"))

    return [d.sentence(versions, history.get(d.api)) for d in sorted(seen.values(), key=key)]


def names(api: str, failure_text: str) -> bool:
    """Whether a failure's text names the deprecated API (its last component)."""
    return bool(api) and api.split(".")[-1] in failure_text
