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

from collections.abc import Mapping

from packaging.version import InvalidVersion, Version

from jaxcompat.model.deprecations import Deprecation, History


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
