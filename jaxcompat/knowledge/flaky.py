"""Learned flakiness: the tests that flipped by themselves when the baseline ran twice (``--aa``),
kept as data the later runs read (a test known to flip is ``flaky``, never ``broken``).

The file (``<state>/flaky.json`` unless ``--flaky-file`` names another) holds, per project (a
dependent's name, or the tested project's folder name), each test that flipped and what was seen:

    {"kind": "jax-compat flaky tests", "projects": {"alpha": {"tests/test_t.py::test_fast":
        {"seen": "passed, then failed", "learned": "2025-01-31", "times": 2}}}}

Tests that assert wall-clock speed are the usual ones: under load they flip with no change at all.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from pathlib import Path

from jaxcompat._util.atomic import write_text
from jaxcompat._util.jsonfile import read_json
from jaxcompat._util.statedir import StateDir

KIND = "jax-compat flaky tests"
FILE = StateDir(Path()).flaky.name  # its name, for messages


class FlakyFileError(ValueError):
    """A flaky file that cannot be used (one line: the file, what is wrong, the fix)."""


@dataclass
class Flaky:
    path: Path
    projects: dict[str, dict[str, dict]] = field(default_factory=dict)

    def known(self, project: str) -> tuple[tuple[str, str], ...]:
        """(test, what was seen) for each test of ``project`` known to flip."""
        tests = self.projects.get(project, {})
        return tuple((t, f"{r.get('seen', 'flipped')}, learned {r.get('learned', '?')}")
                     for t, r in sorted(tests.items()))

    def learn(self, project: str, flipped: dict[str, str], day: str | None = None) -> None:
        if not flipped:
            return
        day = day or datetime.date.today().isoformat()
        tests = self.projects.setdefault(project, {})
        for test, seen in flipped.items():
            times = int(tests.get(test, {}).get("times", 0)) + 1
            tests[test] = {"seen": seen, "learned": day, "times": times}

    def save(self) -> None:
        """Written atomically; a file that cannot be written is a FlakyFileError naming it."""
        try:
            write_text(self.path, json.dumps({"kind": KIND, "projects": self.projects}, indent=1, sort_keys=True)
                       + "\n")
        except OSError as e:
            raise FlakyFileError(f"{self.path}: cannot write it ({e.strerror or e}); give --flaky-file a file "
                                 "in a folder you can write") from None


def path_of(given: str | None, state_dir: Path) -> Path:
    return Path(given).expanduser() if given else StateDir(Path(state_dir)).flaky


def load(given: str | None, state_dir: Path, learning: bool = False) -> Flaky:
    """The flaky file: ``--flaky-file`` (``given``) or the state folder's. A named file that does
    not exist is an error unless this run learns it (``learning``: --aa); the state folder's may be
    absent (nothing learned yet). A file that is not one is an error naming it and the fix, and so,
    when this run learns, is one it could not write (a folder, a folder it cannot write in): said
    now, before anything runs, not after the whole run."""
    path = path_of(given, state_dir)
    said = f"--flaky-file {given}" if given else str(path)
    if path.exists() and not path.is_file():
        raise FlakyFileError(f"{said}: a folder, not a file (name a file, e.g. {path / FILE})")
    if learning:
        _writable(path, said)
    if not path.is_file():
        if given and not learning:
            raise FlakyFileError(f"--flaky-file {given}: no such file (learn one first: run with --aa, which "
                                 "writes it, or leave --flaky-file out)")
        return Flaky(path)
    fix = "fix it or remove it (run with --aa to learn it again)"
    data = read_json(path, FlakyFileError, unreadable=fix, damaged=fix)
    if not isinstance(data, dict) or data.get("kind") != KIND or not isinstance(data.get("projects"), dict):
        raise FlakyFileError(f"{path}: not a flaky-tests file (it needs \"kind\": \"{KIND}\" and a \"projects\" "
                             f"table); {fix}")
    projects = data["projects"]
    for name, tests in projects.items():
        if not isinstance(tests, dict) or not all(isinstance(r, dict) for r in tests.values()):
            raise FlakyFileError(f"{path}: projects.{name}: a table of test -> {{seen, learned, times}}; {fix}")
    return Flaky(path, projects)


def _writable(path: Path, said: str) -> None:
    """The file can be written where it is (its folder, or the nearest one that exists, is a folder
    this user can write in), or a FlakyFileError naming it and the fix."""
    import os

    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise FlakyFileError(f"{said}: {folder} is a file, not a folder (give --flaky-file a path in a folder)")
    if not os.access(folder, os.W_OK | os.X_OK):  # the file is replaced whole: its folder is what is written
        raise FlakyFileError(f"{said}: cannot write in {folder} (give --flaky-file a file in a folder you can "
                             "write)")
