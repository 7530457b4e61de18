"""The reader of the TOML files the tool is given (``matrix.toml`` and ``--rules`` files:
knowledge/config.py; ``dependents.toml``: knowledge/dependents.py) and the checks every table of
them shares: an unknown key refused with "did you mean", a list of tables, a string, a list of
strings. Every problem is a ``ConfigError`` that names the file, the key path and what to write.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from jaxcompat._util.toml import tomllib
from jaxcompat.model.matrix import ConfigError


def read_toml(path: Path, fix_unreadable: str) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(path, "(file)", f"cannot read: {e.strerror or e}", fix_unreadable) from None
    except UnicodeDecodeError as e:
        raise ConfigError(path, "(encoding)", f"not UTF-8 (byte {e.start}: {e.object[e.start:e.start + 1]!r})",
                          "save it as UTF-8 (TOML files are UTF-8)") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(path, "(syntax)", f"invalid TOML: {e}",
                          "fix the TOML syntax at that line") from None


def unknown_keys(path: Path, where: str, table: dict, allowed: set[str]) -> None:
    for key in table:
        if key not in allowed:
            close = [k for k in sorted(allowed) if similar(str(key), k)]
            hint = f"did you mean {close[0]!r}?" if close else ""
            raise ConfigError(path, f"{where}.{key}" if where != "(top)" else str(key),
                              "unknown key",
                              f"{hint} allowed keys here: {', '.join(sorted(allowed))}".strip())


def similar(a: str, b: str) -> bool:
    a, b = a.lower(), b.lower()
    return (a == b or a in b or b in a or (len(a) > 3 and a[:3] == b[:3])
            or difflib.SequenceMatcher(None, a, b).ratio() >= 0.8)  # a typo: afects, upstreem


def table_list(path: Path, key: str, value: object) -> list[dict]:
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ConfigError(path, key, "expected an array of tables",
                          f"write each entry as a [[{key}]] table")
    return value


def text_value(path: Path, key: str, value: object, *, required: bool = True) -> str:
    if not isinstance(value, str) or (required and not value.strip()):
        raise ConfigError(path, key, f"expected a non-empty string, got {value!r}")
    return value


def str_list(path: Path, key: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(path, key, f"expected a string or a list of strings, got {value!r}")
    return tuple(value)
