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


def refuse_holding(path: Path, dep: Dependent, **folders: Path) -> None:
    """A ConfigError (the file, the key, the fix) when ``dep``'s checkout holds one of ``folders``
    (the state folder, the reports folder): its key would move with every run, its copy hold the
    copies."""
    if dep.source.get("folder") is None:
        return
    checkout = Path(dep.source.get("folder"))
    for option, folder in folders.items():
        if folder.resolve().is_relative_to(checkout):
            raise ConfigError(path, f"dependent[{dep.name}].path", f"{dep.source.get('path')!r} holds the {option} "
                              "folder (what each run writes would be the checkout's, and its copy)",
                              f"give --{option} a folder outside the checkout, or name a checkout that does not "
                              "hold it")


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
    return tree.checkout_digest(folder)


def fetch(dep: Dependent, version: str, means: SourceMeans, into: Path) -> list[str]:
    """Its own files copied (``tree.checkout``: what its version keys; symlinks followed), refused
    when they are no longer that version (the checkout edited meanwhile)."""
    dest = into / dep.name
    dest.mkdir(parents=True)
    for name, path in tree.checkout(Path(dep.source.get("folder"))):
        if path is None:
            (dest / name).mkdir()
        else:
            shutil.copy2(path, dest / name)
    if tree.checkout_digest(dest) != version:
        raise OSError(f"the folder {_written(dep.source)} changed while it was copied: run again")
    return []


def shown(dep: Dependent, version: str, means: SourceMeans) -> str:
    return f"tree {version[:12]}"


def commit(version: str) -> str:
    return ""
