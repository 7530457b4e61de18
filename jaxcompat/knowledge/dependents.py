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
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from jaxcompat.knowledge import dependentsources
from jaxcompat.knowledge.tables import At, Key, Table, read, read_toml, similar, strings, table_list, text, unknown_keys
from jaxcompat.model.dependents import Dependent, Dependents, DependentSource
from jaxcompat.model.matrix import ConfigError
from jaxcompat.plugin.packages import ECOSYSTEM

MAX_SPLIT = 64


class _Limits(NamedTuple):
    """What every ``[[dependent]]`` inherits from the file's ``[settings]``."""

    budget_s: float
    test_timeout_s: float | None


def load(path: Path | str) -> Dependents:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "(file)", "no such file", "name a dependents file that exists (see docs/crater.md)")
    data = read_toml(path, "write it as TOML: [[dependent]] tables (see docs/crater.md)")
    return parse(data, path)


def unknown(dependents: Dependents, names: list[str], path: Path | str) -> str:
    """What is wrong with the first of ``names`` (``--dependent``) the dependents file lacks, or ""."""
    known = [d.name for d in dependents.dependents]
    missing = [n for n in names if n not in known]
    if not missing:
        return ""
    close = [k for k in known if similar(missing[0], k)]
    return (f"--dependent {missing[0]}: not in {Path(path).name}"
            + (f"; did you mean {close[0]!r}?" if close else "") + f" (it has: {', '.join(known)})")


def parse(data: object, path: Path | str = "dependents.toml") -> Dependents:
    path = Path(path)
    if not isinstance(data, dict):
        raise ConfigError(path, "(top)", "expected a table", "write [[dependent]] tables")
    unknown_keys(path, "(top)", data, {"dependent", "settings"})
    limits = read(path, "settings", data.get("settings", {}), SETTINGS)
    raw = table_list(path, "dependent", data.get("dependent", []))
    if not raw:
        raise ConfigError(path, "dependent", "no [[dependent]] table", "add one per project whose tests to run")
    out: list[Dependent] = []
    for i, table in enumerate(raw):
        where = f"dependent[{i}]"
        name = table.get("name")
        if isinstance(name, str) and name.strip():
            where = f"dependent[{name}]"
        out.append(read(path, where, table, DEPENDENT, limits))
    seen: set[str] = set()
    for d in out:
        if d.name in seen:
            raise ConfigError(path, f"dependent[{d.name}].name", "given twice", "keep one [[dependent]] per project")
        seen.add(d.name)
    return Dependents(path=path, dependents=tuple(out))


# --------------------------------------------------------------------------------------------
# What one value must be (each parser: ``parse(at, value)``, see knowledge/tables.py)


def _name(at: At, value: object) -> str:
    if canonicalize_name(name := text(at, value)) != name:
        raise at.error(f"{name!r} is not a normalised distribution name", f'write name = "{canonicalize_name(name)}"')
    return name


def _source(at: At, table: dict) -> DependentSource:
    return dependentsources.read(at.path, at.key, table)


def _tests(at: At, value: object) -> tuple[str, ...]:
    tests = strings(at, value)
    for p in tests:
        pp = PurePosixPath(p)
        if pp.is_absolute() or ".." in pp.parts or not p.strip():
            raise at.error(f"{p!r} is not a path inside the project",
                           'write paths relative to its root, e.g. tests = ["tests"]')
    return tests


def _with(at: At, value: object) -> tuple[str, ...]:
    with_ = strings(at, value)
    for req in with_:
        try:
            Requirement(req)
        except InvalidRequirement as e:
            raise at.error(f"{req!r} is not a PEP 508 requirement ({e})",
                           'write e.g. with = ["beartype>=0.18"]') from None
    return with_


def _devices(at: At, devices: object) -> int:
    if not isinstance(devices, int) or isinstance(devices, bool) or devices < 1:
        raise at.error(f"expected a whole number >= 1, got {devices!r}",
                       "write cpu_devices = 8 (XLA host devices its tests expect)")
    return devices


def _env(at: At, env: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise at.error(f"expected a table of strings, got {env!r}", 'write env = { JAX_ENABLE_X64 = "1" }')
    return tuple(sorted(env.items()))


def _depends_on(at: At, value: object) -> tuple[str, ...]:
    depends = tuple(canonicalize_name(d) for d in strings(at, value))
    for d in depends:
        if d not in ECOSYSTEM:
            close = [k for k in ECOSYSTEM if similar(d, k)]
            raise at.error(f"{d!r} is not a package of the ecosystem",
                           (f"did you mean {close[0]!r}? " if close else "") + f"use some of: {', '.join(ECOSYSTEM)}")
    return depends


def _note(at: At, note: object) -> str:
    if not isinstance(note, str):
        raise at.error(f"expected a string, got {note!r}")
    return note


def _split(at: At, split: object) -> int:
    """How many parts its test files are dealt into (1: none)."""
    if not isinstance(split, int) or isinstance(split, bool) or not 1 <= split <= MAX_SPLIT:
        raise at.error(f"expected a whole number from 1 to {MAX_SPLIT}, got {split!r}",
                       "write split = 4 (its test files dealt into 4 parts, each run as a unit of --shard i/n), "
                       "or leave split out (the whole suite in one)")
    return split


def _seconds(example: int) -> Callable[[At, object], float | None]:
    """A parser of a number of seconds > 0 (None where it is not given and has no default: the
    matrix's ``case_timeout_s``)."""
    def parse(at: At, value: object) -> float | None:
        if value is None and at.key.rpartition(".")[2] not in at.table:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise at.error(f"expected a number of seconds > 0, got {value!r}",
                           f"write {at.key.split('.')[-1]} = {example}")
        return float(value)
    return parse


# --------------------------------------------------------------------------------------------
# The tables, declared: their keys in the order they are checked (knowledge/tables.py walks them)

SETTINGS = Table({
    "budget_s": Key(_seconds(1800), 1800),
    "test_timeout_s": Key(_seconds(900), None),  # None: the matrix's case_timeout_s
}, lambda at, v: _Limits(**v), fix="write [settings] with budget_s = SECONDS")

DEPENDENT = Table({
    "name": Key(_name, None),
    "source": Key(_source, reads=tuple(sorted(dependentsources.KEYS))),
    "tests": Key(_tests, []),
    "with": Key(_with, [], field="with_"),
    "cpu_devices": Key(_devices, 1),
    "env": Key(_env, {}),
    "depends_on": Key(_depends_on, ["jax"]),
    "note": Key(_note, ""),
    "extras": Key(strings, []),
    "groups": Key(strings, []),
    "budget_s": Key(_seconds(1800), lambda at: at.context.budget_s),
    "test_timeout_s": Key(_seconds(900), lambda at: at.context.test_timeout_s),
    "split": Key(_split, 1),
}, lambda at, v: Dependent(**v))
