"""What --tests names (``Target``): a project installed editable with its test dependencies
(``TestDeps``, chosen from what it declares: ``Declared``), or a folder of tests. Found on disk by
env/testtarget.py (``locate``), the test dependencies chosen by env/testdeps.py; every stage that runs
or judges the user's tests is handed it."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from jaxcompat.model.matrix import ANY, Cell


@dataclass(frozen=True)
class Declared:
    """Everything the project declares that may hold test dependencies."""

    name: str = ""  # the project's distribution name, normalised
    extras: dict[str, list[str]] = field(default_factory=dict)  # extra -> requirements
    extras_file: str = ""  # where the extras are declared
    groups: dict[str, list[str]] = field(default_factory=dict)  # group -> requirements (includes expanded)
    files: dict[str, list[str]] = field(default_factory=dict)  # requirements file -> requirements
    requires_python: str = ""  # the project's own `requires-python`


@dataclass(frozen=True)
class TestDeps:
    """The test dependencies chosen for a run, and where each came from."""

    extras: tuple[str, ...] = ()  # installed as project[extra,…]
    requirements: tuple[str, ...] = ()  # from groups, files and --with
    sources: tuple[str, ...] = ()  # "extra `dev`", "dependency group `tests`", "requirements-test.txt", "--with x"
    declared: Declared = field(default_factory=Declared)

    def describe(self) -> str:
        return (
            ("test dependencies: " + ", ".join(self.sources))
            if self.sources
            else ("test dependencies: none declared (no test/dev extra, dependency group or requirements file; "
                  "add some with --with REQ)")
        )

    def for_candidate(self, pinned: set[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(requirements to install, those left out because the candidate pins that package)."""
        keep, dropped = [], []
        for req in self.requirements:
            (dropped if requirement_name(req) in pinned else keep).append(req)
        return tuple(keep), tuple(dropped)


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    """A requirement's distribution name, normalised."""
    from packaging.requirements import Requirement

    return normalise(Requirement(requirement).name)


@dataclass(frozen=True)
class Target:
    """What --tests names: a project (installed editable with its test dependencies, run with its
    own pytest configuration) or a folder of tests."""

    root: Path
    project: bool
    deps: TestDeps = field(default_factory=TestDeps)
    only: tuple[str, ...] = ()  # the tests named inside the project (paths relative to root); () = all
    env: tuple[tuple[str, str], ...] = ()  # environment variables for its tests
    timeout_s: float | None = None  # one test's time limit (None: the matrix's case_timeout_s)

    def describe(self) -> str:
        if not self.project:
            return f"the tests in {self.root.name}/"
        named = f", only {', '.join(self.only)}" if self.only else ""
        return f"{self.root.name}, installed editable, run with its own pytest configuration{named}"

    def editable(self) -> str:
        return str(self.root) + (f"[{','.join(self.deps.extras)}]" if self.deps.extras else "")

    def pinned(self, cell: Cell) -> set[str]:
        """The packages the candidate pins (their versions are what is judged)."""
        names = {normalise(d) for d, v in cell.pins.items() if v != ANY}
        return names | ({"jaxlib"} if "jax" in names else set())

    def cell(self, cell: Cell) -> Cell:
        """The candidate with the project and its test dependencies installed in it (its own
        environment, so a plain `check` of the same pins keeps its own)."""
        reqs, _ = self.deps.for_candidate(self.pinned(cell))
        if not self.project and not reqs:
            return cell
        tag = hashlib.sha256(f"{self.root}|{self.deps.extras}|{reqs}".encode()).hexdigest()[:6]
        return replace(cell, id=f"{cell.id}-tests-{tag}",
                       editable=(self.editable(),) if self.project else (),
                       constraints=tuple(cell.constraints) + reqs)

    def deps_line(self, cell: Cell) -> str:
        """What the run installs for the tests, said before it runs."""
        _, dropped = self.deps.for_candidate(self.pinned(cell))
        line = self.deps.describe() if self.project or self.deps.sources else ""
        if dropped:
            line += f" (left out, the candidate pins them: {', '.join(dropped)})"
        return line
