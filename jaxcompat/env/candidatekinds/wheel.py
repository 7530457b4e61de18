"""A built wheel: a local ``.whl`` file or a remote one (``https://…/NAME-VERSION-….whl``)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from packaging.utils import parse_wheel_filename

from jaxcompat.env.candidatekinds import files
from jaxcompat.model.index import SourceError

NAME, SUFFIXES, MOVES = "wheel", (".whl",), False
NEEDS: frozenset[str] = frozenset()


def takes(url: str, path: Path | None) -> bool:
    if path is None:
        return urlparse(url).scheme in ("https", "http") and urlparse(url).path.endswith(SUFFIXES)
    return path.is_file() and path.name.endswith(SUFFIXES)


def name_of(path: Path, given: str) -> str:
    try:
        return str(parse_wheel_filename(path.name)[0])
    except ValueError as e:
        raise SourceError(f"{given!r}: not a wheel file name ({e})") from None


def check(name: str, url: str, path: Path | None) -> None:
    """A local wheel's file name names the distribution it is given for."""
    files.same_name(name, url, path, name_of)


target = files.as_given


digest = files.file_digest


def date(name: str, url: str, path: Path | None) -> tuple[str, str]:
    return files.dated_by_file(name, path, NAME)
