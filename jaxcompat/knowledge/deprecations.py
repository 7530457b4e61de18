"""Warning before the break: the jax deprecations that the ecosystem's code runs into.

The pytest plugin records every Deprecation/FutureWarning that jax raises into equinox, diffrax,
optimistix, lineax, chex or jaxtyping code (at import or while a case runs). jax's messages
usually name the API and when it goes ("... is deprecated ... will be removed in JAX v0.10.0",
"... was deprecated in JAX v0.8.2 and removed in JAX v0.10.0"): that is the forecast.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

_REMOVAL = re.compile(r"(?i)(?:removed|will be removed|removal)\s+(?:in|with|from)\s+(?:JAX\s+)?v?(\d+\.\d+(?:\.\d+)*)")
_API = re.compile(r"\b(jax(?:lib)?(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


@dataclass(frozen=True)
class Deprecation:
    package: str  # the package whose code hit it
    where: str  # file:line inside that package
    message: str
    category: str = "DeprecationWarning"
    case: str | None = None

    @classmethod
    def from_dict(cls, d: dict) -> Deprecation:
        return cls(package=d.get("package", ""), where=d.get("where", ""), message=d.get("message", ""),
                   category=d.get("category") or "DeprecationWarning", case=d.get("case"))

    @property
    def api(self) -> str:
        m = _API.search(self.message)
        return m.group(1).rstrip(".") if m else self.message.split(".")[0][:80]

    @property
    def removal(self) -> str | None:
        """The jax version that jax announces will remove it, if it says."""
        m = _REMOVAL.search(self.message)
        return m.group(1) if m else None

    def due(self, jax_version: str) -> bool:
        """Whether ``jax_version`` is at or past the announced removal."""
        try:
            return self.removal is not None and Version(jax_version) >= Version(self.removal)
        except InvalidVersion:
            return False

    def sentence(self, versions: dict[str, str]) -> str:
        who = f"{self.package} {versions.get(self.package, '')}".strip()
        when = (
            f"which jax removes in {self.removal}"
            if self.removal
            else "which jax has deprecated (no removal version announced)"
        )
        return f"{who} uses {self.api} ({self.where}), {when}"


def parse(records: list) -> list[Deprecation]:
    """Records (from a report's JSON, or the plugin's events) as ``Deprecation``s."""
    return [d if isinstance(d, Deprecation) else Deprecation.from_dict(d) for d in records]


def forecast(records: list[dict], versions: dict[str, str]) -> list[str]:
    """One line per distinct (package, API): what breaks on a later jax, soonest first."""
    seen: dict[tuple[str, str], Deprecation] = {}
    for d in parse(records):
        seen.setdefault((d.package, d.api), d)

    def key(d: Deprecation):
        try:
            return (0, Version(d.removal)) if d.removal else (1, Version("0"))
        except InvalidVersion:
            return (1, Version("0"))

    return [d.sentence(versions) for d in sorted(seen.values(), key=key)]


def names(api: str, failure_text: str) -> bool:
    """Whether a failure's text names the deprecated API (its last component)."""
    return bool(api) and api.split(".")[-1] in failure_text


def came_true(records: list[dict], later_message: str) -> list[Deprecation]:
    """The forecasts whose API the later failure names: the warning that became the break."""
    return [d for d in parse(records) if names(d.api, later_message)]
