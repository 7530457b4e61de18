"""A built wheel: a local ``.whl`` file or a remote one (``https://…/NAME-VERSION-….whl``)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from packaging.utils import canonicalize_name, parse_wheel_filename

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
    if path is not None and canonicalize_name(name_of(path, url)) != canonicalize_name(name):
        raise SourceError(f"{name} @ {url}: that file is {name_of(path, url)}, not {name}")


def target(name: str, url: str, path: Path | None) -> str:
    return url


def digest(name: str, url: str, path: Path | None) -> str:
    return files.sha256(path) if path is not None and path.is_file() else ""


def date(name: str, url: str, path: Path | None) -> tuple[str, str]:
    return files.dated_by_file(name, path, NAME)
