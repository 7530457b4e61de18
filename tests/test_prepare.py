"""One way to get a ready environment (run/cell.prepare): the matrix, ``check --tests``, the crater
and the cache key all find a cell's environment the same way, so the user's tests run in the very
environment check.json reports (the same folder, envs/<cell.id>). Everything that would touch the
network or build an environment is faked; what each path installs is recorded."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

from jaxcompat.env import envs
from jaxcompat.knowledge import learned
from jaxcompat.knowledge.config import load
from jaxcompat.model.outcomes import CellResult
from jaxcompat.model.stages import Ended
from jaxcompat.run import cell as cells
from jaxcompat.run import userrun
from tests.helpers import MINIMAL, make_tree

AVOID = "equinox!=0.11.7"


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A candidate whose companion (equinox, added by the suite) has a learned release to avoid
    and is walked back when settled; the lock says which of the two steps ran."""
    make_tree(tmp_path, MINIMAL)
    installed: list[str] = []

    def lock(c, *a, **k):
        eqx = "0.11.6" if AVOID in c.constraints else "0.11.7"
        return f"jax==0.4.33\nequinox=={eqx}\n", [], 0.0

    def settle(c, lock_text, world, *a, **k):
        return learned.Settled(c, lock_text + "# settled\n", {}, [], ["equinox walked back"], {})

    def install(c, python_exe, lock_text, env_root, compile_bytecode=True):
        installed.append(lock_text)
        return envs.BuiltEnv(path=env_root / c.id, python=sys.executable, lock=lock_text)

    monkeypatch.setattr(cells.resolution, "complete", lambda c, cache_dir: c)
    monkeypatch.setattr(cells.resolution, "jaxlib_notes", lambda c, done, cache_dir: [])
    monkeypatch.setattr(cells, "find_python", lambda version: sys.executable)
    monkeypatch.setattr(learned, "prepare",
                        lambda c, records, released=None: (replace(c, constraints=(*c.constraints, AVOID)), []))
    monkeypatch.setattr(learned, "settle", settle)
    monkeypatch.setattr(learned, "record", lambda state_dir, new: None)
    monkeypatch.setattr(cells.probe, "real_world", lambda *a, **k: None)
    monkeypatch.setattr(cells.envs, "lock", lock)
    monkeypatch.setattr(cells.envs, "install", install)
    matrix = load(tmp_path / "matrix.toml")
    candidate = replace(matrix.cells[0], pins={"jax": "0.4.33"}, added=("equinox",), date="2024-10-01")
    return matrix, candidate, tmp_path / "state", installed


def test_the_user_tests_environment_is_the_one_the_check_reports(world):
    """084bcdf: userrun.build/observe went complete -> locked -> install (no learned release
    avoided, no added package settled): the user's tests ran on equinox 0.11.7, installed over the
    environment check.json reported with 0.11.6."""
    matrix, candidate, state, installed = world
    userrun.build(candidate, matrix, state)
    assert installed == ["jax==0.4.33\nequinox==0.11.6\n# settled\n"]
    reported = CellResult(id=candidate.id, python=candidate.python, backend=candidate.backend, status="ok")
    done, built = cells.prepare(candidate, matrix, reported, state)
    assert installed == [built.lock, built.lock]
    assert AVOID in done.constraints and "equinox walked back" in reported.notes


def test_the_matrix_runs_in_the_prepared_environment(world, monkeypatch):
    matrix, candidate, state, installed = world
    seen = []
    monkeypatch.setattr(cells, "observe", lambda c, py, lock_text, *a, **k: seen.append(lock_text) or
                        Ended("not-run", "stopped here"))
    cells.run_cell(candidate, matrix, state_dir=state, reports_dir=None)
    assert seen == ["jax==0.4.33\nequinox==0.11.6\n# settled\n"]


def test_the_cache_key_follows_the_learned_releases_avoided(world, monkeypatch):
    """The key is computed before anything is installed: avoided releases change it; settling,
    which imports packages in real environments, is not run for it."""
    matrix, candidate, state, installed = world
    key = cells.input_key(candidate, matrix, state)
    monkeypatch.setattr(learned, "prepare", lambda c, records, released=None: (c, []))
    assert cells.input_key(candidate, matrix, state) != key
    assert installed == []
