"""What lives where in the state folder: every path under it is named here, once, with what it holds.

The state folder (``.jaxcompat/`` of a checkout, ``~/.cache/jax-compat`` when installed,
``$JAXCOMPAT_STATE`` or ``--state`` anywhere: ``layout``) keeps what is expensive to make again:
environments, locks, the index's answers, git mirrors, results. Nothing in it is a report; all of it
may be deleted (it is made again, slower). The paths must not move: a user's caches stay valid only
while each name below stays what it is.

Every member's docstring starts with its path (``<...>`` a part that varies) and says in one line
what it holds; docs/environments.md's table of the state folder is checked against them
(tests/test_statedir.py), and no other module joins a name onto the state folder (tests/test_layers.py).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class StateDir:
    """The state folder's layout, from its root."""

    root: Path

    @property
    def cache(self) -> Path:
        """``cache/``: the package index's answers, git mirrors, memos (``CacheDir``, below)."""
        return self.root / "cache"

    @property
    def envs(self) -> Path:
        """``envs/``: one virtual environment per cell, re-used while its lock is the same
        (``.<cell>.work/``: a resolution's scratch)."""
        return self.root / "envs"

    def env(self, cell: str) -> Path:
        """``envs/<cell>/``: one cell's environment (its lock in ``jaxcompat-lock.txt``, its spec in
        ``jaxcompat-spec.json``)."""
        return self.envs / cell

    @property
    def locks(self) -> Path:
        """``locks/``: the resolver's answers by spec: ``<cell>-<key>.txt``, ``.notes.json``, ``.unresolvable.txt``."""
        return self.root / "locks"

    def run(self, name: str) -> Path:
        """``runs/<name>/``: one pytest run's working folder (log, events); ``<cell>-user`` for a user's tests."""
        return self.root / "runs" / name

    @property
    def results(self) -> Path:
        """``results/``: the result cache: ``<env>/env.json`` and ``<env>/<key>.json``, one per module
        run, by its inputs."""
        return self.root / "results"

    def side(self, key: str) -> Path:
        """``sides/<key>.json``: a project's whole suite run on one side (a crater's baseline), kept by the key
        of everything that decides it."""
        return self.root / "sides" / f"{key}.json"

    @property
    def crater_sources(self) -> Path:
        """``crater/src/``: each dependent's unpacked sdist or git checkout, ``<name>-<version>/``."""
        return self.root / "crater" / "src"

    def crater_result(self, unit: str) -> Path:
        """``crater/results/<unit>.json``: one dependent's result, handed back by its isolated process."""
        return self.root / "crater" / "results" / f"{unit}.json"

    def crater_cached(self, unit: str, key: str) -> Path:
        """``crater/cache/<unit>-<key>.json``: one dependent's result, kept by the key of everything that decides it."""
        return self.root / "crater" / "cache" / f"{unit}-{key}.json"

    def commits(self, package: str) -> Path:
        """``commits/<package>/``: the checkouts of ``package``'s commits a bisection installs from."""
        return self.root / "commits" / package

    @property
    def learned(self) -> Path:
        """``learned.json``: requirements this state's runs learned (``learned --save`` merges them
        into the package's)."""
        return self.root / "learned.json"

    @property
    def flaky(self) -> Path:
        """``flaky.json``: tests that flipped by themselves when the baseline ran twice (``--aa``), by project."""
        return self.root / "flaky.json"


@dataclass(frozen=True)
class CacheDir:
    """The layout of the state folder's ``cache/`` (``StateDir.cache``), from that folder."""

    root: Path

    def releases(self, dist: str) -> Path:
        """``cache/releases-<dist>.json``: a project's releases and their upload dates, from the index's JSON API."""
        return self.root / f"releases-{dist}.json"

    def project(self, dist: str) -> Path:
        """``cache/project-<dist>.json``: a project's files per release (wheel and sdist names, URLs, dates)."""
        return self.root / f"project-{dist}.json"

    def requires(self, dist: str, version: str) -> Path:
        """``cache/requires-<dist>-<version>.json``: a release's Requires-Dist lines, read from its wheel."""
        return self.root / f"requires-{dist}-{version}.json"

    def jaxlib_requirement(self, jax: str) -> Path:
        """``cache/jax-<jax>-jaxlib.txt``: the jaxlib specifier a jax release declares."""
        return self.root / f"jax-{jax}-jaxlib.txt"

    def git_mirror(self, url: str) -> Path:
        """``cache/git/<hash>.git``: one git repository's bare mirror (hash: of its URL), blobs fetched as needed."""
        return self.root / "git" / (hashlib.sha256(url.encode()).hexdigest()[:16] + ".git")

    @property
    def import_probes(self) -> Path:
        """``cache/import-probes.json``: whether each module imported in an environment (or its
        traceback), by its lock."""
        return self.root / "import-probes.json"

    @property
    def defines(self) -> Path:
        """``cache/defines.json``: the first release whose wheel defines a name, by package, name and release."""
        return self.root / "defines.json"
