"""What the candidate's kinds share: a file's digest and date, and the date of code that is what it
is now (today)."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_date(path: Path) -> str:
    return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc).date().isoformat()


def today() -> str:
    return dt.datetime.now(dt.timezone.utc).date().isoformat()


def dated_by_file(name: str, path: Path | None, kind: str) -> tuple[str, str]:
    """(date, why) of a local file: its modification day; today if it is not (or no longer) here."""
    if path is not None and path.is_file():
        return file_date(path), f"{name} from {path.name}, dated by its file ({file_date(path)})"
    return dated_today(name, kind)


def dated_today(name: str, kind: str) -> tuple[str, str]:
    return today(), f"{name} from a {kind}, dated today (its code is as of now)"
