"""One run at a time writes a reports folder; a second waits (and says so)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path


@contextlib.contextmanager
def run_lock(reports_dir: Path):
    """One run at a time writes a reports folder; a second waits (and says so)."""
    import fcntl

    reports_dir.mkdir(parents=True, exist_ok=True)
    with open(reports_dir / ".lock", "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            print(f"another jax-compat run is writing {reports_dir} ({f.read().strip() or 'unknown'}); "
                  "waiting for it to finish…", file=sys.stderr, flush=True)
            fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}\n")
        f.flush()
        try:
            yield
        finally:
            f.truncate(0)
