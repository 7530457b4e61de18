"""``jax-compat pins --jax X``: the newest releases known to work with one jax, as a requirements
file, each line commented with its evidence.

It reads ``compat.json`` (written with ``compat.md`` by ``python -m jaxcompat compat``), parsed
here at the edge into ``Pins`` (model/pins.py; rendered by report/pins.py); nothing is resolved or
downloaded.
"""

from __future__ import annotations

from pathlib import Path

from packaging.version import InvalidVersion, Version

from jaxcompat._util.jsonfile import read_json
from jaxcompat.knowledge.compat import COMMAND, SCHEMA
from jaxcompat.model.pins import Pins


class PinsError(ValueError):
    """A problem the user must fix (unknown jax, missing or malformed compat.json): exit 2."""


def load(path: Path, jax: str) -> Pins:
    """The row of ``path`` (a compat.json) for this jax."""
    data = read_json(path, PinsError, unreadable=f"generate it with `{COMMAND}`",
                     damaged=f"regenerate it with `{COMMAND}`")
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("rows"), list):
        raise PinsError(f"{path}: not a compat.json of schema {SCHEMA}; regenerate it with `{COMMAND}`")
    rows = {r.get("jax"): r for r in data["rows"] if isinstance(r, dict)}
    row = rows.get(jax) or next((r for j, r in rows.items() if _same(j, jax)), None)
    if row is None:
        known = sorted(rows, key=_key)
        span = f"{known[0]} … {known[-1]}" if known else "none"
        raise PinsError(f"jax {jax}: not a jax release jax-compat knows ({path.name} covers {len(known)} "
                        f"releases, {span}); pass one of them, or regenerate with `{COMMAND}` after a new release")
    reqs = tuple((q["requirement"], q["evidence"]) for q in row.get("requirements") or [])
    return Pins(row["jax"], row.get("cause", ""), reqs, bool(row.get("verified_set")), row.get("answer", ""),
                tuple(data.get("sources") or ()), tuple(row.get("cautions") or ()))


def _key(v: str) -> Version:
    try:
        return Version(v)
    except (InvalidVersion, TypeError):
        return Version("0")


def _same(a: str, b: str) -> bool:
    try:
        return Version(a) == Version(b)
    except (InvalidVersion, TypeError):
        return False
