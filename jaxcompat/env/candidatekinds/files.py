"""What the candidate's kinds share: a file's digest and date, the date of code that is what it is
now (today), and the parts of the interface several kinds answer alike."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Callable

from packaging.utils import canonicalize_name

from jaxcompat.model.index import SourceError


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_date(path: Path) -> str:
    return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc).date().isoformat()


def today() -> str:
    return dt.datetime.now(dt.timezone.utc).date().isoformat()


def dated_by_file(name: str, path: Path | None, kind: str) -> tuple[str, str]:
    """(date, why) of a local file: its modification day; today if it is not (or no longer) here."""
    if path is not None and path.is_file():
        return file_date(path), f"{name} from {path.name}, dated by its file ({file_date(path)})"
    return dated_today(name, kind)


def dated_today(name: str, kind: str) -> tuple[str, str]:
    return today(), f"{name} from a {kind}, dated today (its code is as of now)"


def as_given(name: str, url: str, path: Path | None) -> str:
    """``target`` of a kind whose pin holds the URL as it was given."""
    return url


def file_digest(name: str, url: str, path: Path | None) -> str:
    """``digest`` of a kind that is one local file: its SHA-256 ("" for a remote one)."""
    return sha256(path) if path is not None and path.is_file() else ""


def no_digest(name: str, url: str, path: Path | None) -> str:
    """``digest`` of a remote kind: nothing here to hash (its lock pins it)."""
    return ""


def named_by(parse: Callable[[str], tuple], what: str) -> Callable[[Path, str], str]:
    """``name_of`` of a file kind: the distribution its file name (read by ``parse``) names."""
    def name_of(path: Path, given: str) -> str:
        try:
            return str(parse(path.name)[0])
        except ValueError as e:
            raise SourceError(f"{given!r}: not {what} file name ({e})") from None
    return name_of


def same_name(name_of: Callable[[Path, str], str]) -> Callable[[str, str, Path | None], None]:
    """``check`` of a file kind: a local file's name names the distribution it is given for."""
    def check(name: str, url: str, path: Path | None) -> None:
        if path is not None and canonicalize_name(name_of(path, url)) != canonicalize_name(name):
            raise SourceError(f"{name} @ {url}: that file is {name_of(path, url)}, not {name}")
    return check
