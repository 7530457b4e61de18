"""One converter between the records (dataclasses) and what JSON stores, declared on their fields.

A record that derives from ``Record`` serializes itself: ``to_dict`` writes its fields in order
(nested records, lists, tuples and dicts of them included, as ``dataclasses.asdict`` does), and
``from_dict`` reads them back, each value by its field's type: a word of the vocabulary
(``model/vocab.Word``) parsed with an error naming the key path, a nested record read by the same
code, ``X | None``, ``list[X]``, ``tuple[X, ...]``, ``dict[str, X]``. What varies is declared,
not written as a converter:

- ``attr(key="class")``: the name JSON stores it under (``cls`` is a Python word);
- ``attr(omit=True)``: left out when it holds its default (``omit=PREDICATE``: when the predicate
  of the record says so), so a report of a record without it reads as it always did;
- ``attr(store=False)``: never stored (a cache, a handle); ``attr(dump=F)`` / ``attr(load=F)``:
  how one value is written (a redacted URL, a key) or read (``float``);
- ``_keys``: the stored keys in order where it is not the fields' (a property's name adds its
  value), ``_extra``: properties stored after the fields;
- ``upgrade(d)``: a classmethod that turns a record of an earlier version into today's before it
  is read (a message prefix that became a field).

Reading is lenient, as a report of any version must load: a key it does not know is left to its
readers, a key it lacks takes its field's default (None where its type holds None), a null where
the type holds none takes the default too; a required key that is missing, or a word that is not
one, raises ``RecordError`` (a ValueError and a KeyError, as the readers catch either) naming the
key path. Scalars are kept as stored (an int where a float is declared stays an int, so a report
read and written again is the same bytes) unless ``attr(load=...)`` says otherwise.

Why not cattrs, msgspec or pydantic: each would be a new dependency of the package (the pytest
plugin keeps none but pytest, and the package only packaging and uv), each costs 0.16 to 0.5 s of
CPU to import on a CLI that starts in about 1 s (this module: a few ms), and none writes the
stored reports byte for byte as they are (omitted defaults, renamed and derived keys, int kept
int) without as many hooks as there were converters. The TOML files are read by a declaration
too, but not this one: they are strict where reports are lenient (an unknown key is refused with
"did you mean", a missing one names the fix), every error names the file, and some of their values
are checked against the world (a case file that must exist and hold the test), which a record of
model/ may not do. Their tables are declared in knowledge/config.py and knowledge/dependents.py
(``Table``, ``Key``) and walked by knowledge/tables.py.
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from collections.abc import Callable
from enum import Enum
from typing import Any, ClassVar

OMIT = "omit"  # the field's metadata keys
KEY = "key"
STORE = "store"
DUMP = "dump"
LOAD = "load"


class RecordError(ValueError, KeyError):
    """A stored record that cannot be read: the message names the key path and what is wrong."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def attr(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING, key: str = "",
         omit: bool | Callable[[Any], bool] = False, store: bool = True, dump: Callable | None = None,
         load: Callable | None = None, repr: bool = True, compare: bool = True) -> Any:  # noqa: A002
    """A record's field, with how it is stored (see the module)."""
    meta = {KEY: key, OMIT: omit, STORE: store, DUMP: dump, LOAD: load}
    return dataclasses.field(default=default, default_factory=default_factory, repr=repr, compare=compare,
                             metadata=meta)


class Record:
    """A dataclass that serializes itself (``to_dict``) and reads itself back (``from_dict``)."""

    _keys: ClassVar[tuple[str, ...]] = ()
    _extra: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict:
        return to_dict(self)

    @classmethod
    def from_dict(cls, d: dict, where: str = ""):
        return from_dict(cls, d, where)


def to_dict(record: Any) -> dict:
    """What JSON stores of a record (the keys in order, what is omitted left out)."""
    fields, keys, derived = _writer(type(record))
    by_key = {}
    for name, key, omit, write in fields:
        value = getattr(record, name)
        if omit is not None and omit(record, value):
            continue
        by_key[key] = write(value)
    if keys is None:
        return {**by_key, **{k: dump(getattr(record, k)) for k in derived}}
    return {k: by_key[k] if k in by_key else dump(getattr(record, k)) for k in keys
            if k in by_key or k in derived}


def dump(value: Any) -> Any:
    """A value as JSON stores it: records by their ``to_dict``, containers member by member."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value.to_dict() if isinstance(value, Record) else to_dict(value)
    if isinstance(value, (list, tuple)):
        return type(value)(dump(v) for v in value)
    if isinstance(value, dict):
        return type(value)((k, dump(v)) for k, v in value.items())
    return value


def from_dict(cls: type, d: Any, where: str = "") -> Any:
    """A record of ``cls`` read from what JSON stored (see the module for what is lenient)."""
    if isinstance(d, cls):
        return d
    if not isinstance(d, dict):
        raise RecordError(f"{where or cls.__name__}: expected a table of {cls.__name__}, got {type(d).__name__}")
    upgrade = getattr(cls, "upgrade", None)
    d = upgrade(d) if upgrade is not None else d
    values = {}
    for name, key, has_default, holds_none, read in _reader(cls):
        value = d.get(key)
        if value is None and (not holds_none or key not in d):
            if has_default:
                continue  # its default
            if not holds_none:
                path = f"{where}.{key}" if where else key
                raise RecordError(f"{path}: null, and it has no default" if key in d else f"{path}: missing")
        values[name] = read(value, f"{where}.{key}" if where else key)
    return cls(**values)


_WRITERS: dict[type, tuple] = {}
_READERS: dict[type, list] = {}


def _writer(cls: type) -> tuple:
    """How a record class is written, worked out once: (name, key, omitted when, write) per stored field,
    the keys in order (None: the fields' order, then ``_extra``), the derived keys."""
    if cls not in _WRITERS:
        fields = []
        for f in dataclasses.fields(cls):
            meta = f.metadata
            if meta.get(STORE) is False:
                continue
            fields.append((f.name, meta.get(KEY) or f.name, _omitted_when(f), meta.get(DUMP) or dump))
        stored = {key for _, key, _, _ in fields}
        keys = getattr(cls, "_keys", ()) or None
        if keys is not None and not stored <= set(keys):  # a field added to the record and not to its _keys
            raise TypeError(f"{cls.__name__}._keys lacks {sorted(stored - set(keys))}")
        every = {f.metadata.get(KEY) or f.name for f in dataclasses.fields(cls)}
        derived = tuple(k for k in keys if k not in every) if keys else tuple(getattr(cls, "_extra", ()))
        _WRITERS[cls] = (fields, keys, derived)
    return _WRITERS[cls]


def _omitted_when(f: dataclasses.Field) -> Callable[[Any, Any], bool] | None:
    """When a field is left out of what is stored: holding its default (``omit=True``), or when
    the record's predicate says so; None: never."""
    omit = f.metadata.get(OMIT)
    if omit is True:
        default = _default(f)
        return lambda record, value: value == default
    return (lambda record, value: omit(record)) if omit else None


def _reader(cls: type) -> list:
    """How a record class is read, worked out once: (name, key, has a default, its type holds
    None, read) per field that is stored and given to the constructor."""
    if cls not in _READERS:
        hints, out = _hints(cls), []
        for f in dataclasses.fields(cls):
            if not f.init or f.metadata.get(STORE) is False:
                continue
            load = f.metadata.get(LOAD)
            read = (lambda v, w, load=load: load(v)) if load else _loader(hints[f.name], f.default)
            has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            out.append((f.name, f.metadata.get(KEY) or f.name, has_default, _holds_none(hints[f.name]), read))
        _READERS[cls] = out
    return _READERS[cls]


def _same(value: Any, where: str) -> Any:
    return value


def _loader(tp: Any, default: Any = dataclasses.MISSING) -> Callable[[Any, str], Any]:
    """How one value of type ``tp`` is read (``default``: a word equal to it is taken as it is)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) != 1:
            return _same
        inner = _loader(options[0], default)
        return lambda v, w: None if v is None else inner(v, w)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return lambda v, w: v if v == default or isinstance(v, tp) else _word(tp, v, w)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return lambda v, w: from_dict(tp, v, w)
    if origin in (list, tuple) and not (origin is tuple and not (len(args) == 2 and args[1] is Ellipsis)):
        item = _loader(args[0]) if args else _same
        if item is _same:
            return lambda v, w: origin(v) if isinstance(v, (list, tuple)) else v
        return lambda v, w: origin(item(x, f"{w}[{i}]") for i, x in enumerate(v)) if isinstance(v, (list, tuple)) else v
    if origin is tuple:  # tuple[A, B]: each place its own type
        items = [_loader(a) for a in args]
        return lambda v, w: (tuple(r(x, f"{w}[{i}]") for i, (r, x) in enumerate(zip(items, v, strict=False)))
                             if isinstance(v, (list, tuple)) else v)
    if origin is dict:
        item = _loader(args[1]) if len(args) == 2 else _same
        if item is _same:
            return lambda v, w: dict(v) if isinstance(v, dict) else v
        return lambda v, w: {k: item(x, f"{w}.{k}") for k, x in v.items()} if isinstance(v, dict) else v
    return _same


def _word(tp: type, value: Any, where: str) -> Any:
    """A word of the vocabulary; a RecordError naming the key path and the words there are."""
    try:
        return tp.parse(value, where) if hasattr(tp, "parse") else tp(value)
    except ValueError as e:
        raise RecordError(str(e) if hasattr(tp, "parse") else f"{where}: {e}") from None


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _holds_none(tp: Any) -> bool:
    return tp is Any or tp is object or type(None) in typing.get_args(tp)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """Each field's type, its annotation read in its module (a name it cannot resolve: Any)."""
    if cls not in _HINTS:
        space = {**vars(sys.modules[cls.__module__]), **{c.__name__: c for c in cls.__mro__}}
        hints = {}
        for f in dataclasses.fields(cls):
            try:
                hints[f.name] = eval(f.type, space) if isinstance(f.type, str) else f.type  # noqa: S307
            except Exception:  # noqa: BLE001 (a name imported only for type checkers)
                hints[f.name] = Any
        _HINTS[cls] = hints
    return _HINTS[cls]
