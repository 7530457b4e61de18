"""The records of ``dependents.toml``: the ecosystem's projects whose own test suites the crater
runs (``knowledge/dependents.py`` validates the file into these; nothing else reads it)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

LATEST = "latest"  # version: the newest release (as of --as-of, when given)
# what git check-ref-format refuses, and anything git could read as an option
_BAD_REF = re.compile(r"^-|\.\.|[\s~^:?*\[\\\x00-\x1f\x7f]|@\{|^/|/$|\.lock$|^\.|/\.")


def bad_ref(ref: str) -> str:
    """Why ``ref`` cannot be a git ref of a dependent (git could read it as an option, or refuses
    its form), or ""."""
    if not ref:
        return "it is empty"
    if ref.startswith("-"):
        return "it begins with '-' (git would read it as an option)"
    if _BAD_REF.search(ref):
        return "git refuses that form of ref name (spaces, '..', '~', '^', ':', '?', '*', '[', '\\')"
    return ""


_PART = re.compile(r"^(?P<name>[^.]+)\.part(?P<k>[1-9][0-9]*)-of-(?P<n>[1-9][0-9]*)$")


def part_name(name: str, k: int, n: int) -> str:
    return f"{name}.part{k}-of-{n}"


def part_of(unit: str) -> tuple[str, int, int] | None:
    """``lineax.part1-of-2`` -> ("lineax", 1, 2); a whole dependent's name -> None."""
    m = _PART.match(unit)
    return (m["name"], int(m["k"]), int(m["n"])) if m else None


@dataclass(frozen=True, init=False, repr=False)
class DependentSource:
    """Where a dependent's code (and its tests) come from: the values of its source's keys in
    ``dependents.toml``. Its kind is the one whose main key it holds (e.g. ``version``: an sdist,
    ``git``: a URL at a ref), each kind a module of ``knowledge/dependentsources/`` that reads,
    fetches, dates, keys and names its sources."""

    values: tuple[tuple[str, str], ...] = ()  # (key, value), sorted; a key not given is not held

    def __init__(self, **values: str) -> None:
        object.__setattr__(self, "values", tuple(sorted((k, v) for k, v in values.items() if v)))

    def get(self, key: str) -> str:
        """The value of ``key``, "" where it was not given."""
        return dict(self.values).get(key, "")

    def __repr__(self) -> str:
        # The result cache's key holds this text: the three keys the record held before kinds had
        # modules come first, always, so a result keyed then is found again.
        shown = {"version": "", "git": "", "ref": "", **dict(self.values)}
        return f"DependentSource({', '.join(f'{k}={v!r}' for k, v in shown.items())})"


@dataclass(frozen=True)
class Dependent:
    name: str  # its distribution name on the index
    source: DependentSource
    tests: tuple[str, ...] = ()  # paths inside the project; () = its own pytest configuration
    extras: tuple[str, ...] = ()  # test-dependency hints (default: found where the project declares them)
    groups: tuple[str, ...] = ()
    with_: tuple[str, ...] = ()  # requirements its tests need that it declares nowhere
    cpu_devices: int = 1  # XLA host devices its tests expect
    env: tuple[tuple[str, str], ...] = ()  # environment variables for its tests
    budget_s: float = 1800.0  # the whole dependent, both sides, installs included
    test_timeout_s: float | None = None  # one test's time limit (None: the matrix's case_timeout_s)
    depends_on: tuple[str, ...] = ("jax",)  # packages of the ecosystem it is built on
    note: str = ""
    split: int = 1  # its test files dealt into this many parts, each a unit of work of its own (--shard)
    part: int = 0  # one of those parts (1..split); 0: the whole dependent
    weights: tuple[tuple[str, float], ...] = ()  # a split one's test files weighed by an earlier stored run

    @property
    def unit(self) -> str:
        """Its name as a unit of work (a shard's, a stored result's): ``lineax.part1-of-2`` for a
        part (a normalised name holds no '.'), else its name."""
        return part_name(self.name, self.part, self.split) if self.part else self.name

    def environment(self) -> dict[str, str]:
        env = dict(self.env)
        if self.cpu_devices > 1:
            flags = env.get("XLA_FLAGS", "")
            env["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={self.cpu_devices}".strip()
        return env


@dataclass(frozen=True)
class Dependents:
    path: Path
    dependents: tuple[Dependent, ...] = field(default_factory=tuple)

    def get(self, name: str) -> Dependent | None:
        return next((d for d in self.dependents if d.name == name), None)


class SourceMeans(Protocol):
    """What a kind of dependent source may use to have its code (``env/projects.py`` lends it, bound
    to the cache folder): the package index and git. Each failure is a ``SourceMissing`` in the
    index's or git's words."""

    def newest_release(self, name: str, as_of: str | None) -> str:
        """The newest release of ``name`` (the last before ``as_of``, when given)."""

    def unpack_sdist(self, name: str, version: str, into: Path) -> None:
        """``name``'s sdist at ``version`` from the index, unpacked into ``into``."""

    def git_commit(self, url: str, ref: str, as_of: str | None) -> str:
        """The commit ``ref`` names at ``url`` now (the last on it before ``as_of``, when given)."""

    def git_checkout(self, url: str, commit: str, into: Path) -> list[str]:
        """The tree of ``commit`` checked out into ``into``; the files whose contents it lacks."""

    def git_describe(self, url: str, commit: str) -> str:
        """The commit by its nearest tag (``git describe --tags``)."""
