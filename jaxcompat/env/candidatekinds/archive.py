"""A remote archive that is not a wheel (``https://…/NAME-VERSION.tar.gz``): uv downloads and
builds it; its code is what the URL serves now."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from jaxcompat.env.candidatekinds import files

NAME, SUFFIXES, MOVES = "archive", (), False
NEEDS: frozenset[str] = frozenset()


def takes(url: str, path: Path | None) -> bool:
    return path is None and urlparse(url).scheme in ("https", "http")


def name_of(path: Path, given: str) -> str:
    return ""  # never a plain path


def check(name: str, url: str, path: Path | None) -> None:
    """Nothing to read before uv downloads it."""


target = files.as_given
digest = files.no_digest


def date(name: str, url: str, path: Path | None) -> tuple[str, str]:
    return files.dated_today(name, NAME)
