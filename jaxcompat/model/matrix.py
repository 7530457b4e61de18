"""The records of ``matrix.toml``: settings, cells (what to install), known failures (what we
know) and hand-written requirements, as frozen dataclasses. No I/O: ``knowledge.config`` reads and
validates the files into these records; everything else only reads the records."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from jaxcompat.model.index import IndexOptions

AUTO = "auto"  # cell.python: choose the lowest supported Python this machine has

STAGES = ("resolve", "import", "case")
ANY = "*"  # pin value: install, resolved as of the cell's date; dropped if it cannot co-install
LATEST = "latest"  # pin value: the newest release at run time


class ConfigError(Exception):
    """A problem in matrix.toml, phrased as: where, what is wrong, what to write instead."""

    def __init__(self, path: Path | str, key: str, problem: str, fix: str = ""):
        self.path, self.key, self.problem, self.fix = str(path), key, problem, fix
        text = f"{path}: {key}: {problem}"
        if fix:
            text += f"\n  fix: {fix}"
        super().__init__(text)


@dataclass(frozen=True)
class Settings:
    python: str = "3.11"
    backend: str = "cpu"
    case_timeout_s: float = 300.0
    cases_dir: str = "cases"
    harness: tuple[str, ...] = ("pytest",)


@dataclass(frozen=True)
class Cell:
    """One environment: what to install, on which Python and backend."""

    id: str
    python: str
    backend: str
    pins: dict[str, str]  # dist -> exact version | "*" | "latest" | specifier
    constraints: tuple[str, ...] = ()
    date: str | None = None  # resolution cutoff (YYYY-MM-DD); derived from pins when None
    note: str = ""
    editable: tuple[str, ...] = ()  # local projects installed editable (`check --tests`): "path" or "path[extra]"
    index: IndexOptions = IndexOptions()  # other indexes, find-links folders, --pre (sources.py)
    # The packages the suite added (not the user's): companions a candidate did not name. One of
    # them never makes the candidate "not work" (jaxcompat/knowledge/learned.py walks it back or leaves it out).
    added: tuple[str, ...] = ()
    # Releases of added packages not to install ("optimistix!=0.0.7"): they do not import with
    # these pins (observed, or a learned record). An optional package keeps being optional.
    avoid: tuple[str, ...] = ()
    # The baseline's versions this candidate is held at ("numpy==2.0.1"): uv constraints for every
    # package it does not name, so that the two sides differ only in the candidate (env/sides.py).
    held: tuple[str, ...] = ()

    def requirements(self) -> list[str]:
        """PEP 508 strings for the required (non-optional) pins."""
        return [pin_requirement(d, v) for d, v in self.pins.items() if v != ANY]

    def optional(self) -> list[str]:
        """The optional ("*") pins, each with the releases to avoid ("optimistix!=0.0.7")."""
        out = []
        for d, v in self.pins.items():
            if v == ANY:
                specs = [a[len(d):] for a in self.avoid if a.startswith(d) and a[len(d):][:2] == "!="]
                out.append(d + ",".join(specs))
        return out

    def exact_pins(self) -> dict[str, str]:
        return {d: v for d, v in self.pins.items() if is_exact(v)}


class CaseEntry(NamedTuple):
    """One ``cases`` entry of a rule: a node id, file or folder, and the ranges it narrows to."""

    case: str
    affects: tuple[dict[str, SpecifierSet], ...] | None = None  # None: the failure's own ranges


@dataclass(frozen=True)
class KnownRequirement:
    """A ``[[requirement]]`` table: what a release of a package really needs, written by hand. It
    confirms or overrides the learned record of the same release (jaxcompat/knowledge/learned.py)."""

    package: str
    release: str
    requires: str  # PEP 508 with a range, e.g. "equinox>=0.11.3"
    note: str  # the evidence, in words


@dataclass(frozen=True)
class Failure:
    """A documented upstream failure and where it applies."""

    id: str
    title: str
    stage: str  # resolve | import | case
    cases: tuple[CaseEntry, ...]  # node ids ("cases/x.py::test_y") or files ("cases/x.py")
    affects: tuple[dict[str, SpecifierSet], ...]  # OR of AND-clauses over installed dists
    backends: tuple[str, ...]  # empty: every backend
    errors: tuple[str, ...]  # acceptable exception type names
    match: re.Pattern[str]
    upstream: tuple[str, ...]
    fix: str
    workaround: str = ""
    advisory: bool = False  # a usage pitfall seen on every release: reported, never "unsafe"
    # Paths or node ids that *may* hit this failure too (a broken code path many cases share):
    # failing there with the documented error is "reproduced", passing is simply "pass".
    collateral: tuple[str, ...] = ()
    source: str = ""  # the file that defines it (matrix.toml, or a --rules file)


@dataclass(frozen=True)
class Matrix:
    path: Path
    settings: Settings
    cells: tuple[Cell, ...]
    failures: tuple[Failure, ...]
    root: Path = field(default=Path("."))
    rules: tuple[Path, ...] = ()  # --rules files merged into the failures
    requirements: tuple[KnownRequirement, ...] = ()  # [[requirement]]: real requirements, by hand

    def cell(self, cell_id: str) -> Cell:
        for c in self.cells:
            if c.id == cell_id:
                return c
        raise ConfigError(self.path, "cell", f"no cell with id {cell_id!r}",
                          f"use one of: {', '.join(c.id for c in self.cells)}")

    def failure(self, failure_id: str) -> Failure | None:
        return next((f for f in self.failures if f.id == failure_id), None)


def is_exact(value: str) -> bool:
    try:
        Version(value)
    except InvalidVersion:
        return False
    return True


def pin_requirement(dist: str, value: str) -> str:
    if value in (ANY, LATEST):
        return dist
    if value.startswith("@ "):  # a direct reference (sources.py): "@ file:///…", "@ git+https://…"
        return f"{dist} {value}"
    if is_exact(value):
        return f"{dist}=={value}"
    return f"{dist}{value}"
