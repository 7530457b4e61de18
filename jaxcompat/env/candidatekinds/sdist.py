"""A local source distribution (``NAME-VERSION.tar.gz``, ``.zip``): built by uv on install."""

from __future__ import annotations

from pathlib import Path

from packaging.utils import parse_sdist_filename

from jaxcompat.env.candidatekinds import files
from jaxcompat.model.index import SourceError

NAME, SUFFIXES, MOVES = "sdist", (".tar.gz", ".zip", ".tar.bz2", ".tgz"), False
NEEDS: frozenset[str] = frozenset()


def takes(url: str, path: Path | None) -> bool:
    return path is not None and path.is_file() and path.name.endswith(SUFFIXES)


def name_of(path: Path, given: str) -> str:
    try:
        return str(parse_sdist_filename(path.name)[0])
    except ValueError as e:
        raise SourceError(f"{given!r}: not an sdist file name ({e})") from None


def check(name: str, url: str, path: Path | None) -> None:
    """Its file name names the distribution it is given for."""
    files.same_name(name, url, path, name_of)


target = files.as_given


digest = files.file_digest


def date(name: str, url: str, path: Path | None) -> tuple[str, str]:
    return files.dated_by_file(name, path, NAME)
