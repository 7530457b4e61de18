"""The kinds of a candidate's direct reference (``NAME @ URL``, or a plain path): a closed set, one
module each, behind one interface; the registry below is the only list of them. A release pin
(``jax==0.4.35``) and the index options (``model/index.IndexOptions``) are not direct references:
they need no kind.

Each kind module holds, for its references alone (``url`` as given, ``path`` its local path for a
``file://`` URL, else None; ``name`` the distribution as the requirement spells it):

- ``NAME``: how reports and errors name the kind (``"wheel"``); ``SUFFIXES``: the file-name endings
  that make a plain path look like one (``.whl``); ``MOVES``: whether its code may change under the
  same URL (a git branch): its lock is then resolved again on every run; ``NEEDS``: what having its
  code takes (``"git"``: the git program), said before anything runs;
- ``takes(url, path)``: whether a reference is of this kind (the registry asks in its order; the
  first that takes it is its kind);
- ``name_of(path, given)``: the distribution a plain path of this kind names (a ``SourceError``
  quoting ``given`` if it names none); "" for a kind that is never a plain path;
- ``check(name, url, path)``: what must hold before anything is downloaded (a ``SourceError``
  saying why and what to write);
- ``target(name, url, path)``: the URL the candidate's pin holds (the reference itself, or the one
  file it stands for);
- ``digest(name, url, path)``: its content, part of the environment's key ("" where the lock pins
  it, or nothing local is there to read);
- ``date(name, url, path)``: (date, why) for a candidate PyPI does not date.

Adding a kind: one module here and one line in ``KINDS``.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from urllib.parse import urlparse

from jaxcompat.env.candidatekinds import archive, folder, git, sdist, wheel, wheelhouse
from jaxcompat.model.index import SourceError, local_path

KINDS: tuple[ModuleType, ...] = (git, wheelhouse, folder, wheel, sdist, archive)  # asked in this order
SUFFIXES = tuple(s for kind in KINDS for s in kind.SUFFIXES)


def recognise(url: str, path: Path | None) -> ModuleType | None:
    """The kind of a reference (``path``: its local path, None for a remote URL), None if no kind takes it."""
    return next((kind for kind in KINDS if kind.takes(url, path)), None)


def named(name: str) -> ModuleType | None:
    """The kind a report names ``name`` (an installed distribution's record), None if none is."""
    return next((kind for kind in KINDS if kind.NAME == name), None)


def moves(url: str) -> bool:
    """Whether the code at a direct reference may change under the same URL."""
    kind = recognise(url, local_path(url) if urlparse(url).scheme == "file" else None)
    return kind is not None and kind.MOVES


def needs(url: str) -> frozenset[str]:
    """What having the code at a direct reference takes (read from the URL alone, unvalidated)."""
    kind = recognise(url, None)
    return kind.NEEDS if kind is not None else frozenset()


def named_by_file(filename: str) -> str:
    """The distribution a file's name names, for a file of a kind that has file names (a wheel, an
    sdist: one no longer there is still named by its name); "" if none does."""
    for kind in KINDS:
        if kind.SUFFIXES and filename.endswith(kind.SUFFIXES):
            try:
                return kind.name_of(Path(filename), filename)
            except SourceError:
                continue
    return ""
