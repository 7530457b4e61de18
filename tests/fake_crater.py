"""Run the real ``crater`` command over fake dependents: the fake cells of tests/fake_matrix.py (this
interpreter, no uv, no network), and each dependent's source a folder under $FAKE_SOURCES instead
of its sdist (a local checkout, ``path = …``, is had as it is: it needs no network). A source
folder holding a file named CRASH kills the crater's process for that dependent (as a segfault
would); one holding HANG never returns (its budget stops it). A git dependent without a folder
fails as git would, naming its URL. $FAKE_CLOCK (ISO times, comma-separated): what the crater's
clock reads in turn, the last one kept (a shard's start, then its end: shards "in parallel").

usage: FAKE_SOURCES=DIR python tests/fake_crater.py crater <args...>
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tests.fake_matrix  # noqa: E402,F401 - patches the cells
from jaxcompat.commands import main  # noqa: E402
from jaxcompat.env import projects, releases  # noqa: E402
from jaxcompat.run import cell  # noqa: E402


def fake_fetch(dep, version, cache_dir, src_dir):
    root = Path(os.environ["FAKE_SOURCES"]) / dep.name
    if (root / "CRASH").exists():
        os.kill(os.getpid(), signal.SIGSEGV)
    if (root / "HANG").exists():
        time.sleep(3600)
    if not root.is_dir():
        if dep.source.get("git"):  # as git says it, URL and all
            raise projects.SourceMissing(f"fatal: repository '{dep.source.get('git')}' not found")
        raise projects.SourceMissing(f"{dep.name} {version}: not on the (fake) index")
    return projects._standalone(root)  # as the real fetch leaves it: its own pytest configuration, or one


def real_for_a_checkout(fake, real):
    """A local checkout needs no index and no network: its kind runs as it is."""
    return lambda dep, *args: real(dep, *args) if dep.source.get("path") else fake(dep, *args)


projects.version_of = real_for_a_checkout(lambda dep, cache_dir, as_of=None: "1.0", projects.version_of)
projects.fetch = real_for_a_checkout(fake_fetch, projects.fetch)
releases.released_since = lambda installed, day, cache_dir: []  # the fake cells' releases have no index dates

_lock = cell.envs.lock
# $FAKE_LOCK_EXTRA: a line added to every lock (a package that moved, as a new release of a dependency would)
cell.envs.lock = lambda *a, **k: ((lambda got: (got[0] + os.environ.get("FAKE_LOCK_EXTRA", ""), *got[1:]))
                                  (_lock(*a, **k)))

if os.environ.get("FAKE_CLOCK"):
    from datetime import datetime

    from jaxcompat.operations import crater

    _times = [datetime.fromisoformat(t) for t in os.environ["FAKE_CLOCK"].split(",")]
    crater._now = lambda: _times.pop(0) if len(_times) > 1 else _times[0]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
