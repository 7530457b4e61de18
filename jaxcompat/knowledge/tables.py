"""The reader of the TOML files the tool is given (``matrix.toml`` and ``--rules`` files:
knowledge/config.py; ``dependents.toml``: knowledge/dependents.py), and the one walk that
validates their tables into records from a declaration.

Each kind of table is declared, not walked by hand: a ``Table`` names its keys in the order they
are checked, each a ``Key`` with its parser (a small named function ``parse(at, value)`` where a
value carries real logic: a requirement, a date, a case that must exist), its default (a value,
or a function of ``at``: the settings a cell inherits) or, when required, the fix written when it
is missing; and how the parsed values become the record (``build``). ``read`` walks it: an
unknown key is refused with "did you mean", a missing required key names the fix, then each key
is parsed (its default too) at its key path. Every problem is a ``ConfigError`` that names the
file, the key path and what to write. The stored reports are read leniently by another converter
(model/records.py); these files are strict.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from jaxcompat._util.toml import tomllib
from jaxcompat.model.matrix import ConfigError

REQUIRED = object()  # a Key's default: the key must be given


class At(NamedTuple):
    """Where a value is read: the file, its key path, the table that holds it, and what the
    file's reader lends every table (a matrix's settings and folder, a dependents file's limits)."""

    path: Path
    key: str
    table: dict
    context: Any = None

    def error(self, problem: str, fix: str = "") -> ConfigError:
        return ConfigError(self.path, self.key, problem, fix)


class Key(NamedTuple):
    """One key of a table: ``parse(at, value)`` gives its field's value (its default is parsed too).

    ``default``: a value, a function of ``at``, or REQUIRED (``missing``: the fix when it is not
    given); ``field``: the record's name for it where it is not the key's; ``reads``: the keys it
    reads from the whole table instead of one (``parse(at, table)`` at the table's path)."""

    parse: Callable[[At, Any], Any]
    default: Any = REQUIRED
    missing: str = ""
    field: str = ""
    reads: tuple[str, ...] = ()


class Table(NamedTuple):
    """A kind of table: its keys in the order they are checked, the record ``build(at, values)``
    makes of their values, the fix when it is not a table, and the key whose value names it in
    the key paths after it (``failure[0].id``, then ``failure[ID].match``)."""

    keys: dict[str, Key]
    build: Callable[[At, dict], Any]
    fix: str = ""
    named: str = ""


def read(path: Path, where: str, raw: object, table: Table, context: Any = None) -> Any:
    """The record of one table ``raw`` at key path ``where``, validated by its declaration."""
    if not isinstance(raw, dict):
        raise ConfigError(path, where, "expected a table", table.fix)
    unknown_keys(path, where, raw, {k for name, key in table.keys.items() for k in (key.reads or (name,))})
    for name, key in table.keys.items():
        if key.default is REQUIRED and not key.reads and name not in raw:
            raise ConfigError(path, f"{where}.{name}", "missing", key.missing)
    values = {}
    for name, key in table.keys.items():
        at = At(path, where if key.reads else f"{where}.{name}", raw, context)
        if key.reads:
            value = raw
        elif name in raw:
            value = raw[name]
        else:
            value = key.default(at) if callable(key.default) else key.default
        values[key.field or name] = key.parse(at, value)
        if name == table.named:
            where = f"{where.partition('[')[0]}[{values[key.field or name]}]"
    return table.build(At(path, where, raw, context), values)


def tables(table: Table) -> Callable[[At, Any], tuple]:
    """A parser of an array of ``table`` (one table alone is one entry)."""
    def parse(at: At, value: object) -> tuple:
        return tuple(read(at.path, f"{at.key}[{i}]", raw, table, at.context)
                     for i, raw in enumerate(table_list(at.path, at.key, value)))
    return parse


def each(check: Callable[[At, str], Any]) -> Callable[[At, Any], tuple[str, ...]]:
    """A parser of a string or a list of strings, each checked by ``check`` at its index."""
    def parse(at: At, value: object) -> tuple[str, ...]:
        items = str_list(at.path, at.key, value)
        for i, item in enumerate(items):
            check(at._replace(key=f"{at.key}[{i}]"), item)
        return items
    return parse


def text(at: At, value: object) -> str:
    return text_value(at.path, at.key, value)


def optional_text(at: At, value: object) -> str:
    return text_value(at.path, at.key, value, required=False)


def strings(at: At, value: object) -> tuple[str, ...]:
    return str_list(at.path, at.key, value)


def given(at: At, value: object) -> object:
    return value


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
