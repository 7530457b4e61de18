"""A dependent's local checkout: a folder on this machine (a clone, a work in progress), named
relative to the dependents file's folder. Run as it is now: keyed by its files' contents (a file
edited is another source, a result re-used while nothing changed), copied once per content into the
state folder (its tests never write into the checkout); ``--as-of`` does not move it. Needs
neither git nor the network."""

from __future__ import annotations

import shutil
from pathlib import Path

from jaxcompat._util import tree
from jaxcompat.knowledge.tables import text_value
from jaxcompat.model.dependents import Dependent, DependentSource, SourceMeans
from jaxcompat.model.matrix import ConfigError

KEY, KEYS, NAME = "path", ("path",), "folder"
WHAT, EXAMPLE, PLACEHOLDER = "a local checkout folder", 'path = "../PROJECT"', "FOLDER"
NEEDS: frozenset[str] = frozenset()
MISSING: tuple[type[Exception], ...] = (OSError,)  # its folder gone or unreadable


def read(path: Path, where: str, table: dict) -> DependentSource:
    """The folder, as written and as found (relative to the dependents file's folder)."""
    given = text_value(path, f"{where}.path", table["path"])
    folder = (path.parent / Path(given).expanduser()).resolve()
    if not folder.is_dir():
        raise ConfigError(path, f"{where}.path", f"{given!r}: no such folder",
                          "write the folder of a local checkout of the project, relative to this file's folder, "
                          'e.g. path = "../PROJECT"')
    return DependentSource(path=given, folder=str(folder))


def describe(source: DependentSource) -> str:
    return f"folder {_written(source)}"


def _written(source: DependentSource) -> str:
    """The folder as written; one written as an absolute path by its name alone (no machine path
    in a report)."""
    given = source.get("path")
    return given if not Path(given).expanduser().is_absolute() else f"<local>/{Path(given).name}"


def secrets(source: DependentSource) -> tuple[str, ...]:
    return ()


def resolve(dep: Dependent, means: SourceMeans, as_of: str | None) -> str:
    """Its files' contents now (a checkout has no day to go back to)."""
    folder = Path(dep.source.get("folder"))
    if not folder.is_dir():
        raise FileNotFoundError(f"the folder {_written(dep.source)} is gone")
    return tree.digest(folder)


def fetch(dep: Dependent, version: str, means: SourceMeans, into: Path) -> list[str]:
    """Its own files copied (no .git, virtual environment, cache or build output)."""
    shutil.copytree(dep.source.get("folder"), into / dep.name,
                    ignore=lambda _, names: [n for n in names if tree.skipped(n)])
    return []


def shown(dep: Dependent, version: str, means: SourceMeans) -> str:
    return f"tree {version[:12]}"


def commit(version: str) -> str:
    return ""
