"""What jax changed in behaviour that no name and no signature shows, kept by hand beside the timeline.

``jaxcompat/data/jax_behaviour.toml`` holds one ``[[change]]`` per change: the public name, the
release that changed it (and the release that started warning, if one did), what it means, what
to write instead, and the evidence (the wheel's code or changelog, what running it showed). ``scan``
warns on every use of such a name (JXC005) when the scan crosses that release.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from packaging.version import Version

from jaxcompat._util.toml import tomllib

DATA = Path(__file__).resolve().parents[1] / "data" / "jax_behaviour.toml"
_KEYS = {"name", "release", "warned", "meaning", "instead", "evidence", "probe"}
_REQUIRED = {"name", "release", "meaning", "instead", "evidence"}


@dataclass(frozen=True)
class Change:
    name: str  # jax.numpy.empty
    release: str  # the release whose behaviour differs
    meaning: str
    instead: str
    evidence: str
    warned: str = ""  # the release that started warning about it, if any
    probe: str = ""  # one expression that shows it, run on both sides (``jnp`` is jax.numpy)

    def crossed(self, before: str, target: str) -> bool:
        """Does moving from ``before`` ("" = any older release) to ``target`` cross the change?"""
        v = Version(self.warned or self.release)  # from its first warning on, the change is worth saying
        return Version(target) >= v and (not before or Version(before) < Version(self.release))


@lru_cache(maxsize=2)
def load(path: Path = DATA) -> tuple[Change, ...]:
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    for i, d in enumerate(data.get("change", [])):
        where = f"{Path(path).name}: change[{i}]"
        unknown, missing = set(d) - _KEYS, _REQUIRED - set(d)
        if unknown or missing:
            raise ValueError(f"{where}: " + "; ".join(
                [f"unknown key {k!r} (fix: use one of {', '.join(sorted(_KEYS))})" for k in sorted(unknown)]
                + [f"missing key {k!r} (fix: add it)" for k in sorted(missing)]))
        for key in ("release", "warned"):
            if d.get(key):
                Version(d[key])  # an InvalidVersion names the value
        out.append(Change(**d))
    return tuple(out)


def by_name(path: Path = DATA) -> dict[str, list[Change]]:
    out: dict[str, list[Change]] = {}
    for c in load(path):
        out.setdefault(c.name, []).append(c)
    return out
