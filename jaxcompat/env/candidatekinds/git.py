"""A git URL at a ref (``NAME @ git+https://HOST/REPO@REF``): uv clones it; its lock line pins the
commit, so it has no digest of its own; a branch moves, so it is resolved again on every run."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from jaxcompat.env.candidatekinds import files
from jaxcompat.model.index import SourceError

NAME, SUFFIXES, MOVES = "git", (), True
NEEDS = frozenset({"git"})  # the git program
SCHEMES = ("git+https", "git+http", "git+ssh", "git+file")


def takes(url: str, path: Path | None) -> bool:
    return urlparse(url).scheme in SCHEMES


def name_of(path: Path, given: str) -> str:
    return ""  # never a plain path


def check(name: str, url: str, path: Path | None) -> None:
    parsed = urlparse(url)
    if not parsed.netloc and parsed.scheme != "git+file":
        raise SourceError(f"{name} @ {url}: a git URL needs a host (git+https://github.com/OWNER/REPO@REF)")


target = files.as_given
digest = files.no_digest


def date(name: str, url: str, path: Path | None) -> tuple[str, str]:
    return files.dated_today(name, NAME)
