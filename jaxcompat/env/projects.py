"""A dependent project's source on this machine, had once into the state folder by its kind
(``knowledge/dependentsources/``: an sdist, a git URL at a ref, a local checkout), with the index
and git lent to it; and what it declares it needs
at run time (so a candidate its own caps exclude is said to be that, not broken)."""

from __future__ import annotations

import email.parser
import io
import shutil
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from jaxcompat._util.toml import tomllib
from jaxcompat.env import gitsource, releases, resolution, testdeps
from jaxcompat.knowledge import dependentsources
from jaxcompat.model.dependents import Dependent


class SourceMissing(Exception):
    """The dependent's code could not be had (the message says why, in the index's or git's words)."""


@dataclass(frozen=True)
class Means:
    """What a kind of source may use to have a dependent's code (``model.dependents.SourceMeans``),
    bound to the cache folder: each failure of the index or of git a ``SourceMissing``."""

    cache_dir: Path

    def newest_release(self, name: str, as_of: str | None) -> str:
        try:
            if as_of:
                return resolution.newest_as_of(name, as_of, self.cache_dir)
            return str(max(Version(v) for v in releases.versions(name, self.cache_dir)))
        except (resolution.ResolutionError, releases.IndexError_, ValueError, OSError, InvalidVersion) as e:
            raise SourceMissing(f"{name}: {e}") from None

    def unpack_sdist(self, name: str, version: str, into: Path) -> None:
        try:
            filename, blob = resolution.download_sdist(name, version, self.cache_dir)
        except (resolution.ResolutionError, OSError) as e:
            raise SourceMissing(f"{name} {version}: {e}") from None
        _unpack(filename, blob, into)

    def git_commit(self, url: str, ref: str, as_of: str | None) -> str:
        return self._git(gitsource.resolve, url, ref, self.cache_dir, as_of)

    def git_checkout(self, url: str, commit: str, into: Path) -> list[str]:
        return self._git(gitsource.checkout, url, commit, self.cache_dir, into)

    def git_describe(self, url: str, commit: str) -> str:
        return gitsource.describe(url, commit, self.cache_dir)

    @staticmethod
    def _git(call, *args):
        try:
            return call(*args)
        except gitsource.GitError as e:
            raise SourceMissing(str(e)) from None


def version_of(dep: Dependent, cache_dir: Path, as_of: str | None = None) -> str:
    """What a dependent is run at (its kind says: a release, the newest as of ``as_of``; a commit
    its ref names at the remote now or the last before ``as_of``; a folder's contents)."""
    kind = dependentsources.of(dep.source)
    try:
        return kind.resolve(dep, Means(cache_dir), as_of)
    except kind.MISSING as e:
        raise SourceMissing(f"{dep.name}: {e}") from None


def fetch(dep: Dependent, version: str, cache_dir: Path, src_dir: Path) -> Path:
    """The project's root folder, had once at ``version`` by its kind (unpacked, checked out,
    copied; re-used while it is complete)."""
    dest = _dest(dep, version, src_dir)
    done = dest / DONE
    if done.is_file():
        return _standalone(_root(dest))
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    kind = dependentsources.of(dep.source)
    try:
        absent = kind.fetch(dep, version, Means(cache_dir), dest / "src")
    except kind.MISSING as e:
        raise SourceMissing(f"{dep.name} {version}: {e}") from None
    if absent:  # a checkout of a partial mirror lacks their contents
        (dest / ABSENT).write_text("".join(f"{p}\n" for p in absent), encoding="utf-8")
    done.write_text(f"{dep.name} {version}\n")
    return _standalone(_root(dest))


def _dest(dep: Dependent, version: str, src_dir: Path) -> Path:
    return src_dir / f"{dep.name}-{version}".replace("/", "_")


def absent_files(dep: Dependent, version: str, src_dir: Path) -> list[str]:
    """The files of a git checkout whose contents its repository lacks (a partial mirror), or []."""
    path = _dest(dep, version, src_dir) / ABSENT
    return path.read_text(encoding="utf-8").splitlines() if path.is_file() else []


def describe(dep: Dependent, version: str, cache_dir: Path) -> str:
    """How a report names what it ran at: the release, the commit by its nearest tag (git describe)."""
    return dependentsources.of(dep.source).shown(dep, version, Means(cache_dir))


DONE, ABSENT = ".jaxcompat-complete", ".jaxcompat-absent"
STANDALONE = "pytest.ini"


def _standalone(root: Path) -> Path:
    """A project with no pytest configuration of its own is run as it runs on its own: pytest
    looks for one in every folder above, and above an unpacked source lies our state folder, inside
    this checkout, whose pyproject.toml (``--strict-markers``, ``xfail_strict``, its conftest.py)
    would become the project's. An empty ``[pytest]`` at its root stops that search there, as
    nothing would stop it on a maintainer's own clone of the project (plain pytest reads the same file)."""
    if not testdeps.config_file(root) and not (root / STANDALONE).exists():
        (root / STANDALONE).write_text("# written by jax-compat: the project has no pytest configuration; this\n"
                                       "# keeps pytest from taking one from the folders above it\n[pytest]\n")
    return root


def _root(dest: Path) -> Path:
    src = dest / "src"
    entries = [p for p in src.iterdir() if not p.name.startswith(".")] if src.is_dir() else []
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else src


def _unpack(name: str, blob: bytes, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    if name.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(blob)) as z:
            for member in z.namelist():
                if member.startswith("/") or ".." in Path(member).parts:
                    raise SourceMissing(f"{name}: unsafe path in the archive: {member}")
            z.extractall(into)
        return
    with tarfile.open(fileobj=io.BytesIO(blob)) as t:
        t.extractall(into, filter="data")


def runtime_requirements(root: Path) -> list[Requirement]:
    """What the project declares it needs to run (not its extras): from the sdist's PKG-INFO,
    else ``[project].dependencies``, else setup.cfg's ``install_requires``."""
    lines: list[str] = []
    if (root / "PKG-INFO").is_file():
        meta = email.parser.Parser().parsestr((root / "PKG-INFO").read_text(encoding="utf-8", errors="replace"))
        lines = meta.get_all("Requires-Dist") or []
    if not lines and (root / "pyproject.toml").is_file():
        try:
            lines = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get(
                "project", {}).get("dependencies", []) or []
        except ValueError:
            lines = []
    if not lines and (root / "setup.cfg").is_file():
        import configparser

        cfg = configparser.ConfigParser()
        try:
            cfg.read(root / "setup.cfg", encoding="utf-8")
            text = cfg.get("options", "install_requires", fallback="")
            lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        except configparser.Error:
            lines = []
    out = []
    for line in lines:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is not None and "extra" in str(req.marker):
            continue
        out.append(req)
    return out


def caps(requirements: list[Requirement], pins: dict[str, str], python: str | None = None) -> list[str]:
    """The project's own requirements that exclude an exact pin of ``pins`` ("jax<0.4.32 (flowjax
    requires; the side pins jax==0.4.33)"): the side cannot install it, and that is not a break. A
    requirement whose environment marker does not hold for the side (its ``python``, Linux,
    CPython) is no cap; with the side's Python not known, one that holds for no Python is none."""
    out = []
    for req in requirements:
        name = canonicalize_name(req.name)
        pinned = pins.get(name)
        if not pinned or not req.specifier or not _applies(req, python):
            continue
        try:
            Version(pinned)
        except InvalidVersion:
            continue  # a range or a direct reference: the resolver decides
        if not req.specifier.contains(pinned, prereleases=True):
            out.append(f"{name}{req.specifier} (the side pins {name}=={pinned})")
    return out


def _applies(req: Requirement, python: str | None) -> bool:
    if req.marker is None:
        return True
    pythons = [python] if python and python[:1].isdigit() else ["3.10", "3.11", "3.12", "3.13"]
    for py in pythons:
        env = {"python_version": ".".join(py.split(".")[:2]), "python_full_version": py if py.count(".") > 1
               else f"{py}.0", "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
               "platform_machine": "x86_64", "implementation_name": "cpython",
               "platform_python_implementation": "CPython", "extra": ""}
        try:
            if req.marker.evaluate(env):
                return True
        except Exception:  # noqa: BLE001 - a marker we cannot read: take the requirement as it is
            return True
    return False
