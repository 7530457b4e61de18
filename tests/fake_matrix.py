"""Run the real jax-compat CLI over fake cells: environments are this interpreter (no uv, no
network), so the orchestration (parallel cells, interruption, locking, reports) is tested fast.

usage: python tests/fake_matrix.py <jaxcompat CLI args...>
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ["PYTHONPATH"] = str(REPO)

from jaxcompat.commands import main  # noqa: E402
from jaxcompat.env import envs, releases  # noqa: E402
from jaxcompat.run import cell  # noqa: E402

FAKE_LOCK = "pytest==8.0.0\n"


def fake_lock(c, python_exe, date, harness, env_root, lock_cache, **options):
    return FAKE_LOCK, [], 0.0


def fake_install(c, python_exe, lock, env_root, compile_bytecode=True):
    marker = env_root.parent / "installs.log"  # tests count installs here
    marker.parent.mkdir(parents=True, exist_ok=True)
    with open(marker, "a") as f:
        f.write(c.id + "\n")
    return envs.BuiltEnv(path=env_root / c.id, python=sys.executable, lock=lock)


cell.envs.lock = fake_lock
cell.envs.install = fake_install
releases.resolution_date = lambda pins, cache_dir: "2024-01-01"
cell.find_python = lambda version: sys.executable
cell.resolution.complete = lambda c, cache_dir: c  # no index: pins stay as written
cell.resolution.python_fits = lambda version, pins, cache_dir: ""  # every Python fits every pin

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
