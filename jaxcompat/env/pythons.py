"""Find a CPython interpreter for a cell, wherever the machine keeps it.

Looks, in order: ``python3.X`` on PATH (run to prove it works — pyenv shims often do not),
pyenv's versions folder, then ``uv python find``. A miss is reported with what was searched
and how to install the interpreter, never silently dropped.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from jaxcompat._util.uvbin import uv_bin


class PythonMissing(Exception):
    pass


def _version_of(exe: str) -> str | None:
    try:
        out = subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


@functools.lru_cache(maxsize=None)
def full_version(exe: str) -> str:
    """``sys.version`` of the interpreter ``exe`` (a patch upgrade in place changes it), or "" when
    it does not run."""
    try:
        out = subprocess.run([exe, "-c", "import sys; print(sys.version)"], capture_output=True, text=True,
                             timeout=20)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def _pyenv_candidates(version: str) -> list[str]:
    roots = [os.environ.get("PYENV_ROOT"), str(Path.home() / ".pyenv")]
    found = []
    for root in filter(None, roots):
        versions = Path(root) / "versions"
        if not versions.is_dir():
            continue
        # Prefer the newest patch release: 3.11.10 sorts above 3.11.7.
        dirs = [d for d in versions.iterdir() if d.name.startswith(version + ".")
                and d.name[len(version) + 1:].isdigit()]
        for d in sorted(dirs, key=lambda d: int(d.name.rsplit(".", 1)[1]), reverse=True):
            exe = d / "bin" / f"python{version}"
            if exe.is_file():
                found.append(str(exe))
    return found


def _uv_candidate(version: str) -> list[str]:
    try:
        out = subprocess.run([uv_bin(), "python", "find", "--no-python-downloads", version],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return []
    return [out.stdout.strip()] if out.returncode == 0 and out.stdout.strip() else []


@functools.lru_cache(maxsize=None)
def find_python(version: str) -> str:
    """Return the path of a working CPython ``version`` (e.g. "3.11"), or raise PythonMissing."""
    searched = []
    on_path = shutil.which(f"python{version}")
    candidates = ([on_path] if on_path else []) + _pyenv_candidates(version)
    for exe in candidates:
        searched.append(exe)
        if _version_of(exe) == version:
            return exe
    for exe in _uv_candidate(version):
        searched.append(exe)
        if _version_of(exe) == version:
            return exe
    tried = ", ".join(searched) if searched else "nothing found"
    raise PythonMissing(
        f"Python {version} not found (looked for python{version} on PATH, in "
        f"$PYENV_ROOT/versions and ~/.pyenv/versions, and with `uv python find`; tried: {tried}). "
        f"Install it with `pyenv install {version}` or `uv python install {version}`, "
        f"or drop the cells that need it.")
