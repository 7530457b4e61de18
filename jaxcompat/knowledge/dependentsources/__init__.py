"""The kinds of a dependent's source: a closed set, one module each, behind one interface; the
registry below is the only list of them. A kind is named in ``dependents.toml`` by its main key
(e.g. ``version = …``: an sdist, ``git = …``: a URL at a ref).

Each kind module holds, for its sources alone:

- ``KEY`` (its main key), ``KEYS`` (every key it reads, ``KEY`` first), ``NAME`` (how reports name
  it), ``WHAT``, ``EXAMPLE`` and ``PLACEHOLDER`` (the words of an error that lists the kinds);
- ``NEEDS``: what having its code takes (``"git"``: the git program; ``"index"``: the network);
  ``MISSING``: the errors of its own (beyond the index's and git's) that say its code cannot be had;
- ``read(path, where, table)``: its keys validated into a ``DependentSource`` (a ``ConfigError``
  naming the file, the key and the fix, before anything is downloaded);
- ``describe(source)``: how reports name the source; ``secrets(source)``: the URLs whose
  credentials reports must never show;
- ``resolve(dep, means, as_of)``: what it runs at now (or as of a day): a release, a commit, a
  folder's content. That text, with the record, is the result cache's key of the dependent;
- ``fetch(dep, version, means, into)``: its code at that under ``into``; the files it lacks;
- ``shown(dep, version, means)``: that version as reports name it; ``commit(version)``: the commit
  it is, for a kind that has commits ("" else).

``means`` is what the kind may use to reach the index or git (``model.dependents.SourceMeans``,
lent by ``env/projects.py``). Adding a kind: one module here and one line in ``KINDS``.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from jaxcompat.knowledge.dependentsources import folder, git, sdist
from jaxcompat.model.dependents import DependentSource
from jaxcompat.model.matrix import ConfigError

KINDS: dict[str, ModuleType] = {kind.KEY: kind for kind in (sdist, git, folder)}
KEYS = {key for kind in KINDS.values() for key in kind.KEYS}


def of(source: DependentSource) -> ModuleType:
    """The kind of ``source``: the one whose main key it holds."""
    return next(kind for key, kind in KINDS.items() if source.get(key))


def read(path: Path, where: str, table: dict) -> DependentSource:
    """A ``[[dependent]]`` table's source: exactly one kind's main key, read by that kind, and no
    key of another kind."""
    given = [kind for key, kind in KINDS.items() if table.get(key) is not None]
    if len(given) != 1:
        named = [f"{k.KEY} ({k.WHAT})" for k in KINDS.values()]
        raise ConfigError(path, where, f"give exactly one source: {', '.join(named[:-1])} or {named[-1]}",
                          "write " + ", or ".join(k.EXAMPLE for k in KINDS.values()))
    [kind] = given
    source = kind.read(path, where, table)
    for other in KINDS.values():
        for key in other.KEYS:
            if key not in kind.KEYS and table.get(key) is not None:
                raise ConfigError(path, f"{where}.{key}", f"a {key} needs a {other.NAME} source",
                                  f"drop {key}, or give {other.KEY} = {other.PLACEHOLDER}")
    return source


def describe(source: DependentSource) -> str:
    """How reports name ``source`` ("sdist latest", "git URL@REF")."""
    return of(source).describe(source)
