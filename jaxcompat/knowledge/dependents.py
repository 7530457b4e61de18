"""Read and validate ``dependents.toml`` (or a user's ``--dependents FILE``) into records.

Validated like ``matrix.toml``: an unknown key is refused with "did you mean", and every error
names the file, the key and the fix (``ConfigError``), before anything is downloaded.

    [[dependent]]
    name = "flowjax"                 # its distribution name on the package index
    version = "latest"               # its sdist at this version ("latest": the newest, or as of --as-of)
    # git = "https://github.com/danielward27/flowjax"; ref = "v17.0.0"   (instead of version)
    tests = ["tests"]                # where its tests are (default: its own pytest configuration)
    extras = ["dev"]                 # test-dependency hints (default: where the project declares them)
    groups = []; with = ["beartype"] # a PEP 735 group; requirements declared nowhere
    cpu_devices = 1                  # XLA host devices its tests expect
    env = { JAX_ENABLE_X64 = "1" }   # environment variables for its tests
    budget_s = 1800                  # both sides, installs included; past it the dependent is stopped
    test_timeout_s = 900             # one test's time limit (default: matrix.toml's case_timeout_s)
    depends_on = ["equinox", "jax"]  # which candidates run it (a candidate for equinox runs these)
    split = 4                        # a long suite: its test files dealt into 4 parts, each a unit of --shard
"""

from __future__ import annotations

import math
from pathlib import Path, PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from jaxcompat.knowledge import dependentsources
from jaxcompat.knowledge.tables import read_toml, similar, str_list, table_list, text_value, unknown_keys
from jaxcompat.model.dependents import Dependent, Dependents
from jaxcompat.model.matrix import ConfigError
from jaxcompat.plugin.packages import ECOSYSTEM

KEYS = {"name", "tests", "extras", "groups", "with", "cpu_devices", "env", "budget_s", "test_timeout_s",
        "depends_on", "note", "split"} | dependentsources.KEYS
TOP = {"dependent", "settings"}
SETTINGS = {"budget_s", "test_timeout_s"}
MAX_SPLIT = 64


def load(path: Path | str) -> Dependents:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "(file)", "no such file", "name a dependents file that exists (see docs/crater.md)")
    data = read_toml(path, "write it as TOML: [[dependent]] tables (see docs/crater.md)")
    return parse(data, path)


def parse(data: object, path: Path | str = "dependents.toml") -> Dependents:
    path = Path(path)
    if not isinstance(data, dict):
        raise ConfigError(path, "(top)", "expected a table", "write [[dependent]] tables")
    unknown_keys(path, "(top)", data, TOP)
    settings = data.get("settings", {})
    if not isinstance(settings, dict):
        raise ConfigError(path, "settings", "expected a table", "write [settings] with budget_s = SECONDS")
    unknown_keys(path, "settings", settings, SETTINGS)
    budget = _seconds(path, "settings.budget_s", settings.get("budget_s", 1800))
    limit = _limit(path, "settings", settings, None)
    raw = table_list(path, "dependent", data.get("dependent", []))
    if not raw:
        raise ConfigError(path, "dependent", "no [[dependent]] table", "add one per project whose tests to run")
    out: list[Dependent] = []
    for i, table in enumerate(raw):
        where = f"dependent[{i}]"
        name = table.get("name")
        if isinstance(name, str) and name.strip():
            where = f"dependent[{name}]"
        out.append(_dependent(path, where, table, budget, limit))
    seen: set[str] = set()
    for d in out:
        if d.name in seen:
            raise ConfigError(path, f"dependent[{d.name}].name", "given twice", "keep one [[dependent]] per project")
        seen.add(d.name)
    return Dependents(path=path, dependents=tuple(out))


def _dependent(path: Path, where: str, t: dict, budget: float, limit: float | None) -> Dependent:
    unknown_keys(path, where, t, KEYS)
    if canonicalize_name(name := text_value(path, f"{where}.name", t.get("name"))) != name:
        raise ConfigError(path, f"{where}.name", f"{name!r} is not a normalised distribution name",
                          f'write name = "{canonicalize_name(name)}"')
    source = dependentsources.read(path, where, t)
    tests = str_list(path, f"{where}.tests", t.get("tests", []))
    for p in tests:
        pp = PurePosixPath(p)
        if pp.is_absolute() or ".." in pp.parts or not p.strip():
            raise ConfigError(path, f"{where}.tests", f"{p!r} is not a path inside the project",
                              'write paths relative to its root, e.g. tests = ["tests"]')
    with_ = str_list(path, f"{where}.with", t.get("with", []))
    for req in with_:
        try:
            Requirement(req)
        except InvalidRequirement as e:
            raise ConfigError(path, f"{where}.with", f"{req!r} is not a PEP 508 requirement ({e})",
                              'write e.g. with = ["beartype>=0.18"]') from None
    devices = t.get("cpu_devices", 1)
    if not isinstance(devices, int) or isinstance(devices, bool) or devices < 1:
        raise ConfigError(path, f"{where}.cpu_devices", f"expected a whole number >= 1, got {devices!r}",
                          "write cpu_devices = 8 (XLA host devices its tests expect)")
    env = t.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ConfigError(path, f"{where}.env", f"expected a table of strings, got {env!r}",
                          'write env = { JAX_ENABLE_X64 = "1" }')
    depends = tuple(canonicalize_name(d) for d in str_list(path, f"{where}.depends_on", t.get("depends_on", ["jax"])))
    for d in depends:
        if d not in ECOSYSTEM:
            close = [k for k in ECOSYSTEM if similar(d, k)]
            raise ConfigError(path, f"{where}.depends_on", f"{d!r} is not a package of the ecosystem",
                              (f"did you mean {close[0]!r}? " if close else "")
                              + f"use some of: {', '.join(ECOSYSTEM)}")
    note = t.get("note", "")
    if not isinstance(note, str):
        raise ConfigError(path, f"{where}.note", f"expected a string, got {note!r}")
    return Dependent(name=name, source=source, tests=tests,
                     extras=str_list(path, f"{where}.extras", t.get("extras", [])),
                     groups=str_list(path, f"{where}.groups", t.get("groups", [])), with_=with_,
                     cpu_devices=devices, env=tuple(sorted(env.items())),
                     budget_s=_seconds(path, f"{where}.budget_s", t.get("budget_s", budget)),
                     test_timeout_s=_limit(path, where, t, limit),
                     depends_on=depends, note=note, split=_split(path, where, t.get("split", 1)))


def _split(path: Path, where: str, split: object) -> int:
    """How many parts its test files are dealt into (1: none)."""
    if not isinstance(split, int) or isinstance(split, bool) or not 1 <= split <= MAX_SPLIT:
        raise ConfigError(path, f"{where}.split", f"expected a whole number from 1 to {MAX_SPLIT}, got {split!r}",
                          "write split = 4 (its test files dealt into 4 parts, each run as a unit of --shard i/n), "
                          "or leave split out (the whole suite in one)")
    return split


def _limit(path: Path, where: str, t: dict, default: float | None) -> float | None:
    """One test's time limit: ``test_timeout_s`` of the table, else ``default`` (None: the matrix's)."""
    return _seconds(path, f"{where}.test_timeout_s", t["test_timeout_s"], 900) if "test_timeout_s" in t else default


def _seconds(path: Path, key: str, value: object, example: int = 1800) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ConfigError(path, key, f"expected a number of seconds > 0, got {value!r}",
                          f"write {key.split('.')[-1]} = {example}")
    return float(value)
