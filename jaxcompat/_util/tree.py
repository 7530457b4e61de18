"""A project folder's own files: all but version control, virtual environments, caches and build
output (what a candidate's folder and a dependent's checkout are keyed and copied by)."""

from __future__ import annotations

import hashlib
from pathlib import Path

SKIP_DIRS = {".git", ".hg", ".nox", ".tox", ".venv", "venv", "__pycache__", "build", "dist",
             ".mypy_cache", ".pytest_cache", ".ruff_cache", "node_modules"}


def files(root: Path):
    for p in root.iterdir():
        if p.is_dir() and not p.is_symlink():
            if not skipped(p.name):
                yield from files(p)
        elif p.is_file() and not p.name.endswith((".pyc", ".pyo", ".so")):
            yield p


def skipped(name: str) -> bool:
    """A folder of that name holds no file of the project's own."""
    return name in SKIP_DIRS or name.endswith(".egg-info")


def digest(root: Path) -> str:
    """The SHA-256 of the folder's own files: their paths and contents."""
    h = hashlib.sha256()
    for p in sorted(files(root)):
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()
