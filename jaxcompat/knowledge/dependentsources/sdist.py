"""A dependent's sdist from the package index, at a release or the newest (as of ``--as-of``):
where a project's tests usually travel."""

from __future__ import annotations

from pathlib import Path

from packaging.version import InvalidVersion, Version

from jaxcompat.knowledge.tables import text_value
from jaxcompat.model.dependents import LATEST, Dependent, DependentSource, SourceMeans
from jaxcompat.model.matrix import ConfigError

KEY, KEYS, NAME = "version", ("version",), "sdist"
WHAT, EXAMPLE, PLACEHOLDER = "its sdist", 'version = "latest" (or "1.2.3")', "VERSION"
NEEDS = frozenset({"index"})
MISSING: tuple[type[Exception], ...] = ()


def read(path: Path, where: str, table: dict) -> DependentSource:
    version = text_value(path, f"{where}.version", table["version"])
    if version != LATEST:
        try:
            Version(version)
        except InvalidVersion:
            raise ConfigError(path, f"{where}.version", f"{version!r} is not a version",
                              'write a release ("0.11.6") or "latest"') from None
    return DependentSource(version=version)


def describe(source: DependentSource) -> str:
    return f"sdist {source.get('version')}"


def secrets(source: DependentSource) -> tuple[str, ...]:
    return ()


def resolve(dep: Dependent, means: SourceMeans, as_of: str | None) -> str:
    """Its pinned release, else the newest (as of ``as_of``)."""
    version = dep.source.get("version")
    return version if version != LATEST else means.newest_release(dep.name, as_of)


def fetch(dep: Dependent, version: str, means: SourceMeans, into: Path) -> list[str]:
    means.unpack_sdist(dep.name, version, into)
    return []


def shown(dep: Dependent, version: str, means: SourceMeans) -> str:
    return version


def commit(version: str) -> str:
    return ""
