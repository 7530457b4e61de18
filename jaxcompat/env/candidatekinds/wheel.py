"""A built wheel: a local ``.whl`` file or a remote one (``https://…/NAME-VERSION-….whl``)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from packaging.utils import parse_wheel_filename

from jaxcompat.env.candidatekinds import files

NAME, SUFFIXES, MOVES = "wheel", (".whl",), False
NEEDS: frozenset[str] = frozenset()


def takes(url: str, path: Path | None) -> bool:
    if path is None:
        return urlparse(url).scheme in ("https", "http") and urlparse(url).path.endswith(SUFFIXES)
    return path.is_file() and path.name.endswith(SUFFIXES)


name_of = files.named_by(parse_wheel_filename, "a wheel")
check = files.same_name(name_of)  # A local wheel's file name names the distribution it is given for.
target = files.as_given
digest = files.file_digest


def date(name: str, url: str, path: Path | None) -> tuple[str, str]:
    return files.dated_by_file(name, path, NAME)
