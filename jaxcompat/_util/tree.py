"""A project folder's own files: all but version control, virtual environments, caches and build
output (what a candidate's folder and a dependent's checkout are keyed by, a checkout copied by)."""

from __future__ import annotations

import hashlib
from pathlib import Path

EVERYWHERE = {".git", ".hg", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
TOP_ONLY = {".venv", "venv", ".nox", ".tox", "build", "dist", "node_modules"}


def checkout(root: Path) -> list[tuple[str, Path | None]]:
    """A checkout's entries as its copy holds them, in order: (the path under ``root``, the file
    read; None for a folder). Symlinks followed (a linked folder walked as if it were there; one
    that links to a folder holding it is refused: an OSError), compiled files kept; left out only
    version control and caches at any depth, and virtual environments, nox/tox and build output
    (``build``, ``dist``, ``*.egg-info``) at the top. What the checkout kind keys and copies alike."""
    out: list[tuple[str, Path | None]] = []
    _walk(root, "", {root.resolve()}, out)
    return out


def _walk(folder: Path, under: str, above: set[Path], out: list) -> None:
    for p in sorted(folder.iterdir()):
        name = under + p.name
        if p.is_dir():
            if p.name in EVERYWHERE or (not under and (p.name in TOP_ONLY or p.name.endswith(".egg-info"))):
                continue
            real = p.resolve()
            if real in above:
                raise OSError(f"{name} links to a folder that holds it (a loop): "
                              "link a folder outside the checkout's path, or copy it in")
            out.append((name, None))
            _walk(p, name + "/", above | {real}, out)
        elif p.is_file():
            out.append((name, p))


def checkout_digest(root: Path) -> str:
    """The SHA-256 of a checkout's entries (``checkout``): their paths and contents."""
    h = hashlib.sha256()
    for name, p in checkout(root):
        h.update(name.encode() + (b"/\0" if p is None else b"\0" + p.read_bytes() + b"\0"))
    return h.hexdigest()
