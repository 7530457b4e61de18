"""Load and validate ``matrix.toml`` (and ``--rules`` files of ``[[failure]]`` tables) into typed records.

Everything is checked before anything is installed: TOML syntax, unknown keys, version
specifiers, requirement strings, duplicate ids and case paths.  Every problem is raised as a
:class:`ConfigError` that names the file, the key and what to write instead. Each kind of table is
declared at the end of this module (``SETTINGS``, ``GRID``, ``CELL``, ``CASE``, ``FAILURE``,
``REQUIREMENT``: its keys, their parsers, defaults and fixes) and read by knowledge/tables.py's walk.
"""

from __future__ import annotations

import ast
import datetime
import itertools
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from jaxcompat.knowledge.tables import (
    At,
    Key,
    Table,
    each,
    given,
    optional_text,
    read,
    read_toml,
    strings,
    table_list,
    tables,
    text,
    unknown_keys,
)
from jaxcompat.model.matrix import (
    ANY,
    LATEST,
    STAGES,
    CaseEntry,
    Cell,
    ConfigError,
    Failure,
    KnownRequirement,
    Matrix,
    Settings,
    is_exact,
)
from jaxcompat.plugin.backends import BACKENDS, JAX_EXTRAS

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
PYTHON_RE = re.compile(r"^3\.\d{1,2}$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# --------------------------------------------------------------------------------------------
# Loading


class _Lent(NamedTuple):
    """What every table of a matrix or rules file is read with: its settings and its folder."""

    settings: Settings
    root: Path


def load(path: Path | str, rules: Iterable[Path | str] = ()) -> Matrix:
    """Parse and validate a matrix file, then merge each ``rules`` file's ``[[failure]]`` tables
    into it (validated by the same code; ids are unique across all of them). Raises ConfigError
    on any problem."""
    path = Path(path)
    matrix = parse(read_toml(path, "pass an existing matrix file (default: matrix.toml)"), path)
    for rules_path in rules:
        matrix = merge_rules(matrix, rules_path)
    return matrix


def merge_rules(matrix: Matrix, path: Path | str) -> Matrix:
    """Add the ``[[failure]]`` tables of a rules file (``--rules FILE``) to ``matrix``.

    A rules file holds only ``[[failure]]`` tables, written and checked exactly as in
    matrix.toml; their ``cases`` name the matrix's cases (relative to its folder)."""
    path = Path(path)
    data = read_toml(path, "pass an existing rules file (a TOML file of [[failure]] tables)")
    if not isinstance(data, dict):
        raise ConfigError(path, "(top)", "expected a TOML table at the top level")
    unknown_keys(path, "(top)", data, {"failure"})
    if not data.get("failure"):
        raise ConfigError(path, "failure", "missing",
                          "a rules file holds [[failure]] tables (id, affects, error, match, upstream, fix)")
    failures = _failures(path, data, _Lent(matrix.settings, matrix.root))
    known = {f.id: f.source for f in matrix.failures}
    for f in failures:
        if f.id in known:
            raise ConfigError(path, f"failure[{f.id}].id", f"duplicate id {f.id!r}: {known[f.id]} already defines it",
                              "give the rule a new id (ids are shared by the matrix file and every --rules file)")
    return replace(matrix, failures=matrix.failures + tuple(failures), rules=matrix.rules + (path,))


def parse(data: object, path: Path | str = "matrix.toml", root: Path | None = None) -> Matrix:
    path = Path(path)
    root = root if root is not None else path.resolve().parent
    if not isinstance(data, dict):
        raise ConfigError(path, "(top)", "expected a TOML table at the top level")
    unknown_keys(path, "(top)", data, {"settings", "cell", "grid", "failure", "requirement"})
    settings = read(path, "settings", data.get("settings", {}), SETTINGS)
    lent = _Lent(settings, root)
    at = At(path, "", data, lent)  # grids first (the cross product), then the hand-picked cells
    cells = [c for grid in tables(GRID)(at._replace(key="grid"), data.get("grid", [])) for c in grid]
    cells += tables(CELL)(at._replace(key="cell"), data.get("cell", []))
    _no_duplicates(path, "cell", [c.id for c in cells])
    failures = _failures(path, data, lent)
    requirements = tables(REQUIREMENT)(at._replace(key="requirement"), data.get("requirement", []))
    return Matrix(path, settings, tuple(cells), tuple(failures), root, requirements=requirements)


def _failures(path: Path, data: dict, lent: _Lent) -> tuple[Failure, ...]:
    """The ``[[failure]]`` tables of a matrix or rules file, each validated, ids unique."""
    failures = tables(FAILURE)(At(path, "failure", data, lent), data.get("failure", []))
    _no_duplicates(path, "failure", [f.id for f in failures])
    return failures


# --------------------------------------------------------------------------------------------
# What one value must be (each parser: ``parse(at, value)``, see knowledge/tables.py)


def _filled(at: At, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise at.error("missing or not a string",
                       'e.g. package = "optimistix", release = "0.0.7", requires = "equinox>=0.11.3", '
                       'note = "reads eqx.StrictConfig, new in equinox 0.11.3"')
    return value


def _known_requirement(at: At, v: dict) -> KnownRequirement:
    """A ``[[requirement]]`` table's release is a version, its requires a range of another package."""
    package = canonicalize_name(v["package"])
    try:
        Version(v["release"])
    except InvalidVersion:
        raise ConfigError(
            at.path, f"{at.key}.release", f"{v['release']!r} is not a version", 'write e.g. "0.0.7"'
        ) from None
    try:
        req = Requirement(v["requires"])
    except InvalidRequirement as e:
        raise ConfigError(at.path, f"{at.key}.requires", f"{v['requires']!r} is not a requirement ({e})",
                          'write a package and a range, e.g. "equinox>=0.11.3"') from None
    if not req.specifier or req.marker is not None or req.url or canonicalize_name(req.name) == package:
        raise ConfigError(at.path, f"{at.key}.requires", f"{v['requires']!r} names no range of another package",
                          'write a package and a range, e.g. "equinox>=0.11.3"')
    return KnownRequirement(package, v["release"], str(req), v["note"])


def _python(at: At, value: object) -> str:
    if value == "auto":  # the lowest Python that every pin supports (jaxcompat.env.resolution)
        return value
    if not isinstance(value, str) or not PYTHON_RE.match(value):
        raise at.error(f"invalid Python version {value!r}",
                       'write a minor version as a string, e.g. python = "3.11", or "auto"')
    return value


def _backend(at: At, value: object) -> str:
    if value not in BACKENDS:
        raise at.error(f"unknown backend {value!r}", f"use one of: {', '.join(BACKENDS)}")
    return str(value)


def _timeout(at: At, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise at.error(f"expected a positive number, got {value!r}", "e.g. case_timeout_s = 300")
    return float(value)


def _requirement(at: At, text: object) -> Requirement:
    if not isinstance(text, str):
        raise at.error(f"expected a requirement string, got {text!r}")
    try:
        req = Requirement(text)
    except InvalidRequirement as e:
        raise at.error(f"invalid requirement {text!r}: {e}", 'write a PEP 508 requirement, e.g. "numpy<2"') from None
    if req.url:
        raise at.error(f"URL requirements are not allowed: {text!r}", "pin a released version from the package index")
    return req


def _pins(at: At, raw: object) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise at.error("expected a table of dist = version",
                       'e.g. pins = { jax = "0.4.33", equinox = "0.11.7", diffrax = "*" }')
    path, key = at.path, at.key
    pins: dict[str, str] = {}
    for dist, value in raw.items():
        k = f"{key}.{dist}"
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", dist):
            raise ConfigError(path, k, f"invalid distribution name {dist!r}")
        if not isinstance(value, str):
            raise ConfigError(path, k, f"expected a string, got {value!r}",
                              f'quote the version: {dist} = "{value}"')
        value = value.strip()
        if value not in (ANY, LATEST) and not is_exact(value):
            try:
                SpecifierSet(value)
            except InvalidSpecifier:
                raise ConfigError(
                    path, k, f"invalid version {value!r}",
                    'write an exact version ("0.4.33"), a specifier (">=0.6,<0.7"), '
                    '"*" (any release that co-installs) or "latest"') from None
            if not value:
                raise ConfigError(path, k, "empty version", 'write "*" for any version')
        pins[canonicalize_name(dist)] = value
    # jaxlib is not defaulted here: at run time it is the one jax's own metadata asks for
    # (jaxcompat.env.resolution), which does not always carry jax's number.
    return pins


def _date(at: At, value: object) -> str | None:
    if value is None:
        return None
    if hasattr(value, "isoformat"):  # TOML local date
        value = value.isoformat()
    if not isinstance(value, str) or not DATE_RE.match(value):
        raise at.error(f"invalid date {value!r}", 'write date = "YYYY-MM-DD"')
    try:  # the pattern lets 2024-02-30 and 2024-13-45 by; uv refuses them only after the downloads
        datetime.date.fromisoformat(value)
    except ValueError:
        raise at.error(f"{value!r} is not a day of the calendar", 'write a real day, "YYYY-MM-DD"') from None
    return value


def _cell_id(at: At, value: object) -> str:
    value = text(at, value)
    if not ID_RE.match(value):
        raise at.error(f"invalid cell id {value!r}", "use letters, digits and . _ + - only (it becomes a file name)")
    return value


def _cell_backend(at: At, value: object) -> str:
    """A built cell's backend must be one its jax can install: the jax extra (jax[cuda12],
    jax[cuda13]) is declared from a jax release on; rocm has no extra at all."""
    raw = at.table
    if "backend" not in raw:
        at = at._replace(key="settings.backend")
    backend = _backend(at, value)
    if backend == "rocm":
        raise at.error("jax declares no rocm extra, so a built cell cannot install ROCm",
                       "check a ROCm environment where it already exists: jax-compat check --env PATH/bin/python")
    jax = raw.get("pins", {}).get("jax") if isinstance(raw.get("pins"), dict) else None
    if backend in JAX_EXTRAS and isinstance(jax, str) and jax[:1].isdigit():
        extra, since = JAX_EXTRAS[backend]
        try:
            too_old = Version(jax) < Version(since)
        except InvalidVersion:
            too_old = False  # the pin's own check reports it
        if too_old:
            raise at.error(f"jax {jax} does not declare the {extra} extra (jax[{extra}] exists from "
                           f"jax {since}), so backend = {backend!r} cannot be installed with it",
                           f"pin jax >= {since} for backend = {backend!r}, or use another backend")
    return backend


def _axes(at: At, axes: object) -> dict[str, list[str]]:
    if not isinstance(axes, dict) or not axes or not all(
            isinstance(v, list) and v and all(isinstance(x, str) for x in v) for v in axes.values()):
        raise at.error("expected a table of dist = [versions]",
                       'e.g. axes = { jax = ["0.4.31", "0.4.33"], equinox = ["0.11.6", "0.11.7"] }')
    return axes


def _excludes(at: At, value: object) -> list[dict]:
    """A grid's ``exclude`` tables, each naming some of its axes."""
    excludes = table_list(at.path, at.key, value)
    for i, ex in enumerate(excludes):
        unknown_keys(at.path, f"{at.key}[{i}]", ex, set(at.table["axes"]))
    return excludes


def _template(at: At, value: object) -> str | None:
    """A grid's id: a template of its cells' ids (None: one made of its axes)."""
    if value is not None and not isinstance(value, str):
        raise at.error(f"expected a string, got {value!r}", 'e.g. id = "jax{jax}-eqx{equinox}"')
    return value


def _base_pins(at: At, value: object) -> dict:
    """A grid's pins, the same in every cell (each cell checks their values)."""
    if not isinstance(value, dict):
        raise at.error("expected a table of dist = version",
                       'e.g. pins = { jax = "0.4.33", equinox = "0.11.7", diffrax = "*" }')
    return value


def _grid(at: At, v: dict) -> list[Cell]:
    """Expand a [[grid]]: the cross product of its axes, minus exclusions, each a cell."""
    raw, axes, where = at.table, v["axes"], at.key
    template = v["id"] if v["id"] is not None else "-".join(f"{d}{{{d}}}" for d in axes)
    cells = []
    names = list(axes)
    for combo in itertools.product(*(axes[n] for n in names)):
        chosen = dict(zip(names, combo, strict=True))
        if any(all(chosen.get(k) == x for k, x in ex.items()) for ex in v["exclude"]):
            continue
        try:
            cell_id = template.format(**chosen)
        except (KeyError, IndexError, ValueError) as e:
            raise ConfigError(at.path, f"{where}.id", f"bad id template {template!r}: {e}",
                              f"use placeholders among: {', '.join('{' + n + '}' for n in names)}") from None
        cell_raw = {k: raw[k] for k in ("python", "backend", "constraints", "note") if k in raw}
        cell_raw.update(id=cell_id, pins={**v["pins"], **chosen})
        cells.append(read(at.path, f"{where}[{cell_id}]", cell_raw, CELL, at.context))
    return cells


def _affects(at: At, raw: object) -> tuple[dict[str, SpecifierSet], ...]:
    clauses = raw if isinstance(raw, list) else [raw]
    if not clauses or not all(isinstance(c, dict) and c for c in clauses):
        raise at.error("expected a table of dist = specifier, or a list of them (OR-ed)",
                       'e.g. affects = { jax = ">=0.4.32", equinox = "<0.11.8" }')
    out = []
    for i, clause in enumerate(clauses):
        spec: dict[str, SpecifierSet] = {}
        for dist, value in clause.items():
            k = f"{at.key}[{i}].{dist}" if isinstance(raw, list) else f"{at.key}.{dist}"
            if not isinstance(value, str):
                raise ConfigError(at.path, k, f"expected a specifier string, got {value!r}")
            try:
                spec[canonicalize_name(dist)] = SpecifierSet(value)
            except InvalidSpecifier:
                raise ConfigError(at.path, k, f"invalid version specifier {value!r}",
                                  'write e.g. ">=0.4.32" or ">=0.11.0,<0.11.8" ("*" is not a specifier; '
                                  'use ">=0" for any version)') from None
        out.append(spec)
    return tuple(out)


def _narrowed(at: At, raw: object) -> tuple[dict[str, SpecifierSet], ...] | None:
    return None if raw is None else _affects(at, raw)


def _stage(at: At, stage: object) -> str:
    if stage not in STAGES:
        raise at.error(f"unknown stage {stage!r}", f"use one of: {', '.join(STAGES)}")
    return str(stage)


def _cases(at: At, raw: object) -> tuple[CaseEntry, ...]:
    """``cases`` entries: "file::test" strings, or { case = "...", affects = {...} } tables; each
    a test of the cases folder, none twice, some where the failure's stage is a case's."""
    items = raw if isinstance(raw, list) else [raw]
    entries: list[CaseEntry] = []
    for i, item in enumerate(items):
        if isinstance(item, dict):
            entries.append(read(at.path, f"{at.key}[{i}]", item, CASE))
        elif isinstance(item, str):
            entries.append(CaseEntry(item))
        else:
            raise ConfigError(at.path, f"{at.key}[{i}]", f"expected a node id string or a table, got {item!r}",
                              'e.g. "cases/test_x.py::test_y"')
    if at.table.get("stage", "case") == "case" and not entries:
        raise at.error("missing", 'list the reproducing tests, e.g. cases = ["cases/test_x.py::test_y"]')
    for i, entry in enumerate(entries):
        _check_case(at._replace(key=f"{at.key}[{i}]"), entry.case)
    _no_duplicates(at.path, at.key, [entry.case for entry in entries])
    return tuple(entries)


def _match(at: At, value: object) -> re.Pattern[str]:
    try:
        return re.compile(text(at, value), re.DOTALL)
    except re.error as e:
        raise at.error(f"invalid regular expression: {e}", "escape special characters, e.g. \\( \\. \\[") from None


def _https(at: At, url: str) -> None:
    if not url.startswith("https://"):
        raise at.error(f"not an https URL: {url!r}", "link the upstream issue, PR or commit")


def _collateral(at: At, raw: object) -> tuple[str, ...]:
    items = strings(at, raw)
    cases_dir = at.context.settings.cases_dir
    for i, item in enumerate(items):
        if item.rstrip("/") == cases_dir.rstrip("/"):
            continue
        _check_case(at._replace(key=f"{at.key}[{i}]"), item)
    return items


def _bool(at: At, value: object) -> bool:
    if not isinstance(value, bool):
        raise at.error(f"expected true or false, got {value!r}")
    return value


def _check_case(at: At, case: str) -> None:
    """A case (``file::test``, or a file) is a test of a file under the cases folder."""
    file, _, name = case.partition("::")
    settings = at.context.settings
    target = at.context.root / file
    if not file.startswith(settings.cases_dir.rstrip("/") + "/") or not target.is_file():
        raise at.error(f"case file {file!r} does not exist",
                       f"name a file under {settings.cases_dir}/, e.g. "
                       f"\"{settings.cases_dir}/test_callback_error_deferral.py::test_error_if\"")
    if name:
        tests = test_names(target)
        if name.split("[")[0] not in tests:
            raise at.error(f"no test {name!r} in {file}", f"use one of: {', '.join(sorted(tests)) or '(none found)'}")


def test_names(path: Path) -> set[str]:
    """Top-level test function names in a case file, read without importing it."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {n.name for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")}


def _no_duplicates(path: Path, key: str, ids: list[str]) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise ConfigError(path, key, f"duplicate id {i!r}",
                              f"give each {key} a unique id (grids generate ids from their template)")
        seen.add(i)


# --------------------------------------------------------------------------------------------
# The tables, declared: their keys in the order they are checked (knowledge/tables.py walks them)

_S = Settings()
SETTINGS = Table({
    "case_timeout_s": Key(_timeout, _S.case_timeout_s),
    "harness": Key(each(_requirement), list(_S.harness)),
    "python": Key(_python, _S.python),
    "backend": Key(_backend, _S.backend),
    "cases_dir": Key(text, _S.cases_dir),
}, lambda at, v: Settings(**v), fix="write [settings]")

CELL = Table({
    "constraints": Key(each(_requirement), []),
    "id": Key(_cell_id, missing='give every cell an id = "..."'),
    "python": Key(_python, lambda at: at.context.settings.python),
    "backend": Key(_cell_backend, lambda at: at.context.settings.backend),
    "pins": Key(_pins, missing='e.g. pins = { jax = "0.4.33", equinox = "0.11.7" }'),
    "date": Key(_date, None),
    "note": Key(optional_text, ""),
}, lambda at, v: Cell(**v))

GRID = Table({  # its other keys are each cell's, read as a cell's
    "axes": Key(_axes, None),
    "exclude": Key(_excludes, []),
    "id": Key(_template, None),
    "pins": Key(_base_pins, {}),
    "cell": Key(given, reads=("python", "backend", "constraints", "note")),
}, _grid)

CASE = Table({  # a ``cases`` entry given as a table
    "affects": Key(_narrowed, None),
    "case": Key(text, missing='write { case = "cases/test_x.py::test_y", affects = {...} }'),
}, lambda at, v: CaseEntry(v["case"], v["affects"]))

_NEEDS = "every [[failure]] needs id, affects, error, match, upstream and fix"
FAILURE = Table({
    "id": Key(text, missing=_NEEDS),
    "stage": Key(_stage, "case"),
    "cases": Key(_cases, []),
    "backend": Key(each(_backend), [], field="backends"),
    "match": Key(_match, missing=_NEEDS),
    "upstream": Key(each(_https), missing=_NEEDS),
    "title": Key(text, lambda at: at.table["id"]),
    "affects": Key(_affects, missing=_NEEDS),
    "error": Key(strings, missing=_NEEDS, field="errors"),
    "fix": Key(text, missing=_NEEDS),
    "workaround": Key(optional_text, ""),
    "advisory": Key(_bool, False),
    "collateral": Key(_collateral, []),
}, lambda at, v: Failure(**v, source=str(at.path)), named="id")

REQUIREMENT = Table({  # what a release of a package really needs, by hand
    "package": Key(_filled, None),
    "release": Key(_filled, None),
    "requires": Key(_filled, None),
    "note": Key(_filled, None),
}, _known_requirement)
