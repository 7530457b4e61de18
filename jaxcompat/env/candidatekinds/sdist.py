"""A local source distribution (``NAME-VERSION.tar.gz``, ``.zip``): built by uv on install."""

from __future__ import annotations

from pathlib import Path

from packaging.utils import parse_sdist_filename

from jaxcompat.env.candidatekinds import files

NAME, SUFFIXES, MOVES = "sdist", (".tar.gz", ".zip", ".tar.bz2", ".tgz"), False
NEEDS: frozenset[str] = frozenset()


def takes(url: str, path: Path | None) -> bool:
    return path is not None and path.is_file() and path.name.endswith(SUFFIXES)


name_of = files.named_by(parse_sdist_filename, "an sdist")
check = files.same_name(name_of)  # Its file name names the distribution it is given for.
target = files.as_given
digest = files.file_digest


def date(name: str, url: str, path: Path | None) -> tuple[str, str]:
    return files.dated_by_file(name, path, NAME)
