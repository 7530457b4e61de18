"""What --tests names, found on disk (``locate``: a project's root as pytest finds its rootdir, or
a folder of tests; its test dependencies chosen by env/testdeps.py), and the one Python both sides
of a comparison can share (``same_python``). The record is model/target.py's ``Target``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from packaging.specifiers import SpecifierSet

from jaxcompat.env import resolution
from jaxcompat.env.pythons import PythonMissing
from jaxcompat.env.testdeps import TestDepsError, choose
from jaxcompat.model.matrix import AUTO, Cell
from jaxcompat.model.target import Target


class TestsError(ValueError):
    """A --tests path that cannot be used (said in one line, no traceback)."""


def same_python(candidate: Cell, baseline: Cell, target: Target, cache_dir: Path) -> tuple[Cell, Cell, str]:
    """Both sides on one Python when they can share one (the upgrade, not the interpreter, is what
    is compared): the lowest this machine has that every pin of both sides and the project's
    ``requires-python`` accept. Cells whose Python is named stay as they are. Returns the cells
    and a line saying what was chosen ("" when nothing could be shared: each side keeps its own)."""
    if candidate.python != AUTO or baseline.python != AUTO:
        return candidate, baseline, ""
    wants = target.deps.declared.requires_python
    pythons = tuple(v for v in resolution.PYTHONS if not wants or SpecifierSet(wants).contains(v + ".0"))
    try:
        sides = [resolution.complete(c, cache_dir) for c in (candidate, baseline)]
        python = resolution.choose_python(sides[0].pins, cache_dir, pythons or resolution.PYTHONS,
                                          also=(sides[1].pins,))
    except (resolution.ResolutionError, PythonMissing, OSError, ValueError):
        return candidate, baseline, ""
    why = f"; your project requires Python {wants}" if wants else ""
    return (replace(candidate, python=python), replace(baseline, python=python),
            f"both sides on Python {python} (the lowest that every pin of both accepts{why})")


# What makes a folder a project's root, as pytest finds its rootdir from the paths it is given
# (its ini files and the files that declare a project).
ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", "pytest.ini", ".pytest.ini", "tox.ini")


def installable(folder: Path) -> bool:
    """A project pip can install: a setup.py, or a pyproject.toml that declares a project or its
    build system (one that only configures tools, pytest's ini options, is not)."""
    if (folder / "setup.py").is_file():
        return True
    path = folder / "pyproject.toml"
    if not path.is_file():
        return False
    from jaxcompat._util.toml import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return False
    return "project" in data or "build-system" in data


def project_root(path: Path) -> Path | None:
    """The nearest folder at or above ``path`` that is a project's root (``ROOT_MARKERS``) and can
    be installed (``INSTALLABLE``); None when there is none (a bare folder of tests). A git
    repository's top is as far as the walk goes."""
    here = path if path.is_dir() else path.parent
    for folder in (here, *here.parents):
        if any((folder / m).is_file() for m in ROOT_MARKERS) and installable(folder):
            return folder
        if (folder / ".git").exists() or folder == Path.home():
            return None
    return None


def locate(path: str, extras: list[str] | None = None, groups: list[str] | None = None,
           with_: list[str] | None = None, env: dict[str, str] | None = None) -> Target:
    """What --tests names. A path inside a project (its tests/ folder, one test module) is run as
    that project: its root found as pytest finds its rootdir, the project and its test
    dependencies installed, only the tests named run."""
    given = Path(path).expanduser().resolve()
    if not given.exists():
        raise TestsError(f"--tests {path}: no such file or directory")
    found = project_root(given)
    if found is not None and found != given:
        target = locate(str(found), extras, groups, with_, env)
        return replace(target, only=(given.relative_to(found).as_posix(),))
    root = given
    if not root.is_dir():
        raise TestsError(f"--tests {path}: not a directory, and no project above it "
                         "(name a project root, a folder of tests, or a test module inside a project)")
    project = (root / "pyproject.toml").is_file() or (root / "setup.py").is_file()
    if not project and (extras or groups):
        raise TestsError(f"--tests {path}: --extra/--group need a project (pyproject.toml or setup.py); "
                         "give a folder of tests its dependencies with --with REQ")
    if not project and not any(root.rglob("test_*.py")) and not any(root.rglob("*_test.py")):
        raise TestsError(f"--tests {path}: no pyproject.toml or setup.py, and no test_*.py files under it")
    try:
        deps = choose(root, extras, groups, with_)
    except TestDepsError as e:
        raise TestsError(str(e)) from None
    return Target(root, project=project, deps=deps, env=tuple(sorted((env or {}).items())))
