"""A wheelhouse: a folder of built wheels that is not a project (``dist/`` after ``python -m build``),
given as a plain path (``check ./dist``) or as ``NAME @ file:///ABSOLUTE/dist``. The candidate is the
wheel of that distribution in it, the newest version if it holds several: the pin is that file, so
from there on it is a wheel (keyed and dated by that file)."""

from __future__ import annotations

from pathlib import Path

from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from jaxcompat.env.candidatekinds import files
from jaxcompat.model.index import SourceError

NAME, SUFFIXES, MOVES = "wheelhouse", (), False
NEEDS: frozenset[str] = frozenset()
PROJECT = ("pyproject.toml", "setup.cfg", "setup.py")  # a folder with one of these is a project


def _wheels(folder: Path) -> dict[str, list[tuple[Version, Path]]]:
    """{distribution: [(version, file)]} of the wheels in ``folder`` (a file not named as a wheel is
    no wheel of any)."""
    out: dict[str, list[tuple[Version, Path]]] = {}
    for p in sorted(folder.glob("*.whl")):
        try:
            name, version = parse_wheel_filename(p.name)[:2]
        except ValueError:
            continue
        out.setdefault(str(name), []).append((version, p))
    return out


def takes(url: str, path: Path | None) -> bool:
    return (path is not None and path.is_dir() and not any((path / f).is_file() for f in PROJECT)
            and bool(_wheels(path)))


def name_of(path: Path, given: str) -> str:
    names = sorted(_wheels(path))
    if len(names) == 1:
        return names[0]
    raise SourceError(f"{given!r}: {path} holds wheels of {len(names)} distributions ({', '.join(names)}): "
                      f"name the one to check, e.g. {names[0]} @ {path.as_uri()}")


def _chosen(name: str, url: str, path: Path) -> Path:
    """The wheel of ``name`` in the folder: its newest version's one file."""
    wheels = _wheels(path)
    found = wheels.get(str(canonicalize_name(name)), [])
    if not found:
        raise SourceError(f"{name} @ {url}: no wheel of {name} in {path} (it holds {', '.join(sorted(wheels))}): "
                          f"build one there (python -m build --wheel), or name one of those")
    newest = max(v for v, _ in found)
    newest_files = [p for v, p in found if v == newest]
    if len(newest_files) > 1:
        raise SourceError(f"{name} @ {url}: {len(newest_files)} wheels of {name} {newest} in {path} "
                          f"({', '.join(p.name for p in newest_files)}): give the one to check, "
                          f"e.g. {name} @ {newest_files[0].as_uri()}")
    return newest_files[0]


def check(name: str, url: str, path: Path | None) -> None:
    if path is not None:
        _chosen(name, url, path)


def target(name: str, url: str, path: Path | None) -> str:
    return _chosen(name, url, path).as_uri() if path is not None else url


def digest(name: str, url: str, path: Path | None) -> str:
    return files.sha256(_chosen(name, url, path)) if path is not None else ""


def date(name: str, url: str, path: Path | None) -> tuple[str, str]:
    return files.dated_by_file(name, _chosen(name, url, path) if path is not None else None, NAME)
