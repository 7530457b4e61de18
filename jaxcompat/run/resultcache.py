"""Raw results re-used until what they depend on changes (a test-result cache, as in Bazel).

What pytest saw for a case, before any rule is applied, is a function of its inputs:
  the environment  the resolved lock, the Python, the backend, extra environment variables;
  the case module  its source;
  the harness      CACHE_FORMAT, the pytest plugin, every conftest.py, the helpers in the cases
                   folder (its non-test modules) and the pytest configuration.
So a cell re-uses every cached module whose key matches, runs only the missing ones, and then
classifies *every* result afresh with today's rules: editing a rule never re-runs anything.

Layout: ``<state>/results/<env key>/env.json`` (what the interpreter reported when it imported
the packages: versions, imports, backend, import-time deprecations) and ``<module key>.json``
(one module's raw results). Each entry carries a SHA-256 of its payload; a truncated or edited
entry is dropped and its module run again. A timeout or a crash is never stored, so a cached
result never stands in for one; a module holding a result that fails the run by today's rules
is run again (as Bazel re-runs a failed test), so a failure is always observed, never recalled;
``--repeat`` (flaky detection) and ``--no-cache`` read nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from jaxcompat._util import runenv
from jaxcompat._util.atomic import write_text
from jaxcompat._util.layout import PACKAGE
from jaxcompat._util.statedir import StateDir
from jaxcompat._util.toml import tomllib
from jaxcompat.model.outcomes import RawResult
from jaxcompat.model.vocab import TestStatus

CACHE_FORMAT = 1  # bump when what a run records changes meaning: every entry is then a miss
NEVER_REUSED = frozenset({TestStatus.TIMEOUT, TestStatus.CRASH})
# Everything that runs inside a cell lives in jaxcompat/plugin/ (tests/test_layers.py fails if the
# plugin imports anything outside it), so the whole folder is the harness's code: a file added there
# later is hashed without anyone remembering to list it.
PLUGIN = PACKAGE / "plugin"


def plugin_files(folder: Path = PLUGIN) -> list[Path]:
    """The plugin's source files, in a stable order."""
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _sha(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
        h.update(b"\0")
    return h.hexdigest()


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def module_of(case: str) -> str:
    return case.split("::", 1)[0]


def _pytest_config(root: Path) -> str:
    """The pytest section of pyproject.toml (the rest of the file does not change a run)."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return ""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return path.read_text(encoding="utf-8", errors="replace")
    return json.dumps(data.get("tool", {}).get("pytest", {}), sort_keys=True)


def harness_digest(root: Path, cases_dir: str, plugin: Path = PLUGIN) -> str:
    """Everything besides the module itself that can change what a case does: the pytest config,
    every file of the plugin folder, the cases' conftest and helper modules."""
    parts: list[str | bytes] = [f"format {CACHE_FORMAT}", _pytest_config(root)]
    for p in plugin_files(plugin):
        parts += [p.relative_to(plugin).as_posix(), p.read_bytes()]
    cases = root / cases_dir
    shared = sorted({root / "conftest.py", *cases.rglob("conftest.py"),
                     *(p for p in cases.rglob("*.py") if not p.name.startswith("test_"))})
    for p in shared:
        if p.is_file():
            parts += [str(p.relative_to(root)), p.read_bytes()]
    return _sha(*parts)


def env_key(lock: str, python: str, backend: str, extra_env: dict[str, str] | None, harness: str) -> str:
    """The key of a cell's environment: its lock, its interpreter (path and full version), backend,
    the variables given and those inherited that configure a run (``inherited``), the harness."""
    import os

    from jaxcompat.env.pythons import full_version

    return _sha("env", lock, python, full_version(python), backend, json.dumps(extra_env or {}, sort_keys=True),
                json.dumps(inherited(dict(os.environ))), harness)[:24]


def case_modules(root: Path, case_args: list[str]) -> tuple[list[str], list[str]]:
    """Split what to run into whole modules (cacheable) and anything narrower (node ids, -k …),
    which always runs. A folder stands for its test modules."""
    modules: list[str] = []
    other: list[str] = []
    for arg in case_args:
        path = root / arg
        if "::" in arg or arg.startswith("-"):
            other.append(arg)
        elif path.is_dir():
            modules += sorted(str(p.relative_to(root)) for p in path.rglob("test_*.py"))
        elif path.is_file():
            modules.append(str(path.relative_to(root)))
        else:
            other.append(arg)  # let pytest say what is wrong with it
    return list(dict.fromkeys(modules)), other


def module_key(root: Path, module: str, harness: str) -> str:
    return _sha("module", module, (root / module).read_bytes(), harness)[:24]


@dataclass
class EnvEntry:
    versions: dict[str, str]
    imports: dict[str, str]
    jax_backend: str | None
    import_failed: bool
    deprecations: list[dict] = field(default_factory=list)  # raised at import (no case)
    observed_at: str = ""
    device: dict = field(default_factory=dict)
    shadowed: list[dict] = field(default_factory=list)


@dataclass
class ModuleEntry:
    module: str
    results: list[RawResult]
    deprecations: list[dict] = field(default_factory=list)
    observed_at: str = ""


def plugin_digest(plugin: Path = PLUGIN) -> str:
    """Every file of the plugin folder (what runs inside the tests' process)."""
    parts: list[str | bytes] = [f"format {CACHE_FORMAT}"]
    for p in plugin_files(plugin):
        parts += [p.relative_to(plugin).as_posix(), p.read_bytes()]
    return _sha(*parts)


# A lock line that names one file for good: a release (an index never replaces a release's files), or
# a direct reference pinned by its hash or by a git commit. Anything else (a branch, a folder, a bare
# URL, an option line) may move under the same text: a side locked so is never re-used.
_RELEASE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?==[^\s;@]+(\s*;.*)?$")
_FIXED_URL = re.compile(r"\s@\s\S+(#sha256=[0-9a-f]{64}\b|@[0-9a-f]{40}(#\S*)?$)")


def fixed(lock: str, project: str = "") -> bool:
    """Whether every line of ``lock`` names what it installs for good (``_RELEASE``, ``_FIXED_URL``);
    the project itself (``project``: its folder, installed editable) is keyed by its files instead."""
    said = [ln.strip() for ln in lock.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    for line in said:
        own = project and line.startswith(("-e ", "--editable")) and line.rstrip("/").endswith(project.rstrip("/"))
        if not (own or _RELEASE.match(line) or _FIXED_URL.search(line)):
            return False
    return bool(said)


def inherited(environ: dict[str, str]) -> dict[str, str]:
    """The caller's variables a side's tests inherit (runner.pytest_env) that change what they do
    (_util/runenv: the ecosystem's, the indexes' hashed)."""
    return runenv.configuring(environ)


def side_key(**inputs: object) -> str:
    """The key of a side's whole-suite run, from everything that decides it (named by the caller)."""
    return _sha("side", f"format {CACHE_FORMAT}", json.dumps(inputs, sort_keys=True, default=str))[:24]


class ResultCache:
    def __init__(self, state_dir: Path):
        self.root = StateDir(state_dir).results
        self.state = StateDir(state_dir)
        self.problems: list[str] = []  # entries found damaged (and dropped) during this run

    def _path(self, env: str, name: str) -> Path:
        return self.root / env / f"{name}.json"

    def _load(self, path: Path, kind: str, key: str) -> dict | None:
        if not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            payload = entry["payload"]
            ok = (entry.get("format") == CACHE_FORMAT and entry.get("kind") == kind
                  and entry.get("key") == key
                  and entry.get("sha256") == _sha(json.dumps(payload, sort_keys=True)))
        except (ValueError, KeyError, TypeError, OSError):
            ok, payload = False, None
        if not ok:
            self.problems.append(f"cache entry {path.parent.name}/{path.name} is damaged: dropped, run again")
            path.unlink(missing_ok=True)
            return None
        return payload

    def _store(self, path: Path, kind: str, key: str, payload: dict) -> None:
        entry = {"format": CACHE_FORMAT, "kind": kind, "key": key, "payload": payload,
                 "sha256": _sha(json.dumps(payload, sort_keys=True))}
        write_text(path, json.dumps(entry))

    def load_env(self, env: str) -> EnvEntry | None:
        p = self._load(self._path(env, "env"), "env", env)
        if p is None:
            return None
        try:
            return EnvEntry(**p)
        except TypeError:
            self.problems.append(f"cache entry {env}/env.json has unknown fields: dropped, run again")
            return None

    def store_env(self, env: str, entry: EnvEntry) -> None:
        self._store(self._path(env, "env"), "env", env, entry.__dict__)

    def load_module(self, env: str, module: str, key: str) -> ModuleEntry | None:
        p = self._load(self._path(env, key), "module", key)
        if p is None:
            return None
        try:
            results = [RawResult.from_dict(r) for r in p["results"]]
            entry = ModuleEntry(module=p["module"], results=results, deprecations=list(p["deprecations"]),
                                observed_at=p["observed_at"])
        except (KeyError, TypeError, ValueError):
            entry = None
        if (entry is None or entry.module != module or not entry.results
                or any(module_of(r.case) != module or r.status in NEVER_REUSED for r in entry.results)):
            self.problems.append(f"cache entry {env}/{key}.json does not hold {module}'s results: dropped, run again")
            self._path(env, key).unlink(missing_ok=True)
            return None
        return entry

    def store_module(self, env: str, key: str, entry: ModuleEntry) -> bool:
        """Store one module's results, unless one of them must never be re-used."""
        if not entry.results or any(r.status in NEVER_REUSED for r in entry.results):
            return False
        payload = {"module": entry.module, "results": [r.__dict__ for r in entry.results],
                   "deprecations": entry.deprecations, "observed_at": entry.observed_at}
        self._store(self._path(env, key), "module", key, payload)
        return True

    def load_side(self, key: str) -> dict | None:
        """A side's stored run (``store_side``), or None: absent, damaged (dropped), or holding a
        result that is never re-used."""
        p = self._load(self.state.side(key), "side", key)
        if p is not None and any(r.get("status") in NEVER_REUSED for r in p.get("results", {}).values()):
            self.state.side(key).unlink(missing_ok=True)
            return None
        return p

    def store_side(self, key: str, payload: dict) -> bool:
        """Keep a side's whole-suite run (``payload["results"]``: test -> raw result), unless one of
        its results must never be re-used (a time-limit stop, a crash: they are observed again)."""
        if any(r.get("status") in NEVER_REUSED for r in payload["results"].values()):
            return False
        self._store(self.state.side(key), "side", key, payload)
        return True
