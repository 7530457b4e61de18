"""A dependent's git repository at a ref (a branch, a tag, a commit; its default branch when none):
fetched into one cached bare repository per URL, checked out once per commit."""

from __future__ import annotations

from pathlib import Path

from jaxcompat._util.redact import redact_url
from jaxcompat.knowledge.tables import text_value
from jaxcompat.model.dependents import Dependent, DependentSource, SourceMeans, bad_ref
from jaxcompat.model.matrix import ConfigError

KEY, KEYS, NAME = "git", ("git", "ref"), "git"
WHAT, EXAMPLE, PLACEHOLDER = "a URL", 'git = "https://…" with ref = "TAG"', "URL"
NEEDS = frozenset({"git", "index"})
MISSING: tuple[type[Exception], ...] = ()
SCHEMES = ("https://", "git+https://", "ssh://", "git@", "file://")


def read(path: Path, where: str, table: dict) -> DependentSource:
    """A git URL (credentials never shown back) at a ref git cannot read as an option."""
    url = text_value(path, f"{where}.git", table["git"])
    if not url.startswith(SCHEMES):
        raise ConfigError(path, f"{where}.git", f"{redact_url(url)!r} is not a git URL",
                          'write git = "https://github.com/OWNER/REPO" (or ssh://, git@, file://)')
    ref = text_value(path, f"{where}.ref", table["ref"]) if table.get("ref") is not None else ""
    if ref and bad_ref(ref):
        raise ConfigError(path, f"{where}.ref", f"{ref!r} is not a git ref: {bad_ref(ref)}",
                          'write a branch, a tag or a commit, e.g. ref = "v0.13.1" (or leave ref out: the '
                          "default branch)")
    return DependentSource(git=url, ref=ref)


def describe(source: DependentSource) -> str:
    return f"git {source.get('git')}@{source.get('ref') or 'HEAD'}"


def secrets(source: DependentSource) -> tuple[str, ...]:
    return (source.get("git"),)


def resolve(dep: Dependent, means: SourceMeans, as_of: str | None) -> str:
    """The commit its ref names at the remote now (or the last on it before ``as_of``)."""
    return means.git_commit(dep.source.get("git"), dep.source.get("ref"), as_of)


def fetch(dep: Dependent, version: str, means: SourceMeans, into: Path) -> list[str]:
    return means.git_checkout(dep.source.get("git"), version, into / dep.name)


def shown(dep: Dependent, version: str, means: SourceMeans) -> str:
    """The commit by its nearest tag (git describe)."""
    return means.git_describe(dep.source.get("git"), version)


def commit(version: str) -> str:
    return version
