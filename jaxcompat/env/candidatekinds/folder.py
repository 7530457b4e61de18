"""A local project folder (a checkout): uv builds and installs it as it is now; keyed by its files
as a checkout's are (``tree.checkout``)."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.utils import canonicalize_name

from jaxcompat._util import tree
from jaxcompat._util.toml import tomllib
from jaxcompat.env.candidatekinds import files
from jaxcompat.model.index import SourceError

NAME, SUFFIXES, MOVES = "folder", (), False
NEEDS: frozenset[str] = frozenset()


def takes(url: str, path: Path | None) -> bool:
    return path is not None and path.is_dir()


def name_of(path: Path, given: str) -> str:
    name = project_name(path)
    if name:
        return name
    raise SourceError(f"{given!r}: a folder without a project name (no [project] name in pyproject.toml, "
                      f"no name in setup.cfg): write it as NAME @ {path.as_uri()}")


def project_name(folder: Path) -> str:
    """A project folder's distribution name, from pyproject.toml or setup.cfg ("" if neither says)."""
    try:
        data = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
        name = data.get("project", {}).get("name", "")
        if name:
            return str(canonicalize_name(name))
    except (OSError, ValueError):
        pass
    try:
        m = re.search(r"^\s*name\s*=\s*(\S+)", (folder / "setup.cfg").read_text(encoding="utf-8"), re.M)
        return str(canonicalize_name(m.group(1))) if m else ""
    except OSError:
        return ""


def check(name: str, url: str, path: Path | None) -> None:
    """Any name: a folder's own may be unreadable until it is built."""


def target(name: str, url: str, path: Path | None) -> str:
    return url


def digest(name: str, url: str, path: Path | None) -> str:
    return tree.checkout_digest(path) if path is not None and path.is_dir() else ""


def date(name: str, url: str, path: Path | None) -> tuple[str, str]:
    return files.dated_today(name, NAME)
